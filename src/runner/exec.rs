//! Running one test: a scenario instance's setup, steps and teardown against the target, with
//! every exchange checked by the ambient rules and every expectation by its own rule.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::context::RunCtx;
use crate::checks::ambient::{self, OpHistory};
use crate::checks::arm_path::{PathKind, classify};
use crate::checks::expect::{Miss, Subject, evaluate};
use crate::checks::{Ledger, Outcome};
use crate::http::{Exchange, OutRequest, Role};
use crate::report::{PollRecord, ScenarioResult, Status, verdicts};
use crate::scenario::{
    Action, ApiVersion, Body, CaptureFrom, CreateSpec, Instance, RequestSpec, Step, SweepSpec,
    TypeRef,
};
use crate::target::ResourceType;
use crate::template::{JsonTemplate, Scope, Template, value_to_text};

/// What a step left behind for expectations, captures and later steps.
#[derive(Debug, Default, Clone)]
pub(super) struct StepOut {
    pub exchange: Option<usize>,
    pub items: Option<Vec<Value>>,
    pub outcome: Option<String>,
    /// The request's URL (absolute) and method, for `poll` to know what it follows.
    pub url: String,
    pub method: String,
    /// More variables for the step's binding (`monitor`, `task_id`...).
    pub extra: serde_json::Map<String, Value>,
    /// How `poll` follows this step.
    pub follow: super::surfaces::Follow,
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
    pub ledger: Ledger,
    pub ops: OpHistory,
    pub exchanges: Vec<Exchange>,
    pub polls: Vec<PollRecord>,
    pub outs: HashMap<String, StepOut>,
    pub notes: Vec<String>,
    /// Requests `start` steps sent, by step name (for `repeat:`).
    pub started: HashMap<String, SentRequest>,
    /// The name of the step running now, if it has one.
    pub step_name: Option<String>,
    correlation: String,
    /// The step running now (for poll records and findings).
    pub step_label: String,
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
        ledger: Ledger::default(),
        ops: OpHistory::default(),
        exchanges: Vec::new(),
        polls: Vec::new(),
        outs: HashMap::new(),
        notes: Vec::new(),
        started: HashMap::new(),
        step_name: None,
        correlation: super::ids::uuid(),
        step_label: String::new(),
    };
    let error = ex.run_all().await;
    result.duration_ms = start.elapsed().as_millis() as u64;
    result.status = match error {
        Some(e) => Status::Error(e),
        None if ex.ledger.failed_at(true) && ex.ledger.failed_at(ctx.strict) => Status::Failed,
        None if ex.ledger.failed_at(true) => Status::Warned,
        None => Status::Passed,
    };
    // A runner error with failed MUST rules is reported as the failure it also is.
    if matches!(result.status, Status::Error(_)) && ex.ledger.failed_at(ctx.strict) {
        if let Status::Error(e) = &result.status {
            ex.notes.push(format!("runner error: {e}"));
        }
        result.status = Status::Failed;
    }
    // A test in which no rule was judged checked nothing: not applicable, not passed.
    if result.status == Status::Passed && ex.ledger.tallies().is_empty() {
        result.status = Status::Skipped(
            "not applicable: no check applied to this target (every step's condition was false)"
                .into(),
        );
    }
    result.verdicts = verdicts(&ex.ledger.tallies());
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

    fn render(&self, t: &Template) -> StepResult<String> {
        t.render(&self.scope)
    }

    async fn run_step(&mut self, step: &Step) -> StepResult<()> {
        if let Some(c) = &step.condition {
            let mut all = true;
            for t in &c.templates {
                // A field the response did not have reads as false (`if: ${get.body.error}`).
                all &= t
                    .render_value(&self.scope)
                    .map(|v| truthy(&v))
                    .unwrap_or(false);
            }
            if all == c.negate {
                return Ok(());
            }
        }
        self.step_label = step.label();
        self.step_name = step.name.clone();
        self.ledger.step = Some(self.step_label.clone());
        self.ledger.set_exempt(step.exempt.clone());
        let out = self.run_action(step).await;
        self.ledger.set_exempt(Vec::new());
        let out = out?;
        // Expectations.
        let items = out.items.as_deref();
        let subject = Subject {
            exchange: out.exchange.map(|i| &self.exchanges[i]),
            items,
            outcome: out.outcome.as_deref(),
        };
        let mut broken = None;
        for e in &step.expect {
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
            let row_rules: Vec<&'static str>;
            let rules: &[&'static str] = match (&e.row_rule, &self.inst.row) {
                (Some(field), Some(row)) => {
                    row_rules = row
                        .values
                        .get(field)
                        .and_then(Value::as_str)
                        .and_then(crate::rules::lookup)
                        .map(|r| vec![r.id])
                        .unwrap_or_default();
                    &row_rules
                }
                _ => &e.rules,
            };
            for rule in rules {
                match &res {
                    Ok(()) => self.ledger.pass(rule),
                    Err(Miss::Failed(exp, seen)) => {
                        self.ledger
                            .fail(rule, exp.clone(), seen.clone(), seq, Some(&e.pos))
                    }
                    Err(Miss::Broken(_)) => {}
                }
            }
        }
        if let Some(b) = broken {
            return Err(b);
        }
        // Captures and the step's own variables.
        let resp = subject.exchange.and_then(|x| x.response.as_ref());
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
            let v = json!({
                "status": resp.map(|r| json!(r.status)).unwrap_or(Value::Null),
                "headers": headers,
                "body": resp.and_then(|r| r.json.clone()).unwrap_or(Value::Null),
                "items": out.items.clone().map(Value::Array).unwrap_or(Value::Null),
                "url": out.url,
                "outcome": out.outcome.clone().map(Value::String).unwrap_or(Value::Null),
                "location": resp.and_then(|r| r.header("location")).map(|s| json!(s)).unwrap_or(Value::Null),
                "operation": resp.and_then(|r| r.header("azure-asyncoperation")).map(|s| json!(s)).unwrap_or(Value::Null),
                "running": says_running(resp),
                "monitor": Value::Null,
                "task_id": Value::Null,
                "resource_id": Value::Null,
                "resource_url": Value::Null,
            });
            let mut v = v;
            for (k, x) in &out.extra {
                v[k] = x.clone();
            }
            self.scope.insert(name.clone(), v);
            self.outs.insert(name.clone(), out);
        }
        for (k, v) in captured {
            self.scope.insert(k, v);
        }
        Ok(())
    }

    async fn run_action(&mut self, step: &Step) -> StepResult<StepOut> {
        match &step.action {
            Action::Request(r) => self.request(r).await,
            Action::Poll(p) => {
                let Some(first) = self.outs.get(&p.follow).cloned() else {
                    return Err(format!("step `{}` did not run, nothing to poll", p.follow));
                };
                let Some(init) = first.exchange else {
                    return Err(format!("step `{}` sent nothing", p.follow));
                };
                let mut watch = Vec::new();
                for w in &p.watch {
                    watch.push(self.absolute(&self.render(w)?));
                }
                let resource = resource_of(&first.method, &first.url);
                let deadline = p.deadline.unwrap_or(self.ctx.target.deadline);
                let out = match (first.follow, self.mon) {
                    (super::surfaces::Follow::Monitor, Some(mon)) => {
                        self.follow_monitor(init, mon, deadline).await
                    }
                    _ => {
                        self.follow(init, resource, &first.method, deadline, watch)
                            .await
                    }
                };
                Ok(StepOut {
                    exchange: out.final_exchange,
                    outcome: Some(out.outcome),
                    url: first.url,
                    method: first.method,
                    ..Default::default()
                })
            }
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
                    items: None,
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
        }
    }

    /// Make a URL absolute against the target base.
    pub(super) fn absolute(&self, url: &str) -> String {
        // Anything with a scheme is taken as given (the HTTP layer refuses non-http schemes);
        // only a path is made relative to the target.
        if url.contains("://") {
            url.to_string()
        } else if url.starts_with('/') {
            format!("{}{url}", self.ctx.target.base())
        } else {
            format!("{}/{url}", self.ctx.target.base())
        }
    }

    /// A GET with no extra headers (polls, reads between steps).
    pub(super) async fn get(
        &mut self,
        url: &str,
        role: Role,
        api: &ApiVersion,
    ) -> StepResult<usize> {
        self.send("GET", url, Vec::new(), None, role, api).await
    }

    /// Send one request with the run's standard headers, check it, remember it.
    pub(super) async fn send(
        &mut self,
        method: &str,
        url: &str,
        mut headers: Vec<(String, String)>,
        body: Option<String>,
        role: Role,
        api: &ApiVersion,
    ) -> StepResult<usize> {
        let mut u = url::Url::parse(&self.absolute(url))
            .map_err(|e| format!("invalid URL `{url}`: {e}"))?;
        let own = self.ctx.target.same_origin(&u);
        if own {
            let has = u.query_pairs().any(|(k, _)| k == "api-version");
            match api {
                ApiVersion::Default if !has => {
                    u.query_pairs_mut()
                        .append_pair("api-version", &self.ctx.target.api_version);
                }
                ApiVersion::Default => {}
                ApiVersion::Omit | ApiVersion::Value(_) => {
                    let kept: Vec<(String, String)> = u
                        .query_pairs()
                        .filter(|(k, _)| k != "api-version")
                        .map(|(k, v)| (k.into_owned(), v.into_owned()))
                        .collect();
                    u.set_query(None);
                    if !kept.is_empty() || matches!(api, ApiVersion::Value(_)) {
                        let mut q = u.query_pairs_mut();
                        for (k, v) in &kept {
                            q.append_pair(k, v);
                        }
                        if let ApiVersion::Value(t) = api {
                            q.append_pair("api-version", &t.render(&self.scope)?);
                        }
                    }
                }
            }
        }
        let mut std_headers = vec![
            ("x-ms-client-request-id".to_string(), super::ids::uuid()),
            (
                "x-ms-correlation-request-id".to_string(),
                self.correlation.clone(),
            ),
        ];
        if own {
            std_headers.push(("x-ms-routing-request-id".into(), super::ids::uuid()));
            std_headers.push(("Referer".into(), self.ctx.target.base()));
            if let Some((t, c)) = &self.ctx.target.identity {
                std_headers.push(("x-ms-home-tenant-id".into(), t.clone()));
                std_headers.push(("x-ms-client-object-id".into(), c.clone()));
            }
        }
        // A scenario's own header replaces the standard one of that name.
        std_headers.retain(|(k, _)| !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k)));
        std_headers.append(&mut headers);
        let req = OutRequest {
            method: method.to_string(),
            url: u.to_string(),
            headers: std_headers,
            body,
        };
        let exch = self.ctx.http.send(req, role).await;
        let actx = ambient::Ctx {
            target: &self.ctx.target,
            request_ids: &self.ctx.request_ids,
        };
        ambient::check(&exch, &actx, &mut self.ledger, &mut self.ops);
        // Track what the run creates, so the end of the run can delete it.
        if let Some(st) = exch.status() {
            let path = u.path().to_string();
            if matches!(classify(&path, &self.ctx.target), PathKind::Resource(_)) {
                let bare = format!("{}{}", self.ctx.target.base(), path);
                if method == "PUT" && (200..=202).contains(&st) {
                    self.ctx.cleanup.track(&bare, &self.inst.name);
                } else if method == "DELETE" && (st == 200 || st == 204) {
                    self.ctx.cleanup.forget(&bare);
                }
            }
        }
        self.exchanges.push(exch);
        Ok(self.exchanges.len() - 1)
    }

    async fn request(&mut self, r: &RequestSpec) -> StepResult<StepOut> {
        let method = self.render(&r.method)?.to_ascii_uppercase();
        let url = self.absolute(&self.render(&r.url)?);
        let mut headers = Vec::new();
        for (k, t) in &r.headers {
            let v = t.render_value(&self.scope)?;
            // A null header value means "do not send this header" (table rows use it).
            if v.is_null() {
                continue;
            }
            headers.push((k.clone(), value_to_text(&v)));
        }
        let body = match &r.body {
            None => None,
            Some(Body::Json(jt)) => Some(jt.render(&self.scope)?.to_string()),
            Some(Body::Raw(t)) => Some(self.render(t)?),
        };
        let idx = self
            .send(&method, &url, headers, body, Role::Step, &r.api_version)
            .await?;
        let mut items = None;
        if r.all_pages {
            let mut all: Vec<Value> = Vec::new();
            let mut cur = idx;
            for _ in 0..100 {
                let resp = self.exchanges[cur].response.as_ref();
                let Some(j) = resp
                    .filter(|r| r.status == 200)
                    .and_then(|r| r.json.as_ref())
                else {
                    break;
                };
                if let Some(v) = j.get("value").and_then(Value::as_array) {
                    all.extend(v.iter().cloned());
                }
                let Some(next) = j
                    .get("nextLink")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                else {
                    break;
                };
                let next = self.absolute(&next);
                cur = self
                    .get(&next, Role::NextPage, &ApiVersion::Default)
                    .await?;
            }
            items = Some(all);
        }
        if self.exchanges[idx].response.is_none() {
            let e = self.exchanges[idx].error.clone().unwrap_or_default();
            return Err(format!(
                "no response from {method} {}: {e}",
                self.exchanges[idx].url
            ));
        }
        Ok(StepOut {
            exchange: Some(idx),
            items,
            outcome: None,
            url,
            method,
            ..Default::default()
        })
    }

    fn resolve_type(&self, r: &TypeRef) -> StepResult<&'a ResourceType> {
        let t = self.ctx.target.types.as_slice();
        let named = |n: &str| t.iter().find(|x| x.name == n);
        let me = self.ty;
        let found = match r {
            TypeRef::SelfType => me,
            TypeRef::Parent => me.and_then(|m| m.parent.as_deref()).and_then(named),
            TypeRef::Child => {
                me.and_then(|m| t.iter().find(|x| x.parent.as_deref() == Some(&m.name)))
            }
            TypeRef::Grandchild => me
                .and_then(|m| t.iter().find(|x| x.parent.as_deref() == Some(&m.name)))
                .and_then(|c| t.iter().find(|x| x.parent.as_deref() == Some(&c.name))),
            TypeRef::Dependency => me.and_then(|m| m.depends_on.as_deref()).and_then(named),
            TypeRef::Named(n) => named(n),
        };
        found.ok_or_else(|| format!("the target has no {r:?} type for this scenario"))
    }

    /// `create` (PUT and wait) or `fresh` (a name not created, under real parents).
    async fn create(&mut self, spec: &CreateSpec, really: bool, role: Role) -> StepResult<StepOut> {
        let ty = self.resolve_type(&spec.type_ref)?;
        let parent = match (&ty.parent, &spec.parent) {
            (Some(_), Some(t)) => Some(t.render_value(&self.scope)?),
            (Some(p), None) => {
                let pt = self.ctx.target.type_named(p).ok_or("unknown parent type")?;
                Some(Box::pin(self.ensure(pt)).await?)
            }
            (None, _) => None,
        };
        let dependency = match (&ty.depends_on, &spec.dependency) {
            (Some(_), Some(t)) => Some(t.render_value(&self.scope)?),
            (Some(d), None) => {
                let dt = self
                    .ctx
                    .target
                    .type_named(d)
                    .ok_or("unknown dependency type")?;
                Some(Box::pin(self.ensure(dt)).await?)
            }
            _ => None,
        };
        let parent_url = parent.as_ref().map(|p| {
            p.get("url")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or("`parent` must be a resource from create")
        });
        let collection = match parent_url {
            Some(u) => format!("{}/{}", u?, ty.segment),
            None => format!("{}/{}", self.ctx.target.provider_url(), ty.segment),
        };
        let name = self.ctx.unique();
        let url = format!("{collection}/{name}");
        let mut bound = json!({
            "url": url,
            "path": url::Url::parse(&url).map(|u| u.path().to_string()).unwrap_or_default(),
            "id": url::Url::parse(&url).map(|u| u.path().to_string()).unwrap_or_default(),
            "name": name,
            "arm_type": ty.arm_type(&self.ctx.target),
            "collection": collection,
            "parent": parent.clone().unwrap_or(Value::Null),
            "dependency": Value::Null,
            "body": Value::Null,
            "sent": Value::Null,
            "type": ty.name,
        });
        let mut bscope = self.scope.clone();
        bscope.insert("parent".into(), parent.clone().unwrap_or(Value::Null));
        bscope.insert(
            "dependency".into(),
            dependency.clone().unwrap_or(Value::Null),
        );
        let body = match &spec.body {
            Some(jt) => jt.render(&bscope)?,
            None => JsonTemplate::parse(&ty.create_body)?.render(&bscope)?,
        };
        bound["sent"] = body.clone();
        bound["dependency"] = dependency.clone().unwrap_or(Value::Null);
        if !really {
            self.scope.insert(spec.bind.clone(), bound);
            return Ok(StepOut {
                url,
                method: "PUT".into(),
                ..Default::default()
            });
        }
        let idx = self
            .send(
                "PUT",
                &url,
                Vec::new(),
                Some(body.to_string()),
                role,
                &ApiVersion::Default,
            )
            .await?;
        let st = self.exchanges[idx].status();
        let mut out = StepOut {
            exchange: Some(idx),
            url: url.clone(),
            method: "PUT".into(),
            ..Default::default()
        };
        match st {
            Some(200..=202) => {}
            Some(s) => {
                if role == Role::Setup {
                    return Err(format!(
                        "could not create {} at {url}: status {s} ({})",
                        ty.name,
                        self.exchanges[idx].summary()
                    ));
                }
                out.outcome = Some(format!("refused with {s}"));
                self.scope.insert(spec.bind.clone(), bound);
                return Ok(out);
            }
            None => {
                return Err(format!(
                    "could not create {}: {}",
                    ty.name,
                    self.exchanges[idx].error.clone().unwrap_or_default()
                ));
            }
        }
        if spec.wait {
            let deadline = self.ctx.target.deadline;
            let p = self
                .follow(idx, Some(url.clone()), "PUT", deadline, vec![url.clone()])
                .await;
            out.outcome = Some(p.outcome.clone());
            if let Some(f) = p.final_exchange {
                out.exchange = Some(f);
            }
            if role == Role::Setup && p.outcome != "Succeeded" {
                return Err(format!(
                    "could not create {} at {url}: the operation ended {}",
                    ty.name, p.outcome
                ));
            }
        }
        let last_body = out
            .exchange
            .and_then(|i| self.exchanges[i].response.as_ref())
            .and_then(|r| r.json.clone());
        if let Some(b) = &last_body {
            if let Some(id) = b.get("id").and_then(Value::as_str) {
                bound["id"] = json!(id);
            }
            bound["body"] = b.clone();
        }
        self.scope.insert(spec.bind.clone(), bound);
        Ok(out)
    }

    /// A resource of this type that exists and is settled (created for the scenario).
    async fn ensure(&mut self, ty: &ResourceType) -> StepResult<Value> {
        let bind = format!("__auto_{}", self.ctx.unique());
        let spec = CreateSpec {
            bind: bind.clone(),
            type_ref: TypeRef::Named(ty.name.clone()),
            parent: None,
            dependency: None,
            body: None,
            wait: true,
        };
        self.create(&spec, true, Role::Setup).await?;
        self.scope
            .remove(&bind)
            .ok_or_else(|| "internal: created resource not bound".to_string())
    }

    /// RGDEL-03: delete resources in a seeded shuffled order, revisiting refusals, as ARM does.
    async fn sweep(&mut self, s: &SweepSpec) -> StepResult<StepOut> {
        let mut remaining = Vec::new();
        for t in &s.resources {
            let v = t.render_value(&self.scope)?;
            let url = match &v {
                Value::Object(o) => o.get("url").and_then(Value::as_str).map(str::to_string),
                Value::String(x) => Some(x.clone()),
                _ => None,
            }
            .ok_or("sweep resources are resources from create, or URLs")?;
            remaining.push(self.absolute(&url));
        }
        let mut rng = super::ids::Seeded::new(s.seed);
        let mut pass = 0;
        let mut bad = Vec::new();
        while !remaining.is_empty() && pass < 20 {
            pass += 1;
            rng.shuffle(&mut remaining);
            let mut next = Vec::new();
            let before = remaining.len();
            for url in std::mem::take(&mut remaining) {
                let idx = self
                    .send(
                        "DELETE",
                        &url,
                        Vec::new(),
                        None,
                        Role::Step,
                        &ApiVersion::Default,
                    )
                    .await?;
                match self.exchanges[idx].status() {
                    Some(202) => {
                        let p = self
                            .follow(
                                idx,
                                Some(url.clone()),
                                "DELETE",
                                self.ctx.target.deadline,
                                Vec::new(),
                            )
                            .await;
                        if p.outcome != "Succeeded" {
                            next.push(url);
                        }
                    }
                    Some(200..=299) => {}
                    Some(s4) if (400..500).contains(&s4) => next.push(url),
                    Some(s5) => {
                        bad.push((
                            self.exchanges[idx].seq,
                            format!("DELETE {url} answered {s5}"),
                        ));
                        next.push(url);
                    }
                    None => return Err(format!("no response to DELETE {url}")),
                }
            }
            let progress = next.len() < before;
            remaining = next;
            if !progress {
                break;
            }
        }
        for (seq, msg) in &bad {
            self.ledger.fail(
                "RGDEL-03",
                "every DELETE in the sweep answers 2xx or 4xx",
                msg.clone(),
                Some(*seq),
                None,
            );
        }
        // What is left must be gone: GET each swept URL.
        let mut left = Vec::new();
        for t in &s.resources {
            let v = t.render_value(&self.scope)?;
            let url = v
                .get("url")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let idx = self.get(&url, Role::Step, &ApiVersion::Default).await?;
            if self.exchanges[idx].status() != Some(404) {
                left.push(url);
            }
        }
        if left.is_empty() && bad.is_empty() {
            self.ledger.pass("RGDEL-03");
        } else if !left.is_empty() {
            self.ledger.fail(
                "RGDEL-03",
                "no resource left once a sweep pass makes no progress",
                format!("still there after {pass} passes: {}", left.join(", ")),
                None,
                None,
            );
        }
        Ok(StepOut {
            outcome: Some(if left.is_empty() {
                "Succeeded".into()
            } else {
                "Failed".into()
            }),
            ..Default::default()
        })
    }

    /// GET a resource until no operation runs on it (terminal or absent provisioningState, or 404).
    pub(super) async fn settle(
        &mut self,
        url: &str,
        deadline: Duration,
    ) -> (String, Option<usize>) {
        let start = Instant::now();
        let mut attempts = 0;
        let mut last = None;
        let outcome = loop {
            attempts += 1;
            let idx = match self
                .get(url, Role::ResourcePoll, &ApiVersion::Default)
                .await
            {
                Ok(i) => i,
                Err(e) => break format!("error: {e}"),
            };
            last = Some(idx);
            let resp = self.exchanges[idx].response.as_ref();
            match resp.map(|r| r.status) {
                Some(404) => break "Gone".into(),
                Some(200) => {
                    let ps = resp
                        .and_then(|r| r.pointer("/properties/provisioningState"))
                        .and_then(Value::as_str);
                    match ps {
                        None => break "Succeeded".into(),
                        Some(s) if ambient::is_terminal(s) => break canonical(s),
                        Some(_) => {}
                    }
                }
                Some(s) => break format!("status {s}"),
                None => {
                    break format!(
                        "error: {}",
                        self.exchanges[idx].error.clone().unwrap_or_default()
                    );
                }
            }
            if start.elapsed() >= deadline {
                break format!("timed out after {} s", deadline.as_secs());
            }
            if !self.ctx.sleep(2.0).await {
                break "interrupted".into();
            }
        };
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: "resource".into(),
            attempts,
            elapsed_ms: start.elapsed().as_millis() as u64,
            outcome: outcome.clone(),
        });
        (outcome, last)
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
    st.is_some_and(|s| !ambient::is_terminal(s))
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

/// The resource an operation acts on: the URL itself, or its parent for a POST action.
fn resource_of(method: &str, url: &str) -> Option<String> {
    let bare = url
        .split('?')
        .next()
        .unwrap_or(url)
        .trim_end_matches('/')
        .to_string();
    match method {
        "PUT" | "PATCH" | "DELETE" => Some(bare),
        "POST" => bare.rsplit_once('/').map(|(p, _)| p.to_string()),
        _ => None,
    }
}

/// Succeeded / Failed / Canceled in their canonical spelling.
pub(super) fn canonical(s: &str) -> String {
    match s.to_ascii_lowercase().as_str() {
        "succeeded" => "Succeeded".into(),
        "failed" => "Failed".into(),
        "canceled" => "Canceled".into(),
        _ => s.to_string(),
    }
}

pub(super) fn _unused(_: Outcome) {}
