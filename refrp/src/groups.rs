//! Resource groups: synchronous PUT, GET and DELETE. Deleting a group removes everything in
//! it and cancels the operations running there.

use axum::http::StatusCode;
use serde_json::Value;

use crate::context::Req;
use crate::errors::{ApiError, Detail};
use crate::path::GroupRef;
use crate::render;
use crate::reply::Reply;
use crate::store::{Group, Store};
use crate::validate;

/// PUT `{"location", "tags"?}` → 201 created / 200 updated.
pub fn put(req: &Req, store: &mut Store, g: &GroupRef) -> Result<Reply, ApiError> {
    if !validate::name(&g.rg) || !validate::name(&g.sub) {
        return Err(ApiError::bad_request(
            "InvalidResourceGroupName",
            "Resource group names have 1 to 90 letters, digits, '-', '_', '.', '(' or ')', and do not end in '.'.",
        ));
    }
    let value = validate::json(&req.body).map_err(|d| ApiError::invalid_content(vec![d]))?;
    let mut errs = Vec::new();
    let location = match value.get("location") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => {
            errs.push(Detail::new(
                "MissingLocation",
                "location",
                "'location' is required and must be a non-empty string.",
            ));
            String::new()
        }
    };
    let tags = match value.get("tags") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) if m.values().all(Value::is_string) => Some(m.clone()),
        Some(_) => {
            errs.push(Detail::new(
                "InvalidType",
                "tags",
                "'tags' must be an object of strings.",
            ));
            None
        }
    };
    if !value.is_object() {
        errs = vec![Detail::new(
            "InvalidType",
            "",
            "The request body must be a JSON object.",
        )];
    }
    if !errs.is_empty() {
        return Err(ApiError::invalid_content(errs));
    }
    let key = g.key();
    let (status, id, name) = match store.groups.get(&key) {
        Some(old) => (StatusCode::OK, old.id.clone(), old.name.clone()),
        None => (StatusCode::CREATED, g.id(), g.rg.clone()),
    };
    let group = Group {
        id,
        name,
        location,
        tags,
    };
    let body = render::group(&group);
    store.groups.insert(key, group);
    Ok(Reply::json(status, body))
}

pub fn get(store: &Store, g: &GroupRef) -> Result<Reply, ApiError> {
    let group = crate::resources::require_group(store, g)?;
    Ok(Reply::json(StatusCode::OK, render::group(group)))
}

/// DELETE → 200 when the group existed, 204 when it did not.
pub fn delete(store: &mut Store, g: &GroupRef) -> Reply {
    let key = g.key();
    if store.groups.contains_key(&key) {
        store.remove_group(&key);
        Reply::empty(StatusCode::OK)
    } else {
        Reply::empty(StatusCode::NO_CONTENT)
    }
}
