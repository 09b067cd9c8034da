//! Pairing polls with the requests that started them (real-rps.md §4.3).
//!
//! An operation starts where a client would start polling: a 2xx answer to PUT, PATCH, DELETE
//! or POST that [`crate::lro::Strategy::arm`] says is still running (an Azure-AsyncOperation
//! link, a 202's Location; a PUT/PATCH 201 with a running `properties.provisioningState`, or a
//! 202: "async via provisioningState"), or that hands out an `Operation-Location` (a status
//! monitor). A 200/201 that hands out no operation URL and shows no provisioningState is a
//! synchronous write, not an operation, with or without a Location.
//!
//! Polls are ordinary GETs; nothing in a recording marks them. A GET whose URL equals an
//! `Azure-AsyncOperation`, `Location` or `Operation-Location` value handed out earlier in the
//! file (compared after parsing, so `\u0026` escapes and a raw space are no obstacle) polls that
//! operation; the headers on a poll's answer (a 202 poll's Location, normally the same URL)
//! extend the chain, but a URL keeps the role it was first handed out in (an
//! Azure-AsyncOperation URL whose 202 reads name it as their Location stays the operation
//! resource). Only a 202's Location is a link: on a 200/201 it names the resource (Redis,
//! ManagedIdentity 201s), never an operation. Only the channel a client
//! follows (Azure-AsyncOperation, else Operation-Location, else Location) ends the operation:
//! a terminal status (Succeeded, Failed or Canceled in any case), or a Location poll answered
//! other than 202. After the end, a GET of its Location URL is the final Location GET, and the
//! first GET of the PUT/PATCH URL the final resource GET. Without any link, GETs of the
//! resource are the polls until its provisioningState is terminal. GETs of the resource while
//! a linked operation runs are kept as `watches` (reads of the resource during the operation).
//!
//! A read that carries other caller identity headers (`x-ms-home-tenant-id`,
//! `x-ms-client-object-id`, `x-ms-client-tenant-id`) than the request that started the
//! operation is another caller's read, not a poll (ARM scopes an operation's status to its
//! caller).
//!
//! [`Pairer`] does this one exchange at a time (the proxy pairs traffic as it passes);
//! [`pair_flows`] runs it over a whole recording.
//!
//! Roles: AAO polls become [`Role::OperationStatus`], Location polls [`Role::LocationPoll`],
//! Operation-Location polls [`Role::MonitorPoll`] (a status monitor, not an ARM operation
//! resource), resource reads [`Role::ResourcePoll`]. Only exchanges still [`Role::Step`] are
//! changed (and the reader keeps every role an rpconform HAR recorded).

use std::collections::{BTreeMap, HashMap};

use crate::http::{Exchange, Role};

/// How a poll reached its operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PollChannel {
    AzureAsyncOperation,
    Location,
    OperationLocation,
    /// A GET of the resource the operation acts on.
    Resource,
}

impl PollChannel {
    fn role(self) -> Role {
        match self {
            PollChannel::AzureAsyncOperation => Role::OperationStatus,
            PollChannel::Location => Role::LocationPoll,
            PollChannel::OperationLocation => Role::MonitorPoll,
            PollChannel::Resource => Role::ResourcePoll,
        }
    }
}

/// One long-running operation found in a recording. Indices are into `Recording::entries` (for
/// the proxy: positions in its stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSketch {
    /// The request that started it.
    pub initial: usize,
    pub method: String,
    /// The URL of the resource acted on (PUT, PATCH, DELETE), when there is one.
    pub resource_url: Option<String>,
    /// Reads of the operation's URLs while it ran, up to and including the one that saw it
    /// end (and, for a flow without Azure-AsyncOperation, re-reads of them after the end).
    pub polls: Vec<(usize, PollChannel)>,
    /// Reads after it ended: the final Location GET, the final resource GET.
    pub finals: Vec<(usize, PollChannel)>,
    /// GETs of the resource while a linked operation ran (neither polls nor finals).
    pub watches: Vec<usize>,
    /// The terminal status seen (`Succeeded`, `Failed`...; for a Location flow the final
    /// answer's HTTP status), if the recording shows the end.
    pub terminal: Option<String>,
}

impl FlowSketch {
    /// Every exchange of the flow after the initial one, in order.
    pub fn reads(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .polls
            .iter()
            .chain(&self.finals)
            .map(|(i, _)| *i)
            .chain(self.watches.iter().copied())
            .collect();
        v.sort_unstable();
        v
    }

    /// The last exchange of the flow.
    pub fn last(&self) -> usize {
        self.reads().last().copied().unwrap_or(self.initial)
    }
}

const TERMINAL: [&str; 4] = ["succeeded", "failed", "canceled", "cancelled"];

fn is_terminal(state: &str) -> bool {
    TERMINAL.iter().any(|t| t.eq_ignore_ascii_case(state))
}

/// The URL as compared: parsed and serialised (host case, percent-encoding), else as given.
fn norm(url: &str) -> String {
    crate::http::parse_url(url.trim()).map_or_else(|_| url.trim().to_string(), |u| u.to_string())
}

/// Path only, lower case: how ARM compares resource URLs.
fn path_key(url: &str) -> String {
    crate::http::parse_url(url.trim())
        .map_or_else(|_| url.to_string(), |u| u.path().to_string())
        .trim_end_matches('/')
        .to_ascii_lowercase()
}

struct State {
    done: bool,
    /// The channel that decides the end (the one a client follows).
    driving: PollChannel,
    /// The URLs this flow handed out, and the resource path it registered.
    urls: Vec<String>,
    resource: Option<String>,
    /// The caller identity headers of the initial request.
    caller: Vec<(String, String)>,
}

/// ARM's caller identity headers: an operation's status is the caller's, so a read made as
/// another tenant or client is not a poll of this client's operation.
const CALLER: &[&str] = &[
    "x-ms-home-tenant-id",
    "x-ms-client-object-id",
    "x-ms-client-tenant-id",
];

fn caller(ex: &Exchange) -> Vec<(String, String)> {
    CALLER
        .iter()
        .filter_map(|h| ex.request_header(h).map(|v| (h.to_string(), v.to_string())))
        .collect()
}

/// Does this read come from another caller than the one who started the operation?
fn other_caller(st: &State, ex: &Exchange) -> bool {
    st.caller
        .iter()
        .any(|(h, v)| ex.request_header(h).is_some_and(|x| x != v))
}

/// Pairs exchanges with the operations they poll, one at a time, in wire order.
#[derive(Default)]
pub struct Pairer {
    flows: BTreeMap<usize, (FlowSketch, State)>,
    next: usize,
    // Operation URL -> (flow, channel): the latest flow that handed it out wins.
    urls: HashMap<String, (usize, PollChannel)>,
    // Resource path -> flow, for watches, the final resource GET or provisioningState polling.
    resources: HashMap<String, usize>,
}

impl Pairer {
    pub fn new() -> Self {
        Pairer::default()
    }

    /// Pair the exchange at position `i`: set its poll role; the flow it started or joined.
    pub fn push(&mut self, i: usize, ex: &mut Exchange) -> Option<usize> {
        let resp = ex.response.as_ref()?;
        let is_get = ex.method.eq_ignore_ascii_case("GET");
        if is_get && let Some(&(f, ch)) = self.urls.get(&norm(&ex.url)) {
            let (flow, st) = self.flows.get_mut(&f)?;
            if other_caller(st, ex) {
                return None;
            }
            if st.done && ch == PollChannel::Location && st.driving != PollChannel::Location {
                flow.finals.push((i, ch));
            } else {
                flow.polls.push((i, ch));
                if !st.done && ch == st.driving {
                    let end = match ch {
                        PollChannel::Location => {
                            (resp.status != 202).then(|| resp.status.to_string())
                        }
                        _ => resp
                            .pointer("/status")
                            .and_then(|s| s.as_str())
                            .filter(|s| is_terminal(s))
                            .map(str::to_string),
                    };
                    if let Some(t) = end {
                        st.done = true;
                        flow.terminal = Some(t);
                    }
                }
            }
            let found = register(ex);
            self.take_urls(f, found);
            set_role(ex, ch);
            return Some(f);
        }
        if is_get && let Some(&f) = self.resources.get(&path_key(&ex.url)) {
            let (flow, st) = self.flows.get_mut(&f)?;
            let pstate = resp
                .pointer("/properties/provisioningState")
                .and_then(|s| s.as_str());
            let by_resource = st.driving == PollChannel::Resource;
            if st.done {
                self.resources.remove(&path_key(&ex.url));
                if flow.method == "DELETE" {
                    return None;
                }
                flow.finals.push((i, PollChannel::Resource));
            } else if by_resource {
                // provisioningState polling: this read is a poll; a terminal state ends it.
                flow.polls.push((i, PollChannel::Resource));
                if resp.status != 200 || pstate.is_none_or(is_terminal) {
                    st.done = true;
                    flow.terminal = pstate.map(str::to_string);
                    self.resources.remove(&path_key(&ex.url));
                }
            } else {
                flow.watches.push(i);
                return Some(f);
            }
            set_role(ex, PollChannel::Resource);
            return Some(f);
        }
        let method = ex.method.to_ascii_uppercase();
        if !(200..300).contains(&resp.status)
            || !matches!(method.as_str(), "PUT" | "PATCH" | "DELETE" | "POST")
        {
            return None;
        }
        let found = register(ex);
        let has = |c: PollChannel| found.iter().any(|(x, _)| *x == c);
        let running = crate::lro::Strategy::arm(&method, &ex.url, resp)
            .initial(resp)
            .is_running();
        // A 200/201 that hands out no operation URL and shows no provisioningState is a
        // synchronous write (with or without a Location naming what it made), not an
        // operation: nothing is left to see end.
        let synchronous = resp.status != 202
            && found.is_empty()
            && crate::lro::provisioning_state(resp.json.as_ref()).is_none();
        if (!running || synchronous) && !has(PollChannel::OperationLocation) {
            return None;
        }
        let driving = [
            PollChannel::AzureAsyncOperation,
            PollChannel::OperationLocation,
            PollChannel::Location,
        ]
        .into_iter()
        .find(|c| has(*c))
        .unwrap_or(PollChannel::Resource);
        let f = self.next;
        self.next += 1;
        let resource =
            matches!(method.as_str(), "PUT" | "PATCH" | "DELETE").then(|| ex.url.clone());
        let key = resource.as_deref().map(path_key);
        if let Some(k) = &key {
            self.resources.insert(k.clone(), f);
        }
        self.flows.insert(
            f,
            (
                FlowSketch {
                    initial: i,
                    method,
                    resource_url: resource,
                    polls: Vec::new(),
                    finals: Vec::new(),
                    watches: Vec::new(),
                    terminal: None,
                },
                State {
                    done: false,
                    driving,
                    urls: Vec::new(),
                    resource: key,
                    caller: caller(ex),
                },
            ),
        );
        self.take_urls(f, found);
        Some(f)
    }

    /// Register the URLs an answer of flow `f` handed out. A URL keeps the role it was first
    /// handed out in for this flow, however later answers name it: an Azure-AsyncOperation
    /// URL whose 202 reads carry Location = the same URL stays the operation resource.
    fn take_urls(&mut self, f: usize, found: Vec<(PollChannel, String)>) {
        let Some((_, st)) = self.flows.get_mut(&f) else {
            return;
        };
        for (ch, url) in found {
            if st.urls.contains(&url) {
                continue;
            }
            st.urls.push(url.clone());
            self.urls.insert(url, (f, ch));
        }
    }

    /// Did flow `f` take exchange `i` (the latest pushed) as a poll or a read after its end
    /// (not as a watch)?
    pub fn took(&self, f: usize, i: usize) -> bool {
        self.flows.get(&f).is_some_and(|(s, _)| {
            s.polls.last().is_some_and(|(p, _)| *p == i)
                || s.finals.last().is_some_and(|(p, _)| *p == i)
        })
    }

    /// Has flow `f` been seen to end?
    pub fn is_done(&self, f: usize) -> bool {
        self.flows.get(&f).is_some_and(|(_, st)| st.done)
    }

    /// Stop pairing reads with flow `f` and hand it over (the proxy judged it).
    pub fn close(&mut self, f: usize) -> Option<FlowSketch> {
        let (sketch, st) = self.flows.remove(&f)?;
        for u in st.urls {
            if self.urls.get(&u).is_some_and(|(g, _)| *g == f) {
                self.urls.remove(&u);
            }
        }
        if let Some(k) = st.resource
            && self.resources.get(&k) == Some(&f)
        {
            self.resources.remove(&k);
        }
        Some(sketch)
    }

    /// Every flow, in the order they started.
    pub fn into_flows(self) -> Vec<FlowSketch> {
        self.flows.into_values().map(|(s, _)| s).collect()
    }
}

/// Find the operation flows of a recording and set the roles of their polls.
pub fn pair_flows(entries: &mut [Exchange]) -> Vec<FlowSketch> {
    let mut p = Pairer::new();
    for (i, ex) in entries.iter_mut().enumerate() {
        p.push(i, ex);
    }
    p.into_flows()
}

/// The operation URLs an answer hands out, resolved against the request URL: its
/// Azure-AsyncOperation and Operation-Location, and its Location when it is a 202.
fn operation_headers(ex: &Exchange) -> impl Iterator<Item = (PollChannel, String)> + '_ {
    let base = crate::http::parse_url(&ex.url).ok();
    ex.response.iter().flat_map(move |r| {
        let base = base.clone();
        r.headers.iter().filter_map(move |(k, v)| {
            let ch = if k.eq_ignore_ascii_case("azure-asyncoperation") {
                PollChannel::AzureAsyncOperation
            } else if k.eq_ignore_ascii_case("location") {
                PollChannel::Location
            } else if k.eq_ignore_ascii_case("operation-location") {
                PollChannel::OperationLocation
            } else {
                return None;
            };
            let v = v.trim();
            // Only a 202's Location drives an operation: on a 200/201 it names the resource
            // (`lro::Strategy::arm`).
            if v.is_empty() || (ch == PollChannel::Location && r.status != 202) {
                return None;
            }
            let abs = match &base {
                Some(b) => b.join(v).map_or_else(|_| v.to_string(), |u| u.to_string()),
                None => v.to_string(),
            };
            Some((ch, abs))
        })
    })
}

/// The URLs to register, normalised, each once with the strongest channel it is handed out
/// on: one URL can be handed out on several channels (AKS sends the same URL as AAO and
/// Location), and reads of it are operation-status reads, so AAO wins over Location.
fn register(ex: &Exchange) -> Vec<(PollChannel, String)> {
    let rank = |c: PollChannel| match c {
        PollChannel::AzureAsyncOperation => 0,
        PollChannel::OperationLocation => 1,
        _ => 2,
    };
    let mut found: Vec<(PollChannel, String)> =
        operation_headers(ex).map(|(c, u)| (c, norm(&u))).collect();
    found.sort_by_key(|(c, _)| rank(*c));
    let mut seen = std::collections::HashSet::new();
    found.retain(|(_, u)| seen.insert(u.clone()));
    found
}

fn set_role(ex: &mut Exchange, ch: PollChannel) {
    if ex.role == Role::Step {
        ex.role = ch.role();
    }
}
