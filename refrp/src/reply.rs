//! [`Reply`]: a response under construction, and the headers of asynchronous answers
//! (`Azure-AsyncOperation`, `Location`, `Retry-After`), where several fault knobs act.

use axum::Json;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::NAMESPACE;
use crate::context::{Req, encode_segment};
use crate::errors::ApiError;
use crate::faults::Fault;
use crate::path::OpEndpoint;
use crate::settings::Settings;
use crate::store::Operation;

/// Status, headers and an optional JSON body.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Option<Value>,
}

impl Reply {
    pub fn json(status: StatusCode, body: Value) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: Some(body),
        }
    }

    pub fn empty(status: StatusCode) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: None,
        }
    }

    /// Adds a header; a value that is not a valid header value is dropped, never a panic.
    pub fn header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.push((name, v));
        }
        self
    }

    pub fn etag(self, etag: &str) -> Self {
        self.header(header::ETAG, etag)
    }

    /// The error answer for `err`, in the envelope unless `flat-error` is on.
    pub fn error(settings: &Settings, err: &ApiError) -> Self {
        let mut r = Reply::json(err.status, err.body(settings.has(Fault::FlatError)));
        if let Some(allow) = err.allow {
            r = r.header(header::ALLOW, allow);
        }
        if err.retry_after {
            r = r.header(header::RETRY_AFTER, &retry_after(settings));
        }
        r
    }

    /// Adds `Azure-AsyncOperation`, `Location` (unless `location` is false) and `Retry-After`
    /// for `op`.
    pub fn async_headers(self, req: &Req, op: &Operation, location: bool) -> Self {
        let aao = req.absolute(&op_path_and_query(req, op, OpEndpoint::Status));
        let r = self.header(HeaderName::from_static("azure-asyncoperation"), &aao);
        let r = if location {
            r.header(header::LOCATION, &location_url(req, op))
        } else {
            r
        };
        r.header(header::RETRY_AFTER, &retry_after(req.settings))
    }
}

impl IntoResponse for Reply {
    /// Status, the JSON body (if any) and the headers, in order.
    fn into_response(self) -> Response {
        let mut response = match self.body {
            Some(body) => (self.status, Json(body)).into_response(),
            None => self.status.into_response(),
        };
        let headers = response.headers_mut();
        for (name, value) in self.headers {
            headers.append(name, value);
        }
        response
    }
}

/// The path (with `api-version`) of an operation endpoint.
pub fn op_path_and_query(req: &Req, op: &Operation, endpoint: OpEndpoint) -> String {
    format!(
        "{}?api-version={}",
        op_path(op, endpoint),
        encode_segment(&req.api_version)
    )
}

/// `/subscriptions/{sub}/providers/Microsoft.Contoso/locations/{loc}/operation…/{id}`.
pub fn op_path(op: &Operation, endpoint: OpEndpoint) -> String {
    let segment = match endpoint {
        OpEndpoint::Status => "operationStatuses",
        OpEndpoint::Result => "operationResults",
    };
    format!(
        "/subscriptions/{}/providers/{NAMESPACE}/locations/{}/{segment}/{}",
        encode_segment(&op.sub),
        encode_segment(&op.location),
        op.id
    )
}

/// The operationResults URL: absolute, or a bare path under `relative-location`.
pub fn location_url(req: &Req, op: &Operation) -> String {
    let pq = op_path_and_query(req, op, OpEndpoint::Result);
    if req.has(Fault::RelativeLocation) {
        pq
    } else {
        req.absolute(&pq)
    }
}

/// The `Retry-After` value: whole seconds, unless a fault says otherwise.
pub fn retry_after(settings: &Settings) -> String {
    let secs = if settings.has(Fault::RetryAfterOutOfRange) {
        5
    } else {
        settings.retry_after_secs
    };
    if settings.has(Fault::RetryAfterDate) {
        let secs = i64::try_from(secs.min(1_000_000_000)).unwrap_or(0);
        let at = chrono::Utc::now() + chrono::Duration::seconds(secs);
        at.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
    } else {
        secs.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        let s = Settings::default();
        assert_eq!(retry_after(&s), "10");
        assert_eq!(
            retry_after(&s.clone().with_fault(Fault::RetryAfterOutOfRange)),
            "5"
        );
        let d = retry_after(&s.with_fault(Fault::RetryAfterDate));
        assert!(d.ends_with(" GMT") && d.contains(','), "{d}");
    }
}
