//! Request bodies and what schemas say about a resource.
//!
//! Bodies come from the `x-ms-examples` files an operation references (the body parameter of
//! the smallest example), else from the schema: its required fields, following `$ref` and
//! `allOf`, with a placeholder per type (strings `"rpconform"`, enums their first value,
//! numbers their minimum or 1, a top-level `location` → `${target.location}`). Schema facts
//! ([`Facts`]) tell tracked from proxy, and whether there is an `etag` or a
//! `properties.provisioningState`.

use super::InitError;
use super::ops::Op;
use super::spec::{Loc, Store};
use serde_json::{Map, Value, json};
use std::collections::HashSet;

/// Deepest schema nesting followed (also the guard against recursive schemas).
const MAX_DEPTH: usize = 12;

/// The properties of a schema with its `allOf` parents merged in.
#[derive(Default)]
pub(crate) struct Flat {
    pub props: Vec<(String, Loc)>,
    pub required: Vec<String>,
    /// Every `$ref` met on the way (to spot `.../TrackedResource`).
    pub refs: Vec<String>,
}

impl Flat {
    pub fn prop(&self, name: &str) -> Option<&Loc> {
        self.props.iter().find(|(n, _)| n == name).map(|(_, l)| l)
    }
}

pub(crate) fn flatten(store: &Store, schema: &Loc) -> Result<Flat, InitError> {
    let mut flat = Flat::default();
    let mut seen = HashSet::new();
    flatten_into(store, schema, &mut flat, &mut seen, 0)?;
    Ok(flat)
}

fn flatten_into(
    store: &Store,
    schema: &Loc,
    flat: &mut Flat,
    seen: &mut HashSet<String>,
    depth: usize,
) -> Result<(), InitError> {
    if let Some(r) = schema.str("$ref") {
        flat.refs.push(r.to_string());
    }
    let s = store.deref(schema)?;
    if depth > MAX_DEPTH || !seen.insert(s.describe()) {
        return Ok(());
    }
    for part in s.key("allOf").map(|a| a.items()).unwrap_or_default() {
        flatten_into(store, &part, flat, seen, depth + 1)?;
    }
    for (name, p) in s.key("properties").map(|p| p.entries()).unwrap_or_default() {
        flat.props.retain(|(n, _)| *n != name);
        flat.props.push((name, p));
    }
    if let Some(Value::Array(req)) = s.value().get("required") {
        for r in req.iter().filter_map(Value::as_str) {
            if !flat.required.iter().any(|x| x == r) {
                flat.required.push(r.to_string());
            }
        }
    }
    Ok(())
}

/// What a resource schema says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    pub has_location: bool,
    pub location_required: bool,
    pub tracked_base: bool,
    pub etag: bool,
    pub provisioning_state: bool,
}

pub(crate) fn facts(store: &Store, schema: &Loc) -> Result<Facts, InitError> {
    let flat = flatten(store, schema)?;
    let provisioning_state = match flat.prop("properties") {
        Some(p) => flatten(store, p)?.prop("provisioningState").is_some(),
        None => false,
    };
    Ok(Facts {
        has_location: flat.prop("location").is_some(),
        location_required: flat.required.iter().any(|r| r == "location"),
        tracked_base: flat.refs.iter().any(|r| r.ends_with("/TrackedResource")),
        etag: flat.prop("etag").is_some(),
        provisioning_state,
    })
}

/// A body built from a schema, with notes (JSON Pointer → TODO text) for fields a reviewer
/// must look at.
pub(crate) struct Built {
    pub body: Value,
    pub notes: Vec<(String, String)>,
}

/// The smallest body the schema accepts, as far as the schema tells.
pub(crate) fn minimal_body(store: &Store, schema: &Loc) -> Result<Built, InitError> {
    let mut notes = Vec::new();
    let body = value_for(store, schema, "", 0, &mut notes)?;
    Ok(Built { body, notes })
}

fn value_for(
    store: &Store,
    schema: &Loc,
    pointer: &str,
    depth: usize,
    notes: &mut Vec<(String, String)>,
) -> Result<Value, InitError> {
    let s = store.deref(schema)?;
    if depth > MAX_DEPTH {
        notes.push((
            pointer.into(),
            "TODO: schema nests deeper than followed".into(),
        ));
        return Ok(json!({}));
    }
    let v = s.value();
    if let Some(d) = v.get("default") {
        return Ok(d.clone());
    }
    if let Some(Value::Array(e)) = v.get("enum")
        && let Some(first) = e.first()
    {
        return Ok(first.clone());
    }
    let ty = match v.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or(""),
        _ if v.get("properties").is_some() || v.get("allOf").is_some() => "object",
        _ => "",
    };
    Ok(match ty {
        "object" => object_for(store, &s, pointer, depth, notes)?,
        "array" => {
            let min = v.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            match (min, s.key("items")) {
                (0, _) | (_, None) => json!([]),
                (_, Some(items)) => {
                    json!([value_for(
                        store,
                        &items,
                        &format!("{pointer}/0"),
                        depth + 1,
                        notes
                    )?])
                }
            }
        }
        "string" => string_for(v, pointer, notes),
        "integer" | "number" => {
            let min = v.get("minimum").and_then(Value::as_f64);
            let max = v.get("maximum").and_then(Value::as_f64);
            let mut n = min.unwrap_or(1.0);
            if v.get("exclusiveMinimum") == Some(&Value::Bool(true)) {
                n += 1.0;
            }
            if let Some(m) = max
                && n > m
            {
                n = m;
            }
            if ty == "integer" || n.fract() == 0.0 {
                json!(n as i64)
            } else {
                json!(n)
            }
        }
        "boolean" => json!(false),
        _ => {
            notes.push((pointer.into(), "TODO: the schema gives no type here".into()));
            json!({})
        }
    })
}

fn object_for(
    store: &Store,
    s: &Loc,
    pointer: &str,
    depth: usize,
    notes: &mut Vec<(String, String)>,
) -> Result<Value, InitError> {
    let flat = flatten(store, s)?;
    let discriminator = match s.value().get("discriminator") {
        Some(Value::String(d)) => Some(d.clone()),
        Some(Value::Object(o)) => o
            .get("propertyName")
            .and_then(Value::as_str)
            .map(String::from),
        _ => None,
    };
    let mut out = Map::new();
    for name in &flat.required {
        let here = format!("{pointer}/{}", name.replace('~', "~0").replace('/', "~1"));
        let Some(p) = flat.prop(name) else {
            notes.push((
                here,
                "TODO: required but the schema does not describe it".into(),
            ));
            out.insert(name.clone(), json!("rpconform"));
            continue;
        };
        if store.deref(p)?.value().get("readOnly") == Some(&Value::Bool(true))
            || p.value().get("readOnly") == Some(&Value::Bool(true))
        {
            continue;
        }
        let value = if pointer.is_empty() && name == "location" {
            json!("${target.location}")
        } else {
            value_for(store, p, &here, depth + 1, notes)?
        };
        if discriminator.as_deref() == Some(name.as_str()) {
            notes.push((
                here.clone(),
                "TODO: polymorphic; pick the kind to test and its required fields".into(),
            ));
        }
        out.insert(name.clone(), value);
    }
    // An optional `properties` bag whose own fields are required is sent with those fields.
    if !out.contains_key("properties")
        && let Some(p) = flat.prop("properties")
    {
        let inner = value_for(store, p, &format!("{pointer}/properties"), depth + 1, notes)?;
        if inner.as_object().is_some_and(|m| !m.is_empty()) {
            out.insert("properties".into(), inner);
        }
    }
    Ok(Value::Object(out))
}

fn string_for(v: &Value, pointer: &str, notes: &mut Vec<(String, String)>) -> Value {
    let format = v.get("format").and_then(Value::as_str).unwrap_or("");
    let mut s = match format {
        "date-time" => "2025-01-01T00:00:00Z".to_string(),
        "date" => "2025-01-01".to_string(),
        "uuid" => "00000000-0000-0000-0000-000000000000".to_string(),
        "uri" | "url" => "https://example.com".to_string(),
        "duration" => "PT1H".to_string(),
        "arm-id" => {
            notes.push((
                pointer.into(),
                "TODO: a resource id; point it at a resource that exists".into(),
            ));
            "rpconform".to_string()
        }
        _ => "rpconform".to_string(),
    };
    if let Some(min) = v.get("minLength").and_then(Value::as_u64) {
        while (s.chars().count() as u64) < min {
            s.push('x');
        }
    }
    if let Some(max) = v.get("maxLength").and_then(Value::as_u64) {
        s = s.chars().take(max as usize).collect();
    }
    if let Some(p) = v.get("pattern").and_then(Value::as_str) {
        notes.push((pointer.into(), format!("TODO: must match the pattern {p}")));
    }
    Value::String(s)
}

/// The body an operation's examples give.
#[derive(Default)]
pub(crate) struct FromExamples {
    pub body: Option<Value>,
    /// Title of the example the body came from.
    pub title: Option<String>,
    /// Example files the spec references that do not exist.
    pub missing: Vec<String>,
}

/// The body parameter of the smallest of `op`'s examples (by its JSON text).
pub(crate) fn example_body(store: &Store, op: &Op) -> Result<FromExamples, InitError> {
    let mut out = FromExamples::default();
    let Some(body_name) = &op.body_name else {
        return Ok(out);
    };
    let mut best: Option<(usize, String, Value)> = None;
    for (title, entry) in &op.examples {
        let example = match entry.str("$ref") {
            Some(r) => {
                let file = r.split('#').next().unwrap_or(r);
                if file.is_empty() {
                    store.resolve(entry, r)?
                } else {
                    match store.load_relative(entry, file)? {
                        Some(_) => store.resolve(entry, r)?,
                        None => {
                            out.missing.push(r.to_string());
                            continue;
                        }
                    }
                }
            }
            None => entry.clone(),
        };
        let Some(body) = example.value().pointer(&format!(
            "/parameters/{}",
            body_name.replace('~', "~0").replace('/', "~1")
        )) else {
            continue;
        };
        let size = body.to_string().len();
        if best.as_ref().is_none_or(|(s, _, _)| size < *s) {
            best = Some((size, title.clone(), body.clone()));
        }
    }
    if let Some((_, title, body)) = best {
        out.body = Some(body);
        out.title = Some(title);
    }
    Ok(out)
}

/// Every string in `body` that looks like an ARM resource id: (JSON Pointer, id).
pub(crate) fn resource_ids(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk_ids(body, String::new(), &mut out);
    out
}

/// Members holding an identity's ids, which a spec's example makes up.
const IDENTITY_IDS: [&str; 4] = ["principalId", "tenantId", "clientId", "objectId"];

/// Where an example body carries made-up identity ids (JSON Pointers): an `identity` object's
/// `userAssignedIdentities` (its keys are resource ids of identities) and any principal,
/// tenant, client or object id. No run can use them as they are.
pub(crate) fn identity_ids(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_identity(body, String::new(), &mut out);
    out
}

fn walk_identity(v: &Value, pointer: String, out: &mut Vec<String>) {
    let child = |k: &str| format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let at = child(k);
                let ids =
                    k == "userAssignedIdentities" && x.as_object().is_some_and(|o| !o.is_empty());
                if ids || (IDENTITY_IDS.contains(&k.as_str()) && x.is_string()) {
                    out.push(at);
                } else {
                    walk_identity(x, at, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk_identity(x, format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn walk_ids(v: &Value, pointer: String, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) if super::paths::id_types(s).is_some() => out.push((pointer, s.clone())),
        Value::Object(m) => {
            for (k, x) in m {
                walk_ids(
                    x,
                    format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk_ids(x, format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_identity_ids_are_found() {
        let body = json!({"location": "x", "identity": {
            "type": "SystemAssigned, UserAssigned",
            "principalId": "00000000-0000-0000-0000-000000000001",
            "userAssignedIdentities": {"/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id1": {"clientId": "c"}}
        }, "properties": {"owners": [{"tenantId": "t"}], "userAssignedIdentities": {}}});
        assert_eq!(
            identity_ids(&body),
            [
                "/identity/principalId",
                "/identity/userAssignedIdentities",
                "/properties/owners/0/tenantId"
            ]
        );
    }

    #[test]
    fn minimal_from_required_fields() {
        let doc = Loc::inline(
            "s.json",
            json!({"definitions": {
                "R": {"allOf": [{"$ref": "#/definitions/Base"}], "required": ["properties"],
                      "properties": {"properties": {"$ref": "#/definitions/P"}, "id": {"type": "string", "readOnly": true}}},
                "Base": {"required": ["location", "id"], "properties": {"location": {"type": "string"}}},
                "P": {"required": ["size", "tier", "when", "list", "name", "flag", "ratio"], "properties": {
                    "size": {"type": "integer", "minimum": 3},
                    "tier": {"type": "string", "enum": ["Basic", "Premium"]},
                    "when": {"type": "string", "format": "date-time"},
                    "list": {"type": "array", "minItems": 1, "items": {"type": "string", "default": "x"}},
                    "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 4},
                    "flag": {"type": "boolean"},
                    "ratio": {"type": "number", "minimum": 0.5},
                    "optional": {"type": "string"}
                }}
            }}),
        );
        let store = Store::default();
        let schema = store.resolve(&doc, "#/definitions/R").unwrap();
        let b = minimal_body(&store, &schema).unwrap();
        assert_eq!(
            b.body,
            json!({"location": "${target.location}", "properties": {"size": 3, "tier": "Basic",
                "when": "2025-01-01T00:00:00Z", "list": ["x"], "name": "rpco", "flag": false, "ratio": 0.5}})
        );
        assert!(
            b.notes
                .iter()
                .any(|(p, t)| p == "/properties/name" && t.contains("pattern"))
        );
        let f = facts(&store, &schema).unwrap();
        assert!(f.location_required && f.has_location && !f.etag && !f.provisioning_state);
    }

    #[test]
    fn recursive_schemas_end() {
        let doc = Loc::inline(
            "s.json",
            json!({"definitions": {"N": {"type": "object", "required": ["next"], "properties": {"next": {"$ref": "#/definitions/N"}}}}}),
        );
        let store = Store::default();
        let schema = store.resolve(&doc, "#/definitions/N").unwrap();
        let b = minimal_body(&store, &schema).unwrap();
        assert!(b.notes.iter().any(|(_, t)| t.contains("deeper")));
    }

    #[test]
    fn ids_in_bodies() {
        let ids = resource_ids(
            &json!({"properties": {"w": "/subscriptions/0/resourceGroups/r/providers/NS/widgets/a",
            "list": ["/subscriptions/0/resourceGroups/r", "/subscriptions/0/providers/NS/x/y"]}}),
        );
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[0].0, "/properties/w");
        assert_eq!(ids[1].0, "/properties/list/1");
    }
}
