//! [`Store`]: resource groups, resources and operations of one RP instance, kept under one
//! mutex by the caller.
//!
//! Operations complete lazily and deterministically: each records its start instant and
//! deadline, and every request first calls [`Store::advance`], which finalizes all operations
//! whose deadline has passed (and, under the hold-open gate, that were observed running often
//! enough, see [`Store::observe`]), in deadline order. Propagation (seed 000) is derived, not
//! stored: [`Store::shown_state`] looks at the running operations on a resource, its ancestors
//! and its descendants; when an operation ends, [`Store::advance`] writes the terminal state to
//! every resource that showed it.
//!
//! Store keys are lowercased resource ids (see [`crate::path::ResRef::key`]); `relations`
//! says how keys relate.

mod relations;
mod state;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::faults::Fault;
use crate::ids;
use crate::path::Kind;
use crate::settings::Settings;
use crate::variants::Variant;

pub use relations::{is_ancestor, parent_key, within};

/// A provisioning state as shown in `properties.provisioningState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Creating,
    Updating,
    Deleting,
    Succeeded,
    Failed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Creating => "Creating",
            State::Updating => "Updating",
            State::Deleting => "Deleting",
            State::Succeeded => "Succeeded",
            State::Failed => "Failed",
        }
    }
}

/// A resource group.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub id: String,
    pub name: String,
    pub location: String,
    pub tags: Option<Map<String, Value>>,
}

/// A stored resource of any type.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// As spelled by the creating PUT.
    pub id: String,
    pub name: String,
    pub type_name: String,
    pub kind: Kind,
    pub location: Option<String>,
    pub tags: Option<Map<String, Value>>,
    /// User properties, without `provisioningState`.
    pub properties: Map<String, Value>,
    /// The state shown when no operation touches the resource.
    pub settled: State,
    pub etag: String,
    pub system_data: Map<String, Value>,
    pub restart_count: u64,
    /// Normalized location used in operation URLs (a proxy inherits its widget's).
    pub op_location: String,
}

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Create,
    Replace,
    Patch,
    Delete,
    Restart,
}

impl OpKind {
    /// The state the target shows while the operation runs; `None` for actions.
    pub fn shown(self) -> Option<State> {
        match self {
            OpKind::Create => Some(State::Creating),
            OpKind::Replace | OpKind::Patch => Some(State::Updating),
            OpKind::Delete => Some(State::Deleting),
            OpKind::Restart => None,
        }
    }

    fn updates(self) -> bool {
        matches!(self, OpKind::Replace | OpKind::Patch)
    }
}

/// Where an operation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpStatus {
    Running,
    Succeeded,
    Failed,
    Canceled,
}

/// `error.code` / `error.message` of a Failed or Canceled operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub code: String,
    pub message: String,
}

impl OpError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        OpError {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// One asynchronous operation.
#[derive(Debug, Clone)]
pub struct Operation {
    pub id: String,
    /// Subscription as spelled by the starting request.
    pub sub: String,
    pub location: String,
    pub kind: OpKind,
    /// Store key of the target resource.
    pub target: String,
    pub target_name: String,
    /// The target's type and id (as the resource answers it).
    pub target_kind: Kind,
    pub target_id: String,
    /// The path of the starting request (for Locations under it).
    pub origin: String,
    seq: u64,
    pub started: Instant,
    pub deadline: Instant,
    pub start_time: DateTime<Utc>,
    pub end_time: Option<DateTime<Utc>>,
    /// Set at start when the operation is going to fail.
    pub fail_with: Option<OpError>,
    pub status: OpStatus,
    pub error: Option<OpError>,
    pub tenant: Option<String>,
    pub client: Option<String>,
    /// The resource as it was when the operation ended (PUT/PATCH).
    pub snapshot: Option<Resource>,
    /// The action result (restart).
    pub result: Option<Value>,
    /// Hold-open gate: reads that saw it running, and how many it needs before it may end.
    pub observed: u32,
    reads_needed: u32,
    /// The answer gave no operation URL: GETs of the target count as observations.
    pub resource_reads: bool,
    /// A create answered 202: the target is invisible while it runs, the result is 201.
    pub hidden: bool,
    /// Location URLs handed out beyond the first (`new-location-per-poll`).
    pub generation: u64,
}

impl Operation {
    /// How far a running operation has come at `now`: 0 in the first quarter of its duration,
    /// 1 in the second, 2 after (the `custom-running-states` names). Under the hold-open gate
    /// a step also waits for a read of the one before (the first read shows 0, the next 1),
    /// so a reader sees each name whatever the machine load.
    pub fn running_phase(&self, now: Instant) -> u32 {
        let total = self.deadline.saturating_duration_since(self.started);
        let done = now.saturating_duration_since(self.started);
        let by_time = if done < total / 4 {
            0
        } else if done < total / 2 {
            1
        } else {
            2
        };
        if self.reads_needed > 0 {
            by_time.min(self.observed.saturating_sub(1))
        } else {
            by_time
        }
    }
}

/// What [`Store::start`] needs to know.
#[derive(Debug, Clone)]
pub struct OpSpec {
    pub kind: OpKind,
    pub target: String,
    pub target_name: String,
    pub target_kind: Kind,
    pub target_id: String,
    pub origin: String,
    pub sub: String,
    pub location: String,
    pub fail_with: Option<OpError>,
    pub tenant: Option<String>,
    pub client: Option<String>,
    pub resource_reads: bool,
    pub hidden: bool,
}

/// The fault and variant knobs the store itself honours.
#[derive(Debug, Clone, Copy)]
struct Knobs {
    no_propagation: bool,
    siblings: bool,
    delete_keeps_ancestors: bool,
    dependant_follows: bool,
    delete_no_cancel: bool,
    grandparent_untouched: bool,
    failed_children_stale: bool,
    orphans: bool,
    delete_hides: bool,
    fast: bool,
    /// `operation-id-reused`: one operation id per resource.
    reused_ids: bool,
}

/// All state of one RP instance.
#[derive(Debug)]
pub struct Store {
    pub groups: BTreeMap<String, Group>,
    /// The latest lifecycle state notified for each subscription (lower-case id).
    pub subscriptions: BTreeMap<String, String>,
    pub resources: BTreeMap<String, Resource>,
    pub ops: HashMap<String, Operation>,
    running: BTreeSet<String>,
    seq: u64,
    duration: Duration,
    reads_needed: u32,
    knobs: Knobs,
}

impl Store {
    pub fn new(settings: &Settings) -> Self {
        let fast = settings.is(Variant::FastOperations);
        Store {
            groups: BTreeMap::new(),
            subscriptions: BTreeMap::new(),
            resources: BTreeMap::new(),
            ops: HashMap::new(),
            running: BTreeSet::new(),
            seq: 0,
            duration: if fast {
                Duration::ZERO
            } else {
                settings.op_duration
            },
            reads_needed: if fast {
                0
            } else {
                settings.complete_after_reads
            },
            knobs: Knobs {
                no_propagation: settings.has(Fault::NoPropagation),
                siblings: settings.has(Fault::PropagateToSiblings),
                delete_keeps_ancestors: settings.has(Fault::DeleteKeepsAncestors),
                dependant_follows: settings.has(Fault::DependantFollowsDependency),
                delete_no_cancel: settings.has(Fault::DeleteNoCancel),
                grandparent_untouched: settings.has(Fault::GrandparentNotUpdating),
                failed_children_stale: settings.has(Fault::FailedUpdateChildrenStale),
                orphans: settings.has(Fault::ParentDeleteOrphans),
                delete_hides: settings.is(Variant::DeleteHidesAtOnce),
                fast,
                reused_ids: settings.has(Fault::OperationIdReused),
            },
        }
    }

    fn running_ops(&self) -> impl Iterator<Item = &Operation> {
        self.running.iter().filter_map(|id| self.ops.get(id))
    }

    /// Finalizes every running operation that may end by `now` (deadline passed, and observed
    /// often enough under the hold-open gate), oldest deadline first.
    pub fn advance(&mut self, now: Instant) {
        let mut due: Vec<(Instant, u64, String)> = self
            .running_ops()
            .filter(|op| op.deadline <= now && op.observed >= op.reads_needed)
            .map(|op| (op.deadline, op.seq, op.id.clone()))
            .collect();
        due.sort();
        for (_, _, id) in due {
            self.finalize(&id, now);
        }
    }

    /// One read of operation `id` through its own channel: counts for the hold-open gate
    /// while it runs.
    pub fn observe(&mut self, id: &str) {
        if self.running.contains(id)
            && let Some(op) = self.ops.get_mut(id)
        {
            op.observed = op.observed.saturating_add(1);
        }
    }

    /// A GET of resource `key`: counts for the operations on it that gave no operation URL.
    pub fn observe_resource(&mut self, key: &str) {
        let ids: Vec<String> = self
            .running_ops()
            .filter(|op| op.target == key && op.resource_reads)
            .map(|op| op.id.clone())
            .collect();
        for id in ids {
            self.observe(&id);
        }
    }

    fn finalize(&mut self, id: &str, now: Instant) {
        self.running.remove(id);
        let Some(op) = self.ops.get(id) else { return };
        let (kind, target, target_kind, failure) = (
            op.kind,
            op.target.clone(),
            op.target_kind,
            op.fail_with.clone(),
        );
        // Without the gate an operation ends exactly at its deadline; a held one when released.
        let ran = if op.reads_needed == 0 {
            self.duration
        } else {
            now.saturating_duration_since(op.started).max(self.duration)
        };
        let end = op.start_time + chrono::Duration::from_std(ran).unwrap_or_default();
        let terminal = if failure.is_some() {
            State::Failed
        } else {
            State::Succeeded
        };
        let mut snapshot = None;
        let mut result = None;
        match kind {
            OpKind::Create | OpKind::Replace | OpKind::Patch => {
                self.settle(&target, kind, terminal);
                snapshot = self.resources.get(&target).cloned();
            }
            OpKind::Delete => {
                self.remove_subtree(&target, target_kind);
                self.settle(&target, kind, State::Succeeded);
            }
            OpKind::Restart => {
                let count = match self.resources.get_mut(&target) {
                    Some(r) => {
                        r.restart_count += 1;
                        r.restart_count
                    }
                    None => 1,
                };
                result = Some(json!({"restartCount": count, "status": "Restarted"}));
            }
        }
        if let Some(op) = self.ops.get_mut(id) {
            op.end_time = Some(end);
            op.status = if failure.is_some() {
                OpStatus::Failed
            } else {
                OpStatus::Succeeded
            };
            op.error = failure;
            op.snapshot = snapshot;
            op.result = result;
        }
    }

    /// Removes `target` and everything within it (nested children, extension resources).
    /// Under `parent-delete-orphans`, a widget's gadgets (and their sprockets) stay.
    pub fn remove_subtree(&mut self, target: &str, kind: Kind) {
        let orphans =
            (self.knobs.orphans && kind == Kind::Widget).then(|| format!("{target}/gadgets/"));
        self.resources.retain(|k, _| {
            let gone = k == target || within(target, k);
            !gone || orphans.as_deref().is_some_and(|o| k.starts_with(o))
        });
    }

    /// Writes the terminal `state` to every resource that showed the operation's state.
    fn settle(&mut self, target: &str, kind: OpKind, state: State) {
        let knobs = self.knobs;
        let siblings = knobs.siblings && kind.updates();
        let stale_children =
            knobs.failed_children_stale && kind.updates() && state == State::Failed;
        let skipped = self.untouched_grandparent(target, kind);
        for (k, r) in self.resources.iter_mut() {
            if skipped.as_deref() == Some(k.as_str()) {
                continue;
            }
            let hit = k == target
                || is_ancestor(k, target)
                || (!knobs.no_propagation && !stale_children && is_ancestor(target, k))
                || (siblings && relations::are_siblings(k, target));
            if hit {
                r.settled = state;
            }
        }
    }

    /// Under `grandparent-not-updating`: the widget a sprocket update or delete leaves alone.
    fn untouched_grandparent(&self, target: &str, kind: OpKind) -> Option<String> {
        if !self.knobs.grandparent_untouched
            || !(kind.updates() || kind == OpKind::Delete)
            || !relations::is_sprocket(target)
        {
            return None;
        }
        parent_key(target).and_then(parent_key).map(str::to_string)
    }

    /// The newest running operation that targets `key` itself and changes its state.
    pub fn own_running(&self, key: &str) -> Option<&Operation> {
        self.running_ops()
            .filter(|op| op.target == key && op.kind.shown().is_some())
            .max_by_key(|op| op.seq)
    }

    /// Whether a write on `key` must wait: an operation runs on it, or changes the state of
    /// an ancestor or a descendant (whose state `key` shows, or which shows `key`'s).
    pub fn busy(&self, key: &str) -> bool {
        self.running_ops().any(|op| {
            op.target == key
                || (op.kind != OpKind::Restart
                    && (is_ancestor(&op.target, key) || is_ancestor(key, &op.target)))
        })
    }

    /// `key` exists and neither it nor an ancestor is hidden by a running operation (a create
    /// answered 202, or a top-level delete under `delete-hides-at-once`).
    pub fn visible(&self, key: &str) -> bool {
        if !self.resources.contains_key(key) {
            return false;
        }
        let mut k = key;
        loop {
            if self.hidden(k) {
                return false;
            }
            match parent_key(k) {
                Some(p) => k = p,
                None => return true,
            }
        }
    }

    /// Whether a running operation on `key` itself hides it.
    pub fn hidden(&self, key: &str) -> bool {
        self.running_ops().any(|op| {
            op.target == key
                && (op.hidden
                    || (self.knobs.delete_hides
                        && op.kind == OpKind::Delete
                        && !op.target_kind.nested()))
        })
    }

    /// Starts an operation now; returns its id. Under `fast-operations` it ends at once.
    pub fn start(&mut self, spec: OpSpec, now: Instant) -> String {
        self.seq += 1;
        // The fault: the resource's earlier operation id again, once that one has succeeded
        // (a superseded one, just canceled, keeps its id to itself).
        let id = match self.knobs.reused_ids.then(|| ids::of_key(&spec.target)) {
            Some(id)
                if self
                    .ops
                    .get(&id)
                    .is_none_or(|op| op.status == OpStatus::Succeeded) =>
            {
                id
            }
            _ => ids::uuid(),
        };
        let op = Operation {
            id: id.clone(),
            sub: spec.sub,
            location: spec.location,
            kind: spec.kind,
            target: spec.target,
            target_name: spec.target_name,
            target_kind: spec.target_kind,
            target_id: spec.target_id,
            origin: spec.origin,
            seq: self.seq,
            started: now,
            deadline: now + self.duration,
            start_time: Utc::now(),
            end_time: None,
            fail_with: spec.fail_with,
            status: OpStatus::Running,
            error: None,
            tenant: spec.tenant,
            client: spec.client,
            snapshot: None,
            result: None,
            observed: 0,
            reads_needed: self.reads_needed,
            resource_reads: spec.resource_reads,
            hidden: spec.hidden,
            generation: 0,
        };
        self.ops.insert(id.clone(), op);
        self.running.insert(id.clone());
        if self.knobs.fast {
            self.finalize(&id, now);
        }
        id
    }

    fn cancel(&mut self, id: &str, why: &str) {
        self.running.remove(id);
        if let Some(op) = self.ops.get_mut(id) {
            op.status = OpStatus::Canceled;
            op.end_time = Some(Utc::now().max(op.start_time));
            op.error = Some(OpError::new("OperationCanceled", why));
        }
    }

    /// A DELETE of `key` supersedes the running operations on it and everything within it.
    /// Under `delete-no-cancel`, the resource's own operations keep running.
    pub fn cancel_for_delete(&mut self, key: &str) {
        let victims: Vec<String> = self
            .running_ops()
            .filter(|op| {
                (op.target == key && !self.knobs.delete_no_cancel) || within(key, &op.target)
            })
            .map(|op| op.id.clone())
            .collect();
        for id in victims {
            self.cancel(
                &id,
                "The operation was canceled because the resource is being deleted.",
            );
        }
    }

    /// Removes a group and everything in it, cancelling running operations there.
    /// Has the RP seen this subscription (a notification, a group, a resource)?
    pub fn knows_subscription(&self, sub_key: &str) -> bool {
        let prefix = format!("/subscriptions/{sub_key}/");
        self.subscriptions.contains_key(sub_key)
            || self.groups.keys().any(|k| k.starts_with(&prefix))
            || self.resources.keys().any(|k| k.starts_with(&prefix))
    }

    /// A Deleted subscription: everything the RP holds for it goes (a cascade, no DELETE per
    /// resource), its running operations canceled.
    pub fn remove_subscription(&mut self, sub_key: &str) {
        let prefix = format!("/subscriptions/{sub_key}");
        let groups: Vec<String> = self
            .groups
            .keys()
            .filter(|k| within(&prefix, k))
            .cloned()
            .collect();
        for g in groups {
            self.remove_group(&g);
        }
        let victims: Vec<String> = self
            .running_ops()
            .filter(|op| within(&prefix, &op.target))
            .map(|op| op.id.clone())
            .collect();
        for id in victims {
            self.cancel(
                &id,
                "The operation was canceled because its subscription was deleted.",
            );
        }
        self.resources.retain(|k, _| !within(&prefix, k));
    }

    /// Moves the resource at `key` (in the group `from`) and everything under it to the group
    /// `to`: new keys and ids, the rest kept. With `copy` (a fault) the source stays too.
    pub fn regroup(&mut self, key: &str, from: &str, to: &crate::path::GroupRef, copy: bool) {
        let moved: Vec<(String, Resource)> = self
            .resources
            .range(key.to_string()..)
            .take_while(|(k, _)| k.starts_with(key))
            .filter(|(k, _)| k.as_str() == key || within(key, k))
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        for (k, mut r) in moved {
            let new_key = format!("{}{}", to.key(), &k[from.len()..]);
            if r.id.len() >= from.len() && r.id[..from.len()].eq_ignore_ascii_case(from) {
                r.id = format!("{}{}", to.id(), &r.id[from.len()..]);
            }
            if !copy {
                self.resources.remove(&k);
            }
            self.resources.insert(new_key, r);
        }
    }

    pub fn remove_group(&mut self, group_key: &str) {
        let victims: Vec<String> = self
            .running_ops()
            .filter(|op| within(group_key, &op.target))
            .map(|op| op.id.clone())
            .collect();
        for id in victims {
            self.cancel(
                &id,
                "The operation was canceled because its resource group was deleted.",
            );
        }
        self.resources.retain(|k, _| !within(group_key, k));
        self.groups.remove(group_key);
    }

    /// Items directly under a collection key prefix (ending in `/`), in key order.
    pub fn children<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a String, &'a Resource)> + 'a {
        self.resources
            .range(prefix.to_string()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .filter(move |(k, _)| !k[prefix.len()..].contains('/'))
    }
}

#[cfg(test)]
mod tests;
