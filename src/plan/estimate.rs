//! What one test will send, read from its steps before anything is sent: the resources it
//! creates (PUTs per type, the parents and dependencies its creates need included), the
//! requests (every write, every poll of a followed operation at the assumed operation time and
//! Retry-After, the final reads, and the DELETEs of cleanup) and the waits it must sit out.
//!
//! A step under `if:`/`unless:` is decided where its condition reads only what is known
//! before the run (the type, the monitor, the table row, the target); one that reads an
//! answer is counted as taken.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::scenario::{Action, CreateSpec, Instance, Step};
use crate::target::{OpPattern, ResourceType, Target};
use crate::template::{JsonTemplate, Scope, truthy};

/// What the plan assumes of the RP's timing.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// A write's operation time, for types that declare none (`cost.operation_seconds`).
    pub operation_seconds: f64,
    /// The Retry-After the RP asks for between polls.
    pub retry_after_seconds: f64,
    /// Reads an operation needs at least before it ends (the embedded RP's `--hold-reads`).
    pub min_reads: u32,
    /// `--time-scale`: every wait is multiplied by it.
    pub time_scale: f64,
}

impl Timing {
    /// A real RP's writes, as the plan assumes them unless a type declares its own: tens of
    /// seconds, polled every 10 s (the shortest Retry-After LOC-04 allows).
    pub const ARM: Timing = Timing {
        operation_seconds: 30.0,
        retry_after_seconds: 10.0,
        min_reads: 0,
        time_scale: 1.0,
    };

    fn op_secs(&self, ty: Option<&ResourceType>) -> f64 {
        ty.and_then(|t| t.cost.operation_seconds)
            .unwrap_or(self.operation_seconds)
    }

    /// Polls of one followed operation of this type: enough Retry-After waits to outlast it,
    /// at least one, and at least the reads the RP holds it open for.
    fn polls(&self, ty: Option<&ResourceType>) -> u64 {
        let waits = (self.op_secs(ty) / self.retry_after_seconds.max(0.001)).ceil() as u64;
        waits.max(1).max(u64::from(self.min_reads))
    }

    /// Seconds one followed operation of this type takes, scaled.
    fn wait(&self, ty: Option<&ResourceType>) -> f64 {
        let polls = self.polls(ty) as f64;
        (polls * self.retry_after_seconds).max(self.op_secs(ty)) * self.time_scale
    }
}

/// What one test will send.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestCost {
    pub puts: u64,
    /// Every request: writes, polls, reads, the cleanup's DELETEs and their polls.
    pub requests: u64,
    /// Writes (PUT, PATCH, DELETE, POST) among them.
    pub writes: u64,
    /// Resources created, per type.
    pub by_type: BTreeMap<String, u64>,
    /// Seconds of mandatory waits in a row (operations followed, sleeps), scaled.
    pub wait_seconds: f64,
    /// A `not_applicable` step ends the test on this target, known before the run.
    pub not_applicable: bool,
    /// Seconds its cleanup takes once it ended (its resources' DELETEs, followed), scaled.
    pub cleanup_seconds: f64,
}

impl TestCost {
    fn write(&mut self, n: u64) {
        self.requests += n;
        self.writes += n;
    }

    /// A followed operation of `ty`: its polls (each also reading `watched` URLs), its final
    /// read, and its wait.
    fn follow(&mut self, t: &Timing, ty: Option<&ResourceType>, watched: u64) {
        let sync = ty.is_some_and(|ty| ty.lro.put.pattern == OpPattern::Sync);
        if sync {
            return;
        }
        self.requests += t.polls(ty) * (1 + watched) + 1;
        self.wait_seconds += t.wait(ty);
    }

    fn create(&mut self, t: &Timing, ty: &ResourceType) {
        self.puts += 1;
        *self.by_type.entry(ty.name.clone()).or_default() += 1;
        self.write(1);
        self.follow(t, Some(ty), 1);
    }
}

/// Estimates one test.
pub fn estimate(inst: &Instance, target: &Target, t: &Timing) -> TestCost {
    let mut c = TestCost::default();
    if inst.not_applicable.is_some() {
        return c;
    }
    let me = inst.type_name.as_deref().and_then(|n| target.type_named(n));
    let mon = inst
        .monitor
        .as_deref()
        .and_then(|m| target.monitor_named(m));
    let sc = inst.scenario();
    let mut w = Walk {
        target,
        t,
        me,
        mon,
        scope: known_before(inst, target, me, mon),
        c: &mut c,
        group: 0.0,
    };
    for s in sc.setup.iter().chain(&sc.steps).chain(&sc.teardown) {
        w.step(s);
    }
    w.end_group();
    // Cleanup deletes what the test created (and follows each DELETE).
    let created: Vec<(String, u64)> = c.by_type.iter().map(|(k, v)| (k.clone(), *v)).collect();
    for (name, n) in created {
        let ty = target.type_named(&name);
        if ty.is_some_and(|ty| !ty.deletable) {
            continue;
        }
        c.write(n);
        let polls = if ty.is_some_and(|ty| ty.lro.delete.pattern == OpPattern::Sync) {
            0
        } else {
            t.polls(ty) + 1
        };
        c.requests += n * polls;
        // The DELETEs go at once: the slowest decides.
        if polls > 0 {
            c.cleanup_seconds = c.cleanup_seconds.max(t.wait(ty));
        }
    }
    c
}

/// Whether a step is known before the run not to run: its condition reads only what
/// [`known_before`] holds, and does not hold.
pub fn skipped_before(step: &Step, scope: &Scope) -> bool {
    condition_now(step, scope) == Some(false)
}

/// Whether a step runs, when that is known before the run: `None` when its condition reads an
/// answer (only the run knows).
fn condition_now(s: &Step, scope: &Scope) -> Option<bool> {
    let Some(c) = &s.condition else {
        return Some(true);
    };
    let mut all = true;
    for t in &c.templates {
        all &= truthy(&t.render_value(scope).ok()?);
    }
    Some(all != c.negate)
}

/// What a test's templates can read before anything is sent.
pub fn known_before(
    inst: &Instance,
    target: &Target,
    me: Option<&ResourceType>,
    mon: Option<&crate::target::Monitor>,
) -> Scope {
    let mut scope = Scope::new();
    scope.insert("target".into(), target.scope_value());
    scope.insert("run".into(), json!({"id": "plan", "time_scale": 1.0}));
    if let Some(t) = me {
        scope.insert("type".into(), t.scope_value(target));
    }
    if let Some(m) = mon {
        scope.insert("monitor".into(), m.scope_value());
    }
    if let Some(row) = &inst.row
        && let Ok(v) =
            JsonTemplate::parse(&Value::Object(row.values.clone())).and_then(|t| t.render(&scope))
    {
        scope.insert("row".into(), v);
    }
    scope
}

struct Walk<'a> {
    target: &'a Target,
    t: &'a Timing,
    me: Option<&'a ResourceType>,
    mon: Option<&'a crate::target::Monitor>,
    scope: Scope,
    c: &'a mut TestCost,
    /// The longest wait among the creates in a row so far: the runner starts creates that do
    /// not read each other at once, so their waits overlap.
    group: f64,
}

impl Walk<'_> {
    /// A step other than a create: the creates before it have all been waited for.
    fn end_group(&mut self) {
        self.c.wait_seconds += self.group;
        self.group = 0.0;
    }

    fn taken(&self, s: &Step) -> Option<bool> {
        condition_now(s, &self.scope)
    }

    /// A monitor operation's request, after its prerequisite's.
    fn start(&mut self, mon: Option<&crate::target::Monitor>, depth: u8) {
        let Some(m) = mon else {
            self.c.write(1);
            self.c.follow(self.t, None, 0);
            return;
        };
        if let Some(p) = &m.prerequisite
            && depth < 4
        {
            self.start(self.target.monitor_named(p), depth + 1);
        }
        if m.request.method.eq_ignore_ascii_case("PUT") {
            self.c.puts += 1;
        }
        if m.request.method.eq_ignore_ascii_case("GET") {
            self.c.requests += 1;
        } else {
            self.c.write(1);
        }
        self.c.follow(self.t, None, 0);
    }

    /// A resource of `ty` and everything it needs first: its parent (or the resource it
    /// extends) and its dependency, unless the step names them.
    fn ensure(&mut self, ty: &ResourceType, given_host: bool, given_dep: bool, really: bool) {
        use crate::target::{Extends, Scope};
        let host = match (&ty.parent, &ty.scope) {
            (Some(p), _) => Some(p.as_str()),
            (None, Scope::Extension(Extends::Type(x))) => Some(x.as_str()),
            _ => None,
        };
        if !given_host && let Some(h) = host.and_then(|h| self.target.type_named(h)) {
            self.ensure(h, false, false, true);
        }
        if !given_dep
            && let Some(d) = ty
                .depends_on
                .as_deref()
                .and_then(|d| self.target.type_named(d))
        {
            self.ensure(d, false, false, true);
        }
        if really {
            self.c.create(self.t, ty);
        }
    }

    fn create(&mut self, spec: &CreateSpec, really: bool) {
        if let Some(ty) = spec.type_ref.resolve(self.target, self.me) {
            self.ensure(ty, spec.parent.is_some(), spec.dependency.is_some(), really);
        }
    }

    fn step(&mut self, s: &Step) {
        if self.c.not_applicable {
            return;
        }
        let taken = self.taken(s);
        if taken == Some(false) {
            return;
        }
        if let Action::Create(spec) | Action::Fresh(spec) = &s.action {
            // A create's chain (its parents, then itself) waits in a row; creates in a row
            // overlap.
            let before = self.c.wait_seconds;
            self.create(spec, matches!(s.action, Action::Create(_)));
            let chain = self.c.wait_seconds - before;
            self.c.wait_seconds = before;
            self.group = self.group.max(chain);
            return;
        }
        self.end_group();
        match &s.action {
            Action::Create(_) | Action::Fresh(_) => {}
            Action::Request(r) => {
                let method = r
                    .method
                    .as_literal()
                    .map(|m| m.to_ascii_uppercase())
                    .unwrap_or_else(|| "GET".into());
                if method == "GET" || method == "HEAD" {
                    self.c.requests += 1;
                } else {
                    self.c.write(1);
                }
                if method == "PUT" {
                    // A PUT of a fresh name creates one more resource of the scenario's type;
                    // a PUT of an existing one replaces it (counted as sent all the same).
                    self.c.puts += 1;
                }
                if r.all_pages {
                    self.c.requests += 1;
                }
            }
            Action::Poll(p) => self.c.follow(self.t, self.me, p.watch.len() as u64),
            Action::During(d) => {
                for inner in &d.steps {
                    self.step(inner);
                }
                self.c.follow(self.t, self.me, 0);
            }
            Action::Settle(_) => self.c.requests += 1,
            Action::Sleep(secs) => self.c.wait_seconds += secs * self.t.time_scale,
            Action::Sweep(sw) => {
                let n = sw.resources.len() as u64;
                self.c.write(n);
                self.c.requests += n * (self.t.polls(self.me) + 1);
                self.c.wait_seconds += self.t.wait(self.me);
            }
            Action::Start(_) => self.start(self.mon, 0),
            Action::Task(_) => {
                self.c.write(1);
                // The task's reads, then the resource's.
                self.c.follow(self.t, None, 0);
                self.c.follow(self.t, None, 0);
            }
            // Known now to end the test: nothing after it is sent.
            Action::NotApplicable(_) if taken == Some(true) => self.c.not_applicable = true,
            Action::Inspect(_) | Action::NotApplicable(_) => {}
        }
    }
}
