//! Handlers for resources of the provider namespaces: PUT, GET, PATCH, DELETE of one
//! resource (asynchronous types start an operation; the others answer at once), collection
//! lists, `/skus` and the `restart` action. Each runs under the store lock.

mod checks;
mod list;
mod write;

use axum::http::StatusCode;
use serde_json::Value;

use crate::context::Req;
use crate::errors::ApiError;
use crate::etag::Verdict;
use crate::faults::Fault;
use crate::lro::{self, Answer};
use crate::path::{Kind, ResRef};
use crate::render;
use crate::reply::Reply;
use crate::store::{OpKind, OpSpec, Resource, Store};
use crate::validate::{self, PutBody};
use crate::variants::Variant;

pub use checks::{busy_error, require_group};
pub use list::{list, list_across, skus};

use checks::{
    check_link_target, check_name, check_not_busy, not_found, require_parent, require_scope,
    started, widget_in_use,
};
use write::{Write, write};

/// GET of one resource. A GET counts as an observation of the operations on the resource
/// that gave no operation URL (hold-open gate).
pub fn get(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let fold = req.fold();
    require_scope(store, &r.scope, fold)?;
    let key = r.key(fold);
    // Under `parent-delete-orphans` a child left behind by its deleted parent stays readable.
    if !(req.has(Fault::ParentDeleteOrphans) && store.visible(&key)) {
        require_parent(store, r, fold)?;
    }
    if !store.visible(&key) {
        return Err(not_found(r));
    }
    store.observe_resource(&key);
    if req.has(Fault::IdRecased)
        && let Some(res) = store.resources.get_mut(&key)
    {
        res.id = r.id();
        res.name = r.name().to_string();
    }
    let res = store.resources.get(&key).ok_or_else(|| not_found(r))?;
    let hide = req.has(Fault::NoStateWhileProvisioning)
        && store
            .own_running(&key)
            .is_some_and(|op| op.kind == OpKind::Create);
    let state = (!hide).then(|| store.shown_state(&key));
    Ok(Reply::json(StatusCode::OK, render::resource(res, state, req.settings)).etag(&res.etag))
}

/// PUT: create (201) or replace (200); asynchronous types start an operation.
pub fn put(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let fold = req.fold();
    let fallback_location = require_scope(store, &r.scope, fold)?;
    require_parent(store, r, fold)?;
    check_name(r)?;
    let key = r.key(fold);
    let kind = r.kind();
    // A resource hidden by its running create (202) does not exist yet for the client.
    let existing = store
        .resources
        .get(&key)
        .filter(|_| store.visible(&key))
        .cloned();
    let value = validate::json(&req.body);
    let checked = match &value {
        Ok(v) => validate::put_body(kind, v),
        Err(d) => Err(vec![d.clone()]),
    };
    let (mut body, invalid) = match checked {
        Ok(b) => (b, None),
        Err(details) if req.has(Fault::InvalidBodyAccepted) => {
            let fallback = existing
                .as_ref()
                .and_then(|e| e.location.clone())
                .unwrap_or(fallback_location);
            let body = validate::salvage_put(kind, value.as_ref().ok(), &fallback);
            (body, Some(details))
        }
        Err(details) => return Err(ApiError::invalid_content(details)),
    };
    if existing.is_none()
        && req.has(Fault::LocationCaseSensitive)
        && let Some(l) = body.location.as_deref()
        && l != validate::normalize_location(l)
    {
        return Err(ApiError::bad_request(
            "LocationNotAvailableForResourceType",
            format!(
                "The location '{l}' is not available for resource type '{}'.",
                r.type_name()
            ),
        ));
    }
    if !req.has(Fault::PutMovesLocation) {
        keep_location(req, existing.as_ref(), &mut body.location)?;
    }
    tag_count(req, body.tags.as_ref())?;
    // The fault: the body's `name` renames an existing resource in every later answer.
    let existing = match (existing, value.as_ref().ok().and_then(|v| v.get("name"))) {
        (Some(mut e), Some(Value::String(n))) if req.has(Fault::NameFromBody) && *n != e.name => {
            e.id = match e.id.rsplit_once('/') {
                Some((head, _)) => format!("{head}/{n}"),
                None => e.id.clone(),
            };
            e.name = n.clone();
            Some(e)
        }
        (e, _) => e,
    };
    if kind == Kind::Configuration {
        for (k, v) in validate::configuration_defaults() {
            body.properties.entry(k).or_insert(v);
        }
    }
    let current_etag = existing.as_ref().map(|e| e.etag.as_str());
    if req.pre().put(current_etag) != Verdict::Proceed {
        return Err(ApiError::precondition_failed());
    }
    if !req.has(Fault::PutDuringOperationAccepted) {
        check_not_busy(req, store, &key)?;
    }
    if let Some(echo) = &body.provisioning_state {
        check_echo(req, store, &key, kind, existing.is_some(), echo)?;
    }
    if invalid.is_none() {
        check_link_target(req, store, kind, &body.properties, None)?;
    }
    let w = Write {
        key,
        body,
        existing,
        invalid,
        method: Answer::PutReplace,
    };
    write(req, store, r, w)
}

/// The geo region of a resource never changes after it is created (public RPC § Put Resource,
/// § Patch Resource): another location is refused, or kept as it was under
/// `location-change-ignored`. The same region spelled otherwise (`East US`) is no change.
fn keep_location(
    req: &Req,
    existing: Option<&Resource>,
    wanted: &mut Option<String>,
) -> Result<(), ApiError> {
    let (Some(old), Some(new)) = (existing.and_then(|e| e.location.as_ref()), wanted.as_ref())
    else {
        return Ok(());
    };
    if validate::normalize_location(old) == validate::normalize_location(new) {
        return Ok(());
    }
    if req.is(Variant::LocationChangeIgnored) {
        *wanted = Some(old.clone());
        return Ok(());
    }
    Err(ApiError::bad_request(
        "InvalidResourceLocation",
        format!(
            "The resource already exists in location '{old}'; its location cannot be changed to '{new}'."
        ),
    ))
}

/// The `tags-limit-15` fault: more than 15 tags refused (ARM allows 50).
fn tag_count(req: &Req, tags: Option<&serde_json::Map<String, Value>>) -> Result<(), ApiError> {
    match tags {
        Some(t) if req.has(Fault::TagsLimit15) && t.len() > 15 => Err(ApiError::bad_request(
            "InvalidTagCount",
            format!("{} tags were given; at most 15 are allowed.", t.len()),
        )),
        _ => Ok(()),
    }
}

/// A PUT body's `properties.provisioningState` must equal the current value (PSTATE-03/04).
fn check_echo(
    req: &Req,
    store: &Store,
    key: &str,
    kind: Kind,
    exists: bool,
    echo: &str,
) -> Result<(), ApiError> {
    let current = exists.then(|| store.shown_state(key));
    let label = current.map(|c| render::state_label(c, kind, req.settings));
    let matching = label.is_some_and(|c| c.eq_ignore_ascii_case(echo.trim()));
    let refuse =
        req.has(Fault::EchoRejectMatching) || (!matching && !req.has(Fault::EchoAcceptDifferent));
    if refuse {
        let shown = label.unwrap_or("none (the resource does not exist)");
        return Err(ApiError::bad_request(
            "InvalidProvisioningState",
            format!("properties.provisioningState is read-only; the current value is {shown}."),
        ));
    }
    Ok(())
}

/// PATCH: merge-patch of `properties`, `tags` replaced whole; never creates (unless a fault).
pub fn patch(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let fold = req.fold();
    let fallback_location = require_scope(store, &r.scope, fold)?;
    require_parent(store, r, fold)?;
    let key = r.key(fold);
    let kind = r.kind();
    let existing = store
        .resources
        .get(&key)
        .filter(|_| store.visible(&key))
        .cloned();
    if existing.is_none() && store.resources.contains_key(&key) {
        // Hidden by its running operation (a create answered 202): one operation at a time.
        check_not_busy(req, store, &key)?;
    }
    let value = validate::json(&req.body).map_err(|d| ApiError::invalid_content(vec![d]))?;
    let patch = validate::patch_body(kind, &value).map_err(ApiError::invalid_content)?;
    let current_etag = existing.as_ref().map(|e| e.etag.as_str());
    let existing = match req.pre().patch(current_etag) {
        Verdict::Failed => return Err(ApiError::precondition_failed()),
        Verdict::NotFound | Verdict::NoContent if !req.has(Fault::PatchCreates) => {
            return Err(not_found(r));
        }
        _ => existing,
    };
    check_not_busy(req, store, &key)?;
    let mut patch = patch;
    if !req.has(Fault::PatchMovesLocation) {
        keep_location(req, existing.as_ref(), &mut patch.location)?;
    }
    tag_count(req, patch.tags.as_ref().and_then(Option::as_ref))?;
    let mut properties = existing
        .as_ref()
        .map(|e| e.properties.clone())
        .unwrap_or_default();
    if let Some(p) = &patch.properties {
        validate::merge_patch(&mut properties, p);
    }
    validate::properties(kind, &properties).map_err(ApiError::invalid_content)?;
    let old_target = existing
        .as_ref()
        .and_then(|e| e.properties.get("widgetId"))
        .and_then(Value::as_str);
    check_link_target(req, store, kind, &properties, old_target)?;
    let body = match &existing {
        Some(e) => PutBody {
            location: if kind.tracked() {
                patch.location.clone().or_else(|| e.location.clone())
            } else {
                None
            },
            tags: match patch.tags {
                // The public contract: the sent map replaces the old one whole.
                Some(Some(t)) if req.has(Fault::PatchMergesTags) => {
                    let mut merged = e.tags.clone().unwrap_or_default();
                    merged.extend(t);
                    Some(merged)
                }
                Some(t) => t,
                None => e.tags.clone(),
            },
            properties,
            provisioning_state: None,
        },
        // Only under `patch-creates`: the PATCH body becomes a create.
        None => {
            check_name(r)?;
            PutBody {
                location: kind
                    .tracked()
                    .then(|| patch.location.clone().unwrap_or(fallback_location)),
                tags: patch.tags.flatten(),
                properties,
                provisioning_state: None,
            }
        }
    };
    let w = Write {
        key,
        body,
        existing,
        invalid: None,
        method: Answer::Patch,
    };
    write(req, store, r, w)
}

/// DELETE: 202 and an operation for asynchronous types (200 at once for the others and under
/// `delete-sync-200`); 204 when the resource does not exist.
pub fn delete(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let fold = req.fold();
    if let Some(g) = r.group() {
        require_group(store, g)?;
    }
    let key = r.key(fold);
    let kind = r.kind();
    if store
        .own_running(&key)
        .is_some_and(|op| op.hidden && op.kind == OpKind::Create)
    {
        // A create answered 202 has not made the resource visible: it is superseded, and
        // the resource never existed for the client.
        store.cancel_for_delete(&key);
        store.remove_subtree(&key, kind);
        return Ok(Reply::empty(StatusCode::NO_CONTENT));
    }
    let existing = store.resources.get(&key).cloned();
    match req.pre().delete(existing.as_ref().map(|e| e.etag.as_str())) {
        Verdict::NoContent | Verdict::NotFound => {
            return if req.has(Fault::DeleteMissing404) {
                Err(not_found(r))
            } else {
                Ok(Reply::empty(StatusCode::NO_CONTENT))
            };
        }
        Verdict::Failed => return Err(ApiError::precondition_failed()),
        Verdict::Proceed => {}
    }
    let plan = lro::plan(req.settings, Answer::Delete);
    if let Some(op) = store
        .own_running(&key)
        .filter(|op| op.kind == OpKind::Delete)
    {
        // A repeated DELETE joins the one already running.
        return Ok(Reply::empty(StatusCode::ACCEPTED).async_headers(req, op, plan));
    }
    if kind == Kind::Widget && widget_in_use(store, &key, fold) {
        return Err(in_use(req, r));
    }
    store.cancel_for_delete(&key);
    if kind.nested() && req.has(Fault::ChildDeleteSync204) {
        store.remove_subtree(&key, kind);
        return Ok(Reply::empty(StatusCode::NO_CONTENT));
    }
    let sync = !kind.asynchronous()
        || (req.is(Variant::DeleteSync200) && !req.has(Fault::DeleteNoLocation));
    if sync {
        store.remove_subtree(&key, kind);
        return Ok(Reply::empty(StatusCode::OK));
    }
    let (name, location, id) = existing.map_or_else(
        || (r.name().to_string(), "global".to_string(), r.id()),
        |e| (e.name, e.op_location, e.id),
    );
    let op_id = store.start(
        OpSpec {
            kind: OpKind::Delete,
            target: key,
            target_name: name,
            target_kind: kind,
            target_id: id,
            origin: req.path.to_string(),
            sub: r.sub().unwrap_or_default().to_string(),
            location,
            fail_with: None,
            tenant: req.tenant(),
            client: req.client(),
            resource_reads: !plan.aao && !plan.location,
            hidden: false,
        },
        req.now,
    );
    let op = started(store, &op_id)?;
    Ok(Reply::empty(StatusCode::ACCEPTED).async_headers(req, op, plan))
}

/// 409 `ResourceInUse` (500 under `dependency-delete-500`) for a widget a link references.
fn in_use(req: &Req, r: &ResRef) -> ApiError {
    let message = format!(
        "The widget '{}' is referenced by at least one link; delete the links first.",
        r.name()
    );
    if req.has(Fault::DependencyDelete500) {
        ApiError {
            retry_after: true,
            ..ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalServerError",
                message,
            )
        }
    } else {
        ApiError::conflict("ResourceInUse", message)
    }
}

/// POST `{widget}/restart`: a long-running action.
pub fn restart(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let fold = req.fold();
    require_scope(store, &r.scope, fold)?;
    let key = r.key(fold);
    if !store.visible(&key) {
        return Err(not_found(r));
    }
    let res = store.resources.get(&key).ok_or_else(|| not_found(r))?;
    let (name, location, id) = (res.name.clone(), res.op_location.clone(), res.id.clone());
    check_not_busy(req, store, &key)?;
    let plan = lro::plan(req.settings, Answer::Action);
    let op_id = store.start(
        OpSpec {
            kind: OpKind::Restart,
            target: key,
            target_name: name,
            target_kind: r.kind(),
            target_id: id,
            origin: req.path.to_string(),
            sub: r.sub().unwrap_or_default().to_string(),
            location,
            fail_with: None,
            tenant: req.tenant(),
            client: req.client(),
            resource_reads: false,
            hidden: false,
        },
        req.now,
    );
    let op = started(store, &op_id)?;
    Ok(Reply::empty(StatusCode::ACCEPTED).async_headers(req, op, plan))
}
