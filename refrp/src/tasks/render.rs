//! JSON of the task surface: tasks, subscriptions and the error shape
//! `{"error": {"type", "status", "description"}}`.

use std::time::Instant;

use axum::http::StatusCode;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use super::store::{Outcome, SubStatus, Subscription, Task, TaskStatus};
use crate::faults::Fault;
use crate::settings::Settings;

/// An error answer of the task surface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    pub status: StatusCode,
    /// e.g. `SUBSCRIPTION_NOT_FOUND`.
    pub kind: &'static str,
    pub description: String,
    /// Methods for the `Allow` header of a 405.
    pub allow: Option<&'static str>,
}

impl HttpError {
    pub fn new(status: StatusCode, kind: &'static str, description: impl Into<String>) -> Self {
        HttpError {
            status,
            kind,
            description: description.into(),
            allow: None,
        }
    }

    pub fn bad_request(description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_REQUEST_BODY", description)
    }

    /// `{"error": {"type", "status": "404 NOT_FOUND", "description"}}`.
    pub fn body(&self) -> Value {
        let reason = self
            .status
            .canonical_reason()
            .unwrap_or("ERROR")
            .to_ascii_uppercase()
            .replace(' ', "_");
        json!({"error": {
            "type": self.kind,
            "status": format!("{} {reason}", self.status.as_u16()),
            "description": self.description,
        }})
    }
}

/// RFC 3339 UTC with milliseconds.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn link(rel: &str, href: String) -> Value {
    json!({"rel": rel, "href": href, "type": "GET"})
}

fn description(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Received => "Task request received and is being queued for processing.",
        TaskStatus::InProgress => "Task request is being processed.",
        TaskStatus::Completed => {
            "Request processing completed successfully and its resources are now being provisioned / de-provisioned."
        }
        TaskStatus::Error => {
            "Task request failed during processing. See error information for failure details."
        }
    }
}

/// A task as `GET /v1/tasks/{id}` shows it at `now`. `base` is `http://host`.
pub fn task(
    t: &Task,
    now: Instant,
    third: std::time::Duration,
    base: &str,
    settings: &Settings,
) -> Value {
    let (status, since) = t.status_at(now, third);
    let at = t.created_at
        + chrono::Duration::from_std(since.saturating_duration_since(t.created))
            .unwrap_or_default();
    let mut m = Map::new();
    m.insert("taskId".into(), json!(t.id));
    m.insert("commandType".into(), json!(t.command.command_type()));
    m.insert("status".into(), json!(status.as_str()));
    m.insert("description".into(), json!(description(status)));
    m.insert("timestamp".into(), json!(timestamp(at)));
    match &t.outcome {
        Some(Outcome::Completed { resource_id }) => {
            let response = if settings.has(Fault::TaskCompletedWithoutResourceId) {
                json!({})
            } else {
                json!({ "resourceId": resource_id })
            };
            m.insert("response".into(), response);
        }
        Some(Outcome::Error(e)) => {
            let mut err = Map::new();
            err.insert("type".into(), json!(e.kind));
            err.insert("status".into(), json!(e.status));
            if !settings.has(Fault::TaskErrorWithoutDescription) {
                err.insert("description".into(), json!(e.description));
            }
            m.insert("response".into(), json!({ "error": err }));
        }
        None => {}
    }
    m.insert(
        "links".into(),
        json!([link("self", format!("{base}/v1/tasks/{}", t.id))]),
    );
    Value::Object(m)
}

/// The 202 answer to a write: the new task with a `task` link to follow.
pub fn accepted(t: &Task, base: &str) -> Value {
    json!({
        "taskId": t.id,
        "commandType": t.command.command_type(),
        "status": TaskStatus::Received.as_str(),
        "description": description(TaskStatus::Received),
        "timestamp": timestamp(t.created_at),
        "links": [link("task", format!("{base}/v1/tasks/{}", t.id))],
    })
}

/// A subscription.
pub fn subscription(s: &Subscription, base: &str) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(s.id));
    m.insert("name".into(), json!(s.name));
    m.insert("status".into(), json!(s.status.as_str()));
    m.insert("numberOfDatabases".into(), json!(0));
    if s.status == SubStatus::Error {
        let cause = s.error.as_deref().unwrap_or("Provisioning failed.");
        m.insert(
            "error".into(),
            json!({"type": "SUBSCRIPTION_PROVISIONING_FAILED", "description": cause}),
        );
    }
    m.insert(
        "links".into(),
        json!([link("self", format!("{base}/v1/subscriptions/{}", s.id))]),
    );
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_shape() {
        let e = HttpError::new(StatusCode::NOT_FOUND, "TASK_NOT_FOUND", "no such task");
        assert_eq!(
            e.body(),
            json!({"error": {"type": "TASK_NOT_FOUND", "status": "404 NOT_FOUND", "description": "no such task"}})
        );
        let e = HttpError::new(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "x");
        assert_eq!(e.body()["error"]["status"], "405 METHOD_NOT_ALLOWED");
    }
}
