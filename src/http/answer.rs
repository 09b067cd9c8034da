//! Reading an answer: its headers (redacted, cookies kept for the flow's jar), its body within
//! the cap, parsed within the JSON bounds, as the exchange records it.

use std::sync::Arc;

use serde_json::Value;

use super::json_body::{
    MAX_JSON_DEPTH, MAX_JSON_VALUES, json_depth_over, json_values_over, scrub_json, too_deep,
};
use super::{Redactor, Response};

/// Most of a response body kept in reports.
pub(crate) const REPORT_BODY_CHARS: usize = 64 * 1024;

/// Send and read the answer, its body within the cap.
pub(super) async fn receive(
    builder: reqwest::RequestBuilder,
    redactor: &Redactor,
    body_cap: usize,
) -> Result<Received, String> {
    let mut resp = builder.send().await.map_err(describe)?;
    let status = resp.status().as_u16();
    let set_cookies = set_cookies(&resp, redactor);
    let sent_headers: Vec<(String, String)> = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    // The name too: a target may echo a secret in a header name.
    let headers: Vec<(String, String)> = sent_headers
        .iter()
        .map(|(k, v)| redactor.header_pair(k, v))
        .collect();
    let sent_headers = (sent_headers != headers).then_some(sent_headers);
    if let Some(len) = resp.content_length()
        && len as usize > body_cap
    {
        return Err(format!(
            "response body announced as {len} bytes, over the cap of {} bytes (--body-cap); not read",
            body_cap
        ));
    }
    let mut body: Vec<u8> = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(describe)? {
        if body.len() + chunk.len() > body_cap {
            return Err(format!(
                "response body over the cap of {} bytes (--body-cap); reading stopped there",
                body_cap
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Received {
        status,
        headers,
        sent_headers,
        body,
        set_cookies,
    })
}

/// Cookies for the flow's jar, read before the header is redacted (each value is a secret
/// from here on: scrubbed wherever a target echoes it).
fn set_cookies(resp: &reqwest::Response, redactor: &Redactor) -> Vec<(String, String)> {
    let set_cookies: Vec<(String, String)> = resp
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| {
            let v = String::from_utf8_lossy(v.as_bytes());
            let (name, value) = v.split(';').next()?.split_once('=')?;
            Some((name.trim().to_string(), value.trim().to_string()))
        })
        .collect();
    for (_, v) in &set_cookies {
        redactor.register(v);
    }
    set_cookies
}

/// The answer as the exchange records it: redacted, its body cut and parsed within bounds.
pub(super) fn response(r: Received, redactor: &Redactor) -> Response {
    // Redact the whole text before cutting it: a secret across the cut would otherwise
    // leave its head (a JWT's first two segments, say) in the report.
    let body_text = super::cut(
        &redactor.text(&String::from_utf8_lossy(&r.body)),
        REPORT_BODY_CHARS,
    );
    let (json, json_error, sent_json) = parse_body(&r.body, redactor);
    Response {
        status: r.status,
        headers: r.headers,
        body: body_text,
        body_bytes: r.body.len(),
        json,
        json_error,
        set_cookies: r.set_cookies,
        sent: (r.sent_headers.is_some() || sent_json.is_some()).then(|| {
            Arc::new(super::exchange::Sent {
                headers: r.sent_headers,
                json: sent_json,
            })
        }),
    }
}

/// The body's JSON (scrubbed), why it is not parsed, and the JSON as sent when scrubbing
/// changed it.
fn parse_body(body: &[u8], redactor: &Redactor) -> (Option<Value>, Option<String>, Option<Value>) {
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        (None, None, None)
    } else if json_depth_over(body, MAX_JSON_DEPTH) {
        (None, Some(too_deep()), None)
    } else if json_values_over(body, MAX_JSON_VALUES) {
        (
            None,
            Some(format!(
                "body holds more than {MAX_JSON_VALUES} JSON values; not parsed (memory bound)"
            )),
            None,
        )
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(mut v) => {
                let sent_json = scrub_json(&mut v, redactor);
                (Some(v), None, sent_json)
            }
            Err(e) => (None, Some(format!("body is not valid JSON: {e}")), None),
        }
    }
}

/// An answer as read, before it is recorded.
pub(super) struct Received {
    status: u16,
    headers: Vec<(String, String)>,
    sent_headers: Option<Vec<(String, String)>>,
    body: Vec<u8>,
    set_cookies: Vec<(String, String)>,
}

fn describe(e: reqwest::Error) -> String {
    use std::error::Error;
    let mut msg = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "connection failed".to_string()
    } else if e.is_body() || e.is_decode() {
        "failed reading the body".to_string()
    } else {
        "request failed".to_string()
    };
    let mut src = e.source();
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}
