//! Sending one request and recording it as an [`Exchange`]. Requests are paced by the run's
//! rate limits ([`Limits`]), and an answer that says the front door is throttling (a 429, or a
//! 503 with Retry-After) is waited out and the request sent again, within the throttle budget
//! and the run's cancellation: the rules judge the answer that came after, and the throttled
//! answers stay on the exchange, marked as such ([`Throttled`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderName, HeaderValue};

use super::answer::{self, REPORT_BODY_CHARS};
use super::pace::{Bucket, Limits};
use super::{Exchange, Redactor, Response, Retried, Role, Throttled, TokenSource};
use crate::cancel::Cancel;

/// What may be sent at all, decided on the method and the URL as it will be sent: `Some(why)`
/// refuses the request before it leaves (the target's footprint, `target::Guard`).
pub type SendGuard = Arc<dyn Fn(&str, &url::Url) -> Option<String> + Send + Sync>;

/// Limits and policies of the client.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub body_cap: usize,
    pub insecure: bool,
    /// Fetch URLs on other origins (without credentials); false refuses them.
    pub follow_foreign: bool,
    /// How fast requests may go.
    pub limits: Limits,
    /// Longest total wait for one request while the target throttles it.
    pub throttle_budget: Duration,
    /// `--time-scale`: throttle waits are scaled like every other wait.
    pub time_scale: f64,
    /// `--retries N`: send a request again, up to N times, when it got no answer of the RP's
    /// (no answer at all, or a 502/503/504 without the ARM error envelope).
    pub retries: u32,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            body_cap: 16 * 1024 * 1024,
            insecure: false,
            follow_foreign: true,
            limits: Limits::default(),
            throttle_budget: Duration::from_secs(600),
            time_scale: 1.0,
            retries: 0,
        }
    }
}

/// Counters of a run's traffic, for the reports.
#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    puts: AtomicU64,
    throttled: AtomicU64,
    throttle_wait_ms: AtomicU64,
    retried: AtomicU64,
}

/// What the client sent and how often it was throttled.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HttpStats {
    /// Requests that left the client (throttled attempts included).
    pub requests: u64,
    /// PUTs among them.
    pub puts: u64,
    /// Answers that were throttling (429, 503 with Retry-After) and were retried.
    pub throttled: u64,
    /// Time spent waiting them out, in milliseconds.
    pub throttle_wait_ms: u64,
    /// Attempts that got no answer of the RP's and were sent again (`--retries`).
    pub retried: u64,
}

/// A request to send.
#[derive(Debug, Clone)]
pub struct OutRequest {
    /// The declared surface the request belongs to (recorded on the exchange).
    pub surface: super::Surface,
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// The run's HTTP client.
pub struct Http {
    client: reqwest::Client,
    origin: url::Url,
    tokens: TokenSource,
    pub redactor: Arc<Redactor>,
    options: HttpOptions,
    seq: AtomicU64,
    /// Extra headers sent to the target origin on every request (from the target file).
    fixed_headers: Vec<(String, String)>,
    all: Option<Bucket>,
    writes: Option<Bucket>,
    /// Until when the target asked every request to wait (its last 429).
    paused_until: Mutex<Option<Instant>>,
    counters: Counters,
    cancel: OnceLock<Arc<Cancel>>,
    guard: OnceLock<SendGuard>,
    front_door: OnceLock<Arc<super::front_door::FrontDoor>>,
}

/// The answer ARM gives itself, as a recorded response.
fn front_door_response(a: &super::front_door::OwnAnswer) -> Response {
    let body = a.body();
    Response {
        status: a.status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body_bytes: body.len(),
        json: serde_json::from_str(&body).ok(),
        body,
        json_error: None,
        set_cookies: Vec::new(),
        sent: None,
    }
}

/// Did this attempt get no answer of the RP's, so that `--retries` may send it again? No
/// answer at all (sent, then refused, reset or timed out; a body over the cap is an answer),
/// or a 502, 503 or 504 whose body is not the ARM error envelope (`{"error": {"code": ...}}`):
/// a front door's page, not the RP's. Anything the RP wrote is judged, never retried.
pub fn no_answer(ex: &Exchange, transport: bool) -> Option<String> {
    match (&ex.response, &ex.error) {
        (None, Some(e)) if transport && !e.contains("--body-cap") => {
            Some(format!("no answer: {}", super::cut(e, 160)))
        }
        (Some(r), _) if matches!(r.status, 502..=504) => {
            let envelope = serde_json::from_str::<serde_json::Value>(&r.body)
                .ok()
                .is_some_and(|v| v.pointer("/error/code").is_some_and(|c| c.is_string()));
            (!envelope).then(|| format!("{} without an ARM error body", r.status))
        }
        _ => None,
    }
}

/// Most throttled answers kept on one exchange (the count goes on).
const THROTTLED_KEPT: usize = 5;

impl Http {
    pub fn new(
        origin: url::Url,
        tokens: TokenSource,
        redactor: Arc<Redactor>,
        options: HttpOptions,
        fixed_headers: Vec<(String, String)>,
    ) -> Result<Http, String> {
        for (k, v) in &fixed_headers {
            // A secret header's value is a secret whatever its length; another header's
            // value is scrubbed too when it is long enough not to be ordinary text.
            if redactor.is_secret_header(k) || v.trim().len() >= super::redact::SHORT_SECRET {
                redactor.register_header_value(v);
            }
        }
        // `https://user:password@host`: the userinfo is a credential.
        redactor.register_userinfo(&origin);
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(options.connect_timeout)
            .timeout(options.request_timeout)
            .danger_accept_invalid_certs(options.insecure)
            .pool_max_idle_per_host(64)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Http {
            client,
            origin,
            tokens,
            redactor,
            all: options.limits.max_rps.and_then(Bucket::new),
            writes: options.limits.max_write_rps.and_then(Bucket::new),
            options,
            seq: AtomicU64::new(0),
            fixed_headers,
            paused_until: Mutex::new(None),
            counters: Counters::default(),
            cancel: OnceLock::new(),
            guard: OnceLock::new(),
            front_door: OnceLock::new(),
        })
    }

    /// Play ARM's part in front of the endpoint from now on (set once, when the client is
    /// made for a target that emulates the front door).
    pub fn set_front_door(&self, fd: super::front_door::FrontDoor) {
        let _ = self.front_door.set(Arc::new(fd));
    }

    /// ARM's front door, when the run plays it.
    pub fn front_door(&self) -> Option<&super::front_door::FrontDoor> {
        self.front_door.get().map(|f| &**f)
    }

    /// `url` as it is sent: a URL on the front door's public host routed to the RP's endpoint,
    /// as ARM routes it; any other URL as it is.
    pub fn route(&self, url: &str) -> String {
        self.front_door()
            .and_then(|fd| fd.route(url))
            .unwrap_or_else(|| url.to_string())
    }

    /// Does ARM's front door stand between the run and this request (an ARM-surface request
    /// to the RP's own origin, while the run plays ARM's part)?
    fn fronted(&self, req: &OutRequest) -> Option<&super::front_door::FrontDoor> {
        let fd = self.front_door()?;
        let own = crate::http::parse_url(&req.url).is_ok_and(|u| self.same_origin(&u));
        (own && req.surface == super::Surface::Arm).then_some(fd)
    }

    /// What ARM adds to a request it passes on: its headers, where the request names none of
    /// its own by that name (a scenario's `x-ms-home-tenant-id` plays another caller).
    fn with_front_door_headers(&self, mut req: OutRequest) -> OutRequest {
        if let Some(fd) = self.fronted(&req)
            && let Ok(u) = crate::http::parse_url(&req.url)
        {
            for (k, v) in fd.headers(&req.method, &u) {
                if !req.headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(&k)) {
                    req.headers.push((k, v));
                }
            }
        }
        req
    }

    /// ARM's own answer to a request it never passes on, recorded as such.
    fn own_answer(&self, req: &OutRequest, role: Role) -> Option<Exchange> {
        let fd = self.fronted(req)?;
        let u = crate::http::parse_url(&req.url).ok()?;
        let a = fd.own_answer(&u, req.body.as_ref().map_or(0, String::len))?;
        let mut ex = self.record(req, role);
        ex.front_door = Some(format!("ARM answered {} itself: {}", a.status, a.why));
        ex.response = Some(front_door_response(&a));
        Some(ex)
    }

    /// Refuse from now on what `guard` refuses (set once, when the client is made for a target).
    pub fn set_guard(&self, guard: SendGuard) {
        let _ = self.guard.set(guard);
    }

    /// Why the target's guard refuses `method url` (`None`: it may be sent, or the URL does
    /// not parse, which [`Http::refusal`] says).
    pub fn guard_refusal(&self, method: &str, url: &str) -> Option<String> {
        let g = self.guard.get()?;
        let u = crate::http::parse_url(url).ok()?;
        g(method, &u).map(|why| self.redactor.text(&why))
    }

    /// The run's cancellation: throttle and pacing waits end with it (cleanup requests wait
    /// until the run is forced to stop). Set once.
    pub fn set_cancel(&self, cancel: Arc<Cancel>) {
        let _ = self.cancel.set(cancel);
    }

    pub fn stats(&self) -> HttpStats {
        HttpStats {
            requests: self.counters.requests.load(Ordering::Relaxed),
            puts: self.counters.puts.load(Ordering::Relaxed),
            throttled: self.counters.throttled.load(Ordering::Relaxed),
            throttle_wait_ms: self.counters.throttle_wait_ms.load(Ordering::Relaxed),
            retried: self.counters.retried.load(Ordering::Relaxed),
        }
    }

    /// Wait `d` unless the run is cancelled (forced, for cleanup); false when it is.
    async fn wait(&self, d: Duration, role: Role) -> bool {
        if d.is_zero() {
            return true;
        }
        match self.cancel.get() {
            Some(c) if role == Role::Cleanup => c.sleep_unless_forced(d).await,
            Some(c) => c.sleep(d).await,
            None => {
                tokio::time::sleep(d).await;
                true
            }
        }
    }

    /// Wait for this request's turn: the target's last throttle pause, then the rate limits.
    async fn pace(&self, method: &str, own: bool, role: Role) -> bool {
        if !own {
            return true;
        }
        let now = Instant::now();
        let paused = *self.paused_until.lock().unwrap_or_else(|e| e.into_inner());
        let mut go = paused.filter(|p| *p > now).unwrap_or(now);
        if let Some(b) = &self.all {
            go = go.max(b.reserve(now));
        }
        if matches!(method, "PUT" | "PATCH" | "DELETE" | "POST")
            && let Some(b) = &self.writes
        {
            go = go.max(b.reserve(now));
        }
        self.wait(go.saturating_duration_since(Instant::now()), role)
            .await
    }

    /// How long to wait before sending again, when this answer is the target throttling.
    fn throttle_wait(&self, ex: &Exchange, attempt: usize) -> Option<Duration> {
        let r = ex.response.as_ref()?;
        let asked = crate::lro::retry_after(r);
        match (r.status, asked) {
            (429, Some(d)) | (503, Some(d)) => Some(d),
            // A 429 that names no wait: back off 1, 2, 4... s (at most a minute).
            (429, None) => Some(Duration::from_secs(1 << attempt.min(6))),
            _ => None,
        }
        .map(|d| {
            d.max(Duration::from_secs(1))
                .mul_f64(self.options.time_scale.clamp(0.0, 100.0))
                .max(Duration::from_millis(5))
        })
    }

    /// The run is interrupted: stop a token command that is running (its whole process
    /// group is killed; requests waiting for it fail).
    pub fn cancel_auth(&self) {
        self.tokens.cancel();
    }

    fn same_origin(&self, url: &url::Url) -> bool {
        url.scheme() == self.origin.scheme()
            && url.host_str().map(str::to_ascii_lowercase)
                == self.origin.host_str().map(str::to_ascii_lowercase)
            && url.port_or_known_default() == self.origin.port_or_known_default()
    }

    /// Send and record. Never fails: transport problems are recorded in `Exchange::error`.
    /// A throttled answer is waited out and the request sent again; the exchange returned is
    /// the answer after, with the throttled ones in [`Exchange::throttled`].
    pub async fn send(&self, mut req: OutRequest, role: Role) -> Exchange {
        req.url = self.route(&req.url);
        let req = self.with_front_door_headers(req);
        if let Some(ex) = self.own_answer(&req, role) {
            return ex;
        }
        let own = crate::http::parse_url(&req.url).is_ok_and(|u| self.same_origin(&u));
        let mut throttled: Vec<Throttled> = Vec::new();
        let mut times = 0u32;
        let mut waited = Duration::ZERO;
        let mut retried: Vec<Retried> = Vec::new();
        loop {
            if !self.pace(&req.method, own, role).await {
                let mut ex = self.record(&req, role);
                ex.error = Some("not sent: the run was interrupted".into());
                ex.throttled = throttled;
                ex.throttled_times = times;
                ex.retried = retried;
                return ex;
            }
            self.counters.requests.fetch_add(1, Ordering::Relaxed);
            if req.method.eq_ignore_ascii_case("PUT") {
                self.counters.puts.fetch_add(1, Ordering::Relaxed);
            }
            let (mut ex, transport) = self.send_once(&req, role).await;
            let Some(wait) = self.throttle_wait(&ex, times as usize) else {
                if let Some(outcome) = no_answer(&ex, transport)
                    && retried.len() < self.options.retries as usize
                {
                    // Back off 1, 2, 4... s (scaled), then send it again.
                    let wait = Duration::from_secs(1 << retried.len().min(5))
                        .mul_f64(self.options.time_scale.clamp(0.0, 100.0))
                        .max(Duration::from_millis(5));
                    retried.push(Retried {
                        seq: ex.seq,
                        outcome,
                        body: ex
                            .response
                            .as_ref()
                            .map(|r| super::cut(&r.body, 300))
                            .unwrap_or_default(),
                        started_at: ex.started_at.clone(),
                        elapsed_ms: ex.elapsed_ms,
                        waited_ms: wait.as_millis() as u64,
                    });
                    self.counters.retried.fetch_add(1, Ordering::Relaxed);
                    if self.wait(wait, role).await {
                        continue;
                    }
                }
                ex.throttled = throttled;
                ex.throttled_times = times;
                ex.retried = retried;
                return ex;
            };
            let status = ex.status().unwrap_or_default();
            let left = self.options.throttle_budget.saturating_sub(waited);
            if wait > left {
                // Still throttled past the budget: no answer of the RP's to judge.
                let why = format!(
                    "throttled: the target answered {status} for {} s and asked to wait {} s more, past the throttle budget of {} s",
                    waited.as_secs(),
                    wait.as_secs(),
                    self.options.throttle_budget.as_secs()
                );
                self.note_throttle(&mut throttled, &mut times, &ex, Duration::ZERO);
                ex.response = None;
                ex.error = Some(why);
                ex.throttled = throttled;
                ex.throttled_times = times;
                ex.retried = retried;
                return ex;
            }
            self.note_throttle(&mut throttled, &mut times, &ex, wait);
            if own {
                let until = Instant::now() + wait;
                let mut p = self.paused_until.lock().unwrap_or_else(|e| e.into_inner());
                if p.is_none_or(|x| x < until) {
                    *p = Some(until);
                }
            }
            let start = Instant::now();
            let slept = self.wait(wait, role).await;
            let took = start.elapsed();
            waited += took;
            self.counters
                .throttle_wait_ms
                .fetch_add(took.as_millis() as u64, Ordering::Relaxed);
            if !slept {
                ex.response = None;
                ex.error = Some(format!(
                    "throttled ({status}) and the run was interrupted while waiting"
                ));
                ex.throttled = throttled;
                ex.throttled_times = times;
                ex.retried = retried;
                return ex;
            }
        }
    }

    fn note_throttle(
        &self,
        kept: &mut Vec<Throttled>,
        times: &mut u32,
        ex: &Exchange,
        wait: Duration,
    ) {
        *times += 1;
        self.counters.throttled.fetch_add(1, Ordering::Relaxed);
        if kept.len() >= THROTTLED_KEPT {
            return;
        }
        let Some(r) = &ex.response else { return };
        kept.push(Throttled {
            seq: ex.seq,
            status: r.status,
            retry_after: r.header("retry-after").map(str::to_string),
            request_id: r.header("x-ms-request-id").map(str::to_string),
            body: super::cut(&r.body, 300),
            started_at: ex.started_at.clone(),
            waited_ms: wait.as_millis() as u64,
        });
    }

    /// An exchange for `req`, with nothing sent yet.
    fn record(&self, req: &OutRequest, role: Role) -> Exchange {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        Exchange {
            seq,
            role,
            surface: req.surface,
            method: req.method.clone(),
            url: self.redactor.text(&req.url),
            request_headers: Vec::new(),
            request_body: req
                .body
                .as_ref()
                .map(|b| super::cut(&self.redactor.text(b), REPORT_BODY_CHARS)),
            response: None,
            error: None,
            started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            elapsed_ms: 0,
            foreign: false,
            throttled: Vec::new(),
            throttled_times: 0,
            retried: Vec::new(),
            front_door: None,
        }
    }

    /// One attempt, recorded; and whether it failed in transport (sent, and no answer came:
    /// refused, reset, timed out), not before sending.
    async fn send_once(&self, req: &OutRequest, role: Role) -> (Exchange, bool) {
        let start = Instant::now();
        let mut ex = self.record(req, role);
        let mut transport = false;
        let result = match self.fronted(req) {
            // ARM waits 60 s for the RP, then answers 504 itself.
            Some(fd) => match tokio::time::timeout(
                super::front_door::ANSWER_DEADLINE,
                self.send_inner(req, &mut ex, &mut transport),
            )
            .await
            {
                Ok(r) => r,
                Err(_) => {
                    let a = fd.timeout_answer();
                    ex.front_door = Some(format!("ARM answered {} itself: {}", a.status, a.why));
                    ex.response = Some(front_door_response(&a));
                    ex.elapsed_ms = start.elapsed().as_millis() as u64;
                    return (ex, false);
                }
            },
            None => self.send_inner(req, &mut ex, &mut transport).await,
        };
        if let Err(e) = result {
            ex.error = Some(self.redactor.text(&e));
        } else {
            transport = false;
        }
        ex.elapsed_ms = start.elapsed().as_millis() as u64;
        (ex, transport)
    }

    /// Why a request to `url` would not be sent at all (an invalid URL, a scheme other than
    /// http(s), another origin under `--no-foreign`), or `None` when it would be. Pollers ask
    /// this first: waiting and retrying cannot change the answer.
    pub fn refusal(&self, url: &str) -> Option<String> {
        let routed = self.route(url);
        let url = match crate::http::parse_url(&routed) {
            Ok(u) => u,
            Err(e) => return Some(format!("invalid URL `{}`: {e}", self.redactor.text(url))),
        };
        if !matches!(url.scheme(), "http" | "https") {
            return Some(format!("refusing to send to a `{}:` URL", url.scheme()));
        }
        if !self.same_origin(&url) && !self.options.follow_foreign {
            return Some(format!(
                "not sent: {} is on another origin than the target ({}); --no-foreign is set",
                self.redactor.text(url.as_str()),
                self.origin.origin().ascii_serialization()
            ));
        }
        None
    }

    async fn send_inner(
        &self,
        req: &OutRequest,
        ex: &mut Exchange,
        transport: &mut bool,
    ) -> Result<(), String> {
        let refused = self
            .refusal(&req.url)
            .or_else(|| self.guard_refusal(&req.method, &req.url));
        let url = crate::http::parse_url(&req.url).ok();
        let own = url.as_ref().is_some_and(|u| self.same_origin(u));
        ex.foreign = url.is_some() && !own;
        if let Some(why) = refused {
            return Err(why);
        }
        let Some(url) = url else {
            return Err(format!("invalid URL `{}`", self.redactor.text(&req.url)));
        };
        let url = self.with_userinfo(url, own);
        let headers = self.outgoing_headers(req, own).await?;
        let method = reqwest::Method::from_bytes(req.method.as_bytes())
            .map_err(|_| format!("invalid method `{}`", req.method))?;
        let hm = self.header_map(&headers, own, ex)?;
        // Behind the played front door ARM's 60 s come first: our own timeout must not race
        // them (FD-08 judges an RP that is slower than ARM waits).
        let limit = if self.fronted(req).is_some() {
            self.options
                .request_timeout
                .max(super::front_door::ANSWER_DEADLINE + Duration::from_secs(5))
        } else {
            self.options.request_timeout
        };
        let mut builder = self.client.request(method, url).headers(hm).timeout(limit);
        if let Some(body) = &req.body {
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                builder = builder.header("Content-Type", "application/json");
                ex.request_headers
                    .push(("Content-Type".into(), "application/json".into()));
            }
            builder = builder.body(body.clone());
        }
        // Belt and braces: reqwest's timeout covers the body too, this also bounds our reads.
        let overall = limit + Duration::from_secs(1);
        // From here on, a failure is the transport's (until the body is read).
        *transport = true;
        let received = tokio::time::timeout(
            overall,
            answer::receive(builder, &self.redactor, self.options.body_cap),
        )
        .await
        .map_err(|_| {
            format!(
                "timed out: no complete response within {} s",
                overall.as_secs()
            )
        })??;
        ex.response = Some(answer::response(received, &self.redactor));
        Ok(())
    }

    /// The URL without userinfo, a credential (the HTTP client sends it as Basic auth). Only
    /// the target's own base URL may give one, and only to its origin: userinfo in a URL the
    /// server handed out (a Location, a nextLink) is never sent, on any origin.
    fn with_userinfo(&self, mut url: url::Url, own: bool) -> url::Url {
        let _ = url.set_username("");
        let _ = url.set_password(None);
        if own && (!self.origin.username().is_empty() || self.origin.password().is_some()) {
            let _ = url.set_username(self.origin.username());
            let _ = url.set_password(self.origin.password());
        }
        url
    }

    /// The request's headers: on the target's origin its pinned headers and token first (a
    /// header the request names itself wins over a pinned one), then the request's own.
    async fn outgoing_headers(
        &self,
        req: &OutRequest,
        own: bool,
    ) -> Result<Vec<(String, String)>, String> {
        let mut headers: Vec<(String, String)> = Vec::new();
        if own {
            headers.extend(
                self.fixed_headers
                    .iter()
                    .filter(|(k, _)| !req.headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k)))
                    .cloned(),
            );
            if let Some(tok) = self.tokens.token().await? {
                headers.push(("Authorization".into(), format!("Bearer {tok}")));
            }
        }
        headers.extend(req.headers.iter().cloned());
        // A Referer never carries userinfo (RFC 9110, 10.1.3), even when the base URL does.
        for (k, v) in headers.iter_mut() {
            if k.eq_ignore_ascii_case("referer")
                && let Ok(mut u) = crate::http::parse_url(v)
                && (!u.username().is_empty() || u.password().is_some())
            {
                let _ = u.set_username("");
                let _ = u.set_password(None);
                *v = u.to_string();
            }
        }
        Ok(headers)
    }

    /// The headers as sent, each recorded (redacted) in the exchange. Credentials never go
    /// off-origin, whatever a scenario wrote.
    fn header_map(
        &self,
        headers: &[(String, String)],
        own: bool,
        ex: &mut Exchange,
    ) -> Result<reqwest::header::HeaderMap, String> {
        let mut hm = reqwest::header::HeaderMap::new();
        for (k, v) in headers {
            if !own && self.redactor.is_secret_header(k) {
                continue;
            }
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| format!("invalid header name `{k}`"))?;
            let value =
                HeaderValue::from_str(v).map_err(|_| format!("invalid value for header `{k}`"))?;
            hm.append(name, value);
            ex.request_headers.push(self.redactor.header_pair(k, v));
        }
        Ok(hm)
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
