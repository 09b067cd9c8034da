//! Helpers for `init_openapi.rs`: fixture paths, generation, and a checker for the target
//! format v2 (keys and values as target-v2 describes them), standing in for the v2 parser
//! until it lands.

#![allow(dead_code)]

use rpconform::init::{InitOptions, InitOutput, target_from_openapi};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const TSP_RESOURCES: &str = "tsp-resources/preview/2023-12-01-preview/openapi.json";
pub const TSP_RESOURCES_OAS3: &str = "tsp-resources/openapi3.yaml";
pub const TSP_OPERATION_TEMPLATES: &str = "tsp-operation-templates/openapi.json";
pub const TSP_MANAGEMENT_GROUP: &str = "tsp-management-group/openapi.json";
pub const CONTOSO: &str =
    "contoso/resource-manager/Microsoft.Contoso/stable/2024-05-01/contoso.json";
pub const FABRIKAM: &str =
    "fabrikam/resource-manager/Microsoft.Fabrikam/preview/2025-01-01-preview/fabrikam.json";

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openapi")
        .join(rel)
}

/// A fresh directory under the system temp dir for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rpconform-init-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Generate from fixtures; the YAML must parse and pass the v2 check.
pub fn generate(rels: &[&str]) -> (InitOutput, Value) {
    let paths: Vec<PathBuf> = rels.iter().map(|r| fixture(r)).collect();
    let out = target_from_openapi(&paths, &InitOptions::default())
        .unwrap_or_else(|e| panic!("{rels:?}: {e}"));
    let v = parse_checked(&out.yaml);
    (out, v)
}

/// Parse with serde_yaml and with the target parser's YAML reader, then check the v2 shape.
pub fn parse_checked(yaml: &str) -> Value {
    let v: Value = serde_yaml::from_str(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let file: Arc<Path> = Arc::from(Path::new("generated.yaml"));
    rpconform::yaml::parse(&file, yaml)
        .unwrap_or_else(|d| panic!("{}\n{yaml}", d.render(Some(yaml))));
    let problems = check_v2(&v);
    assert!(problems.is_empty(), "{}\n{yaml}", problems.join("\n"));
    // And the real target parser accepts it (what `rpconform check --target` runs).
    if let Err(r) = rpconform::target::parse_target(Path::new("generated.yaml"), yaml, "generated")
    {
        panic!(
            "the target parser refuses the generated file:\n{}\n{yaml}",
            r.render()
        );
    }
    v
}

/// The line of `text` containing `needle` (panics when absent).
pub fn line_of<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{text}"))
}

pub fn kinds(v: &Value) -> Vec<(String, String)> {
    v["types"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, t)| (k.clone(), t["kind"].as_str().unwrap_or("").to_string()))
        .collect()
}

const TOP: &[&str] = &[
    "base_url",
    "openapi",
    "auth",
    "secret_headers",
    "headers",
    "subscription",
    "resource_group",
    "location",
    "deadline",
    "identity",
    "profiles",
    "namespace",
    "api_version",
    "namespaces",
    "types",
    "monitors",
    "tasks",
];
const TYPE: &[&str] = &[
    "namespace",
    "api_version",
    "path",
    "scope",
    "extends",
    "parent",
    "depends_on",
    "kind",
    "names",
    "singleton",
    "etag",
    "provisioning_state",
    "propagation",
    "skus",
    "skus_empty",
    "async",
    "lro",
    "create_body",
    "update_body",
    "replace_body",
    "tags_body",
    "failing_body",
    "invalid_bodies",
    "echoes",
    "actions",
];
const ACTION: &[&str] = &[
    "name",
    "lro",
    "long_running",
    "final_state_via",
    "body",
    "result",
];
const SCOPES: &[&str] = &[
    "resource_group",
    "subscription",
    "location",
    "tenant",
    "extension",
];
const PATTERNS: &[&str] = &[
    "sync",
    "provisioning-state",
    "azure-async-operation",
    "location",
    "azure-async-operation+location",
];
const ACTION_PATTERNS: &[&str] = &[
    "sync",
    "location",
    "azure-async-operation",
    "azure-async-operation+location",
];
const FINAL: &[&str] = &[
    "azure-async-operation",
    "location",
    "original-uri",
    "operation-location",
];
const BOOLS: &[&str] = &[
    "etag",
    "provisioning_state",
    "propagation",
    "skus",
    "skus_empty",
    "async",
];

fn api_version_ok(v: &str) -> bool {
    let re = regex::Regex::new(r"^\d{4}-\d{2}-\d{2}(-[A-Za-z0-9.]+)?$").unwrap();
    re.is_match(v)
}

fn guid_ok(v: &str) -> bool {
    regex::Regex::new(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
        .unwrap()
        .is_match(v)
}

/// Every way `v` departs from target format v2.
pub fn check_v2(v: &Value) -> Vec<String> {
    let mut p = Vec::new();
    let Some(top) = v.as_object() else {
        return vec!["the document is not a mapping".into()];
    };
    for k in top.keys() {
        if !TOP.contains(&k.as_str()) {
            p.push(format!("unknown top-level key {k}"));
        }
    }
    let url = v["base_url"].as_str().unwrap_or("");
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        p.push(format!("base_url {url:?}"));
    }
    if !guid_ok(v["subscription"].as_str().unwrap_or("")) {
        p.push("subscription is not a GUID".into());
    }
    if v["resource_group"]["name"].as_str().is_none() {
        p.push("resource_group.name".into());
    }
    if v["namespace"].as_str().is_none_or(|n| !n.contains('.')) {
        p.push("namespace".into());
    }
    if !api_version_ok(v["api_version"].as_str().unwrap_or("")) {
        p.push("api_version".into());
    }
    if let Some(ns) = v.get("namespaces") {
        for (n, e) in ns.as_object().into_iter().flatten() {
            let keys_ok = e
                .as_object()
                .is_some_and(|m| m.keys().all(|k| k == "api_version"));
            if !keys_ok || !api_version_ok(e["api_version"].as_str().unwrap_or("")) {
                p.push(format!("namespaces.{n}"));
            }
        }
    }
    let Some(types) = v["types"].as_object() else {
        p.push("types is not a mapping".into());
        return p;
    };
    for (name, t) in types {
        let at = |what: &str| format!("types.{name}.{what}");
        let Some(m) = t.as_object() else {
            p.push(at("not a mapping"));
            continue;
        };
        for k in m.keys() {
            if !TYPE.contains(&k.as_str()) {
                p.push(at(&format!("unknown key {k}")));
            }
        }
        for b in BOOLS {
            if m.get(*b).is_some_and(|x| !x.is_boolean()) {
                p.push(at(b));
            }
        }
        if !matches!(
            m.get("kind").and_then(Value::as_str),
            Some("tracked" | "proxy")
        ) {
            p.push(at("kind"));
        }
        if !m.get("create_body").is_some_and(Value::is_object) {
            p.push(at("create_body missing or not an object"));
        }
        for refk in ["parent", "depends_on"] {
            if let Some(r) = m.get(refk)
                && !r
                    .as_str()
                    .is_some_and(|r| types.contains_key(r) && r != name)
            {
                p.push(at(&format!("{refk} {r}")));
            }
        }
        match (m.get("parent"), m.get("scope")) {
            (Some(_), Some(_)) => p.push(at("scope on a nested type")),
            (None, Some(s)) if !s.as_str().is_some_and(|s| SCOPES.contains(&s)) => {
                p.push(at("scope"))
            }
            _ => {}
        }
        let is_ext = m.get("scope").and_then(Value::as_str) == Some("extension");
        match m.get("extends").map(|e| e.as_str()) {
            Some(Some(e)) if is_ext && (types.contains_key(e) || e.starts_with('/')) => {}
            None if !is_ext => {}
            other => p.push(at(&format!("extends {other:?} (extension: {is_ext})"))),
        }
        if m.contains_key("names") && m.contains_key("singleton") {
            p.push(at("names and singleton"));
        }
        if let Some(api) = m.get("api_version")
            && !api.as_str().is_some_and(api_version_ok)
        {
            p.push(at("api_version"));
        }
        if let Some(lro) = m.get("lro") {
            for (op, x) in lro.as_object().into_iter().flatten() {
                if !["put", "patch", "delete"].contains(&op.as_str()) {
                    p.push(at(&format!("lro.{op}")));
                }
                let ok = match x {
                    Value::String(s) => PATTERNS.contains(&s.as_str()),
                    Value::Object(o) => {
                        o.keys().all(|k| k == "pattern" || k == "final_state_via")
                            && o.get("pattern")
                                .and_then(Value::as_str)
                                .is_some_and(|s| PATTERNS.contains(&s))
                            && o.get("final_state_via")
                                .is_none_or(|f| f.as_str().is_some_and(|f| FINAL.contains(&f)))
                    }
                    _ => false,
                };
                if !ok {
                    p.push(at(&format!("lro.{op} = {x}")));
                }
            }
        }
        for (i, a) in m
            .get("actions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = |w: &str| format!("types.{name}.actions[{i}].{w}");
            let Some(a) = a.as_object() else {
                p.push(at("not a mapping"));
                continue;
            };
            for k in a.keys() {
                if !ACTION.contains(&k.as_str()) {
                    p.push(at(k));
                }
            }
            if a.get("name").and_then(Value::as_str).is_none() {
                p.push(at("name"));
            }
            if let Some(l) = a.get("lro")
                && !l.as_str().is_some_and(|l| ACTION_PATTERNS.contains(&l))
            {
                p.push(at("lro"));
            }
            if let Some(f) = a.get("final_state_via")
                && !f.as_str().is_some_and(|f| FINAL.contains(&f))
            {
                p.push(at("final_state_via"));
            }
            if let Some(r) = a.get("result") {
                let keys_ok = r
                    .as_object()
                    .is_some_and(|o| o.keys().all(|k| k == "status" || k == "pointer"));
                let status_ok = match &r["status"] {
                    Value::Number(n) => n.as_u64().is_some_and(|s| (200..300).contains(&s)),
                    Value::Array(a) => {
                        !a.is_empty()
                            && a.iter()
                                .all(|s| s.as_u64().is_some_and(|s| (200..300).contains(&s)))
                    }
                    _ => false,
                };
                if !keys_ok || !status_ok {
                    p.push(at("result"));
                }
            }
        }
    }
    p
}

#[test]
fn the_checker_catches_departures() {
    let bad: Value = serde_yaml::from_str(
        "base_url: x\nsubscription: s\nnamespace: N\napi_version: v\nbogus: 1\nresource_group: {}\n\
         types:\n  a: {kind: weird, parent: zz, scope: resource_group, lro: {put: fast}}\n",
    )
    .unwrap();
    let p = check_v2(&bad);
    for needle in [
        "bogus",
        "base_url",
        "subscription",
        "namespace",
        "api_version",
        "kind",
        "parent \"zz\"",
        "scope on a nested type",
        "lro.put",
        "create_body",
    ] {
        assert!(p.iter().any(|x| x.contains(needle)), "{needle}: {p:?}");
    }
}
