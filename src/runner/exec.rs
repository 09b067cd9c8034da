//! Running one test: a scenario instance's setup, steps and teardown against the target. The
//! runner only drives: it sends, waits and follows, and hands every exchange, followed
//! operation and record to the rule engine ([`Judge`]); expectations a step states are
//! evaluated by `rules::expect` against the rule IDs the suite cites.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Value, json};

use super::context::RunCtx;
use crate::http::{Exchange, Role};
use crate::report::{FLAKY_NOTE, PollRecord, ScenarioResult, Status, verdicts};
use crate::rules::Judge;
use crate::scenario::{Action, CaptureFrom, Expectation, Instance, Step};
use crate::target::ResourceType;
use crate::template::{JsonTemplate, Scope, Template, truthy};

/// How a `poll` step follows the step it names.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum Follow {
    #[default]
    Arm,
    Monitor,
}

/// What a step left behind for expectations, captures and later steps.
#[derive(Debug, Default, Clone)]
pub(super) struct StepOut {
    /// The exchange the step's expectations read (for a followed operation, its result).
    pub exchange: Option<usize>,
    /// The exchange that started something (a write's own answer), when it differs.
    pub initial: Option<usize>,
    pub items: Option<Vec<Value>>,
    pub outcome: Option<String>,
    /// The request's URL (absolute) and method, for `poll` to know what it follows.
    pub url: String,
    pub method: String,
    /// More variables for the step's binding (`monitor`, `task_id`...).
    pub extra: serde_json::Map<String, Value>,
    /// How `poll` follows this step.
    pub follow: Follow,
    /// The exchanges the step itself made (an `inspect` keeps the inspected step's): what
    /// its expectations read, for the judge to tell an earlier failure that decided them.
    pub made: std::ops::Range<usize>,
}

/// A request as sent: method, URL, headers, body.
pub(super) type SentRequest = (String, String, Vec<(String, String)>, Option<String>);

/// A runner error: the check could not be made.
pub(super) type StepResult<T> = Result<T, String>;

pub(super) struct Exec<'a> {
    pub ctx: &'a RunCtx,
    pub inst: &'a Instance,
    pub ty: Option<&'a ResourceType>,
    pub mon: Option<&'a crate::target::Monitor>,
    pub scope: Scope,
    pub judge: Judge<'a>,
    pub exchanges: Vec<Exchange>,
    pub polls: Vec<PollRecord>,
    pub outs: HashMap<String, StepOut>,
    pub notes: Vec<String>,
    /// Requests `start` steps sent, by step name (for `repeat:`).
    pub started: HashMap<String, SentRequest>,
    /// The name of the step running now, if it has one.
    pub step_name: Option<String>,
    pub correlation: String,
    /// The step running now (for poll records and findings).
    pub step_label: String,
    /// Inside a `during` block: expectations kept until the operation is known to have run
    /// before and after the block's reads.
    pub deferring: Option<Vec<(Vec<Expectation>, StepOut)>>,
    /// A `not_applicable` step ended the test here, with its reason.
    pub not_applicable: Option<String>,
    /// Locks of fixed-name resources this test writes, held until it ends.
    pub held: Vec<(String, tokio::sync::OwnedMutexGuard<()>)>,
    /// Where the run's interruption stopped this test (Ctrl-C, SIGTERM, SIGHUP).
    pub interrupted: Option<String>,
    /// Sent exchanges are judged by the caller (a probe that learns the surface from the
    /// answer), not as they arrive.
    pub judge_later: bool,
}

/// What a step that the run's interruption cut short returns instead of its result.
pub(super) const INTERRUPTED: &str = "interrupted";

/// Run one test to its end; never panics on target behaviour.
pub async fn run_instance(ctx: &RunCtx, inst: &Instance) -> ScenarioResult {
    let start = Instant::now();
    if let Some(reason) = &inst.not_applicable {
        let mut result = Exec::new(ctx, inst).result(None, start);
        result.status = Status::Skipped(format!("not applicable: {reason}"));
        return result;
    }
    let mut ex = Exec::new(ctx, inst);
    let error = ex.run_all().await;
    ex.result(error, start)
}

impl<'a> Exec<'a> {
    /// A fresh executor for one test.
    pub(super) fn new(ctx: &'a RunCtx, inst: &'a Instance) -> Exec<'a> {
        let ty = inst
            .type_name
            .as_deref()
            .and_then(|n| ctx.target.type_named(n));
        let mon = inst
            .monitor
            .as_deref()
            .and_then(|n| ctx.target.monitor_named(n));
        Exec {
            ctx,
            inst,
            ty,
            mon,
            scope: Scope::new(),
            judge: Judge::new(&ctx.target, &ctx.registry),
            exchanges: Vec::new(),
            polls: Vec::new(),
            outs: HashMap::new(),
            notes: Vec::new(),
            started: HashMap::new(),
            step_name: None,
            correlation: super::ids::uuid(),
            step_label: String::new(),
            deferring: None,
            not_applicable: None,
            held: Vec::new(),
            interrupted: None,
            judge_later: false,
        }
    }

    /// The test's result from what the ledger holds (and the runner error, if any). The test
    /// passes or fails on the rules it states; the others are the conformance view's.
    pub(super) fn result(self, error: Option<String>, start: Instant) -> ScenarioResult {
        let inst = self.inst;
        let sc = inst.scenario();
        let ledger = &self.judge.ledger;
        let stated: Vec<String> = crate::scenario::stated_rules(inst)
            .into_iter()
            .map(String::from)
            .collect();
        let verdicts = verdicts(&ledger.tallies());
        let mut status = crate::report::test_status(
            error.clone(),
            &verdicts,
            self.ctx.strict,
            ledger.judged_any(),
        );
        let mut notes = self.notes;
        // A runner error with failed rules is reported as the failure it also is.
        if let (Status::Failed, Some(e)) = (&status, &error) {
            notes.push(format!("runner error: {e}"));
        }
        // Stopped by the run's interruption: "interrupted", never a rule failure of its own (a
        // rule that failed before the interruption still fails the test).
        if let Some(at) = &self.interrupted {
            if status == Status::Failed {
                notes.push(format!("interrupted at {at}"));
            } else {
                status = Status::Interrupted(format!(
                    "interrupted at {at} (Ctrl-C, SIGTERM or SIGHUP); its teardown ran"
                ));
            }
        }
        // A scenario that found what it needs missing says so (unless a rule failed before).
        if let Some(why) = &self.not_applicable
            && matches!(status, Status::Passed | Status::Skipped(_))
        {
            status = Status::Skipped(format!("not applicable: {why}"));
        }
        // `--retries`: a test that needed one is flaky, whatever its verdict.
        let retried: Vec<&Exchange> = self
            .exchanges
            .iter()
            .filter(|x| !x.retried.is_empty())
            .collect();
        if !retried.is_empty() {
            let first = retried[0];
            // Flaky means it passed on a later attempt (nextest's and JUnit's flakyFailure):
            // a test that failed anyway, or whose every attempt of a request went unanswered,
            // is failed or an error, never flaky.
            let recovered = retried.iter().all(|x| x.response.is_some());
            let passed = matches!(status, Status::Passed | Status::Warned);
            let mark = if recovered && passed {
                FLAKY_NOTE
            } else {
                "retried: "
            };
            notes.push(format!(
                "{mark}{} request(s) got no answer of the RP's and were sent again (--retries), {} attempt(s) in all; first: {} after {}",
                retried.len(),
                retried.iter().map(|x| x.retried.len()).sum::<usize>(),
                crate::report::render::exchange_line(first),
                first.retried[0].outcome
            ));
        }
        // The runner sends values as the target wrote them (captures, links followed), so a
        // text built from them (a finding, a note, a runner error, a poll's outcome) is
        // redacted here, as the exchanges were when recorded.
        let redactor = &self.ctx.http.redactor;
        let status = scrubbed(status, redactor);
        let verdicts = scrubbed(verdicts, redactor);
        let notes = scrubbed(notes, redactor);
        let polls = scrubbed(self.polls, redactor);
        ScenarioResult {
            name: inst.name.clone(),
            suite: inst.suite.name.clone(),
            suite_file: crate::suiteset::shown_path(&inst.suite.path),
            scenario: sc.name.clone(),
            type_name: inst.type_name.clone(),
            row: inst.row.as_ref().map(|r| r.name.clone()),
            at: sc.pos.shown(),
            status,
            duration_ms: start.elapsed().as_millis() as u64,
            cleanup_ms: None,
            verdicts,
            polls,
            notes,
            exchanges: self.exchanges,
            stated,
            transcript: None,
        }
    }
}

/// `v` with every string in it redacted (a serde round trip: results' own texts are small).
fn scrubbed<T: serde::Serialize + serde::de::DeserializeOwned>(
    v: T,
    redactor: &crate::http::Redactor,
) -> T {
    fn walk(v: &mut Value, r: &crate::http::Redactor) {
        match v {
            Value::String(s) => {
                let t = r.text(s);
                if t != *s {
                    *s = t;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, r)),
            Value::Object(m) => m.values_mut().for_each(|x| walk(x, r)),
            _ => {}
        }
    }
    let Ok(mut j) = serde_json::to_value(&v) else {
        return v;
    };
    walk(&mut j, redactor);
    serde_json::from_value(j).unwrap_or(v)
}

impl<'a> Exec<'a> {
    async fn run_all(&mut self) -> Option<String> {
        let sc = self.inst.scenario();
        self.scope
            .insert("target".into(), self.ctx.target.scope_value());
        self.scope.insert(
            "run".into(),
            json!({"id": self.ctx.run_id, "time_scale": self.ctx.time_scale}),
        );
        self.scope
            .insert("unique".into(), Value::String(self.ctx.unique()));
        self.scope
            .insert("uuid".into(), Value::String(super::ids::uuid()));
        if let Some(t) = self.ty {
            self.scope
                .insert("type".into(), t.scope_value(&self.ctx.target));
        }
        if let Some(m) = self.mon {
            self.scope.insert("monitor".into(), m.scope_value());
        }
        if let Some(row) = &self.inst.row {
            let values = JsonTemplate::parse(&Value::Object(row.values.clone()))
                .and_then(|t| t.render(&self.scope));
            match values {
                Ok(v) => {
                    self.scope.insert("row".into(), v);
                }
                Err(e) => return Some(format!("{}: row {}: {e}", row.pos, row.name)),
            }
        }
        for (name, jt, pos) in &sc.vars {
            match jt.render(&self.scope) {
                Ok(v) => {
                    self.scope.insert(name.clone(), v);
                }
                Err(e) => return Some(format!("{pos}: vars.{name}: {e}")),
            }
        }
        let mut error = None;
        let steps: Vec<&Step> = sc.setup.iter().chain(&sc.steps).collect();
        let mut i = 0;
        while i < steps.len() {
            let step = steps[i];
            if self.ctx.cancel.is_cancelled() {
                self.interrupted = Some(format!(
                    "step `{}` ({}), before it ran",
                    step.label(),
                    step.pos
                ));
                break;
            }
            // Independent creates run at once: their waits overlap.
            let group = self.create_group(&steps[i..]);
            let res = if group > 1 {
                self.run_group(&steps[i..i + group]).await
            } else {
                self.run_step(step).await.map_err(|e| (0, e))
            };
            if let Err((k, e)) = res {
                let failed = steps[i + k];
                if self.ctx.cancel.is_cancelled() {
                    self.interrupted = Some(format!("step `{}` ({})", failed.label(), failed.pos));
                } else {
                    error = Some(format!("{}: step `{}`: {e}", failed.pos, failed.label()));
                }
                break;
            }
            i += group.max(1);
            if self.not_applicable.is_some() {
                break;
            }
        }
        for step in &sc.teardown {
            if let Err(e) = self.run_step(step).await {
                self.notes.push(format!(
                    "teardown step `{}` at {}: {e}",
                    step.label(),
                    step.pos
                ));
            }
        }
        error
    }

    pub(super) fn render(&self, t: &Template) -> StepResult<String> {
        t.render(&self.scope)
    }

    /// Does the step's condition hold (no condition: yes)?
    pub(super) fn condition_holds(&self, step: &Step) -> bool {
        let Some(c) = &step.condition else {
            return true;
        };
        // A field the response did not have reads as false (`if: ${get.body.error}`).
        let all = c.templates.iter().all(|t| {
            t.render_value(&self.scope)
                .map(|v| truthy(&v))
                .unwrap_or(false)
        });
        all != c.negate
    }

    /// Name the step now running (findings and poll records name it), with its exemptions.
    pub(super) fn enter(&mut self, step: &Step) {
        self.step_label = step.label();
        self.step_name = step.name.clone();
        self.judge.ledger.step = Some(self.step_label.clone());
        self.judge.ledger.set_exempt(step.exempt.clone());
    }

    pub(super) async fn run_step(&mut self, step: &Step) -> StepResult<()> {
        if !self.condition_holds(step) {
            return Ok(());
        }
        self.enter(step);
        // What the step judges is dropped if the run's interruption cuts it short: a poll
        // cut off, a request never sent, are not the target's doing.
        let before = (!self.ctx.cancel.is_cancelled()).then(|| self.judge.ledger.clone());
        let first = self.exchanges.len();
        let out = match &step.action {
            Action::During(d) => Box::pin(self.during(d)).await,
            _ => self.run_action(step).await,
        };
        self.judge.ledger.set_exempt(Vec::new());
        if self.ctx.cancel.is_cancelled() {
            if let Some(l) = before {
                self.judge.ledger = l;
            }
            return Err(INTERRUPTED.into());
        }
        let mut out = out?;
        if !matches!(step.action, Action::Inspect(_)) && out.made.is_empty() {
            out.made = first..self.exchanges.len();
        }
        self.finish(step, out)
    }

    /// A step's expectations and bindings, once its action ran.
    pub(super) fn finish(&mut self, step: &Step, out: StepOut) -> StepResult<()> {
        self.expectations(step, &out)?;
        self.bind(step, out);
        Ok(())
    }

    /// Captures, and the step's own variables (`${name.status}`...).
    fn bind(&mut self, step: &Step, out: StepOut) {
        let resp = out
            .exchange
            .and_then(|i| self.exchanges[i].response.as_ref());
        let first = out
            .initial
            .or(out.exchange)
            .and_then(|i| self.exchanges[i].response.as_ref());
        let mut captured = Vec::new();
        for c in &step.capture {
            let v = match (&c.from, resp) {
                (CaptureFrom::Status, Some(r)) => json!(r.status),
                // As the target sent them: a captured value is sent back as captured.
                (CaptureFrom::Header(h), Some(r)) => {
                    r.sent_header(h).map(|s| json!(s)).unwrap_or(Value::Null)
                }
                (CaptureFrom::Pointer(p), Some(r)) => {
                    r.sent_pointer(p).cloned().unwrap_or(Value::Null)
                }
                (_, None) => Value::Null,
            };
            captured.push((c.var.clone(), v));
        }
        if let Some(name) = &step.name {
            let headers: serde_json::Map<String, Value> = resp
                .map(|r| {
                    r.sent_headers()
                        .iter()
                        .map(|(k, v)| (k.to_ascii_lowercase(), json!(v)))
                        .collect()
                })
                .unwrap_or_default();
            let header = |r: Option<&crate::http::Response>, h: &str| {
                r.and_then(|r| r.sent_header(h))
                    .map(|s| json!(s))
                    .unwrap_or(Value::Null)
            };
            // The ETag a client would send back: the header, else the body's `etag`.
            let etag = resp
                .and_then(|r| r.sent_header("etag").map(|s| json!(s)))
                .or_else(|| resp.and_then(|r| r.sent_pointer("/etag").cloned()))
                .unwrap_or(Value::Null);
            let mut v = json!({
                "status": resp.map(|r| json!(r.status)).unwrap_or(Value::Null),
                "headers": headers,
                "body": resp.and_then(|r| r.sent_json().cloned()).unwrap_or(Value::Null),
                "items": out.items.clone().map(Value::Array).unwrap_or(Value::Null),
                "url": out.url,
                "outcome": out.outcome.clone().map(Value::String).unwrap_or(Value::Null),
                "location": header(first, "location"),
                "operation": header(first, "azure-asyncoperation"),
                "etag": etag,
                "running": says_running(resp),
                // A successful answer that says nothing runs (an error says neither).
                "ended": resp.is_some_and(|r| (200..300).contains(&r.status)) && !says_running(resp),
                "monitor": Value::Null,
                "task_id": Value::Null,
                "resource_id": Value::Null,
                "resource_url": Value::Null,
                "cancel_url": Value::Null,
                "cancel_method": Value::Null,
            });
            for (k, x) in &out.extra {
                v[k] = x.clone();
            }
            self.scope.insert(name.clone(), v);
            self.outs.insert(name.clone(), out);
        }
        for (k, v) in captured {
            self.scope.insert(k, v);
        }
    }

    async fn run_action(&mut self, step: &Step) -> StepResult<StepOut> {
        match &step.action {
            Action::Request(r) => self.request(r).await,
            Action::Poll(p) => self.poll_step(p).await,
            Action::Create(spec) => self.create(spec, true, Role::Step).await,
            Action::Fresh(spec) => self.create(spec, false, Role::Step).await,
            Action::Settle(t) => {
                let v = t.render_value(&self.scope)?;
                let url = match &v {
                    Value::Object(o) => o.get("url").and_then(Value::as_str).map(str::to_string),
                    Value::String(s) => Some(s.clone()),
                    _ => None,
                }
                .ok_or("settle takes a resource (from create) or its URL")?;
                let url = self.absolute(&url);
                let (outcome, last) = self.settle(&url, self.ctx.target.deadline).await;
                Ok(StepOut {
                    exchange: last,
                    outcome: Some(outcome),
                    url,
                    method: "GET".into(),
                    ..Default::default()
                })
            }
            Action::Sleep(secs) => {
                if !self.ctx.sleep(*secs).await {
                    return Err("interrupted".into());
                }
                Ok(StepOut::default())
            }
            Action::Sweep(s) => self.sweep(s).await,
            Action::Start(spec) => self.start_monitor(spec).await,
            Action::Task(spec) => self.run_task(spec).await,
            Action::Inspect(name) => self
                .outs
                .get(name)
                .cloned()
                .ok_or_else(|| format!("step `{name}` did not run, nothing to inspect")),
            Action::During(_) => Err("a `during` block cannot nest here".into()),
            Action::NotApplicable(t) => {
                self.not_applicable = Some(self.render(t)?);
                Ok(StepOut::default())
            }
        }
    }
}

/// Does this response say an operation still runs? A 202, an operation status or a
/// provisioningState that is not terminal.
fn says_running(resp: Option<&crate::http::Response>) -> bool {
    let Some(r) = resp else { return false };
    if r.status == 202 {
        return true;
    }
    if r.status != 200 && r.status != 201 {
        return false;
    }
    let st = r
        .pointer("/status")
        .or_else(|| r.pointer("/properties/provisioningState"))
        .and_then(Value::as_str);
    st.is_some_and(|s| crate::lro::Outcome::of_arm(s).is_none())
}
