//! Following an ARM operation to its end the way the Azure SDK's poller does (its strategies
//! live in `crate::lro`): poll the channel the answer offers, wait what Retry-After asks
//! (scaled by `--time-scale`, 60 s when absent), follow each new Location, keep the flow's
//! cookies, use server-given URLs exactly as given, stop at a terminal state, the deadline or
//! cancellation. While it runs, the scenario's `watch` URLs are read, and a Location beside an
//! operation resource is read too; once it ends, the status and Location are read again, the
//! resource's settled state, and the final result where the SDK reads it. Every read goes into
//! a [`Flow`] that the rule engine judges at the end; nothing is judged here.
//!
//! `during` blocks run their reads between two polls that show the operation running.

use std::time::{Duration, Instant};

use super::exec::{Exec, Follow, StepOut, StepResult};
use crate::http::{Role, Surface};
use crate::lro::{Channel, State, Strategy, final_url, retry_after};
use crate::report::PollRecord;
use crate::rules::flow::{AfterRead, End, Event, Flow};
use crate::scenario::{ApiVersion, PollSpec};
use crate::target::{Addressed, OpDecl};

/// What to follow and how long.
pub(super) struct FollowSpec<'s> {
    pub method: &'s str,
    pub resource: Option<String>,
    pub declared: Option<OpDecl>,
    pub deadline: Duration,
    pub watch: Vec<String>,
}

impl<'s> FollowSpec<'s> {
    /// An operation with nothing to watch.
    pub(super) fn of(
        method: &'s str,
        resource: Option<String>,
        declared: Option<OpDecl>,
        deadline: Duration,
    ) -> Self {
        FollowSpec {
            method,
            resource,
            declared,
            deadline,
            watch: Vec::new(),
        }
    }
}

/// How the poll loop behaves for one kind of operation.
pub(super) struct Pace<'m> {
    /// The wait when an answer names none.
    pub default_wait: Duration,
    /// A status monitor whose reads the rule engine judges as they come (before they are shed).
    pub monitor: Option<&'m crate::target::Monitor>,
    /// Read a Location beside an operation resource while it runs (ARM's two channels).
    pub side_reads: bool,
}

/// The ARM contract's default: 60 s without Retry-After.
const ARM_PACE: Pace<'static> = Pace {
    default_wait: Duration::from_secs(60),
    monitor: None,
    side_reads: true,
};

/// How following ended, for the step.
pub(super) struct Followed {
    /// Succeeded, Failed, Canceled, or why there is no outcome.
    pub outcome: String,
    /// The exchange the step shows: for PUT/PATCH the settled resource, else the result.
    pub exchange: Option<usize>,
    /// The operation was never seen to end because none of its last reads could be read
    /// (each cut off, reset or unanswered), naming the last: the step cannot check what it
    /// is for, an error of its test, never a verdict.
    pub unread: Option<String>,
}

impl Followed {
    /// A step's result from this: an error when no read could be read.
    pub(super) fn or_unread(&self) -> Result<(), String> {
        match &self.unread {
            Some(why) => Err(why.clone()),
            None => Ok(()),
        }
    }
}

/// Reads of the status after the end, at most, while Location keeps answering 202.
const LOCATION_REREADS: usize = 5;
/// Answers in a row that say nothing usable before following gives up.
const UNREADABLE_LIMIT: u32 = 5;
/// Body text an earlier poll answer keeps once a later one has come.
const SHED_BODY_CHARS: usize = 4096;

/// Cookies one flow's answers set, sent back on its later reads (as a browser-like client
/// would; some services tie polling to a cookie).
#[derive(Default)]
pub(super) struct Jar {
    cookies: Vec<(String, String)>,
    /// The server cleared a cookie of this flow: its session with the flow has ended, and a
    /// later read would be a new client's, not this flow's.
    cleared: bool,
}

impl Jar {
    pub(super) fn take(&mut self, resp: Option<&crate::http::Response>) {
        // The cookies as set (the recorded Set-Cookie header is redacted). A cookie set to an
        // empty value is cleared, as a browser's jar would on an expired one.
        for (name, value) in resp.map(|r| r.set_cookies.clone()).unwrap_or_default() {
            let had = self.cookies.iter().any(|(n, _)| *n == name);
            self.cookies.retain(|(n, _)| *n != name);
            if value.is_empty() {
                self.cleared |= had;
            } else {
                self.cookies.push((name, value));
            }
        }
    }

    pub(super) fn headers(&self) -> Vec<(String, String)> {
        if self.cookies.is_empty() {
            return Vec::new();
        }
        let v: Vec<String> = self
            .cookies
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        vec![("Cookie".into(), v.join("; "))]
    }
}

pub(super) fn role_of(channel: Option<Channel>) -> Role {
    match channel {
        Some(Channel::AzureAsyncOperation) => Role::OperationStatus,
        Some(Channel::OperationLocation) => Role::MonitorPoll,
        Some(Channel::Location) => Role::LocationPoll,
        _ => Role::ResourcePoll,
    }
}

impl Exec<'_> {
    /// What the target declares for this operation (a write of a type, or an action).
    pub(super) fn declared_op(&self, method: &str, url: &str) -> Option<OpDecl> {
        match self.ctx.target.address(url) {
            Addressed::Resource(t) => t.lro.for_method(method),
            Addressed::Sub(t, action) if method == "POST" => t
                .actions
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case(&action))
                .map(|a| a.lro),
            _ => None,
        }
    }

    /// Drop what an earlier answer is no longer needed for: its parsed JSON and most of its
    /// body text. A target that answers "still running" with a large body hundreds of times
    /// would otherwise hold every one of those bodies until the test ends.
    pub(super) fn shed(&mut self, idx: usize) {
        if let Some(r) = self
            .exchanges
            .get_mut(idx)
            .and_then(|x| x.response.as_mut())
        {
            r.json = None;
            if r.body.len() > SHED_BODY_CHARS {
                r.body = crate::http::cut(&r.body, SHED_BODY_CHARS);
            }
        }
    }

    /// A read of `url` that belongs to a flow (same surface, cookies, URL as given).
    pub(super) async fn flow_read(
        &mut self,
        url: &str,
        role: Role,
        surface: Surface,
        jar: &Jar,
    ) -> Option<usize> {
        self.send(
            "GET",
            url,
            jar.headers(),
            None,
            role,
            &ApiVersion::AsGiven,
            Some(surface),
        )
        .await
        .ok()
    }

    /// `poll: step`: follow the operation the named step started.
    pub(super) async fn poll_step(&mut self, p: &PollSpec) -> StepResult<StepOut> {
        let Some(first) = self.outs.get(&p.follow).cloned() else {
            return Err(format!("step `{}` did not run, nothing to poll", p.follow));
        };
        let Some(init) = first.initial.or(first.exchange) else {
            return Err(format!("step `{}` sent nothing", p.follow));
        };
        let mut watch = Vec::new();
        for w in &p.watch {
            watch.push(self.absolute(&self.render(w)?));
        }
        let deadline = p.deadline.unwrap_or(self.ctx.target.deadline);
        let out = match (first.follow, self.mon) {
            (Follow::Monitor, Some(mon)) => self.follow_monitor(init, mon, deadline).await,
            _ => {
                let spec = FollowSpec {
                    method: &first.method,
                    resource: crate::lro::resource_of(&first.method, &first.url),
                    declared: self.declared_op(&first.method, &first.url),
                    deadline,
                    watch,
                };
                self.follow(init, spec).await
            }
        };
        out.or_unread()?;
        Ok(StepOut {
            exchange: out.exchange,
            initial: Some(init),
            outcome: Some(out.outcome),
            url: first.url,
            method: first.method,
            ..Default::default()
        })
    }

    /// Follow the ARM operation started by exchange `init` to its end.
    pub(super) async fn follow(&mut self, init: usize, spec: FollowSpec<'_>) -> Followed {
        let start = Instant::now();
        let Some(resp) = self.exchanges[init].response.clone() else {
            return Followed {
                outcome: "error: no response to follow".into(),
                exchange: Some(init),
                unread: None,
            };
        };
        let req_url = self.exchanges[init].url.clone();
        let surface = self.exchanges[init].surface;
        let method = spec.method.to_string();
        let mut strategy = Strategy::arm(&method, &req_url, &resp);
        let initial_state = strategy.initial(&resp);
        let mut flow = Flow {
            surface,
            method: method.clone(),
            request_url: req_url.clone(),
            resource: spec.resource.clone(),
            initial: init,
            initial_state: initial_state.clone(),
            channel: strategy.channel(),
            declared: spec.declared.map(|d| d.pattern),
            final_state_via: spec.declared.and_then(|d| d.final_state_via),
            events: Vec::new(),
            end: End::Unseen,
            deadline_secs: spec.deadline.as_secs(),
            elapsed_ms: 0,
            result: Some(init),
        };
        let mut jar = Jar::default();
        jar.take(Some(&resp));
        let mut unread = None;
        if let Strategy::Unusable { why } = &strategy
            && (200..300).contains(&resp.status)
        {
            flow.channel = None;
            flow.end = End::Unfollowable(why.clone());
        } else if resp.status == 202 && strategy == Strategy::Done {
            flow.channel = None;
            flow.end = End::Unfollowable(
                "a 202 with neither Location nor Azure-AsyncOperation: nothing to poll".into(),
            );
        } else if let State::Done(o, _) = &initial_state {
            flow.channel = None;
            flow.end = End::Finished(*o);
        } else if let Some(why) = strategy.url().and_then(|u| self.ctx.http.refusal(u)) {
            self.notes.push(format!(
                "step `{}`: cannot poll {}: {why}",
                self.step_label,
                strategy.url().unwrap_or("")
            ));
            flow.end = End::Unfollowable(why);
        } else {
            unread = self
                .poll_loop(
                    &mut flow,
                    &mut strategy,
                    &mut jar,
                    &spec,
                    &ARM_PACE,
                    &resp,
                    start,
                )
                .await;
        }
        if let End::Finished(o) = flow.end {
            self.after_end(&mut flow, &strategy, &mut jar, o, start, spec.deadline)
                .await;
        }
        flow.elapsed_ms = start.elapsed().as_millis() as u64;
        self.judge.flow(&flow, &self.exchanges);
        for e in &flow.events {
            if let Event::Watch { ex } = e {
                self.shed(*ex);
            }
        }
        let outcome = match &flow.end {
            End::Finished(o) => o.as_str().to_string(),
            End::TimedOut => format!("timed out after {} s", spec.deadline.as_secs()),
            End::Interrupted => "interrupted".into(),
            End::Unfollowable(why) => format!("error: {why}"),
            End::Unseen => "unseen".into(),
        };
        if flow.finished() == Some(crate::lro::Outcome::Succeeded)
            && method == "DELETE"
            && let Some(r) = &spec.resource
        {
            self.ctx.cleanup.maybe_gone(r);
        }
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: flow.channel.map(Channel::name).unwrap_or("none").into(),
            attempts: flow.polls().count() as u32,
            elapsed_ms: flow.elapsed_ms,
            outcome: outcome.clone(),
        });
        // The step shows the settled resource for a PUT/PATCH, else the result.
        let settled = flow.after(AfterRead::Resource).last();
        let exchange = match method.as_str() {
            "PUT" | "PATCH" => settled.or(flow.result),
            _ => flow.result,
        }
        .or_else(|| flow.polls().last().map(|(i, _)| i))
        .or(Some(init));
        Followed {
            outcome,
            exchange,
            unread,
        }
    }

    /// Poll the strategy's channel until the operation ends, the deadline passes or the run
    /// is cancelled, recording every read in the flow. `Some(why)` when following gave up
    /// because none of the last reads could be read at all (see [`Followed::unread`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn poll_loop(
        &mut self,
        flow: &mut Flow,
        strategy: &mut Strategy,
        jar: &mut Jar,
        spec: &FollowSpec<'_>,
        pace: &Pace<'_>,
        initial: &crate::http::Response,
        start: Instant,
    ) -> Option<String> {
        let side = match strategy {
            _ if !pace.side_reads => None,
            // A Location that is the operation resource's own URL is one channel, not two:
            // reading it again would only poll the status twice (and move a stateful server
            // on twice per round). One that differs only by its query (`?monitor=true`) is
            // another endpoint, read as the Location it is.
            Strategy::Operation {
                location: Some(l),
                url,
                ..
            } if crate::lro::path_key(l) != crate::lro::path_key(&flow.request_url)
                && !crate::lro::same_endpoint(l, url)
                && initial
                    .header("location")
                    .is_some_and(crate::lro::is_absolute_uri)
                && self.ctx.http.refusal(l).is_none() =>
            {
                Some(l.clone())
            }
            _ => None,
        };
        let mut wait = retry_after(initial);
        let mut unreadable = 0;
        // Of those, the reads that brought no answer at all (cut off, reset, unanswered).
        let mut unanswered = 0;
        let mut last_poll: Option<usize> = None;
        loop {
            let remaining = spec.deadline.saturating_sub(start.elapsed());
            if remaining.is_zero() {
                flow.end = End::TimedOut;
                return None;
            }
            // No Retry-After: the default wait; 0 or absurd values still get a floor.
            let asked = wait
                .unwrap_or(pace.default_wait)
                .max(Duration::from_secs(1));
            let scaled = asked
                .mul_f64(self.ctx.time_scale)
                .min(Duration::from_secs(86_400));
            if !self.ctx.wait(scaled.min(remaining)).await {
                flow.end = End::Interrupted;
                return None;
            }
            let url = strategy.url().map(str::to_string)?;
            // A monitor may ask that a link handed out without api-version be read with one.
            let url = match pace.monitor {
                Some(mon) => mon.poll_url(&url),
                None => url,
            };
            let channel = strategy.channel().unwrap_or(Channel::Resource);
            let Some(i) = self
                .flow_read(&url, role_of(Some(channel)), flow.surface, jar)
                .await
            else {
                flow.end = End::Unfollowable(format!("cannot read {url}"));
                return None;
            };
            if let Some(prev) = last_poll.replace(i) {
                self.shed(prev);
            }
            if let Some(mon) = pace.monitor {
                self.judge.monitor_read(mon, &self.exchanges[i]);
            }
            let r = self.exchanges[i].response.as_ref();
            jar.take(r);
            // An answer without Retry-After keeps the interval last given (the initial 202 or
            // 201 usually names it; operation-resource reads often do not repeat it).
            if let Some(ra) = r.and_then(retry_after) {
                wait = Some(ra);
            }
            let state = strategy.read(r);
            flow.events.push(Event::Poll {
                ex: i,
                channel,
                state: state.clone(),
            });
            match state {
                State::Done(o, _) => {
                    flow.end = End::Finished(o);
                    return None;
                }
                State::Unreadable(why) => {
                    unreadable += 1;
                    if r.is_none() {
                        unanswered += 1;
                    }
                    if unreadable >= UNREADABLE_LIMIT {
                        let foreign = crate::http::parse_url(&url)
                            .is_ok_and(|u| !self.ctx.target.same_origin(&u));
                        flow.end = End::Unfollowable(format!(
                            "{unreadable} reads in a row said nothing usable about the operation (last: {why}){}",
                            if foreign {
                                "; its URL is on another origin than the target, so it was read without credentials"
                            } else {
                                ""
                            }
                        ));
                        return (unanswered == unreadable).then(|| {
                            let last = &self.exchanges[i];
                            format!(
                                "the operation was never seen to end: not one of its last {unreadable} reads could be read, each cut off or unanswered (the last, exchange #{}: {})",
                                last.seq,
                                last.error.as_deref().unwrap_or("no answer")
                            )
                        });
                    }
                }
                State::Running(_) => {
                    unreadable = 0;
                    unanswered = 0;
                    for w in &spec.watch {
                        if let Ok(x) = self.get(w, Role::ResourcePoll).await {
                            flow.events.push(Event::Watch { ex: x });
                        }
                    }
                    if let Some(l) = &side
                        && let Some(x) = self
                            .flow_read(l, Role::LocationPoll, flow.surface, jar)
                            .await
                    {
                        let mut probe = Strategy::Location { url: l.clone() };
                        let state = probe.read(self.exchanges[x].response.as_ref());
                        flow.events.push(Event::Side {
                            ex: x,
                            channel: Channel::Location,
                            state,
                        });
                        self.shed(x);
                    }
                }
            }
        }
    }

    /// Reads once the operation ended: the status again, Location until it stops answering
    /// 202, the resource's settled state, and the result where the SDK reads it.
    async fn after_end(
        &mut self,
        flow: &mut Flow,
        strategy: &Strategy,
        jar: &mut Jar,
        outcome: crate::lro::Outcome,
        start: Instant,
        deadline: Duration,
    ) {
        let surface = flow.surface;
        let last = flow.polls().last().map(|(i, _)| i);
        if let Some(i) = last {
            flow.result = Some(i);
        }
        if let Strategy::Operation { url, location, .. } = strategy {
            // Read the status again (a terminal status stays terminal), unless the server
            // ended the flow's cookie session: the answer would be a new client's.
            if !jar.cleared
                && let Some(x) = self
                    .flow_read(url, Role::OperationStatus, surface, jar)
                    .await
            {
                flow.events.push(Event::After {
                    ex: x,
                    what: AfterRead::Status,
                });
            }
            // A Location that is not an absolute URI is reported (LOC-02), not followed.
            let absolute = self.exchanges[flow.initial]
                .response
                .as_ref()
                .and_then(|r| r.header("location"))
                .is_some_and(crate::lro::is_absolute_uri);
            if let Some(l) = location
                .as_ref()
                .filter(|_| absolute)
                .filter(|l| crate::lro::path_key(l) != crate::lro::path_key(&flow.request_url))
                .filter(|l| !crate::lro::same_endpoint(l, url))
                .filter(|l| self.ctx.http.refusal(l).is_none())
            {
                for n in 0..LOCATION_REREADS {
                    let Some(x) = self.flow_read(l, Role::LocationPoll, surface, jar).await else {
                        break;
                    };
                    flow.events.push(Event::After {
                        ex: x,
                        what: AfterRead::Location,
                    });
                    jar.take(self.exchanges[x].response.as_ref());
                    // Still running, or an answer ARM clients retry.
                    let still = matches!(
                        self.exchanges[x].status(),
                        Some(202 | 408 | 429 | 500..=599)
                    );
                    if !still || n + 1 == LOCATION_REREADS || start.elapsed() >= deadline {
                        break;
                    }
                    let ra = self.exchanges[x].response.as_ref().and_then(retry_after);
                    let wait = ra
                        .unwrap_or(Duration::from_secs(10))
                        .max(Duration::from_secs(1));
                    let left = deadline.saturating_sub(start.elapsed());
                    if !self
                        .ctx
                        .wait(wait.mul_f64(self.ctx.time_scale).min(left))
                        .await
                    {
                        break;
                    }
                }
            }
        }
        let method = flow.method.clone();
        let final_at = final_url(
            strategy,
            &method,
            &flow.request_url,
            flow.final_state_via,
            last.and_then(|i| self.exchanges[i].response.as_ref()),
        );
        let resource = flow.resource.clone();
        // A Location whose final answer is the resource already gave the result: the SDK
        // reads nothing more (and a server may have no GET at that URL).
        let location_gave_resource = matches!(strategy, Strategy::Location { .. })
            && last
                .and_then(|i| self.exchanges[i].response.as_ref())
                .is_some_and(|r| {
                    matches!(r.status, 200 | 201) && r.json.as_ref().is_some_and(|j| j.is_object())
                });
        // A canceled operation was superseded (a DELETE, say), and a write the target took
        // after this one started another operation: the resource's state belongs to the
        // operation now running, not to this one.
        let superseded = outcome == crate::lro::Outcome::Canceled
            || resource
                .as_deref()
                .is_some_and(|r| self.write_taken_since(flow.initial, r));
        if matches!(method.as_str(), "PUT" | "PATCH")
            && !superseded
            && !location_gave_resource
            && let Some(r) = &resource
            && !matches!(strategy, Strategy::Body { .. })
            && let Ok(x) = self.get(r, Role::ResourcePoll).await
        {
            flow.events.push(Event::After {
                ex: x,
                what: AfterRead::Resource,
            });
            if final_at
                .as_deref()
                .is_some_and(|f| crate::lro::path_key(f) == crate::lro::path_key(r))
            {
                flow.result = Some(x);
                return;
            }
        }
        if let Some(f) = final_at
            && outcome == crate::lro::Outcome::Succeeded
            && self.ctx.http.refusal(&f).is_none()
            && let Some(x) = self.flow_read(&f, Role::Step, surface, jar).await
        {
            flow.events.push(Event::After {
                ex: x,
                what: AfterRead::Final,
            });
            flow.result = Some(x);
        }
    }
}
