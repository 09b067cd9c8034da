//! Running one test: a scenario instance's setup, steps and teardown against the target. The
//! runner only drives: it sends, waits and follows, and hands every exchange, followed
//! operation and record to the rule engine ([`Judge`]); expectations a step states are
//! evaluated by `rules::expect` against the rule IDs the suite cites.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::{Value, json};

use super::context::RunCtx;
use crate::http::{Exchange, Role};
use crate::report::{PollRecord, ScenarioResult, Status, verdicts};
use crate::rules::Judge;
use crate::rules::expect::{Miss, Subject, evaluate};
use crate::scenario::{Action, CaptureFrom, Expectation, Instance, Step};
use crate::target::ResourceType;
use crate::template::{JsonTemplate, Scope, Template};

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
}

/// Run one test to its end; never panics on target behaviour.
pub async fn run_instance(ctx: &RunCtx, inst: &Instance) -> ScenarioResult {
    let start = Instant::now();
    let sc = inst.scenario();
    let mut result = ScenarioResult {
        name: inst.name.clone(),
        suite: inst.suite.name.clone(),
        suite_file: inst.suite.path.display().to_string(),
        scenario: sc.name.clone(),
        type_name: inst.type_name.clone(),
        row: inst.row.as_ref().map(|r| r.name.clone()),
        at: sc.pos.to_string(),
        status: Status::Passed,
        duration_ms: 0,
        verdicts: Vec::new(),
        polls: Vec::new(),
        notes: Vec::new(),
        exchanges: Vec::new(),
        stated: crate::scenario::stated_rules(inst)
            .into_iter()
            .map(String::from)
            .collect(),
        transcript: None,
    };
    if let Some(reason) = &inst.not_applicable {
        result.status = Status::Skipped(format!("not applicable: {reason}"));
        return result;
    }
    let ty = inst
        .type_name
        .as_deref()
        .and_then(|n| ctx.target.type_named(n));
    let mon = inst
        .monitor
        .as_deref()
        .and_then(|n| ctx.target.monitor_named(n));
    let mut ex = Exec {
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
    };
    let error = ex.run_all().await;
    let ledger = &ex.judge.ledger;
    result.duration_ms = start.elapsed().as_millis() as u64;
    // The test passes or fails on the rules it states; the others are the conformance view's.
    result.verdicts = verdicts(&ledger.tallies());
    result.status = crate::report::test_status(
        error.clone(),
        &result.verdicts,
        &result.stated,
        ctx.strict,
        ledger.judged_any(),
    );
    // A runner error with failed rules is reported as the failure it also is.
    if let (Status::Failed, Some(e)) = (&result.status, &error) {
        ex.notes.push(format!("runner error: {e}"));
    }
    result.polls = ex.polls;
    result.notes = ex.notes;
    result.exchanges = ex.exchanges;
    result
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
        for step in sc.setup.iter().chain(&sc.steps) {
            if self.ctx.cancel.is_cancelled() {
                error = Some("interrupted (Ctrl-C / SIGTERM); teardown ran".into());
                break;
            }
            if let Err(e) = self.run_step(step).await {
                error = Some(format!("{}: step `{}`: {e}", step.pos, step.label()));
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
    fn condition_holds(&self, step: &Step) -> bool {
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

    pub(super) async fn run_step(&mut self, step: &Step) -> StepResult<()> {
        if !self.condition_holds(step) {
            return Ok(());
        }
        self.step_label = step.label();
        self.step_name = step.name.clone();
        self.judge.ledger.step = Some(self.step_label.clone());
        self.judge.ledger.set_exempt(step.exempt.clone());
        let out = match &step.action {
            Action::During(d) => Box::pin(self.during(d)).await,
            _ => self.run_action(step).await,
        };
        self.judge.ledger.set_exempt(Vec::new());
        let out = out?;
        self.expectations(step, &out)?;
        self.bind(step, out);
        Ok(())
    }

    /// Evaluate a step's expectations (or keep them for later inside a `during` block).
    fn expectations(&mut self, step: &Step, out: &StepOut) -> StepResult<()> {
        if step.expect.is_empty() {
            return Ok(());
        }
        if let Some(d) = self.deferring.as_mut() {
            d.push((step.expect.clone(), out.clone()));
            return Ok(());
        }
        self.evaluate_all(&step.expect, out)
    }

    pub(super) fn evaluate_all(&mut self, expect: &[Expectation], out: &StepOut) -> StepResult<()> {
        let subject = Subject {
            exchange: out.exchange.map(|i| &self.exchanges[i]),
            items: out.items.as_deref(),
            outcome: out.outcome.as_deref(),
        };
        let mut broken = None;
        for e in expect {
            if let Some(when) = &e.when_status {
                let st = subject.exchange.and_then(|x| x.status());
                if !st.is_some_and(|s| when.contains(&s)) {
                    continue;
                }
            }
            let res = evaluate(&e.check, &subject, &self.scope);
            if let Err(Miss::Broken(msg)) = &res {
                broken = Some(format!("{}: cannot evaluate the expectation: {msg}", e.pos));
                continue;
            }
            let seq = subject.exchange.map(|x| x.seq);
            for rule in self.rules_of(e) {
                match &res {
                    Ok(()) => self.judge.ledger.pass(rule),
                    Err(Miss::Failed(exp, seen)) => {
                        self.judge
                            .ledger
                            .fail(rule, exp.clone(), seen.clone(), seq, Some(&e.pos))
                    }
                    Err(Miss::Broken(_)) => {}
                }
            }
        }
        match broken {
            Some(b) => Err(b),
            None => Ok(()),
        }
    }

    /// The rules an expectation cites (a table row may name its rule).
    pub(super) fn rules_of(&self, e: &Expectation) -> Vec<&'static str> {
        match (&e.row_rule, &self.inst.row) {
            (Some(field), Some(row)) => row
                .values
                .get(field)
                .and_then(Value::as_str)
                .and_then(crate::rules::lookup)
                .map(|r| vec![r.id])
                .unwrap_or_default(),
            _ => e.rules.clone(),
        }
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
                (CaptureFrom::Header(h), Some(r)) => {
                    r.header(h).map(|s| json!(s)).unwrap_or(Value::Null)
                }
                (CaptureFrom::Pointer(p), Some(r)) => r.pointer(p).cloned().unwrap_or(Value::Null),
                (_, None) => Value::Null,
            };
            captured.push((c.var.clone(), v));
        }
        if let Some(name) = &step.name {
            let headers: serde_json::Map<String, Value> = resp
                .map(|r| {
                    r.headers
                        .iter()
                        .map(|(k, v)| (k.to_ascii_lowercase(), json!(v)))
                        .collect()
                })
                .unwrap_or_default();
            let header = |r: Option<&crate::http::Response>, h: &str| {
                r.and_then(|r| r.header(h))
                    .map(|s| json!(s))
                    .unwrap_or(Value::Null)
            };
            // The ETag a client would send back: the header, else the body's `etag`.
            let etag = resp
                .and_then(|r| r.header("etag").map(|s| json!(s)))
                .or_else(|| resp.and_then(|r| r.pointer("/etag").cloned()))
                .unwrap_or(Value::Null);
            let mut v = json!({
                "status": resp.map(|r| json!(r.status)).unwrap_or(Value::Null),
                "headers": headers,
                "body": resp.and_then(|r| r.json.clone()).unwrap_or(Value::Null),
                "items": out.items.clone().map(Value::Array).unwrap_or(Value::Null),
                "url": out.url,
                "outcome": out.outcome.clone().map(Value::String).unwrap_or(Value::Null),
                "location": header(first, "location"),
                "operation": header(first, "azure-asyncoperation"),
                "etag": etag,
                "running": says_running(resp),
                "monitor": Value::Null,
                "task_id": Value::Null,
                "resource_id": Value::Null,
                "resource_url": Value::Null,
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

/// Is a condition's value true? `a == b` / `a != b` compare the rendered text.
fn truthy(v: &Value) -> bool {
    match v {
        Value::String(s) if s.contains(" == ") || s.contains(" != ") => {
            let (l, r, eq) = match s.split_once(" == ") {
                Some((l, r)) => (l, r, true),
                None => {
                    let (l, r) = s.split_once(" != ").unwrap_or((s, ""));
                    (l, r, false)
                }
            };
            (l.trim() == r.trim()) == eq
        }
        Value::Bool(b) => *b,
        Value::Null => false,
        Value::String(s) => !s.is_empty() && s != "false",
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    }
}
