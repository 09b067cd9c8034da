//! PUT: create and replace with asynchronous provisioning through provisioningState. PUT-01 is
//! ambient when earlier exchanges showed whether the resource exists (`shown`), and stated by
//! the suites too; PUT-02, PUT-03 and PUT-04 are judged on each followed PUT; PUT-05 is stated
//! by the suites.

use super::Judge;
use super::flow::{AfterRead, End, Flow, judge_during};
use super::shown::Known;
use crate::http::Exchange;
use crate::lro::{Channel, Outcome, provisioning_state, resource_state};

/// What the engine judges of PUT by itself, and on which exchanges (the selection reads it):
/// PUT-01 on a PUT's answer, PUT-02..04 on a followed PUT.
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Follow(Some("PUT")),
    &[("PUT-01", super::Shows::Write(Some("PUT")))],
);

/// PUT-01: a successful PUT of a name earlier exchanges showed missing answers 201 (or 202, which
/// LOC-07 then governs); of one shown existing and settled, 200. Refused PUTs (4xx/5xx) and
/// resources in an unknown or unsettled state get no verdict.
pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(status) = ex.status() else { return };
    if ex.method != "PUT" || !(200..300).contains(&status) {
        return;
    }
    let (ok, expected) = match j.history.shown.of(&ex.url) {
        Some((Known::Absent, at)) => (
            matches!(status, 201 | 202),
            format!(
                "201 Created (or 202) for a PUT creating a resource exchange #{at} showed missing"
            ),
        ),
        Some((Known::Exists { settled: true }, at)) => (
            status == 200,
            format!(
                "200 OK for a PUT replacing a resource exchange #{at} showed existing and settled"
            ),
        ),
        _ => return,
    };
    j.ledger.check("PUT-01", ok, Some(ex.seq), || {
        let seen = match status {
            200 => "200 OK (Azure SDKs accept it, and 45 of 169 real creates answered 200, but the ETag table requires 201 for a create)".to_string(),
            201 => "201 Created for a resource that already existed".to_string(),
            202 => "202 Accepted for a replace of a settled resource".to_string(),
            s => s.to_string(),
        };
        (expected, seen)
    });
}

/// The initial 200/201 body of a write that was shown still running: its provisioningState
/// must say so. A write that finished before it answered may say anything terminal.
pub(super) fn initial_state(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange], rule: &'static str) {
    let init = &exs[flow.initial];
    let Some(r) = init
        .response
        .as_ref()
        .filter(|r| matches!(r.status, 200 | 201))
    else {
        return;
    };
    let ps = provisioning_state(r.json.as_ref());
    if ps.is_some_and(|s| Outcome::of_arm(s).is_none()) {
        j.ledger.pass(rule);
    } else if flow.seen_running() {
        let shown_by = flow
            .polls()
            .find(|(_, s)| s.is_running())
            .map(|(i, _)| exs[i].seq);
        j.ledger.fail(
            rule,
            "a non-terminal properties.provisioningState in the initial answer of an operation that was still running",
            format!(
                "{} with provisioningState {}, while exchange #{} showed the operation still running",
                r.status,
                ps.map(|s| s.to_string()).unwrap_or("absent (reads as Succeeded)".into()),
                shown_by.unwrap_or(0)
            ),
            Some(init.seq),
            None,
        );
    } else if let Some(why) = super::flow::never_running(flow, exs) {
        // It said it had ended, and no read after it said otherwise: finished before
        // answering (legal), so no answer was sent while it ran.
        j.ledger.not_applicable(
            rule,
            format!(
                "its answer said provisioningState {} and {why}",
                ps.unwrap_or("absent")
            ),
        );
    } else if flow.channel.is_some() {
        j.ledger.not_judged(
            rule,
            "no read after the answer showed the operation running, and it was not seen to end: it may have finished before answering, which is legal",
        );
    }
}

pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.method != "PUT" {
        return;
    }
    initial_state(j, flow, exs, "PUT-02");
    // PUT-03 speaks of a PUT answered 200/201; a create answered 202 stays invisible (LOC-07).
    let answered = exs[flow.initial].status();
    if answered == Some(202) {
        j.ledger.not_applicable(
            "PUT-03",
            "the PUT was answered 202: PUT-03 speaks of a PUT answered 200/201 while provisioning runs (a create answered 202 stays invisible, LOC-07)",
        );
    } else {
        let (during, unsure) = super::flow::resource_watches(flow, exs);
        if during.is_empty()
            && unsure.is_empty()
            && flow.seen_running()
            && flow.channel != Some(Channel::Resource)
        {
            // Offered (a read showed it running) but not looked at (the resource's own polls,
            // when they drive, are read below).
            j.ledger.not_judged(
                "PUT-03",
                "the PUT's operation was shown running, but no read of the resource was made while it ran",
            );
        }
        judge_during(
            j,
            flow,
            exs,
            "PUT-03",
            "200 with a non-terminal provisioningState while provisioning runs",
            |x| {
                x.response.as_ref().is_some_and(|r| {
                    r.status == 200 && resource_state(r.json.as_ref()).is_running()
                })
            },
        );
        // Reading the resource itself to follow its provisioning: a read after an answer that
        // showed it running must be 200 with the resource (never 404, never an error).
        if flow.channel == Some(Channel::Resource) {
            let mut running = flow.initial_state.is_running();
            for (i, state) in flow.polls() {
                let x = &exs[i];
                if running && !matches!(x.status(), Some(200..=299)) {
                    j.ledger.fail(
                        "PUT-03",
                        "200 with a non-terminal provisioningState while provisioning runs",
                        format!(
                            "{} {}",
                            x.status()
                                .map(|s| s.to_string())
                                .unwrap_or("no answer".into()),
                            x.response
                                .as_ref()
                                .map(|r| crate::http::cut(&r.body, 120))
                                .unwrap_or_default()
                        ),
                        Some(x.seq),
                        None,
                    );
                }
                running = state.is_running() || matches!(state, crate::lro::State::Unreadable(_));
            }
        }
    }
    match (&flow.end, flow.channel) {
        (End::TimedOut, Some(Channel::Resource)) => {
            let last = flow.polls().last();
            j.ledger.fail(
                "PUT-04",
                format!(
                    "provisioningState to become terminal within the deadline ({} s)",
                    flow.deadline_secs
                ),
                format!(
                    "still {} after {} reads over {} ms",
                    last.map(|(_, s)| s.to_string()).unwrap_or("unread".into()),
                    flow.polls().count(),
                    flow.elapsed_ms
                ),
                last.map(|(i, _)| exs[i].seq),
                None,
            );
        }
        (End::Finished(_), Some(Channel::Resource)) => j.ledger.pass("PUT-04"),
        (End::Finished(_), _) => {
            if let Some(i) = flow.after(AfterRead::Resource).last()
                && let Some(r) = exs[i].response.as_ref().filter(|r| r.status == 200)
                && !resource_state(r.json.as_ref()).is_running()
            {
                j.ledger.pass("PUT-04");
            }
        }
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::http::{Exchange, Role};
    use crate::lro::{Channel, Outcome as Op};
    use crate::rules::Outcome;
    use crate::rules::flow::{AfterRead, End, Event};
    use crate::rules::testing::{
        Case, OP_RESULT, OP_STATUS, WIDGET, ambient, exchange, failing, flow, flow_outcome,
        numbered, op_read, op_status, passing, poll, run_cases, why_not, widget, with_role,
    };
    use serde_json::{Value, json};

    fn read(status: u16, state: &str) -> Exchange {
        let body = if status == 200 {
            widget(state)
        } else {
            json!({"error": {"code": "ResourceNotFound", "message": "no such widget"}})
        };
        exchange("GET", WIDGET, status, &[], body)
    }

    /// A read showing the widget (`read_status`), then a PUT answered `status`.
    fn put_after(read_status: u16, status: u16, headers: &[(&str, &str)]) -> Outcome {
        let put = exchange("PUT", WIDGET, status, headers, widget("Succeeded"));
        ambient(
            "PUT-01",
            &numbered(vec![read(read_status, "Succeeded"), put]),
        )
        .0
    }

    /// A PUT answered 201 in `initial_state`, followed through its operation resource, the
    /// resource read (`watched`) between two polls that showed it running.
    fn followed(rule: &str, initial_state: &str, watched: Exchange) -> Outcome {
        let put = exchange(
            "PUT",
            WIDGET,
            201,
            &[("Azure-AsyncOperation", OP_STATUS)],
            widget(initial_state),
        );
        let running = op_read(op_status("InProgress"));
        let after = read(200, "Succeeded");
        flow_outcome(
            rule,
            vec![
                put,
                running.clone(),
                watched,
                running,
                op_read(op_status("Succeeded")),
                after,
            ],
            |exs| {
                flow(
                    exs,
                    Some(Channel::AzureAsyncOperation),
                    vec![
                        poll(1, Channel::AzureAsyncOperation, true),
                        Event::Watch { ex: 2 },
                        poll(3, Channel::AzureAsyncOperation, true),
                        poll(4, Channel::AzureAsyncOperation, false),
                        Event::After {
                            ex: 5,
                            what: AfterRead::Resource,
                        },
                    ],
                    End::Finished(Op::Succeeded),
                )
            },
        )
    }

    /// A PUT answered 201 Creating, followed through the resource itself: `reads` are its polls.
    fn by_resource(rule: &str, reads: Vec<(Exchange, bool)>, end: End) -> Outcome {
        let put = exchange("PUT", WIDGET, 201, &[], widget("Creating"));
        let events: Vec<Event> = reads
            .iter()
            .enumerate()
            .map(|(i, (_, running))| poll(i + 1, Channel::Resource, *running))
            .collect();
        let mut exs = vec![put];
        exs.extend(
            reads
                .into_iter()
                .map(|(x, _)| with_role(x, Role::ResourcePoll)),
        );
        flow_outcome(rule, exs, |exs| {
            flow(exs, Some(Channel::Resource), events, end)
        })
    }

    /// PUT-01..04, each shown failing and passing (PUT-05 is stated by the suites).
    pub(crate) const CASES: &[Case] = &[
        failing("PUT-01", "200 for a create of a name shown missing", || {
            put_after(404, 200, &[])
        }),
        failing("PUT-01", "201 for a replace of a settled resource", || {
            put_after(200, 201, &[])
        }),
        passing("PUT-01", "201 for a create", || put_after(404, 201, &[])),
        passing("PUT-01", "202 for a create (LOC-07 governs it)", || {
            put_after(404, 202, &[("Location", OP_RESULT), ("Retry-After", "10")])
        }),
        passing("PUT-01", "200 for a replace", || put_after(200, 200, &[])),
        failing(
            "PUT-02",
            "Succeeded in the answer of a PUT still running",
            || followed("PUT-02", "Succeeded", read(200, "Creating")),
        ),
        passing(
            "PUT-02",
            "Creating in the answer of a PUT still running",
            || followed("PUT-02", "Creating", read(200, "Creating")),
        ),
        failing(
            "PUT-03",
            "the resource Succeeded while provisioning ran",
            || followed("PUT-03", "Creating", read(200, "Succeeded")),
        ),
        failing(
            "PUT-03",
            "the resource 404 while its provisioning was polled",
            || {
                by_resource(
                    "PUT-03",
                    vec![(read(404, ""), false)],
                    End::Finished(Op::Succeeded),
                )
            },
        ),
        passing(
            "PUT-03",
            "the resource Creating while provisioning ran",
            || followed("PUT-03", "Creating", read(200, "Creating")),
        ),
        failing(
            "PUT-04",
            "provisioningState not terminal by the deadline",
            || {
                by_resource(
                    "PUT-04",
                    vec![(read(200, "Creating"), true), (read(200, "Creating"), true)],
                    End::TimedOut,
                )
            },
        ),
        passing("PUT-04", "provisioningState terminal", || {
            by_resource(
                "PUT-04",
                vec![
                    (read(200, "Creating"), true),
                    (read(200, "Succeeded"), false),
                ],
                End::Finished(Op::Succeeded),
            )
        }),
        passing(
            "PUT-04",
            "the resource settled after its operation resource ended",
            || followed("PUT-04", "Creating", read(200, "Creating")),
        ),
    ];

    #[test]
    fn put_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn put_03_gives_a_202_create_no_verdict() {
        let put = exchange("PUT", WIDGET, 202, &[("Location", OP_RESULT)], Value::Null);
        let by_location = |exs: &[Exchange]| {
            flow(
                exs,
                Some(Channel::Location),
                Vec::new(),
                End::Finished(Op::Succeeded),
            )
        };
        let got = flow_outcome("PUT-03", vec![put.clone()], by_location);
        assert_eq!(got, Outcome::NotJudged);
        let why = why_not("PUT-03", vec![put], Some(&by_location)).unwrap();
        assert!(
            why.starts_with("not applicable: the PUT was answered 202"),
            "{why}"
        );
    }

    #[test]
    fn an_operation_never_seen_running_is_not_applicable_and_one_seen_and_missed_is_not_judged() {
        // Answered 201 Succeeded with an operation whose first read said Succeeded: finished
        // before answering, so nothing ran for PUT-02 or PUT-03 to see.
        let fast = exchange(
            "PUT",
            WIDGET,
            201,
            &[("Azure-AsyncOperation", OP_STATUS)],
            widget("Succeeded"),
        );
        let ended = |exs: &[Exchange]| {
            flow(
                exs,
                Some(Channel::AzureAsyncOperation),
                vec![poll(1, Channel::AzureAsyncOperation, false)],
                End::Finished(Op::Succeeded),
            )
        };
        let exs = || vec![fast.clone(), op_read(op_status("Succeeded"))];
        for rule in ["PUT-02", "PUT-03"] {
            let why = why_not(rule, exs(), Some(&ended)).unwrap();
            assert!(why.starts_with("not applicable: "), "{rule}: {why}");
            assert!(why.contains("never seen running"), "{rule}: {why}");
        }
        // Shown running by a read, the resource never read while it ran: not judged.
        let put = exchange(
            "PUT",
            WIDGET,
            201,
            &[("Azure-AsyncOperation", OP_STATUS)],
            widget("Creating"),
        );
        let unwatched = |exs: &[Exchange]| {
            flow(
                exs,
                Some(Channel::AzureAsyncOperation),
                vec![
                    poll(1, Channel::AzureAsyncOperation, true),
                    poll(2, Channel::AzureAsyncOperation, false),
                ],
                End::Finished(Op::Succeeded),
            )
        };
        let exs = vec![
            put,
            op_read(op_status("InProgress")),
            op_read(op_status("Succeeded")),
        ];
        let why = why_not("PUT-03", exs, Some(&unwatched)).unwrap();
        assert!(
            why.starts_with("the PUT's operation was shown running"),
            "{why}"
        );
        // A read of the resource placed inside a running operation decides PUT-03 either way
        // (CASES also show PUT-02 failing on a terminal answer a later read contradicts).
        assert_eq!(
            followed("PUT-03", "Creating", read(200, "Creating")),
            Outcome::Passed
        );
        assert_eq!(
            followed("PUT-03", "Creating", read(404, "")),
            Outcome::Failed
        );
    }
}
