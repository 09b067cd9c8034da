//! Running the non-ARM surfaces a target declares: status-monitor operations (TypeSpec
//! Azure.Core, the MON rules) and task-based writes (the TASK rules). The checks that only the
//! follower of such an operation can make live here, next to the following.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::exec::{Exec, StepOut, StepResult};
use crate::checks::Outcome;
use crate::http::Role;
use crate::report::PollRecord;
use crate::scenario::{ApiVersion, StartSpec, TaskOp, TaskSpec};
use crate::target::{Monitor, RequestDecl};
use crate::template::{JsonTemplate, Template};

fn resolve(base: &str, v: &str) -> String {
    url::Url::parse(base)
        .and_then(|b| b.join(v))
        .map(|u| u.to_string())
        .unwrap_or_else(|_| v.to_string())
}

fn nonempty(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

impl<'a> Exec<'a> {
    fn api_of(mon: &Monitor) -> ApiVersion {
        match &mon.api_version {
            Some(v) => ApiVersion::Value(Template::literal(v)),
            None => ApiVersion::Omit,
        }
    }

    /// Render a declared request (URL and body templates) against the scope.
    fn render_decl(
        &self,
        d: &RequestDecl,
        body: Option<&Value>,
    ) -> StepResult<(String, Option<String>)> {
        let url = Template::parse(&d.url)
            .map_err(|(_, m)| m)?
            .render(&self.scope)?;
        let body = match body.or(d.body.as_ref()) {
            Some(b) => Some(JsonTemplate::parse(b)?.render(&self.scope)?.to_string()),
            None => None,
        };
        Ok((self.absolute(&url), body))
    }

    /// `start`: run the prerequisite, send the monitor operation's request, check MON-01/07.
    pub(super) async fn start_monitor(&mut self, spec: &StartSpec) -> StepResult<StepOut> {
        let mon: &'a Monitor = self
            .mon
            .ok_or("`start` needs a monitor (for_each_monitor)")?;
        if let Some(prev) = &spec.repeat {
            let (method, url, headers, body) = self
                .started
                .get(prev)
                .cloned()
                .ok_or_else(|| format!("step `{prev}` started nothing"))?;
            let i = self
                .send(
                    &method,
                    &url,
                    headers,
                    body,
                    Role::Step,
                    &ApiVersion::Default,
                )
                .await?;
            let mut extra = Map::new();
            if let Some(l) = self.exchanges[i]
                .response
                .as_ref()
                .and_then(|r| r.header(mon.link.header()))
            {
                extra.insert("monitor".into(), json!(resolve(&url, l)));
            }
            return Ok(StepOut {
                exchange: Some(i),
                url,
                method,
                extra,
                follow: Follow::Monitor,
                ..Default::default()
            });
        }
        if let Some(p) = &mon.prerequisite {
            let pre = self
                .ctx
                .target
                .monitor_named(p)
                .ok_or_else(|| format!("unknown prerequisite `{p}`"))?;
            let (url, body) = self.render_decl(&pre.request, None)?;
            let i = self
                .send(
                    &pre.request.method,
                    &url,
                    Vec::new(),
                    body,
                    Role::Setup,
                    &Self::api_of(pre),
                )
                .await?;
            let out = self.follow_monitor(i, pre, self.ctx.target.deadline).await;
            if out.outcome != "Succeeded" {
                return Err(format!("prerequisite `{p}` ended {}", out.outcome));
            }
            let bare = url.split('?').next().unwrap_or(&url).to_string();
            let name = bare.rsplit('/').next().unwrap_or("").to_string();
            self.scope
                .insert("prerequisite".into(), json!({"url": bare, "name": name}));
        }
        let body = if spec.failing {
            Some(
                mon.failing_body
                    .as_ref()
                    .ok_or("this monitor declares no failing_body")?,
            )
        } else {
            None
        };
        let (url, body) = self.render_decl(&mon.request, body)?;
        let mut headers = Vec::new();
        let sent_id = match &spec.operation_id {
            Some(t) => {
                let id = t.render(&self.scope)?;
                headers.push((mon.operation_id_header.clone(), id.clone()));
                Some(id)
            }
            None => None,
        };
        let i = self
            .send(
                &mon.request.method,
                &url,
                headers.clone(),
                body.clone(),
                Role::Step,
                &Self::api_of(mon),
            )
            .await?;
        // Remember the request as sent (with its api-version), for `repeat:`.
        let sent_url = self.exchanges[i].url.clone();
        if let Some(name) = self.step_name.clone() {
            self.started
                .insert(name, (mon.request.method.clone(), sent_url, headers, body));
        }
        let ex = &self.exchanges[i];
        let Some(resp) = ex.response.clone() else {
            return Err(format!(
                "no response: {}",
                ex.error.clone().unwrap_or_default()
            ));
        };
        let seq = Some(ex.seq);
        let mut extra = Map::new();
        if (200..300).contains(&resp.status) {
            let link = resp.header(mon.link.header());
            if mon.link == crate::target::MonitorLink::OperationLocation {
                let ok = link.is_some_and(|l| url::Url::parse(l).is_ok_and(|u| u.has_host()));
                self.ledger.check("MON-01", ok, seq, || {
                    (
                        "an absolute Operation-Location on the initial response".into(),
                        format!("Operation-Location: {link:?}"),
                    )
                });
            }
            let got = resp.header(&mon.operation_id_header).map(str::to_string);
            let ok = match (&sent_id, &got) {
                (Some(s), Some(g)) => s == g,
                (None, Some(g)) => !g.trim().is_empty(),
                _ => false,
            };
            self.ledger.check("MON-07", ok, seq, || {
                (
                    format!(
                        "{} on the initial response{}",
                        mon.operation_id_header,
                        sent_id
                            .as_ref()
                            .map(|s| format!(" equal to the one sent ({s})"))
                            .unwrap_or_default()
                    ),
                    format!("{got:?}"),
                )
            });
            if let Some(l) = link {
                extra.insert("monitor".into(), json!(resolve(&ex.url, l)));
            }
        }
        Ok(StepOut {
            exchange: Some(i),
            url,
            method: mon.request.method.clone(),
            extra,
            follow: Follow::Monitor,
            ..Default::default()
        })
    }

    /// Follow a status monitor to a terminal status, checking MON-02..06.
    pub(super) async fn follow_monitor(
        &mut self,
        init: usize,
        mon: &Monitor,
        deadline: Duration,
    ) -> super::lro::PollOut {
        let start = Instant::now();
        let Some(resp) = self.exchanges[init].response.clone() else {
            return super::lro::PollOut {
                outcome: "error: no response".into(),
                final_exchange: Some(init),
            };
        };
        let req_url = self.exchanges[init].url.clone();
        if !(200..300).contains(&resp.status) {
            return super::lro::PollOut {
                outcome: format!("refused with {}", resp.status),
                final_exchange: Some(init),
            };
        }
        let Some(link) = resp.header(mon.link.header()).map(|l| resolve(&req_url, l)) else {
            let seq = Some(self.exchanges[init].seq);
            self.ledger.fail(
                "MON-02",
                format!("a {} link to the status monitor", mon.link.header()),
                "no link in the initial response",
                seq,
                None,
            );
            return super::lro::PollOut {
                outcome: "error: no status monitor link".into(),
                final_exchange: Some(init),
            };
        };
        let final_link = resp.header("location").map(|l| resolve(&req_url, l));
        let mut retry = resp
            .header("retry-after")
            .and_then(|v| v.trim().parse::<f64>().ok());
        let mut attempts = 0;
        let mut outcome = None;
        let mut last = None;
        while start.elapsed() < deadline {
            let wait = Duration::from_secs_f64(retry.unwrap_or(5.0).max(1.0) * self.ctx.time_scale);
            if !self
                .ctx
                .cancel
                .sleep(wait.min(deadline.saturating_sub(start.elapsed())))
                .await
            {
                outcome = Some("interrupted".to_string());
                break;
            }
            attempts += 1;
            let Ok(i) = self
                .get(&link, Role::MonitorPoll, &ApiVersion::Default)
                .await
            else {
                break;
            };
            last = Some(i);
            if let Some(o) = self.judge_monitor_read(i, mon) {
                outcome = Some(o.to_string());
                break;
            }
            if let Some(r) = self.exchanges[i]
                .response
                .as_ref()
                .and_then(|r| r.header("retry-after"))
                .and_then(|v| v.trim().parse::<f64>().ok())
            {
                retry = Some(r);
            }
        }
        let outcome = match outcome {
            Some(o) => o,
            None => {
                let seen = last
                    .and_then(|i| {
                        self.exchanges[i]
                            .response
                            .as_ref()
                            .and_then(|r| r.pointer(&format!("/{}", mon.status_field)).cloned())
                    })
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "no status".into());
                let seq = last.map(|i| self.exchanges[i].seq);
                self.ledger.fail(
                    "MON-03",
                    format!(
                        "a terminal status ({}) within {} s",
                        [
                            mon.succeeded.clone(),
                            mon.failed.clone(),
                            mon.canceled.clone()
                        ]
                        .concat()
                        .join(", "),
                        deadline.as_secs()
                    ),
                    format!("still {seen} after {attempts} polls"),
                    seq,
                    None,
                );
                format!("timed out after {} s", deadline.as_secs())
            }
        };
        let mut final_exchange = last.or(Some(init));
        if ["Succeeded", "Failed", "Canceled"].contains(&outcome.as_str()) {
            self.ledger.pass("MON-03");
            // A terminal status never changes (OPS-07): one more read.
            if let Ok(again) = self
                .get(&link, Role::MonitorPoll, &ApiVersion::Default)
                .await
            {
                let st = self.exchanges[again]
                    .response
                    .as_ref()
                    .and_then(|r| r.pointer(&format!("/{}", mon.status_field)))
                    .and_then(Value::as_str)
                    .and_then(|s| mon.outcome_of(s));
                let seq = Some(self.exchanges[again].seq);
                self.ledger
                    .check("OPS-07", st == Some(outcome.as_str()), seq, || {
                        (format!("the status to stay {outcome}"), format!("{st:?}"))
                    });
            }
        }
        if outcome == "Succeeded" && mon.final_state_via == "location" {
            match final_link {
                Some(l) => {
                    if let Ok(i) = self.get(&l, Role::Step, &ApiVersion::Default).await {
                        let st = self.exchanges[i].status();
                        let seq = Some(self.exchanges[i].seq);
                        self.ledger.check("MON-06", st == Some(200), seq, || {
                            (
                                "200 with the result from the Location of the initial response"
                                    .into(),
                                format!("{st:?}"),
                            )
                        });
                        final_exchange = Some(i);
                    }
                }
                None => {
                    let seq = Some(self.exchanges[init].seq);
                    self.ledger.fail(
                        "MON-06",
                        "a Location header (final-state-via location) on the initial response",
                        "none",
                        seq,
                        None,
                    );
                }
            }
        }
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: format!("monitor ({})", mon.link.header()),
            attempts,
            elapsed_ms: start.elapsed().as_millis() as u64,
            outcome: outcome.clone(),
        });
        super::lro::PollOut {
            outcome,
            final_exchange,
        }
    }

    /// MON-02, MON-04, MON-05 on one monitor read; the outcome when terminal.
    fn judge_monitor_read(&mut self, i: usize, mon: &Monitor) -> Option<&'static str> {
        let ex = &self.exchanges[i];
        let seq = Some(ex.seq);
        let resp = ex.response.clone()?;
        let body = resp.json.as_ref().filter(|j| j.is_object()).cloned();
        let status = body
            .as_ref()
            .and_then(|b| b.get(&mon.status_field))
            .and_then(Value::as_str)
            .map(str::to_string);
        self.ledger.check(
            "MON-02",
            resp.status == 200 && status.is_some(),
            seq,
            || {
                (
                    format!(
                        "200 with a JSON object whose `{}` is a string",
                        mon.status_field
                    ),
                    format!("{} {}", resp.status, crate::http::cut(&resp.body, 160)),
                )
            },
        );
        let (Some(b), Some(st)) = (body, status) else {
            return None;
        };
        let outcome = mon.outcome_of(&st);
        if let Some(rf) = &mon.result_field {
            let has = b.get(rf).is_some_and(|v| !v.is_null());
            if outcome == Some("Succeeded") {
                self.ledger.check("MON-04", has, seq, || {
                    (
                        format!("`{rf}` holding the result once {st}"),
                        "absent".into(),
                    )
                });
            } else {
                self.ledger.check("MON-04", !has, seq, || {
                    (
                        format!("no `{rf}` while the status is {st}"),
                        format!(
                            "{rf} = {}",
                            b.get(rf).map(|v| v.to_string()).unwrap_or_default()
                        ),
                    )
                });
            }
        }
        if outcome == Some("Failed") {
            let e = b.get(&mon.error_field);
            let ok = nonempty(e.and_then(|e| e.get("code")))
                && nonempty(e.and_then(|e| e.get("message")));
            self.ledger.check("MON-05", ok, seq, || {
                (
                    format!(
                        "`{}` with a non-empty code and message when {st}",
                        mon.error_field
                    ),
                    format!("{:?}", e),
                )
            });
        }
        outcome
    }

    /// `task`: a write on the task API, followed through the task's states and the resource's.
    pub(super) async fn run_task(&mut self, spec: &TaskSpec) -> StepResult<StepOut> {
        let api = self
            .ctx
            .target
            .tasks
            .as_ref()
            .ok_or("the target declares no `tasks`")?;
        if let Some(of) = &spec.of {
            let rid = self
                .scope
                .get(of)
                .and_then(|v| v.get("resource_id"))
                .cloned()
                .unwrap_or(Value::Null);
            if rid.is_null() {
                return Err(format!("step `{of}` produced no resource id"));
            }
            self.scope.insert("resource_id".into(), rid);
        }
        let decl = match spec.op {
            TaskOp::Create => &api.create,
            TaskOp::Update => api
                .update
                .as_ref()
                .ok_or("the task API declares no `update`")?,
            TaskOp::Delete => &api.delete,
        };
        let body = match spec.body.as_str() {
            "failing_processing" => Some(
                api.failing_processing_body
                    .as_ref()
                    .ok_or("no failing_processing_body declared")?,
            ),
            "failing_provisioning" => Some(
                api.failing_provisioning_body
                    .as_ref()
                    .ok_or("no failing_provisioning_body declared")?,
            ),
            _ => None,
        };
        let (url, body) = self.render_decl(decl, body)?;
        let i = self
            .send(
                &decl.method,
                &url,
                Vec::new(),
                body,
                Role::Step,
                &ApiVersion::Omit,
            )
            .await?;
        let ex = self.exchanges[i].clone();
        let seq = Some(ex.seq);
        let task_id = ex
            .response
            .as_ref()
            .and_then(|r| r.pointer(&format!("/{}", api.task_id_field)))
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut extra = Map::new();
        let Some(task_id) = task_id.filter(|t| !t.trim().is_empty()) else {
            self.ledger.fail(
                "TASK-01",
                format!("a body with a non-empty `{}`", api.task_id_field),
                format!(
                    "{} {}",
                    ex.status().unwrap_or(0),
                    crate::http::cut(&ex.response.map(|r| r.body).unwrap_or_default(), 160)
                ),
                seq,
                None,
            );
            return Ok(StepOut {
                exchange: Some(i),
                url,
                method: decl.method.clone(),
                outcome: Some("no task".into()),
                ..Default::default()
            });
        };
        let reused = self.ctx.task_ids.first_use_of(&task_id, ex.seq);
        self.ledger.check("TASK-01", reused.is_none(), seq, || {
            (
                "a taskId no other write received".into(),
                format!(
                    "`{task_id}` was already returned by exchange #{}",
                    reused.unwrap_or(0)
                ),
            )
        });
        extra.insert("task_id".into(), json!(task_id));
        self.scope.insert("task_id".into(), json!(task_id));
        // TASK-04: the task list shows a task that is still running (only judged if it is).
        if let Some(list) = &api.tasks_url {
            let lu = self.absolute(list);
            if let Ok(li) = self.get(&lu, Role::TaskPoll, &ApiVersion::Omit).await {
                let listed = self.exchanges[li]
                    .response
                    .as_ref()
                    .is_some_and(|r| r.body.contains(&task_id));
                let tu = self.absolute(
                    &Template::parse(&api.task_url)
                        .map_err(|(_, m)| m)?
                        .render(&self.scope)?,
                );
                if let Ok(ti) = self.get(&tu, Role::TaskPoll, &ApiVersion::Omit).await {
                    let st = self.exchanges[ti]
                        .response
                        .as_ref()
                        .and_then(|r| r.pointer(&format!("/{}", api.status_field)))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    let running = st
                        .as_deref()
                        .is_some_and(|s| s == api.task_states[0] || s == api.task_states[1]);
                    if running {
                        let lseq = Some(self.exchanges[li].seq);
                        self.ledger.check("TASK-04", listed, lseq, || {
                            (
                                "the task list to include the running task".into(),
                                format!("{task_id} not listed"),
                            )
                        });
                    }
                }
            }
        }
        let (task_outcome, last) = self.follow_task(spec).await;
        let mut outcome = task_outcome.clone();
        let mut final_exchange = last.or(Some(i));
        if task_outcome == "completed" {
            let resp = last.and_then(|l| self.exchanges[l].response.clone());
            let rid = resp
                .as_ref()
                .and_then(|r| r.pointer(&api.resource_id_pointer))
                .cloned();
            let rid = match (spec.op, rid) {
                (TaskOp::Create, Some(r)) if !r.is_null() => r,
                (TaskOp::Create, _) => {
                    return Ok(StepOut {
                        exchange: final_exchange,
                        url,
                        method: decl.method.clone(),
                        outcome: Some("Failed".into()),
                        extra,
                        ..Default::default()
                    });
                }
                _ => self
                    .scope
                    .get("resource_id")
                    .cloned()
                    .unwrap_or(Value::Null),
            };
            extra.insert("resource_id".into(), rid.clone());
            self.scope.insert("resource_id".into(), rid);
            let ru = self.absolute(
                &Template::parse(&api.resource_url)
                    .map_err(|(_, m)| m)?
                    .render(&self.scope)?,
            );
            extra.insert("resource_url".into(), json!(ru));
            let (res_outcome, rl) = self.follow_task_resource(spec.op, &ru).await;
            outcome = res_outcome;
            final_exchange = rl.or(final_exchange);
        } else if task_outcome == "error" {
            outcome = "Failed".into();
        }
        Ok(StepOut {
            exchange: final_exchange,
            url,
            method: decl.method.clone(),
            outcome: Some(outcome),
            extra,
            ..Default::default()
        })
    }

    /// Poll a task to processing-completed or processing-error (TASK-02, TASK-03).
    async fn follow_task(&mut self, spec: &TaskSpec) -> (String, Option<usize>) {
        let Some(api) = self.ctx.target.tasks.as_ref() else {
            return ("error".into(), None);
        };
        let url = match Template::parse(&api.task_url)
            .map_err(|(_, m)| m)
            .and_then(|t| t.render(&self.scope))
        {
            Ok(u) => self.absolute(&u),
            Err(e) => return (format!("error: {e}"), None),
        };
        let start = Instant::now();
        let deadline = self.ctx.target.deadline;
        let mut highest = 0usize;
        let mut last = None;
        let mut attempts = 0;
        let mut terminal: Option<String> = None;
        let mut reads_after_terminal = 0;
        while start.elapsed() < deadline {
            if !self.ctx.sleep(1.0).await {
                break;
            }
            attempts += 1;
            let Ok(i) = self.get(&url, Role::TaskPoll, &ApiVersion::Omit).await else {
                break;
            };
            last = Some(i);
            let ex = &self.exchanges[i];
            let seq = Some(ex.seq);
            let resp = ex.response.clone();
            let st = resp
                .as_ref()
                .filter(|r| r.status == 200)
                .and_then(|r| r.pointer(&format!("/{}", api.status_field)))
                .and_then(Value::as_str)
                .map(str::to_string);
            let idx = st
                .as_deref()
                .and_then(|s| api.task_states.iter().position(|x| x == s));
            let Some(idx) = idx else {
                self.ledger.fail(
                    "TASK-02",
                    format!("200 with a status among {}", api.task_states.join(", ")),
                    format!("{} {:?}", resp.map(|r| r.status).unwrap_or(0), st),
                    seq,
                    None,
                );
                continue;
            };
            // States only move forward; the two terminal ones never change.
            let back = idx < highest || (highest >= 2 && idx != highest);
            self.ledger.check("TASK-02", !back, seq, || {
                (
                    format!("no move back from {}", api.task_states[highest]),
                    format!("status {}", api.task_states[idx]),
                )
            });
            highest = highest.max(idx);
            if idx >= 2 {
                if terminal.is_none() {
                    let body = resp.and_then(|r| r.json).unwrap_or(Value::Null);
                    if idx == 2 {
                        let has_resp = body.get("response").is_some_and(Value::is_object);
                        let has_id = spec.op != TaskOp::Create
                            || body
                                .pointer(&api.resource_id_pointer)
                                .is_some_and(|v| !v.is_null());
                        self.ledger.check("TASK-03", has_resp && has_id, seq, || {
                            (
                                format!(
                                    "a `response` object{}",
                                    if spec.op == TaskOp::Create {
                                        format!(" with {}", api.resource_id_pointer)
                                    } else {
                                        String::new()
                                    }
                                ),
                                crate::http::cut(&body.to_string(), 200),
                            )
                        });
                    } else {
                        self.ledger.check(
                            "TASK-03",
                            nonempty(body.pointer(&api.task_error_pointer)),
                            seq,
                            || {
                                (
                                    format!("a non-empty cause at {}", api.task_error_pointer),
                                    crate::http::cut(&body.to_string(), 200),
                                )
                            },
                        );
                    }
                    terminal = Some(if idx == 2 {
                        "completed".into()
                    } else {
                        "error".into()
                    });
                }
                reads_after_terminal += 1;
                if reads_after_terminal >= 2 {
                    break;
                }
            }
        }
        let outcome = terminal.unwrap_or_else(|| {
            self.ledger.fail(
                "TASK-02",
                "processing-completed or processing-error within the deadline",
                format!("still {} after {attempts} reads", api.task_states[highest]),
                last.map(|i| self.exchanges[i].seq),
                None,
            );
            format!("timed out after {} s", deadline.as_secs())
        });
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: "task".into(),
            attempts,
            elapsed_ms: start.elapsed().as_millis() as u64,
            outcome: outcome.clone(),
        });
        (outcome, last)
    }

    /// Follow the resource after its task completed (TASK-05..08).
    async fn follow_task_resource(&mut self, op: TaskOp, url: &str) -> (String, Option<usize>) {
        let Some(api) = self.ctx.target.tasks.as_ref() else {
            return ("error".into(), None);
        };
        let [pending, active, deleting, error] = api.resource_states.clone();
        let start = Instant::now();
        let deadline = self.ctx.target.deadline;
        let mut left_pending = false;
        let mut last = None;
        let mut attempts = 0;
        let outcome = loop {
            if start.elapsed() >= deadline {
                let rule = if op == TaskOp::Delete {
                    "TASK-08"
                } else {
                    "TASK-06"
                };
                let want = if op == TaskOp::Delete {
                    "404 within the deadline"
                } else {
                    "active or error within the deadline"
                };
                self.ledger.fail(
                    rule,
                    want,
                    format!("not reached after {attempts} reads"),
                    last.map(|i: usize| self.exchanges[i].seq),
                    None,
                );
                break format!("timed out after {} s", deadline.as_secs());
            }
            attempts += 1;
            let Ok(i) = self.get(url, Role::TaskPoll, &ApiVersion::Omit).await else {
                break "error".into();
            };
            last = Some(i);
            let ex = &self.exchanges[i];
            let seq = Some(ex.seq);
            let resp = ex.response.clone();
            let code = resp.as_ref().map(|r| r.status).unwrap_or(0);
            let body = resp
                .as_ref()
                .and_then(|r| r.json.clone())
                .unwrap_or(Value::Null);
            let sync = (code == 200 || code == 404) && body.get(&api.task_id_field).is_none();
            self.ledger.check("TASK-05", sync, seq, || {
                (
                    "200 or 404 with the data itself, never 202 or a taskId".into(),
                    format!("{code} {}", crate::http::cut(&body.to_string(), 160)),
                )
            });
            if !sync {
                break "Failed".into();
            }
            let st = body
                .get(&api.resource_status_field)
                .and_then(Value::as_str)
                .map(str::to_string);
            match op {
                TaskOp::Delete => {
                    if code == 404 {
                        self.ledger.pass("TASK-08");
                        break "Succeeded".into();
                    }
                    let ok = st.as_deref() == Some(deleting.as_str());
                    self.ledger.check("TASK-08", ok, seq, || {
                        (
                            format!("{deleting}, or 404, after the DELETE task completed"),
                            format!("{st:?}"),
                        )
                    });
                }
                _ => {
                    let known = st.as_deref().is_some_and(|s| {
                        [&pending, &active, &deleting, &error]
                            .iter()
                            .any(|x| *x == s)
                    });
                    self.ledger.check("TASK-06", code == 200 && known, seq, || {
                        (
                            format!(
                                "200 with a status among {pending}, {active}, {deleting}, {error}"
                            ),
                            format!("{code} {st:?}"),
                        )
                    });
                    let st = st.unwrap_or_default();
                    if st == pending {
                        self.ledger.check("TASK-06", !left_pending, seq, || {
                            ("no return to pending".into(), st.clone())
                        });
                    } else {
                        left_pending = true;
                    }
                    if st == active {
                        break "Succeeded".into();
                    }
                    if st == error {
                        let ok = nonempty(body.pointer(&api.resource_error_pointer));
                        self.ledger.check("TASK-07", ok, seq, || {
                            (
                                format!("error details at {}", api.resource_error_pointer),
                                crate::http::cut(&body.to_string(), 200),
                            )
                        });
                        break "Failed".into();
                    }
                    if code != 200 {
                        break "Failed".into();
                    }
                }
            }
            if !self.ctx.sleep(1.0).await {
                break "interrupted".into();
            }
        };
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: "task resource".into(),
            attempts,
            elapsed_ms: start.elapsed().as_millis() as u64,
            outcome: outcome.clone(),
        });
        (outcome, last)
    }
}

pub(super) fn _unused(_: Outcome) {}

/// How a `poll` step follows the step it names.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum Follow {
    #[default]
    Arm,
    Monitor,
}
