//! The checks and lookups the resource handlers share: scope, parent, name, busy, link
//! references, and the errors they answer.

use axum::http::StatusCode;
use serde_json::{Map, Value};

use crate::context::Req;
use crate::errors::ApiError;
use crate::faults::Fault;
use crate::path::{self, Fold, GroupRef, Kind, ResRef, Route, Scope};
use crate::store::{Group, Operation, State, Store};
use crate::validate;

pub fn require_group<'s>(store: &'s Store, g: &GroupRef) -> Result<&'s Group, ApiError> {
    store.groups.get(&g.key()).ok_or_else(|| {
        ApiError::not_found(
            "ResourceGroupNotFound",
            format!("Resource group '{}' could not be found.", g.rg),
        )
    })
}

/// The scope of `r` must exist: its resource group, and for an extension resource the
/// resource it extends. Answers the location a tracked resource falls back to (the group's).
pub fn require_scope(store: &Store, scope: &Scope, fold: Fold) -> Result<String, ApiError> {
    let location = match scope.group() {
        Some(g) => require_group(store, g)?.location.clone(),
        None => "global".to_string(),
    };
    if let Scope::Extension(w) = scope
        && !store.visible(&w.key(fold))
    {
        return Err(parent_not_found(w));
    }
    Ok(location)
}

pub fn require_parent(store: &Store, r: &ResRef, fold: Fold) -> Result<(), ApiError> {
    match r.parent() {
        Some(p) if !store.visible(&p.key(fold)) => Err(parent_not_found(&p)),
        _ => Ok(()),
    }
}

pub fn parent_not_found(p: &ResRef) -> ApiError {
    ApiError::not_found(
        "ParentResourceNotFound",
        format!(
            "The parent resource '{}' of type '{}' could not be found.",
            p.name(),
            p.type_name()
        ),
    )
}

pub fn not_found(r: &ResRef) -> ApiError {
    ApiError::not_found(
        "ResourceNotFound",
        format!(
            "The resource '{}' of type '{}' could not be found.",
            r.name(),
            r.type_name()
        ),
    )
}

/// The name a PUT may create: the usual name rules, and `default` only for a singleton.
pub fn check_name(r: &ResRef) -> Result<(), ApiError> {
    if r.kind() == Kind::Configuration && !path::is_singleton_name(r.name()) {
        return Err(ApiError::bad_request(
            "InvalidResourceName",
            format!(
                "'{}' is not a configuration name: a widget has exactly one configuration, named '{}'.",
                r.name(),
                path::SINGLETON_NAME
            ),
        ));
    }
    if validate::name(r.name()) {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "InvalidResourceName",
            "Resource names have 1 to 90 letters, digits, '-', '_', '.', '(' or ')', and do not end in '.'.",
        ))
    }
}

pub fn busy_error() -> ApiError {
    ApiError::conflict(
        "AnotherOperationInProgress",
        "Another operation is in progress on this resource or a related one; retry when it has finished.",
    )
}

pub fn check_not_busy(req: &Req, store: &Store, key: &str) -> Result<(), ApiError> {
    if !req.has(Fault::AllowConcurrentWrite) && store.busy(key) {
        Err(busy_error())
    } else {
        Ok(())
    }
}

pub fn started<'s>(store: &'s Store, id: &str) -> Result<&'s Operation, ApiError> {
    store.ops.get(id).ok_or_else(|| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalServerError",
            "The operation record was lost.",
        )
    })
}

/// The operation location of `r`: a tracked resource's own, a nested one's top-level
/// widget's, a location-based one's location, else `global`.
pub fn op_location(store: &Store, r: &ResRef, location: Option<&str>, fold: Fold) -> String {
    if let Some(loc) = location {
        return validate::normalize_location(loc);
    }
    if r.chain.len() > 1
        && let Some(root) = store.resources.get(&r.root().key(fold))
    {
        return root.op_location.clone();
    }
    match &r.scope {
        Scope::Location { location, .. } => validate::normalize_location(location),
        _ => "global".to_string(),
    }
}

/// The store key of the widget a `widgetId` names, if it names one.
pub fn widget_key(widget_id: &str, fold: Fold) -> Option<String> {
    match path::parse(widget_id.trim(), false) {
        Some(Route::Resource(w)) if w.kind() == Kind::Widget => Some(w.key(fold)),
        _ => None,
    }
}

/// A link's `widgetId` must name an existing widget that is not being deleted. Unchanged
/// references (PATCH) are not re-checked.
pub fn check_link_target(
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
    let ok = widget_key(id, req.fold())
        .is_some_and(|k| store.visible(&k) && store.shown_state(&k) != State::Deleting);
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
pub fn widget_in_use(store: &Store, key: &str, fold: Fold) -> bool {
    store.resources.iter().any(|(link_key, r)| {
        r.kind == Kind::Link
            && store.shown_state(link_key) != State::Deleting
            && r.properties
                .get("widgetId")
                .and_then(Value::as_str)
                .and_then(|id| widget_key(id, fold))
                .is_some_and(|k| k == key)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widget_ids_resolve() {
        let id = "/subscriptions/S/resourceGroups/RG/providers/Microsoft.Contoso/widgets/W";
        assert_eq!(
            widget_key(id, Fold::default()).as_deref(),
            Some("/subscriptions/s/resourcegroups/rg/providers/microsoft.contoso/widgets/w")
        );
        assert_eq!(widget_key("/nope", Fold::default()), None);
    }
}
