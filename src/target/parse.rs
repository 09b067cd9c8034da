//! Reading a target file (YAML) into a [`Target`], with every mistake positioned.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use marked_yaml::Node;
use serde_json::Value;

use super::{Action, Auth, Kind, LroPattern, ResourceGroup, ResourceType, Target};
use crate::diag::{Diagnostic, Report};
use crate::yaml::{Reader, parse, to_json};

const TOP_KEYS: &[&str] = &[
    "base_url",
    "auth",
    "secret_headers",
    "headers",
    "subscription",
    "resource_group",
    "namespace",
    "api_version",
    "location",
    "deadline",
    "identity",
    "types",
];
const TYPE_KEYS: &[&str] = &[
    "path",
    "parent",
    "depends_on",
    "kind",
    "async",
    "etag",
    "provisioning_state",
    "propagation",
    "skus",
    "skus_empty",
    "create_body",
    "update_body",
    "failing_body",
    "invalid_bodies",
    "actions",
    "lro",
];

/// Read and parse a target file from disk.
pub fn load_target(path: &Path) -> Result<Target, Report> {
    let mut report = Report::default();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            let file: Arc<Path> = Arc::from(path);
            report.push(Diagnostic::new(
                crate::diag::Pos::new(&file, 1, 1),
                format!("cannot read target file: {e}"),
            ));
            return Err(report);
        }
    };
    parse_target(path, &text, &path.display().to_string())
}

/// Parse target YAML; `label` names the target in reports.
pub fn parse_target(path: &Path, text: &str, label: &str) -> Result<Target, Report> {
    let file: Arc<Path> = Arc::from(path);
    let mut report = Report::default();
    report.add_source(path, Arc::from(text));
    let root = match parse(&file, text) {
        Ok(n) => n,
        Err(d) => {
            report.push(d);
            return Err(report);
        }
    };
    let mut r = Reader::new(file);
    let target = read_target(&mut r, &root, label);
    report.extend(r.diags);
    match target {
        Some(t) if report.is_empty() => Ok(t),
        _ => Err(report),
    }
}

fn read_target(r: &mut Reader, root: &Node, label: &str) -> Option<Target> {
    let m = r.map(root, "the target file", TOP_KEYS)?;
    let req = |r: &mut Reader, key: &str| -> Option<String> {
        match m.get(key) {
            Some(n) => r.string(n, key),
            None => {
                r.error(
                    root,
                    format!("missing key `{key}` in the target file"),
                    None,
                );
                None
            }
        }
    };
    let base = req(r, "base_url");
    let base_url = base.and_then(|b| match url::Url::parse(&b) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Some(u),
        _ => {
            let n = m.get("base_url").unwrap_or(root);
            r.error(
                n,
                format!("base_url `{b}` is not an absolute http(s) URL"),
                Some("https://host[:port]".into()),
            );
            None
        }
    });
    let subscription = req(r, "subscription");
    let namespace = req(r, "namespace");
    let api_version = req(r, "api_version");
    let location = m
        .get("location")
        .and_then(|n| r.string(n, "location"))
        .unwrap_or_else(|| "eastus".into());
    let deadline = m
        .get("deadline")
        .and_then(|n| r.u64(n, "deadline (seconds)"))
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(300));
    let auth = match m.get("auth") {
        None => Auth::None,
        Some(n) => read_auth(r, n).unwrap_or(Auth::None),
    };
    let secret_headers = m
        .get("secret_headers")
        .map(|n| {
            r.strings(n, "a header name")
                .into_iter()
                .map(|(s, _)| s.to_ascii_lowercase())
                .collect()
        })
        .unwrap_or_default();
    let mut headers = Vec::new();
    if let Some(n) = m.get("headers")
        && let Some(hm) = r.free_map(n, "headers")
    {
        for (k, v) in hm.entries() {
            let key = k
                .as_scalar()
                .map(|s| s.as_str().to_string())
                .unwrap_or_default();
            if let Some(val) = r.string(v, "a header value") {
                headers.push((key, val));
            }
        }
    }
    let identity = m.get("identity").and_then(|n| {
        let im = r.map(n, "identity", &["tenant", "client"])?;
        let t = im.get("tenant").and_then(|x| r.string(x, "tenant"));
        let c = im.get("client").and_then(|x| r.string(x, "client"));
        match (t, c) {
            (Some(t), Some(c)) => Some((t, c)),
            _ => {
                r.error(n, "identity needs both `tenant` and `client`", None);
                None
            }
        }
    });
    let resource_group = match m.get("resource_group") {
        Some(n) => read_rg(r, n),
        None => {
            r.error(
                root,
                "missing key `resource_group` in the target file",
                Some("resource_group: {name: my-rg}".into()),
            );
            None
        }
    };
    let mut types = Vec::new();
    match m.get("types").and_then(|n| r.free_map(n, "types")) {
        Some(tm) => {
            for (k, v) in tm.entries() {
                let name = k
                    .as_scalar()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                if let Some(t) = read_type(r, &name, v) {
                    types.push(t);
                }
            }
        }
        None => {
            if !m.has("types") {
                r.error(
                    root,
                    "missing key `types`: declare at least one resource type",
                    None,
                );
            }
        }
    }
    // Cross-references between types.
    if let Some(tm) = m.get("types").and_then(|n| n.as_mapping()) {
        for t in &types {
            for (key, refname) in [("parent", &t.parent), ("depends_on", &t.depends_on)] {
                if let Some(p) = refname
                    && !types.iter().any(|o| &o.name == p)
                {
                    let node = tm
                        .get_node(&t.name)
                        .and_then(|n| n.as_mapping())
                        .and_then(|mm| mm.get_node(key))
                        .cloned()
                        .unwrap_or_else(|| root.clone());
                    let names: Vec<&str> = types.iter().map(|o| o.name.as_str()).collect();
                    r.error(
                        &node,
                        format!("{key} `{p}` is not a declared type"),
                        Some(names.join(", ")),
                    );
                }
            }
        }
    }
    Some(Target {
        label: label.to_string(),
        base_url: base_url?,
        auth,
        secret_headers,
        headers,
        subscription: subscription?,
        resource_group: resource_group?,
        namespace: namespace?,
        api_version: api_version?,
        location,
        deadline,
        identity,
        types,
    })
}

fn read_auth(r: &mut Reader, n: &Node) -> Option<Auth> {
    if n.as_scalar().is_some_and(|s| s.as_str() == "none") {
        return Some(Auth::None);
    }
    let m = r.map(n, "auth", &["bearer_env", "command", "refresh"])?;
    let refresh = m
        .get("refresh")
        .and_then(|x| r.u64(x, "refresh (seconds)"))
        .unwrap_or(45 * 60);
    match (m.get("bearer_env"), m.get("command")) {
        (Some(e), None) => r.string(e, "bearer_env").map(Auth::BearerEnv),
        (None, Some(c)) => r.string(c, "command").map(|command| Auth::Command {
            command,
            refresh: Duration::from_secs(refresh),
        }),
        _ => {
            r.error(
                n,
                "auth needs exactly one of `bearer_env` or `command`",
                Some("auth: {bearer_env: RP_TOKEN}".into()),
            );
            None
        }
    }
}

fn read_rg(r: &mut Reader, n: &Node) -> Option<ResourceGroup> {
    let m = r.map(
        n,
        "resource_group",
        &["name", "create", "disposable", "api_version"],
    )?;
    let name = match m.get("name") {
        Some(x) => r.string(x, "name")?,
        None => {
            r.error(n, "resource_group needs a `name`", None);
            return None;
        }
    };
    Some(ResourceGroup {
        name,
        create: m
            .get("create")
            .and_then(|x| r.bool(x, "create"))
            .unwrap_or(false),
        disposable: m
            .get("disposable")
            .and_then(|x| r.bool(x, "disposable"))
            .unwrap_or(false),
        api_version: m
            .get("api_version")
            .and_then(|x| r.string(x, "api_version"))
            .unwrap_or_else(|| "2021-04-01".into()),
    })
}

fn read_type(r: &mut Reader, name: &str, n: &Node) -> Option<ResourceType> {
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
    let create_body = match object(r, "create_body") {
        Some(v) => v,
        None => {
            if !m.has("create_body") {
                r.error(n, format!("type `{name}` needs a `create_body`"), None);
            }
            return None;
        }
    };
    let invalid_bodies = m
        .get("invalid_bodies")
        .and_then(|x| r.seq(x, "invalid_bodies"))
        .map(|s| s.iter().map(to_json).collect())
        .unwrap_or_default();
    let mut actions = Vec::new();
    if let Some(list) = m.get("actions").and_then(|x| r.seq(x, "actions")) {
        for a in list {
            if let Some(act) = read_action(r, a) {
                actions.push(act);
            }
        }
    }
    let lro = match m.get("lro").and_then(|x| r.string(x, "lro")).as_deref() {
        None | Some("arm") => LroPattern::Arm,
        Some(other) => {
            r.error(
                m.get("lro").unwrap_or(n),
                format!("unknown lro pattern `{other}`"),
                Some("arm".into()),
            );
            LroPattern::Arm
        }
    };
    let asynchronous = flag(r, "async", true);
    Some(ResourceType {
        name: name.to_string(),
        segment: m
            .get("path")
            .and_then(|x| r.string(x, "path"))
            .unwrap_or_else(|| name.to_string()),
        parent: m.get("parent").and_then(|x| r.string(x, "parent")),
        depends_on: m.get("depends_on").and_then(|x| r.string(x, "depends_on")),
        kind,
        asynchronous,
        etag: flag(r, "etag", false),
        provisioning_state: flag(r, "provisioning_state", asynchronous),
        propagation: flag(r, "propagation", false),
        skus: flag(r, "skus", false),
        skus_empty: flag(r, "skus_empty", false),
        update_body: object(r, "update_body"),
        failing_body: object(r, "failing_body"),
        create_body,
        invalid_bodies,
        actions,
        lro,
    })
}

fn read_action(r: &mut Reader, n: &Node) -> Option<Action> {
    let m = r.map(n, "an action", &["name", "long_running", "body", "result"])?;
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
    Some(Action {
        name,
        long_running: m
            .get("long_running")
            .and_then(|x| r.bool(x, "long_running"))
            .unwrap_or(true),
        body: m
            .get("body")
            .map(to_json)
            .unwrap_or_else(|| Value::Object(Default::default())),
        result_status,
        result_pointer,
    })
}
