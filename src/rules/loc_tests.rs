//! Tests of `loc`: a failing and a passing case per rule (the catalogue walk runs
//! `CASES`).

use crate::http::Role;
use crate::lro::{Channel, Outcome as Op};
use crate::rules::Outcome;
use crate::rules::flow::{AfterRead, End, Event};
use crate::rules::testing::{
    Case, OP_RESULT, OP_STATUS, WIDGET, ambient, exchange, failing, flow, flow_outcome, passing,
    poll, run_cases, widget, with_role,
};
use serde_json::{Value, json};

/// A 202 to `method` on the widget with these headers (after x-ms-request-id).
fn accepted(method: &str, headers: &[(&str, &str)]) -> crate::http::Exchange {
    let mut h = vec![("x-ms-request-id", "r-1")];
    h.extend_from_slice(headers);
    exchange(method, WIDGET, 202, &h, Value::Null)
}

fn one(rule: &str, method: &str, headers: &[(&str, &str)]) -> Outcome {
    ambient(rule, &[accepted(method, headers)]).0
}

/// A Location poll answered `status` with these headers.
fn location_poll(status: u16, headers: &[(&str, &str)], body: Value) -> crate::http::Exchange {
    with_role(
        exchange("GET", OP_RESULT, status, headers, body),
        Role::LocationPoll,
    )
}

/// PUT answered 202 with Location, a poll of it answered `running` (202), then `last`.
fn location_flow(
    rule: &str,
    running: crate::http::Exchange,
    last: crate::http::Exchange,
    end: End,
) -> Outcome {
    let put = accepted("PUT", &[("Location", OP_RESULT), ("Retry-After", "10")]);
    flow_outcome(rule, vec![put, running, last], |exs| {
        flow(
            exs,
            Some(Channel::Location),
            vec![
                poll(1, Channel::Location, true),
                poll(2, Channel::Location, !matches!(end, End::Finished(_))),
            ],
            end,
        )
    })
}

fn still_202() -> crate::http::Exchange {
    location_poll(
        202,
        &[("Location", OP_RESULT), ("Retry-After", "10")],
        Value::Null,
    )
}

/// LOC-06 on the final answer of a PUT's Location.
fn final_answer(outcome: Op, status: u16, body: Value) -> Outcome {
    location_flow(
        "LOC-06",
        still_202(),
        location_poll(status, &[], body),
        End::Finished(outcome),
    )
}

/// LOC-08 on an Azure-AsyncOperation flow whose Location was read after the end.
fn location_after_status(status: u16) -> Outcome {
    let put = exchange(
        "PUT",
        WIDGET,
        201,
        &[("Azure-AsyncOperation", OP_STATUS), ("Location", OP_RESULT)],
        widget("Creating"),
    );
    let op = with_role(
        exchange(
            "GET",
            OP_STATUS,
            200,
            &[],
            crate::rules::testing::op_status("Succeeded"),
        ),
        Role::OperationStatus,
    );
    let loc = location_poll(status, &[], widget("Succeeded"));
    flow_outcome("LOC-08", vec![put, op, loc], |exs| {
        flow(
            exs,
            Some(Channel::AzureAsyncOperation),
            vec![
                poll(1, Channel::AzureAsyncOperation, false),
                Event::After {
                    ex: 2,
                    what: AfterRead::Location,
                },
            ],
            End::Finished(Op::Succeeded),
        )
    })
}

/// LOC-05 on a Location read beside a running operation resource.
fn side_read(status: u16) -> Outcome {
    let put = exchange(
        "PUT",
        WIDGET,
        201,
        &[("Azure-AsyncOperation", OP_STATUS), ("Location", OP_RESULT)],
        widget("Creating"),
    );
    let op = |s: &str| {
        with_role(
            exchange(
                "GET",
                OP_STATUS,
                200,
                &[],
                crate::rules::testing::op_status(s),
            ),
            Role::OperationStatus,
        )
    };
    let side = location_poll(status, &[("Location", OP_RESULT)], widget("Creating"));
    flow_outcome(
        "LOC-05",
        vec![
            put,
            op("InProgress"),
            side,
            op("InProgress"),
            op("Succeeded"),
        ],
        |exs| {
            flow(
                exs,
                Some(Channel::AzureAsyncOperation),
                vec![
                    poll(1, Channel::AzureAsyncOperation, true),
                    Event::Side {
                        ex: 2,
                        channel: Channel::Location,
                        state: crate::lro::State::Running(None),
                    },
                    poll(3, Channel::AzureAsyncOperation, true),
                    poll(4, Channel::AzureAsyncOperation, false),
                ],
                End::Finished(Op::Succeeded),
            )
        },
    )
}

/// A PATCH answered 202 whose Location is its Azure-AsyncOperation URL, read while running
/// (answered `running_status`) and then Succeeded.
fn location_is_status_url(running_status: u16) -> Outcome {
    let patch = accepted(
        "PATCH",
        &[("Azure-AsyncOperation", OP_STATUS), ("Location", OP_STATUS)],
    );
    let op = |status: u16, s: &str| {
        with_role(
            exchange(
                "GET",
                OP_STATUS,
                status,
                &[],
                crate::rules::testing::op_status(s),
            ),
            Role::OperationStatus,
        )
    };
    flow_outcome(
        "LOC-05",
        vec![
            patch,
            op(running_status, "InProgress"),
            op(200, "Succeeded"),
        ],
        |exs| {
            flow(
                exs,
                Some(Channel::AzureAsyncOperation),
                vec![
                    poll(1, Channel::AzureAsyncOperation, true),
                    poll(2, Channel::AzureAsyncOperation, false),
                ],
                End::Finished(Op::Succeeded),
            )
        },
    )
}

const DATE: &str = "Wed, 21 Oct 2026 07:28:00 GMT";
const UNDER: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w/operationResults/op1?api-version=2024-05-01";

/// LOC-01..09, each shown failing and passing (LOC-07 is stated by the suites).
pub(crate) const CASES: &[Case] = &[
    failing("LOC-01", "a 202 without Location", || {
        one("LOC-01", "DELETE", &[])
    }),
    failing("LOC-01", "a 202 with only Azure-AsyncOperation", || {
        one("LOC-01", "PUT", &[("Azure-AsyncOperation", OP_STATUS)])
    }),
    passing("LOC-01", "a 202 with Location", || {
        one("LOC-01", "DELETE", &[("Location", OP_RESULT)])
    }),
    failing("LOC-10", "a 202 with a status body", || {
        let h = [("x-ms-request-id", "r-1"), ("Location", OP_RESULT)];
        let ex = exchange("DELETE", WIDGET, 202, &h, json!({"status": "Accepted"}));
        ambient("LOC-10", &[ex]).0
    }),
    failing(
        "LOC-10",
        "a Location poll answered 202 with the resource",
        || {
            let ex = location_poll(202, &[("Location", OP_RESULT)], widget("Updating"));
            ambient("LOC-10", &[ex]).0
        },
    ),
    passing("LOC-10", "a 202 with no body", || {
        one("LOC-10", "DELETE", &[("Location", OP_RESULT)])
    }),
    failing("LOC-02", "a bare-path Location", || {
        one(
            "LOC-02",
            "DELETE",
            &[(
                "Location",
                "/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationResults/op1?api-version=2024-05-01",
            )],
        )
    }),
    passing("LOC-02", "an absolute Location", || {
        one("LOC-02", "DELETE", &[("Location", OP_RESULT)])
    }),
    failing("LOC-03", "Retry-After as an HTTP-date", || {
        one(
            "LOC-03",
            "DELETE",
            &[("Location", OP_RESULT), ("Retry-After", DATE)],
        )
    }),
    failing("LOC-03", "Retry-After with a fraction", || {
        one(
            "LOC-03",
            "DELETE",
            &[("Location", OP_RESULT), ("Retry-After", "1.5")],
        )
    }),
    passing("LOC-03", "Retry-After in seconds", || {
        one(
            "LOC-03",
            "DELETE",
            &[("Location", OP_RESULT), ("Retry-After", "10")],
        )
    }),
    failing("LOC-04", "Retry-After: 5 on a 202", || {
        one(
            "LOC-04",
            "DELETE",
            &[("Location", OP_RESULT), ("Retry-After", "5")],
        )
    }),
    failing("LOC-04", "Retry-After: 601 on a 202", || {
        one(
            "LOC-04",
            "DELETE",
            &[("Location", OP_RESULT), ("Retry-After", "601")],
        )
    }),
    passing("LOC-04", "Retry-After: 10 on a 202", || {
        one(
            "LOC-04",
            "DELETE",
            &[("Location", OP_RESULT), ("Retry-After", "10")],
        )
    }),
    passing("LOC-04", "Retry-After: 600 on a 202", || {
        one(
            "LOC-04",
            "DELETE",
            &[("Location", OP_RESULT), ("Retry-After", "600")],
        )
    }),
    passing(
        "LOC-05",
        "a running Location poll answered 202 with Location",
        || {
            location_flow(
                "LOC-05",
                still_202(),
                location_poll(204, &[], Value::Null),
                End::Finished(Op::Succeeded),
            )
        },
    ),
    failing(
        "LOC-05",
        "Location answered 200 while the operation resource ran",
        || side_read(200),
    ),
    passing(
        "LOC-05",
        "Location answered 202 while the operation resource ran",
        || side_read(202),
    ),
    failing(
        "LOC-05",
        "a Location that is the status URL answered 200 while running",
        || location_is_status_url(200),
    ),
    passing(
        "LOC-05",
        "a Location that is the status URL answered 202 while running",
        || location_is_status_url(202),
    ),
    failing(
        "LOC-06",
        "a PUT's final answer with another resource",
        || {
            let mut b = widget("Succeeded");
            b["id"] = json!(
                "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/other"
            );
            final_answer(Op::Succeeded, 200, b)
        },
    ),
    failing(
        "LOC-06",
        "a PUT's final answer 204 without the resource",
        || final_answer(Op::Succeeded, 204, Value::Null),
    ),
    failing("LOC-06", "a failed operation's final answer 200", || {
        final_answer(Op::Failed, 200, widget("Failed"))
    }),
    passing("LOC-06", "a PUT's final answer with the resource", || {
        final_answer(Op::Succeeded, 200, widget("Succeeded"))
    }),
    passing(
        "LOC-06",
        "a failed operation's final answer with the error envelope",
        || {
            final_answer(
                Op::Failed,
                400,
                json!({"error": {"code": "Boom", "message": "it failed"}}),
            )
        },
    ),
    failing("LOC-08", "Location still 202 at the deadline", || {
        location_flow("LOC-08", still_202(), still_202(), End::TimedOut)
    }),
    failing(
        "LOC-08",
        "Location still 202 after the operation resource ended",
        || location_after_status(202),
    ),
    passing("LOC-08", "Location stopped answering 202", || {
        location_flow(
            "LOC-08",
            still_202(),
            location_poll(200, &[], widget("Succeeded")),
            End::Finished(Op::Succeeded),
        )
    }),
    passing(
        "LOC-08",
        "Location done once the operation resource ended",
        || location_after_status(200),
    ),
    failing("LOC-09", "a Location on another host", || {
        one(
            "LOC-09",
            "DELETE",
            &[(
                "Location",
                "http://elsewhere/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationResults/op1?api-version=2024-05-01",
            )],
        )
    }),
    failing("LOC-09", "a Location without api-version", || {
        one(
            "LOC-09",
            "DELETE",
            &[(
                "Location",
                "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationResults/op1",
            )],
        )
    }),
    failing("LOC-09", "a Location under another provider's path", || {
        one(
            "LOC-09",
            "DELETE",
            &[(
                "Location",
                "http://h/subscriptions/s/providers/Microsoft.Other/operationResults/op1?api-version=1",
            )],
        )
    }),
    passing(
        "LOC-09",
        "a Location under the subscription's provider URL",
        || one("LOC-09", "DELETE", &[("Location", OP_RESULT)]),
    ),
    passing("LOC-09", "a Location under the request URL", || {
        one("LOC-09", "DELETE", &[("Location", UNDER)])
    }),
];

#[test]
fn loc_cases_show_what_they_say() {
    run_cases(CASES);
}

#[test]
fn a_location_poll_answered_202_without_location_fails_loc_01_alone() {
    // LOC-05 only restates LOC-01 there (the catalogue): not judged, naming it.
    let run = |rule| {
        location_flow(
            rule,
            location_poll(202, &[], Value::Null),
            location_poll(204, &[], Value::Null),
            End::Finished(Op::Succeeded),
        )
    };
    assert_eq!(run("LOC-01"), Outcome::Failed);
    assert_eq!(run("LOC-05"), Outcome::NotJudged);
}

#[test]
fn an_rp_that_sends_no_retry_after_is_not_applicable_to_loc_03_and_04() {
    use crate::rules::testing::why_not;
    // No Retry-After on a 202 nor on a 201 handing out an operation: optional, so absent.
    let put = exchange(
        "PUT",
        WIDGET,
        201,
        &[
            ("x-ms-request-id", "r-1"),
            ("Azure-AsyncOperation", OP_STATUS),
        ],
        widget("Creating"),
    );
    let delete = accepted("DELETE", &[("Location", OP_RESULT)]);
    let exs = vec![put.clone(), delete.clone()];
    let loc03 = why_not("LOC-03", exs.clone(), None).unwrap();
    assert!(
        loc03.starts_with(
            "not applicable: no answer that hands out an operation carried Retry-After"
        ),
        "{loc03}"
    );
    let loc04 = why_not("LOC-04", exs, None).unwrap();
    assert!(
        loc04.starts_with("not applicable: no 202 answer carried Retry-After"),
        "{loc04}"
    );
    // A 201 alone says nothing of a 202's Retry-After: no reason for LOC-04 at all.
    assert_eq!(why_not("LOC-04", vec![put.clone()], None), None);
    // One that is sent is judged, whatever other answers lacked one.
    let bad = accepted("DELETE", &[("Location", OP_RESULT), ("Retry-After", "5")]);
    let date = accepted(
        "DELETE",
        &[
            ("Location", OP_RESULT),
            ("Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT"),
        ],
    );
    let good = accepted("DELETE", &[("Location", OP_RESULT), ("Retry-After", "10")]);
    assert_eq!(ambient("LOC-04", &[delete.clone(), bad]).0, Outcome::Failed);
    assert_eq!(
        ambient("LOC-03", &[delete.clone(), date]).0,
        Outcome::Failed
    );
    assert_eq!(
        ambient("LOC-04", &[delete.clone(), good.clone()]).0,
        Outcome::Passed
    );
    assert_eq!(ambient("LOC-03", &[delete, good]).0, Outcome::Passed);
    // A recorder that strips Retry-After hides it: not judged, never "not applicable".
    let registry = crate::rules::Registry::default();
    let t = crate::rules::testing::target();
    let mut j = crate::rules::Judge::new(&t, &registry);
    j.stripped.response = vec!["retry-after".into()];
    j.exchange(&accepted("DELETE", &[("Location", OP_RESULT)]));
    let tally = j
        .ledger
        .tallies()
        .into_iter()
        .find(|x| x.rule == "LOC-04")
        .unwrap();
    assert_eq!(
        tally.not_judged.as_deref(),
        Some("the recording format strips Retry-After")
    );
    assert!(j.ledger.tallies().iter().all(|x| x.rule != "LOC-03"));
}
