//! `monitors:` (TypeSpec Azure.Core status monitors on a data plane) and `tasks:` (a task-based
//! API) of a target file.

use marked_yaml::Node;

use crate::lro::FinalStateVia;
use crate::target::{Monitor, MonitorLink, RequestDecl, TaskApi};
use crate::yaml::{Reader, to_json};

pub(super) fn read_monitors(r: &mut Reader, n: &Node) -> Vec<Monitor> {
    let mut monitors = Vec::new();
    let Some(mm) = r.free_map(n, "monitors") else {
        return monitors;
    };
    for (k, v) in mm.entries() {
        let name = k
            .as_scalar()
            .map(|s| s.as_str().to_string())
            .unwrap_or_default();
        if let Some(mon) = read_monitor(r, &name, v) {
            monitors.push(mon);
        }
    }
    let names: Vec<String> = monitors.iter().map(|x| x.name.clone()).collect();
    for mon in &monitors {
        if let Some(p) = &mon.prerequisite
            && !names.contains(p)
        {
            r.error(
                n,
                format!(
                    "prerequisite `{p}` of `{}` is not a declared monitor",
                    mon.name
                ),
                Some(names.join(", ")),
            );
        }
    }
    monitors
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
    "cancel",
    "poll_api_version",
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
    let final_state_via = match m.get("final_state_via") {
        None => FinalStateVia::OperationLocation,
        Some(x) => {
            let s = r.string(x, "final_state_via").unwrap_or_default();
            FinalStateVia::from_name(&s).unwrap_or_else(|| {
                r.error(
                    x,
                    format!("unknown final_state_via `{s}`"),
                    Some(FinalStateVia::NAMES.join(", ")),
                );
                FinalStateVia::OperationLocation
            })
        }
    };
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
        // `none`: the service sends no operation-id header (TypeSpec Azure.Core templates).
        operation_id_header: match text(r, "operation_id_header", "Operation-Id") {
            h if h.eq_ignore_ascii_case("none") => None,
            h => Some(h),
        },
        prerequisite: m
            .get("prerequisite")
            .and_then(|x| r.string(x, "prerequisite")),
        cancel: match m.get("cancel") {
            Some(x) => Some(read_request(r, x, "cancel")?),
            None => None,
        },
        poll_api_version_append: match m.get("poll_api_version") {
            None => false,
            Some(x) => match r.string(x, "poll_api_version").as_deref() {
                Some("append") => true,
                Some("as_given") => false,
                Some(other) => {
                    r.error(
                        x,
                        format!("poll_api_version `{other}` is neither `append` nor `as_given`"),
                        Some("append, as_given".into()),
                    );
                    false
                }
                None => false,
            },
        },
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

pub(super) fn read_tasks(r: &mut Reader, n: &Node) -> Option<TaskApi> {
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
