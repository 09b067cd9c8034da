//! DEL: the DELETE flow. DEL-02 is ambient; DEL-01 and DEL-05 are ambient when earlier
//! exchanges showed whether the resource exists (`shown`), and stated by the suites too;
//! DEL-03 and DEL-04's Location answer are judged on each followed DELETE; DEL-04's later reads
//! are stated by the suites.

use super::Judge;
use super::flow::{AfterRead, Flow, judge_during};
use super::shown::Known;
use crate::http::{Exchange, cut};
use crate::lro::{Channel, Outcome, resource_state};
use crate::target::Addressed;

/// What the engine judges of DEL by itself, and on which exchanges (the selection reads it):
/// DEL-01/02/05 on a DELETE's answer, DEL-03/04 on a followed DELETE.
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Write(Some("DELETE")),
    &[
        ("DEL-03", super::Shows::Follow(Some("DELETE"))),
        ("DEL-04", super::Shows::Follow(Some("DELETE"))),
    ],
);

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    if ex.method != "DELETE" {
        return;
    }
    against_shown(j, ex, resp.status);
    if resp.status != 202 {
        return;
    }
    let ra = resp.header("retry-after");
    if ra.is_none() && j.response_stripped("retry-after") {
        j.ledger
            .not_judged("DEL-02", "the recording format strips Retry-After");
        return;
    }
    j.ledger.check("DEL-02", ra.is_some(), Some(ex.seq), || {
        (
            "Retry-After on a DELETE answered 202".into(),
            "no Retry-After (clients wait 60 s)".into(),
        )
    });
}

/// DEL-01 / DEL-05: a DELETE of a resource earlier exchanges showed existing (200, or 202 with
/// Location) or missing (204). Refusals (400, 409, 412...) and server errors get no verdict:
/// the contract lets an RP refuse a delete. Under a parent shown missing or being deleted,
/// NEST-04 decides, not DEL-05.
fn against_shown(j: &mut Judge<'_>, ex: &Exchange, status: u16) {
    let Some((known, at)) = j.history.shown.of(&ex.url) else {
        return;
    };
    let seq = Some(ex.seq);
    let loc = ex.response.as_ref().and_then(|r| r.header("location"));
    match known {
        Known::Exists { .. } => {
            let expected = format!(
                "200, or 202 with Location, for a DELETE of a resource exchange #{at} showed existing"
            );
            let seen = match status {
                200 => None,
                202 if loc.is_some() => None,
                202 => Some("202 without a Location header".to_string()),
                204 => Some(
                    "204 No Content, which the DELETE table reserves for a resource that does not exist"
                        .to_string(),
                ),
                404 => Some("404 Not Found".to_string()),
                s if (200..300).contains(&s) => Some(s.to_string()),
                _ => return,
            };
            // Shown existing under another letter case, answered as missing, in a test where
            // OPS-12 failed already: the RP matched the name case-sensitively, not DEL-01.
            let spelled = j.history.shown.spelled(&ex.url).map(str::to_string);
            if matches!(status, 204 | 404)
                && let Some(p) =
                    spelled.filter(|p| crate::lro::url_path(&ex.url).trim_end_matches('/') != p)
                && let Some(c) = j
                    .ledger
                    .first_failure(&[super::expect::CASE_INSENSITIVE_IDS])
            {
                j.ledger.blocked(
                    "DEL-01",
                    &c,
                    &format!(
                        "exchange #{at} showed the resource existing at {p}; this DELETE names it in another letter case and was answered {status} (missing), as an RP that matches names case-sensitively answers"
                    ),
                );
                return;
            }
            match seen {
                None => j.ledger.pass("DEL-01"),
                Some(s) => j.ledger.fail("DEL-01", expected, s, seq, None),
            }
        }
        Known::Absent => {
            if j.history.shown.ancestor_gone(&ex.url) {
                j.ledger.not_judged(
                    "DEL-05",
                    "a parent of the resource was shown missing or being deleted: NEST-04 applies",
                );
                return;
            }
            if !(200..300).contains(&status) && status != 404 {
                return;
            }
            j.ledger.check("DEL-05", status == 204, seq, || {
                (
                    format!(
                        "204 No Content for a DELETE of a resource exchange #{at} showed missing"
                    ),
                    status.to_string(),
                )
            });
        }
    }
}

pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.method != "DELETE" {
        return;
    }
    let ty = match flow.resource.as_deref().map(|r| j.target.address(r)) {
        Some(Addressed::Resource(t)) => Some(t),
        _ => None,
    };
    let uses_state = ty.is_some_and(|t| t.provisioning_state);
    if flow.channel.is_none() && flow.finished().is_some() {
        // DEL-03 speaks of a delete that runs after its answer: one that answered done never
        // offers a running delete to read.
        j.ledger.not_applicable(
            "DEL-03",
            format!(
                "the DELETE completed synchronously (answered {}): DEL-03 speaks of a delete that runs after its answer",
                exs[flow.initial].status().unwrap_or(0)
            ),
        );
    } else if let Some(t) = ty.filter(|_| !uses_state) {
        j.ledger.not_applicable(
            "DEL-03",
            format!(
                "type `{}` declares no provisioningState (`provisioning_state: false`): DEL-03 speaks of resources that use it",
                t.name
            ),
        );
    } else if uses_state {
        judge_during(
            j,
            flow,
            exs,
            "DEL-03",
            "404, or 200 with a non-terminal provisioningState such as Deleting, while the delete runs",
            |x| {
                x.response.as_ref().is_some_and(|r| {
                    r.status == 404
                        || (r.status == 200 && resource_state(r.json.as_ref()).is_running())
                })
            },
        );
    }
    // A Location that ends in 404: a client reads that as the delete failing (the SDK's
    // poller raises on it), whatever became of the resource; once a delete succeeds its
    // Location answers 200 or 204, and a failed one answers its error.
    if flow.finished() == Some(Outcome::Failed)
        && flow.channel == Some(Channel::Location)
        && let Some((i, _)) = flow.polls().last()
        && exs[i].status() == Some(404)
        && flow
            .resource
            .as_deref()
            .is_none_or(|r| crate::lro::path_key(r) != crate::lro::path_key(&exs[i].url))
    {
        j.ledger.fail(
            "DEL-04",
            "200 or 204 from the Location URL once the delete succeeded (or the delete's error if it failed)",
            format!("404 from {}", cut(&exs[i].url, 160)),
            Some(exs[i].seq),
            None,
        );
        return;
    }
    if flow.finished() != Some(Outcome::Succeeded) {
        return;
    }
    let last = match flow.channel {
        Some(Channel::Location) => flow.polls().last().map(|(i, _)| i),
        Some(Channel::AzureAsyncOperation) => flow.after(AfterRead::Location).last(),
        _ => None,
    };
    if let Some(i) = last {
        let x = &exs[i];
        if x.status() == Some(202) {
            return;
        }
        // A Location that is the deleted resource's own URL: once the delete succeeded, GET on
        // it must answer 404, so its "done" answer cannot be a 200 or 204.
        let own = flow
            .resource
            .as_deref()
            .is_some_and(|r| crate::lro::path_key(r) == crate::lro::path_key(&x.url));
        if own {
            j.ledger
                .check("DEL-04", x.status() == Some(404), Some(x.seq), || {
                    (
                        "404 from the resource once its delete succeeded (its Location URL is the resource itself)".into(),
                        format!("{}: the resource still answers", super::words::status(x.status())),
                    )
                });
            return;
        }
        j.ledger.check(
            "DEL-04",
            matches!(x.status(), Some(200 | 204)),
            Some(x.seq),
            || {
                (
                    "200 or 204 from the Location URL once the delete succeeded".into(),
                    super::words::status(x.status()),
                )
            },
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::http::{Exchange, Role};
    use crate::lro::{Channel, Outcome as Op};
    use crate::rules::Outcome;
    use crate::rules::flow::{End, Event};
    use crate::rules::testing::{
        Case, OP_RESULT, WIDGET, ambient, exchange, failing, flow, flow_outcome, numbered, passing,
        poll, run_cases, widget, with_role,
    };
    use serde_json::{Value, json};

    fn read(status: u16) -> Exchange {
        let body = if status == 200 {
            widget("Succeeded")
        } else {
            json!({"error": {"code": "ResourceNotFound", "message": "no such widget"}})
        };
        exchange("GET", WIDGET, status, &[], body)
    }

    fn delete(status: u16, headers: &[(&str, &str)]) -> Exchange {
        exchange("DELETE", WIDGET, status, headers, Value::Null)
    }

    /// A read showing the resource (`read_status`), then a DELETE answered so.
    fn after(rule: &str, read_status: u16, status: u16, headers: &[(&str, &str)]) -> Outcome {
        ambient(
            rule,
            &numbered(vec![read(read_status), delete(status, headers)]),
        )
        .0
    }

    fn loc_poll(status: u16, headers: &[(&str, &str)]) -> Exchange {
        with_role(
            exchange("GET", OP_RESULT, status, headers, Value::Null),
            Role::LocationPoll,
        )
    }

    /// A DELETE followed through Location; the resource read between two polls that showed
    /// the delete running answered `watched`.
    fn watched(rule: &str, watched: Exchange, last: Exchange) -> Outcome {
        watched_to(rule, watched, last, End::Finished(Op::Succeeded))
    }

    /// [`watched`], the flow ending `end` (as the follower ends it on the last answer).
    fn watched_to(rule: &str, watched: Exchange, last: Exchange, end: End) -> Outcome {
        let del = delete(202, &[("Location", OP_RESULT), ("Retry-After", "10")]);
        let running = loc_poll(202, &[("Location", OP_RESULT)]);
        flow_outcome(
            rule,
            vec![del, running.clone(), watched, running, last],
            |exs| {
                flow(
                    exs,
                    Some(Channel::Location),
                    vec![
                        poll(1, Channel::Location, true),
                        Event::Watch { ex: 2 },
                        poll(3, Channel::Location, true),
                        poll(4, Channel::Location, false),
                    ],
                    end,
                )
            },
        )
    }

    fn deleting() -> Exchange {
        exchange("GET", WIDGET, 200, &[], widget("Deleting"))
    }

    /// A DELETE whose Location is the resource's own URL, its last answer `status`.
    fn own_location(status: u16) -> Outcome {
        let del = delete(202, &[("Location", WIDGET), ("Retry-After", "10")]);
        let last = with_role(
            exchange("GET", WIDGET, status, &[], Value::Null),
            Role::LocationPoll,
        );
        flow_outcome("DEL-04", vec![del, last], |exs| {
            flow(
                exs,
                Some(Channel::Location),
                vec![poll(1, Channel::Location, false)],
                End::Finished(Op::Succeeded),
            )
        })
    }

    /// DEL-01..05, each shown failing and passing (DEL-04's later reads are stated too).
    pub(crate) const CASES: &[Case] = &[
        failing("DEL-01", "204 for a resource shown existing", || {
            after("DEL-01", 200, 204, &[])
        }),
        failing("DEL-01", "404 for a resource shown existing", || {
            after("DEL-01", 200, 404, &[])
        }),
        passing("DEL-01", "200 for a resource shown existing", || {
            after("DEL-01", 200, 200, &[])
        }),
        passing("DEL-01", "202 with Location", || {
            after(
                "DEL-01",
                200,
                202,
                &[("Location", OP_RESULT), ("Retry-After", "10")],
            )
        }),
        failing("DEL-02", "a 202 without Retry-After", || {
            ambient("DEL-02", &[delete(202, &[("Location", OP_RESULT)])]).0
        }),
        passing("DEL-02", "a 202 with Retry-After", || {
            ambient(
                "DEL-02",
                &[delete(
                    202,
                    &[("Location", OP_RESULT), ("Retry-After", "10")],
                )],
            )
            .0
        }),
        failing(
            "DEL-03",
            "the resource Succeeded while its delete ran",
            || watched("DEL-03", read(200), loc_poll(204, &[])),
        ),
        passing("DEL-03", "the resource gone while its delete ran", || {
            watched("DEL-03", read(404), loc_poll(204, &[]))
        }),
        passing(
            "DEL-03",
            "the resource Deleting while its delete ran",
            || watched("DEL-03", deleting(), loc_poll(204, &[])),
        ),
        failing(
            "DEL-04",
            "Location answered 404 once the delete succeeded",
            || watched("DEL-04", deleting(), loc_poll(404, &[])),
        ),
        failing(
            "DEL-04",
            "Location answered 404, which ends the delete Failed as a client reads it",
            || {
                watched_to(
                    "DEL-04",
                    deleting(),
                    loc_poll(404, &[]),
                    End::Finished(Op::Failed),
                )
            },
        ),
        failing(
            "DEL-04",
            "the resource's own Location answered 200 once deleted",
            || own_location(200),
        ),
        passing(
            "DEL-04",
            "Location answered 204 once the delete succeeded",
            || watched("DEL-04", deleting(), loc_poll(204, &[])),
        ),
        passing(
            "DEL-04",
            "Location answered 200 once the delete succeeded",
            || watched("DEL-04", deleting(), loc_poll(200, &[])),
        ),
        passing(
            "DEL-04",
            "the resource's own Location answered 404 once deleted",
            || own_location(404),
        ),
        failing("DEL-05", "404 for a resource shown missing", || {
            after("DEL-05", 404, 404, &[])
        }),
        failing("DEL-05", "200 for a resource shown missing", || {
            after("DEL-05", 404, 200, &[])
        }),
        passing("DEL-05", "204 for a resource shown missing", || {
            after("DEL-05", 404, 204, &[])
        }),
    ];

    #[test]
    fn del_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn a_delete_answered_202_without_location_fails_loc_01_alone() {
        // DEL-01 only restates LOC-01 there (the catalogue): not judged, naming it.
        let exs = numbered(vec![read(200), delete(202, &[("Retry-After", "10")])]);
        assert_eq!(ambient("LOC-01", &exs).0, Outcome::Failed);
        assert_eq!(ambient("DEL-01", &exs).0, Outcome::NotJudged);
    }

    #[test]
    fn a_delete_that_never_runs_after_its_answer_is_not_applicable_to_del_03() {
        use crate::rules::testing::why_not;
        // Answered 200: done in its answer, nothing ran for a read to see.
        let sync = |exs: &[Exchange]| flow(exs, None, Vec::new(), End::Finished(Op::Succeeded));
        let why = why_not("DEL-03", vec![delete(200, &[])], Some(&sync)).unwrap();
        assert!(
            why.starts_with("not applicable: the DELETE completed synchronously (answered 200)"),
            "{why}"
        );
        // Answered 202 and read while it ran: judged either way (CASES).
        assert_eq!(
            watched("DEL-03", deleting(), loc_poll(204, &[])),
            Outcome::Passed
        );
        assert_eq!(
            watched("DEL-03", read(200), loc_poll(204, &[])),
            Outcome::Failed
        );
        // Answered 202, and its first read already said it had ended: too fast to be seen
        // running, so nothing ran for a read of the resource to see.
        let del = || delete(202, &[("Location", OP_RESULT), ("Retry-After", "10")]);
        let fast = |exs: &[Exchange]| {
            flow(
                exs,
                Some(Channel::Location),
                vec![Event::Watch { ex: 1 }, poll(2, Channel::Location, false)],
                End::Finished(Op::Succeeded),
            )
        };
        let why = why_not(
            "DEL-03",
            vec![del(), read(200), loc_poll(204, &[])],
            Some(&fast),
        );
        let why = why.unwrap();
        assert!(
            why.starts_with("not applicable: the DELETE's operation was never seen running"),
            "{why}"
        );
        // Seen running, but the resource read could not be placed inside it: not judged
        // (timing), never "not applicable".
        let running = loc_poll(202, &[("Location", OP_RESULT)]);
        let missed = |exs: &[Exchange]| {
            flow(
                exs,
                Some(Channel::Location),
                vec![
                    poll(1, Channel::Location, true),
                    Event::Watch { ex: 2 },
                    poll(3, Channel::Location, false),
                ],
                End::Finished(Op::Succeeded),
            )
        };
        let exs = vec![del(), running, read(200), loc_poll(204, &[])];
        let why = why_not("DEL-03", exs, Some(&missed)).unwrap();
        assert!(why.starts_with("timing: "), "{why}");
    }

    #[test]
    fn a_refused_delete_and_an_unknown_state_get_no_verdict() {
        assert_eq!(after("DEL-01", 200, 409, &[]), Outcome::NotJudged);
        assert_eq!(ambient("DEL-01", &[delete(204, &[])]).0, Outcome::NotJudged);
        assert_eq!(ambient("DEL-05", &[delete(404, &[])]).0, Outcome::NotJudged);
    }
}

#[cfg(test)]
mod causal_tests {
    use crate::rules::testing::{exchange, target, with_seq};
    use crate::rules::{Judge, Outcome, Registry};
    use serde_json::json;

    const R: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/abc?api-version=1";
    const RECASED: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/ABC?api-version=1";

    fn del01(ops12_failed: bool) -> (Outcome, Option<String>) {
        let t = target();
        let reg = Registry::default();
        let mut j = Judge::new(&t, &reg);
        let body = json!({"id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/abc", "name": "abc", "type": "Microsoft.Contoso/widgets", "properties": {"provisioningState": "Succeeded"}});
        j.exchange(&with_seq(exchange("GET", R, 200, &[], body), 1));
        if ops12_failed {
            let ops12 = crate::rules::expect::CASE_INSENSITIVE_IDS;
            j.ledger
                .fail(ops12, "status 200", "status 404", Some(2), None);
        }
        j.exchange(&with_seq(
            exchange("DELETE", RECASED, 204, &[], json!(null)),
            3,
        ));
        let t = j.ledger.tallies();
        let d = t.iter().find(|x| x.rule == "DEL-01").expect("DEL-01");
        (d.outcome, d.not_judged.clone())
    }

    #[test]
    fn a_recased_delete_answered_missing_after_ops_12_failed_is_not_judged() {
        let (o, why) = del01(true);
        assert_eq!(o, Outcome::NotJudged);
        assert!(why.unwrap().starts_with("OPS-12 failed at exchange #2"));
        // Without OPS-12 failing first, a 204 for a resource shown existing fails DEL-01.
        assert_eq!(del01(false).0, Outcome::Failed);
    }
}
