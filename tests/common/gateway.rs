//! A gateway in front of an RP, as RP teams put one in front of a dev box: it serves the RP
//! under a path prefix (`/rp/v1/...` → `/...`), passes every header and body on unchanged (the
//! `Referer` too: the RP builds its links from it), and logs each request it passed
//! (`METHOD path-and-query referer=...` as the client sent it). Anything outside the prefix answers 404.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// A running gateway; dropped, it stops.
pub struct Gateway {
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
    _rt: tokio::runtime::Runtime,
}

impl Gateway {
    /// Every request passed on, `METHOD path?query referer=R` as the client sent it (`-`:
    /// no Referer).
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

#[derive(Clone)]
struct Gw {
    prefix: String,
    upstream: String,
    client: reqwest::Client,
    log: Arc<Mutex<Vec<String>>>,
    /// A method the gateway answers itself with a 500 (an ARM error body), never passing it on.
    refuse: Option<String>,
}

async fn pass(
    State(gw): State<Gw>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let pq = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let lower = pq.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix(&gw.prefix)
        .filter(|r| r.is_empty() || r.starts_with('/') || r.starts_with('?'))
        .map(|r| &pq[pq.len() - r.len()..])
    else {
        return (StatusCode::NOT_FOUND, "not under the gateway's prefix").into_response();
    };
    let referer = headers
        .get("referer")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    gw.log
        .lock()
        .unwrap()
        .push(format!("{method} {pq} referer={referer}"));
    if gw.refuse.as_deref() == Some(method.as_str()) {
        let body = r#"{"error":{"code":"InternalServerError","message":"the gateway refuses this method"}}"#;
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            [("content-type", "application/json")],
            body,
        )
            .into_response();
    }
    let rest = if rest.starts_with('/') {
        rest.to_string()
    } else {
        format!("/{rest}")
    };
    let mut req = gw.client.request(
        reqwest::Method::from_bytes(method.as_str().as_bytes()).unwrap(),
        format!("{}{rest}", gw.upstream),
    );
    for (k, v) in &headers {
        if k != "host" && k != "content-length" {
            req = req.header(k.as_str(), v.as_bytes());
        }
    }
    let Ok(up) = req.body(body.to_vec()).send().await else {
        return (StatusCode::BAD_GATEWAY, "upstream unreachable").into_response();
    };
    let status = StatusCode::from_u16(up.status().as_u16()).unwrap();
    let mut out = HeaderMap::new();
    for (k, v) in up.headers() {
        if k != "content-length" && k != "transfer-encoding" {
            out.append(
                axum::http::HeaderName::from_bytes(k.as_str().as_bytes()).unwrap(),
                axum::http::HeaderValue::from_bytes(v.as_bytes()).unwrap(),
            );
        }
    }
    let body = up.bytes().await.unwrap_or_default();
    (status, out, body).into_response()
}

/// Serve `upstream` (`http://127.0.0.1:PORT`) under `prefix` (`/rp/v1`, matched without
/// letter case) on a port of 127.0.0.1.
pub fn start(upstream: &str, prefix: &str) -> Gateway {
    start_refusing(upstream, prefix, None)
}

/// [`start`], answering every request of `refuse` (`DELETE`) with a 500 itself.
pub fn start_refusing(upstream: &str, prefix: &str, refuse: Option<&str>) -> Gateway {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let gw = Gw {
        prefix: prefix.trim_end_matches('/').to_ascii_lowercase(),
        upstream: upstream.trim_end_matches('/').to_string(),
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        log: log.clone(),
        refuse: refuse.map(str::to_string),
    };
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new().fallback(pass).with_state(gw);
    rt.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Gateway { port, log, _rt: rt }
}
