//! Reads of an operation: the operation resource (`operationStatuses`, the
//! Azure-AsyncOperation URL) and the operation result (`operationResults`, the Location URL).
//! Both are scoped to the identity that started the operation.

use axum::http::{StatusCode, header};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::context::Req;
use crate::errors::ApiError;
use crate::faults::Fault;
use crate::path::OpEndpoint;
use crate::render;
use crate::reply::{self, Reply};
use crate::store::{OpKind, OpStatus, Operation, Store};

/// GET of `operationStatuses/{op}` or `operationResults/{op}`.
pub fn read(
    req: &Req,
    store: &Store,
    endpoint: OpEndpoint,
    sub: &str,
    location: &str,
    op_id: &str,
) -> Result<Reply, ApiError> {
    let op = store
        .ops
        .get(&op_id.to_ascii_lowercase())
        .filter(|op| op.sub.eq_ignore_ascii_case(sub) && op.location.eq_ignore_ascii_case(location))
        .ok_or_else(|| op_not_found(op_id))?;
    if !req.has(Fault::OpStatusAnyTenant) && !same_identity(req, op) {
        return Err(op_not_found(op_id));
    }
    match endpoint {
        OpEndpoint::Status => status(req, op),
        OpEndpoint::Result => result(req, store, op),
    }
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
    same(&op.tenant, req.tenant()) && same(&op.client, req.client())
}

fn time(req: &Req, t: DateTime<Utc>) -> String {
    if req.has(Fault::OpStatusBadTime) {
        t.format("%m/%d/%Y %I:%M:%S %p").to_string()
    } else {
        t.to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

/// The operation resource; always 200 while the operation is known.
fn status(req: &Req, op: &Operation) -> Result<Reply, ApiError> {
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
    let status = match op.status {
        OpStatus::Running => "InProgress",
        OpStatus::Succeeded if req.has(Fault::UnknownTerminalStatus) => "Completed",
        OpStatus::Succeeded => "Succeeded",
        OpStatus::Failed => "Failed",
        OpStatus::Canceled => "Canceled",
    };
    let percent = if req.has(Fault::PercentOutOfRange) {
        150
    } else if running {
        let total = op
            .deadline
            .saturating_duration_since(op.started)
            .as_millis()
            .max(1);
        let done = req.now.saturating_duration_since(op.started).as_millis();
        (done * 100 / total).min(99) as u64
    } else {
        100
    };
    let mut m = Map::new();
    m.insert("id".into(), json!(reply::op_path(op, OpEndpoint::Status)));
    let name = if req.has(Fault::OpStatusNameMismatch) {
        op.target_name.clone()
    } else {
        op.id.clone()
    };
    m.insert("name".into(), json!(name));
    m.insert("status".into(), json!(status));
    m.insert("startTime".into(), json!(time(req, op.start_time)));
    if let Some(end) = op.end_time {
        m.insert("endTime".into(), json!(time(req, end)));
    }
    m.insert("percentComplete".into(), json!(percent));
    let show_error = match op.status {
        OpStatus::Failed => !req.has(Fault::FailedWithoutError),
        OpStatus::Canceled => !req.has(Fault::CanceledWithoutError),
        _ => false,
    };
    if show_error && let Some(e) = &op.error {
        m.insert(
            "error".into(),
            json!({"code": e.code, "message": e.message}),
        );
    }
    if op.status == OpStatus::Succeeded
        && let Some(result) = &op.result
    {
        m.insert("properties".into(), result.clone());
    }
    Ok(Reply::json(StatusCode::OK, Value::Object(m)))
}

/// The operation result: 202 while running, then what the request would have answered.
fn result(req: &Req, store: &Store, op: &Operation) -> Result<Reply, ApiError> {
    match op.status {
        OpStatus::Running if req.has(Fault::OpResult200WhileRunning) => {
            Ok(match store.resources.get(&op.target) {
                Some(r) if matches!(op.kind, OpKind::Create | OpKind::Replace | OpKind::Patch) => {
                    let state = store.shown_state(&op.target);
                    Reply::json(StatusCode::OK, render::resource(r, Some(state))).etag(&r.etag)
                }
                _ => Reply::empty(StatusCode::OK),
            })
        }
        OpStatus::Running => Ok(Reply::empty(StatusCode::ACCEPTED)
            .header(header::LOCATION, &reply::location_url(req, op))
            .header(header::RETRY_AFTER, &reply::retry_after(req.settings))),
        OpStatus::Succeeded => Ok(match op.kind {
            OpKind::Create | OpKind::Replace | OpKind::Patch => {
                let current = store.resources.get(&op.target);
                match current.or(op.snapshot.as_ref()) {
                    Some(r) => {
                        let state = if current.is_some() {
                            store.shown_state(&op.target)
                        } else {
                            r.settled
                        };
                        Reply::json(StatusCode::OK, render::resource(r, Some(state))).etag(&r.etag)
                    }
                    None => Reply::empty(StatusCode::OK),
                }
            }
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
