//! Pairing polls with the requests that started them (real-rps.md §4.3).
//!
//! Polls are ordinary GETs; nothing in a recording marks them. A GET whose URL equals an
//! `Azure-AsyncOperation`, `Location` or `Operation-Location` value handed out earlier in the
//! file (compared after parsing, so `\u0026` escapes and a raw space are no obstacle) polls that
//! operation; the headers on a poll's answer (a 202 poll's Location, normally the same URL)
//! extend the chain. A Location whose path equals its request's path is the resource itself
//! (Redis 201), not an operation. After an operation ended (an operation status Succeeded,
//! Failed or Canceled in any case, or a Location poll answered other than 202), a GET of its
//! Location URL is the final Location GET, and the first GET of the PUT/PATCH URL the final
//! resource GET. A PUT/PATCH answered 200/201 with no operation header but a running
//! `properties.provisioningState` is followed by GETs of the resource until a terminal state
//! ("async via provisioningState").
//!
//! Roles: AAO polls become [`Role::OperationStatus`], Location polls [`Role::LocationPoll`],
//! Operation-Location polls [`Role::MonitorPoll`] (a status monitor, not an ARM operation
//! resource), resource reads [`Role::ResourcePoll`]. Only exchanges still [`Role::Step`] are
//! changed (and the reader keeps every role an rpconform HAR recorded).

use std::collections::HashMap;

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

/// One long-running operation found in a recording. Indices are into `Recording::entries`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSketch {
    /// The request that started it.
    pub initial: usize,
    pub method: String,
    /// The URL of the resource acted on (PUT, PATCH, DELETE), when there is one.
    pub resource_url: Option<String>,
    /// Reads while the operation ran, up to and including the one that saw it end.
    pub polls: Vec<(usize, PollChannel)>,
    /// Reads after it ended: the final Location GET, the final resource GET.
    pub finals: Vec<(usize, PollChannel)>,
    /// The terminal status seen (`Succeeded`, `Failed`...; for a Location flow the final
    /// answer's HTTP status), if the recording shows the end.
    pub terminal: Option<String>,
}

const TERMINAL: [&str; 4] = ["succeeded", "failed", "canceled", "cancelled"];

fn is_terminal(state: &str) -> bool {
    TERMINAL.iter().any(|t| t.eq_ignore_ascii_case(state))
}

/// The URL as compared: parsed and serialised (host case, percent-encoding), else as given.
fn norm(url: &str) -> String {
    url::Url::parse(url.trim()).map_or_else(|_| url.trim().to_string(), |u| u.to_string())
}

/// Path only, lower case: how ARM compares resource URLs.
fn path_key(url: &str) -> String {
    url::Url::parse(url.trim())
        .map_or_else(|_| url.to_string(), |u| u.path().to_string())
        .trim_end_matches('/')
        .to_ascii_lowercase()
}

struct State {
    done: bool,
    /// The flow had an Azure-AsyncOperation (so a later Location GET is the final one).
    aao: bool,
    /// No operation header: the resource's provisioningState is what is polled.
    by_resource: bool,
}

/// Find the operation flows of a recording and set the roles of their polls.
pub fn pair_flows(entries: &mut [Exchange]) -> Vec<FlowSketch> {
    let mut flows: Vec<FlowSketch> = Vec::new();
    let mut state: Vec<State> = Vec::new();
    // Operation URL -> (flow, channel): the latest flow that handed it out wins.
    let mut urls: HashMap<String, (usize, PollChannel)> = HashMap::new();
    // Resource path -> flow, for the final resource GET or provisioningState polling.
    let mut resources: HashMap<String, usize> = HashMap::new();
    for (i, ex) in entries.iter_mut().enumerate() {
        let Some(resp) = &ex.response else { continue };
        let is_get = ex.method.eq_ignore_ascii_case("GET");
        if is_get && let Some(&(f, ch)) = urls.get(&norm(&ex.url)) {
            let st = &mut state[f];
            if st.done && ch == PollChannel::Location && st.aao {
                flows[f].finals.push((i, ch));
            } else {
                flows[f].polls.push((i, ch));
                match ch {
                    PollChannel::Location => {
                        if resp.status != 202 {
                            st.done = true;
                            flows[f].terminal = Some(resp.status.to_string());
                        }
                    }
                    _ => {
                        if let Some(s) = resp.pointer("/status").and_then(|s| s.as_str())
                            && is_terminal(s)
                        {
                            st.done = true;
                            flows[f].terminal = Some(s.to_string());
                        }
                    }
                }
            }
            register(&mut urls, f, ex, false);
            set_role(ex, ch);
            continue;
        }
        if is_get && let Some(&f) = resources.get(&path_key(&ex.url)) {
            let pstate = resp
                .pointer("/properties/provisioningState")
                .and_then(|s| s.as_str());
            if state[f].done {
                flows[f].finals.push((i, PollChannel::Resource));
                resources.remove(&path_key(&ex.url));
            } else if state[f].by_resource {
                // provisioningState polling: this read is a poll; a terminal state ends it.
                flows[f].polls.push((i, PollChannel::Resource));
                if resp.status != 200 || pstate.is_none_or(is_terminal) {
                    state[f].done = true;
                    flows[f].terminal = pstate.map(str::to_string);
                    resources.remove(&path_key(&ex.url));
                }
            } else {
                continue;
            }
            set_role(ex, PollChannel::Resource);
            continue;
        }
        if !(200..300).contains(&resp.status) {
            continue;
        }
        let method = ex.method.to_ascii_uppercase();
        let has_op = operation_headers(ex, true).next().is_some();
        let writes = matches!(method.as_str(), "PUT" | "PATCH");
        let running = resp
            .pointer("/properties/provisioningState")
            .and_then(|s| s.as_str())
            .is_some_and(|s| !is_terminal(s));
        let pstate_flow = writes && running && matches!(resp.status, 200 | 201);
        if !has_op && !pstate_flow {
            continue;
        }
        let f = flows.len();
        flows.push(FlowSketch {
            initial: i,
            method: method.clone(),
            resource_url: matches!(method.as_str(), "PUT" | "PATCH" | "DELETE")
                .then(|| ex.url.clone()),
            polls: Vec::new(),
            finals: Vec::new(),
            terminal: None,
        });
        let aao = operation_headers(ex, true).any(|(c, _)| c == PollChannel::AzureAsyncOperation);
        state.push(State {
            done: false,
            aao,
            by_resource: !has_op,
        });
        register(&mut urls, f, ex, true);
        if writes {
            resources.insert(path_key(&ex.url), f);
        }
    }
    flows
}

/// The operation URLs an answer hands out, resolved against the request URL; with `initial`,
/// without a Location that is the request's own resource.
fn operation_headers(
    ex: &Exchange,
    initial: bool,
) -> impl Iterator<Item = (PollChannel, String)> + '_ {
    let base = url::Url::parse(&ex.url).ok();
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
            if v.is_empty() {
                return None;
            }
            let abs = match &base {
                Some(b) => b.join(v).map_or_else(|_| v.to_string(), |u| u.to_string()),
                None => v.to_string(),
            };
            if initial && ch == PollChannel::Location && path_key(&abs) == path_key(&ex.url) {
                return None;
            }
            Some((ch, abs))
        })
    })
}

fn register(
    urls: &mut HashMap<String, (usize, PollChannel)>,
    flow: usize,
    ex: &Exchange,
    initial: bool,
) {
    // One URL can be handed out on several channels (AKS sends the same URL as AAO and
    // Location): reads of it are operation-status reads, so AAO wins over Location.
    let rank = |c: PollChannel| match c {
        PollChannel::AzureAsyncOperation => 2,
        PollChannel::OperationLocation => 1,
        _ => 0,
    };
    let mut found: Vec<(PollChannel, String)> = operation_headers(ex, initial).collect();
    found.sort_by_key(|(c, _)| rank(*c));
    for (ch, url) in found {
        urls.insert(norm(&url), (flow, ch));
    }
}

fn set_role(ex: &mut Exchange, ch: PollChannel) {
    if ex.role == Role::Step {
        ex.role = ch.role();
    }
}
