//! The reference RP's own OpenAPI 2 description (`refrp/spec/`), as the embedded target hands
//! it to the tester: the base files, the overlays of the variants in force (a variant that
//! drops a header or makes an operation synchronous changes what the spec may promise), and
//! the spec-drift fault knobs, which change the *spec* and never the RP, so that only the SPEC
//! rules can see them.
//!
//! Overlays follow OpenAPI Overlay 1.0: each action's `target` is a JSONPath of name
//! selectors (`.name`, `['name']`) and wildcards (`.*`); `remove: true` deletes what it
//! selects, `update` merges into it.

use serde_json::{Map, Value, json};

use crate::faults::Fault;
use crate::settings::Settings;

/// A spec file as the embedded target names it, and its text.
pub struct SpecFile {
    /// The path reports name (`refrp/spec/contoso.json`): the file in the repository.
    pub name: &'static str,
    /// The text of the file as written (for line numbers).
    pub text: &'static str,
    /// The document the tester judges by: the file, with the variants' overlays and the
    /// spec-drift faults applied.
    pub doc: Value,
}

const FILES: [(&str, &str); 5] = [
    (
        "refrp/spec/contoso.json",
        include_str!("../spec/contoso.json"),
    ),
    (
        "refrp/spec/fabrikam.json",
        include_str!("../spec/fabrikam.json"),
    ),
    (
        "refrp/spec/resources.json",
        include_str!("../spec/resources.json"),
    ),
    (
        "refrp/spec/dataplane.json",
        include_str!("../spec/dataplane.json"),
    ),
    ("refrp/spec/tasks.json", include_str!("../spec/tasks.json")),
];

const OVERLAYS: [&str; 10] = [
    include_str!("../spec/overlays/aao-only-put.json"),
    include_str!("../spec/overlays/delete-final-200.json"),
    include_str!("../spec/overlays/delete-location-only.json"),
    include_str!("../spec/overlays/delete-sync-200.json"),
    include_str!("../spec/overlays/mon-no-operation-id.json"),
    include_str!("../spec/overlays/mon-put-location.json"),
    include_str!("../spec/overlays/mon-retry-after-1.json"),
    include_str!("../spec/overlays/no-retry-after.json"),
    include_str!("../spec/overlays/put-provisioning-state-only.json"),
    include_str!("../spec/overlays/sync-patch.json"),
];

/// The widget's path in `contoso.json`, which the spec-drift faults edit.
const WIDGET: &str = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Contoso/widgets/{widgetName}";

/// The spec files of the RP these settings describe.
pub fn spec_files(settings: &Settings) -> Vec<SpecFile> {
    // The overlays of the variants in force, parsed once.
    let overlays: Vec<Value> = OVERLAYS
        .iter()
        .filter_map(|o| serde_json::from_str::<Value>(o).ok())
        .filter(|o| {
            o["x-refrp-variants"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter_map(crate::Variant::from_name)
                .any(|v| settings.is(v))
        })
        .collect();
    FILES
        .iter()
        .map(|(name, text)| {
            let mut doc: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            let file = name.rsplit('/').next().unwrap_or(name);
            for overlay in &overlays {
                if overlay["extends"]
                    .as_str()
                    .is_some_and(|e| e.ends_with(file))
                {
                    apply_overlay(&mut doc, overlay);
                }
            }
            if file == "contoso.json" {
                drift(&mut doc, settings);
            }
            SpecFile { name, text, doc }
        })
        .collect()
}

/// The spec-drift faults: the spec says something the RP does not do.
fn drift(doc: &mut Value, s: &Settings) {
    fn w(doc: &mut Value) -> Option<&mut Map<String, Value>> {
        doc.get_mut("paths")?.get_mut(WIDGET)?.as_object_mut()
    }
    if s.has(Fault::SpecDrops202)
        && let Some(r) = w(doc)
            .and_then(|p| p.get_mut("delete"))
            .and_then(|d| d.get_mut("responses"))
            .and_then(Value::as_object_mut)
    {
        r.remove("202");
    }
    if s.has(Fault::SpecNotLongRunning)
        && let Some(op) = w(doc)
            .and_then(|p| p.get_mut("patch"))
            .and_then(Value::as_object_mut)
    {
        op.remove("x-ms-long-running-operation");
        op.remove("x-ms-long-running-operation-options");
    }
    if s.has(Fault::SpecFinalStateOperationLocation)
        && let Some(op) = w(doc)
            .and_then(|p| p.get_mut("patch"))
            .and_then(Value::as_object_mut)
    {
        op.insert(
            "x-ms-long-running-operation-options".into(),
            json!({"final-state-via": "operation-location"}),
        );
    }
    if s.has(Fault::SpecDeclaresOperationLocation)
        && let Some(h) = w(doc)
            .and_then(|p| p.get_mut("get"))
            .and_then(|g| g.pointer_mut("/responses/200"))
            .and_then(Value::as_object_mut)
    {
        let headers = h.entry("headers").or_insert_with(|| json!({}));
        headers["Operation-Location"] = json!({"type": "string", "format": "uri"});
    }
    let size = doc.pointer_mut("/definitions/WidgetProperties/properties/size");
    if let Some(size) = size.and_then(Value::as_object_mut) {
        if s.has(Fault::SpecSizeIsString) {
            size.insert("type".into(), json!("string"));
        }
        if s.has(Fault::SpecSecretSize) {
            size.insert("x-ms-secret".into(), json!(true));
        }
    }
    if s.has(Fault::SpecReadOnlyDescription)
        && let Some(d) = doc
            .pointer_mut("/definitions/WidgetProperties/properties/description")
            .and_then(Value::as_object_mut)
    {
        d.insert("readOnly".into(), json!(true));
    }
}

/// Applies one overlay's actions.
pub fn apply_overlay(doc: &mut Value, overlay: &Value) {
    for action in overlay["actions"].as_array().into_iter().flatten() {
        let Some(target) = action["target"].as_str() else {
            continue;
        };
        let Some(path) = parse_path(target) else {
            continue;
        };
        if action["remove"] == json!(true) {
            remove(doc, &path);
        } else if let Some(update) = action.get("update") {
            for v in select(doc, &path) {
                merge(v, update);
            }
        }
    }
}

/// A JSONPath step: a name, or every member.
#[derive(Debug, PartialEq)]
enum Step {
    Name(String),
    Any,
}

/// `$.a['b c'].*` → [a, b c, *]; `None` for anything else.
fn parse_path(p: &str) -> Option<Vec<Step>> {
    let mut rest = p.strip_prefix('$')?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix(".*") {
            out.push(Step::Any);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            out.push(Step::Name(r[..end].to_string()));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            out.push(Step::Name(r[..end].to_string()));
            rest = &r[end..];
        } else {
            return None;
        }
    }
    Some(out)
}

fn select<'a>(v: &'a mut Value, path: &[Step]) -> Vec<&'a mut Value> {
    let Some((first, rest)) = path.split_first() else {
        return vec![v];
    };
    match (first, v) {
        (Step::Name(n), Value::Object(m)) => match m.get_mut(n) {
            Some(c) => select(c, rest),
            None => Vec::new(),
        },
        (Step::Any, Value::Object(m)) => m.values_mut().flat_map(|c| select(c, rest)).collect(),
        (Step::Any, Value::Array(a)) => a.iter_mut().flat_map(|c| select(c, rest)).collect(),
        _ => Vec::new(),
    }
}

fn remove(doc: &mut Value, path: &[Step]) {
    let Some((last, parent)) = path.split_last() else {
        return;
    };
    for p in select(doc, parent) {
        match (last, p) {
            (Step::Name(n), Value::Object(m)) => {
                m.remove(n);
            }
            (Step::Any, Value::Object(m)) => m.clear(),
            (Step::Any, Value::Array(a)) => a.clear(),
            _ => {}
        }
    }
}

/// Overlay `update`: objects merge member by member, anything else replaces.
fn merge(into: &mut Value, update: &Value) {
    match (into, update) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn paths_parse_names_quoted_names_and_wildcards() {
        assert_eq!(
            parse_path("$.paths['/a/{b}'].*.responses['200']"),
            Some(vec![
                Step::Name("paths".into()),
                Step::Name("/a/{b}".into()),
                Step::Any,
                Step::Name("responses".into()),
                Step::Name("200".into()),
            ])
        );
        assert_eq!(parse_path("paths"), None);
    }

    #[test]
    fn every_file_parses_and_overlays_apply_only_with_their_variant() {
        let base = spec_files(&Settings::default());
        assert!(
            base.iter().all(|f| f.doc.is_object()),
            "a spec file does not parse"
        );
        let patch = |files: &[SpecFile]| {
            files[0].doc["paths"][WIDGET]["patch"]
                .get("x-ms-long-running-operation")
                .cloned()
        };
        assert_eq!(patch(&base), Some(json!(true)));
        let sync = spec_files(&Settings::default().with_variant(Variant::SyncPatch));
        assert_eq!(patch(&sync), None);
        assert!(
            sync[0].doc["paths"][WIDGET]["patch"]["responses"]
                .get("202")
                .is_none()
        );
    }

    #[test]
    fn drift_faults_change_the_spec_only() {
        let s = Settings::default()
            .with_fault(Fault::SpecDrops202)
            .with_fault(Fault::SpecSizeIsString);
        let f = spec_files(&s);
        let w = &f[0].doc["paths"][WIDGET];
        assert!(w["delete"]["responses"].get("202").is_none());
        assert_eq!(
            f[0].doc["definitions"]["WidgetProperties"]["properties"]["size"]["type"],
            "string"
        );
    }

    #[test]
    fn wildcard_removal_reaches_every_member() {
        let mut doc = json!({"paths": {"/a": {"get": {"responses": {"200": {"headers": {"Retry-After": {}, "ETag": {}}}}}}}});
        let overlay = json!({"actions": [{"target": "$.paths.*.*.responses.*.headers['Retry-After']", "remove": true}]});
        apply_overlay(&mut doc, &overlay);
        assert_eq!(
            doc["paths"]["/a"]["get"]["responses"]["200"]["headers"],
            json!({"ETag": {}})
        );
    }
}
