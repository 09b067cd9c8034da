//! Handlers of the task surface, each run under the store lock. Writes answer 202 with a new
//! task; reads answer 200 or 404 at once with the data (unless `task-get-async`).

use std::time::Instant;

use axum::body::Bytes;
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use super::render::{self, HttpError};
use super::store::{Command, FailAt, Store};
use crate::faults::Fault;
use crate::settings::Settings;

/// Tasks listed by `GET /v1/tasks`, newest first.
const LISTED_TASKS: usize = 100;

/// Longest subscription name accepted.
const MAX_NAME: usize = 100;

/// One request as seen by the handlers.
pub struct TaskReq<'a> {
    pub body: Bytes,
    /// `http://` + Host, for absolute links.
    pub base: String,
    pub settings: &'a Settings,
    pub now: Instant,
}

fn json_object(bytes: &[u8]) -> Result<Map<String, Value>, HttpError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(HttpError::bad_request(
            "The request body is empty; a JSON object is required.",
        ));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(HttpError::bad_request(
            "The request body must be a JSON object.",
        )),
        Err(e) => Err(HttpError::bad_request(format!(
            "The request body is not valid JSON: {e}."
        ))),
    }
}

fn name_field(m: &Map<String, Value>) -> Result<String, HttpError> {
    match m.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= MAX_NAME => {
            Ok(s.clone())
        }
        Some(_) => Err(HttpError::bad_request(format!(
            "name must be a non-empty string of at most {MAX_NAME} characters."
        ))),
        None => Err(HttpError::bad_request("name is required.")),
    }
}

/// `fail`: absent or null, `"processing"`, or (when `provisioning_allowed`) `"provisioning"`.
fn fail_field(
    m: &Map<String, Value>,
    provisioning_allowed: bool,
) -> Result<Option<FailAt>, HttpError> {
    match m.get("fail") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "processing" => Ok(Some(FailAt::Processing)),
        Some(Value::String(s)) if s == "provisioning" && provisioning_allowed => {
            Ok(Some(FailAt::Provisioning))
        }
        Some(_) if provisioning_allowed => Err(HttpError::bad_request(
            "fail must be null, \"processing\" or \"provisioning\".",
        )),
        Some(_) => Err(HttpError::bad_request(
            "fail must be null or \"processing\" on an update.",
        )),
    }
}

fn sub_not_found(id: &str) -> HttpError {
    HttpError::new(
        StatusCode::NOT_FOUND,
        "SUBSCRIPTION_NOT_FOUND",
        format!("Subscription '{id}' does not exist."),
    )
}

/// The subscription id of a path segment that names an existing subscription.
fn existing(store: &Store, raw: &str) -> Result<u64, HttpError> {
    raw.parse::<u64>()
        .ok()
        .filter(|id| store.subs.contains_key(id))
        .ok_or_else(|| sub_not_found(raw))
}

/// 202 with the task just submitted.
fn accepted(req: &TaskReq, store: &Store, id: &str) -> (StatusCode, Value) {
    // The newest task is the one just submitted, even when ids are reused.
    let body = store
        .tasks
        .last()
        .filter(|t| t.id == id)
        .map_or_else(|| json!({"taskId": id}), |t| render::accepted(t, &req.base));
    (StatusCode::ACCEPTED, body)
}

/// `POST /v1/subscriptions`.
pub fn create(req: &TaskReq, store: &mut Store) -> Result<(StatusCode, Value), HttpError> {
    let m = json_object(&req.body)?;
    let name = name_field(&m)?;
    let fail = fail_field(&m, true)?;
    let id = store.submit(Command::Create, None, Some(name), fail, req.now);
    Ok(accepted(req, store, &id))
}

/// `PUT /v1/subscriptions/{id}`.
pub fn update(
    req: &TaskReq,
    store: &mut Store,
    raw_id: &str,
) -> Result<(StatusCode, Value), HttpError> {
    let sub = existing(store, raw_id)?;
    let m = json_object(&req.body)?;
    let name = name_field(&m)?;
    let fail = fail_field(&m, false)?;
    let id = store.submit(Command::Update, Some(sub), Some(name), fail, req.now);
    Ok(accepted(req, store, &id))
}

/// `DELETE /v1/subscriptions/{id}`.
pub fn delete(
    req: &TaskReq,
    store: &mut Store,
    raw_id: &str,
) -> Result<(StatusCode, Value), HttpError> {
    let sub = existing(store, raw_id)?;
    let id = store.submit(Command::Delete, Some(sub), None, None, req.now);
    Ok(accepted(req, store, &id))
}

/// `GET /v1/subscriptions/{id}`: 200 with the subscription (202 + task under a fault).
pub fn get(
    req: &TaskReq,
    store: &mut Store,
    raw_id: &str,
) -> Result<(StatusCode, Value), HttpError> {
    let sub = existing(store, raw_id)?;
    if req.settings.has(Fault::TaskGetAsync) {
        let id = store.submit(Command::Get, Some(sub), None, None, req.now);
        return Ok(accepted(req, store, &id));
    }
    store.observe_subscription(sub);
    let body = store
        .subs
        .get(&sub)
        .map(|s| render::subscription(s, &req.base))
        .ok_or_else(|| sub_not_found(raw_id))?;
    Ok((StatusCode::OK, body))
}

/// `GET /v1/subscriptions`: `{"subscriptions": [...]}` by id.
pub fn list(req: &TaskReq, store: &Store) -> (StatusCode, Value) {
    let subs: Vec<Value> = store
        .subs
        .values()
        .map(|s| render::subscription(s, &req.base))
        .collect();
    (StatusCode::OK, json!({ "subscriptions": subs }))
}

/// `GET /v1/tasks/{id}`: a read of the task (counts for the hold-open gate).
pub fn task(req: &TaskReq, store: &mut Store, id: &str) -> Result<(StatusCode, Value), HttpError> {
    store.observe_task(id);
    let t = store.task(id).ok_or_else(|| {
        HttpError::new(
            StatusCode::NOT_FOUND,
            "TASK_NOT_FOUND",
            format!("Task '{id}' does not exist."),
        )
    })?;
    Ok((
        StatusCode::OK,
        render::task(t, req.now, store.third(), &req.base, req.settings),
    ))
}

/// `GET /v1/tasks`: `{"tasks": [...]}`, the most recent first, running ones included.
pub fn tasks(req: &TaskReq, store: &Store) -> (StatusCode, Value) {
    let tasks: Vec<Value> = store
        .tasks
        .iter()
        .rev()
        .take(LISTED_TASKS)
        .map(|t| render::task(t, req.now, store.third(), &req.base, req.settings))
        .collect();
    (StatusCode::OK, json!({ "tasks": tasks }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_fields() {
        let m = |s: &str| json_object(s.as_bytes());
        assert!(m("").is_err() && m("[1]").is_err() && m("{").is_err());
        let ok = m(r#"{"name": "a", "fail": "provisioning"}"#).unwrap_or_default();
        assert_eq!(name_field(&ok).ok().as_deref(), Some("a"));
        assert_eq!(fail_field(&ok, true).ok(), Some(Some(FailAt::Provisioning)));
        assert!(fail_field(&ok, false).is_err());
        let bad = m(r#"{"name": 3, "fail": true}"#).unwrap_or_default();
        assert!(name_field(&bad).is_err() && fail_field(&bad, true).is_err());
        let blank = m(r#"{"name": "  "}"#).unwrap_or_default();
        assert!(name_field(&blank).is_err());
    }
}
