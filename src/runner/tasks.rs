//! Driving a task-based API (seed 004): a `task` step sends a declared write, reads the task
//! collection and the task at once, follows the task to processing-completed or
//! processing-error (and reads it again), then follows the resource to a settled provisioning
//! status (and reads it again). The record goes to the rule engine (TASK rules).

use std::time::Instant;

use serde_json::{Map, Value, json};

use super::exec::{Exec, StepOut, StepResult};
use crate::http::{Role, Surface};
use crate::report::PollRecord;
use crate::rules::flow::End;
use crate::rules::{TaskRecord, TaskWrite};
use crate::scenario::{ApiVersion, TaskOp, TaskSpec};
use crate::target::TaskApi;
use crate::template::Template;

/// Reads of a task or resource once it reached its end, to see that it stays there.
const REREADS: usize = 2;

impl<'a> Exec<'a> {
    async fn task_get(&mut self, url: &str) -> Option<usize> {
        self.send(
            "GET",
            url,
            Vec::new(),
            None,
            Role::TaskPoll,
            &ApiVersion::Omit,
            Some(Surface::Task),
        )
        .await
        .ok()
    }

    fn rendered(&self, t: &str) -> StepResult<String> {
        let u = Template::parse(t)
            .map_err(|(_, m)| m)?
            .render(&self.scope)?;
        Ok(self.absolute(&u))
    }

    /// `task`: a write on the task API, followed through the task's states and the resource's.
    pub(super) async fn run_task(&mut self, spec: &TaskSpec) -> StepResult<StepOut> {
        let api: &'a TaskApi = self
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
        let (decl, write) = match spec.op {
            TaskOp::Create => (&api.create, TaskWrite::Create),
            TaskOp::Update => (
                api.update
                    .as_ref()
                    .ok_or("the task API declares no `update`")?,
                TaskWrite::Update,
            ),
            TaskOp::Delete => (&api.delete, TaskWrite::Delete),
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
                Some(Surface::Task),
            )
            .await?;
        let task_id = self.exchanges[i]
            .response
            .as_ref()
            .and_then(|r| r.sent_pointer(&format!("/{}", api.task_id_field)))
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .map(str::to_string);
        if let Some(id) = &task_id {
            self.judge
                .registry
                .task_id_handed(id, self.exchanges[i].seq);
        }
        let mut rec = TaskRecord {
            write,
            initial: i,
            task_id: task_id.clone(),
            listing: None,
            task_reads: Vec::new(),
            task_end: End::Unseen,
            resource_reads: Vec::new(),
            resource_end: End::Unseen,
        };
        let mut extra = Map::new();
        let mut outcome = "no task".to_string();
        let mut final_exchange = Some(i);
        if let Some(task_id) = task_id {
            extra.insert("task_id".into(), json!(task_id));
            self.scope.insert("task_id".into(), json!(task_id));
            let task_url = self.rendered(&api.task_url)?;
            if let Some(list) = &api.tasks_url {
                let lu = self.absolute(list);
                if let Some(li) = self.task_get(&lu).await
                    && let Some(ti) = self.task_get(&task_url).await
                {
                    rec.listing = Some((li, ti));
                }
            }
            outcome = self.follow_task(api, &task_url, &mut rec).await;
            final_exchange = rec.task_reads.last().copied().or(final_exchange);
            if outcome == "completed" {
                let last = rec
                    .task_reads
                    .last()
                    .and_then(|l| self.exchanges[*l].response.clone());
                let rid = last
                    .as_ref()
                    .and_then(|r| r.sent_pointer(&api.resource_id_pointer))
                    .cloned()
                    .filter(|v| !v.is_null());
                let rid = match (write, rid) {
                    (TaskWrite::Create, Some(r)) => Some(r),
                    (TaskWrite::Create, None) => None,
                    _ => self.scope.get("resource_id").cloned(),
                };
                match rid {
                    Some(rid) => {
                        extra.insert("resource_id".into(), rid.clone());
                        self.scope.insert("resource_id".into(), rid);
                        let ru = self.rendered(&api.resource_url)?;
                        extra.insert("resource_url".into(), json!(ru));
                        outcome = self.follow_task_resource(api, &ru, &mut rec).await;
                        final_exchange = rec.resource_reads.last().copied().or(final_exchange);
                    }
                    None => outcome = "Failed".into(),
                }
            } else if outcome == "error" {
                outcome = "Failed".into();
            }
        }
        self.judge.task(&rec, &self.exchanges);
        Ok(StepOut {
            exchange: final_exchange,
            initial: Some(i),
            url,
            method: decl.method.clone(),
            outcome: Some(outcome),
            extra,
            ..Default::default()
        })
    }

    /// Poll a task to processing-completed or processing-error, then read it again.
    async fn follow_task(&mut self, api: &TaskApi, url: &str, rec: &mut TaskRecord) -> String {
        let start = Instant::now();
        let deadline = self.ctx.target.deadline;
        let mut after = 0;
        let mut terminal: Option<&str> = None;
        rec.task_end = End::TimedOut;
        while start.elapsed() < deadline {
            if !self.ctx.sleep(1.0).await {
                rec.task_end = End::Interrupted;
                break;
            }
            let Some(i) = self.task_get(url).await else {
                break;
            };
            rec.task_reads.push(i);
            let st = self.exchanges[i]
                .response
                .as_ref()
                .filter(|r| r.status == 200)
                .and_then(|r| r.pointer(&format!("/{}", api.status_field)))
                .and_then(Value::as_str)
                .map(str::to_string);
            let idx = st
                .as_deref()
                .and_then(|s| api.task_states.iter().position(|x| x == s));
            if terminal.is_none() && idx.is_some_and(|x| x >= 2) {
                terminal = Some(if idx == Some(2) { "completed" } else { "error" });
                rec.task_end = End::Finished(if idx == Some(2) {
                    crate::lro::Outcome::Succeeded
                } else {
                    crate::lro::Outcome::Failed
                });
            }
            if terminal.is_some() {
                after += 1;
                if after > REREADS {
                    break;
                }
            }
        }
        let outcome = terminal
            .map(str::to_string)
            .unwrap_or_else(|| format!("timed out after {} s", deadline.as_secs()));
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: "task".into(),
            attempts: rec.task_reads.len() as u32,
            elapsed_ms: start.elapsed().as_millis() as u64,
            outcome: outcome.clone(),
        });
        outcome
    }

    /// Read the resource after its task completed until it settles, then read it again.
    async fn follow_task_resource(
        &mut self,
        api: &TaskApi,
        url: &str,
        rec: &mut TaskRecord,
    ) -> String {
        let [_, active, _, error] = &api.resource_states;
        let start = Instant::now();
        let deadline = self.ctx.target.deadline;
        let mut outcome = None;
        let mut after = 0;
        rec.resource_end = End::TimedOut;
        while start.elapsed() < deadline {
            let Some(i) = self.task_get(url).await else {
                break;
            };
            rec.resource_reads.push(i);
            let r = self.exchanges[i].response.as_ref();
            let code = r.map(|r| r.status).unwrap_or(0);
            let st = r
                .and_then(|r| r.json.as_ref())
                .and_then(|b| b.get(&api.resource_status_field))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if outcome.is_none() {
                let end = match rec.write {
                    TaskWrite::Delete if code == 404 => Some("Succeeded"),
                    TaskWrite::Delete => None,
                    _ if st == *active => Some("Succeeded"),
                    _ if st == *error || code != 200 => Some("Failed"),
                    _ => None,
                };
                if let Some(e) = end {
                    outcome = Some(e);
                    rec.resource_end = End::Finished(if e == "Succeeded" {
                        crate::lro::Outcome::Succeeded
                    } else {
                        crate::lro::Outcome::Failed
                    });
                }
            }
            // A deleted resource stays gone; a settled one is read again to see it stays.
            if outcome.is_some() {
                after += 1;
                if rec.write == TaskWrite::Delete || after > REREADS {
                    break;
                }
            }
            if !self.ctx.sleep(1.0).await {
                rec.resource_end = End::Interrupted;
                break;
            }
        }
        let outcome = outcome
            .map(str::to_string)
            .unwrap_or_else(|| format!("timed out after {} s", deadline.as_secs()));
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: "task resource".into(),
            attempts: rec.resource_reads.len() as u32,
            elapsed_ms: start.elapsed().as_millis() as u64,
            outcome: outcome.clone(),
        });
        outcome
    }
}
