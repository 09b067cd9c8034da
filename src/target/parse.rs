//! Reading a target file (YAML) into a [`Target`], with every mistake positioned.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use marked_yaml::Node;
use serde_json::Value;

use super::{
    Action, Auth, Kind, LroPattern, Monitor, MonitorLink, RequestDecl, ResourceGroup, ResourceType,
    Target, TaskApi,
};
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
    "monitors",
    "tasks",
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
    let text = match crate::yaml::read_text(path, crate::yaml::MAX_SOURCE_BYTES) {
        Ok(t) => t,
        Err(e) => {
            let file: Arc<Path> = Arc::from(path);
            report.push(Diagnostic::new(
                crate::diag::Pos::new(&file, e.line, e.col),
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
    let mut monitors = Vec::new();
    if let Some(mm) = m.get("monitors").and_then(|n| r.free_map(n, "monitors")) {
        for (k, v) in mm.entries() {
            let name = k
                .as_scalar()
                .map(|s| s.as_str().to_string())
                .unwrap_or_default();
            if let Some(mon) = read_monitor(r, &name, v) {
                monitors.push(mon);
            }
        }
    }
    let names: Vec<String> = monitors.iter().map(|x| x.name.clone()).collect();
    if let Some(mn) = m.get("monitors") {
        for mon in &monitors {
            if let Some(p) = &mon.prerequisite
                && !names.contains(p)
            {
                r.error(
                    mn,
                    format!(
                        "prerequisite `{p}` of `{}` is not a declared monitor",
                        mon.name
                    ),
                    Some(names.join(", ")),
                );
            }
        }
    }
    let tasks = m.get("tasks").and_then(|n| read_tasks(r, n));
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
            if !m.has("types") && !m.has("monitors") && !m.has("tasks") {
                r.error(
                    root,
                    "declare at least one of `types`, `monitors` or `tasks`",
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
        monitors,
        tasks,
    })
}

fn read_auth(r: &mut Reader, n: &Node) -> Option<Auth> {
    crate::http::parse_auth(r, n)
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

fn read_request(r: &mut Reader, n: &Node, what: &str) -> Option<RequestDecl> {
    let m = r.map(n, what, &["method", "url", "body"])?;
    let url = match m.get("url") {
        Some(u) => r.string(u, "url")?,
        None => {
            r.error(n, format!("{what} needs a `url`"), None);
            return None;
        }
    };
    Some(RequestDecl {
        method: m
            .get("method")
            .and_then(|x| r.string(x, "method"))
            .unwrap_or_else(|| "GET".into())
            .to_ascii_uppercase(),
        url,
        body: m.get("body").map(to_json),
    })
}

const MONITOR_KEYS: &[&str] = &[
    "request",
    "failing_body",
    "api_version",
    "link",
    "status_field",
    "succeeded",
    "failed",
    "canceled",
    "result_field",
    "error_field",
    "final_state_via",
    "operation_id_header",
    "prerequisite",
];

fn read_monitor(r: &mut Reader, name: &str, n: &Node) -> Option<Monitor> {
    let m = r.map(n, &format!("monitor `{name}`"), MONITOR_KEYS)?;
    let request = match m.get("request") {
        Some(x) => read_request(r, x, "request")?,
        None => {
            r.error(n, format!("monitor `{name}` needs a `request`"), None);
            return None;
        }
    };
    let link = match m.get("link").and_then(|x| r.string(x, "link")).as_deref() {
        None | Some("operation-location") => MonitorLink::OperationLocation,
        Some("location") => MonitorLink::Location,
        Some("azure-async-operation") => MonitorLink::AzureAsyncOperation,
        Some(other) => {
            let at = m.get("link").unwrap_or(n);
            r.error(
                at,
                format!("unknown link `{other}`"),
                Some("operation-location, location or azure-async-operation".into()),
            );
            MonitorLink::OperationLocation
        }
    };
    let names = |r: &mut Reader, key: &str, default: &str| -> Vec<String> {
        m.get(key)
            .map(|x| {
                r.strings(x, "a status name")
                    .into_iter()
                    .map(|(s, _)| s)
                    .collect()
            })
            .unwrap_or_else(|| vec![default.to_string()])
    };
    let final_state_via = m
        .get("final_state_via")
        .and_then(|x| r.string(x, "final_state_via"))
        .unwrap_or_else(|| "operation-location".into());
    if ![
        "location",
        "operation-location",
        "azure-async-operation",
        "original-uri",
    ]
    .contains(&final_state_via.as_str())
    {
        let at = m.get("final_state_via").unwrap_or(n);
        r.error(
            at,
            format!("unknown final_state_via `{final_state_via}`"),
            Some("location, operation-location, azure-async-operation or original-uri".into()),
        );
    }
    let result_field = match m.get("result_field") {
        Some(x)
            if x.as_scalar()
                .is_some_and(|s| s.may_coerce() && matches!(s.as_str(), "null" | "~" | "")) =>
        {
            None
        }
        Some(x) => r.string(x, "result_field"),
        None => Some("result".into()),
    };
    let text = |r: &mut Reader, key: &str, default: &str| {
        m.get(key)
            .and_then(|x| r.string(x, key))
            .unwrap_or_else(|| default.to_string())
    };
    Some(Monitor {
        name: name.to_string(),
        request,
        failing_body: m.get("failing_body").map(to_json),
        api_version: m
            .get("api_version")
            .and_then(|x| r.string(x, "api_version")),
        link,
        status_field: text(r, "status_field", "status"),
        succeeded: names(r, "succeeded", "Succeeded"),
        failed: names(r, "failed", "Failed"),
        canceled: names(r, "canceled", "Canceled"),
        result_field,
        error_field: text(r, "error_field", "error"),
        final_state_via,
        operation_id_header: text(r, "operation_id_header", "Operation-Id"),
        prerequisite: m
            .get("prerequisite")
            .and_then(|x| r.string(x, "prerequisite")),
    })
}

const TASK_KEYS: &[&str] = &[
    "create",
    "update",
    "delete",
    "failing_processing_body",
    "failing_provisioning_body",
    "task_url",
    "tasks_url",
    "resource_url",
    "task_id_field",
    "status_field",
    "task_states",
    "resource_id_pointer",
    "task_error_pointer",
    "resource_status_field",
    "resource_states",
    "resource_error_pointer",
];

fn read_tasks(r: &mut Reader, n: &Node) -> Option<TaskApi> {
    let m = r.map(n, "tasks", TASK_KEYS)?;
    let req = |r: &mut Reader, key: &str| -> Option<RequestDecl> {
        match m.get(key) {
            Some(x) => read_request(r, x, key),
            None => {
                r.error(n, format!("tasks needs `{key}`"), None);
                None
            }
        }
    };
    let create = req(r, "create");
    let delete = req(r, "delete");
    let update = m.get("update").and_then(|x| read_request(r, x, "update"));
    let string = |r: &mut Reader, key: &str, default: Option<&str>| -> Option<String> {
        match (m.get(key), default) {
            (Some(x), _) => r.string(x, key),
            (None, Some(d)) => Some(d.to_string()),
            (None, None) => {
                r.error(n, format!("tasks needs `{key}`"), None);
                None
            }
        }
    };
    let four = |r: &mut Reader, key: &str, names: [&str; 4]| -> [String; 4] {
        let mut out = names.map(str::to_string);
        if let Some(x) = m.get(key)
            && let Some(sm) = r.map(x, key, &names)
        {
            for (i, k) in names.iter().enumerate() {
                if let Some(v) = sm.get(k).and_then(|y| r.string(y, k)) {
                    out[i] = v;
                }
            }
        }
        out
    };
    let task_states = four(
        r,
        "task_states",
        [
            "received",
            "processing-in-progress",
            "processing-completed",
            "processing-error",
        ],
    );
    let resource_states = four(
        r,
        "resource_states",
        ["pending", "active", "deleting", "error"],
    );
    Some(TaskApi {
        create: create?,
        update,
        delete: delete?,
        failing_processing_body: m.get("failing_processing_body").map(to_json),
        failing_provisioning_body: m.get("failing_provisioning_body").map(to_json),
        task_url: string(r, "task_url", None)?,
        tasks_url: m.get("tasks_url").and_then(|x| r.string(x, "tasks_url")),
        resource_url: string(r, "resource_url", None)?,
        task_id_field: string(r, "task_id_field", Some("taskId"))?,
        status_field: string(r, "status_field", Some("status"))?,
        task_states,
        resource_id_pointer: string(r, "resource_id_pointer", Some("/response/resourceId"))?,
        task_error_pointer: string(r, "task_error_pointer", Some("/response/error/description"))?,
        resource_status_field: string(r, "resource_status_field", Some("status"))?,
        resource_states,
        resource_error_pointer: string(r, "resource_error_pointer", Some("/error/description"))?,
    })
}
