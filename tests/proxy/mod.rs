//! A proxy in front of the reference RP, on 127.0.0.1, with one misbehaviour: it throttles
//! (429 with Retry-After) one request in N, or answers DELETE 200 without deleting anything,
//! or creates a resource on PUT and then never answers in time. Everything else is forwarded
//! as is (the Host header kept, so the RP's links point back at the proxy). Every request is
//! logged (method, path) for assertions.
//!
//! Also a fake ARM subscription for `cleanup --sweep-tagged`: resource groups with tags, a
//! list, GET and DELETE, nothing else.

#![allow(dead_code)] // each test binary uses a different subset

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};

#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// Forward everything.
    Plain,
    /// Every Nth request answers 429 with `Retry-After: 1` (not forwarded).
    ThrottleEvery(u64),
    /// DELETE answers 200 and nothing is deleted.
    DeleteKeeps,
    /// The first PUT of a resource (under `/providers/`) is forwarded (it creates the
    /// resource), then its answer waits this long.
    PutHangs(Duration),
}

struct Shared {
    mode: Mode,
    upstream: String,
    client: reqwest::Client,
    n: AtomicU64,
    hung: AtomicU64,
    log: Mutex<Vec<(String, String, u16)>>,
}

/// A running proxy (or fake subscription); stopped when dropped.
pub struct Proxy {
    pub addr: SocketAddr,
    shared: Option<Arc<Shared>>,
    groups: Option<Arc<Mutex<Groups>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request seen: method, path and query, the status answered.
    pub fn seen(&self) -> Vec<(String, String, u16)> {
        match &self.shared {
            Some(s) => s.log.lock().unwrap().clone(),
            None => self.groups.as_ref().unwrap().lock().unwrap().log.clone(),
        }
    }

    /// A proxy in front of `upstream` (the reference RP's base URL).
    pub fn start(upstream: &str, mode: Mode) -> Proxy {
        let shared = Arc::new(Shared {
            mode,
            upstream: upstream.trim_end_matches('/').to_string(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            n: AtomicU64::new(0),
            hung: AtomicU64::new(0),
            log: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(shared.clone());
        let (addr, stop, thread) = serve(app);
        Proxy {
            addr,
            shared: Some(shared),
            groups: None,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// A fake subscription holding these resource groups (name → tags).
    pub fn subscription(groups: Vec<(String, serde_json::Value)>) -> Proxy {
        let g = Arc::new(Mutex::new(Groups {
            groups: groups.into_iter().collect(),
            log: Vec::new(),
        }));
        let app = axum::Router::new().fallback(fake_arm).with_state(g.clone());
        let (addr, stop, thread) = serve(app);
        Proxy {
            addr,
            shared: None,
            groups: Some(g),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The resource groups still there (fake subscription).
    pub fn groups(&self) -> Vec<String> {
        self.groups
            .as_ref()
            .map(|g| g.lock().unwrap().groups.keys().cloned().collect())
            .unwrap_or_default()
    }
}

fn serve(
    app: axum::Router,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    std::thread::JoinHandle<()>,
) {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let server = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            let _ = server.await;
        });
        rt.shutdown_timeout(Duration::from_millis(100));
    });
    (addr, stop, thread)
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    for (k, v) in headers {
        r.headers_mut().append(
            axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    r
}

async fn forward(State(s): State<Arc<Shared>>, req: Request<Body>) -> Response<Body> {
    let n = s.n.fetch_add(1, Ordering::SeqCst) + 1;
    let method = req.method().clone();
    let target = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let headers: HeaderMap = req.headers().clone();
    let body: Bytes = axum::body::to_bytes(req.into_body(), 16 << 20)
        .await
        .unwrap_or_default();
    let log = |status: u16| {
        s.log
            .lock()
            .unwrap()
            .push((method.to_string(), target.clone(), status));
    };
    let resource = target.to_ascii_lowercase().contains("/providers/");
    match s.mode {
        Mode::ThrottleEvery(k) if n % k == 0 => {
            log(429);
            return answer(
                429,
                &[("retry-after", "1"), ("content-type", "application/json")],
                r#"{"error":{"code":"TooManyRequests","message":"throttled by the test proxy"}}"#,
            );
        }
        Mode::DeleteKeeps if method == Method::DELETE => {
            log(200);
            return answer(200, &[], "");
        }
        _ => {}
    }
    let mut out = s
        .client
        .request(method.clone(), format!("{}{target}", s.upstream))
        .body(body);
    for (k, v) in headers.iter() {
        if k == "content-length" || k == "transfer-encoding" || k == "connection" {
            continue;
        }
        out = out.header(k, v);
    }
    let resp = match out.send().await {
        Ok(r) => r,
        Err(e) => {
            log(502);
            return answer(502, &[], &format!("proxy: {e}"));
        }
    };
    let status = resp.status().as_u16();
    let rh = resp.headers().clone();
    let bytes = resp.bytes().await.unwrap_or_default();
    if let Mode::PutHangs(d) = s.mode
        && method == Method::PUT
        && resource
        && s.hung.fetch_add(1, Ordering::SeqCst) == 0
    {
        tokio::time::sleep(d).await;
    }
    log(status);
    let mut r = Response::new(Body::from(bytes));
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    for (k, v) in rh.iter() {
        if k == "content-length" || k == "transfer-encoding" || k == "connection" {
            continue;
        }
        r.headers_mut().append(k.clone(), v.clone());
    }
    r
}

struct Groups {
    groups: BTreeMap<String, serde_json::Value>,
    log: Vec<(String, String, u16)>,
}

/// `GET .../resourcegroups` (a list with tags), `GET`/`DELETE .../resourceGroups/{name}`.
async fn fake_arm(State(g): State<Arc<Mutex<Groups>>>, req: Request<Body>) -> Response<Body> {
    let method = req.method().clone();
    let target = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let path = req.uri().path().to_string();
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let mut g = g.lock().unwrap();
    let (status, body) = match (method.clone(), segs.as_slice()) {
        (Method::GET, ["subscriptions", sub, rgs])
            if rgs.eq_ignore_ascii_case("resourcegroups") =>
        {
            let value: Vec<serde_json::Value> = g
                .groups
                .iter()
                .map(|(name, tags)| {
                    let mut v = serde_json::json!({
                        "id": format!("/subscriptions/{sub}/resourceGroups/{name}"),
                        "name": name,
                        "location": "eastus",
                    });
                    if !tags.is_null() {
                        v["tags"] = tags.clone();
                    }
                    v
                })
                .collect();
            (200, serde_json::json!({ "value": value }).to_string())
        }
        (Method::GET, ["subscriptions", _, _, name]) => match g.groups.get(*name) {
            Some(_) => (200, serde_json::json!({"name": name}).to_string()),
            None => (
                404,
                r#"{"error":{"code":"ResourceGroupNotFound","message":"gone"}}"#.into(),
            ),
        },
        (Method::DELETE, ["subscriptions", _, _, name]) => {
            let existed = g.groups.remove(*name).is_some();
            (if existed { 200 } else { 204 }, String::new())
        }
        _ => (
            404,
            r#"{"error":{"code":"NotFound","message":"no such route"}}"#.into(),
        ),
    };
    g.log.push((method.to_string(), target, status));
    answer(status, &[("content-type", "application/json")], &body)
}
