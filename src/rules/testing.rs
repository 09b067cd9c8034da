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
