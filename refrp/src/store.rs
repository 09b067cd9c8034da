//! [`Store`]: resource groups, resources and operations of one RP instance, kept under one
//! mutex by the caller.
//!
//! Operations complete lazily and deterministically: each records its start instant and
//! deadline, and every request first calls [`Store::advance`], which finalizes all operations
//! whose deadline has passed, in deadline order. Propagation (seed 000) is derived, not stored:
//! [`Store::shown_state`] looks at the running operations on a resource, its ancestors and its
//! descendants; when an operation ends, [`Store::advance`] writes the terminal state to every
//! resource that showed it.
//!
//! Store keys are lowercased resource ids (see [`crate::path::ResRef::key`]); a key `a` is an
//! ancestor of `b` when `b` starts with `a/`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::faults::Fault;
use crate::ids;
use crate::path::Kind;
use crate::settings::Settings;

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
}

/// What [`Store::start`] needs to know.
#[derive(Debug, Clone)]
pub struct OpSpec {
    pub kind: OpKind,
    pub target: String,
    pub target_name: String,
    pub sub: String,
    pub location: String,
    pub fail_with: Option<OpError>,
    pub tenant: Option<String>,
    pub client: Option<String>,
}

/// The fault knobs the store itself honours.
#[derive(Debug, Clone, Copy)]
struct Knobs {
    no_propagation: bool,
    siblings: bool,
    delete_keeps_ancestors: bool,
    dependant_follows: bool,
    delete_no_cancel: bool,
}

/// All state of one RP instance.
#[derive(Debug)]
pub struct Store {
    pub groups: BTreeMap<String, Group>,
    pub resources: BTreeMap<String, Resource>,
    pub ops: HashMap<String, Operation>,
    running: BTreeSet<String>,
    seq: u64,
    duration: Duration,
    knobs: Knobs,
}

/// `a` is a strict ancestor of `b`.
pub fn is_ancestor(a: &str, b: &str) -> bool {
    b.len() > a.len() && b.starts_with(a) && b.as_bytes()[a.len()] == b'/'
}

/// A widget or link key has 8 slashes; nested types have more.
fn depth(key: &str) -> usize {
    key.matches('/').count()
}

/// The parent resource key of a nested resource.
pub fn parent_key(key: &str) -> Option<&str> {
    if depth(key) <= 8 {
        return None;
    }
    let (rest, _name) = key.rsplit_once('/')?;
    let (parent, _segment) = rest.rsplit_once('/')?;
    Some(parent)
}

fn are_siblings(a: &str, b: &str) -> bool {
    a != b && parent_key(a).is_some() && parent_key(a) == parent_key(b) && depth(a) == depth(b)
}

impl Store {
    pub fn new(settings: &Settings) -> Self {
        Store {
            groups: BTreeMap::new(),
            resources: BTreeMap::new(),
            ops: HashMap::new(),
            running: BTreeSet::new(),
            seq: 0,
            duration: settings.op_duration,
            knobs: Knobs {
                no_propagation: settings.has(Fault::NoPropagation),
                siblings: settings.has(Fault::PropagateToSiblings),
                delete_keeps_ancestors: settings.has(Fault::DeleteKeepsAncestors),
                dependant_follows: settings.has(Fault::DependantFollowsDependency),
                delete_no_cancel: settings.has(Fault::DeleteNoCancel),
            },
        }
    }

    fn running_ops(&self) -> impl Iterator<Item = &Operation> {
        self.running.iter().filter_map(|id| self.ops.get(id))
    }

    /// Finalizes every running operation whose deadline is not after `now`, oldest first.
    pub fn advance(&mut self, now: Instant) {
        let mut due: Vec<(Instant, u64, String)> = self
            .running_ops()
            .filter(|op| op.deadline <= now)
            .map(|op| (op.deadline, op.seq, op.id.clone()))
            .collect();
        due.sort();
        for (_, _, id) in due {
            self.finalize(&id);
        }
    }

    fn finalize(&mut self, id: &str) {
        self.running.remove(id);
        let Some(op) = self.ops.get(id) else { return };
        let (kind, target, failure) = (op.kind, op.target.clone(), op.fail_with.clone());
        let end = op.start_time + chrono::Duration::from_std(self.duration).unwrap_or_default();
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
                self.resources
                    .retain(|k, _| k != &target && !is_ancestor(&target, k));
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

    /// Writes the terminal `state` to every resource that showed the operation's state.
    fn settle(&mut self, target: &str, kind: OpKind, state: State) {
        let knobs = self.knobs;
        let siblings = knobs.siblings && matches!(kind, OpKind::Replace | OpKind::Patch);
        for (k, r) in self.resources.iter_mut() {
            let hit = k == target
                || is_ancestor(k, target)
                || (!knobs.no_propagation && is_ancestor(target, k))
                || (siblings && are_siblings(k, target));
            if hit {
                r.settled = state;
            }
        }
    }

    /// The provisioningState `key` shows now (call [`Store::advance`] first).
    pub fn shown_state(&self, key: &str) -> State {
        let mut best: Option<(u8, u64, State)> = None;
        for op in self.running_ops() {
            let Some(own) = op.kind.shown() else { continue };
            let candidate = if op.target == key {
                Some((3, own))
            } else if is_ancestor(&op.target, key) {
                if op.kind == OpKind::Delete {
                    Some((2, State::Deleting))
                } else if self.knobs.no_propagation {
                    None
                } else {
                    Some((2, own))
                }
            } else if self.knobs.delete_keeps_ancestors
                && op.kind == OpKind::Delete
                && is_ancestor(key, &op.target)
            {
                None
            } else if self.knobs.dependant_follows
                && matches!(op.kind, OpKind::Replace | OpKind::Patch)
                && self.depends_on(key, &op.target)
            {
                Some((1, State::Updating))
            } else if is_ancestor(key, &op.target)
                || (self.knobs.siblings
                    && matches!(op.kind, OpKind::Replace | OpKind::Patch)
                    && are_siblings(key, &op.target))
            {
                // Ancestors of the target show Updating (and, under a fault, its siblings).
                Some((1, State::Updating))
            } else {
                None
            };
            if let Some((rank, state)) = candidate
                && best.is_none_or(|(r, s, _)| (rank, op.seq) > (r, s))
            {
                best = Some((rank, op.seq, state));
            }
        }
        match best {
            Some((_, _, state)) => state,
            None => self
                .resources
                .get(key)
                .map_or(State::Succeeded, |r| r.settled),
        }
    }

    /// Whether resource `key` is a link whose `widgetId` names the resource `target`.
    fn depends_on(&self, key: &str, target: &str) -> bool {
        self.resources.get(key).is_some_and(|r| {
            r.kind == Kind::Link
                && r.properties
                    .get("widgetId")
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.trim().trim_end_matches('/').eq_ignore_ascii_case(target))
        })
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

    /// Starts an operation now; returns its id.
    pub fn start(&mut self, spec: OpSpec, now: Instant) -> String {
        self.seq += 1;
        let id = ids::uuid();
        let op = Operation {
            id: id.clone(),
            sub: spec.sub,
            location: spec.location,
            kind: spec.kind,
            target: spec.target,
            target_name: spec.target_name,
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
        };
        self.ops.insert(id.clone(), op);
        self.running.insert(id.clone());
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

    /// A DELETE of `key` supersedes the running operations on it and its descendants.
    /// Under `delete-no-cancel`, the resource's own operations keep running.
    pub fn cancel_for_delete(&mut self, key: &str) {
        let victims: Vec<String> = self
            .running_ops()
            .filter(|op| {
                (op.target == key && !self.knobs.delete_no_cancel) || is_ancestor(key, &op.target)
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
    pub fn remove_group(&mut self, group_key: &str) {
        let victims: Vec<String> = self
            .running_ops()
            .filter(|op| is_ancestor(group_key, &op.target))
            .map(|op| op.id.clone())
            .collect();
        for id in victims {
            self.cancel(
                &id,
                "The operation was canceled because its resource group was deleted.",
            );
        }
        self.resources.retain(|k, _| !is_ancestor(group_key, k));
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
mod tests {
    use super::*;

    const W: &str = "/subscriptions/s/resourcegroups/rg/providers/microsoft.contoso/widgets/w";

    fn res(id: &str, kind: Kind) -> Resource {
        Resource {
            id: id.to_string(),
            name: id.rsplit('/').next().unwrap_or_default().to_string(),
            type_name: String::new(),
            kind,
            location: None,
            tags: None,
            properties: Map::new(),
            settled: State::Succeeded,
            etag: ids::etag(),
            system_data: Map::new(),
            restart_count: 0,
            op_location: "eastus".into(),
        }
    }

    fn spec(kind: OpKind, target: &str) -> OpSpec {
        OpSpec {
            kind,
            target: target.to_string(),
            target_name: "n".into(),
            sub: "s".into(),
            location: "eastus".into(),
            fail_with: None,
            tenant: None,
            client: None,
        }
    }

    fn tree(settings: &Settings) -> (Store, [String; 5]) {
        let mut s = Store::new(settings);
        let g1 = format!("{W}/gadgets/g1");
        let g2 = format!("{W}/gadgets/g2");
        let s1 = format!("{g1}/sprockets/s1");
        let s2 = format!("{g2}/sprockets/s2");
        s.resources.insert(W.into(), res(W, Kind::Widget));
        for k in [&g1, &g2] {
            s.resources.insert(k.clone(), res(k, Kind::Gadget));
        }
        for k in [&s1, &s2] {
            s.resources.insert(k.clone(), res(k, Kind::Sprocket));
        }
        (s, [W.to_string(), g1, g2, s1, s2])
    }

    #[test]
    fn key_relations() {
        assert!(is_ancestor(W, &format!("{W}/gadgets/g")));
        assert!(!is_ancestor(W, &format!("{W}x/gadgets/g")));
        assert!(!is_ancestor(W, W));
        assert_eq!(parent_key(W), None);
        assert_eq!(parent_key(&format!("{W}/gadgets/g")), Some(W));
        assert!(are_siblings(
            &format!("{W}/gadgets/a"),
            &format!("{W}/gadgets/b")
        ));
    }

    #[test]
    fn child_update_propagates_up_and_down_not_sideways() {
        let settings = Settings::default();
        let (mut s, [w, g1, g2, s1, s2]) = tree(&settings);
        let t0 = Instant::now();
        let mut failing = spec(OpKind::Patch, &g1);
        failing.fail_with = Some(OpError::new("ProvisioningFailed", "boom"));
        let id = s.start(failing, t0);
        for k in [&w, &g1, &s1] {
            assert_eq!(s.shown_state(k), State::Updating, "{k}");
        }
        for k in [&g2, &s2] {
            assert_eq!(s.shown_state(k), State::Succeeded, "{k}");
        }
        assert!(s.busy(&w) && s.busy(&g1) && s.busy(&s1) && !s.busy(&g2));
        s.advance(t0 + settings.op_duration);
        for k in [&w, &g1, &s1] {
            assert_eq!(s.shown_state(k), State::Failed, "{k}");
        }
        assert_eq!(s.shown_state(&g2), State::Succeeded);
        assert_eq!(s.ops[&id].status, OpStatus::Failed);
        assert!(s.ops[&id].end_time >= Some(s.ops[&id].start_time));
    }

    #[test]
    fn parent_delete_cancels_children_and_removes_subtree() {
        let settings = Settings::default();
        let (mut s, [w, g1, _g2, s1, _]) = tree(&settings);
        let t0 = Instant::now();
        let child = s.start(spec(OpKind::Replace, &s1), t0);
        s.cancel_for_delete(&w);
        let del = s.start(spec(OpKind::Delete, &w), t0);
        assert_eq!(s.ops[&child].status, OpStatus::Canceled);
        assert_eq!(
            s.ops[&child].error.as_ref().map(|e| e.code.as_str()),
            Some("OperationCanceled")
        );
        assert_eq!(s.shown_state(&g1), State::Deleting);
        s.advance(t0 + settings.op_duration);
        assert!(s.resources.is_empty());
        assert_eq!(s.ops[&del].status, OpStatus::Succeeded);
    }

    #[test]
    fn fault_knobs_change_propagation() {
        let settings = Settings::default().with_fault(Fault::NoPropagation);
        let (mut s, [w, g1, ..]) = tree(&settings);
        s.start(spec(OpKind::Patch, &w), Instant::now());
        assert_eq!(s.shown_state(&g1), State::Succeeded);

        let settings = Settings::default().with_fault(Fault::PropagateToSiblings);
        let (mut s, [_, g1, g2, ..]) = tree(&settings);
        s.start(spec(OpKind::Patch, &g1), Instant::now());
        assert_eq!(s.shown_state(&g2), State::Updating);
    }

    #[test]
    fn advance_finalizes_in_deadline_order() {
        let settings = Settings::default();
        let (mut s, [w, ..]) = tree(&settings);
        let t0 = Instant::now();
        let r = s.start(spec(OpKind::Restart, &w), t0);
        s.advance(t0);
        assert_eq!(s.ops[&r].status, OpStatus::Running);
        s.advance(t0 + Duration::from_secs(5));
        assert_eq!(
            s.ops[&r].result,
            Some(json!({"restartCount": 1, "status": "Restarted"}))
        );
    }
}
