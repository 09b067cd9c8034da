//! A target as a target file (YAML, written with serde_yaml): what `replay --write-target`
//! saves, so an inferred target can be reviewed, completed and reused with `--target`.

use serde_json::{Value, json};

use crate::target::{Extends, Kind, Scope, Target};

/// The target as a target file (YAML), to review and reuse with `--target`.
pub fn target_yaml(t: &Target) -> String {
    let mut types = serde_json::Map::new();
    for ty in &t.types {
        let mut m = serde_json::Map::new();
        m.insert("namespace".into(), json!(ty.namespace));
        m.insert("path".into(), json!(ty.segment));
        if !ty.api_version.is_empty() {
            m.insert("api_version".into(), json!(ty.api_version));
        }
        match (&ty.parent, &ty.scope) {
            (Some(p), _) => {
                m.insert("parent".into(), json!(p));
            }
            (None, Scope::Extension(Extends::Id(id))) => {
                m.insert("scope".into(), json!("extension"));
                m.insert("extends".into(), json!(id));
            }
            (None, s) => {
                m.insert("scope".into(), json!(s.name()));
            }
        }
        m.insert(
            "kind".into(),
            json!(if ty.kind == Kind::Tracked {
                "tracked"
            } else {
                "proxy"
            }),
        );
        m.insert("etag".into(), json!(ty.etag));
        m.insert("provisioning_state".into(), json!(ty.provisioning_state));
        m.insert(
            "lro".into(),
            json!({"put": ty.lro.put.pattern.name(), "patch": ty.lro.patch.pattern.name(),
                   "delete": ty.lro.delete.pattern.name()}),
        );
        m.insert("create_body".into(), json!({}));
        types.insert(ty.name.clone(), Value::Object(m));
    }
    let namespaces: serde_json::Map<String, Value> = t
        .namespaces
        .iter()
        .filter(|n| !n.api_version.is_empty() && n.name != t.namespace)
        .map(|n| (n.name.clone(), json!({"api_version": n.api_version})))
        .collect();
    let doc = json!({
        "base_url": t.base(),
        "auth": "none",
        "subscription": t.subscription,
        "resource_group": {"name": t.resource_group.name},
        "profiles": ["arm"],
        "namespace": t.namespace,
        "api_version": t.api_version,
        "namespaces": namespaces,
        "location": t.location,
        "types": types,
    });
    format!(
        "# Inferred by `rpconform replay` ({}): review it before using it with --target.\n{}",
        t.label,
        serde_yaml::to_string(&doc).unwrap_or_default()
    )
}
