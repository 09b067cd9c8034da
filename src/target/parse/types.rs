//! `types:` of a target file: each resource type with its scope or parent, names, namespace,
//! per-operation LRO patterns, bodies and actions, and the cross-checks between types.

use marked_yaml::Node;
use serde_json::Value;

use super::api_version;
use crate::lro::FinalStateVia;
use crate::target::{
    Action, Extends, Kind, Lro, Namespace, OpDecl, OpPattern, ResourceType, Scope, TypeCost,
};
use crate::yaml::{Reader, to_json};

const TYPE_KEYS: &[&str] = &[
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
    "deletable",
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
    "failing_update_body",
    "invalid_bodies",
    "echoes",
    "actions",
    "cost",
];

/// What types inherit from the top level.
pub(super) struct Defaults {
    pub namespace: String,
    pub api_version: String,
    pub namespaces: Vec<Namespace>,
}

pub(super) fn read_types(r: &mut Reader, n: &Node, d: &Defaults) -> Vec<ResourceType> {
    let Some(tm) = r.free_map(n, "types") else {
        return Vec::new();
    };
    let mut types: Vec<(ResourceType, Node)> = Vec::new();
    for (k, v) in tm.entries() {
        let name = k
            .as_scalar()
            .map(|s| s.as_str().to_string())
            .unwrap_or_default();
        if let Some(mut t) = read_type(r, &name, v, d) {
            t.line = r.pos(&k).line;
            types.push((t, v.clone()));
        }
    }
    cross_check(r, &types);
    types.into_iter().map(|(t, _)| t).collect()
}

/// References between types: parents, dependencies and extended types exist, no cycles.
fn cross_check(r: &mut Reader, types: &[(ResourceType, Node)]) {
    let names: Vec<&str> = types.iter().map(|(t, _)| t.name.as_str()).collect();
    let node_of = |n: &Node, key: &str| {
        n.as_mapping()
            .and_then(|m| m.get_node(key))
            .cloned()
            .unwrap_or_else(|| n.clone())
    };
    for (t, n) in types {
        let ext = match &t.scope {
            Scope::Extension(Extends::Type(e)) => Some(e),
            _ => None,
        };
        for (key, refname) in [
            ("parent", t.parent.as_ref()),
            ("depends_on", t.depends_on.as_ref()),
            ("extends", ext),
        ] {
            if let Some(p) = refname
                && !names.contains(&p.as_str())
            {
                r.error(
                    &node_of(n, key),
                    format!("{key} `{p}` is not a declared type"),
                    Some(names.join(", ")),
                );
            }
        }
        // A parent chain that loops never reaches a top-level type.
        let mut cur = t.parent.as_deref();
        let mut hops = 0;
        while let Some(p) = cur {
            hops += 1;
            if p == t.name || hops > types.len() {
                r.error(
                    &node_of(n, "parent"),
                    format!("type `{}` is its own ancestor", t.name),
                    None,
                );
                break;
            }
            cur = types
                .iter()
                .find(|(o, _)| o.name == p)
                .and_then(|(o, _)| o.parent.as_deref());
        }
    }
}

fn read_type(r: &mut Reader, name: &str, n: &Node, d: &Defaults) -> Option<ResourceType> {
    let m = r.map(n, &format!("type `{name}`"), TYPE_KEYS)?;
    let flag = |r: &mut Reader, key: &str, default: bool| {
        m.get(key).and_then(|x| r.bool(x, key)).unwrap_or(default)
    };
    let kind = match m.get("kind").and_then(|x| r.string(x, "kind")).as_deref() {
        None | Some("tracked") => Kind::Tracked,
        Some("proxy") => Kind::Proxy,
        Some(other) => {
            r.error(
                m.get("kind").unwrap_or(n),
                format!("unknown kind `{other}`"),
                Some("tracked or proxy".into()),
            );
            Kind::Tracked
        }
    };
    let object = |r: &mut Reader, key: &str| -> Option<Value> {
        let x = m.get(key)?;
        let v = to_json(x);
        if !v.is_object() {
            r.error(
                x,
                format!("{key} must be a JSON object (a YAML mapping)"),
                None,
            );
            return None;
        }
        Some(v)
    };
    let create_body = object(r, "create_body");
    if create_body.is_none() && !m.has("create_body") {
        r.error(n, format!("type `{name}` needs a `create_body`"), None);
    }
    let namespace = match m.get("namespace") {
        Some(x) => {
            let ns = r.string(x, "namespace")?;
            match d
                .namespaces
                .iter()
                .find(|n| n.name.eq_ignore_ascii_case(&ns))
            {
                Some(found) => found.name.clone(),
                None => {
                    let known: Vec<&str> = d.namespaces.iter().map(|n| n.name.as_str()).collect();
                    r.error(
                        x,
                        format!("namespace `{ns}` is not declared (add it under `namespaces:`)"),
                        Some(known.join(", ")),
                    );
                    return None;
                }
            }
        }
        None => d.namespace.clone(),
    };
    let version = match m.get("api_version") {
        Some(x) => api_version(r, x, "api_version")?,
        None => d
            .namespaces
            .iter()
            .find(|n| n.name == namespace)
            .map(|n| n.api_version.clone())
            .unwrap_or_else(|| d.api_version.clone()),
    };
    let parent = m.get("parent").and_then(|x| r.string(x, "parent"));
    let scope = read_scope(r, &m, n, name, parent.is_some())?;
    let names = read_names(r, &m, n, name)?;
    let lro = read_lro(r, &m)?;
    let cost = read_cost(r, &m)?;
    let invalid_bodies = m
        .get("invalid_bodies")
        .and_then(|x| r.seq(x, "invalid_bodies"))
        .map(|s| s.iter().map(to_json).collect())
        .unwrap_or_default();
    let echoes = m.get("echoes").map(|x| {
        r.strings(x, "a top-level field name")
            .into_iter()
            .map(|(s, _)| s)
            .collect()
    });
    let mut actions = Vec::new();
    if let Some(list) = m.get("actions").and_then(|x| r.seq(x, "actions")) {
        for a in list {
            if let Some(act) = read_action(r, a) {
                actions.push(act);
            }
        }
    }
    Some(ResourceType {
        name: name.to_string(),
        segment: m
            .get("path")
            .and_then(|x| r.string(x, "path"))
            .unwrap_or_else(|| name.to_string()),
        namespace,
        api_version: version,
        scope,
        parent,
        depends_on: m.get("depends_on").and_then(|x| r.string(x, "depends_on")),
        kind,
        // ARM singletons (`blobServices/default`) exist as long as their parent: no DELETE.
        deletable: flag(r, "deletable", !m.has("singleton")),
        names,
        etag: flag(r, "etag", false),
        provisioning_state: flag(r, "provisioning_state", lro.any_async()),
        propagation: flag(r, "propagation", false),
        skus: flag(r, "skus", false),
        skus_empty: flag(r, "skus_empty", false),
        lro,
        update_body: object(r, "update_body"),
        replace_body: object(r, "replace_body"),
        tags_body: object(r, "tags_body"),
        failing_body: object(r, "failing_body"),
        failing_update_body: object(r, "failing_update_body"),
        create_body: create_body?,
        invalid_bodies,
        echoes,
        actions,
        cost,
        line: 0,
    })
}

/// `cost: {operation_seconds, price_per_hour}`: what `plan` assumes of a type (how long its
/// writes run, what one resource costs per hour).
fn read_cost(r: &mut Reader, m: &crate::yaml::Map<'_>) -> Option<TypeCost> {
    let mut cost = TypeCost::default();
    if let Some(x) = m.get("cost") {
        let cm = r.map(x, "cost", &["operation_seconds", "price_per_hour"])?;
        for (key, slot) in [
            ("operation_seconds", &mut cost.operation_seconds),
            ("price_per_hour", &mut cost.price_per_hour),
        ] {
            if let Some(v) = cm.get(key) {
                match r.f64(v, &format!("cost.{key}")) {
                    Some(f) if f >= 0.0 => *slot = Some(f),
                    Some(_) => r.error(v, format!("cost.{key} must not be negative"), None),
                    None => {}
                }
            }
        }
    }
    Some(cost)
}

fn read_scope(
    r: &mut Reader,
    m: &crate::yaml::Map<'_>,
    n: &Node,
    name: &str,
    nested: bool,
) -> Option<Scope> {
    let scope_node = m.get("scope");
    let scope_name = scope_node.and_then(|x| r.string(x, "scope"));
    let extends = m.get("extends");
    if nested && let Some(x) = scope_node {
        r.error(
            x,
            format!(
                "type `{name}` has a parent: it lives under its parent, not in a scope of its own"
            ),
            Some("drop `scope`, or drop `parent`".into()),
        );
        return None;
    }
    let scope = match scope_name.as_deref() {
        None | Some("resource_group") => Scope::ResourceGroup,
        Some("subscription") => Scope::Subscription,
        Some("location") => Scope::Location,
        Some("tenant") => Scope::Tenant,
        Some("extension") => {
            let Some(x) = extends else {
                r.error(
                    n,
                    format!("type `{name}` is an extension resource: say what it `extends`"),
                    Some(
                        "extends: <a type of this file> or \"/subscriptions/.../providers/X/y/z\""
                            .into(),
                    ),
                );
                return None;
            };
            let e = r.string(x, "extends")?;
            return Some(Scope::Extension(if e.starts_with('/') {
                Extends::Id(e.trim_end_matches('/').to_string())
            } else {
                Extends::Type(e)
            }));
        }
        Some(other) => {
            r.error(
                scope_node.unwrap_or(n),
                format!("unknown scope `{other}`"),
                Some("resource_group, subscription, location, tenant or extension".into()),
            );
            return None;
        }
    };
    if let Some(x) = extends {
        r.error(x, "`extends` is only for `scope: extension`", None);
        return None;
    }
    Some(scope)
}

fn read_names(
    r: &mut Reader,
    m: &crate::yaml::Map<'_>,
    n: &Node,
    name: &str,
) -> Option<Option<Vec<String>>> {
    match (m.get("names"), m.get("singleton")) {
        (Some(_), Some(x)) => {
            r.error(
                x,
                format!("type `{name}` has both `names` and `singleton`"),
                None,
            );
            None
        }
        (None, Some(x)) => Some(Some(vec![r.string(x, "singleton")?])),
        (Some(x), None) => {
            let list: Vec<String> = r.strings(x, "a name").into_iter().map(|(s, _)| s).collect();
            if list.is_empty() {
                r.error(x, "`names` needs at least one name", None);
                return None;
            }
            Some(Some(list))
        }
        (None, None) => {
            let _ = n;
            Some(None)
        }
    }
}

fn pattern(r: &mut Reader, x: &Node, what: &str) -> Option<OpPattern> {
    let s = r.string(x, what)?;
    let p = OpPattern::from_name(&s);
    if p.is_none() {
        r.error(
            x,
            format!("unknown {what} `{s}`"),
            Some(OpPattern::NAMES.join(", ")),
        );
    }
    p
}

fn final_state_via(r: &mut Reader, x: &Node) -> Option<FinalStateVia> {
    let s = r.string(x, "final_state_via")?;
    let v = FinalStateVia::from_name(&s);
    if v.is_none() {
        r.error(
            x,
            format!("unknown final_state_via `{s}`"),
            Some(FinalStateVia::NAMES.join(", ")),
        );
    }
    v
}

/// One operation's declaration: `location` or `{pattern: location, final_state_via: location}`
/// (without `pattern`, the type's `async` default stands).
fn op_decl(r: &mut Reader, x: &Node, what: &str, base: OpPattern) -> Option<OpDecl> {
    if x.as_scalar().is_some() {
        return pattern(r, x, what).map(OpDecl::of);
    }
    let m = r.map(x, what, &["pattern", "final_state_via"])?;
    let p = match m.get("pattern") {
        Some(p) => pattern(r, p, "pattern")?,
        None => base,
    };
    let via = match m.get("final_state_via") {
        Some(v) => Some(final_state_via(r, v)?),
        None => None,
    };
    Some(OpDecl {
        pattern: p,
        final_state_via: via,
    })
}

/// `async` (shorthand for every write) and `lro` (per operation, which wins). With neither, a
/// write may run either way (`any`).
fn read_lro(r: &mut Reader, m: &crate::yaml::Map<'_>) -> Option<Lro> {
    let base = match m.get("async").and_then(|x| r.bool(x, "async")) {
        Some(false) => OpPattern::Sync,
        _ => OpPattern::Any,
    };
    let mut lro = Lro::all(base);
    if let Some(x) = m.get("lro") {
        let lm = r.map(x, "lro", &["put", "patch", "delete"])?;
        for (key, slot) in [
            ("put", &mut lro.put),
            ("patch", &mut lro.patch),
            ("delete", &mut lro.delete),
        ] {
            if let Some(v) = lm.get(key) {
                *slot = op_decl(r, v, &format!("lro.{key}"), base)?;
            }
        }
    }
    Some(lro)
}

fn read_action(r: &mut Reader, n: &Node) -> Option<Action> {
    let m = r.map(
        n,
        "an action",
        &[
            "name",
            "long_running",
            "lro",
            "final_state_via",
            "body",
            "result",
        ],
    )?;
    let name = match m.get("name") {
        Some(x) => r.string(x, "name")?,
        None => {
            r.error(n, "an action needs a `name`", None);
            return None;
        }
    };
    let mut result_status = vec![200, 204];
    let mut result_pointer = None;
    if let Some(res) = m.get("result")
        && let Some(rm) = r.map(res, "result", &["status", "pointer"])
    {
        if let Some(s) = rm.get("status") {
            result_status = r
                .one_or_many(s)
                .into_iter()
                .filter_map(|x| r.u64(x, "status"))
                .map(|v| v as u16)
                .collect();
        }
        result_pointer = rm.get("pointer").and_then(|x| r.string(x, "pointer"));
    }
    let long = m
        .get("long_running")
        .and_then(|x| r.bool(x, "long_running"))
        .unwrap_or(true);
    let mut lro = OpDecl::of(if long {
        OpPattern::Any
    } else {
        OpPattern::Sync
    });
    if let Some(x) = m.get("lro") {
        lro.pattern = pattern(r, x, "lro")?;
    }
    if let Some(x) = m.get("final_state_via") {
        lro.final_state_via = Some(final_state_via(r, x)?);
    }
    Some(Action {
        name,
        lro,
        body: m
            .get("body")
            .map(to_json)
            .unwrap_or_else(|| Value::Object(Default::default())),
        result_status,
        result_pointer,
    })
}

#[cfg(test)]
mod tests {
    use crate::lro::FinalStateVia;
    use crate::target::{Extends, OpPattern, Scope, parse_target};

    const HEAD: &str = "base_url: http://h\nsubscription: 00000000-0000-0000-0000-000000000001\nresource_group: {name: g}\nnamespace: Microsoft.C\napi_version: \"2024-05-01\"\nnamespaces: {Microsoft.F: {api_version: \"2023-07-01\"}}\n";

    fn parse(types: &str) -> Result<crate::target::Target, String> {
        parse_target(
            std::path::Path::new("t.yaml"),
            &format!("{HEAD}types:\n{types}"),
            "t",
        )
        .map_err(|r| r.render())
    }

    #[test]
    fn per_operation_patterns_and_shorthand() {
        let t = parse(
            "  a: {create_body: {}, async: true, lro: {patch: sync, delete: {pattern: location, final_state_via: location}}}\n  b: {create_body: {}, async: false}\n  c: {create_body: {}}\n",
        )
        .unwrap();
        let a = t.type_named("a").unwrap();
        assert_eq!(a.lro.put.pattern, OpPattern::Any);
        assert_eq!(a.lro.patch.pattern, OpPattern::Sync);
        assert_eq!(a.lro.delete.pattern, OpPattern::Location);
        assert_eq!(a.lro.delete.final_state_via, Some(FinalStateVia::Location));
        assert!(!t.type_named("b").unwrap().lro.any_async());
        assert_eq!(t.type_named("c").unwrap().lro.put.pattern, OpPattern::Any);
    }

    #[test]
    fn scopes_names_and_namespaces() {
        let t = parse(
            "  w: {create_body: {}}\n  cfg: {parent: w, singleton: default, create_body: {}}\n  s: {scope: subscription, create_body: {}}\n  x: {scope: extension, extends: w, create_body: {}}\n  y: {scope: extension, extends: /subscriptions/s/resourceGroups/g/providers/A.B/c/d, create_body: {}}\n  f: {namespace: microsoft.f, create_body: {}}\n",
        )
        .unwrap();
        assert_eq!(
            t.type_named("cfg").unwrap().names,
            Some(vec!["default".to_string()])
        );
        assert_eq!(t.type_named("s").unwrap().scope, Scope::Subscription);
        assert_eq!(
            t.type_named("x").unwrap().scope,
            Scope::Extension(Extends::Type("w".into()))
        );
        assert!(matches!(
            t.type_named("y").unwrap().scope,
            Scope::Extension(Extends::Id(_))
        ));
        let f = t.type_named("f").unwrap();
        assert_eq!(
            (f.namespace.as_str(), f.api_version.as_str()),
            ("Microsoft.F", "2023-07-01")
        );
    }

    #[test]
    fn inconsistent_types_are_positioned_errors() {
        for (types, want) in [
            (
                "  w: {create_body: {}}\n  c: {parent: w, scope: subscription, create_body: {}}\n",
                "lives under its parent",
            ),
            (
                "  x: {scope: extension, create_body: {}}\n",
                "say what it `extends`",
            ),
            (
                "  x: {scope: extension, extends: nope, create_body: {}}\n",
                "extends `nope` is not a declared type",
            ),
            (
                "  x: {extends: w, create_body: {}}\n",
                "only for `scope: extension`",
            ),
            (
                "  x: {names: [a], singleton: b, create_body: {}}\n",
                "both `names` and `singleton`",
            ),
            (
                "  x: {namespace: Microsoft.Z, create_body: {}}\n",
                "not declared",
            ),
            (
                "  x: {lro: {put: sometimes}, create_body: {}}\n",
                "unknown lro.put `sometimes`",
            ),
            (
                "  x: {lro: {put: {pattern: location, final_state_via: nowhere}}, create_body: {}}\n",
                "unknown final_state_via",
            ),
            (
                "  x: {parent: y, create_body: {}}\n  y: {parent: x, create_body: {}}\n",
                "its own ancestor",
            ),
            (
                "  x: {api_version: \"v2\", create_body: {}}\n",
                "not an ARM api-version",
            ),
        ] {
            let e = parse(types).err().unwrap_or_default();
            assert!(e.contains(want) && e.contains("t.yaml:"), "{types}: {e}");
        }
    }
}
