//! Static validation of request bodies (done before any operation starts) and of names.
//!
//! [`put_body`] and [`patch_body`] check shape and types; [`properties`] checks the
//! per-type property rules and is run again on the merged result of a PATCH.

use serde_json::{Map, Value};

use crate::errors::Detail;
use crate::path::Kind;

/// The values a configuration's `logLevel` takes.
const LOG_LEVELS: &[&str] = &["Error", "Warning", "Info", "Verbose"];

/// The properties of a configuration nobody has written yet; a PUT fills in the ones it
/// leaves out.
pub fn configuration_defaults() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("logLevel".into(), Value::from("Info"));
    m.insert("retentionDays".into(), Value::from(7));
    m
}

/// A PUT body that passed validation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PutBody {
    pub location: Option<String>,
    pub tags: Option<Map<String, Value>>,
    /// Without `provisioningState`.
    pub properties: Map<String, Value>,
    pub provisioning_state: Option<String>,
}

/// A PATCH body that passed validation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatchBody {
    pub location: Option<String>,
    /// `Some(None)`: `"tags": null` clears them.
    pub tags: Option<Option<Map<String, Value>>>,
    /// A JSON merge patch for `properties` (its `provisioningState` removed).
    pub properties: Option<Map<String, Value>>,
}

/// Parses a request body as JSON.
pub fn json(bytes: &[u8]) -> Result<Value, Detail> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Detail::new(
            "InvalidJson",
            "",
            "The request body is empty; a JSON object is required.",
        ));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        Detail::new(
            "InvalidJson",
            "",
            format!("The request body is not valid JSON: {e}."),
        )
    })
}

/// Checks a PUT body of type `kind`.
pub fn put_body(kind: Kind, body: &Value) -> Result<PutBody, Vec<Detail>> {
    let mut errs = Vec::new();
    let Some(obj) = body.as_object() else {
        return Err(vec![Detail::new(
            "InvalidType",
            "",
            "The request body must be a JSON object.",
        )]);
    };
    let location = check_location(kind, obj.get("location"), true, &mut errs);
    let tags = check_tags(kind, obj.get("tags"), &mut errs).flatten();
    let (properties, provisioning_state) = split_properties(obj.get("properties"), &mut errs);
    if errs.is_empty() {
        errs.extend(properties_errors(kind, &properties));
    }
    if errs.is_empty() {
        Ok(PutBody {
            location,
            tags,
            properties,
            provisioning_state,
        })
    } else {
        Err(errs)
    }
}

/// Checks the shape of a PATCH body; [`properties`] must still be run on the merged result.
pub fn patch_body(kind: Kind, body: &Value) -> Result<PatchBody, Vec<Detail>> {
    let mut errs = Vec::new();
    let Some(obj) = body.as_object() else {
        return Err(vec![Detail::new(
            "InvalidType",
            "",
            "The request body must be a JSON object.",
        )]);
    };
    let location = check_location(kind, obj.get("location"), false, &mut errs);
    let tags = check_tags(kind, obj.get("tags"), &mut errs);
    let properties = match obj.get("properties") {
        None => None,
        Some(Value::Null) => Some(Map::new()),
        Some(Value::Object(m)) => {
            let mut m = m.clone();
            m.remove("provisioningState");
            Some(m)
        }
        Some(_) => {
            errs.push(type_error("properties", "an object"));
            None
        }
    };
    if errs.is_empty() {
        Ok(PatchBody {
            location,
            tags,
            properties,
        })
    } else {
        Err(errs)
    }
}

/// Checks the per-type property rules on a complete `properties` object.
pub fn properties(kind: Kind, props: &Map<String, Value>) -> Result<(), Vec<Detail>> {
    let errs = properties_errors(kind, props);
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

/// A resource or group name: 1..=90 of `[A-Za-z0-9_.()-]`, not ending in `.`.
pub fn name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 90
        && !name.ends_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '(' | ')'))
}

/// ARM location names are compared without case and spaces (`East US` == `eastus`).
pub fn normalize_location(loc: &str) -> String {
    loc.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

fn type_error(target: &str, what: &str) -> Detail {
    Detail::new("InvalidType", target, format!("'{target}' must be {what}."))
}

fn check_location(
    kind: Kind,
    v: Option<&Value>,
    required: bool,
    errs: &mut Vec<Detail>,
) -> Option<String> {
    if !kind.tracked() {
        if v.is_some_and(|v| !v.is_null()) {
            errs.push(Detail::new(
                "LocationNotAllowed",
                "location",
                "'location' is not allowed on a proxy resource type.",
            ));
        }
        return None;
    }
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= 100 => Some(s.clone()),
        None | Some(Value::Null) if !required => None,
        None | Some(Value::Null) => {
            errs.push(Detail::new(
                "MissingLocation",
                "location",
                "'location' is required.",
            ));
            None
        }
        Some(_) => {
            errs.push(type_error("location", "a non-empty string"));
            None
        }
    }
}

/// `None`: absent; `Some(None)`: null; `Some(Some(map))`: valid tags.
fn check_tags(
    kind: Kind,
    v: Option<&Value>,
    errs: &mut Vec<Detail>,
) -> Option<Option<Map<String, Value>>> {
    let v = v?;
    if !kind.tracked() {
        if !v.is_null() {
            errs.push(Detail::new(
                "TagsNotAllowed",
                "tags",
                "'tags' are not allowed on a proxy resource type.",
            ));
        }
        return None;
    }
    match v {
        Value::Null => Some(None),
        Value::Object(m) => {
            let mut ok = true;
            for (k, val) in m {
                if k.is_empty() || k.len() > 512 || !val.is_string() {
                    errs.push(type_error(
                        &format!("tags.{k}"),
                        "a string under a non-empty name",
                    ));
                    ok = false;
                }
            }
            ok.then(|| Some(m.clone()))
        }
        _ => {
            errs.push(type_error("tags", "an object of strings"));
            None
        }
    }
}

/// Splits `properties` into the stored part and the echoed `provisioningState`.
fn split_properties(
    v: Option<&Value>,
    errs: &mut Vec<Detail>,
) -> (Map<String, Value>, Option<String>) {
    match v {
        None | Some(Value::Null) => (Map::new(), None),
        Some(Value::Object(m)) => {
            let mut m = m.clone();
            let state = match m.remove("provisioningState") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s),
                Some(_) => {
                    errs.push(type_error("properties.provisioningState", "a string"));
                    None
                }
            };
            (m, state)
        }
        Some(_) => {
            errs.push(type_error("properties", "an object"));
            (Map::new(), None)
        }
    }
}

fn int_in(
    props: &Map<String, Value>,
    key: &str,
    lo: i64,
    hi: i64,
    errs: &mut Vec<Detail>,
) -> Option<i64> {
    let v = props.get(key)?;
    let target = format!("properties.{key}");
    match v.as_i64() {
        Some(n) if (lo..=hi).contains(&n) => Some(n),
        Some(_) => {
            errs.push(Detail::new(
                "OutOfRange",
                &target,
                format!("'{target}' must be between {lo} and {hi}."),
            ));
            None
        }
        None if v.is_null() => None,
        None => {
            errs.push(type_error(&target, "an integer"));
            None
        }
    }
}

fn properties_errors(kind: Kind, props: &Map<String, Value>) -> Vec<Detail> {
    let mut errs = Vec::new();
    if let Some(v) = props.get("simulateFailure")
        && !v.is_boolean()
        && !v.is_null()
    {
        errs.push(type_error("properties.simulateFailure", "a boolean"));
    }
    match kind {
        Kind::Widget | Kind::SubscriptionWidget => {
            int_in(props, "size", 1, 100, &mut errs);
            let min = int_in(props, "minCount", 0, i64::from(i32::MAX), &mut errs);
            let max = int_in(props, "maxCount", 0, i64::from(i32::MAX), &mut errs);
            if let (Some(min), Some(max)) = (min, max)
                && min > max
            {
                errs.push(Detail::new(
                    "InvalidRange",
                    "properties.minCount",
                    format!("'properties.minCount' ({min}) must not exceed 'properties.maxCount' ({max})."),
                ));
            }
            if let Some(d) = props.get("description")
                && !d.is_string()
                && !d.is_null()
            {
                errs.push(type_error("properties.description", "a string"));
            }
        }
        Kind::Gadget | Kind::Sprocket | Kind::RegionalWidget | Kind::TenantWidget => {
            int_in(props, "size", 1, 100, &mut errs);
        }
        Kind::Configuration => {
            if let Some(v) = props.get("logLevel")
                && !v.is_null()
                && !v.as_str().is_some_and(|s| LOG_LEVELS.contains(&s))
            {
                errs.push(type_error(
                    "properties.logLevel",
                    "one of Error, Warning, Info, Verbose",
                ));
            }
            int_in(props, "retentionDays", 0, 365, &mut errs);
        }
        Kind::Annotation => match props.get("text") {
            Some(Value::String(s)) if !s.is_empty() && s.len() <= 1024 => {}
            None | Some(Value::Null) => errs.push(Detail::new(
                "MissingProperty",
                "properties.text",
                "'properties.text' is required.",
            )),
            Some(_) => errs.push(type_error(
                "properties.text",
                "a string of 1 to 1024 characters",
            )),
        },
        Kind::Gizmo => {
            if let Some(v) = props.get("color")
                && !v.is_string()
                && !v.is_null()
            {
                errs.push(type_error("properties.color", "a string"));
            }
            int_in(props, "count", 0, 1000, &mut errs);
        }
        Kind::Link => match props.get("widgetId") {
            Some(Value::String(s)) if !s.is_empty() => {}
            None | Some(Value::Null) => errs.push(Detail::new(
                "MissingProperty",
                "properties.widgetId",
                "'properties.widgetId' is required.",
            )),
            Some(_) => errs.push(type_error("properties.widgetId", "a widget resource id")),
        },
    }
    errs
}

/// RFC 7396 JSON merge patch of `patch` into `target`.
pub fn merge_patch(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (k, v) in patch {
        match v {
            Value::Null => {
                target.remove(k);
            }
            Value::Object(p) => {
                let entry = target
                    .entry(k.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                if let Value::Object(t) = entry {
                    merge_patch(t, p);
                }
            }
            other => {
                target.insert(k.clone(), other.clone());
            }
        }
    }
}

/// Salvages what it can from an invalid PUT body (the `invalid-body-accepted` fault):
/// non-object parts are dropped and a missing location falls back to `default_location`.
pub fn salvage_put(kind: Kind, body: Option<&Value>, default_location: &str) -> PutBody {
    let obj = body.and_then(Value::as_object);
    let get = |k: &str| obj.and_then(|o| o.get(k));
    let mut properties = get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    properties.remove("provisioningState");
    let tracked = kind.tracked();
    PutBody {
        location: tracked.then(|| {
            get("location")
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .unwrap_or(default_location)
                .to_string()
        }),
        tags: get("tags")
            .and_then(Value::as_object)
            .filter(|m| tracked && m.values().all(Value::is_string))
            .cloned(),
        properties,
        provisioning_state: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(r: Result<PutBody, Vec<Detail>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|d| d.code)
            .collect()
    }

    #[test]
    fn valid_widget() {
        let b = json!({"location": "eastus", "tags": {"a": "b"}, "id": "ignored",
            "properties": {"size": 3, "minCount": 1, "maxCount": 5, "description": "d",
                           "simulateFailure": false, "provisioningState": "Succeeded"}});
        let p = put_body(Kind::Widget, &b).expect("valid");
        assert_eq!(p.location.as_deref(), Some("eastus"));
        assert_eq!(p.provisioning_state.as_deref(), Some("Succeeded"));
        assert!(!p.properties.contains_key("provisioningState"));
    }

    #[test]
    fn invalid_widgets() {
        assert_eq!(
            codes(put_body(Kind::Widget, &json!({}))),
            ["MissingLocation"]
        );
        assert_eq!(
            codes(put_body(Kind::Widget, &json!({"location": 3}))),
            ["InvalidType"]
        );
        assert_eq!(codes(put_body(Kind::Widget, &json!([1]))), ["InvalidType"]);
        for size in [json!(0), json!(101), json!("3"), json!(2.5)] {
            let b = json!({"location": "x", "properties": {"size": size}});
            assert_eq!(codes(put_body(Kind::Widget, &b)).len(), 1, "{size}");
        }
        let b = json!({"location": "x", "properties": {"minCount": 6, "maxCount": 5}});
        assert_eq!(codes(put_body(Kind::Widget, &b)), ["InvalidRange"]);
        let b = json!({"location": "x", "tags": {"a": 1}});
        assert_eq!(codes(put_body(Kind::Widget, &b)), ["InvalidType"]);
        let b = json!({"location": "x", "tags": "a"});
        assert_eq!(codes(put_body(Kind::Widget, &b)), ["InvalidType"]);
    }

    #[test]
    fn proxies_and_links() {
        assert!(put_body(Kind::Gadget, &json!({"properties": {"size": 1}})).is_ok());
        assert_eq!(
            codes(put_body(Kind::Gadget, &json!({"location": "x"}))),
            ["LocationNotAllowed"]
        );
        assert_eq!(
            codes(put_body(Kind::Sprocket, &json!({"tags": {}}))),
            ["TagsNotAllowed"]
        );
        assert_eq!(
            codes(put_body(Kind::Link, &json!({"location": "x"}))),
            ["MissingProperty"]
        );
        assert!(
            put_body(
                Kind::Link,
                &json!({"location": "x", "properties": {"widgetId": "/w"}})
            )
            .is_ok()
        );
    }

    #[test]
    fn new_shapes() {
        let ok = |k, b: Value| put_body(k, &b).is_ok();
        assert!(ok(
            Kind::Configuration,
            json!({"properties": {"logLevel": "Verbose", "retentionDays": 30}})
        ));
        assert!(!ok(
            Kind::Configuration,
            json!({"properties": {"logLevel": "Loud"}})
        ));
        assert!(!ok(
            Kind::Configuration,
            json!({"properties": {"retentionDays": 400}})
        ));
        assert!(!ok(Kind::Configuration, json!({"location": "x"})));
        assert!(ok(Kind::Annotation, json!({"properties": {"text": "hi"}})));
        assert!(!ok(Kind::Annotation, json!({"properties": {}})));
        assert!(ok(
            Kind::Gizmo,
            json!({"location": "x", "properties": {"color": "red", "count": 3}})
        ));
        assert!(!ok(Kind::Gizmo, json!({"properties": {}})));
        assert!(ok(
            Kind::SubscriptionWidget,
            json!({"location": "x", "properties": {"size": 2}})
        ));
        assert!(!ok(Kind::TenantWidget, json!({"properties": {"size": 0}})));
        assert_eq!(configuration_defaults()["logLevel"], "Info");
    }

    #[test]
    fn patch_shape_and_merge() {
        let p = patch_body(
            Kind::Widget,
            &json!({"tags": null, "properties": {"size": 4, "description": null}}),
        )
        .expect("valid");
        assert_eq!(p.tags, Some(None));
        let mut t = json!({"size": 3, "description": "d", "minCount": 1})
            .as_object()
            .cloned()
            .unwrap_or_default();
        merge_patch(&mut t, p.properties.as_ref().unwrap_or(&Map::new()));
        assert_eq!(Value::Object(t), json!({"size": 4, "minCount": 1}));
        assert!(patch_body(Kind::Gadget, &json!({"tags": {"a": "b"}})).is_err());
        assert!(patch_body(Kind::Widget, &json!({"properties": 3})).is_err());
    }

    #[test]
    fn names_and_json() {
        assert!(name("w-1_a.b(c)"));
        assert!(!name("a b") && !name("") && !name("a.") && !name(&"a".repeat(91)));
        assert!(json(b"  ").is_err());
        assert!(json(b"{").is_err());
        assert_eq!(normalize_location("East US"), "eastus");
    }

    #[test]
    fn salvage() {
        let b = salvage_put(Kind::Widget, None, "westus");
        assert_eq!(b.location.as_deref(), Some("westus"));
        let b = salvage_put(
            Kind::Gadget,
            Some(&json!({"location": "x", "properties": {"size": "big"}})),
            "w",
        );
        assert_eq!(b.location, None);
        assert_eq!(b.properties["size"], "big");
    }
}
