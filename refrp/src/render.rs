//! JSON bodies of resources, resource groups, SKU lists and operation resources.

use serde_json::{Map, Value, json};

use crate::faults::Fault;
use axum::http::StatusCode;

use crate::path::Kind;
use crate::reply::Reply;
use crate::settings::Settings;
use crate::store::{Group, Resource, State};
use crate::variants::Variant;

/// How `state` is spelled for a resource of `kind`: the state-diagram names, except that a
/// create shows an RP-specific value under `custom-running-states`.
pub fn state_label(state: State, kind: Kind, settings: &Settings) -> &'static str {
    if state != State::Creating || !settings.is(Variant::CustomRunningStates) {
        return state.as_str();
    }
    match kind {
        // A configuration shows a create only through its widget's: it spells it the same.
        Kind::Widget | Kind::Configuration => "Accepted",
        Kind::Gadget => "Created",
        Kind::Sprocket => "InProgress",
        Kind::Link | Kind::SubscriptionWidget => "RegisteringDns",
        _ => state.as_str(),
    }
}

/// A resource body; `state: None` omits `properties.provisioningState`.
pub fn resource(r: &Resource, state: Option<State>, settings: &Settings) -> Value {
    let mut m = Map::new();
    if settings.has(Fault::NameUppercased) {
        let mut chars = r.name.chars();
        let upper: String = chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect())
            .unwrap_or_default();
        let id = match r.id.rsplit_once('/') {
            Some((head, _)) => format!("{head}/{upper}"),
            None => r.id.clone(),
        };
        m.insert("id".into(), json!(id));
        m.insert("name".into(), json!(upper));
    } else {
        m.insert("id".into(), json!(r.id));
        m.insert("name".into(), json!(r.name));
    }
    m.insert("type".into(), json!(r.type_name));
    if settings.is(Variant::EtagInBody) {
        m.insert("etag".into(), json!(r.etag));
    }
    if let Some(loc) = &r.location {
        m.insert("location".into(), json!(loc));
    }
    if let Some(tags) = &r.tags {
        m.insert("tags".into(), Value::Object(tags.clone()));
    }
    if settings.has(Fault::SystemDataBadTime) {
        // The RP's own rendering of the creation time: a US-locale time.
        let mut sd = r.system_data.clone();
        sd.entry("createdBy").or_insert_with(|| json!("refrp"));
        sd.entry("createdByType")
            .or_insert_with(|| json!("Application"));
        sd.insert("createdAt".into(), json!("11/26/2026 6:00:00 PM"));
        m.insert("systemData".into(), Value::Object(sd));
    } else if !r.system_data.is_empty() {
        m.insert("systemData".into(), Value::Object(r.system_data.clone()));
    }
    let mut props = r.properties.clone();
    // Write-only (`x-ms-secret` in the spec): stored, never returned.
    if r.kind == Kind::Widget {
        props.remove("adminPassword");
    }
    if let Some(loc) = r
        .location
        .as_ref()
        .filter(|_| settings.has(Fault::PropertiesRepeatLocation))
    {
        props.insert("location".into(), json!(loc));
    }
    if let Some(state) = state {
        props.insert(
            "provisioningState".into(),
            json!(state_label(state, r.kind, settings)),
        );
    }
    m.insert("properties".into(), Value::Object(props));
    Value::Object(m)
}

/// A resource group body.
pub fn group(g: &Group) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(g.id));
    m.insert("name".into(), json!(g.name));
    m.insert("type".into(), json!("Microsoft.Resources/resourceGroups"));
    m.insert("location".into(), json!(g.location));
    if let Some(tags) = &g.tags {
        m.insert("tags".into(), Value::Object(tags.clone()));
    }
    m.insert(
        "properties".into(),
        json!({"provisioningState": "Succeeded"}),
    );
    Value::Object(m)
}

/// Each type of the reference RP's namespaces: (namespace, type path under it).
const TYPE_PATHS: [(&str, &str); 10] = [
    ("Microsoft.Contoso", "widgets"),
    ("Microsoft.Contoso", "widgets/gadgets"),
    ("Microsoft.Contoso", "widgets/gadgets/sprockets"),
    ("Microsoft.Contoso", "widgets/configurations"),
    ("Microsoft.Contoso", "links"),
    ("Microsoft.Contoso", "subscriptionWidgets"),
    ("Microsoft.Contoso", "locations/regionalWidgets"),
    ("Microsoft.Contoso", "tenantWidgets"),
    ("Microsoft.Contoso", "annotations"),
    ("Microsoft.Fabrikam", "gizmos"),
];

/// `GET /providers/{ns}/operations`: read, write and delete of each of the namespace's types,
/// the widget's restart action and the namespace's `register/action`.
pub fn provider_operations(ns: &str, settings: &Settings) -> Reply {
    let item = |name: String, resource: &str, operation: String| {
        let mut op = json!({"name": name, "isDataAction": false, "origin": "user,system"});
        if !settings.has(Fault::OperationsApiNoDisplay) {
            op["display"] = json!({
                "provider": ns.replace('.', " "), "resource": resource, "operation": operation,
                "description": format!("{operation} (the reference RP)"),
            });
        }
        op
    };
    let mut value = Vec::new();
    if !settings.has(Fault::OperationsApiNoRegister) {
        value.push(item(
            format!("{ns}/register/action"),
            "Subscription",
            "Register the subscription for the resource provider".to_string(),
        ));
    }
    for (_, path) in TYPE_PATHS.iter().filter(|(n, _)| *n == ns) {
        let shown = path.rsplit('/').next().unwrap_or(path);
        for (verb, what) in [
            ("read", "Read"),
            ("write", "Create or Update"),
            ("delete", "Delete"),
        ] {
            value.push(item(
                format!("{ns}/{path}/{verb}"),
                shown,
                format!("{what} {shown}"),
            ));
        }
        if *path == "widgets" {
            value.push(item(
                format!("{ns}/{path}/restart/action"),
                shown,
                format!("Restart {shown}"),
            ));
        }
    }
    Reply::json(StatusCode::OK, json!({"value": value}))
}

/// The alternative SKUs of a widget.
pub fn widget_skus() -> Value {
    json!({"value": [
        {
            "resourceType": "widgets",
            "sku": {"name": "Standard_S1", "tier": "Standard"},
            "capacity": {"scaleType": "automatic", "minimum": 1, "maximum": 10, "default": 1}
        },
        {
            "resourceType": "widgets",
            "sku": {"name": "Premium_P1", "tier": "Premium"},
            "capacity": {"scaleType": "manual", "minimum": 1, "maximum": 5, "default": 2}
        }
    ]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_body_has_no_location_or_tags() {
        let r = Resource {
            id: "/x/gadgets/g".into(),
            name: "g".into(),
            type_name: "Microsoft.Contoso/widgets/gadgets".into(),
            kind: Kind::Gadget,
            location: None,
            tags: None,
            properties: json!({"size": 1}).as_object().cloned().unwrap_or_default(),
            settled: State::Succeeded,
            etag: "\"e\"".into(),
            system_data: Map::new(),
            restart_count: 0,
            op_location: "eastus".into(),
        };
        let s = Settings::default();
        let b = resource(&r, Some(State::Updating), &s);
        assert_eq!(
            b,
            json!({"id": "/x/gadgets/g", "name": "g", "type": "Microsoft.Contoso/widgets/gadgets",
                   "properties": {"size": 1, "provisioningState": "Updating"}})
        );
        assert!(
            resource(&r, None, &s)["properties"]
                .get("provisioningState")
                .is_none()
        );
        let custom = s
            .with_variant(Variant::CustomRunningStates)
            .with_variant(Variant::EtagInBody);
        let b = resource(&r, Some(State::Creating), &custom);
        assert_eq!(b["properties"]["provisioningState"], "Created");
        assert_eq!(
            state_label(State::Creating, Kind::Configuration, &custom),
            "Accepted"
        );
        assert_eq!(b["etag"], "\"e\"");
        assert_eq!(
            state_label(State::Updating, Kind::Widget, &custom),
            "Updating"
        );
    }
}
