//! AAO: the Azure-AsyncOperation header and its operation resource. AAO-01..03 are ambient;
//! AAO-04 (every channel agrees on the outcome) is judged once an operation has ended.

use serde_json::Value;

use super::Judge;
use super::flow::{AfterRead, Flow};
use crate::http::{Exchange, Role, cut};
use crate::lro::{Channel, Outcome, is_absolute_uri, resource_state};

/// What the engine judges of AAO by itself, and on which exchanges (the selection reads it).
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Write(None),
    &[("AAO-04", super::Shows::Follow(None))],
);

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
    if let Some(a) = resp.header("azure-asyncoperation") {
        j.ledger.check("AAO-01", is_absolute_uri(a), seq, || {
            let why = if a.chars().any(char::is_whitespace) {
                " (not a URI: it holds a raw space; clients percent-encode it)"
            } else {
                ""
            };
            (
                "an absolute Azure-AsyncOperation URI".into(),
                format!("Azure-AsyncOperation: {a}{why}"),
            )
        });
        if let Some(au) =
            crate::lro::resolve(&ex.url, a).and_then(|u| crate::http::parse_url(&u).ok())
        {
            let host = |u: &url::Url| u.host_str().map(str::to_ascii_lowercase);
            let want = ex
                .request_header("referer")
                .and_then(|r| crate::http::parse_url(r).ok())
                .or_else(|| crate::http::parse_url(&ex.url).ok())
                .and_then(|u| host(&u));
            let last = |u: &url::Url| {
                u.path()
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase()
            };
            // Only a 202's Location names an operation (a 200/201's names the resource).
            let loc = resp.header("location");
            let ids_ok = match loc
                .filter(|_| resp.status == 202)
                .and_then(|l| crate::lro::resolve(&ex.url, l))
                .and_then(|l| crate::http::parse_url(&l).ok())
            {
                // A Location that is the resource itself (a 201 naming what it created) names
                // no operation to compare.
                Some(lu)
                    if crate::lro::resource_of(&ex.method, &ex.url).is_some_and(|r| {
                        crate::lro::path_key(lu.as_str()) == crate::lro::path_key(&r)
                    }) =>
                {
                    true
                }
                Some(lu) => last(&lu) == last(&au),
                None => true,
            };
            // Where the run plays ARM's part, the host is FD-01's (strict: the Referer's alone).
            let host_ok = super::fd::fronted(ex).is_some() || host(&au) == want;
            j.ledger.check("AAO-03", host_ok && ids_ok, seq, || {
                (
                    "Azure-AsyncOperation on the request's host, ending in the same operation id as Location".into(),
                    format!("Azure-AsyncOperation: {a}; Location: {}", loc.unwrap_or("(none)")),
                )
            });
        }
    }
    // A 5xx read is one clients retry (OPRES-01, RETRY-01 judge it); any other answer must be
    // the operation resource.
    if ex.role == Role::OperationStatus && (400..500).contains(&resp.status) {
        // A read refused with a 4xx is OPRES-01's failure; it shows no body to judge.
        if let Some(c) = j.ledger.cause_among([ex.seq], &["OPRES-01"]) {
            j.ledger.blocked(
                "AAO-02",
                &c,
                "the read was refused, so it shows no operation resource to judge",
            );
            return;
        }
    }
    if ex.role == Role::OperationStatus && (200..500).contains(&resp.status) {
        let body = resp.json.as_ref().filter(|j| j.is_object());
        let status = body.and_then(|b| b.get("status")).and_then(Value::as_str);
        j.ledger.check(
            "AAO-02",
            resp.status != 202 && status.is_some(),
            seq,
            || {
                (
                    "an operation resource: a JSON object with a string `status`, not a 202".into(),
                    format!("{} {}", resp.status, cut(&resp.body, 200)),
                )
            },
        );
    }
}

pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.channel == Some(Channel::Location) {
        location_body_agrees(j, flow, exs);
        return;
    }
    if flow.channel != Some(Channel::AzureAsyncOperation) {
        return;
    }
    let Some(outcome) = flow.finished() else {
        return;
    };
    if let Some(i) = flow.after(AfterRead::Location).last() {
        let x = &exs[i];
        let st = x.status().unwrap_or(0);
        if st != 202 && st != 0 {
            let agree = match outcome {
                Outcome::Succeeded => (200..300).contains(&st),
                _ => st >= 400,
            };
            j.ledger.check("AAO-04", agree, Some(x.seq), || {
                (
                    format!("Location's final answer to agree with the operation status {outcome}"),
                    format!(
                        "Location answered {st} {}",
                        x.response
                            .as_ref()
                            .map(|r| cut(&r.body, 160))
                            .unwrap_or_default()
                    ),
                )
            });
        }
    }
    if !matches!(flow.method.as_str(), "PUT" | "PATCH") {
        return;
    }
    if let Some(i) = flow.after(AfterRead::Resource).last() {
        let x = &exs[i];
        let Some(r) = x.response.as_ref().filter(|r| r.status == 200) else {
            return;
        };
        let shown = resource_state(r.json.as_ref());
        j.ledger.check(
            "AAO-04",
            shown.outcome() == Some(outcome),
            Some(x.seq),
            || {
                (
                    format!("provisioningState {outcome}, as the operation status says"),
                    format!(
                        "provisioningState {}",
                        crate::lro::provisioning_state(r.json.as_ref())
                            .unwrap_or("absent (Succeeded)")
                    ),
                )
            },
        );
    }
}

/// A Location flow that ended with a success answer whose body is a resource saying it
/// Failed or was Canceled: the two channels of one answer disagree.
fn location_body_agrees(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.finished() != Some(Outcome::Succeeded) {
        return;
    }
    let Some((i, _)) = flow.polls().last() else {
        return;
    };
    let x = &exs[i];
    let Some(r) = x
        .response
        .as_ref()
        .filter(|r| matches!(r.status, 200 | 201))
    else {
        return;
    };
    let Some(ps) = crate::lro::provisioning_state(r.json.as_ref()) else {
        return;
    };
    let shown = resource_state(r.json.as_ref());
    j.ledger.check(
        "AAO-04",
        shown.outcome().is_none_or(|o| o == Outcome::Succeeded),
        Some(x.seq),
        || {
            (
                "a Location success answer whose resource does not say Failed or Canceled".into(),
                format!("{} with provisioningState {ps}", r.status),
            )
        },
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::http::{Exchange, Role};
    use crate::lro::{Channel, Outcome as Op};
    use crate::rules::Outcome;
    use crate::rules::flow::{AfterRead, End, Event};
    use crate::rules::testing::{
        Case, OP_RESULT, OP_STATUS, WIDGET, ambient, exchange, failing, flow, flow_outcome,
        op_read, op_status, passing, poll, run_cases, widget, with_role,
    };
    use serde_json::Value;

    fn started(headers: &[(&str, &str)]) -> Exchange {
        let mut h = vec![("x-ms-request-id", "r-1")];
        h.extend_from_slice(headers);
        exchange("PUT", WIDGET, 201, &h, widget("Creating"))
    }

    fn one(rule: &str, headers: &[(&str, &str)]) -> Outcome {
        ambient(rule, &[started(headers)]).0
    }

    /// A DELETE answered 202 with these headers: `rule`'s outcome on it.
    fn accepted(rule: &str, headers: &[(&str, &str)]) -> Outcome {
        let mut h = vec![("x-ms-request-id", "r-1"), ("Retry-After", "10")];
        h.extend_from_slice(headers);
        ambient(rule, &[exchange("DELETE", WIDGET, 202, &h, Value::Null)]).0
    }

    /// A PUT followed through its operation resource to `outcome`, then read after the end:
    /// the resource (`resource`) and the Location (`location`), when given.
    fn ended(outcome: Op, resource: Option<Value>, location: Option<(u16, Value)>) -> Outcome {
        let put = started(&[("Azure-AsyncOperation", OP_STATUS), ("Location", OP_RESULT)]);
        let mut exs = vec![put, op_read(op_status(outcome.as_str()))];
        let mut events = vec![poll(1, Channel::AzureAsyncOperation, false)];
        if let Some(b) = resource {
            exs.push(exchange("GET", WIDGET, 200, &[], b));
            events.push(Event::After {
                ex: exs.len() - 1,
                what: AfterRead::Resource,
            });
        }
        if let Some((s, b)) = location {
            exs.push(with_role(
                exchange("GET", OP_RESULT, s, &[], b),
                Role::LocationPoll,
            ));
            events.push(Event::After {
                ex: exs.len() - 1,
                what: AfterRead::Location,
            });
        }
        flow_outcome("AAO-04", exs, |exs| {
            flow(
                exs,
                Some(Channel::AzureAsyncOperation),
                events,
                End::Finished(outcome),
            )
        })
    }

    /// A PUT followed through Location whose success answer is the resource in this state.
    fn location_success(state: &str) -> Outcome {
        let put = started(&[("Location", OP_RESULT)]);
        let done = with_role(
            exchange("GET", OP_RESULT, 200, &[], widget(state)),
            Role::LocationPoll,
        );
        flow_outcome("AAO-04", vec![put, done], |exs| {
            flow(
                exs,
                Some(Channel::Location),
                vec![poll(1, Channel::Location, false)],
                End::Finished(Op::Succeeded),
            )
        })
    }

    fn status_read(status: u16, body: Value) -> Outcome {
        let x = with_role(
            exchange("GET", OP_STATUS, status, &[], body),
            Role::OperationStatus,
        );
        ambient("AAO-02", &[x]).0
    }

    const OTHER_HOST: &str = "http://elsewhere/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/op1?api-version=2024-05-01";
    const OTHER_ID: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationResults/op2?api-version=2024-05-01";

    /// AAO-01..04, each shown failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("AAO-01", "a bare-path Azure-AsyncOperation", || {
            one(
                "AAO-01",
                &[(
                    "Azure-AsyncOperation",
                    "/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/op1",
                )],
            )
        }),
        failing("AAO-01", "an Azure-AsyncOperation with a raw space", || {
            one(
                "AAO-01",
                &[("Azure-AsyncOperation", "http://h/operationStatuses/op 1")],
            )
        }),
        passing("AAO-01", "an absolute Azure-AsyncOperation", || {
            one("AAO-01", &[("Azure-AsyncOperation", OP_STATUS)])
        }),
        failing(
            "AAO-02",
            "an operation resource without a string status",
            || status_read(200, serde_json::json!({"status": 1})),
        ),
        passing("AAO-02", "an operation resource with its status", || {
            status_read(200, op_status("InProgress"))
        }),
        failing("AAO-03", "Azure-AsyncOperation on another host", || {
            one("AAO-03", &[("Azure-AsyncOperation", OTHER_HOST)])
        }),
        failing(
            "AAO-03",
            "a 202's Azure-AsyncOperation and Location with different ids",
            || {
                accepted(
                    "AAO-03",
                    &[("Azure-AsyncOperation", OP_STATUS), ("Location", OTHER_ID)],
                )
            },
        ),
        passing(
            "AAO-03",
            "a 201's Location names the resource, no operation to compare",
            || {
                one(
                    "AAO-03",
                    &[("Azure-AsyncOperation", OP_STATUS), ("Location", OTHER_ID)],
                )
            },
        ),
        passing(
            "AAO-03",
            "Azure-AsyncOperation and Location with one id",
            || {
                one(
                    "AAO-03",
                    &[("Azure-AsyncOperation", OP_STATUS), ("Location", OP_RESULT)],
                )
            },
        ),
        passing(
            "AAO-03",
            "a 201 whose Location is the created resource itself",
            || {
                one(
                    "AAO-03",
                    &[("Azure-AsyncOperation", OP_STATUS), ("Location", WIDGET)],
                )
            },
        ),
        passing(
            "AAO-03",
            "Azure-AsyncOperation alone, on the request's host",
            || one("AAO-03", &[("Azure-AsyncOperation", OP_STATUS)]),
        ),
        failing("AAO-04", "Succeeded, but the resource says Failed", || {
            ended(Op::Succeeded, Some(widget("Failed")), None)
        }),
        failing("AAO-04", "Failed, but Location answers 200", || {
            ended(Op::Failed, None, Some((200, widget("Failed"))))
        }),
        failing(
            "AAO-04",
            "a Location success whose resource says Failed",
            || location_success("Failed"),
        ),
        passing("AAO-04", "Succeeded everywhere", || {
            ended(
                Op::Succeeded,
                Some(widget("Succeeded")),
                Some((200, widget("Succeeded"))),
            )
        }),
        passing("AAO-04", "Failed everywhere", || {
            let err = serde_json::json!({"error": {"code": "Boom", "message": "it failed"}});
            ended(Op::Failed, Some(widget("Failed")), Some((400, err)))
        }),
        passing(
            "AAO-04",
            "a Location success with the resource Succeeded",
            || location_success("Succeeded"),
        ),
    ];

    #[test]
    fn aao_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn a_status_read_answered_202_fails_opres_01_alone() {
        // An RPaaS-style status read (202 `{status: Accepted}`, no Location): AAO-02 and
        // LOC-01 only restate OPRES-01 there (the catalogue), each not judged, naming it.
        let x = with_role(
            exchange("GET", OP_STATUS, 202, &[], op_status("Accepted")),
            Role::OperationStatus,
        );
        for (rule, outcome) in [
            ("OPRES-01", Outcome::Failed),
            ("AAO-02", Outcome::NotJudged),
            ("LOC-01", Outcome::NotJudged),
        ] {
            assert_eq!(ambient(rule, std::slice::from_ref(&x)).0, outcome, "{rule}");
        }
        assert_eq!(status_read(202, op_status("Accepted")), Outcome::NotJudged);
    }
}

#[cfg(test)]
mod causal_tests {
    use crate::http::{Exchange, Role};
    use crate::rules::testing::{exchange, target, with_seq};
    use crate::rules::{Judge, Outcome, Registry, RuleTally};
    use serde_json::json;

    const OP: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/1?api-version=1";
    const R: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/a?api-version=1";

    fn run(exs: &[Exchange]) -> Vec<RuleTally> {
        let t = target();
        let reg = Registry::default();
        let mut j = Judge::new(&t, &reg);
        for x in exs {
            j.exchange(x);
        }
        j.ledger.tallies()
    }

    fn read(role: Role, status: u16, body: serde_json::Value, seq: u64) -> Exchange {
        let mut x = with_seq(exchange("GET", OP, status, &[], body), seq);
        x.role = role;
        x
    }

    fn get<'a>(t: &'a [RuleTally], rule: &str) -> Option<&'a RuleTally> {
        t.iter().find(|x| x.rule == rule)
    }

    #[test]
    fn a_refused_status_read_is_opres_01s_failure_not_aao_02s() {
        let t = run(&[read(
            Role::OperationStatus,
            404,
            json!({"error": {"code": "NotFound", "message": "m"}}),
            3,
        )]);
        assert_eq!(get(&t, "OPRES-01").unwrap().outcome, Outcome::Failed);
        let a = get(&t, "AAO-02").unwrap();
        assert_eq!(a.outcome, Outcome::NotJudged);
        assert!(
            a.not_judged
                .as_deref()
                .unwrap()
                .starts_with("OPRES-01 failed at exchange #3"),
            "{:?}",
            a.not_judged
        );
        // Without that cause, a read that is no operation resource still fails AAO-02.
        let t = run(&[read(Role::OperationStatus, 200, json!({"id": "x"}), 4)]);
        assert_eq!(get(&t, "AAO-02").unwrap().outcome, Outcome::Failed);
    }

    #[test]
    fn a_scenarios_read_of_a_handed_out_status_url_is_a_status_read_for_its_caller_only() {
        let put = with_seq(
            exchange(
                "PUT",
                R,
                201,
                &[("Azure-AsyncOperation", OP)],
                json!({"properties": {"provisioningState": "Accepted"}}),
            ),
            1,
        );
        let mine = read(Role::Step, 404, json!({"error": {"code": "NotFound"}}), 2);
        let t = run(&[put.clone(), mine]);
        assert_eq!(get(&t, "OPRES-01").unwrap().outcome, Outcome::Failed);
        let mut theirs = read(Role::Step, 404, json!({"error": {"code": "NotFound"}}), 2);
        theirs
            .request_headers
            .push(("x-ms-home-tenant-id".into(), "another".into()));
        let t = run(&[put, theirs]);
        assert!(get(&t, "OPRES-01").is_none());
    }

    #[test]
    fn behind_the_played_front_door_a_read_of_the_public_status_url_is_a_status_read() {
        // The RP hands out the public URL; the read reaches its endpoint, the public URL in
        // the Referer the front door added.
        let public = OP.replacen("http://h/", "https://management.rpconform.invalid/", 1);
        assert_ne!(public, OP);
        let put = with_seq(
            exchange(
                "PUT",
                R,
                201,
                &[("Azure-AsyncOperation", public.as_str())],
                json!({"properties": {"provisioningState": "Accepted"}}),
            ),
            1,
        );
        let mut mine = read(Role::Step, 404, json!({"error": {"code": "NotFound"}}), 2);
        mine.request_headers
            .push(("Referer".into(), public.clone()));
        let mut t = target();
        let reg = Registry::default();
        let judged = |t: &crate::target::Target| {
            let mut j = Judge::new(t, &reg);
            j.exchange(&put);
            j.exchange(&mine);
            get(&j.ledger.tallies(), "OPRES-01").map(|r| r.outcome)
        };
        // Without a played front door a Referer is the client's, not an address to trust.
        t.front_door = None;
        assert_eq!(judged(&t), None);
        t.front_door = Some("management.rpconform.invalid".into());
        assert_eq!(judged(&t), Some(Outcome::Failed));
    }
}
