//! One request and its response as a recording format holds them, before redaction: what each
//! format's reader hands the builder.

use serde_json::Value;

use super::body::RawBody;
use crate::http::Role;

/// One request and its response as a format holds them.
#[derive(Debug)]
pub(crate) struct RawEntry {
    pub method: String,
    pub url: String,
    pub request_headers: Vec<(String, String)>,
    /// `None`: no request body.
    pub request_body: Option<RawBody>,
    /// `None`: no response was recorded (see `error`).
    pub response: Option<RawResponse>,
    pub error: Option<String>,
    pub started_at: String,
    pub elapsed_ms: u64,
    /// What rpconform's HAR writer recorded about the exchange (`_rpconform`).
    pub own: Option<OwnMeta>,
}

#[derive(Debug)]
pub(crate) struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: RawBody,
    /// The size the recording states for the body (HAR `content.size`), when given.
    pub size: Option<u64>,
}

/// Fields of an [`Exchange`] that only rpconform's own HAR files carry.
#[derive(Debug, Clone)]
pub(crate) struct OwnMeta {
    pub seq: u64,
    pub role: Role,
    pub foreign: bool,
    pub surface: crate::http::Surface,
}

impl RawEntry {
    pub(crate) fn new(method: String, url: String) -> Self {
        RawEntry {
            method,
            url,
            request_headers: Vec::new(),
            request_body: None,
            response: None,
            error: None,
            started_at: String::new(),
            elapsed_ms: 0,
            own: None,
        }
    }
}

/// Header pairs from a JSON object whose values are strings or arrays of strings (one pair per
/// element); other scalars are written as JSON.
pub(crate) fn header_pairs(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Value::Object(m) = v {
        for (k, x) in m {
            match x {
                Value::Array(items) => {
                    out.extend(items.iter().map(|i| (k.clone(), scalar_text(i))));
                }
                other => out.push((k.clone(), scalar_text(other))),
            }
        }
    }
    out
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
