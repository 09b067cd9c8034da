//! Moving resources between resource groups (public RPC resource-api-reference.md § Move
//! Resource): `POST {group}/moveResources` with `targetResourceGroup` and the ids of top-level
//! resources of the group; each moves with everything under it, synchronously (200). A group
//! or resource that does not exist answers 404; a target that is the source, or a resource of
//! another group, 400; a resource with an operation running, 409.

use axum::http::StatusCode;
use serde_json::Value;

use crate::context::Req;
use crate::errors::ApiError;
use crate::faults::Fault;
use crate::path::{self, GroupRef, Route};
use crate::reply::Reply;
use crate::resources::require_group;
use crate::store::Store;
use crate::validate;

/// The body's target group, parsed.
fn target_group(body: &Value) -> Result<GroupRef, ApiError> {
    let bad = || {
        ApiError::bad_request(
            "InvalidTargetResourceGroup",
            "'targetResourceGroup' must be a resource group id: /subscriptions/{id}/resourceGroups/{name}.",
        )
    };
    let id = body
        .get("targetResourceGroup")
        .and_then(Value::as_str)
        .ok_or_else(bad)?;
    match path::parse(id, false) {
        Some(Route::Group(g)) => Ok(g),
        _ => Err(bad()),
    }
}

pub fn move_resources(req: &Req, store: &mut Store, source: &GroupRef) -> Result<Reply, ApiError> {
    require_group(store, source)?;
    let body = validate::json(&req.body).map_err(|d| ApiError::invalid_content(vec![d]))?;
    let target = target_group(&body)?;
    if target.key() == source.key() {
        return Err(ApiError::bad_request(
            "InvalidTargetResourceGroup",
            "The target resource group is the source resource group.",
        ));
    }
    require_group(store, &target)?;
    let ids: Vec<&str> = body
        .get("resources")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if ids.is_empty() {
        return Err(ApiError::bad_request(
            "InvalidMoveRequest",
            "'resources' must list the ids of the resources to move.",
        ));
    }
    let fold = req.fold();
    let mut keys = Vec::new();
    for id in &ids {
        let r = match path::parse(id, false) {
            Some(Route::Resource(r))
                if r.chain.len() == 1
                    && matches!(&r.scope, path::Scope::Group(g) if g.key() == source.key()) =>
            {
                r
            }
            _ => {
                return Err(ApiError::bad_request(
                    "InvalidMoveRequest",
                    format!(
                        "'{id}' is not a top-level resource of resource group '{}'.",
                        source.rg
                    ),
                ));
            }
        };
        let key = r.key(fold);
        if !store.visible(&key) {
            if req.has(Fault::MoveMissing200) {
                return Ok(Reply::empty(StatusCode::OK));
            }
            return Err(ApiError::not_found(
                "ResourceNotFound",
                format!("The resource '{id}' was not found."),
            ));
        }
        if store.busy(&key) {
            return Err(crate::resources::busy_error());
        }
        keys.push(key);
    }
    let copy = req.has(Fault::MoveLeavesSource);
    for key in keys {
        store.regroup(&key, &source.key(), &target, copy);
    }
    Ok(Reply::empty(StatusCode::OK))
}
