//! Subscription lifecycle notifications (public RPC subscription-lifecycle-api-reference.md):
//! `PUT /subscriptions/{id}?api-version=2.0` with the subscription's new state, answered 200
//! with the request as sent. While a subscription is Warned or Suspended its resources can be
//! read and deleted but not written; while it is Unregistered only read; Deleted removes
//! everything the RP holds for it.

use axum::http::StatusCode;
use serde_json::Value;

use crate::context::Req;
use crate::errors::ApiError;
use crate::faults::Fault;
use crate::reply::Reply;
use crate::store::Store;
use crate::validate;

/// The api-version of the notification (a "system" version, not a date).
pub const LIFECYCLE_API_VERSION: &str = "2.0";

/// The states a notification may carry.
const STATES: [&str; 5] = [
    "Registered",
    "Unregistered",
    "Warned",
    "Suspended",
    "Deleted",
];

/// PUT `/subscriptions/{sub}`: take the latest state, whatever came before.
pub fn notify(req: &Req, store: &mut Store, sub: &str) -> Result<Reply, ApiError> {
    let body = validate::json(&req.body).map_err(|d| ApiError::invalid_content(vec![d]))?;
    let state = body
        .get("state")
        .and_then(Value::as_str)
        .and_then(|s| STATES.iter().find(|x| x.eq_ignore_ascii_case(s.trim())))
        .ok_or_else(|| {
            ApiError::bad_request(
                "InvalidSubscriptionState",
                format!("'state' must be one of {}.", STATES.join(", ")),
            )
        })?;
    let key = sub.to_ascii_lowercase();
    if req.has(Fault::LifecycleUnknown404) && !store.knows_subscription(&key) {
        return Err(ApiError::not_found(
            "SubscriptionNotFound",
            format!("The subscription '{sub}' is not known to this resource provider."),
        ));
    }
    if *state == "Deleted" && !req.has(Fault::DeletedKeepsResources) {
        store.remove_subscription(&key);
    }
    store.subscriptions.insert(key, (*state).to_string());
    Ok(Reply::json(StatusCode::OK, body))
}

/// Writes (PUT, PATCH, POST) are refused while the subscription is Warned or Suspended, and
/// every request but a GET while it is Unregistered ("Only GETs are permitted").
pub fn writable(req: &Req, store: &Store, sub: Option<&str>, delete: bool) -> Result<(), ApiError> {
    let Some(sub) = sub else { return Ok(()) };
    let state = store.subscriptions.get(&sub.to_ascii_lowercase());
    if state.is_some_and(|s| s == "Unregistered") && !req.has(Fault::UnregisteredAllowsWrites) {
        return Err(ApiError::conflict(
            "SubscriptionNotRegistered",
            format!("The subscription '{sub}' is Unregistered: only reads are served."),
        ));
    }
    if delete {
        return Ok(());
    }
    match state {
        Some(s)
            if (s == "Warned" || s == "Suspended") && !req.has(Fault::SuspendedAllowsWrites) =>
        {
            Err(ApiError::conflict(
                "ReadOnlyDisabledSubscription",
                format!(
                    "The subscription '{sub}' is {s}: resources can be read and deleted, not written."
                ),
            ))
        }
        _ => Ok(()),
    }
}
