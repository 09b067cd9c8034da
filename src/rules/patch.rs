//! PATCH: update. PATCH-01 is ambient on the answer's status (200 or 202; a PATCH never
//! answers 201 or 204) and stated by the suites too; PATCH-02 is judged on each followed PATCH;
//! PATCH-03 is stated by the suites. A PATCH that completes synchronously is legal whatever
//! the type declares.

use super::Judge;
use super::flow::{End, Flow, judge_during};
use crate::http::Exchange;
use crate::lro::{Channel, resource_state};
use crate::target::Addressed;

/// What the engine judges of PATCH by itself, and on which exchanges (the selection reads
/// it): PATCH-01 on a PATCH's answer, PATCH-02 on a followed PATCH.
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Follow(Some("PATCH")),
    &[("PATCH-01", super::Shows::Write(Some("PATCH")))],
);

/// PATCH-01 on any successful PATCH of a declared resource: 200 with the resource, or 202. A
/// 201 (PATCH never creates) or a 204 (no representation) is what no client expects.
pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(status) = ex.status() else { return };
    if ex.method != "PATCH"
        || !(200..300).contains(&status)
        || !matches!(j.target.address(&ex.url), Addressed::Resource(_))
    {
        return;
    }
    // PATCH-01 speaks of an existing resource; a PATCH that created one earlier answers showed
    // missing is ETAG-10's failure ("PATCH never creates"), not this one's.
    if matches!(
        j.history.shown.of(&ex.url),
        Some((super::shown::Known::Absent, _))
    ) {
        return;
    }
    j.ledger.check(
        "PATCH-01",
        matches!(status, 200 | 202),
        Some(ex.seq),
        || {
            (
                "200 OK with the resource, or 202 Accepted, for a PATCH".into(),
                match status {
                    201 => "201 Created: a PATCH never creates a resource".to_string(),
                    s => s.to_string(),
                },
            )
        },
    );
}

pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.method != "PATCH" {
        return;
    }
    // PATCH-02 speaks of a PATCH answered 200 while its update still runs: one answered 202
    // (the LOC rules follow it), or one that completed in its answer, never offers it.
    match exs[flow.initial].status() {
        Some(200 | 201) => {}
        Some(202) => {
            j.ledger.not_applicable(
                "PATCH-02",
                "the PATCH was answered 202: PATCH-02 speaks of a PATCH answered 200 while its update runs (a 202 is followed under the LOC rules)",
            );
            return;
        }
        _ => return,
    }
    if flow.channel.is_none() {
        j.ledger.not_applicable(
            "PATCH-02",
            "the PATCH completed synchronously: its 200 named no operation and showed no running provisioningState (legal)",
        );
        return;
    }
    super::put::initial_state(j, flow, exs, "PATCH-02");
    judge_during(
        j,
        flow,
        exs,
        "PATCH-02",
        "200 with a non-terminal provisioningState while the update runs",
        |x| {
            x.response
                .as_ref()
                .is_some_and(|r| r.status == 200 && resource_state(r.json.as_ref()).is_running())
        },
    );
    match (&flow.end, flow.channel) {
        (End::TimedOut, Some(Channel::Resource)) => {
            let last = flow.polls().last();
            j.ledger.fail(
                "PATCH-02",
                format!(
                    "provisioningState to become terminal within the deadline ({} s)",
                    flow.deadline_secs
                ),
                format!(
                    "still {} after {} ms",
                    last.map(|(_, s)| s.to_string()).unwrap_or("unread".into()),
                    flow.elapsed_ms
                ),
                last.map(|(i, _)| exs[i].seq),
                None,
            );
        }
        (End::Finished(_), Some(Channel::Resource)) if flow.seen_running() => {
            j.ledger.pass("PATCH-02")
        }
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::http::Exchange;
    use crate::http::Role;
    use crate::lro::{Channel, Outcome as Op};
    use crate::rules::Outcome;
    use crate::rules::flow::End;
    use crate::rules::testing::{
        Case, OP_RESULT, WIDGET, ambient, exchange, failing, flow, flow_outcome, passing, poll,
        run_cases, why_not, widget, with_role,
    };
    use serde_json::json;

    /// A PATCH answered 200 Updating, followed through the resource to `end`.
    fn patched(end: End) -> Outcome {
        let patch = exchange("PATCH", WIDGET, 200, &[], widget("Updating"));
        let running = with_role(
            exchange("GET", WIDGET, 200, &[], widget("Updating")),
            Role::ResourcePoll,
        );
        let last = match end {
            End::Finished(_) => widget("Succeeded"),
            _ => widget("Updating"),
        };
        let last = with_role(exchange("GET", WIDGET, 200, &[], last), Role::ResourcePoll);
        let done = matches!(end, End::Finished(_));
        flow_outcome("PATCH-02", vec![patch, running, last], |exs| {
            flow(
                exs,
                Some(Channel::Resource),
                vec![
                    poll(1, Channel::Resource, true),
                    poll(2, Channel::Resource, !done),
                ],
                end,
            )
        })
    }

    /// PATCH-01 (ambient on the status; also stated), PATCH-02 (03 is stated by the suites),
    /// failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("PATCH-01", "a PATCH answered 201", || {
            ambient(
                "PATCH-01",
                &[exchange("PATCH", WIDGET, 201, &[], widget("Succeeded"))],
            )
            .0
        }),
        passing("PATCH-01", "a PATCH answered 200 with the resource", || {
            ambient(
                "PATCH-01",
                &[exchange("PATCH", WIDGET, 200, &[], widget("Succeeded"))],
            )
            .0
        }),
        failing(
            "PATCH-02",
            "provisioningState not terminal by the deadline",
            || patched(End::TimedOut),
        ),
        passing(
            "PATCH-02",
            "provisioningState Updating, then terminal",
            || patched(End::Finished(Op::Succeeded)),
        ),
    ];

    #[test]
    fn patch_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn a_patch_that_never_runs_after_its_answer_is_not_applicable() {
        // Completed in its 200: nothing to follow.
        let patch = exchange("PATCH", WIDGET, 200, &[], widget("Succeeded"));
        let sync = |exs: &[Exchange]| flow(exs, None, Vec::new(), End::Finished(Op::Succeeded));
        let got = flow_outcome("PATCH-02", vec![patch.clone()], sync);
        assert_eq!(got, Outcome::NotJudged);
        let why = why_not("PATCH-02", vec![patch], Some(&sync)).unwrap();
        assert!(
            why.starts_with("not applicable: the PATCH completed synchronously"),
            "{why}"
        );
        // Answered 202: the LOC rules follow it.
        let accepted = exchange(
            "PATCH",
            WIDGET,
            202,
            &[("Location", OP_RESULT), ("Retry-After", "10")],
            json!(null),
        );
        let done = with_role(
            exchange("GET", OP_RESULT, 200, &[], widget("Succeeded")),
            Role::LocationPoll,
        );
        let by_location = |exs: &[Exchange]| {
            flow(
                exs,
                Some(Channel::Location),
                vec![poll(1, Channel::Location, false)],
                End::Finished(Op::Succeeded),
            )
        };
        let why = why_not("PATCH-02", vec![accepted, done], Some(&by_location)).unwrap();
        assert!(
            why.starts_with("not applicable: the PATCH was answered 202"),
            "{why}"
        );
        // Answered 200 while its update runs, followed through the resource: judged (CASES).
        assert_eq!(patched(End::Finished(Op::Succeeded)), Outcome::Passed);
        assert_eq!(patched(End::TimedOut), Outcome::Failed);
    }
}
