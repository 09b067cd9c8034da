//! From format-neutral raw entries to redacted [`Exchange`]s, their [`EntryMeta`], and at the end
//! a [`Recording`] with what the recorder stripped and the operation flows.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::body::{JsonBudget, Prepared};
use super::raw::RawEntry;
use super::secrets::Scrubber;
use super::{BodyState, EntryMeta, Format, ReadOptions, Recording, Stripped};
use super::{batch, flows, is_arm_url, provider_namespace};
use crate::http::{Exchange, REPORT_BODY_CHARS, Response, Role, cut};

#[derive(Debug, Default)]
struct Counts {
    pseudo_headers: usize,
    bodies_not_recorded: usize,
    bodies_over_cap: usize,
    request_bodies_over_cap: usize,
    non_arm_bodies_dropped: usize,
    batches: usize,
    batch_inner: usize,
    bare_paths: usize,
}

/// Where a recording's bare-path request URLs (older .NET SessionRecords write
/// `/subscriptions/...` with no host) were sent: the ARM endpoint management SDK tests use.
const BARE_PATH_BASE: &str = "https://management.azure.com";

/// Where a built entry goes: a streamed reading hands each on and keeps none.
/// (entry, its meta, whether the file is rpconform's own HAR).
pub(crate) type Sink<'o> = Box<dyn FnMut(Exchange, EntryMeta, bool) + Send + 'o>;

/// Accumulates one recording's entries (or, with a [`Sink`], hands them on one at a time).
/// A recorded response before it is scrubbed.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    size: Option<u64>,
    body: Prepared,
}

pub(crate) struct Builder<'o> {
    opts: &'o ReadOptions,
    scrub: Scrubber,
    entries: Vec<Exchange>,
    meta: Vec<EntryMeta>,
    sink: Option<Sink<'o>>,
    /// Entries built so far (kept or handed on).
    pushed: usize,
    budget: JsonBudget,
    seen_request: BTreeSet<String>,
    seen_response: BTreeSet<String>,
    /// Provider namespaces by lower-case name, spelled as first seen.
    providers: HashMap<String, String>,
    agent_net: bool,
    agent_python: bool,
    /// Keys of test-proxy `Variables`.
    pub variables: Vec<String>,
    /// The file was written by rpconform ([`super::write_har`]).
    pub own_file: bool,
    counts: Counts,
    batches: batch::Pending,
}

impl<'o> Builder<'o> {
    pub(crate) fn new(opts: &'o ReadOptions) -> Self {
        Builder {
            opts,
            scrub: Scrubber::new(),
            entries: Vec::new(),
            meta: Vec::new(),
            sink: None,
            pushed: 0,
            budget: JsonBudget {
                left: opts.json_budget,
                refused: 0,
            },
            seen_request: BTreeSet::new(),
            seen_response: BTreeSet::new(),
            providers: HashMap::new(),
            agent_net: false,
            agent_python: false,
            variables: Vec::new(),
            own_file: false,
            counts: Counts::default(),
            batches: batch::Pending::default(),
        }
    }

    /// Hand each entry to `sink` as it is built instead of keeping it.
    pub(crate) fn with_sink(mut self, sink: Sink<'o>) -> Self {
        self.sink = Some(sink);
        self
    }

    pub(crate) fn body_cap(&self) -> usize {
        self.opts.body_cap
    }

    /// Add one entry (and, for a portal `/batch` call, the requests it carried).
    pub(crate) fn push(&mut self, raw: RawEntry) {
        self.push_inner(raw, None);
    }

    /// Drop HTTP/2 pseudo-headers; note which header names the file has, its user agents, and
    /// the secret values of its headers.
    fn observe_headers(&mut self, raw: &mut RawEntry) {
        let count = |r: &RawEntry| {
            r.request_headers.len() + r.response.as_ref().map_or(0, |x| x.headers.len())
        };
        let before = count(raw);
        raw.request_headers.retain(|(k, _)| !k.starts_with(':'));
        if let Some(r) = raw.response.as_mut() {
            r.headers.retain(|(k, _)| !k.starts_with(':'));
        }
        self.counts.pseudo_headers += before - count(raw);
        for (k, v) in &raw.request_headers {
            self.seen_request.insert(k.to_ascii_lowercase());
            self.scrub.learn_header(k, v);
            if k.eq_ignore_ascii_case("user-agent") {
                self.agent_net |= v.contains("azsdk-net-");
                self.agent_python |= v.contains("azsdk-python-");
            }
        }
        if let Some(r) = &raw.response {
            for (k, v) in &r.headers {
                self.seen_response.insert(k.to_ascii_lowercase());
                self.scrub.learn_header(k, v);
            }
        }
    }

    fn push_inner(&mut self, mut raw: RawEntry, batch_of: Option<usize>) {
        if raw.url.starts_with('/') && !raw.url.starts_with("//") && !self.own_file {
            raw.url = format!("{BARE_PATH_BASE}{}", raw.url);
            self.counts.bare_paths += 1;
        }
        self.observe_headers(&mut raw);
        let foreign = raw.own.as_ref().is_some_and(|o| o.foreign);
        let arm = !foreign
            && if self.own_file {
                // rpconform only talks to its target: an ARM-shaped path there is ARM traffic.
                super::arm_shaped_path(&raw.url)
            } else {
                is_arm_url(&raw.url, &self.opts.arm_hosts)
            };
        let is_batch = batch::is_batch_call(&raw.method, &raw.url);
        let is_batch_result =
            raw.method.eq_ignore_ascii_case("GET") && self.batches.awaits(&raw.url);
        let keep = arm || self.own_file || is_batch || is_batch_result;
        let (req, answer) = self.prepare(&mut raw, keep);
        // Portal batches: the inner requests, unpacked from the unscrubbed bodies.
        let inner = if is_batch || is_batch_result {
            self.unpack_batch(&raw.url, req.as_ref(), answer.as_ref(), is_batch)
        } else {
            Vec::new()
        };
        let request_body = self.request_body(req);
        let (response, state) = match answer {
            Some(a) => {
                let (r, state) = self.response(a, keep);
                (Some(r), state)
            }
            None => (None, BodyState::Recorded),
        };
        let provider = provider_namespace(&raw.url).map(|ns| {
            self.providers
                .entry(ns.to_ascii_lowercase())
                .or_insert(ns)
                .clone()
        });
        let started_at = raw.started_at.clone();
        let exchange = self.exchange(raw, arm, foreign, request_body, response);
        let meta = EntryMeta {
            arm,
            provider,
            response_body: state,
            batch: batch_of,
        };
        let outer = self.emit(exchange, meta);
        for mut e in inner {
            self.counts.batch_inner += 1;
            e.started_at = started_at.clone();
            self.push_inner(e, Some(outer));
        }
    }

    /// The bodies prepared (parsed within the budget, their secrets learnt before anything is
    /// scrubbed). Request JSON is parsed only to find and mask its secrets (no budget: it is
    /// dropped); a response's body is kept only when `keep`.
    fn prepare(&mut self, raw: &mut RawEntry, keep: bool) -> (Option<Prepared>, Option<Answer>) {
        let cap = self.opts.body_cap;
        let req = raw.request_body.take().map(|b| {
            let mut unbounded = JsonBudget {
                left: usize::MAX,
                refused: 0,
            };
            Prepared::new(b, cap, true, &mut unbounded)
        });
        let answer = raw.response.take().map(|r| Answer {
            status: r.status,
            headers: r.headers,
            size: r.size,
            body: Prepared::new(r.body, cap, keep, &mut self.budget),
        });
        if let Some(p) = &req {
            p.learn(&self.scrub);
        }
        if let Some(a) = &answer {
            a.body.learn(&self.scrub);
        }
        (req, answer)
    }

    /// A portal batch's inner requests (a batch call's, or its result's when read later).
    fn unpack_batch(
        &mut self,
        url: &str,
        req: Option<&Prepared>,
        answer: Option<&Answer>,
        is_batch: bool,
    ) -> Vec<RawEntry> {
        let no_headers = Vec::new();
        let inner = self.batches.unpack(
            url,
            req.and_then(Prepared::raw_text),
            answer.map(|a| a.status),
            answer.map_or(&no_headers, |a| &a.headers),
            answer.and_then(|a| a.body.json()),
        );
        if is_batch {
            self.counts.batches += 1;
        }
        inner
    }

    /// The request body as recorded: scrubbed, or none when over the cap.
    fn request_body(&mut self, req: Option<Prepared>) -> Option<String> {
        req.map(|p| p.finish(&self.scrub)).and_then(|f| {
            if let BodyState::OverCap { .. } = f.state {
                self.counts.request_bodies_over_cap += 1;
                None
            } else {
                Some(f.text)
            }
        })
    }

    /// The response as recorded, scrubbed, and what became of its body.
    fn response(&mut self, a: Answer, keep: bool) -> (Response, BodyState) {
        let f = a.body.finish(&self.scrub);
        let state = f.state;
        match state {
            BodyState::NotRecorded if keep => self.counts.bodies_not_recorded += 1,
            BodyState::NotRecorded => self.counts.non_arm_bodies_dropped += 1,
            BodyState::OverCap { .. } => self.counts.bodies_over_cap += 1,
            BodyState::Recorded => {}
        }
        let response = Response {
            status: a.status,
            headers: a
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), self.scrub.header(k, v)))
                .collect(),
            body: f.text,
            // The size the recording states wins (the text may be cut or masked), unless it
            // is 0 beside a body (some exporters write 0 for cached bodies).
            body_bytes: a
                .size
                .filter(|&s| s > 0 || f.bytes == 0)
                .map_or(f.bytes, |s| s as usize),
            json: f.json,
            json_error: f.json_error,
            // Recorded cookie values are masked: a replayed flow has no jar to fill.
            set_cookies: Vec::new(),
            sent: None,
        };
        (response, state)
    }

    /// The exchange as replay judges it: scrubbed, on its surface, numbered as recorded (or
    /// in order).
    fn exchange(
        &self,
        raw: RawEntry,
        arm: bool,
        foreign: bool,
        request_body: Option<String>,
        response: Option<Response>,
    ) -> Exchange {
        let seq = raw.own.as_ref().map_or(self.pushed as u64 + 1, |o| o.seq);
        let role = raw.own.as_ref().map_or(Role::Step, |o| o.role);
        Exchange {
            seq,
            role,
            throttled: Vec::new(),
            throttled_times: 0,
            retried: Vec::new(),
            front_door: None,
            surface: match &raw.own {
                Some(o) => o.surface,
                None if arm => crate::http::Surface::Arm,
                None => crate::http::Surface::Other,
            },
            method: raw.method.to_ascii_uppercase(),
            url: self.scrub.text(&raw.url),
            request_headers: raw
                .request_headers
                .iter()
                .map(|(k, v)| (k.clone(), self.scrub.header(k, v)))
                .collect(),
            request_body,
            error: raw
                .error
                .as_deref()
                .map(|e| cut(&self.scrub.text(e), REPORT_BODY_CHARS)),
            response,
            started_at: raw.started_at,
            elapsed_ms: raw.elapsed_ms,
            foreign,
        }
    }

    /// Keep an entry, or hand it to the sink; its position.
    fn emit(&mut self, exchange: Exchange, meta: EntryMeta) -> usize {
        self.pushed += 1;
        match &mut self.sink {
            Some(sink) => sink(exchange, meta, self.own_file),
            None => {
                self.entries.push(exchange);
                self.meta.push(meta);
            }
        }
        self.pushed - 1
    }

    /// The entries pushed so far, handed over and forgotten (the proxy records one exchange at
    /// a time and keeps none).
    pub(crate) fn drain(&mut self) -> Vec<(Exchange, EntryMeta)> {
        let e = std::mem::take(&mut self.entries);
        let m = std::mem::take(&mut self.meta);
        e.into_iter().zip(m).collect()
    }

    /// What the recorder strips, from the format, its flavour and the file's own evidence.
    fn stripped(&self, format: Format, notes: &mut Vec<String>) -> Stripped {
        let (req, resp): (&[&str], &[&str]) = match format {
            Format::Vcrpy => (VCRPY_FILTER, VCRPY_FILTER),
            Format::Har if self.own_file => (&[], &[]),
            Format::Har => (&["authorization", "cookie"], &["set-cookie"]),
            Format::TestProxy => {
                let net_vars = self
                    .variables
                    .iter()
                    .any(|k| NET_VARIABLES.contains(&k.as_str()));
                let net = (net_vars || self.agent_net) && !self.agent_python;
                notes.push(if net {
                    "test-proxy flavour: .NET (Variables keys or User-Agent); nothing stripped"
                        .into()
                } else if self.agent_python {
                    "test-proxy flavour: Python (User-Agent); request Authorization and \
                     x-ms-client-request-id, response x-ms-request-id stripped"
                        .into()
                } else {
                    "test-proxy flavour: unknown; Python's stripping assumed".into()
                });
                if net {
                    (&[], &[])
                } else {
                    (
                        &["authorization", "x-ms-client-request-id"],
                        &["x-ms-request-id"],
                    )
                }
            }
        };
        let pick = |names: &[&str], seen: &BTreeSet<String>| -> BTreeSet<String> {
            names
                .iter()
                .filter(|n| !seen.contains(**n))
                .map(|n| n.to_string())
                .collect()
        };
        let kept: BTreeSet<&str> = req
            .iter()
            .filter(|n| self.seen_request.contains(**n))
            .chain(resp.iter().filter(|n| self.seen_response.contains(**n)))
            .copied()
            .collect();
        if !kept.is_empty() {
            notes.push(format!(
                "present in this file although the {format} recorder usually strips them, so \
                 judged: {}",
                kept.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        Stripped {
            request: pick(req, &self.seen_request),
            response: pick(resp, &self.seen_response),
        }
    }

    /// What a streamed reading learned of the whole file (the entries went to the sink).
    pub(crate) fn finish_streamed(self, path: &Path, format: Format) -> super::Streamed {
        let mut notes = Vec::new();
        let stripped = self.stripped(format, &mut notes);
        self.count_notes(&mut notes);
        super::Streamed {
            path: path.to_path_buf(),
            format,
            entries: self.pushed,
            stripped,
            notes,
            own: self.own_file,
        }
    }

    pub(crate) fn finish(mut self, path: &Path, format: Format) -> Recording {
        let mut notes = Vec::new();
        let stripped = self.stripped(format, &mut notes);
        // rpconform's own files say what each exchange was; pairing must not relabel a step.
        let recorded: Option<Vec<Role>> = self
            .own_file
            .then(|| self.entries.iter().map(|e| e.role).collect());
        let flows = flows::pair_flows(&mut self.entries);
        if let Some(roles) = recorded {
            for (e, r) in self.entries.iter_mut().zip(roles) {
                e.role = r;
            }
        }
        for f in &flows {
            let provider = self.meta[f.initial].provider.clone();
            for &(i, _) in f.polls.iter().chain(&f.finals) {
                if provider.is_some() {
                    self.meta[i].provider = provider.clone();
                }
            }
        }
        self.count_notes(&mut notes);
        Recording {
            path: path.to_path_buf(),
            format,
            entries: self.entries,
            meta: self.meta,
            stripped,
            flows,
            notes,
            own: self.own_file,
        }
    }

    /// What the reader did, counted.
    fn count_notes(&self, notes: &mut Vec<String>) {
        let c = &self.counts;
        let mut say = |n: usize, what: &str| {
            if n > 0 {
                notes.push(format!("{n} {what}"));
            }
        };
        say(c.pseudo_headers, "HTTP/2 pseudo-headers dropped");
        say(
            c.bodies_not_recorded,
            "response bodies not recorded in the file",
        );
        say(
            c.bodies_over_cap,
            "response bodies over the body cap dropped",
        );
        say(
            c.request_bodies_over_cap,
            "request bodies over the body cap dropped",
        );
        say(
            c.non_arm_bodies_dropped,
            "bodies of non-ARM exchanges not kept",
        );
        say(
            c.bare_paths,
            "request URLs written as bare paths (older .NET SessionRecords), read as sent to https://management.azure.com",
        );
        say(c.batches, "portal /batch calls");
        say(c.batch_inner, "requests unpacked from /batch calls");
        say(self.budget.refused, "bodies not parsed: JSON budget spent");
    }
}

/// Headers the azure-devtools vcrpy recorder removes from requests and responses.
const VCRPY_FILTER: &[&str] = &[
    "authorization",
    "client-request-id",
    "retry-after",
    "x-ms-authorization-auxiliary",
    "x-ms-client-request-id",
    "x-ms-correlation-request-id",
    "x-ms-gateway-service-instanceid",
    "x-ms-ratelimit-remaining-subscription-reads",
    "x-ms-ratelimit-remaining-tenant-reads",
    "x-ms-request-id",
    "x-ms-routing-request-id",
    "x-ms-served-by",
];

/// `Variables` keys only .NET's test framework writes.
const NET_VARIABLES: &[&str] = &[
    "SUBSCRIPTION_ID",
    "RandomSeed",
    "RESOURCE_MANAGER_URL",
    "AZURE_AUTHORITY_HOST",
];
