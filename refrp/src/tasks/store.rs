//! [`Store`]: tasks and subscriptions of the task surface, kept under one mutex by the caller.
//!
//! Time drives everything, lazily: a task is `received` for the first third of the operation
//! duration, `processing-in-progress` for the second, and its outcome is decided when the
//! second third ends (`completes_at`); the subscription it made or touched then moves on one
//! operation duration later (pending → active / error, deleting → gone). Every request first
//! calls [`Store::advance`], which applies all due events in time order.
//!
//! Under the hold-open gate (`Settings::complete_after_reads`) reads drive them as well: a
//! task ends once read that many times, and each phase also waits for a read of the one before
//! (the first read of a task shows `received`, later ones `processing-in-progress`), so a
//! reader sees them in turn whatever the machine load.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::faults::Fault;
use crate::ids;
use crate::settings::Settings;

/// What a task was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Create,
    Update,
    Delete,
    /// Only under `task-get-async`: a GET answered with a task.
    Get,
}

impl Command {
    /// The `commandType` of the task.
    pub fn command_type(self) -> &'static str {
        match self {
            Command::Create => "createSubscriptionRequest",
            Command::Update => "updateSubscriptionRequest",
            Command::Delete => "deleteSubscriptionRequest",
            Command::Get => "getSubscriptionRequest",
        }
    }
}

/// Where a request asked to fail (`"fail"` in the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailAt {
    Processing,
    Provisioning,
}

/// The task status values, in their order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Received,
    InProgress,
    Completed,
    Error,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Received => "received",
            TaskStatus::InProgress => "processing-in-progress",
            TaskStatus::Completed => "processing-completed",
            TaskStatus::Error => "processing-error",
        }
    }
}

/// The error a task ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskError {
    /// e.g. `SUBSCRIPTION_NOT_FOUND`.
    pub kind: &'static str,
    /// e.g. `400 BAD_REQUEST`.
    pub status: &'static str,
    pub description: String,
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Completed { resource_id: u64 },
    Error(TaskError),
}

/// One task.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub command: Command,
    /// The target of an update, delete or get.
    pub subscription: Option<u64>,
    /// The name a create or update sets.
    pub name: Option<String>,
    pub fail: Option<FailAt>,
    pub created: Instant,
    pub created_at: DateTime<Utc>,
    /// Under `task-status-regresses`: one more `received` phase after processing started.
    pub regress: bool,
    /// When the outcome is decided (later, if the hold-open gate held the task).
    pub completes_at: Instant,
    pub outcome: Option<Outcome>,
    /// Reads of the task while it had no outcome (hold-open gate).
    pub observed: u32,
    /// The hold-open gate is on: the phases follow the reads too.
    pub gated: bool,
}

impl Task {
    /// The status shown at `now` and the instant that status began.
    pub fn status_at(&self, now: Instant, third: Duration) -> (TaskStatus, Instant) {
        match &self.outcome {
            Some(Outcome::Completed { .. }) => (TaskStatus::Completed, self.completes_at),
            Some(Outcome::Error(_)) => (TaskStatus::Error, self.completes_at),
            None => match self.phase(now, third) {
                0 => (TaskStatus::Received, self.created),
                1 => (TaskStatus::InProgress, self.created + third),
                _ if self.regress => (TaskStatus::Received, self.created + third * 2),
                _ => (TaskStatus::InProgress, self.created + third),
            },
        }
    }

    /// The phase of a running task at `now`: 0 (received), 1 (processing) or 2 (received again
    /// under `task-status-regresses`, still processing otherwise), one third of the duration
    /// each; under the gate a phase also waits for a read of the one before.
    fn phase(&self, now: Instant, third: Duration) -> u32 {
        let elapsed = now.saturating_duration_since(self.created);
        let by_time = if elapsed < third {
            0
        } else if elapsed < third * 2 {
            1
        } else {
            2
        };
        if self.gated {
            by_time.min(self.observed.saturating_sub(1))
        } else {
            by_time
        }
    }
}

/// The provisioning status of a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubStatus {
    Pending,
    Active,
    Deleting,
    Error,
}

impl SubStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SubStatus::Pending => "pending",
            SubStatus::Active => "active",
            SubStatus::Deleting => "deleting",
            SubStatus::Error => "error",
        }
    }
}

/// A scheduled change of a subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    Activate,
    Fail(String),
    Remove,
}

/// One subscription.
#[derive(Debug, Clone)]
pub struct Subscription {
    pub id: u64,
    pub name: String,
    pub status: SubStatus,
    /// The cause, when `status` is `error`.
    pub error: Option<String>,
    pub next: Option<(Instant, Transition)>,
    /// Reads of the subscription since `next` was scheduled (hold-open gate).
    pub observed: u32,
}

/// The fault knobs the store itself honours.
#[derive(Debug, Clone, Copy)]
struct Knobs {
    stays_pending: bool,
    deleted_remains: bool,
    regress: bool,
}

/// All task-surface state of one RP instance.
#[derive(Debug)]
pub struct Store {
    /// In creation order.
    pub tasks: Vec<Task>,
    /// Task id → index of the first task with that id.
    index: HashMap<String, usize>,
    pub subs: BTreeMap<u64, Subscription>,
    next_sub: u64,
    /// The id every write gets under `task-id-reused`.
    fixed_task_id: Option<String>,
    duration: Duration,
    /// Hold-open gate: reads a task (or a subscription's pending change) needs before it ends.
    reads_needed: u32,
    knobs: Knobs,
}

/// A due event: a task to finish or a subscription to move on.
enum Due {
    Task(usize),
    Sub(u64),
}

impl Store {
    pub fn new(settings: &Settings) -> Self {
        Store {
            tasks: Vec::new(),
            index: HashMap::new(),
            subs: BTreeMap::new(),
            next_sub: 100_001,
            fixed_task_id: settings.has(Fault::TaskIdReused).then(ids::uuid),
            duration: settings.op_duration,
            reads_needed: settings.complete_after_reads,
            knobs: Knobs {
                stays_pending: settings.has(Fault::ResourceStaysPending),
                deleted_remains: settings.has(Fault::DeletedResourceRemains),
                regress: settings.has(Fault::TaskStatusRegresses),
            },
        }
    }

    /// One third of the operation duration: the length of each task phase.
    pub fn third(&self) -> Duration {
        self.duration / 3
    }

    /// The task with this id (the first one, should several share it).
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.index.get(id).and_then(|&i| self.tasks.get(i))
    }

    /// Records a new task starting `now`; returns its id.
    pub fn submit(
        &mut self,
        command: Command,
        subscription: Option<u64>,
        name: Option<String>,
        fail: Option<FailAt>,
        now: Instant,
    ) -> String {
        let id = self.fixed_task_id.clone().unwrap_or_else(ids::uuid);
        let phases = if self.knobs.regress { 3 } else { 2 };
        let task = Task {
            id: id.clone(),
            command,
            subscription,
            name,
            fail,
            created: now,
            created_at: Utc::now(),
            regress: self.knobs.regress,
            completes_at: now + self.third() * phases,
            outcome: None,
            observed: 0,
            gated: self.reads_needed > 0,
        };
        self.index.entry(id.clone()).or_insert(self.tasks.len());
        self.tasks.push(task);
        id
    }

    /// Applies every event due by `now`, earliest first.
    pub fn advance(&mut self, now: Instant) {
        while let Some(due) = self.next_due(now) {
            match due {
                Due::Task(i) => self.finish_task(i, now),
                Due::Sub(id) => self.move_on(id),
            }
        }
    }

    /// A read of task `id` (`GET /v1/tasks/{id}`): counts for the gate while it runs.
    pub fn observe_task(&mut self, id: &str) {
        if let Some(&i) = self.index.get(id)
            && let Some(t) = self.tasks.get_mut(i)
            && t.outcome.is_none()
        {
            t.observed = t.observed.saturating_add(1);
        }
    }

    /// A read of subscription `id`: counts for the gate while a change of it is pending.
    pub fn observe_subscription(&mut self, id: u64) {
        if let Some(s) = self.subs.get_mut(&id)
            && s.next.is_some()
        {
            s.observed = s.observed.saturating_add(1);
        }
    }

    /// Reads task `t` needs before it may end: the gate's, and under the gate one for each
    /// phase of a regressing task (received, processing, received again), so that a reader
    /// sees the regression however low the gate.
    fn reads_for(&self, t: &Task) -> u32 {
        if self.reads_needed > 0 && t.regress {
            self.reads_needed.max(3)
        } else {
            self.reads_needed
        }
    }

    fn next_due(&self, now: Instant) -> Option<Due> {
        let gate = self.reads_needed;
        let task = self
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                t.outcome.is_none() && t.completes_at <= now && t.observed >= self.reads_for(t)
            })
            .min_by_key(|(i, t)| (t.completes_at, *i))
            .map(|(i, t)| (t.completes_at, Due::Task(i)));
        let sub = self
            .subs
            .values()
            .filter(|s| s.observed >= gate)
            .filter_map(|s| s.next.as_ref().map(|(at, _)| (*at, s.id)))
            .filter(|(at, _)| *at <= now)
            .min()
            .map(|(at, id)| (at, Due::Sub(id)));
        match (task, sub) {
            (Some(t), Some(s)) => Some(if s.0 < t.0 { s.1 } else { t.1 }),
            (t, s) => t.or(s).map(|x| x.1),
        }
    }

    fn finish_task(&mut self, i: usize, now: Instant) {
        let Some(mut task) = self.tasks.get(i).cloned() else {
            return;
        };
        if self.reads_needed > 0 && now > task.completes_at {
            // Held open by the gate: the outcome is decided now.
            task.completes_at = now;
        }
        let at = task.completes_at;
        let outcome = match self.decide(&task, at) {
            Ok(resource_id) => Outcome::Completed { resource_id },
            Err(e) => Outcome::Error(e),
        };
        if let Some(t) = self.tasks.get_mut(i) {
            t.outcome = Some(outcome);
            t.completes_at = at;
        }
    }

    /// Processes `task` at `at`: the affected subscription id, or why it failed.
    fn decide(&mut self, task: &Task, at: Instant) -> Result<u64, TaskError> {
        let name = task.name.clone().unwrap_or_default();
        if task.fail == Some(FailAt::Processing) {
            return Err(TaskError {
                kind: "SUBSCRIPTION_REQUEST_REJECTED",
                status: "400 BAD_REQUEST",
                description: format!(
                    "The request for subscription '{name}' was rejected during processing because it set \"fail\": \"processing\"."
                ),
            });
        }
        let provision = self.duration;
        if task.command == Command::Create {
            let id = self.next_sub;
            self.next_sub += 1;
            let next = match task.fail {
                _ if self.knobs.stays_pending => None,
                Some(FailAt::Provisioning) => Some((
                    at + provision,
                    Transition::Fail(format!(
                        "Provisioning of subscription '{name}' failed because the request set \"fail\": \"provisioning\"."
                    )),
                )),
                _ => Some((at + provision, Transition::Activate)),
            };
            self.subs.insert(
                id,
                Subscription {
                    id,
                    name,
                    status: SubStatus::Pending,
                    error: None,
                    next,
                    observed: 0,
                },
            );
            return Ok(id);
        }
        let id = task.subscription.unwrap_or_default();
        let deleted_remains = self.knobs.deleted_remains;
        let sub = self.subs.get_mut(&id).ok_or_else(|| TaskError {
            kind: "SUBSCRIPTION_NOT_FOUND",
            status: "404 NOT_FOUND",
            description: format!("Subscription {id} does not exist."),
        })?;
        let not_active = |what: &str| TaskError {
            kind: "SUBSCRIPTION_NOT_ACTIVE",
            status: "400 BAD_REQUEST",
            description: format!("Subscription {id} is {what}."),
        };
        match task.command {
            Command::Update if sub.status != SubStatus::Active => Err(not_active(&format!(
                "{}; only an active subscription can be updated",
                sub.status.as_str()
            ))),
            Command::Update => {
                sub.name = name;
                Ok(id)
            }
            Command::Delete if sub.status == SubStatus::Deleting => {
                Err(not_active("already being deleted"))
            }
            Command::Delete => {
                sub.status = SubStatus::Deleting;
                sub.next = (!deleted_remains).then_some((at + provision, Transition::Remove));
                sub.observed = 0;
                Ok(id)
            }
            Command::Create | Command::Get => Ok(id),
        }
    }

    fn move_on(&mut self, id: u64) {
        let Some(sub) = self.subs.get_mut(&id) else {
            return;
        };
        sub.observed = 0;
        match sub.next.take().map(|n| n.1) {
            Some(Transition::Activate) => sub.status = SubStatus::Active,
            Some(Transition::Fail(cause)) => {
                sub.status = SubStatus::Error;
                sub.error = Some(cause);
            }
            Some(Transition::Remove) => {
                self.subs.remove(&id);
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(fault: Option<Fault>) -> Store {
        let mut s = Settings::default().with_op_duration(Duration::from_millis(300));
        if let Some(f) = fault {
            s = s.with_fault(f);
        }
        Store::new(&s)
    }

    #[test]
    fn create_runs_through_its_phases() {
        let mut s = store(None);
        let t0 = Instant::now();
        let id = s.submit(Command::Create, None, Some("a".into()), None, t0);
        let ms = Duration::from_millis;
        let status = |s: &Store, at| s.task(&id).map(|t| t.status_at(at, s.third()).0);
        assert_eq!(status(&s, t0), Some(TaskStatus::Received));
        assert_eq!(status(&s, t0 + ms(150)), Some(TaskStatus::InProgress));
        s.advance(t0 + ms(200));
        assert_eq!(status(&s, t0 + ms(200)), Some(TaskStatus::Completed));
        let sub = s.subs.values().next().map(|x| (x.id, x.status));
        assert_eq!(sub, Some((100_001, SubStatus::Pending)));
        s.advance(t0 + ms(500));
        assert_eq!(s.subs[&100_001].status, SubStatus::Active);
        let del = s.submit(Command::Delete, Some(100_001), None, None, t0 + ms(500));
        s.advance(t0 + ms(700));
        assert_eq!(s.subs[&100_001].status, SubStatus::Deleting);
        assert!(matches!(
            s.task(&del).and_then(|t| t.outcome.clone()),
            Some(Outcome::Completed {
                resource_id: 100_001
            })
        ));
        s.advance(t0 + ms(1000));
        assert!(s.subs.is_empty());
    }

    #[test]
    fn gate_holds_tasks_and_pending_subscriptions() {
        let settings = Settings::default()
            .with_op_duration(Duration::ZERO)
            .with_complete_after_reads(2);
        let mut s = Store::new(&settings);
        let t0 = Instant::now();
        let id = s.submit(Command::Create, None, Some("a".into()), None, t0);
        let later = t0 + Duration::from_secs(1);
        s.observe_task(&id);
        s.advance(later);
        assert!(s.task(&id).is_some_and(|t| t.outcome.is_none()));
        s.observe_task(&id);
        s.advance(later);
        assert!(s.task(&id).is_some_and(|t| t.outcome.is_some()));
        assert_eq!(s.subs[&100_001].status, SubStatus::Pending);
        s.observe_subscription(100_001);
        s.advance(later);
        assert_eq!(s.subs[&100_001].status, SubStatus::Pending);
        s.observe_subscription(100_001);
        s.advance(later);
        assert_eq!(s.subs[&100_001].status, SubStatus::Active);
    }

    #[test]
    fn gated_phases_follow_the_reads() {
        let shown = |s: &Store, id: &str, at| s.task(id).map(|t| t.status_at(at, s.third()).0);
        let t0 = Instant::now();
        let later = t0 + Duration::from_secs(1);
        // Each read as the handler makes it: advance, count, show.
        let read = |s: &mut Store, id: &str| {
            s.advance(later);
            s.observe_task(id);
            shown(s, id, later)
        };
        use TaskStatus::{Completed, InProgress, Received};
        for (gate, regress, want) in [
            (3, false, vec![Received, InProgress, InProgress, Completed]),
            (1, false, vec![Received, Completed]),
            // A regressing task shows its three phases whatever the gate.
            (3, true, vec![Received, InProgress, Received, Completed]),
            (1, true, vec![Received, InProgress, Received, Completed]),
        ] {
            let mut settings = Settings::default()
                .with_op_duration(Duration::ZERO)
                .with_complete_after_reads(gate);
            if regress {
                settings = settings.with_fault(Fault::TaskStatusRegresses);
            }
            let mut s = Store::new(&settings);
            let id = s.submit(Command::Create, None, Some("a".into()), None, t0);
            assert_eq!(
                shown(&s, &id, t0),
                Some(Received),
                "the answer that made it"
            );
            let seen: Vec<_> = (0..want.len()).filter_map(|_| read(&mut s, &id)).collect();
            assert_eq!(seen, want, "gate {gate}, regress {regress}");
        }
        // With a duration too, a phase waits for its time as well as for a read.
        let settings = Settings::default()
            .with_op_duration(Duration::from_millis(300))
            .with_complete_after_reads(3);
        let mut s = Store::new(&settings);
        let id = s.submit(Command::Create, None, Some("a".into()), None, t0);
        s.observe_task(&id);
        s.observe_task(&id);
        assert_eq!(shown(&s, &id, t0), Some(Received));
        assert_eq!(
            shown(&s, &id, t0 + Duration::from_millis(100)),
            Some(InProgress)
        );
    }

    #[test]
    fn failures_and_faults() {
        let mut s = store(None);
        let t0 = Instant::now();
        let a = s.submit(Command::Create, None, None, Some(FailAt::Processing), t0);
        let b = s.submit(Command::Create, None, None, Some(FailAt::Provisioning), t0);
        let u = s.submit(Command::Update, Some(100_001), None, None, t0);
        s.advance(t0 + Duration::from_secs(2));
        assert!(
            matches!(s.task(&a).and_then(|t| t.outcome.clone()), Some(Outcome::Error(e)) if e.kind == "SUBSCRIPTION_REQUEST_REJECTED")
        );
        assert!(matches!(
            s.task(&b).and_then(|t| t.outcome.clone()),
            Some(Outcome::Completed { .. })
        ));
        // The update was processed while the new subscription was still pending.
        assert!(
            matches!(s.task(&u).and_then(|t| t.outcome.clone()), Some(Outcome::Error(e)) if e.kind == "SUBSCRIPTION_NOT_ACTIVE")
        );
        assert_eq!(s.subs[&100_001].status, SubStatus::Error);

        let mut s = store(Some(Fault::TaskStatusRegresses));
        let id = s.submit(Command::Create, None, None, None, t0);
        let at = |ms| t0 + Duration::from_millis(ms);
        let st = |s: &Store, ms| s.task(&id).map(|t| t.status_at(at(ms), s.third()).0);
        assert_eq!(st(&s, 150), Some(TaskStatus::InProgress));
        assert_eq!(st(&s, 250), Some(TaskStatus::Received));
        s.advance(at(300));
        assert_eq!(st(&s, 300), Some(TaskStatus::Completed));

        let mut s = store(Some(Fault::TaskIdReused));
        let x = s.submit(Command::Create, None, Some("x".into()), None, t0);
        let y = s.submit(Command::Create, None, Some("y".into()), None, t0);
        assert_eq!(x, y);
        assert_eq!(
            s.task(&x).and_then(|t| t.name.clone()).as_deref(),
            Some("x")
        );
    }
}
