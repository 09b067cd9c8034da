//! `rpconform proxy`: a proxy that passes any client's traffic to the target unchanged and
//! judges it with the rule engine as it passes, writing the same reports as `run` (one result
//! per provider namespace) every `--every` seconds and when stopped (Ctrl-C, SIGTERM).
//!
//! Two ways in, on one listener:
//! - **reverse** (clients use `http://127.0.0.1:PORT` as their endpoint, the way the Azure SDK
//!   test proxy is used): requests in origin form (`GET /subscriptions/...`) go to the target's
//!   base URL. Absolute URLs in answers (Location, Azure-AsyncOperation, nextLink) that point
//!   at the target pass unchanged, so a client then polls the target directly, unless it
//!   builds its links from the `Referer`/`Host` it was called with (as the reference RP does),
//!   or `--rewrite-links` is given: then those three headers are rewritten to point at the
//!   proxy (never bodies, so nextLink still points at the target), and the reports say so;
//! - **forward** (`HTTP_PROXY=http://127.0.0.1:PORT`): requests in absolute form
//!   (`GET http://host/...`) go where they say. `CONNECT` (HTTPS) is tunnelled blind and not
//!   judged; for HTTPS targets use the reverse mode.
//!
//! Bodies stream both ways (nothing is held whole). At most [`MAX_CONNECTIONS`] connections
//! are served at once; more are closed at once (shed, and counted in the reports), a client
//! that sends no request head within [`HEAD_TIMEOUT`] is dropped, and when accepting fails
//! (descriptors exhausted) the listener waits before it tries again rather than spinning.
//!
//! Exchanges are judged on a thread of their own, in the order they passed, after they passed:
//! no answer waits for its judgement. They are judged when the target's declarations say they are on its ARM surface
//! (`Target::surface_of`); other hosts pass unjudged. The listener binds loopback unless
//! `--allow-remote`. Tokens never reach a report or a log unmasked: exchanges are redacted as
//! replay redacts recordings before anything is held, and nothing is stored but the exchanges
//! of operations still open and those findings cite.

mod forward;
mod session;
mod shared;
mod tee;
mod tunnel;

pub use session::{Session, Timing};

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};

use crate::replay::ReadOptions;
use crate::report::ScenarioResult;
use crate::target::Target;
use shared::{Job, Shared};

/// Connections served at once; more are shed.
pub const MAX_CONNECTIONS: usize = 512;

/// How long a connection may take to send a request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest wait between two tries to accept after accepting failed.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// What `proxy` needs once arguments are validated.
pub struct ProxyOptions {
    pub target: Target,
    pub listen: SocketAddr,
    pub rewrite_links: bool,
    pub strict: bool,
    pub body_cap: usize,
    pub timing: Timing,
    /// Write reports this often (besides at the end).
    pub every: Option<Duration>,
}

/// A running proxy, for the command and for tests.
pub struct Proxy {
    shared: Arc<Shared>,
    pub addr: SocketAddr,
    strict: bool,
    accept: tokio::task::JoinHandle<()>,
    /// The thread that judges what passed, in order ([`Job`]).
    judging: Option<std::thread::JoinHandle<()>>,
}

/// Accept and serve connections, at most [`MAX_CONNECTIONS`] at once.
async fn accept_loop(listener: tokio::net::TcpListener, sh: Arc<Shared>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = Duration::from_millis(5);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                backoff = Duration::from_millis(5);
                stream
            }
            // Out of descriptors (EMFILE, ENFILE) or buffers: the error repeats until a
            // connection closes, so wait rather than spin.
            Err(_) => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            sh.shed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            drop(stream);
            continue;
        };
        let sh = sh.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| forward::handle(req, sh.clone()));
            let _ = hyper::server::conn::http1::Builder::new()
                .preserve_header_case(true)
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .serve_connection(TokioIo::new(stream), svc)
                .with_upgrades()
                .await;
            drop(slot);
        });
    }
}

impl Drop for Proxy {
    /// A proxy dropped unstopped (a test's) leaves no judging thread behind.
    fn drop(&mut self) {
        self.accept.abort();
        let _ = self.shared.jobs.send(Job::Stop);
    }
}

impl Proxy {
    /// Bind and start serving (inside a tokio runtime).
    pub async fn start(opts: ProxyOptions) -> std::io::Result<Proxy> {
        let listener = tokio::net::TcpListener::bind(opts.listen).await?;
        let addr = listener.local_addr()?;
        let target: &'static Target = Box::leak(Box::new(opts.target));
        let mut arm_hosts = Vec::new();
        if let Some(h) = target.base_url.host_str() {
            arm_hosts.push(h.to_ascii_lowercase());
        }
        let read: &'static ReadOptions = Box::leak(Box::new(ReadOptions {
            body_cap: opts.body_cap,
            json_budget: usize::MAX,
            arm_hosts,
            ..Default::default()
        }));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
            .map_err(std::io::Error::other)?
            .https_or_http()
            .enable_http1()
            .build();
        let client = Client::builder(TokioExecutor::new())
            .http1_preserve_header_case(true)
            .build(connector);
        let base = target.base();
        let origin = target.base_url.origin().ascii_serialization();
        let mut notes = Vec::new();
        if opts.rewrite_links {
            notes.push(format!(
                "--rewrite-links: Location, Azure-AsyncOperation and Operation-Location answers pointing at {origin} were rewritten to http://{addr} on the wire (the record keeps what the target sent)"
            ));
        }
        let mut session = Session::new(target, read, opts.timing);
        session.notes = notes;
        let (jobs, queue) = std::sync::mpsc::channel();
        let shared = Arc::new(Shared {
            session: Mutex::new(session),
            jobs,
            client,
            target_base: base,
            target_origin: origin,
            own_origin: format!("http://{addr}"),
            rewrite_links: opts.rewrite_links,
            body_cap: opts.body_cap,
            tunnels: Default::default(),
            shed: Default::default(),
        });
        let judge_sh = shared.clone();
        let judging = std::thread::Builder::new()
            .name("rpconform-proxy-judge".into())
            .spawn(move || forward::judge_all(&judge_sh, queue))?;
        let accept = tokio::spawn(accept_loop(listener, shared.clone()));
        Ok(Proxy {
            shared,
            addr,
            strict: opts.strict,
            accept,
            judging: Some(judging),
        })
    }

    fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.shared
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Close the operations whose time is up (call every second or so); after what passed
    /// before, in order.
    pub fn tick(&self) {
        let _ = self.shared.jobs.send(Job::Expire(Instant::now()));
    }

    /// The results so far (operations still open are not judged yet).
    pub fn results(&self) -> Vec<ScenarioResult> {
        let s = self.session();
        let mut extra = vec![format!(
            "{} exchanges passed, {} judged on the target's ARM surface, {} operations judged, {} still open",
            s.exchanges,
            s.judged,
            s.operations,
            s.open_operations()
        )];
        let tunnels = self
            .shared
            .tunnels
            .load(std::sync::atomic::Ordering::Relaxed);
        let shed = self.shared.shed.load(std::sync::atomic::Ordering::Relaxed);
        if shed > 0 {
            extra.push(format!(
                "{shed} connections closed unserved: {MAX_CONNECTIONS} were open at once"
            ));
        }
        if tunnels > 0 {
            extra.push(format!(
                "{tunnels} CONNECT (HTTPS) tunnels passed unjudged: use the reverse mode to judge HTTPS targets"
            ));
        }
        s.results(self.strict, &extra)
    }

    /// Stop accepting, judge every open operation (unseen if not ended), the final results.
    pub fn stop(mut self) -> Vec<ScenarioResult> {
        self.accept.abort();
        // Everything that passed is judged before the end.
        let _ = self.shared.jobs.send(Job::Stop);
        if let Some(t) = self.judging.take() {
            let _ = t.join();
        }
        self.session().finish();
        self.results()
    }
}

#[cfg(test)]
mod tests;
