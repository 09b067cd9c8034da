//! Reads of an operation: the operation resource (the Azure-AsyncOperation URL, under any of
//! the status shapes) and the operation result (the Location URL). Both are scoped to the
//! identity that started the operation, and both count as observations for the hold-open gate.

use axum::http::{StatusCode, header};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::context::Req;
use crate::errors::{self, ApiError};
use crate::faults::Fault;
use crate::lro;
use crate::path::{OpEndpoint, OpRoute, OpShape, percent_decode};
use crate::render;
use crate::reply::Reply;
use crate::store::{OpKind, OpStatus, Operation, Store};
use crate::variants::Variant;

/// GET of an operation URL; `endpoint` is the route's, resolved for `?monitor=true`.
pub fn read(
    req: &Req,
    store: &mut Store,
    route: &OpRoute,
    endpoint: OpEndpoint,
) -> Result<Reply, ApiError> {
    let op = store
        .ops
        .get(&route.op.to_ascii_lowercase())
        .filter(|op| {
            matches_route(
                op,
                route,
                endpoint,
                req.has(Fault::OperationAnySubscription),
            )
        })
        .ok_or_else(|| op_not_found(&route.op))?;
    let any_identity = req.has(Fault::OpStatusAnyTenant)
        || (req.has(Fault::NestedStatusAnyTenant) && op.target_kind.nested());
    if !any_identity && !same_identity(req, op) {
        return Err(op_not_found(&route.op));
    }
    let id = op.id.clone();
    store.observe(&id);
    match endpoint {
        OpEndpoint::Status => {
            let op = store.ops.get(&id).ok_or_else(|| op_not_found(&route.op))?;
            status(req, op, route.shape)
        }
        OpEndpoint::Result => result(req, store, &id),
    }
}

/// The operation is the one the URL names: same subscription, location (or original request
/// path), and a Location generation it handed out.
fn matches_route(op: &Operation, route: &OpRoute, endpoint: OpEndpoint, any_sub: bool) -> bool {
    let generation_ok = match endpoint {
        OpEndpoint::Status => route.generation == 0,
        OpEndpoint::Result => route.generation <= op.generation,
    };
    let place_ok = match (&route.location, &route.origin) {
        (Some(loc), _) => op.location.eq_ignore_ascii_case(loc),
        (None, Some(origin)) => percent_decode(op.origin.trim_end_matches('/'))
            .is_some_and(|o| o.eq_ignore_ascii_case(origin)),
        (None, None) => false,
    };
    generation_ok && place_ok && (any_sub || op.sub.eq_ignore_ascii_case(&route.sub))
}

fn op_not_found(op_id: &str) -> ApiError {
    ApiError::not_found(
        "OperationNotFound",
        format!("The operation '{op_id}' could not be found."),
    )
}

/// Identity headers, when both the operation and the read carry one, must be equal.
fn same_identity(req: &Req, op: &Operation) -> bool {
    let same = |stored: &Option<String>, got: Option<String>| match (stored, got) {
        (Some(s), Some(g)) => s.eq_ignore_ascii_case(&g),
        _ => true,
    };
    let tenant_ok = req.has(Fault::OpStatusOtherTenant) || same(&op.tenant, req.tenant());
    tenant_ok && same(&op.client, req.client())
}

fn time(req: &Req, t: DateTime<Utc>) -> String {
    if req.has(Fault::OpStatusBadTime) {
        t.format("%m/%d/%Y %I:%M:%S %p").to_string()
    } else if req.is(Variant::FractionalTimestamps) {
        // chrono has no 7-digit fraction specifier: 100 ns ticks, as .NET writes them.
        format!(
            "{}.{:07}+00:00",
            t.format("%Y-%m-%dT%H:%M:%S"),
            t.timestamp_subsec_nanos() / 100
        )
    } else {
        t.to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

/// The status value: `InProgress` (or RP-specific running values) while running, the
/// terminal names (lower case under `lowercase-terminal-status`) at the end.
fn status_name(req: &Req, op: &Operation) -> &'static str {
    let lower = req.is(Variant::LowercaseTerminalStatus);
    match op.status {
        OpStatus::Running if req.is(Variant::CustomRunningStates) => {
            match op.running_phase(req.now) {
                0 => "NotStarted",
                1 => "Dequeued",
                _ => "provisioningResources",
            }
        }
        OpStatus::Running => "InProgress",
        OpStatus::Succeeded if req.has(Fault::UnknownTerminalStatus) => "Completed",
        OpStatus::Succeeded if lower => "succeeded",
        OpStatus::Succeeded => "Succeeded",
        OpStatus::Failed if lower => "failed",
        OpStatus::Failed => "Failed",
        OpStatus::Canceled if lower => "canceled",
        OpStatus::Canceled => "Canceled",
    }
}

fn percent(req: &Req, op: &Operation) -> Value {
    if req.has(Fault::PercentOutOfRange) {
        return json!(150);
    }
    let fractional = req.is(Variant::FractionalPercent);
    if op.status != OpStatus::Running {
        return if fractional { json!(100.0) } else { json!(100) };
    }
    let total = op
        .deadline
        .saturating_duration_since(op.started)
        .as_millis()
        .max(1);
    let done = req.now.saturating_duration_since(op.started).as_millis();
    if fractional {
        let p = (done as f64 * 100.0 / total as f64).min(99.5);
        json!((p * 10.0).round() / 10.0)
    } else {
        json!((done * 100 / total).min(99) as u64)
    }
}

/// The operation resource; always 200 while the operation is known. Under
/// `opstatus-status-only` only `status` (and `error`) is sent, except fields a fault breaks.
fn status(req: &Req, op: &Operation, shape: OpShape) -> Result<Reply, ApiError> {
    let running = op.status == OpStatus::Running;
    if running && req.has(Fault::OpStatus404WhileRunning) {
        return Err(op_not_found(&op.id));
    }
    if running && req.has(Fault::OpStatus500WhileRunning) {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalServerError",
            "The operation status store is temporarily unavailable.",
        ));
    }
    let full = !req.is(Variant::OpStatusStatusOnly);
    let mut m = Map::new();
    if full || req.has(Fault::OpStatusNameMismatch) {
        m.insert("id".into(), json!(lro::op_path(op, shape)));
        let name = if req.has(Fault::OpStatusNameMismatch) {
            op.target_name.clone()
        } else {
            op.id.clone()
        };
        m.insert("name".into(), json!(name));
    }
    m.insert("status".into(), json!(status_name(req, op)));
    if full && req.is(Variant::OperationExtraFields) {
        m.insert("resourceId".into(), json!(op.target_id));
    }
    if full || req.has(Fault::OpStatusBadTime) {
        m.insert("startTime".into(), json!(time(req, op.start_time)));
        if let Some(end) = op.end_time {
            m.insert("endTime".into(), json!(time(req, end)));
        }
    }
    if full && req.is(Variant::OperationExtraFields) {
        let t = op.end_time.unwrap_or(op.start_time);
        m.insert("lastTransitionTime".into(), json!(time(req, t)));
    }
    if full || req.has(Fault::PercentOutOfRange) {
        m.insert("percentComplete".into(), percent(req, op));
    }
    let show_error = match op.status {
        OpStatus::Failed => !req.has(Fault::FailedWithoutError),
        OpStatus::Canceled => !req.has(Fault::CanceledWithoutError),
        _ => false,
    };
    if show_error && let Some(e) = &op.error {
        let mut err = Map::new();
        err.insert("code".into(), json!(e.code));
        err.insert("message".into(), json!(e.message));
        if req.is(Variant::RichErrors) {
            let status = if op.status == OpStatus::Failed {
                400
            } else {
                409
            };
            errors::enrich(&mut err, &op.target_name, status);
        }
        m.insert("error".into(), Value::Object(err));
    }
    if full
        && op.status == OpStatus::Succeeded
        && let Some(result) = &op.result
    {
        m.insert("properties".into(), result.clone());
    }
    Ok(Reply::json(StatusCode::OK, Value::Object(m)))
}

/// The operation result: 202 while running (with a new Location each time under
/// `new-location-per-poll`), then what the request would have answered.
fn result(req: &Req, store: &mut Store, id: &str) -> Result<Reply, ApiError> {
    let running = store
        .ops
        .get(id)
        .is_some_and(|op| op.status == OpStatus::Running);
    if running
        && !req.has(Fault::OpResult200WhileRunning)
        && req.is(Variant::NewLocationPerPoll)
        && let Some(op) = store.ops.get_mut(id)
    {
        op.generation += 1;
    }
    let op = store.ops.get(id).ok_or_else(|| op_not_found(id))?;
    match op.status {
        OpStatus::Running if req.has(Fault::OpResult200WhileRunning) => {
            Ok(match store.resources.get(&op.target) {
                Some(r) if matches!(op.kind, OpKind::Create | OpKind::Replace | OpKind::Patch) => {
                    let state = store.shown_state(&op.target);
                    Reply::json(
                        StatusCode::OK,
                        render::resource(r, Some(state), req.settings),
                    )
                    .etag(&r.etag)
                }
                _ => Reply::empty(StatusCode::OK),
            })
        }
        OpStatus::Running => Ok(Reply::empty(StatusCode::ACCEPTED)
            .header(header::LOCATION, &lro::location_url(req, op, op.generation))
            .retry_after(req.settings)),
        OpStatus::Succeeded => Ok(match op.kind {
            OpKind::Create | OpKind::Replace | OpKind::Patch => {
                let current = store.resources.get(&op.target);
                // A create answered 202 ends as the synchronous create would have: 201.
                let status = if op.hidden {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                };
                match current.or(op.snapshot.as_ref()) {
                    Some(r) => {
                        let state = if current.is_some() {
                            store.shown_state(&op.target)
                        } else {
                            r.settled
                        };
                        Reply::json(status, render::resource(r, Some(state), req.settings))
                            .etag(&r.etag)
                    }
                    None => Reply::empty(StatusCode::OK),
                }
            }
            OpKind::Delete if req.is(Variant::DeleteFinal200) => Reply::empty(StatusCode::OK),
            OpKind::Delete => Reply::empty(StatusCode::NO_CONTENT),
            OpKind::Restart => Reply::json(
                StatusCode::OK,
                op.result.clone().unwrap_or_else(|| json!({})),
            ),
        }),
        OpStatus::Failed => {
            let (code, message) = op
                .error
                .as_ref()
                .map_or(("OperationFailed", "The operation failed."), |e| {
                    (e.code.as_str(), e.message.as_str())
                });
            Err(ApiError::bad_request(code, message))
        }
        OpStatus::Canceled => Err(ApiError::conflict(
            "OperationCanceled",
            op.error
                .as_ref()
                .map_or("The operation was canceled.", |e| e.message.as_str()),
        )),
    }
}
