//! A hostile HTTP/1.1 server for tests: raw tokio sockets and hand-written responses, so it
//! can do what no well-behaved framework would (answer nothing, trickle a body forever, reset a
//! connection mid-body, announce 1 GiB, send invalid UTF-8 in a header, duplicate headers...).
//!
//! It serves ARM-shaped paths for a target file with one tracked type `things` in namespace
//! `Microsoft.Hostile` (see [`target_yaml`]); one [`Mode`] per server decides how it misbehaves.
//! Requests that the mode does not concern get plausible answers (DELETE 204, GET of the
//! resource 200), so a run ends quickly once the hostile part has been seen. Every request
//! (method, target, headers) is logged for assertions such as "no Authorization header was
//! sent to this host". Listens only on 127.0.0.0/8. [`run_bounded`] runs the `rpconform` binary
//! under a wall-clock and memory bound, measuring its peak memory.

#![allow(dead_code)] // each test binary uses a different subset

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::common::http::{Request, read_request};

/// A run of the binary that outlives this is killed and its test fails.
pub const WALL_CLOCK: Duration = Duration::from_secs(60);
/// Resident memory at which a run is killed at once (protects the machine).
pub const MEMORY_KILL_KB: u64 = 1024 * 1024;

pub const SUBSCRIPTION: &str = "00000000-0000-0000-0000-00000000beef";
pub const NAMESPACE: &str = "Microsoft.Hostile";
pub const API_VERSION: &str = "2024-01-01";

/// How the server misbehaves. "PUT" means the PUT of a `things` resource; "Location" and
/// "operation" are the poll URLs the server hands out (`.../operationresults/...` and
/// `.../operationStatuses/...`).
#[derive(Debug, Clone)]
pub enum Mode {
    /// PUT: read the request, never answer.
    HangPut,
    /// PUT answers 202 + Location; Location never answers.
    HangPoll,
    /// PUT: status line and headers (Content-Length 1 MB), then one body byte every 200 ms.
    TricklePut,
    /// PUT: headers announcing 100 000 bytes, 1 000 of them, then a TCP reset.
    ResetPut,
    /// PUT: `Content-Length: 1073741824` (1 GiB), a few bytes, then the socket is held open.
    Announce1GiB,
    /// PUT: a chunked body that never ends (64 KiB chunks as fast as the client reads).
    ChunkedForever,
    /// PUT: 201 with a body that is not JSON.
    InvalidJson,
    /// PUT: 201 with JSON nested 100 000 arrays deep.
    DeepJson,
    /// Every answer with the resource (PUT 201, GET 200): a valid envelope whose `properties`
    /// nest this many objects deep (a recursive schema's body).
    DeepResource(usize),
    /// PUT: 201 Accepted + Azure-AsyncOperation (and Location); every read of either announces
    /// a longer body than it sends (`Content-Length` past the bytes), then closes.
    CutOffPolls,
    /// PUT: 202 + Location with invalid UTF-8 in Retry-After, x-ms-request-id and another header.
    BadUtf8Headers,
    /// PUT: 201, `Content-Encoding: gzip`, a small deflate body that inflates to ~100 MB.
    GzipBomb,
    /// PUT: 202 + Location + Retry-After 10; Location answers 202 forever.
    Loop202,
    /// PUT: 202 + Location + `Retry-After: <value>`; Location answers 202 with the same
    /// Retry-After twice, then 200 with the resource.
    RetryAfter(&'static str),
    /// Every request: 302 to itself.
    RedirectLoop,
    /// PUT: 202 + Location on `foreign` (another host).
    ForeignLocation { foreign: String },
    /// PUT: 201 Accepted + Azure-AsyncOperation on `foreign` (another host).
    ForeignOperation { foreign: String },
    /// PUT: 202 + Location with an `ftp://` URL.
    FtpLocation,
    /// PUT: 201 Accepted + Azure-AsyncOperation with an `ftp://` URL.
    FtpOperation,
    /// PUT: 202 + Location with two x-ms-request-id (one reused) and two Retry-After (10, -1).
    DuplicateHeaders,
    /// The server on another host: logs and answers 401 (no credentials reach it).
    ForeignSink,
    /// Echo the credentials it receives (Authorization, x-api-key) in response headers, JSON
    /// bodies, an error body, a Location URL, and a body that puts the token across the
    /// 64 Ki-character mark where reports cut bodies.
    Echo,
    /// PUT: 201 with a JSON array of ~7.5 million zeros (15 MB: under the 16 MiB cap).
    HugeJsonArray,
    /// PUT: 201 Succeeded, but DELETE answers 202 and the resource never goes away: the
    /// end-of-run cleanup waits for it.
    UndeletableResource,
    /// PUT: 202 + Location; Location answers 202 forever, each time with a 1.2 MB JSON body
    /// of 600 000 numbers (parsed: tens of MB each; Retry-After 10 means a poll every 100 ms
    /// at time scale 0.01, so dozens of them before the deadline).
    BigPolls,
    /// Any GET with `list` in its query: a 4 MB page of items, with a nextLink to the next
    /// page, forever.
    BigPages,
    /// Any GET with `list` in its query: a page of 900 000 zeros (under 2 MB, each value a
    /// node once parsed), with a nextLink to the next page, forever.
    ManySmallPages,
}

/// One request the server received.
pub type Seen = Request;

/// A running hostile server; stopped when dropped.
pub struct Server {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Seen>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Shared {
    mode: Mode,
    base: String,
    log: Arc<Mutex<Vec<Seen>>>,
    seq: AtomicU64,
    /// Location polls answered so far (RetryAfter answers 202 twice).
    polls: AtomicU64,
    /// Path of the last resource PUT: a finished Location answers with that resource.
    last_put: Mutex<String>,
}

impl Server {
    /// Start on `ip:0` (any 127.x.y.z address).
    pub fn start(ip: &str, mode: Mode) -> Server {
        Self::start_on(ip, 0, mode)
    }

    /// Start on `ip:port`.
    pub fn start_on(ip: &str, port: u16, mode: Mode) -> Server {
        let ip: IpAddr = ip.parse().expect("an IP address");
        assert!(ip.is_loopback(), "tests listen on 127.0.0.0/8 only");
        let std_listener = std::net::TcpListener::bind((ip, port))
            .unwrap_or_else(|e| panic!("cannot listen on {ip}:{port}: {e}"));
        std_listener.set_nonblocking(true).expect("non-blocking");
        let addr = std_listener.local_addr().expect("bound address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            mode,
            base: format!("http://{addr}"),
            log: log.clone(),
            seq: AtomicU64::new(0),
            polls: AtomicU64::new(0),
            last_put: Mutex::new(String::new()),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            rt.block_on(async move {
                let listener = TcpListener::from_std(std_listener).expect("tokio listener");
                let accept = async {
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        let shared = shared.clone();
                        tokio::spawn(async move {
                            let _ = serve(stream, shared).await;
                        });
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stopped => {}
                }
            });
            // Dropping the runtime drops every connection task (hanging ones included).
            rt.shutdown_timeout(Duration::from_millis(100));
        });
        Server {
            addr,
            log,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A port on 127.0.0.1 that nothing listens on (bound, then closed).
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = l.local_addr().expect("addr").port();
    drop(l);
    port
}

/// A target file for the hostile server at `base_url`; `extra` is appended at the top level
/// (auth, headers, secret_headers).
///
/// The hostile servers stand where ARM's answers would (their links name their own host, as
/// ARM's name its public host): no front door is played in front of them (`front_door: none`),
/// so the host of a link is LOC-09's and AAO-03's to judge, as through ARM.
pub fn target_yaml(base_url: &str, extra: &str) -> String {
    format!(
        "base_url: {base_url}\n\
         front_door: none\n\
         subscription: {SUBSCRIPTION}\n\
         resource_group: {{name: rg, disposable: true}}\n\
         namespace: {NAMESPACE}\n\
         api_version: \"{API_VERSION}\"\n\
         location: eastus\n\
         types:\n  things:\n    kind: tracked\n    async: true\n    create_body: {{location: eastus}}\n\
         {extra}"
    )
}

/// What routing asks of a request.
trait Route {
    fn is_resource(&self) -> bool;
    fn is_location_poll(&self) -> bool;
    fn is_operation_poll(&self) -> bool;
}

impl Route for Request {
    fn is_resource(&self) -> bool {
        self.path()
            .to_ascii_lowercase()
            .contains("/providers/microsoft.hostile/things/")
    }

    fn is_location_poll(&self) -> bool {
        self.path().contains("/operationresults/")
    }

    fn is_operation_poll(&self) -> bool {
        self.path().contains("/operationStatuses/")
    }
}

/// A response under construction: status, raw header lines (bytes, so invalid UTF-8 can be
/// sent), body.
struct Resp {
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

impl Resp {
    fn new(status: u16) -> Resp {
        Resp {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    fn header(mut self, k: &str, v: impl AsRef<[u8]>) -> Resp {
        self.headers.push((k.to_string(), v.as_ref().to_vec()));
        self
    }

    fn json(mut self, v: &serde_json::Value) -> Resp {
        self.body = v.to_string().into_bytes();
        self.header("Content-Type", "application/json")
    }

    fn body(mut self, b: impl Into<Vec<u8>>) -> Resp {
        self.body = b.into();
        self
    }

    /// Status line and headers (with Content-Length of the body unless `length` says otherwise).
    fn head(&self, length: Option<&str>) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            201 => "Created",
            202 => "Accepted",
            204 => "No Content",
            302 => "Found",
            400 => "Bad Request",
            401 => "Unauthorized",
            404 => "Not Found",
            _ => "Whatever",
        };
        let mut out = format!("HTTP/1.1 {} {reason}\r\n", self.status).into_bytes();
        for (k, v) in &self.headers {
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v);
            out.extend_from_slice(b"\r\n");
        }
        match length {
            Some(l) => out.extend_from_slice(l.as_bytes()),
            None => {
                out.extend_from_slice(format!("Content-Length: {}\r\n", self.body.len()).as_bytes())
            }
        }
        out.extend_from_slice(b"Connection: close\r\n\r\n");
        out
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = self.head(None);
        out.extend_from_slice(&self.body);
        out
    }
}

/// What to do on the wire.
enum Act {
    Reply(Resp),
    Hang,
    Trickle(Resp),
    Reset(Resp),
    Announce(Resp),
    ChunkedForever(Resp),
    /// The head with a Content-Length twice the body, half the body, then a close.
    CutShort(Resp),
}

async fn serve(mut stream: TcpStream, sh: Arc<Shared>) -> std::io::Result<()> {
    // Heads of at most 64 KiB (and a Content-Length body, drained).
    let Some(req) = read_request(&mut stream, 64 * 1024).await else {
        return Ok(());
    };
    sh.log
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(req.clone());
    if req.method == "PUT" && req.is_resource() {
        *sh.last_put.lock().unwrap_or_else(|e| e.into_inner()) = req.path().to_string();
    }
    match route(&req, &sh) {
        Act::Reply(r) => {
            stream.write_all(&r.bytes()).await?;
            stream.flush().await?;
            let _ = stream.shutdown().await;
        }
        Act::Hang => {
            // Hold the connection open, reading and discarding, until the client gives up.
            let mut sink = [0u8; 1024];
            while stream.read(&mut sink).await? > 0 {}
        }
        Act::Trickle(r) => {
            stream
                .write_all(&r.head(Some("Content-Length: 1000000\r\n")))
                .await?;
            loop {
                stream.write_all(b" ").await?;
                stream.flush().await?;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        Act::Reset(r) => {
            stream
                .write_all(&r.head(Some("Content-Length: 100000\r\n")))
                .await?;
            stream.write_all(&[b'['; 1000]).await?;
            stream.flush().await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            // SO_LINGER 0: closing sends RST instead of FIN (and, being 0, never blocks, which
            // is what the deprecation warns about).
            #[allow(deprecated)]
            stream.set_linger(Some(Duration::ZERO))?;
            drop(stream);
        }
        Act::CutShort(r) => {
            let length = format!("Content-Length: {}\r\n", r.body.len() * 2);
            stream.write_all(&r.head(Some(&length))).await?;
            stream.write_all(&r.body[..r.body.len() / 2]).await?;
            stream.flush().await?;
            let _ = stream.shutdown().await;
        }
        Act::Announce(r) => {
            stream
                .write_all(&r.head(Some("Content-Length: 1073741824\r\n")))
                .await?;
            stream.write_all(b"{\"a\":\"").await?;
            stream.flush().await?;
            let mut sink = [0u8; 1024];
            let wait = async { while stream.read(&mut sink).await.unwrap_or(0) > 0 {} };
            let _ = tokio::time::timeout(Duration::from_secs(60), wait).await;
        }
        Act::ChunkedForever(r) => {
            stream
                .write_all(&r.head(Some("Transfer-Encoding: chunked\r\n")))
                .await?;
            let mut chunk = format!("{:x}\r\n", 64 * 1024).into_bytes();
            chunk.extend(std::iter::repeat_n(b'a', 64 * 1024));
            chunk.extend_from_slice(b"\r\n");
            loop {
                stream.write_all(&chunk).await?;
            }
        }
    }
    Ok(())
}

fn resource_json(path: &str, extra: serde_json::Value) -> serde_json::Value {
    let name = path.rsplit('/').next().unwrap_or("x");
    let mut v = serde_json::json!({
        "id": path,
        "name": name,
        "type": format!("{NAMESPACE}/things"),
        "location": "eastus",
        "properties": {"provisioningState": "Succeeded"},
    });
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in e {
            o.insert(k.clone(), x.clone());
        }
    }
    v
}

impl Shared {
    fn request_id(&self) -> String {
        let n = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        format!("hostile-{}-{n}", self.base.replace(['/', ':', '.'], ""))
    }

    /// The headers a plausible ARM answer carries: a fresh request id, echoed client ids.
    fn plain(&self, status: u16, req: &Request) -> Resp {
        let mut r = Resp::new(status).header("x-ms-request-id", self.request_id());
        for h in ["x-ms-client-request-id", "x-ms-correlation-request-id"] {
            if let Some(v) = req.header(h) {
                r = r.header(h, v);
            }
        }
        r
    }

    fn location_url(&self, base: &str) -> String {
        format!(
            "{base}/subscriptions/{SUBSCRIPTION}/providers/{NAMESPACE}/locations/eastus/operationresults/op{}?api-version={API_VERSION}",
            self.seq.load(Ordering::Relaxed)
        )
    }

    fn operation_url(&self, base: &str) -> String {
        format!(
            "{base}/subscriptions/{SUBSCRIPTION}/providers/{NAMESPACE}/locations/eastus/operationStatuses/op{}?api-version={API_VERSION}",
            self.seq.load(Ordering::Relaxed)
        )
    }

    fn accepted(&self, req: &Request, retry_after: &str) -> Resp {
        self.plain(202, req)
            .header("Location", self.location_url(&self.base))
            .header("Retry-After", retry_after)
    }

    /// The resource at the request's path; on a Location URL, the resource last PUT.
    fn resource(&self, status: u16, req: &Request) -> Resp {
        let path = if req.is_location_poll() {
            self.last_put
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        } else {
            req.path().to_string()
        };
        self.plain(status, req)
            .json(&resource_json(&path, serde_json::json!({})))
    }

    /// A sensible answer to anything the mode does not concern.
    fn default_answer(&self, req: &Request) -> Resp {
        match req.method.as_str() {
            "DELETE" if req.is_resource() => self.plain(204, req),
            "GET" if req.is_resource() => self.resource(200, req),
            "GET" if req.is_location_poll() => self.resource(200, req),
            "GET" if req.is_operation_poll() => self.plain(200, req).json(&serde_json::json!({
                "id": req.path(),
                "name": req.path().rsplit('/').next().unwrap_or(""),
                "status": "Succeeded",
            })),
            "PUT" if req.is_resource() => self.resource(201, req),
            _ => self.plain(404, req).json(&serde_json::json!({
                "error": {"code": "NotFound", "message": "no such thing"}
            })),
        }
    }
}

fn route(req: &Request, sh: &Shared) -> Act {
    let put = req.method == "PUT" && req.is_resource();
    let loc_poll = req.method == "GET" && req.is_location_poll();
    match &sh.mode {
        Mode::HangPut if put => Act::Hang,
        Mode::HangPoll if put => Act::Reply(sh.accepted(req, "10")),
        Mode::HangPoll if loc_poll => Act::Hang,
        Mode::TricklePut if put => Act::Trickle(sh.plain(201, req)),
        Mode::ResetPut if put => Act::Reset(sh.plain(201, req)),
        Mode::Announce1GiB if put => Act::Announce(
            sh.plain(201, req)
                .header("Content-Type", "application/json"),
        ),
        Mode::ChunkedForever if put => Act::ChunkedForever(
            sh.plain(201, req)
                .header("Content-Type", "application/json"),
        ),
        Mode::InvalidJson if put => Act::Reply(
            sh.plain(201, req)
                .header("Content-Type", "application/json")
                .body(&b"{\"id\": \"/x\", \"name\": <html>oops</html>"[..]),
        ),
        Mode::DeepJson if put => {
            let mut b = "[".repeat(100_000);
            b.push_str(&"]".repeat(100_000));
            Act::Reply(
                sh.plain(201, req)
                    .header("Content-Type", "application/json")
                    .body(b),
            )
        }
        Mode::DeepResource(depth)
            if req.is_resource() && matches!(req.method.as_str(), "PUT" | "GET") =>
        {
            let mut nested = serde_json::json!({"leaf": true});
            for _ in 0..*depth {
                nested = serde_json::json!({"child": nested});
            }
            let status = if put { 201 } else { 200 };
            Act::Reply(sh.plain(status, req).json(&resource_json(
                req.path(),
                serde_json::json!({"properties": {"provisioningState": "Succeeded", "tree": nested}}),
            )))
        }
        Mode::BadUtf8Headers if put => Act::Reply(
            Resp::new(202)
                .header("x-ms-request-id", b"\xff\xfe-not-utf8-\xc3\x28")
                .header("Location", sh.location_url(&sh.base))
                .header("Retry-After", b"1\xff0")
                .header("x-hostile", b"\xc0\xaf\xed\xa0\x80"),
        ),
        Mode::GzipBomb if put => Act::Reply(
            sh.plain(201, req)
                .header("Content-Type", "application/json")
                .header("Content-Encoding", "gzip")
                .body(gzip_bomb().to_vec()),
        ),
        Mode::Loop202 if put || loc_poll => Act::Reply(sh.accepted(req, "10")),
        Mode::RetryAfter(v) if put => Act::Reply(sh.accepted(req, v)),
        Mode::RetryAfter(v) if loc_poll => {
            if sh.polls.fetch_add(1, Ordering::Relaxed) < 2 {
                Act::Reply(sh.accepted(req, v))
            } else {
                Act::Reply(sh.resource(200, req))
            }
        }
        Mode::RedirectLoop => Act::Reply(
            sh.plain(302, req)
                .header("Location", format!("{}{}", sh.base, req.target)),
        ),
        Mode::ForeignLocation { foreign } if put => Act::Reply(
            sh.plain(202, req)
                .header("Location", sh.location_url(foreign))
                .header("Retry-After", "10"),
        ),
        Mode::ForeignOperation { foreign } if put => Act::Reply(
            sh.plain(201, req)
                .header("Azure-AsyncOperation", sh.operation_url(foreign))
                .header("Retry-After", "10")
                .json(&resource_json(
                    req.path(),
                    serde_json::json!({"properties": {"provisioningState": "Accepted"}}),
                )),
        ),
        Mode::CutOffPolls if put => Act::Reply(
            sh.plain(201, req)
                .header("Azure-AsyncOperation", sh.operation_url(&sh.base))
                .header("Location", sh.location_url(&sh.base))
                .header("Retry-After", "10")
                .json(&resource_json(
                    req.path(),
                    serde_json::json!({"properties": {"provisioningState": "Accepted"}}),
                )),
        ),
        Mode::CutOffPolls if req.method == "GET" && (req.is_operation_poll() || loc_poll) => {
            Act::CutShort(sh.plain(200, req).json(&serde_json::json!({
                "id": req.path(),
                "name": req.path().rsplit('/').next().unwrap_or(""),
                "status": "InProgress",
            })))
        }
        Mode::FtpLocation if put => Act::Reply(
            sh.plain(202, req)
                .header(
                    "Location",
                    sh.location_url(&sh.base.replacen("http://", "ftp://", 1)),
                )
                .header("Retry-After", "10"),
        ),
        Mode::FtpOperation if put => Act::Reply(
            sh.plain(201, req)
                .header(
                    "Azure-AsyncOperation",
                    sh.operation_url(&sh.base.replacen("http://", "ftp://", 1)),
                )
                .header("Retry-After", "10")
                .json(&resource_json(
                    req.path(),
                    serde_json::json!({"properties": {"provisioningState": "Accepted"}}),
                )),
        ),
        Mode::DuplicateHeaders if put => Act::Reply(
            Resp::new(202)
                .header("x-ms-request-id", "hostile-duplicate-id")
                .header("x-ms-request-id", sh.request_id())
                .header("Location", sh.location_url(&sh.base))
                .header("Retry-After", "10")
                .header("Retry-After", "-1"),
        ),
        Mode::DuplicateHeaders if loc_poll => {
            // The reused id first: HDR-01 reads the first of the two.
            let mut r = sh.resource(200, req);
            r.headers.insert(
                0,
                ("x-ms-request-id".into(), b"hostile-duplicate-id".to_vec()),
            );
            Act::Reply(r)
        }
        Mode::ForeignSink => Act::Reply(sh.plain(401, req).json(&serde_json::json!({
            "error": {"code": "AuthenticationFailed", "message": "no credentials"}
        }))),
        Mode::Echo => Act::Reply(echo(req, sh)),
        Mode::HugeJsonArray if put => {
            let b = format!("[{}0]", "0,".repeat(7_500_000 - 1));
            Act::Reply(
                sh.plain(201, req)
                    .header("Content-Type", "application/json")
                    .body(b),
            )
        }
        Mode::UndeletableResource if req.method == "DELETE" && req.is_resource() => {
            Act::Reply(sh.accepted(req, "10"))
        }
        Mode::BigPolls if put => Act::Reply(sh.accepted(req, "10")),
        Mode::BigPolls if loc_poll => {
            let b = format!("{{\"pad\":[{}1]}}", "1,".repeat(600_000 - 1));
            Act::Reply(
                sh.accepted(req, "10")
                    .header("Content-Type", "application/json")
                    .body(b),
            )
        }
        Mode::BigPages if req.method == "GET" && req.target.contains("list=") => {
            let page: u64 = req
                .target
                .split("page=")
                .nth(1)
                .and_then(|p| p.split('&').next())
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let item = format!(r#"{{"id":"x","name":"n","pad":"{}"}}"#, "p".repeat(4000));
            let items = vec![item; 1000].join(",");
            let next = format!("{}/list?list=1&page={}", sh.base, page + 1);
            Act::Reply(
                sh.plain(200, req)
                    .header("Content-Type", "application/json")
                    .body(format!(r#"{{"value":[{items}],"nextLink":"{next}"}}"#)),
            )
        }
        Mode::ManySmallPages if req.method == "GET" && req.target.contains("list=") => {
            let page: u64 = req
                .target
                .split("page=")
                .nth(1)
                .and_then(|p| p.split('&').next())
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let zeros = "0,".repeat(899_999);
            let next = format!("{}/list?list=1&page={}", sh.base, page + 1);
            Act::Reply(
                sh.plain(200, req)
                    .header("Content-Type", "application/json")
                    .body(format!(r#"{{"value":[{zeros}0],"nextLink":"{next}"}}"#)),
            )
        }
        _ => Act::Reply(sh.default_answer(req)),
    }
}

/// Echo every credential back: in headers, in JSON, in an error body, in a Location URL, and
/// across the mark where reports cut bodies (64 Ki characters).
fn echo(req: &Request, sh: &Shared) -> Resp {
    let auth = req.header("authorization").unwrap_or("").to_string();
    let token = auth.strip_prefix("Bearer ").unwrap_or(&auth).to_string();
    let key = req.header("x-api-key").unwrap_or("").to_string();
    // The JWT's middle segment (its claims) on its own.
    let claims = token.split('.').nth(1).unwrap_or("").to_string();
    let with_echo = |r: Resp| {
        r.header("x-echo-authorization", &auth)
            .header("x-echo-token", &token)
            .header("x-echo-claims", &claims)
            .header("x-echo-key", &key)
            .header("WWW-Authenticate", format!("Bearer error=\"{token}\""))
            .header("Set-Cookie", format!("session={token}; key={key}"))
    };
    let echo_json = serde_json::json!({
        "authorization": auth, "token": token, "claims": claims, "apiKey": key,
    });
    let q = req.query();
    if req.method == "PUT" && req.is_resource() {
        // 202 whose Location carries the token in its path and query.
        let loc = format!(
            "{}/subscriptions/{SUBSCRIPTION}/providers/{NAMESPACE}/locations/eastus/operationresults/{token}?api-version={API_VERSION}&t={token}&k={key}",
            sh.base
        );
        return with_echo(sh.plain(202, req))
            .header("Location", loc)
            .header("Retry-After", "10")
            .json(&echo_json);
    }
    if req.method == "GET" && req.is_resource() && q.contains("echo=error") {
        return with_echo(sh.plain(400, req)).json(&serde_json::json!({
            "error": {
                "code": "EchoedCredentials",
                "message": format!("you sent {auth} and x-api-key {key} (claims {claims})"),
                "details": [{"code": "Token", "message": token}],
            }
        }));
    }
    if req.method == "GET" && req.is_resource() && q.contains("echo=straddle") {
        // Put the token (and key) right across the 64 Ki-character cut of report bodies.
        let cut = 64 * 1024;
        let mut body = String::from("{\"pad\":\"");
        while body.len() < cut - 20 {
            body.push('x');
        }
        body.push_str(&format!("{token} {key} {claims}\"}}"));
        return with_echo(sh.plain(200, req))
            .header("Content-Type", "application/json")
            .body(body);
    }
    if req.method == "GET" && (req.is_resource() || req.is_location_poll()) {
        return with_echo(sh.plain(200, req)).json(&resource_json(
            req.path(),
            serde_json::json!({"properties": {"provisioningState": "Succeeded", "echo": echo_json}}),
        ));
    }
    with_echo(sh.default_answer(req))
}

/// A gzip member whose deflate stream (one fixed-Huffman block: a literal 0, then 400 000
/// copies of <length 258, distance 1>) is ~650 KB and inflates to ~103 MB of zeros.
pub fn gzip_bomb() -> &'static [u8] {
    static BOMB: OnceLock<Vec<u8>> = OnceLock::new();
    BOMB.get_or_init(|| {
        const COPIES: usize = 400_000;
        let mut w = BitWriter::default();
        w.bits(1, 1); // BFINAL
        w.bits(1, 2); // BTYPE = 01, fixed Huffman
        w.huff(0x30, 8); // literal 0
        for _ in 0..COPIES {
            w.huff(0xC5, 8); // length code 285 = 258
            w.huff(0, 5); // distance code 0 = 1
        }
        w.huff(0, 7); // end of block (256)
        let deflate = w.finish();
        let inflated = 1 + 258 * COPIES;
        let mut crc = 0xFFFF_FFFFu32;
        let table = crc_table();
        for _ in 0..inflated {
            crc = table[(crc & 0xFF) as usize] ^ (crc >> 8);
        }
        let crc = !crc;
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
        out.extend_from_slice(&deflate);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(inflated as u32).to_le_bytes());
        out
    })
}

/// Size of the gzip bomb once inflated.
pub const GZIP_BOMB_INFLATED: usize = 1 + 258 * 400_000;

fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    for (i, e) in t.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *e = c;
    }
    t
}

#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    /// `count` bits of `v`, least significant first (header fields, extra bits).
    fn bits(&mut self, v: u32, count: u32) {
        self.acc |= u64::from(v) << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code of `len` bits, most significant first.
    fn huff(&mut self, code: u32, len: u32) {
        let mut rev = 0;
        for i in 0..len {
            rev |= ((code >> i) & 1) << (len - 1 - i);
        }
        self.bits(rev, len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

// ---- Running the binary under bounds ----

/// What one bounded run of the binary did.
pub struct Run {
    pub label: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub peak_kb: u64,
    pub report: Option<serde_json::Value>,
    pub command: String,
    /// junit.xml as written (read before the scratch directory goes away).
    pub junit: String,
}

impl Run {
    pub fn context(&self) -> String {
        let report = self
            .report
            .as_ref()
            .map(digest)
            .unwrap_or_else(|| "(no report.json)".into());
        format!(
            "$ {}\nexit {:?} after {:.1} s, peak RSS {} MB\n--- report digest:\n{report}\n--- stdout (tail):\n{}\n--- stderr (tail):\n{}",
            self.command,
            self.code,
            self.elapsed.as_secs_f64(),
            self.peak_kb / 1024,
            crate::common::tail(&self.stdout, 3000),
            crate::common::tail(&self.stderr, 3000)
        )
    }

    pub fn report(&self) -> &serde_json::Value {
        self.report
            .as_ref()
            .unwrap_or_else(|| panic!("report.json was not written\n{}", self.context()))
    }

    pub fn results(&self) -> &[serde_json::Value] {
        crate::common::results(self.report())
    }

    /// Every exchange of every result.
    pub fn exchanges(&self) -> Vec<&serde_json::Value> {
        self.results()
            .iter()
            .flat_map(|r| r["exchanges"].as_array().into_iter().flatten())
            .collect()
    }

    /// Failed verdicts as (rule, "expected | seen") pairs.
    pub fn failed_rules(&self) -> Vec<(String, String)> {
        crate::common::failures(self.report())
            .map(|(v, f)| {
                (
                    v["rule"].as_str().unwrap_or("?").to_string(),
                    format!(
                        "{} | {}",
                        f["expected"].as_str().unwrap_or(""),
                        f["seen"].as_str().unwrap_or("")
                    ),
                )
            })
            .collect()
    }

    /// What the report says about why the test failed: runner errors, notes, failed
    /// verdicts, poll outcomes, and the transport errors and JSON errors of its exchanges.
    pub fn reasons(&self) -> String {
        let mut out = String::new();
        for r in self.results() {
            for k in ["detail"] {
                if let Some(s) = r[k].as_str() {
                    out.push_str(s);
                    out.push('\n');
                }
            }
            for n in r["notes"].as_array().into_iter().flatten() {
                out.push_str(n.as_str().unwrap_or(""));
                out.push('\n');
            }
            for p in r["polls"].as_array().into_iter().flatten() {
                out.push_str(p["outcome"].as_str().unwrap_or(""));
                out.push('\n');
            }
        }
        for (rule, text) in self.failed_rules() {
            out.push_str(&format!("{rule}: {text}\n"));
        }
        for x in self.exchanges() {
            for s in [&x["error"], &x["response"]["json_error"]] {
                if let Some(s) = s.as_str() {
                    out.push_str(s);
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// A short digest of a report for assertion messages.
pub fn digest(report: &serde_json::Value) -> String {
    let mut out = crate::common::excerpt(report);
    for r in crate::common::results(report) {
        for p in r["polls"].as_array().into_iter().flatten() {
            out.push_str(&format!("  poll: {p}\n"));
        }
        for x in r["exchanges"].as_array().into_iter().flatten().take(12) {
            let resp = &x["response"];
            out.push_str(&format!(
                "  #{} {} {} -> {} {}{}\n",
                x["seq"],
                x["method"].as_str().unwrap_or(""),
                crate::common::cut(x["url"].as_str().unwrap_or(""), 120),
                resp["status"],
                x["error"].as_str().unwrap_or(""),
                resp["json_error"].as_str().unwrap_or("")
            ));
        }
    }
    out
}

/// VmHWM (peak) and VmRSS (now) of a process, in kB.
pub fn memory_kb(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmHWM:")?, field("VmRSS:")?))
}

/// The pid of `pid`'s first child, if it has one yet.
pub fn first_child(pid: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// GNU time, when installed: it reports the exact peak RSS of a process that exits between
/// two samples of /proc.
pub const GNU_TIME: &str = "/usr/bin/time";

/// Spawn the binary, kill it (and fail) past [`WALL_CLOCK`] or [`MEMORY_KILL_KB`]. Peak
/// memory is the larger of /proc samples (VmHWM) and GNU time's maximum RSS.
pub fn run_bounded(label: &str, args: &[String], env: &[(&str, &str)], reports: &Path) -> Run {
    let command = format!("rpconform {}", args.join(" "));
    let rss_file = reports.with_file_name("maxrss.txt");
    let timed = Path::new(GNU_TIME).exists();
    let mut cmd = if timed {
        let mut c = Command::new(GNU_TIME);
        c.arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&rss_file)
            .arg(env!("CARGO_BIN_EXE_rpconform"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_rpconform"))
    };
    cmd.args(args)
        .current_dir(crate::common::root())
        .env("NO_COLOR", "1")
        .envs(env.iter().copied());
    // The rpconform process itself: the child, or GNU time's child.
    let mut pid = None;
    let mut peak_kb = 0;
    let out = crate::common::run_watched(cmd, &command, WALL_CLOCK, |child| {
        if pid.is_none() {
            pid = if timed {
                first_child(child)
            } else {
                Some(child)
            };
        }
        let (hwm, rss) = pid.and_then(memory_kb)?;
        peak_kb = peak_kb.max(hwm);
        (rss > MEMORY_KILL_KB).then(|| format!("its resident memory reached {} MB", rss / 1024))
    });
    let mut code = out.status.code();
    if timed {
        // GNU time writes "Command exited with non-zero status N" or "Command terminated by
        // signal N" before the %M line, and exits with the command's status.
        let text = std::fs::read_to_string(&rss_file).unwrap_or_default();
        if text.contains("terminated by signal") {
            code = None;
        }
        if let Some(kb) = text
            .lines()
            .last()
            .and_then(|l| l.trim().parse::<u64>().ok())
        {
            peak_kb = peak_kb.max(kb);
        }
    }
    let report = std::fs::read_to_string(reports.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let run = Run {
        label: label.to_string(),
        code,
        stdout: out.stdout,
        stderr: out.stderr,
        elapsed: out.elapsed,
        peak_kb,
        report,
        command,
        junit: std::fs::read_to_string(reports.join("junit.xml")).unwrap_or_default(),
    };
    // Timings and memory, for `cargo test -- --nocapture`.
    eprintln!(
        "[{}] exit {:?} in {:.1} s, peak RSS {} MB",
        run.label,
        run.code,
        run.elapsed.as_secs_f64(),
        run.peak_kb / 1024
    );
    run
}
