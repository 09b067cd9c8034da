//! Test support: exchanges built by hand for the family modules' unit tests.

use serde_json::Value;

use crate::http::{Exchange, Response, Role, Surface};

/// One answered exchange: `method url` answered `status` with these headers and JSON body.
pub(crate) fn exchange(
    method: &str,
    url: &str,
    status: u16,
    headers: &[(&str, &str)],
    body: Value,
) -> Exchange {
    Exchange {
        seq: 1,
        throttled: Vec::new(),
        throttled_times: 0,
        retried: Vec::new(),
        role: Role::Step,
        surface: Surface::Arm,
        method: method.into(),
        url: url.into(),
        request_headers: Vec::new(),
        request_body: None,
        response: Some(Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.to_string(),
            body_bytes: 0,
            json: Some(body),
            json_error: None,
            set_cookies: Vec::new(),
        }),
        error: None,
        started_at: String::new(),
        elapsed_ms: 0,
        foreign: false,
    }
}

/// The embedded reference RP's target, at `http://h`: what the rules read of a target when a
/// unit test judges hand-built exchanges.
pub(crate) fn target() -> crate::target::Target {
    let yaml = crate::target::embedded_target_yaml_for("http://h", &Default::default());
    crate::target::parse_target(std::path::Path::new("test-target.yaml"), &yaml, "test")
        .unwrap_or_else(|r| panic!("{}", r.render()))
}

/// Judge these exchanges as the engine judges every exchange (the ambient rules) and give
/// `rule`'s outcome, with its checks (passed, failed).
pub(crate) fn ambient(rule: &str, exs: &[Exchange]) -> (super::Outcome, u32, u32) {
    let t = target();
    let registry = super::Registry::default();
    let mut j = super::Judge::new(&t, &registry);
    for ex in exs {
        j.exchange(ex);
    }
    j.ledger
        .tallies()
        .into_iter()
        .find(|x| x.rule == rule)
        .map(|x| (x.outcome, x.passed, x.failed))
        .unwrap_or((super::Outcome::NotJudged, 0, 0))
}

/// An exchange with these request headers.
pub(crate) fn with_request_headers(mut ex: Exchange, headers: &[(&str, &str)]) -> Exchange {
    ex.request_headers = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ex
}
