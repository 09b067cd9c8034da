//! [`ApiError`]: every 4xx/5xx the RP sends, rendered as the ARM error envelope
//! `{"error": {"code", "message", "details"?}}` (or flat under the `flat-error` fault).

use axum::http::StatusCode;
use serde_json::{Map, Value, json};

/// One entry of `error.details`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    pub code: String,
    pub message: String,
    pub target: Option<String>,
}

/// An error answer: status, ARM error code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    pub details: Vec<Detail>,
    /// Methods for the `Allow` header of a 405.
    pub allow: Option<&'static str>,
    /// Send `Retry-After` (server-side 5xx that a client may retry).
    pub retry_after: bool,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code: code.to_string(),
            message: message.into(),
            details: Vec::new(),
            allow: None,
            retry_after: false,
        }
    }

    pub fn bad_request(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn not_found(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    pub fn conflict(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    /// 400 `InvalidRequestContent` carrying one detail per problem found.
    pub fn invalid_content(details: Vec<Detail>) -> Self {
        let message = match details.first() {
            Some(d) if details.len() == 1 => {
                format!("The request content is invalid: {}", d.message)
            }
            _ => format!(
                "The request content is invalid ({} problems).",
                details.len()
            ),
        };
        ApiError {
            details,
            ..Self::bad_request("InvalidRequestContent", message)
        }
    }

    pub fn method_not_allowed(allow: &'static str) -> Self {
        ApiError {
            allow: Some(allow),
            ..Self::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                format!("The HTTP method is not supported here; allowed: {allow}."),
            )
        }
    }

    pub fn precondition_failed() -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "PreconditionFailed",
            "The condition specified by If-Match or If-None-Match was not met.",
        )
    }

    /// The `{code, message, details?}` object itself; `rich` adds the optional OData parts
    /// (`target`, `details`, `innererror`, `additionalInfo`).
    pub fn inner(&self, rich: bool) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), json!(self.code));
        m.insert("message".into(), json!(self.message));
        if !self.details.is_empty() {
            let details: Vec<Value> = self
                .details
                .iter()
                .map(|d| {
                    let mut o = Map::new();
                    o.insert("code".into(), json!(d.code));
                    o.insert("message".into(), json!(d.message));
                    if let Some(t) = &d.target {
                        o.insert("target".into(), json!(t));
                    }
                    Value::Object(o)
                })
                .collect();
            m.insert("details".into(), Value::Array(details));
        }
        if rich {
            let target = self
                .details
                .iter()
                .find_map(|d| d.target.clone())
                .filter(|t| !t.is_empty());
            enrich(
                &mut m,
                target.as_deref().unwrap_or("request"),
                self.status.as_u16(),
            );
        }
        Value::Object(m)
    }

    /// The response body: the envelope, or the bare inner object when `flat`.
    pub fn body(&self, flat: bool, rich: bool) -> Value {
        if flat {
            self.inner(rich)
        } else {
            json!({ "error": self.inner(rich) })
        }
    }
}

/// Adds the optional parts of an OData error object to `m` (which has `code` and
/// `message`): `target`, `details` (one entry repeating code and message when there is none),
/// `innererror` and `additionalInfo` (the `rich-errors` variant).
pub fn enrich(m: &mut Map<String, Value>, target: &str, status: u16) {
    let code = m.get("code").cloned().unwrap_or(Value::Null);
    let message = m.get("message").cloned().unwrap_or(Value::Null);
    m.insert("target".into(), json!(target));
    if !m.contains_key("details") {
        m.insert(
            "details".into(),
            json!([{"code": code, "message": message, "target": target}]),
        );
    }
    m.insert(
        "innererror".into(),
        json!({"code": code, "trace": "refrp", "innererror": {"code": "Internal"}}),
    );
    m.insert(
        "additionalInfo".into(),
        json!([{"type": "RefrpErrorInfo", "info": {"httpStatus": status}}]),
    );
}

/// `ResourceNotFound` as `resource_not_found` (the `error-code-snake-case` fault).
pub fn snake_case(code: &str) -> String {
    let mut out = String::new();
    for (i, c) in code.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

impl Detail {
    pub fn new(code: &str, target: &str, message: impl Into<String>) -> Self {
        Detail {
            code: code.to_string(),
            message: message.into(),
            target: Some(target.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_and_flat_forms() {
        let e = ApiError::not_found("NotFound", "nothing here");
        assert_eq!(
            e.body(false, false),
            json!({"error": {"code": "NotFound", "message": "nothing here"}})
        );
        assert_eq!(
            e.body(true, false),
            json!({"code": "NotFound", "message": "nothing here"})
        );
        let rich = e.body(false, true);
        assert_eq!(rich["error"]["target"], "request");
        assert_eq!(rich["error"]["details"][0]["code"], "NotFound");
        assert!(rich["error"]["innererror"].is_object());
        assert_eq!(
            rich["error"]["additionalInfo"][0]["info"]["httpStatus"],
            404
        );
    }

    #[test]
    fn details_are_rendered() {
        let e =
            ApiError::invalid_content(vec![Detail::new("InvalidSize", "properties.size", "bad")]);
        let b = e.body(false, false);
        assert_eq!(b["error"]["code"], "InvalidRequestContent");
        assert_eq!(b["error"]["details"][0]["target"], "properties.size");
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
    }
}
