//! Handlers of the data-plane surface, each run under the store lock: widget PUT / GET /
//! DELETE and list, the five long-running actions, the monitors, the snapshot final link and
//! the export content.
//!
//! Every long-running answer carries `Operation-Id` and its link headers. A request with a
//! client `Operation-Id` that was seen before replays the first answer (same status, links and
//! id, current body) when it asks for the same thing, and answers 409 when it does not.

use std::time::Instant;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use serde_json::{Value, json};

use super::monitor;
use super::route::{Action, Monitor};
use super::store::{OpKind, OpSpec, Phase, Settled, Store, Widget};
use crate::context::encode_segment;
use crate::errors::{ApiError, Detail};
use crate::faults::Fault;
use crate::ids;
use crate::reply::Reply;
use crate::settings::Settings;
use crate::validate;
use crate::variants::Variant;

/// The request header (and response header) carrying the operation id.
pub const OPERATION_ID: &str = "operation-id";

/// Longest client operation id accepted.
const MAX_OPERATION_ID: usize = 128;

/// One request as seen by the handlers.
pub struct DpReq<'a> {
    pub headers: &'a HeaderMap,
    pub body: Bytes,
    /// `http://` + Host, for absolute links.
    pub base: String,
    /// The checked api-version, repeated in every link.
    pub api_version: String,
    pub settings: &'a Settings,
    pub now: Instant,
}

impl DpReq<'_> {
    fn has(&self, fault: Fault) -> bool {
        self.settings.has(fault)
    }

    /// An absolute URL on this server for `/dataplane/{rest}` with the api-version.
    fn link(&self, rest: &str) -> String {
        format!(
            "{}/dataplane/{rest}?api-version={}",
            self.base,
            encode_segment(&self.api_version)
        )
    }

    fn monitor_url(&self, monitor: Monitor, id: &str) -> String {
        let link = self.link(&format!("{}/{}", monitor.segment(), encode_segment(id)));
        if self.has(Fault::MonLinkNoApiVersion) {
            // Reads still need one (400 without): a client must add it.
            return link.split('?').next().unwrap_or(&link).to_string();
        }
        link
    }

    /// The client's `Operation-Id`: `None` when absent or blank; 400 when malformed.
    fn client_operation_id(&self) -> Result<Option<String>, ApiError> {
        let Some(raw) = self.headers.get(OPERATION_ID) else {
            return Ok(None);
        };
        let value = raw.to_str().map(str::trim).unwrap_or("\u{fffd}");
        if value.is_empty() {
            return Ok(None);
        }
        let ok = value.len() <= MAX_OPERATION_ID
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'));
        if !ok {
            return Err(ApiError::bad_request(
                "InvalidOperationId",
                format!(
                    "The Operation-Id header must be 1..{MAX_OPERATION_ID} characters of letters, digits, '-', '_', '.' or '~'."
                ),
            ));
        }
        Ok(Some(value.to_string()))
    }
}

/// The representation of a widget.
fn render(store: &Store, w: &Widget) -> Value {
    json!({"name": w.name, "size": w.size, "provisioningState": store.shown_state(w)})
}

fn widget_not_found(name: &str) -> ApiError {
    ApiError::not_found(
        "ResourceNotFound",
        format!("The widget '{name}' was not found."),
    )
}

fn being_deleted(name: &str) -> ApiError {
    ApiError::conflict(
        "ResourceBeingDeleted",
        format!("The widget '{name}' is being deleted."),
    )
}

/// `GET /dataplane/widgets/{name}` (counts for the gate when its write linked no monitor).
pub fn get(store: &mut Store, name: &str) -> Result<Reply, ApiError> {
    store.observe_widget(name);
    let w = store
        .widgets
        .get(name)
        .ok_or_else(|| widget_not_found(name))?;
    Ok(Reply::json(StatusCode::OK, render(store, w)))
}

/// `GET /dataplane/widgets`: `{"value": [...]}` in name order.
pub fn list(store: &Store) -> Reply {
    let value: Vec<Value> = store.widgets.values().map(|w| render(store, w)).collect();
    Reply::json(StatusCode::OK, json!({ "value": value }))
}

/// A PUT body: `{"size": 1..100, "fail": bool?}`; other fields are ignored.
fn put_body(bytes: &[u8]) -> Result<(u64, bool), ApiError> {
    let value = validate::json(bytes).map_err(|d| ApiError::invalid_content(vec![d]))?;
    let Value::Object(m) = value else {
        return Err(ApiError::invalid_content(vec![Detail::new(
            "InvalidJson",
            "",
            "The request body must be a JSON object.",
        )]));
    };
    let mut details = Vec::new();
    let size = match m.get("size") {
        Some(v) => match v.as_u64().filter(|n| (1..=100).contains(n)) {
            Some(n) => n,
            None => {
                details.push(Detail::new(
                    "InvalidSize",
                    "size",
                    "size must be an integer from 1 to 100.",
                ));
                0
            }
        },
        None => {
            details.push(Detail::new("MissingSize", "size", "size is required."));
            0
        }
    };
    let fail = fail_flag(m.get("fail"), &mut details);
    if details.is_empty() {
        Ok((size, fail))
    } else {
        Err(ApiError::invalid_content(details))
    }
}

/// An action body: empty, or an object with an optional boolean `fail`.
fn action_body(bytes: &[u8]) -> Result<bool, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(false);
    }
    let value = validate::json(bytes).map_err(|d| ApiError::invalid_content(vec![d]))?;
    let mut details = Vec::new();
    let fail = match &value {
        Value::Object(m) => fail_flag(m.get("fail"), &mut details),
        _ => {
            details.push(Detail::new(
                "InvalidJson",
                "",
                "The request body must be a JSON object.",
            ));
            false
        }
    };
    if details.is_empty() {
        Ok(fail)
    } else {
        Err(ApiError::invalid_content(details))
    }
}

fn fail_flag(v: Option<&Value>, details: &mut Vec<Detail>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            details.push(Detail::new(
                "InvalidFail",
                "fail",
                "fail must be a boolean.",
            ));
            false
        }
    }
}

/// The answer to a repeated request: the first answer's status, links and id, with the
/// current body. `None` when the request is not a repeat (or repeats are not recognized).
fn replay(
    req: &DpReq,
    store: &Store,
    client: Option<&str>,
    fingerprint: &str,
) -> Result<Option<Reply>, ApiError> {
    let Some(client) = client else {
        return Ok(None);
    };
    if req.has(Fault::MonRepeatStartsNew) {
        return Ok(None);
    }
    let known = store
        .client_ids
        .get(client)
        .and_then(|id| store.ops.get(id))
        .or_else(|| store.ops.get(client));
    let Some(op) = known else { return Ok(None) };
    if op.fingerprint != fingerprint {
        return Err(ApiError::conflict(
            "OperationIdConflict",
            format!("The Operation-Id '{client}' is already used by a different request."),
        ));
    }
    let body = match op.kind {
        OpKind::Create | OpKind::Replace => store
            .widgets
            .get(&op.widget)
            .map_or_else(|| op.initial_body.clone(), |w| render(store, w)),
        _ => monitor::body(op, req.now, req.settings),
    };
    let mut reply = Reply::json(op.initial_status, body);
    for (name, value) in &op.links {
        reply = reply.header(name.clone(), value);
    }
    Ok(Some(with_operation_id(req, reply, &op.echo_id)))
}

/// The (monitor id, echoed id) of a new operation; records the client id.
fn assign_id(req: &DpReq, store: &mut Store, client: Option<String>) -> (String, String) {
    let Some(client) = client else {
        let id = ids::uuid();
        return (id.clone(), id);
    };
    if req.has(Fault::MonOperationIdIgnored) {
        let id = ids::uuid();
        store.client_ids.insert(client, id.clone());
        return (id.clone(), id);
    }
    if store.ops.contains_key(&client) {
        // Only under `mon-repeat-starts-new`: the id is taken, so a fresh one is made.
        return (ids::uuid(), client);
    }
    store.client_ids.insert(client.clone(), client.clone());
    (client.clone(), client)
}

/// Adds the `Operation-Id` response header, unless `mon-no-operation-id` leaves it out.
fn with_operation_id(req: &DpReq, reply: Reply, id: &str) -> Reply {
    if req.settings.is(Variant::MonNoOperationId) {
        reply
    } else {
        reply.header(HeaderName::from_static(OPERATION_ID), id)
    }
}

/// Starts the operation described by `spec` (its ids filled in here) and answers with it.
fn launch(req: &DpReq, store: &mut Store, spec: OpSpec) -> Reply {
    let mut reply = Reply::json(spec.initial_status, spec.initial_body.clone());
    for (name, value) in &spec.links {
        reply = reply.header(name.clone(), value);
    }
    reply = with_operation_id(req, reply, &spec.echo_id);
    let id = spec.id.clone();
    store.start(spec, req.now);
    if let (true, Some(op)) = (reply.status == StatusCode::ACCEPTED, store.ops.get(&id)) {
        reply.body = Some(monitor::body(op, req.now, req.settings));
    }
    reply
}

/// `PUT /dataplane/widgets/{name}`: 201 (create) or 200 (replace) with `Operation-Location`.
pub fn put(req: &DpReq, store: &mut Store, name: &str) -> Result<Reply, ApiError> {
    if !validate::name(name) {
        return Err(ApiError::bad_request(
            "InvalidResourceName",
            format!(
                "The widget name '{name}' is invalid: use 1..90 of letters, digits, '-', '_', '.', '(' or ')', not ending in '.'."
            ),
        ));
    }
    let (size, fail) = put_body(&req.body)?;
    let client = req.client_operation_id()?;
    let fingerprint = format!("PUT {name} size={size} fail={fail}");
    if let Some(r) = replay(req, store, client.as_deref(), &fingerprint)? {
        return Ok(r);
    }
    if store.widgets.get(name).is_some_and(|w| w.deleting) {
        return Err(being_deleted(name));
    }
    let (id, echo_id) = assign_id(req, store, client);
    let existed = store.widgets.contains_key(name);
    let w = store.widgets.entry(name.to_string()).or_insert(Widget {
        name: name.to_string(),
        size,
        settled: Settled::Succeeded,
        latest_write: None,
        deleting: false,
        restarts: 0,
        generation: 0,
    });
    w.size = size;
    w.latest_write = Some(id.clone());
    let initial_body = json!({"name": name, "size": size, "provisioningState": "Running"});
    let mut links = Vec::new();
    if !req.has(Fault::MonNoOperationLocation) {
        links.push((
            HeaderName::from_static("operation-location"),
            req.monitor_url(Monitor::Operations, &id),
        ));
    }
    if req.settings.is(Variant::MonPutLocation) {
        links.push((
            header::LOCATION,
            req.link(&format!("widgets/{}", encode_segment(name))),
        ));
    }
    let spec = OpSpec {
        id,
        echo_id,
        kind: if existed {
            OpKind::Replace
        } else {
            OpKind::Create
        },
        monitor: Monitor::Operations,
        widget: name.to_string(),
        fingerprint,
        fail,
        result: Some(json!({"name": name, "size": size, "provisioningState": "Succeeded"})),
        initial_status: if existed {
            StatusCode::OK
        } else {
            StatusCode::CREATED
        },
        initial_body,
        links,
        snapshot_id: None,
    };
    Ok(launch(req, store, spec))
}

/// `DELETE /dataplane/widgets/{name}`: 202 + `Operation-Location`, or 204 when missing.
pub fn delete(req: &DpReq, store: &mut Store, name: &str) -> Result<Reply, ApiError> {
    let client = req.client_operation_id()?;
    let fingerprint = format!("DELETE {name}");
    if let Some(r) = replay(req, store, client.as_deref(), &fingerprint)? {
        return Ok(r);
    }
    let Some(w) = store.widgets.get_mut(name) else {
        return Ok(Reply::empty(StatusCode::NO_CONTENT));
    };
    w.deleting = true;
    store.cancel_for_delete(name);
    let (id, echo_id) = assign_id(req, store, client);
    let links = vec![(
        HeaderName::from_static("operation-location"),
        req.monitor_url(Monitor::Operations, &id),
    )];
    let spec = OpSpec {
        id,
        echo_id,
        kind: OpKind::Delete,
        monitor: Monitor::Operations,
        widget: name.to_string(),
        fingerprint,
        fail: false,
        result: None,
        initial_status: StatusCode::ACCEPTED,
        initial_body: Value::Null,
        links,
        snapshot_id: None,
    };
    Ok(launch(req, store, spec))
}

/// `POST /dataplane/widgets/{name}:{action}`: 202 with the action's link headers.
pub fn action(
    req: &DpReq,
    store: &mut Store,
    name: &str,
    action: Action,
) -> Result<Reply, ApiError> {
    let fail = action_body(&req.body)?;
    let client = req.client_operation_id()?;
    let fingerprint = format!("POST {name}:{} fail={fail}", action.name());
    if let Some(r) = replay(req, store, client.as_deref(), &fingerprint)? {
        return Ok(r);
    }
    let w = store
        .widgets
        .get(name)
        .ok_or_else(|| widget_not_found(name))?;
    if w.deleting {
        return Err(being_deleted(name));
    }
    let size = w.size;
    let (id, echo_id) = assign_id(req, store, client);
    let monitor = action.monitor();
    let monitor_url = req.monitor_url(monitor, &id);
    let mut snapshot_id = None;
    let (link_header, result) = match action {
        Action::Export => (
            "operation-location",
            json!({"exportUrl": req.link(&format!("exports/{}/content", encode_segment(&id)))}),
        ),
        Action::Analyze => (
            "operation-location",
            json!({"widget": name, "size": size, "healthy": true, "findings": []}),
        ),
        // The restart count and generation are filled in when the operation ends.
        Action::Restart => ("location", json!({"widget": name})),
        Action::Rebuild => ("azure-asyncoperation", json!({"widget": name})),
        Action::Snapshot => {
            let sid = ids::uuid();
            snapshot_id = Some(sid.clone());
            ("operation-location", json!({"id": sid, "widget": name}))
        }
    };
    let mut links = vec![(HeaderName::from_static(link_header), monitor_url)];
    if let Some(sid) = &snapshot_id {
        links.push((
            header::LOCATION,
            req.link(&format!("snapshots/{}", encode_segment(sid))),
        ));
    }
    let spec = OpSpec {
        id,
        echo_id,
        kind: OpKind::Action(action),
        monitor,
        widget: name.to_string(),
        fingerprint,
        fail,
        result: Some(result),
        initial_status: StatusCode::ACCEPTED,
        initial_body: Value::Null,
        links,
        snapshot_id,
    };
    Ok(launch(req, store, spec))
}

/// `GET /dataplane/{monitor}/{id}`: always 200 while the operation is known. A read counts
/// for the hold-open gate.
pub fn read_monitor(
    req: &DpReq,
    store: &mut Store,
    monitor: Monitor,
    id: &str,
) -> Result<Reply, ApiError> {
    if store.ops.get(id).is_some_and(|op| op.monitor == monitor) {
        store.observe(id);
        if let Some(op) = store.ops.get_mut(id)
            && monitor::Shown::of(op, req.now).terminal()
        {
            op.terminal_reads = op.terminal_reads.saturating_add(1);
        }
    }
    let op = store
        .ops
        .get(id)
        .filter(|op| op.monitor == monitor)
        .ok_or_else(|| {
            ApiError::not_found(
                "OperationNotFound",
                format!("The operation '{id}' was not found."),
            )
        })?;
    let reply = Reply::json(StatusCode::OK, monitor::body(op, req.now, req.settings));
    Ok(if req.settings.is(Variant::MonRetryAfter1) {
        reply.header(header::RETRY_AFTER, "1")
    } else {
        reply
    })
}

/// `GET /dataplane/snapshots/{id}`: 404 until the snapshot operation succeeded.
pub fn read_snapshot(req: &DpReq, store: &Store, id: &str) -> Result<Reply, ApiError> {
    store
        .snapshots
        .get(id)
        .filter(|_| !req.has(Fault::MonFinalLocation404))
        .map(|s| Reply::json(StatusCode::OK, s.clone()))
        .ok_or_else(|| {
            ApiError::not_found(
                "ResourceNotFound",
                format!("The snapshot '{id}' was not found."),
            )
        })
}

/// `GET /dataplane/exports/{id}/content`: the exported document once the export completed.
pub fn read_export(store: &Store, id: &str) -> Result<Reply, ApiError> {
    store
        .ops
        .get(id)
        .filter(|op| op.monitor == Monitor::Exports && op.phase == Phase::Succeeded)
        .and_then(|op| op.exported.clone())
        .map(|doc| Reply::json(StatusCode::OK, doc))
        .ok_or_else(|| {
            ApiError::not_found(
                "ResourceNotFound",
                format!("No completed export '{id}' was found."),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies() {
        assert_eq!(put_body(br#"{"size": 3}"#).ok(), Some((3, false)));
        assert_eq!(
            put_body(br#"{"size": 3, "fail": true, "name": "x"}"#).ok(),
            Some((3, true))
        );
        for bad in [
            &b""[..],
            b"{",
            b"[]",
            br#"{"size": 0}"#,
            br#"{"size": "3"}"#,
            br#"{"size": 3, "fail": "yes"}"#,
            br#"{}"#,
        ] {
            let e = put_body(bad).err().map(|e| e.status);
            assert_eq!(e, Some(StatusCode::BAD_REQUEST), "{bad:?}");
        }
        assert_eq!(action_body(b"").ok(), Some(false));
        assert_eq!(action_body(br#"{"fail": true}"#).ok(), Some(true));
        assert!(action_body(b"nope").is_err() && action_body(b"3").is_err());
    }
}
