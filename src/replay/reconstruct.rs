//! From a [`FlowSketch`] (which exchanges of a recording belong to one operation) to the
//! [`Flow`] the rule engine judges, read the way the live follower (`runner::follow`) records
//! it, so the same flow rules judge recorded and proxied traffic the same way.
//!
//! The initial answer gives the [`Strategy`] an Azure SDK client would follow and what that
//! answer shows ([`Flow::initial_state`]). The flow's reads are then taken in wire order:
//! - before the end, a read of the driving channel is a [`Event::Poll`] with the state the
//!   strategy reads from it (a Location strategy moves on to each new Location); a read of
//!   the initial Location while Azure-AsyncOperation drives is a [`Event::Side`] read; a read
//!   of the resource while a link drives is a [`Event::Watch`];
//! - once a poll shows a terminal state, reads of the operation URL are
//!   [`AfterRead::Status`], of Location [`AfterRead::Location`], of the resource
//!   [`AfterRead::Resource`].
//!
//! The flow ends [`End::Finished`] when a poll shows the end, [`End::Unfollowable`] when five
//! polls in a row said nothing readable (as the follower gives up) or the initial answer was a
//! 202 with nothing to poll, and [`End::Unseen`] when the recording stops before the end (a
//! recording has no deadline, so never [`End::TimedOut`]). The time between the initial
//! exchange and the last read is `elapsed_ms` when the recording has times.

use crate::http::Exchange;
use crate::lro::{Channel, State, Strategy, Vocabulary};
use crate::rules::flow::{AfterRead, End, Event, Flow};
use crate::target::{Addressed, OpDecl, Target};

use super::{FlowSketch, PollChannel};

/// Polls in a row that say nothing readable before the follower gives up.
const UNREADABLE_LIMIT: u32 = 5;

fn channel_of(p: PollChannel) -> Channel {
    match p {
        PollChannel::AzureAsyncOperation => Channel::AzureAsyncOperation,
        PollChannel::Location => Channel::Location,
        PollChannel::OperationLocation => Channel::OperationLocation,
        PollChannel::Resource => Channel::Resource,
    }
}

/// What the target declares for this operation (a write of a type, or an action).
fn declared_op(target: &Target, method: &str, url: &str) -> Option<OpDecl> {
    match target.address(url) {
        Addressed::Resource(t) => t.lro.for_method(method),
        Addressed::Sub(t, action) if method == "POST" => t
            .actions
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(&action))
            .map(|a| a.lro),
        _ => None,
    }
}

/// Milliseconds between two RFC 3339 times, when both parse.
fn between(a: &str, b: &str) -> Option<u64> {
    let a = chrono::DateTime::parse_from_rfc3339(a).ok()?;
    let b = chrono::DateTime::parse_from_rfc3339(b).ok()?;
    u64::try_from((b - a).num_milliseconds()).ok()
}

/// The flow of one sketched operation; indices stay those of `exs`.
pub fn flow_of(sketch: &FlowSketch, exs: &[Exchange], target: &Target) -> Flow {
    let init = &exs[sketch.initial];
    let method = init.method.to_ascii_uppercase();
    let declared = declared_op(target, &method, &init.url);
    let mut flow = Flow {
        surface: init.surface,
        method: method.clone(),
        request_url: init.url.clone(),
        resource: crate::lro::resource_of(&method, &init.url),
        initial: sketch.initial,
        initial_state: State::Running(None),
        channel: None,
        declared: declared.map(|d| d.pattern),
        final_state_via: declared.and_then(|d| d.final_state_via),
        events: Vec::new(),
        end: End::Unseen,
        deadline_secs: target.deadline.as_secs(),
        elapsed_ms: 0,
        result: Some(sketch.initial),
    };
    let Some(resp) = init.response.as_ref() else {
        flow.end = End::Unfollowable("no answer to follow".into());
        return flow;
    };
    let mut strategy = Strategy::arm(&method, &init.url, resp);
    let monitored = sketch
        .polls
        .iter()
        .any(|(_, c)| *c == PollChannel::OperationLocation);
    if monitored && !matches!(strategy, Strategy::Operation { .. }) {
        strategy = Strategy::monitor(
            Channel::OperationLocation,
            &init.url,
            resp,
            Vocabulary::arm(),
        );
    }
    flow.initial_state = strategy.initial(resp);
    flow.channel = strategy.channel();
    if resp.status == 202 && strategy == Strategy::Done {
        flow.channel = None;
        flow.end = End::Unfollowable(
            "a 202 with neither Location nor Azure-AsyncOperation: nothing to poll".into(),
        );
        return flow;
    }
    if let State::Done(o, _) = &flow.initial_state {
        flow.channel = None;
        flow.end = End::Finished(*o);
        return flow;
    }
    let driving = flow.channel.unwrap_or(Channel::Resource);
    let mut reads: Vec<(usize, Option<Channel>)> = sketch
        .polls
        .iter()
        .chain(&sketch.finals)
        .map(|(i, c)| (*i, Some(channel_of(*c))))
        .chain(sketch.watches.iter().map(|i| (*i, None)))
        .collect();
    reads.sort_by_key(|(i, _)| *i);
    let mut unreadable = 0;
    let mut last_poll = None;
    for (i, ch) in reads {
        let r = exs[i].response.as_ref();
        if let End::Finished(_) = flow.end {
            let what = match ch {
                Some(c) if c == driving => AfterRead::Status,
                Some(Channel::Location) => AfterRead::Location,
                Some(Channel::Resource) | None => AfterRead::Resource,
                Some(_) => AfterRead::Status,
            };
            flow.events.push(Event::After { ex: i, what });
            if what == AfterRead::Resource && matches!(method.as_str(), "PUT" | "PATCH") {
                flow.result = Some(i);
            }
            continue;
        }
        match ch {
            Some(c) if c == driving => {
                let state = strategy.read(r);
                flow.events.push(Event::Poll {
                    ex: i,
                    channel: c,
                    state: state.clone(),
                });
                last_poll = Some(i);
                match state {
                    State::Done(o, _) => {
                        flow.end = End::Finished(o);
                        flow.result = Some(i);
                    }
                    State::Unreadable(why) => {
                        unreadable += 1;
                        if unreadable >= UNREADABLE_LIMIT {
                            flow.end = End::Unfollowable(format!(
                                "{unreadable} reads in a row said nothing usable about the operation (last: {why})"
                            ));
                            break;
                        }
                    }
                    State::Running(_) => unreadable = 0,
                }
            }
            Some(Channel::Location) => {
                let mut probe = Strategy::Location {
                    url: exs[i].url.clone(),
                };
                let state = probe.read(r);
                flow.events.push(Event::Side {
                    ex: i,
                    channel: Channel::Location,
                    state,
                });
            }
            Some(Channel::Resource) | None => flow.events.push(Event::Watch { ex: i }),
            Some(c) => flow.events.push(Event::Side {
                ex: i,
                channel: c,
                state: Vocabulary::arm().state_of(r.and_then(|r| r.json.as_ref())),
            }),
        }
    }
    if flow.finished().is_none() {
        flow.result = last_poll.or(Some(sketch.initial));
    }
    let last = flow.events.last().map_or(sketch.initial, Event::ex);
    flow.elapsed_ms = between(&init.started_at, &exs[last].started_at).unwrap_or(0)
        + exs[last].elapsed_ms * u64::from(last != sketch.initial);
    flow
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lro::Outcome;
    use crate::replay::pair_flows;
    use crate::rules::flow::AfterRead;

    fn ex(method: &str, url: &str, status: u16, headers: &[(&str, &str)], body: &str) -> Exchange {
        Exchange {
            seq: 0,
            throttled: Vec::new(),
            throttled_times: 0,
            retried: Vec::new(),
            front_door: None,
            role: crate::http::Role::Step,
            surface: crate::http::Surface::Arm,
            method: method.into(),
            url: url.into(),
            request_headers: Vec::new(),
            request_body: None,
            response: Some(crate::http::Response {
                status,
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                body: body.into(),
                body_bytes: body.len(),
                json: serde_json::from_str(body).ok(),
                json_error: None,
                set_cookies: Vec::new(),
                sent: None,
            }),
            error: None,
            started_at: String::new(),
            elapsed_ms: 0,
            foreign: false,
        }
    }

    fn target() -> Target {
        let yaml = crate::target::embedded_target_yaml("http://h");
        crate::target::parse_target(std::path::Path::new("t.yaml"), &yaml, "t").unwrap()
    }

    const RES: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";

    #[test]
    fn an_operation_resource_flow_reads_like_the_follower_records_it() {
        let running = r#"{"properties": {"provisioningState": "Creating"}}"#;
        let mut exs = vec![
            ex(
                "PATCH",
                RES,
                202,
                &[
                    ("Azure-AsyncOperation", "http://h/op/1"),
                    ("Location", "http://h/res/1"),
                ],
                running,
            ),
            ex("GET", "http://h/op/1", 200, &[], r#"{"status": "Running"}"#),
            ex("GET", "http://h/res/1", 202, &[], ""),
            ex("GET", RES, 200, &[], running),
            ex(
                "GET",
                "http://h/op/1",
                200,
                &[],
                r#"{"status": "Succeeded"}"#,
            ),
            ex(
                "GET",
                "http://h/op/1",
                200,
                &[],
                r#"{"status": "Succeeded"}"#,
            ),
            ex("GET", "http://h/res/1", 200, &[], "{}"),
            ex(
                "GET",
                RES,
                200,
                &[],
                r#"{"properties": {"provisioningState": "Succeeded"}}"#,
            ),
        ];
        let sketches = pair_flows(&mut exs);
        assert_eq!(sketches.len(), 1);
        let f = flow_of(&sketches[0], &exs, &target());
        assert_eq!(f.channel, Some(Channel::AzureAsyncOperation));
        assert!(f.initial_state.is_running());
        assert_eq!(f.end, End::Finished(Outcome::Succeeded));
        let kinds: Vec<String> = f
            .events
            .iter()
            .map(|e| match e {
                Event::Poll { ex, .. } => format!("poll{ex}"),
                Event::Side { ex, .. } => format!("side{ex}"),
                Event::Watch { ex } => format!("watch{ex}"),
                Event::After { ex, what } => format!("{what:?}{ex}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "poll1",
                "side2",
                "watch3",
                "poll4",
                "Status5",
                "Location6",
                "Resource7"
            ]
        );
        assert_eq!(f.after(AfterRead::Resource).last(), Some(7));
        assert_eq!(f.resource.as_deref(), Some(RES.split('?').next().unwrap()));
        // A PUT answered 201: its Location names the resource, never read as the operation's.
        exs[0].method = "PUT".into();
        exs[0].response.as_mut().unwrap().status = 201;
        for x in &mut exs {
            x.role = crate::http::Role::Step;
        }
        let sketches = pair_flows(&mut exs);
        let f = flow_of(&sketches[0], &exs, &target());
        assert!(
            f.events
                .iter()
                .all(|e| !matches!(e, Event::Side { .. }) && e.ex() != 2 && e.ex() != 6),
            "{:?}",
            f.events
        );
    }

    #[test]
    fn a_recording_that_stops_early_is_unseen_and_a_bare_202_unfollowable() {
        let mut exs = vec![
            ex("DELETE", RES, 202, &[("Location", "http://h/op/2")], ""),
            ex("GET", "http://h/op/2", 202, &[], ""),
        ];
        let s = pair_flows(&mut exs);
        let f = flow_of(&s[0], &exs, &target());
        assert_eq!(f.end, End::Unseen);
        assert_eq!(f.polls().count(), 1);
        let mut bare = vec![ex("POST", &format!("{RES}/x"), 202, &[], "")];
        let sketch = FlowSketch {
            initial: 0,
            method: "POST".into(),
            resource_url: None,
            polls: Vec::new(),
            finals: Vec::new(),
            watches: Vec::new(),
            terminal: None,
        };
        pair_flows(&mut bare);
        assert!(matches!(
            flow_of(&sketch, &bare, &target()).end,
            End::Unfollowable(_)
        ));
    }
}
