//! The rule engine's entry points. A front end (the live runner, replay, the proxy, the probe)
//! hands a [`Judge`] what it saw: every exchange as it happens ([`Judge::exchange`]: ambient
//! rules), every followed operation once it ended ([`Judge::flow`]: flow rules), and the
//! records of monitor operations, task writes and resource-group sweeps. The judge asks each
//! rule family in turn; a family's module holds its rules' whole judgement.

use std::collections::HashMap;
use std::sync::Mutex;

use super::flow::Flow;
use super::recent::Recent;
use super::{Ledger, MonitorRecord, SweepRecord, TaskRecord};
use super::{
    aao, act, del, err, etag, fd, hdr, loc, mon, opres, ops, patch, pstate, put, res, retry, rgdel,
    task,
};
use crate::http::{Exchange, Role, Surface};
use crate::target::{Monitor, Target};

/// Values that must be unique across a whole run (or recording set), with the exchange that
/// used each first.
#[derive(Debug, Default)]
pub struct Registry {
    request_ids: Mutex<HashMap<String, u64>>,
    /// Every exchange that handed out each task id, noted as its answer arrives: a write is
    /// judged when its task and resource have been followed, which in a parallel run can be
    /// after a later write that got the same id was judged.
    task_holders: Mutex<HashMap<String, Vec<u64>>>,
}

fn first_use(m: &Mutex<HashMap<String, u64>>, id: &str, seq: u64) -> Option<u64> {
    let mut m = m.lock().unwrap_or_else(|e| e.into_inner());
    match m.get(id) {
        Some(first) if *first != seq => Some(*first),
        Some(_) => None,
        None => {
            m.insert(id.to_string(), seq);
            None
        }
    }
}

impl Registry {
    /// The exchange that returned this `x-ms-request-id` first, if another one did.
    pub fn request_id_used(&self, id: &str, seq: u64) -> Option<u64> {
        first_use(&self.request_ids, id, seq)
    }

    /// Notes that exchange `seq` handed out this task id (at once, as the answer arrives).
    pub fn task_id_handed(&self, id: &str, seq: u64) {
        let mut m = self.task_holders.lock().unwrap_or_else(|e| e.into_inner());
        let holders = m.entry(id.to_string()).or_default();
        if !holders.contains(&seq) {
            holders.push(seq);
        }
    }

    /// The earliest exchange before `seq` that handed out this task id, if one did.
    pub fn task_id_used(&self, id: &str, seq: u64) -> Option<u64> {
        self.task_id_handed(id, seq);
        let m = self.task_holders.lock().unwrap_or_else(|e| e.into_inner());
        m.get(id)?.iter().copied().filter(|s| *s < seq).min()
    }

    /// Another exchange that handed out this task id, before or after this one (as far as the
    /// run has seen): the id was not this write's alone.
    pub fn task_id_shared(&self, id: &str, seq: u64) -> Option<u64> {
        self.task_id_handed(id, seq);
        let m = self.task_holders.lock().unwrap_or_else(|e| e.into_inner());
        m.get(id)?.iter().copied().find(|s| *s != seq)
    }
}

/// Headers a recording format is known to drop: their absence says nothing about the RP.
/// `recorded`: the exchanges come from a recording, whose recorder may have replaced values
/// with placeholders (see [`is_placeholder`]).
#[derive(Debug, Default, Clone)]
pub struct Stripped {
    pub request: Vec<String>,
    pub response: Vec<String>,
    pub recorded: bool,
}

/// The zero GUID: what recorders put in place of ids (the Go SDK's recorder replaced every
/// lower-case GUID with it; the test-proxy's sanitizers use it for subscription and operation
/// ids).
const ZERO_GUID: &str = "00000000-0000-0000-0000-000000000000";

/// A value a recorder's sanitizer wrote in place of the RP's: the zero GUID or `Sanitized`
/// (the test-proxy's replacement text), or the zero GUID inside a label that is the same for
/// every request (`southeastasia:00000000-…`, a region-prefixed request id whose GUID the Go
/// recorder zeroed): what is left once the zero GUIDs are cut out holds no run of eight hex
/// digits, so nothing in it tells two values apart.
pub fn is_placeholder(v: &str) -> bool {
    let v = v.trim();
    if v.eq_ignore_ascii_case(ZERO_GUID) || v.eq_ignore_ascii_case("sanitized") {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if !lower.contains(ZERO_GUID) {
        return false;
    }
    let rest = lower.replace(ZERO_GUID, " ");
    let mut run = 0;
    for c in rest.chars() {
        run = if c.is_ascii_hexdigit() { run + 1 } else { 0 };
        if run >= 8 {
            return false;
        }
    }
    true
}

impl Stripped {
    fn has(list: &[String], name: &str) -> bool {
        list.iter().any(|h| {
            h.eq_ignore_ascii_case(name)
                || (h.ends_with('*') && name.to_ascii_lowercase().starts_with(&h[..h.len() - 1]))
        })
    }
}

/// What earlier exchanges have shown, for rules that judge against it: the reads of each
/// operation (OPS-07/08) and the state of each resource (DEL-01, DEL-05, PUT-01). Each map
/// remembers the latest operations or resources only ([`Recent`]).
#[derive(Debug, Default, Clone)]
pub struct History {
    pub(super) ops: Recent<String, ops::OpSeen>,
    pub(super) shown: super::shown::Shown,
    /// The Azure-AsyncOperation URLs handed out (as resolved, query included), with the caller
    /// identity headers of the request they answered.
    pub(super) status_urls: Recent<String, Identity>,
    /// Each operation URL handed out (path key): when a read showed it ended, and whether a
    /// later write handed it out again (OPRES-12).
    pub(super) op_urls: Recent<String, opres::Handed>,
    /// Writes that set readOnly members to rpconform's probe value and were taken (SPEC-07).
    pub(super) read_only: Vec<super::spec::Probed>,
    /// What ARM's front door told the RP each resource's system data is (FD-04, FD-05).
    pub(super) system_data: super::fd::SystemData,
    /// The operation URLs (path key) whose `id` and `name` OPRES-04 judged: once per operation.
    pub(super) ids_judged: std::collections::HashSet<String>,
}

/// The caller identity headers of a request (ARM scopes an operation's status to them).
type Identity = [Option<String>; 3];

fn identity(ex: &Exchange) -> Identity {
    [
        "x-ms-home-tenant-id",
        "x-ms-client-object-id",
        "x-ms-client-tenant-id",
    ]
    .map(|h| ex.request_header(h).map(str::to_string))
}

/// Judges one test's (or one recording's) exchanges against the rules of the target's
/// profiles, into a [`Ledger`].
pub struct Judge<'r> {
    pub target: &'r Target,
    pub registry: &'r Registry,
    pub ledger: Ledger,
    pub history: History,
    pub stripped: Stripped,
}

impl<'r> Judge<'r> {
    pub fn new(target: &'r Target, registry: &'r Registry) -> Self {
        Judge {
            target,
            registry,
            ledger: Ledger::new(target.profiles.clone()),
            history: History::default(),
            stripped: Stripped::default(),
        }
    }

    /// A judge for steps that run beside this one's (its findings come back by
    /// [`Judge::absorb`]): it starts knowing which writes probed readOnly members, so that an
    /// echo in its answers is seen.
    pub fn fork(&self) -> Judge<'r> {
        let mut j = Judge::new(self.target, self.registry);
        j.history.read_only = self.history.read_only.clone();
        j
    }

    /// Take in what another judge of the same test saw (steps that ran concurrently).
    pub fn absorb(&mut self, other: Judge<'_>) {
        self.ledger.absorb(other.ledger);
        self.history.ops.extend(other.history.ops);
        self.history.op_urls.extend(other.history.op_urls);
        self.history.system_data.absorb(other.history.system_data);
        self.history.ids_judged.extend(other.history.ids_judged);
        for p in other.history.read_only {
            if !self.history.read_only.contains(&p) {
                self.history.read_only.push(p);
            }
        }
    }

    /// Is this response header one the recording format drops?
    pub fn response_stripped(&self, name: &str) -> bool {
        Stripped::has(&self.stripped.response, name)
    }

    /// Is `v` a placeholder a recorder wrote (only ever in a recording: live, the zero GUID
    /// is what the RP sent)?
    pub fn placeholder(&self, v: &str) -> bool {
        self.stripped.recorded && is_placeholder(v)
    }

    /// Is this request header one the recording format drops?
    pub fn request_stripped(&self, name: &str) -> bool {
        Stripped::has(&self.stripped.request, name)
    }

    /// The ambient rules, on one exchange as it happens; then what it shows about its resource
    /// is remembered (whatever its surface) for the rules that judge against earlier state.
    pub fn exchange(&mut self, ex: &Exchange) {
        if ex.response.is_none() {
            return;
        }
        // ARM's front door answered itself: an answer of ARM's, never the RP's (FD-08 says
        // when the RP was too slow).
        if ex.front_door.is_some() {
            fd::front_door_answered(self, ex);
            return;
        }
        if ex.surface == Surface::Arm {
            match self.status_read(ex) {
                Some(read) => self.ambient(&read),
                None => self.ambient(ex),
            }
            if let Some(r) = &ex.response
                && let Some(a) = r.header("azure-asyncoperation")
                && let Some(u) = crate::lro::resolve(&ex.url, a)
            {
                self.history.status_urls.insert(u, identity(ex));
            }
        }
        // The RP against its own spec, on every surface the spec describes: after the contract
        // rules, so that an answer that broke one is not reported again as spec drift.
        if !ex.foreign {
            super::spec::ambient(self, ex);
            fd::after_others(self, ex);
        }
        self.history.shown.observe(ex);
    }

    /// A scenario's own GET of an Azure-AsyncOperation URL handed out earlier, by the caller
    /// that started the operation, is a read of the operation resource like the follower's
    /// (replay and the proxy pair it so): judged as one. Another caller's read is not.
    fn status_read(&self, ex: &Exchange) -> Option<Exchange> {
        if ex.role != Role::Step || ex.method != "GET" {
            return None;
        }
        // The whole URL: a query may decide which endpoint answers (`?monitor=true`). Behind
        // the played front door the RP handed out the public URL and the read reached the RP's
        // endpoint: the public URL called is the Referer the front door added.
        let called = self
            .target
            .front_door
            .as_ref()
            .and(ex.request_header("referer"));
        let caller = self
            .history
            .status_urls
            .get(&ex.url)
            .or_else(|| called.and_then(|u| self.history.status_urls.get(u)))?;
        (*caller == identity(ex)).then(|| Exchange {
            role: Role::OperationStatus,
            ..ex.clone()
        })
    }

    fn ambient(&mut self, ex: &Exchange) {
        // A URL the RP handed out is the RP's, wherever it points: reads of its operation
        // resources are judged even on another host. Everything else judges the RP's own
        // origin only.
        opres::ambient(self, ex);
        ops::ambient(self, ex);
        if ex.foreign {
            return;
        }
        hdr::ambient(self, ex);
        fd::ambient(self, ex);
        err::ambient(self, ex);
        retry::ambient(self, ex);
        loc::ambient(self, ex);
        del::ambient(self, ex);
        put::ambient(self, ex);
        patch::ambient(self, ex);
        act::ambient(self, ex);
        aao::ambient(self, ex);
        etag::ambient(self, ex);
        res::ambient(self, ex);
        pstate::ambient(self, ex);
    }

    /// The flow rules, on one ARM operation once following it has ended (its end also settles
    /// what is known about its resource).
    pub fn flow(&mut self, flow: &Flow, exchanges: &[Exchange]) {
        self.history.shown.settle(flow, exchanges);
        if flow.surface != Surface::Arm {
            return;
        }
        // OPRES-03 first: whether the operation ever ended decides what the others can judge.
        opres::flow(self, flow, exchanges);
        put::flow(self, flow, exchanges);
        patch::flow(self, flow, exchanges);
        del::flow(self, flow, exchanges);
        loc::flow(self, flow, exchanges);
        aao::flow(self, flow, exchanges);
        pstate::flow(self, flow, exchanges);
        ops::flow(self, flow, exchanges);
    }

    /// The initial answer of a data-plane operation with a status monitor.
    pub fn monitor_started(&mut self, mon: &Monitor, ex: &Exchange, sent_id: Option<&str>) {
        mon::started(self, mon, ex, sent_id);
    }

    /// One read of a status monitor, as it comes.
    pub fn monitor_read(&mut self, mon: &Monitor, ex: &Exchange) {
        mon::read(self, mon, ex);
        ops::monitor_read(self, mon, ex);
    }

    /// A data-plane operation followed through its status monitor, once it ended.
    pub fn monitor_flow(&mut self, mon: &Monitor, rec: &MonitorRecord, exchanges: &[Exchange]) {
        mon::flow(self, mon, rec, exchanges);
    }

    /// A write on a task API, followed through its task and the resource.
    pub fn task(&mut self, rec: &TaskRecord, exchanges: &[Exchange]) {
        if let Some(api) = self.target.tasks.as_ref() {
            task::judge(&mut self.ledger, self.registry, api, rec, exchanges);
        }
    }

    /// A resource-group style sweep of deletes.
    pub fn sweep(&mut self, rec: &SweepRecord, exchanges: &[Exchange]) {
        rgdel::sweep(self, rec, exchanges);
    }
}
