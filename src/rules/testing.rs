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

/// The same exchange with its own `seq` (flows and causes tell exchanges apart by it).
pub(crate) fn numbered(mut x: Exchange, seq: u64) -> Exchange {
    x.seq = seq;
    x
}

/// The embedded reference RP's target file, for tests that need a [`crate::rules::Judge`].
pub(crate) fn target() -> crate::target::Target {
    let yaml = crate::target::embedded_target_yaml("http://h");
    crate::target::parse_target(std::path::Path::new("embedded.yaml"), &yaml, "embedded")
        .unwrap_or_else(|r| panic!("{}", r.render()))
}

/// A followed ARM operation started by `exs[0]`, read through `channel`, ended `end`.
pub(crate) fn flow(
    method: &str,
    url: &str,
    channel: Option<crate::lro::Channel>,
    events: Vec<crate::rules::flow::Event>,
    end: crate::rules::flow::End,
) -> crate::rules::flow::Flow {
    crate::rules::flow::Flow {
        surface: Surface::Arm,
        method: method.into(),
        request_url: url.into(),
        resource: Some(url.split('?').next().unwrap_or(url).into()),
        initial: 0,
        initial_state: crate::lro::State::Running(None),
        channel,
        declared: None,
        final_state_via: None,
        events,
        end,
        deadline_secs: 10,
        elapsed_ms: 100,
        result: None,
    }
}
