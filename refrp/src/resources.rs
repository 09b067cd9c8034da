//! Handlers for resources of the provider namespace: PUT, GET, PATCH, DELETE of one resource,
//! collection lists, `/skus` and the `restart` action. Each runs under the store lock.

use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use crate::context::Req;
use crate::errors::ApiError;
use crate::etag::{self, Verdict};
use crate::faults::Fault;
use crate::ids;
use crate::path::{self, CollRef, GroupRef, Kind, ResRef, Route};
use crate::render;
use crate::reply::Reply;
use crate::store::{Group, OpError, OpKind, OpSpec, Operation, Resource, State, Store};
use crate::validate::{self, PutBody};

/// GET of one resource.
pub fn get(req: &Req, store: &Store, r: &ResRef) -> Result<Reply, ApiError> {
    let cs = req.has(Fault::CaseSensitiveIds);
    require_group(store, &r.group)?;
    require_parent(store, r, cs)?;
    let key = r.key(cs);
    let res = store.resources.get(&key).ok_or_else(|| not_found(r))?;
    let hide = req.has(Fault::NoStateWhileProvisioning)
        && store
            .own_running(&key)
            .is_some_and(|op| op.kind == OpKind::Create);
    let state = (!hide).then(|| store.shown_state(&key));
    Ok(Reply::json(StatusCode::OK, render::resource(res, state)).etag(&res.etag))
}

/// PUT: create (201) or replace (200), starting an asynchronous operation.
pub fn put(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let cs = req.has(Fault::CaseSensitiveIds);
    let group_location = require_group(store, &r.group)?.location.clone();
    require_parent(store, r, cs)?;
    check_name(r)?;
    let key = r.key(cs);
    let kind = r.kind();
    let existing = store.resources.get(&key).cloned();
    let value = validate::json(&req.body);
    let checked = match &value {
        Ok(v) => validate::put_body(kind, v),
        Err(d) => Err(vec![d.clone()]),
    };
    let (body, invalid) = match checked {
        Ok(b) => (b, None),
        Err(details) if req.has(Fault::InvalidBodyAccepted) => {
            let fallback = existing
                .as_ref()
                .and_then(|e| e.location.clone())
                .unwrap_or(group_location);
            let body = validate::salvage_put(kind, value.as_ref().ok(), &fallback);
            (body, Some(details))
        }
        Err(details) => return Err(ApiError::invalid_content(details)),
    };
    let current_etag = existing.as_ref().map(|e| e.etag.as_str());
    if etag::put(&req.if_match(), &req.if_none_match(), current_etag) != Verdict::Proceed {
        return Err(ApiError::precondition_failed());
    }
    check_not_busy(req, store, &key)?;
    if let Some(echo) = &body.provisioning_state {
        let current = existing.as_ref().map(|_| store.shown_state(&key));
        let matching = current.is_some_and(|c| c.as_str().eq_ignore_ascii_case(echo.trim()));
        let refuse = req.has(Fault::EchoRejectMatching)
            || (!matching && !req.has(Fault::EchoAcceptDifferent));
        if refuse {
            let shown = current.map_or("none (the resource does not exist)", State::as_str);
            return Err(ApiError::bad_request(
                "InvalidProvisioningState",
                format!("properties.provisioningState is read-only; the current value is {shown}."),
            ));
        }
    }
    if invalid.is_none() {
        check_link_target(req, store, kind, &body.properties, None)?;
    }
    write(
        req,
        store,
        r,
        &key,
        body,
        existing,
        invalid,
        OpKind::Replace,
    )
}

/// PATCH: merge-patch of `properties`, `tags` replaced whole; never creates (unless a fault).
pub fn patch(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let cs = req.has(Fault::CaseSensitiveIds);
    let group_location = require_group(store, &r.group)?.location.clone();
    require_parent(store, r, cs)?;
    let key = r.key(cs);
    let kind = r.kind();
    let existing = store.resources.get(&key).cloned();
    let value = validate::json(&req.body).map_err(|d| ApiError::invalid_content(vec![d]))?;
    let patch = validate::patch_body(kind, &value).map_err(ApiError::invalid_content)?;
    let current_etag = existing.as_ref().map(|e| e.etag.as_str());
    let existing = match etag::patch(&req.if_match(), &req.if_none_match(), current_etag) {
        Verdict::Failed => return Err(ApiError::precondition_failed()),
        Verdict::NotFound | Verdict::NoContent if !req.has(Fault::PatchCreates) => {
            return Err(not_found(r));
        }
        _ => existing,
    };
    check_not_busy(req, store, &key)?;
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
                    .then(|| patch.location.clone().unwrap_or(group_location)),
                tags: patch.tags.flatten(),
                properties,
                provisioning_state: None,
            }
        }
    };
    write(req, store, r, &key, body, existing, None, OpKind::Patch)
}

/// Stores the new resource state and starts its operation; answers 201/200 with the body.
#[allow(clippy::too_many_arguments)]
fn write(
    req: &Req,
    store: &mut Store,
    r: &ResRef,
    key: &str,
    body: PutBody,
    existing: Option<Resource>,
    invalid: Option<Vec<crate::errors::Detail>>,
    update_kind: OpKind,
) -> Result<Reply, ApiError> {
    let cs = req.has(Fault::CaseSensitiveIds);
    let kind = r.kind();
    let creating = existing.is_none();
    let etag = match &existing {
        Some(e) if req.has(Fault::EtagUnchangedOnUpdate) => e.etag.clone(),
        _ => ids::etag(),
    };
    let mut system_data = existing
        .as_ref()
        .map(|e| e.system_data.clone())
        .unwrap_or_default();
    if let Some(sd) = req.system_data() {
        system_data.extend(sd);
    }
    let op_location = match &body.location {
        Some(loc) if kind.tracked() => validate::normalize_location(loc),
        _ => root_location(store, r, cs),
    };
    let fail_with = if let Some(details) = invalid {
        let what = details
            .iter()
            .map(|d| d.message.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        Some(OpError::new(
            "InvalidRequestContent",
            format!("The request content is invalid: {what}"),
        ))
    } else if body.properties.get("simulateFailure") == Some(&Value::Bool(true)) {
        Some(OpError::new(
            "ProvisioningFailed",
            format!(
                "Provisioning of '{}' failed because properties.simulateFailure is set.",
                r.name()
            ),
        ))
    } else {
        None
    };
    let res = Resource {
        id: existing.as_ref().map_or_else(|| r.id(), |e| e.id.clone()),
        name: existing
            .as_ref()
            .map_or_else(|| r.name().to_string(), |e| e.name.clone()),
        type_name: r.type_name(),
        kind,
        location: if kind.tracked() { body.location } else { None },
        tags: if kind.tracked() && !req.has(Fault::TagsDropped) {
            body.tags
        } else {
            None
        },
        properties: body.properties,
        settled: existing.as_ref().map_or(State::Succeeded, |e| e.settled),
        etag: etag.clone(),
        system_data,
        restart_count: existing.as_ref().map_or(0, |e| e.restart_count),
        op_location: op_location.clone(),
    };
    store.resources.insert(key.to_string(), res.clone());
    let op_kind = if creating {
        OpKind::Create
    } else {
        update_kind
    };
    let op_id = store.start(
        OpSpec {
            kind: op_kind,
            target: key.to_string(),
            target_name: res.name.clone(),
            sub: r.group.sub.clone(),
            location: op_location,
            fail_with,
            tenant: req.tenant(),
            client: req.client(),
        },
        req.now,
    );
    let op = started(store, &op_id)?;
    let is_put = update_kind == OpKind::Replace;
    let state = if is_put && req.has(Fault::TerminalStateInPutResponse) {
        State::Succeeded
    } else {
        store.shown_state(key)
    };
    let status = if creating || (is_put && req.has(Fault::ReplaceAnswers201)) {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(Reply::json(status, render::resource(&res, Some(state)))
        .etag(&etag)
        .async_headers(req, op, true))
}

/// DELETE: 202 and an operation; 204 when the resource does not exist.
pub fn delete(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let cs = req.has(Fault::CaseSensitiveIds);
    require_group(store, &r.group)?;
    let key = r.key(cs);
    let existing = store.resources.get(&key).cloned();
    match etag::delete(&req.if_match(), existing.as_ref().map(|e| e.etag.as_str())) {
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
    let location = !req.has(Fault::DeleteNoLocation);
    if let Some(op) = store
        .own_running(&key)
        .filter(|op| op.kind == OpKind::Delete)
    {
        // A repeated DELETE joins the one already running.
        return Ok(Reply::empty(StatusCode::ACCEPTED).async_headers(req, op, location));
    }
    if r.kind() == Kind::Widget && widget_in_use(store, &key, cs) {
        let message = format!(
            "The widget '{}' is referenced by at least one link; delete the links first.",
            r.name()
        );
        return Err(if req.has(Fault::DependencyDelete500) {
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
        });
    }
    store.cancel_for_delete(&key);
    let op_location = existing.map_or_else(|| root_location(store, r, cs), |e| e.op_location);
    let op_id = store.start(
        OpSpec {
            kind: OpKind::Delete,
            target: key,
            target_name: r.name().to_string(),
            sub: r.group.sub.clone(),
            location: op_location,
            fail_with: None,
            tenant: req.tenant(),
            client: req.client(),
        },
        req.now,
    );
    let op = started(store, &op_id)?;
    Ok(Reply::empty(StatusCode::ACCEPTED).async_headers(req, op, location))
}

/// GET of a collection, paged with an absolute `nextLink`.
pub fn list(req: &Req, store: &Store, c: &CollRef) -> Result<Reply, ApiError> {
    let cs = req.has(Fault::CaseSensitiveIds);
    require_group(store, &c.group)?;
    if let Some(parent) = &c.parent
        && !store.resources.contains_key(&parent.key(cs))
    {
        return Err(parent_not_found(parent));
    }
    let prefix = c.key_prefix(cs);
    let after = match req.query("$skipToken") {
        None => None,
        Some(t) => Some(decode_token(t).ok_or_else(|| {
            ApiError::bad_request("InvalidSkipToken", "The $skipToken is not valid.")
        })?),
    };
    let page_size = req.settings.page_size.max(1);
    let mut items: Vec<(&String, &Resource)> = store
        .children(&prefix)
        .filter(|(k, _)| after.as_deref().is_none_or(|a| &k[prefix.len()..] > a))
        .take(page_size + 1)
        .collect();
    let more = items.len() > page_size;
    items.truncate(page_size);
    let value: Vec<Value> = items
        .iter()
        .map(|(k, r)| render::resource(r, Some(store.shown_state(k))))
        .collect();
    let mut body = Map::new();
    body.insert("value".into(), Value::Array(value));
    if more && let Some((k, _)) = items.last() {
        let pq = format!(
            "{}?api-version={}&$skipToken={}",
            req.path,
            req.api_version,
            encode_token(&k[prefix.len()..])
        );
        let link = if req.has(Fault::RelativeNextLink) {
            pq
        } else {
            req.absolute(&pq)
        };
        body.insert("nextLink".into(), json!(link));
    }
    Ok(Reply::json(StatusCode::OK, Value::Object(body)))
}

/// GET `{resource}/skus`.
pub fn skus(req: &Req, store: &Store, r: &ResRef) -> Result<Reply, ApiError> {
    let cs = req.has(Fault::CaseSensitiveIds);
    require_group(store, &r.group)?;
    require_parent(store, r, cs)?;
    if !store.resources.contains_key(&r.key(cs)) {
        return Err(not_found(r));
    }
    match r.kind() {
        Kind::Widget => Ok(Reply::json(StatusCode::OK, render::widget_skus())),
        _ if req.has(Fault::EmptySkus404) => Err(ApiError::not_found(
            "NotFound",
            "No SKUs are available for this resource.",
        )),
        _ => Ok(Reply::json(StatusCode::OK, json!({"value": []}))),
    }
}

/// POST `{widget}/restart`: a long-running action.
pub fn restart(req: &Req, store: &mut Store, r: &ResRef) -> Result<Reply, ApiError> {
    let cs = req.has(Fault::CaseSensitiveIds);
    require_group(store, &r.group)?;
    let key = r.key(cs);
    let res = store.resources.get(&key).ok_or_else(|| not_found(r))?;
    let (name, location) = (res.name.clone(), res.op_location.clone());
    check_not_busy(req, store, &key)?;
    let op_id = store.start(
        OpSpec {
            kind: OpKind::Restart,
            target: key,
            target_name: name,
            sub: r.group.sub.clone(),
            location,
            fail_with: None,
            tenant: req.tenant(),
            client: req.client(),
        },
        req.now,
    );
    let op = started(store, &op_id)?;
    Ok(Reply::empty(StatusCode::ACCEPTED).async_headers(req, op, true))
}

fn started<'s>(store: &'s Store, id: &str) -> Result<&'s Operation, ApiError> {
    store.ops.get(id).ok_or_else(|| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalServerError",
            "The operation record was lost.",
        )
    })
}

pub fn require_group<'s>(store: &'s Store, g: &GroupRef) -> Result<&'s Group, ApiError> {
    store.groups.get(&g.key()).ok_or_else(|| {
        ApiError::not_found(
            "ResourceGroupNotFound",
            format!("Resource group '{}' could not be found.", g.rg),
        )
    })
}

fn require_parent(store: &Store, r: &ResRef, cs: bool) -> Result<(), ApiError> {
    match r.parent() {
        Some(p) if !store.resources.contains_key(&p.key(cs)) => Err(parent_not_found(&p)),
        _ => Ok(()),
    }
}

fn parent_not_found(p: &ResRef) -> ApiError {
    ApiError::not_found(
        "ParentResourceNotFound",
        format!(
            "The parent resource '{}' of type '{}' could not be found.",
            p.name(),
            p.type_name()
        ),
    )
}

fn not_found(r: &ResRef) -> ApiError {
    ApiError::not_found(
        "ResourceNotFound",
        format!(
            "The resource '{}' of type '{}' could not be found.",
            r.name(),
            r.type_name()
        ),
    )
}

fn check_name(r: &ResRef) -> Result<(), ApiError> {
    if validate::name(r.name()) {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "InvalidResourceName",
            "Resource names have 1 to 90 letters, digits, '-', '_', '.', '(' or ')', and do not end in '.'.",
        ))
    }
}

fn check_not_busy(req: &Req, store: &Store, key: &str) -> Result<(), ApiError> {
    if !req.has(Fault::AllowConcurrentWrite) && store.busy(key) {
        Err(ApiError::conflict(
            "AnotherOperationInProgress",
            "Another operation is in progress on this resource or a related one; retry when it has finished.",
        ))
    } else {
        Ok(())
    }
}

/// The operation location of a proxy: its top-level widget's.
fn root_location(store: &Store, r: &ResRef, cs: bool) -> String {
    let root = ResRef {
        group: r.group.clone(),
        chain: r.chain.iter().take(1).cloned().collect(),
    };
    store
        .resources
        .get(&root.key(cs))
        .map_or_else(|| "global".to_string(), |w| w.op_location.clone())
}

/// The store key of the widget a `widgetId` names, if it names one.
fn widget_key(widget_id: &str, cs: bool) -> Option<String> {
    match path::parse(widget_id.trim()) {
        Some(Route::Resource(w)) if w.kind() == Kind::Widget => Some(w.key(cs)),
        _ => None,
    }
}

/// A link's `widgetId` must name an existing widget that is not being deleted. Unchanged
/// references (PATCH) are not re-checked.
fn check_link_target(
    req: &Req,
    store: &Store,
    kind: Kind,
    props: &Map<String, Value>,
    old: Option<&str>,
) -> Result<(), ApiError> {
    if kind != Kind::Link {
        return Ok(());
    }
    let Some(id) = props.get("widgetId").and_then(Value::as_str) else {
        return Ok(());
    };
    if old.is_some_and(|o| o.eq_ignore_ascii_case(id)) {
        return Ok(());
    }
    let cs = req.has(Fault::CaseSensitiveIds);
    let ok = widget_key(id, cs).is_some_and(|k| {
        store.resources.contains_key(&k) && store.shown_state(&k) != State::Deleting
    });
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "InvalidReference",
            format!("properties.widgetId '{id}' does not name an existing widget."),
        ))
    }
}

/// Whether a link that is not already being deleted references the widget.
fn widget_in_use(store: &Store, key: &str, cs: bool) -> bool {
    store.resources.iter().any(|(link_key, r)| {
        r.kind == Kind::Link
            && store.shown_state(link_key) != State::Deleting
            && r.properties
                .get("widgetId")
                .and_then(Value::as_str)
                .and_then(|id| widget_key(id, cs))
                .is_some_and(|k| k == key)
    })
}

fn encode_token(name: &str) -> String {
    name.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_token(token: &str) -> Option<String> {
    if !token.len().is_multiple_of(2) || !token.is_ascii() {
        return None;
    }
    let bytes = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&token[i..i + 2], 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_tokens_round_trip() {
        assert_eq!(decode_token(&encode_token("w-1")).as_deref(), Some("w-1"));
        assert_eq!(decode_token("zz"), None);
        assert_eq!(decode_token("abc"), None);
        assert_eq!(decode_token("é1"), None);
    }

    #[test]
    fn widget_ids_resolve() {
        let id = "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Contoso/widgets/W";
        assert_eq!(
            widget_key(id, false).as_deref(),
            Some("/subscriptions/s/resourcegroups/rg/providers/microsoft.contoso/widgets/w")
        );
        assert_eq!(widget_key("/nope", false), None);
    }
}
