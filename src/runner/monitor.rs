//! Driving data-plane operations with a status monitor (TypeSpec Azure.Core): `start` sends the
//! monitor's declared request (after its prerequisite), and `poll` follows the monitor to a
//! terminal status, reads it once more, and reads the final result where final-state-via says.
//! The records go to the rule engine (MON rules); nothing is judged here.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::exec::{Exec, Follow, StepOut, StepResult};
use super::follow::{FollowSpec, Followed, Jar, Pace};
use crate::http::{Role, Surface};
use crate::lro::{FinalStateVia, Outcome, Strategy, resolve};
use crate::report::PollRecord;
use crate::rules::MonitorRecord;
use crate::rules::flow::{AfterRead, End, Event, Flow};
use crate::scenario::{ApiVersion, StartSpec};
use crate::target::{Monitor, RequestDecl};
use crate::template::{JsonTemplate, Template};

/// Seed 002 names no default interval; a monitor without Retry-After is read every 5 s.
fn monitor_pace(mon: &Monitor) -> Pace<'_> {
    Pace {
        default_wait: Duration::from_secs(5),
        monitor: Some(mon),
        side_reads: false,
    }
}

impl<'a> Exec<'a> {
    pub(super) fn api_of(mon_api: Option<&String>) -> ApiVersion {
        match mon_api {
            Some(v) => ApiVersion::Value(Template::literal(v)),
            None => ApiVersion::Omit,
        }
    }

    /// Render a declared request (URL and body templates) against the scope.
    pub(super) fn render_decl(
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

    fn monitor_link(&self, mon: &Monitor, i: usize, url: &str) -> Map<String, Value> {
        let mut extra = Map::new();
        if let Some(l) = self.exchanges[i]
            .response
            .as_ref()
            .and_then(|r| r.sent_header(mon.link.header()))
            .and_then(|l| resolve(url, l))
        {
            // As a client reads it (`poll_api_version: append` adds a missing api-version).
            extra.insert("monitor".into(), json!(mon.poll_url(&l)));
        }
        extra
    }

    /// `start`: run the prerequisite, then send the monitor operation's request.
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
                    &ApiVersion::AsGiven,
                    Some(Surface::DataPlane),
                )
                .await?;
            let extra = self.monitor_link(mon, i, &url);
            return Ok(StepOut {
                exchange: Some(i),
                initial: Some(i),
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
                    &Self::api_of(pre.api_version.as_ref()),
                    Some(Surface::DataPlane),
                )
                .await?;
            // The prerequisite is a monitor operation too: its initial answer is judged as one.
            self.judge.monitor_started(pre, &self.exchanges[i], None);
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
        let sent_id = match (&spec.operation_id, &mon.operation_id_header) {
            (Some(t), Some(h)) => {
                let id = t.render(&self.scope)?;
                headers.push((h.clone(), id.clone()));
                Some(id)
            }
            _ => None,
        };
        let i = self
            .send(
                &mon.request.method,
                &url,
                headers.clone(),
                body.clone(),
                Role::Step,
                &Self::api_of(mon.api_version.as_ref()),
                Some(Surface::DataPlane),
            )
            .await?;
        // Remember the request as sent (with its api-version), for `repeat:`.
        let sent_url = self.exchanges[i].url.clone();
        if let Some(name) = self.step_name.clone() {
            self.started
                .insert(name, (mon.request.method.clone(), sent_url, headers, body));
        }
        if self.exchanges[i].response.is_none() {
            return Err(format!(
                "no response: {}",
                self.exchanges[i].error.clone().unwrap_or_default()
            ));
        }
        self.judge
            .monitor_started(mon, &self.exchanges[i], sent_id.as_deref());
        let mut extra = self.monitor_link(mon, i, &url);
        // The declared cancel request, ready to send (`${start.cancel_url}`, with the monitor's
        // api-version, and `${start.cancel_method}`).
        if let Some(c) = &mon.cancel {
            let (curl, _) = self.render_decl(c, None)?;
            let mut u =
                crate::http::parse_url(&curl).map_err(|e| format!("cancel URL `{curl}`: {e}"))?;
            if let Some(v) = &mon.api_version
                && !u.query_pairs().any(|(k, _)| k == "api-version")
            {
                u.query_pairs_mut().append_pair("api-version", v);
            }
            extra.insert("cancel_url".into(), json!(u.to_string()));
            extra.insert("cancel_method".into(), json!(c.method));
        }
        Ok(StepOut {
            exchange: Some(i),
            initial: Some(i),
            url,
            method: mon.request.method.clone(),
            extra,
            follow: Follow::Monitor,
            ..Default::default()
        })
    }

    /// Follow a status monitor to a terminal status; the record goes to the rule engine.
    pub(super) async fn follow_monitor(
        &mut self,
        init: usize,
        mon: &Monitor,
        deadline: Duration,
    ) -> Followed {
        let start = Instant::now();
        let Some(resp) = self.exchanges[init].response.clone() else {
            return Followed {
                outcome: "error: no response".into(),
                exchange: Some(init),
                unread: None,
            };
        };
        let req_url = self.exchanges[init].url.clone();
        let mut strategy = Strategy::monitor(mon.link.channel(), &req_url, &resp, mon.vocabulary());
        let mut flow = Flow {
            surface: Surface::DataPlane,
            method: self.exchanges[init].method.clone(),
            request_url: req_url.clone(),
            resource: None,
            initial: init,
            initial_state: strategy.initial(&resp),
            channel: strategy.channel(),
            declared: None,
            final_state_via: Some(mon.final_state_via),
            events: Vec::new(),
            end: End::Unseen,
            deadline_secs: deadline.as_secs(),
            elapsed_ms: 0,
            result: Some(init),
        };
        let mut jar = Jar::default();
        jar.take(Some(&resp));
        let mut unread = None;
        if !(200..300).contains(&resp.status) {
            flow.end = End::Unfollowable(format!("refused with {}", resp.status));
        } else if strategy == Strategy::Done {
            flow.end = End::Unfollowable(format!(
                "no {} link in the initial answer",
                mon.link.header()
            ));
        } else if let Some(why) = strategy.url().and_then(|u| self.ctx.http.refusal(u)) {
            flow.end = End::Unfollowable(why);
        } else {
            let method = flow.method.clone();
            let spec = FollowSpec::of(&method, None, None, deadline);
            unread = self
                .poll_loop(
                    &mut flow,
                    &mut strategy,
                    &mut jar,
                    &spec,
                    &monitor_pace(mon),
                    &resp,
                    start,
                )
                .await;
        }
        if let End::Finished(o) = flow.end {
            if let Some(url) = strategy.url().map(|u| mon.poll_url(u))
                && let Some(x) = self
                    .flow_read(&url, Role::MonitorPoll, Surface::DataPlane, &jar)
                    .await
            {
                self.judge.monitor_read(mon, &self.exchanges[x]);
                flow.events.push(Event::After {
                    ex: x,
                    what: AfterRead::Status,
                });
            }
            flow.result = flow.polls().last().map(|(i, _)| i);
            let final_link = resp
                .sent_header("location")
                .and_then(|l| resolve(&req_url, l))
                .map(|l| mon.poll_url(&l));
            if o == Outcome::Succeeded
                && mon.final_state_via == FinalStateVia::Location
                && let Some(l) = final_link.filter(|l| self.ctx.http.refusal(l).is_none())
                && let Some(x) = self
                    .flow_read(&l, Role::Step, Surface::DataPlane, &jar)
                    .await
            {
                flow.events.push(Event::After {
                    ex: x,
                    what: AfterRead::Final,
                });
                flow.result = Some(x);
            }
        }
        flow.elapsed_ms = start.elapsed().as_millis() as u64;
        let outcome = match &flow.end {
            End::Finished(o) => o.as_str().to_string(),
            End::TimedOut => format!("timed out after {} s", deadline.as_secs()),
            End::Interrupted => "interrupted".into(),
            End::Unfollowable(why) if why.starts_with("refused") => why.clone(),
            End::Unfollowable(why) => format!("error: {why}"),
            End::Unseen => "unseen".into(),
        };
        let rec = MonitorRecord { flow };
        self.judge.monitor_flow(mon, &rec, &self.exchanges);
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: format!("monitor ({})", mon.link.header()),
            attempts: rec.flow.polls().count() as u32,
            elapsed_ms: rec.flow.elapsed_ms,
            outcome: outcome.clone(),
        });
        let exchange = rec.flow.result.or(Some(init));
        Followed {
            outcome,
            exchange,
            unread,
        }
    }
}
