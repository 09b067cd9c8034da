//! [`Reply`]: a response under construction, error answers, and the `Retry-After` value (the
//! headers of asynchronous answers are built in `lro`).

use axum::Json;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::errors::ApiError;
use crate::faults::Fault;
use crate::settings::Settings;
use crate::variants::Variant;

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
        let rich = settings.is(Variant::RichErrors);
        let mut body = err.body(settings.has(Fault::FlatError), rich);
        if let Some(e) = body.get_mut("error").and_then(|e| e.as_object_mut()) {
            if settings.has(Fault::ErrorCodeSnakeCase)
                && let Some(code) = e.get("code").and_then(|c| c.as_str())
                && !code.contains("ApiVersion")
                && !code.starts_with("NoRegistered")
            {
                let snake = crate::errors::snake_case(code);
                e.insert("code".into(), serde_json::Value::String(snake));
            }
            if settings.has(Fault::ErrorAdditionalInfoObject) {
                e.insert(
                    "additionalInfo".into(),
                    serde_json::json!({"type": "RefrpErrorInfo", "info": {"httpStatus": err.status.as_u16()}}),
                );
            }
        }
        let mut r = Reply::json(err.status, body);
        if let Some(allow) = err.allow {
            r = r.header(header::ALLOW, allow);
        }
        if err.retry_after {
            r = r.header(header::RETRY_AFTER, &retry_after(settings));
        }
        r
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

/// The `Retry-After` value of error answers that carry one: whole seconds, unless a fault
/// says otherwise.
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
