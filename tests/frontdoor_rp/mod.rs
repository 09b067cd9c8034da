//! An independent RP for the front-door tests, written apart from the reference RP: one
//! tracked type, `Microsoft.Indie/gizmos`, with an asynchronous PUT (201/200 with
//! Azure-AsyncOperation), GET, a paged list, a DELETE answered 202 with Location, and the
//! operation endpoints. Operations end when they have been read (a count, not a clock). How it
//! builds its links, whether it takes ARM's system data and whom it answers an operation to is
//! the [`Mode`]; each non-conforming mode is one defect an RP team makes before ARM fronts it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub const NAMESPACE: &str = "Microsoft.Indie";
pub const API_VERSION: &str = "2025-01-01";

/// What the RP does (conforming, or one defect).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// Links from the Referer, systemData from ARM's header, operations only to their caller.
    Conforming,
    /// Location, Azure-AsyncOperation and nextLink built from the Host it was called on.
    LinksFromHost,
    /// systemData of its own making; ARM's header ignored.
    IgnoresSystemData,
    /// Operation reads answered to anyone.
    AnswersAnyTenant,
}

#[derive(Default)]
struct Store {
    /// Resource groups that exist (lowercase paths): a deleted one reads 404, as ARM's does,
    /// so a run's cleanup sees its group gone instead of waiting out the deadline.
    groups: std::collections::HashSet<String>,
    gizmos: HashMap<String, Value>,
    /// Operation id → (status, reads left until it ends, tenant, caller, what it deletes).
    ops: HashMap<String, Op>,
    next: u64,
}

struct Op {
    sub: String,
    status: &'static str,
    reads_left: u32,
    tenant: Option<String>,
    caller: Option<String>,
    deletes: Option<String>,
    start: String,
}

struct Rp {
    mode: Mode,
    store: Mutex<Store>,
}

/// A running RP; stopped when dropped.
pub struct IndieRp {
    pub port: u16,
    _rt: tokio::runtime::Runtime,
}

pub fn start(mode: Mode) -> IndieRp {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rp = Arc::new(Rp {
        mode,
        store: Mutex::new(Store::default()),
    });
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new().fallback(handle).with_state(rp);
    rt.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    IndieRp { port, _rt: rt }
}

/// The target file for it, at `base`, with `extra` lines appended.
pub fn target(base: &str, extra: &str) -> String {
    format!(
        "base_url: {base}\nauth: none\nsubscription: 00000000-0000-0000-0000-0000000011de\n\
         resource_group: {{name: indie, create: true}}\nprofiles: [arm]\n\
         namespace: {NAMESPACE}\napi_version: \"{API_VERSION}\"\nlocation: eastus\ndeadline: 30\n\
         types:\n  gizmos:\n    kind: tracked\n    async: true\n    etag: false\n\
         \x20   create_body: {{location: eastus, properties: {{size: 1}}}}\n{extra}"
    )
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// `scheme://authority` links are built on.
fn base(rp: &Rp, h: &HeaderMap) -> String {
    let host = header(h, "host").unwrap_or_else(|| "localhost".into());
    let from_host = format!("http://{host}");
    if rp.mode == Mode::LinksFromHost {
        return from_host;
    }
    header(h, "referer")
        .and_then(|r| url::Url::parse(&r).ok())
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or(from_host)
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    json_reply(
        status,
        json!({"error": {"code": code, "message": message}}),
        &[],
    )
}

fn json_reply(status: StatusCode, body: Value, headers: &[(&str, String)]) -> Response {
    let mut r = (status, body.to_string()).into_response();
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static("application/json"));
    for (k, v) in headers {
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v);
        }
    }
    r
}

/// A value no other call gives (a counter and the clock).
fn unique() -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{t:x}{n:x}")
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

async fn handle(
    State(rp): State<Arc<Rp>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut r = route(&rp, &method, &uri, &headers, &body);
    let id = format!("indie-{}", unique());
    r.headers_mut()
        .insert("x-ms-request-id", HeaderValue::from_str(&id).unwrap());
    if let Some(c) = headers.get("x-ms-correlation-request-id") {
        r.headers_mut()
            .insert("x-ms-correlation-request-id", c.clone());
    }
    r
}

fn route(rp: &Rp, method: &Method, uri: &Uri, h: &HeaderMap, body: &Bytes) -> Response {
    let path = uri.path().trim_end_matches('/').to_string();
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let lower: Vec<String> = segs.iter().map(|s| s.to_ascii_lowercase()).collect();
    let api = uri
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|p| p.strip_prefix("api-version="))
        .unwrap_or("");
    match lower
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["subscriptions", _, "resourcegroups", _] => group(rp, method, &path),
        [
            "subscriptions",
            _,
            "providers",
            ns,
            "locations",
            _,
            kind,
            op,
        ] if ns.eq_ignore_ascii_case(NAMESPACE) => operation(rp, h, kind, op),
        [
            "subscriptions",
            _,
            "resourcegroups",
            _,
            "providers",
            ns,
            "gizmos",
            ..,
        ] if ns.eq_ignore_ascii_case(NAMESPACE) && api != API_VERSION => {
            if api.is_empty() {
                error(
                    StatusCode::BAD_REQUEST,
                    "MissingApiVersionParameter",
                    "api-version is required",
                )
            } else {
                error(
                    StatusCode::BAD_REQUEST,
                    "InvalidApiVersionParameter",
                    "unsupported api-version",
                )
            }
        }
        [
            "subscriptions",
            _,
            "resourcegroups",
            _,
            "providers",
            _,
            "gizmos",
        ] => list(rp, h, uri),
        [
            "subscriptions",
            _,
            "resourcegroups",
            _,
            "providers",
            _,
            "gizmos",
            _,
        ] => gizmo(rp, method, h, &segs, body),
        _ => error(StatusCode::NOT_FOUND, "NotFound", "no such route"),
    }
}

fn group(rp: &Rp, method: &Method, path: &str) -> Response {
    let name = path.rsplit('/').next().unwrap_or("");
    let key = path.to_ascii_lowercase();
    let mut s = rp.store.lock().unwrap();
    match *method {
        Method::PUT => {
            let created = s.groups.insert(key);
            json_reply(
                if created {
                    StatusCode::CREATED
                } else {
                    StatusCode::OK
                },
                json!({"id": path, "name": name, "location": "eastus", "properties": {"provisioningState": "Succeeded"}}),
                &[],
            )
        }
        Method::GET if s.groups.contains(&key) => json_reply(
            StatusCode::OK,
            json!({"id": path, "name": name, "location": "eastus"}),
            &[],
        ),
        Method::GET => error(
            StatusCode::NOT_FOUND,
            "ResourceGroupNotFound",
            "no such resource group",
        ),
        Method::DELETE => {
            if !s.groups.remove(&key) {
                return StatusCode::NO_CONTENT.into_response();
            }
            // A group's delete takes what is in it.
            let inside = format!("{key}/");
            s.gizmos
                .retain(|k, _| !k.to_ascii_lowercase().starts_with(&inside));
            StatusCode::OK.into_response()
        }
        _ => error(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed", "no"),
    }
}

fn op_url(base: &str, sub: &str, kind: &str, id: &str) -> String {
    format!(
        "{base}/subscriptions/{sub}/providers/{NAMESPACE}/locations/eastus/{kind}/{id}?api-version={API_VERSION}"
    )
}

fn system_data(rp: &Rp, h: &HeaderMap, old: Option<&Value>) -> Value {
    if rp.mode == Mode::IgnoresSystemData {
        let t = now();
        return json!({"createdBy": "indie-rp", "createdByType": "Application", "createdAt": t,
                      "lastModifiedBy": "indie-rp", "lastModifiedByType": "Application", "lastModifiedAt": t});
    }
    let sent: Value = header(h, "x-ms-arm-resource-system-data")
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(json!({}));
    let mut out = sent.clone();
    if let Some(old) = old.and_then(|o| o.get("systemData")) {
        for k in ["createdBy", "createdByType", "createdAt"] {
            out[k] = old[k].clone();
        }
    }
    out
}

fn gizmo(rp: &Rp, method: &Method, h: &HeaderMap, segs: &[&str], body: &Bytes) -> Response {
    let id = format!("/{}", segs.join("/"));
    let key = id.to_ascii_lowercase();
    let (sub, name) = (segs[1].to_string(), segs[7].to_string());
    let base = base(rp, h);
    let mut s = rp.store.lock().unwrap();
    match *method {
        Method::GET => match s.gizmos.get(&key) {
            Some(g) => json_reply(StatusCode::OK, g.clone(), &[]),
            None => error(StatusCode::NOT_FOUND, "ResourceNotFound", "no such gizmo"),
        },
        Method::PUT => {
            let Ok(sent) = serde_json::from_slice::<Value>(body) else {
                return error(StatusCode::BAD_REQUEST, "InvalidRequestContent", "not JSON");
            };
            let old = s.gizmos.get(&key).cloned();
            let created = old.is_none();
            let g = json!({
                "id": id, "name": name, "type": format!("{NAMESPACE}/gizmos"),
                "location": sent["location"], "tags": sent.get("tags").cloned().unwrap_or(json!({})),
                "systemData": system_data(rp, h, old.as_ref()),
                "properties": {"size": sent["properties"]["size"], "provisioningState": "Accepted"},
            });
            let op = start_op(&mut s, h, &sub, None);
            let mut done = g.clone();
            done["properties"]["provisioningState"] = json!("Succeeded");
            s.gizmos.insert(key, done);
            let status = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            let aao = op_url(&base, &sub, "operationStatuses", &op);
            json_reply(
                status,
                g,
                &[("Azure-AsyncOperation", aao), ("Retry-After", "10".into())],
            )
        }
        Method::DELETE => {
            if s.gizmos.remove(&key).is_none() {
                return StatusCode::NO_CONTENT.into_response();
            }
            let op = start_op(&mut s, h, &sub, Some(key));
            let loc = op_url(&base, &sub, "operationResults", &op);
            let mut r = StatusCode::ACCEPTED.into_response();
            r.headers_mut()
                .insert("location", HeaderValue::from_str(&loc).unwrap());
            r.headers_mut()
                .insert("retry-after", HeaderValue::from_static("10"));
            r
        }
        _ => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "not here",
        ),
    }
}

fn start_op(s: &mut Store, h: &HeaderMap, sub: &str, deletes: Option<String>) -> String {
    s.next += 1;
    let id = format!("op-{:08}-{}", s.next, unique());
    s.ops.insert(
        id.clone(),
        Op {
            sub: sub.to_string(),
            status: "InProgress",
            reads_left: 2,
            tenant: header(h, "x-ms-home-tenant-id"),
            caller: header(h, "x-ms-client-object-id"),
            deletes,
            start: now(),
        },
    );
    id
}

fn operation(rp: &Rp, h: &HeaderMap, kind: &str, id: &str) -> Response {
    let mut s = rp.store.lock().unwrap();
    let Some(op) = s.ops.get_mut(id) else {
        return error(
            StatusCode::NOT_FOUND,
            "OperationNotFound",
            "no such operation",
        );
    };
    let visible = rp.mode == Mode::AnswersAnyTenant
        || (op.tenant == header(h, "x-ms-home-tenant-id")
            && op.caller == header(h, "x-ms-client-object-id"));
    if !visible {
        return error(
            StatusCode::NOT_FOUND,
            "OperationNotFound",
            "no such operation",
        );
    }
    if op.status == "InProgress" {
        if op.reads_left == 0 {
            op.status = "Succeeded";
        } else {
            op.reads_left -= 1;
        }
    }
    let end = (op.status != "InProgress").then(now);
    if kind == "operationresults" {
        if op.status == "InProgress" {
            let mut r = StatusCode::ACCEPTED.into_response();
            r.headers_mut()
                .insert("retry-after", HeaderValue::from_static("10"));
            let loc = op_url(&base(rp, h), &op.sub, "operationResults", id);
            r.headers_mut()
                .insert("location", HeaderValue::from_str(&loc).unwrap());
            return r;
        }
        op.deletes = None;
        return StatusCode::NO_CONTENT.into_response();
    }
    let mut body = json!({"id": format!("/subscriptions/{}/providers/{NAMESPACE}/locations/eastus/operationStatuses/{id}", op.sub),
                          "name": id, "status": op.status, "startTime": op.start});
    if let Some(e) = end {
        body["endTime"] = json!(e);
    }
    json_reply(StatusCode::OK, body, &[("Retry-After", "10".into())])
}

fn list(rp: &Rp, h: &HeaderMap, uri: &Uri) -> Response {
    let s = rp.store.lock().unwrap();
    let prefix = uri.path().to_ascii_lowercase();
    let mut items: Vec<&Value> = s
        .gizmos
        .iter()
        .filter(|(k, _)| k.starts_with(&prefix))
        .map(|(_, v)| v)
        .collect();
    items.sort_by_key(|v| v["name"].as_str().unwrap_or("").to_ascii_lowercase());
    // The continuation token is the last name returned, not a position: other tests create and
    // delete in the same group while a list pages, and a position would skip a resource that
    // stayed put the whole time.
    let after = uri
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|p| p.strip_prefix("$skipToken="))
        .map(str::to_string);
    let rest: Vec<&Value> = items
        .into_iter()
        .filter(|v| match &after {
            Some(a) => v["name"].as_str().unwrap_or("").to_ascii_lowercase() > *a,
            None => true,
        })
        .collect();
    let page: Vec<Value> = rest.iter().take(1).map(|v| (*v).clone()).collect();
    let mut body = json!({"value": page});
    if rest.len() > 1 {
        let last = page[0]["name"].as_str().unwrap_or("").to_ascii_lowercase();
        body["nextLink"] = json!(format!(
            "{}{}?api-version={API_VERSION}&$skipToken={last}",
            base(rp, h),
            uri.path(),
        ));
    }
    json_reply(StatusCode::OK, body, &[])
}
