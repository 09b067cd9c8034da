//! [`Store`]: widgets, snapshots and long-running operations of the data-plane surface, kept
//! under one mutex by the caller.
//!
//! As on the ARM side, operations complete lazily and deterministically: each records its start
//! and deadline, and every request first calls [`Store::advance`], which finalizes the due
//! operations in deadline order and applies their effects (a widget's provisioningState, a
//! deleted widget, a restart count, a snapshot).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use axum::http::{HeaderName, StatusCode};
use serde_json::{Value, json};

use super::route::{Action, Monitor};

/// A widget's provisioningState when no operation of its own runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    Succeeded,
    Failed,
}

/// One widget.
#[derive(Debug, Clone, PartialEq)]
pub struct Widget {
    pub name: String,
    pub size: u64,
    pub settled: Settled,
    /// The newest PUT operation; the widget shows `Running` while it runs.
    pub latest_write: Option<String>,
    /// A DELETE runs: the widget shows `Deleting` and goes away when it ends.
    pub deleting: bool,
    pub restarts: u64,
    pub generation: u64,
}

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Create,
    Replace,
    Delete,
    Action(Action),
}

/// Where an operation stands (the monitor names it in its own words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Running,
    Succeeded,
    Failed,
    Canceled,
}

/// `code` / `message` of a failed or canceled operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub code: String,
    pub message: String,
}

/// One long-running operation.
#[derive(Debug, Clone)]
pub struct Op {
    /// The id in the monitor URL.
    pub id: String,
    /// The value of the `Operation-Id` response header.
    pub echo_id: String,
    pub kind: OpKind,
    pub monitor: Monitor,
    /// The widget name.
    pub widget: String,
    /// What the starting request asked for; a repeat with the same Operation-Id must match.
    pub fingerprint: String,
    seq: u64,
    /// Before this instant the standard monitor says `NotStarted` (under the hold-open gate,
    /// also until its monitor has been read once: see [`Op::not_started`]).
    pub not_before: Instant,
    pub deadline: Instant,
    pub fail: bool,
    pub phase: Phase,
    /// The result the operation produces when it succeeds (planned at start).
    pub result: Option<Value>,
    pub error: Option<OpError>,
    /// Status, body and link headers of the initial answer, replayed on a repeat.
    pub initial_status: StatusCode,
    pub initial_body: Value,
    pub links: Vec<(HeaderName, String)>,
    /// `:snapshot`: the id the final-result link names.
    pub snapshot_id: Option<String>,
    /// `:export`: the exported document, once completed.
    pub exported: Option<Value>,
    /// Hold-open gate: reads that saw it running, and how many it needs before it may end.
    pub observed: u32,
    reads_needed: u32,
    /// The answer linked no monitor: GETs of the widget count as observations.
    pub resource_reads: bool,
    /// Reads of its monitor that showed it ended (the `mon-terminal-flips` fault acts on later
    /// ones).
    pub terminal_reads: u32,
}

impl Op {
    /// Whether the standard monitor still says `NotStarted` at `now`: before `not_before`
    /// and, under the hold-open gate, on the answer that started it and the first read of its
    /// monitor, so that a reader sees NotStarted then Running whatever the machine load.
    pub fn not_started(&self, now: Instant) -> bool {
        self.monitor == Monitor::Operations
            && (now < self.not_before || (self.reads_needed > 0 && self.observed < 2))
    }
}

/// What [`Store::start`] needs to know.
#[derive(Debug, Clone)]
pub struct OpSpec {
    pub id: String,
    pub echo_id: String,
    pub kind: OpKind,
    pub monitor: Monitor,
    pub widget: String,
    pub fingerprint: String,
    pub fail: bool,
    pub result: Option<Value>,
    pub initial_status: StatusCode,
    pub initial_body: Value,
    pub links: Vec<(HeaderName, String)>,
    pub snapshot_id: Option<String>,
}

impl OpSpec {
    /// Whether the answer links no status monitor (only under `mon-no-operation-location`).
    fn links_no_monitor(&self) -> bool {
        let monitor = self.monitor.segment();
        !self
            .links
            .iter()
            .any(|(_, url)| url.contains(&format!("/dataplane/{monitor}/")))
    }
}

/// All data-plane state of one RP instance.
#[derive(Debug)]
pub struct Store {
    pub widgets: BTreeMap<String, Widget>,
    pub ops: HashMap<String, Op>,
    /// Client `Operation-Id` → operation id (the same value unless a fault says otherwise).
    pub client_ids: HashMap<String, String>,
    /// Snapshot id → the snapshot, once its operation succeeded.
    pub snapshots: HashMap<String, Value>,
    running: BTreeSet<String>,
    seq: u64,
    duration: Duration,
    reads_needed: u32,
}

impl Store {
    /// `reads_needed`: the hold-open gate (`Settings::complete_after_reads`).
    pub fn new(duration: Duration, reads_needed: u32) -> Self {
        Store {
            widgets: BTreeMap::new(),
            ops: HashMap::new(),
            client_ids: HashMap::new(),
            snapshots: HashMap::new(),
            running: BTreeSet::new(),
            seq: 0,
            duration,
            reads_needed,
        }
    }

    /// A read of monitor `id`: counts for the gate while the operation runs.
    pub fn observe(&mut self, id: &str) {
        if self.running.contains(id)
            && let Some(op) = self.ops.get_mut(id)
        {
            op.observed = op.observed.saturating_add(1);
        }
    }

    /// A GET of widget `name`: counts for its running write when that linked no monitor.
    pub fn observe_widget(&mut self, name: &str) {
        let write = self
            .widgets
            .get(name)
            .and_then(|w| w.latest_write.clone())
            .filter(|id| self.ops.get(id).is_some_and(|op| op.resource_reads));
        if let Some(id) = write {
            self.observe(&id);
        }
    }

    /// Finalizes every running operation whose deadline is not after `now`, oldest first.
    pub fn advance(&mut self, now: Instant) {
        let mut due: Vec<(Instant, u64, String)> = self
            .running
            .iter()
            .filter_map(|id| self.ops.get(id))
            .filter(|op| op.deadline <= now && op.observed >= op.reads_needed)
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
        let (kind, name, fail) = (op.kind, op.widget.clone(), op.fail);
        let snapshot_id = op.snapshot_id.clone();
        let mut result = op.result.clone();
        let mut exported = None;
        match kind {
            OpKind::Create | OpKind::Replace => {
                if let Some(w) = self.widgets.get_mut(&name)
                    && w.latest_write.as_deref() == Some(id)
                {
                    w.settled = if fail {
                        Settled::Failed
                    } else {
                        Settled::Succeeded
                    };
                }
            }
            OpKind::Delete => {
                if self.widgets.get(&name).is_some_and(|w| w.deleting) {
                    self.widgets.remove(&name);
                }
            }
            OpKind::Action(_) if fail => {}
            OpKind::Action(Action::Restart) => {
                if let Some(w) = self.widgets.get_mut(&name) {
                    w.restarts += 1;
                    result = Some(json!({"widget": w.name, "restartCount": w.restarts}));
                }
            }
            OpKind::Action(Action::Rebuild) => {
                if let Some(w) = self.widgets.get_mut(&name) {
                    w.generation += 1;
                    result = Some(json!({"widget": w.name, "generation": w.generation}));
                }
            }
            OpKind::Action(Action::Snapshot) => {
                if let (Some(sid), Some(r)) = (snapshot_id, &result) {
                    self.snapshots.insert(sid, r.clone());
                }
            }
            OpKind::Action(Action::Export) => {
                exported = self
                    .widgets
                    .get(&name)
                    .map(|w| json!({"name": w.name, "size": w.size}));
            }
            OpKind::Action(Action::Analyze) => {}
        }
        if let Some(op) = self.ops.get_mut(id) {
            if fail {
                op.phase = Phase::Failed;
                op.error = Some(failure(kind, &name));
            } else {
                op.phase = Phase::Succeeded;
                op.result = result;
                op.exported = exported;
            }
        }
    }

    /// Starts an operation now.
    pub fn start(&mut self, spec: OpSpec, now: Instant) {
        self.seq += 1;
        let resource_reads = spec.links_no_monitor();
        let not_before = if spec.monitor == Monitor::Operations {
            now + self.duration / 4
        } else {
            now
        };
        let op = Op {
            id: spec.id.clone(),
            echo_id: spec.echo_id,
            kind: spec.kind,
            monitor: spec.monitor,
            widget: spec.widget,
            fingerprint: spec.fingerprint,
            seq: self.seq,
            not_before,
            deadline: now + self.duration,
            fail: spec.fail,
            phase: Phase::Running,
            result: spec.result,
            error: None,
            initial_status: spec.initial_status,
            initial_body: spec.initial_body,
            links: spec.links,
            snapshot_id: spec.snapshot_id,
            exported: None,
            observed: 0,
            reads_needed: self.reads_needed,
            resource_reads,
            terminal_reads: 0,
        };
        self.running.insert(spec.id.clone());
        self.ops.insert(spec.id, op);
    }

    /// A DELETE of `name` cancels the widget's running PUTs and actions (not other DELETEs).
    pub fn cancel_for_delete(&mut self, name: &str) {
        let victims: Vec<String> = self
            .running
            .iter()
            .filter_map(|id| self.ops.get(id))
            .filter(|op| op.widget == name && op.kind != OpKind::Delete)
            .map(|op| op.id.clone())
            .collect();
        for id in victims {
            self.running.remove(&id);
            if let Some(op) = self.ops.get_mut(&id) {
                op.phase = Phase::Canceled;
                op.error = Some(OpError {
                    code: "OperationCanceled".into(),
                    message: format!(
                        "The operation was canceled because widget '{name}' is being deleted."
                    ),
                });
            }
        }
    }

    /// The provisioningState `w` shows now (call [`Store::advance`] first).
    pub fn shown_state(&self, w: &Widget) -> &'static str {
        if w.deleting {
            return "Deleting";
        }
        let writing = w
            .latest_write
            .as_ref()
            .is_some_and(|id| self.running.contains(id));
        match (writing, w.settled) {
            (true, _) => "Running",
            (false, Settled::Succeeded) => "Succeeded",
            (false, Settled::Failed) => "Failed",
        }
    }
}

/// The error of an operation that was asked to fail (`"fail": true`).
fn failure(kind: OpKind, name: &str) -> OpError {
    let (code, what) = match kind {
        OpKind::Create | OpKind::Replace => ("ProvisioningFailed", "Provisioning"),
        OpKind::Delete => ("DeletionFailed", "Deletion"),
        OpKind::Action(Action::Export) => ("ExportFailed", "The export"),
        OpKind::Action(Action::Analyze) => ("AnalysisFailed", "The analysis"),
        OpKind::Action(Action::Restart) => ("RestartFailed", "The restart"),
        OpKind::Action(Action::Rebuild) => ("RebuildFailed", "The rebuild"),
        OpKind::Action(Action::Snapshot) => ("SnapshotFailed", "The snapshot"),
    };
    OpError {
        code: code.into(),
        message: format!(
            "{what} of widget '{name}' failed because the request set \"fail\": true."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, kind: OpKind, monitor: Monitor, fail: bool) -> OpSpec {
        OpSpec {
            id: id.into(),
            echo_id: id.into(),
            kind,
            monitor,
            widget: "w".into(),
            fingerprint: String::new(),
            fail,
            result: Some(json!({"x": 1})),
            initial_status: StatusCode::ACCEPTED,
            initial_body: Value::Null,
            links: vec![(
                HeaderName::from_static("operation-location"),
                format!("http://h/dataplane/{}/{id}", monitor.segment()),
            )],
            snapshot_id: Some("s".into()),
        }
    }

    fn widget() -> Widget {
        Widget {
            name: "w".into(),
            size: 1,
            settled: Settled::Succeeded,
            latest_write: Some("a".into()),
            deleting: false,
            restarts: 0,
            generation: 0,
        }
    }

    #[test]
    fn put_then_actions_complete_in_order() {
        let d = Duration::from_millis(100);
        let mut s = Store::new(d, 0);
        s.widgets.insert("w".into(), widget());
        let t0 = Instant::now();
        s.start(spec("a", OpKind::Create, Monitor::Operations, true), t0);
        s.start(
            spec(
                "b",
                OpKind::Action(Action::Snapshot),
                Monitor::Operations,
                false,
            ),
            t0,
        );
        assert_eq!(s.shown_state(&s.widgets["w"]), "Running");
        s.advance(t0 + d / 2);
        assert_eq!(s.ops["a"].phase, Phase::Running);
        s.advance(t0 + d);
        assert_eq!(s.ops["a"].phase, Phase::Failed);
        assert_eq!(s.shown_state(&s.widgets["w"]), "Failed");
        assert_eq!(s.ops["b"].phase, Phase::Succeeded);
        assert_eq!(s.snapshots["s"], json!({"x": 1}));
    }

    #[test]
    fn delete_cancels_and_removes() {
        let d = Duration::from_millis(100);
        let mut s = Store::new(d, 0);
        s.widgets.insert("w".into(), widget());
        let t0 = Instant::now();
        s.start(spec("a", OpKind::Replace, Monitor::Operations, false), t0);
        s.cancel_for_delete("w");
        if let Some(w) = s.widgets.get_mut("w") {
            w.deleting = true;
        }
        s.start(spec("d", OpKind::Delete, Monitor::Operations, false), t0);
        assert_eq!(s.ops["a"].phase, Phase::Canceled);
        assert_eq!(s.shown_state(&s.widgets["w"]), "Deleting");
        s.advance(t0 + d);
        assert!(s.widgets.is_empty());
        assert_eq!(s.ops["d"].phase, Phase::Succeeded);
    }

    #[test]
    fn gate_counts_monitor_reads_and_unlinked_widget_reads() {
        let mut s = Store::new(Duration::ZERO, 2);
        s.widgets.insert("w".into(), widget());
        let t0 = Instant::now();
        let later = t0 + Duration::from_secs(1);
        s.start(spec("a", OpKind::Create, Monitor::Operations, false), t0);
        s.observe("a");
        s.observe_widget("w"); // the answer linked a monitor: widget reads do not count
        s.advance(later);
        assert_eq!(s.ops["a"].phase, Phase::Running);
        s.observe("a");
        s.advance(later);
        assert_eq!(s.ops["a"].phase, Phase::Succeeded);
        let mut unlinked = spec("b", OpKind::Replace, Monitor::Operations, false);
        unlinked.links.clear();
        if let Some(w) = s.widgets.get_mut("w") {
            w.latest_write = Some("b".into());
        }
        s.start(unlinked, later);
        s.observe_widget("w");
        s.observe_widget("w");
        s.advance(later);
        assert_eq!(s.ops["b"].phase, Phase::Succeeded);
    }

    #[test]
    fn gated_standard_monitor_says_not_started_until_read_once() {
        let t0 = Instant::now();
        let mut s = Store::new(Duration::ZERO, 3);
        s.start(spec("a", OpKind::Create, Monitor::Operations, false), t0);
        let export = OpKind::Action(Action::Export);
        s.start(spec("e", export, Monitor::Exports, false), t0);
        assert!(s.ops["a"].not_started(t0), "the answer that started it");
        s.observe("a");
        assert!(s.ops["a"].not_started(t0), "the first read");
        s.observe("a");
        assert!(!s.ops["a"].not_started(t0), "later reads");
        assert!(
            !s.ops["e"].not_started(t0),
            "only the standard monitor says it"
        );
        // Ungated: the first quarter of the duration, reads or not.
        let d = Duration::from_millis(400);
        let mut u = Store::new(d, 0);
        u.start(spec("b", OpKind::Create, Monitor::Operations, false), t0);
        assert!(u.ops["b"].not_started(t0 + d / 8));
        assert!(!u.ops["b"].not_started(t0 + d / 4));
    }
}
