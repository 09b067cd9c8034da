//! MON: TypeSpec Azure.Core status monitors on a data plane. MON-01 and MON-07 are judged on
//! the initial answer; MON-02..06 and MON-09 (a terminal status stays terminal) on the followed
//! monitor; MON-08 is stated by the suites. Only
//! this surface's rules apply to it: Retry-After values and the like are the service's choice.

use serde_json::Value;

use super::flow::{AfterRead, End};
use super::{Judge, MonitorRecord};
use crate::http::{Exchange, cut};
use crate::lro::{FinalStateVia, Outcome, is_absolute_uri};
use crate::target::{Monitor, MonitorLink};

fn nonempty(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

pub(super) fn started(j: &mut Judge<'_>, mon: &Monitor, ex: &Exchange, sent_id: Option<&str>) {
    let Some(resp) = ex
        .response
        .as_ref()
        .filter(|r| (200..300).contains(&r.status))
    else {
        return;
    };
    let seq = Some(ex.seq);
    if mon.link == MonitorLink::OperationLocation {
        let link = resp.header("operation-location");
        j.ledger
            .check("MON-01", link.is_some_and(is_absolute_uri), seq, || {
                (
                    "an absolute Operation-Location on the initial answer".into(),
                    format!("Operation-Location: {link:?}"),
                )
            });
    }
    // MON-10: the link carries the api-version the starting request carried.
    if let Some(v) = &mon.api_version
        && let Some(link) = resp.header(mon.link.header())
    {
        let has = crate::lro::resolve(&ex.url, link)
            .and_then(|u| url::Url::parse(&u).ok())
            .is_some_and(|u| u.query_pairs().any(|(k, _)| k == "api-version"));
        j.ledger.check("MON-10", has, seq, || {
            (
                format!("the {} link with api-version={v}", mon.link.header()),
                format!("{}: {link}", mon.link.header()),
            )
        });
    }
    let Some(h) = &mon.operation_id_header else {
        j.ledger.not_judged(
            "MON-07",
            format!(
                "not applicable: monitor `{}` declares no operation-id header",
                mon.name
            ),
        );
        return;
    };
    let got = resp.header(h);
    let ok = match (sent_id, got) {
        (Some(s), Some(g)) => s == g,
        (None, Some(g)) => !g.trim().is_empty(),
        _ => false,
    };
    j.ledger.check("MON-07", ok, seq, || {
        (
            format!(
                "{h} on the initial answer{}",
                sent_id
                    .map(|s| format!(" equal to the one sent ({s})"))
                    .unwrap_or_default()
            ),
            format!("{got:?}"),
        )
    });
}

/// MON-02, MON-04, MON-05 on one monitor read.
pub(super) fn read(j: &mut Judge<'_>, mon: &Monitor, x: &Exchange) {
    let Some(resp) = &x.response else { return };
    let seq = Some(x.seq);
    let body = resp.json.as_ref().filter(|b| b.is_object());
    let status = body
        .and_then(|b| b.get(&mon.status_field))
        .and_then(Value::as_str);
    j.ledger.check(
        "MON-02",
        resp.status == 200 && status.is_some(),
        seq,
        || {
            (
                format!(
                    "200 with a JSON object whose `{}` is a string",
                    mon.status_field
                ),
                format!("{} {}", resp.status, cut(&resp.body, 160)),
            )
        },
    );
    let (Some(b), Some(st)) = (body, status) else {
        return;
    };
    let outcome = mon.vocabulary().outcome_of(st);
    // A default terminal name on a monitor that declares custom ones is MON-03's failure:
    // which field that status should carry cannot be told.
    let misnamed = outcome.is_none() && Outcome::of_arm(st).is_some();
    if misnamed && mon.result_field.is_some() {
        j.ledger.not_judged(
            "MON-04",
            format!(
                "MON-03 is broken at exchange #{}: status `{st}` is a default terminal name, not one monitor `{}` declares, so whether it is the success value cannot be told",
                x.seq, mon.name
            ),
        );
    } else if let Some(rf) = &mon.result_field {
        let has = b.get(rf).is_some_and(|v| !v.is_null());
        if outcome == Some(Outcome::Succeeded) {
            j.ledger.check("MON-04", has, seq, || {
                (
                    format!("`{rf}` holding the result once {st}"),
                    "absent".into(),
                )
            });
        } else {
            j.ledger.check("MON-04", !has, seq, || {
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
    if outcome == Some(Outcome::Failed) {
        let e = b.get(&mon.error_field);
        let ok =
            nonempty(e.and_then(|e| e.get("code"))) && nonempty(e.and_then(|e| e.get("message")));
        j.ledger.check("MON-05", ok, seq, || {
            (
                format!(
                    "`{}` with a non-empty code and message when {st}",
                    mon.error_field
                ),
                format!("{e:?}"),
            )
        });
    }
}

/// MON-09: once a monitor read shows a terminal status, every later read of it shows the same.
fn terminal_stays(j: &mut Judge<'_>, mon: &Monitor, flow: &super::flow::Flow, exs: &[Exchange]) {
    let status_of = |i: usize| {
        exs[i]
            .response
            .as_ref()
            .filter(|r| r.status == 200)
            .and_then(|r| r.json.as_ref())
            .and_then(|b| b.get(&mon.status_field))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let vocab = mon.vocabulary();
    let mut first: Option<(String, u64)> = None;
    for e in &flow.events {
        let i = match e {
            super::flow::Event::Poll { ex, .. } => *ex,
            super::flow::Event::After {
                ex,
                what: AfterRead::Status,
            } => *ex,
            _ => continue,
        };
        let Some(st) = status_of(i) else { continue };
        match &first {
            None => {
                if vocab.outcome_of(&st).is_some() {
                    first = Some((st, exs[i].seq));
                }
            }
            Some((was, at)) => {
                j.ledger.check("MON-09", &st == was, Some(exs[i].seq), || {
                    (
                        format!("`{}` still {was} (terminal at #{at})", mon.status_field),
                        format!("{}: {st}", mon.status_field),
                    )
                });
            }
        }
    }
}

pub(super) fn flow(j: &mut Judge<'_>, mon: &Monitor, rec: &MonitorRecord, exs: &[Exchange]) {
    let flow = &rec.flow;
    terminal_stays(j, mon, flow, exs);
    let init = &exs[flow.initial];
    if let End::Unfollowable(why) = &flow.end
        && init.status().is_some_and(|s| (200..300).contains(&s))
        && flow.polls().next().is_none()
    {
        // No usable Operation-Location is MON-01's failure: the monitor was never read.
        if let Some(c) = j.ledger.cause_among([init.seq], &["MON-01"]) {
            j.ledger.blocked(
                "MON-02",
                &c,
                "the initial answer gave no usable link, so the monitor was never read",
            );
            return;
        }
        j.ledger.fail(
            "MON-02",
            format!("a {} link to the status monitor", mon.link.header()),
            why.clone(),
            Some(init.seq),
            None,
        );
        return;
    }
    match &flow.end {
        End::Finished(_) => j.ledger.pass("MON-03"),
        End::TimedOut => {
            let last = flow.polls().last();
            j.ledger.fail(
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
                    flow.deadline_secs
                ),
                format!(
                    "still {} after {} polls",
                    last.map(|(_, s)| format!("{s:?}"))
                        .unwrap_or("unread".into()),
                    flow.polls().count()
                ),
                last.map(|(i, _)| exs[i].seq),
                None,
            );
        }
        _ => {}
    }
    // MON-06 is about a final link separate from the monitor: when the Location header is the
    // status monitor itself, the result is the monitor's result field (MON-05's business).
    if flow.finished() != Some(Outcome::Succeeded)
        || mon.final_state_via != FinalStateVia::Location
        || mon.link == crate::target::MonitorLink::Location
    {
        return;
    }
    let Some(i) = flow.after(AfterRead::Final).last() else {
        j.ledger.fail(
            "MON-06",
            "a Location header (final-state-via location) on the initial answer",
            "none",
            Some(init.seq),
            None,
        );
        return;
    };
    let x = &exs[i];
    let r = x.response.as_ref();
    // The result, not the status monitor again: an answer that carries the monitor's status
    // field with a status value is the monitor.
    let is_monitor = r
        .and_then(|r| r.json.as_ref())
        .and_then(|b| b.get(&mon.status_field))
        .and_then(Value::as_str)
        .is_some_and(|s| mon.vocabulary().outcome_of(s).is_some());
    let ok = r.is_some_and(|r| r.status == 200) && !is_monitor;
    j.ledger.check("MON-06", ok, Some(x.seq), || {
        (
            "200 with the operation's result from the initial answer's Location".into(),
            match r {
                Some(r) if is_monitor => format!(
                    "{} with the status monitor again: {}",
                    r.status,
                    cut(&r.body, 160)
                ),
                Some(r) => format!("{} {}", r.status, cut(&r.body, 160)),
                None => "no answer".into(),
            },
        )
    });
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::http::{Exchange, Role, Surface};
    use crate::lro::{Channel, Outcome as Op};
    use crate::rules::flow::{AfterRead, End, Event};
    use crate::rules::testing::{
        Case, exchange, failing, flow, judged, numbered, on_surface, passing, poll, run_cases,
        with_role,
    };
    use crate::rules::{Judge, MonitorRecord, Outcome};
    use crate::target::Monitor;
    use serde_json::{Value, json};

    const PUT: &str = "http://h/dataplane/widgets/dp1?api-version=2024-05-01";
    const MONITOR: &str = "http://h/dataplane/operations/op1?api-version=2024-05-01";

    fn monitor<'t>(j: &Judge<'t>, name: &str) -> &'t Monitor {
        let t = j.target;
        t.monitors
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no monitor {name}"))
    }

    fn dp(method: &str, url: &str, status: u16, headers: &[(&str, &str)], body: Value) -> Exchange {
        on_surface(
            exchange(method, url, status, headers, body),
            Surface::DataPlane,
        )
    }

    /// The initial answer of `widget-put` with these headers; the operation id sent, if any.
    fn started(rule: &str, headers: &[(&str, &str)], sent: Option<&str>) -> Outcome {
        judged(rule, |j| {
            let m = monitor(j, "widget-put");
            let id_header = m
                .operation_id_header
                .clone()
                .expect("widget-put sends an operation id");
            let mut h: Vec<(&str, &str)> = headers.to_vec();
            if let Some(pos) = h.iter().position(|(k, _)| *k == "ID") {
                h[pos].0 = &id_header;
            }
            let ex = dp("PUT", PUT, 201, &h, json!({"status": "Running"}));
            j.monitor_started(m, &ex, sent);
        })
    }

    /// One read of `name`'s monitor.
    fn read(rule: &str, name: &str, status: u16, body: Value) -> Outcome {
        judged(rule, |j| {
            let m = monitor(j, name);
            let ex = with_role(dp("GET", MONITOR, status, &[], body), Role::MonitorPoll);
            j.monitor_read(m, &ex);
        })
    }

    /// `name`'s operation followed through its monitor to `end`; `after` the final read.
    fn followed(rule: &str, name: &str, end: End, after: Option<Exchange>) -> Outcome {
        judged(rule, |j| {
            let m = monitor(j, name);
            let mut exs = vec![
                dp(
                    "POST",
                    PUT,
                    202,
                    &[("Operation-Location", MONITOR)],
                    Value::Null,
                ),
                with_role(
                    dp("GET", MONITOR, 200, &[], json!({"status": "Running"})),
                    Role::MonitorPoll,
                ),
            ];
            let mut events = vec![poll(
                1,
                Channel::OperationLocation,
                !matches!(end, End::Finished(_)),
            )];
            if let Some(a) = after {
                exs.push(a);
                events.push(Event::After {
                    ex: 2,
                    what: AfterRead::Final,
                });
            }
            let exs = numbered(exs);
            let rec = MonitorRecord {
                flow: flow(&exs, Some(Channel::OperationLocation), events, end),
            };
            j.monitor_flow(m, &rec, &exs);
        })
    }

    /// The snapshot's result read from the initial answer's Location.
    fn snapshot_result(status: u16, body: Value) -> Outcome {
        let x = dp(
            "GET",
            "http://h/dataplane/widgets/dp1/snapshots/s1",
            status,
            &[],
            body,
        );
        followed(
            "MON-06",
            "widget-snapshot",
            End::Finished(Op::Succeeded),
            Some(x),
        )
    }

    /// MON-01..07 (08 is stated by the suites), failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("MON-01", "no Operation-Location", || {
            started("MON-01", &[], None)
        }),
        failing("MON-01", "a bare-path Operation-Location", || {
            started(
                "MON-01",
                &[("Operation-Location", "/dataplane/operations/op1")],
                None,
            )
        }),
        passing("MON-01", "an absolute Operation-Location", || {
            started("MON-01", &[("Operation-Location", MONITOR)], None)
        }),
        failing("MON-02", "a monitor read answered 500", || {
            read(
                "MON-02",
                "widget-put",
                500,
                json!({"error": {"code": "Boom", "message": "m"}}),
            )
        }),
        failing("MON-02", "a monitor without a string status", || {
            read("MON-02", "widget-put", 200, json!({"id": "op1"}))
        }),
        failing("MON-02", "an initial answer with no monitor link", || {
            let why = End::Unfollowable("no Operation-Location header".into());
            judged("MON-02", |j| {
                let m = monitor(j, "widget-put");
                let exs = vec![dp("PUT", PUT, 201, &[], json!({"status": "Running"}))];
                let rec = MonitorRecord {
                    flow: flow(&exs, None, Vec::new(), why),
                };
                j.monitor_flow(m, &rec, &exs);
            })
        }),
        passing("MON-02", "a monitor read with its status", || {
            read(
                "MON-02",
                "widget-put",
                200,
                json!({"id": "op1", "status": "Running"}),
            )
        }),
        failing("MON-03", "still running at the deadline", || {
            followed("MON-03", "widget-put", End::TimedOut, None)
        }),
        passing("MON-03", "terminal within the deadline", || {
            followed("MON-03", "widget-put", End::Finished(Op::Succeeded), None)
        }),
        failing("MON-04", "the result while Running", || {
            read(
                "MON-04",
                "widget-put",
                200,
                json!({"id": "op1", "status": "Running", "result": {"size": 1}}),
            )
        }),
        failing("MON-04", "no result once Succeeded", || {
            read(
                "MON-04",
                "widget-put",
                200,
                json!({"id": "op1", "status": "Succeeded"}),
            )
        }),
        passing("MON-04", "no result while Running", || {
            read(
                "MON-04",
                "widget-put",
                200,
                json!({"id": "op1", "status": "Running"}),
            )
        }),
        passing("MON-04", "the result once Succeeded", || {
            read(
                "MON-04",
                "widget-put",
                200,
                json!({"id": "op1", "status": "Succeeded", "result": {"size": 1}}),
            )
        }),
        passing(
            "MON-04",
            "a custom result field once its custom success",
            || {
                read(
                    "MON-04",
                    "widget-analyze",
                    200,
                    json!({"id": "op1", "status": "Succeeded", "success": {"ok": true}}),
                )
            },
        ),
        failing("MON-05", "Failed without error", || {
            read(
                "MON-05",
                "widget-put",
                200,
                json!({"id": "op1", "status": "Failed"}),
            )
        }),
        failing("MON-05", "a custom failure without its error field", || {
            read(
                "MON-05",
                "widget-export",
                200,
                json!({"id": "op1", "status": "Faulted"}),
            )
        }),
        passing("MON-05", "Failed with code and message", || {
            read(
                "MON-05",
                "widget-put",
                200,
                json!({"id": "op1", "status": "Failed", "error": {"code": "A", "message": "m"}}),
            )
        }),
        passing("MON-05", "a custom error field", || {
            read(
                "MON-05",
                "widget-analyze",
                200,
                json!({"id": "op1", "status": "Failed", "failure": {"code": "A", "message": "m"}}),
            )
        }),
        failing("MON-06", "the final Location answered 404", || {
            snapshot_result(404, Value::Null)
        }),
        failing(
            "MON-06",
            "the final Location answered the monitor again",
            || snapshot_result(200, json!({"id": "op1", "status": "Succeeded"})),
        ),
        failing("MON-06", "no final Location read", || {
            followed(
                "MON-06",
                "widget-snapshot",
                End::Finished(Op::Succeeded),
                None,
            )
        }),
        passing("MON-06", "the final Location answered the result", || {
            snapshot_result(200, json!({"name": "s1", "size": 1}))
        }),
        failing("MON-07", "another operation id than the one sent", || {
            started(
                "MON-07",
                &[("Operation-Location", MONITOR), ("ID", "server-made")],
                Some("mine"),
            )
        }),
        failing("MON-07", "no operation id", || {
            started("MON-07", &[("Operation-Location", MONITOR)], None)
        }),
        passing("MON-07", "the operation id sent, echoed", || {
            started(
                "MON-07",
                &[("Operation-Location", MONITOR), ("ID", "mine")],
                Some("mine"),
            )
        }),
        passing(
            "MON-07",
            "an operation id of the service's own when none was sent",
            || {
                started(
                    "MON-07",
                    &[("Operation-Location", MONITOR), ("ID", "server-made")],
                    None,
                )
            },
        ),
        failing(
            "MON-09",
            "a Succeeded monitor read Failed on its re-read",
            || terminal_then("Failed"),
        ),
        failing(
            "MON-09",
            "a Succeeded monitor read Running on its re-read",
            || terminal_then("Running"),
        ),
        passing("MON-09", "a Succeeded monitor read Succeeded again", || {
            terminal_then("Succeeded")
        }),
        failing(
            "MON-10",
            "an Operation-Location without api-version",
            || {
                started(
                    "MON-10",
                    &[("Operation-Location", "http://h/dataplane/operations/op1")],
                    None,
                )
            },
        ),
        passing(
            "MON-10",
            "an Operation-Location with the api-version",
            || started("MON-10", &[("Operation-Location", MONITOR)], None),
        ),
    ];

    /// MON-09: `widget-put` followed to Succeeded, then its monitor read again showing `again`.
    fn terminal_then(again: &str) -> Outcome {
        judged("MON-09", |j| {
            let m = monitor(j, "widget-put");
            let read = |status: &str| {
                with_role(
                    dp("GET", MONITOR, 200, &[], json!({"status": status})),
                    Role::MonitorPoll,
                )
            };
            let exs = numbered(vec![
                dp(
                    "PUT",
                    PUT,
                    201,
                    &[("Operation-Location", MONITOR)],
                    json!({}),
                ),
                read("Running"),
                read("Succeeded"),
                read(again),
            ]);
            let events = vec![
                poll(1, Channel::OperationLocation, true),
                poll(2, Channel::OperationLocation, false),
                Event::After {
                    ex: 3,
                    what: AfterRead::Status,
                },
            ];
            let rec = MonitorRecord {
                flow: flow(
                    &exs,
                    Some(Channel::OperationLocation),
                    events,
                    End::Finished(Op::Succeeded),
                ),
            };
            j.monitor_flow(m, &rec, &exs);
        })
    }

    #[test]
    fn mon_cases_show_what_they_say() {
        run_cases(CASES);
    }
}

#[cfg(test)]
mod causal_tests {
    use crate::rules::flow::End;
    use crate::rules::testing::{arm_flow as flow, exchange, target, with_seq};
    use crate::rules::{Judge, MonitorRecord, Outcome, Registry, RuleTally};
    use serde_json::json;

    fn get<'a>(t: &'a [RuleTally], rule: &str) -> &'a RuleTally {
        t.iter()
            .find(|x| x.rule == rule)
            .unwrap_or_else(|| panic!("{rule}"))
    }

    #[test]
    fn a_default_terminal_name_on_a_custom_monitor_is_not_judged_for_its_result() {
        let t = target();
        let reg = Registry::default();
        let mon = t.monitor_named("widget-export").unwrap();
        assert!(mon.result_field.is_some());
        let mut j = Judge::new(&t, &reg);
        let read = |status: &str, seq| {
            with_seq(
                exchange(
                    "GET",
                    "http://h/dataplane/ops/1",
                    200,
                    &[],
                    json!({"status": status, "result": {"x": 1}}),
                ),
                seq,
            )
        };
        j.monitor_read(mon, &read("Succeeded", 4));
        let tl = j.ledger.tallies();
        let m4 = get(&tl, "MON-04");
        assert_eq!(m4.outcome, Outcome::NotJudged);
        assert!(
            m4.not_judged.as_deref().unwrap().contains("MON-03"),
            "{m4:?}"
        );
        // A running status with the result field still fails MON-04.
        j.monitor_read(mon, &read("Running", 5));
        assert_eq!(get(&j.ledger.tallies(), "MON-04").outcome, Outcome::Failed);
    }

    #[test]
    fn a_monitor_never_read_for_want_of_operation_location_is_mon_01s_failure() {
        let t = target();
        let reg = Registry::default();
        let mon = t.monitor_named("widget-put").unwrap();
        let init = with_seq(
            exchange("PUT", "http://h/dataplane/widgets/a", 201, &[], json!({})),
            3,
        );
        let rec = MonitorRecord {
            flow: flow(
                "PUT",
                "http://h/dataplane/widgets/a",
                None,
                Vec::new(),
                End::Unfollowable("no operation-location link in the initial answer".into()),
            ),
        };
        let mut j = Judge::new(&t, &reg);
        j.monitor_flow(mon, &rec, std::slice::from_ref(&init));
        assert_eq!(get(&j.ledger.tallies(), "MON-02").outcome, Outcome::Failed);
        let mut j = Judge::new(&t, &reg);
        j.monitor_started(mon, &init, None);
        j.monitor_flow(mon, &rec, &[init]);
        let tl = j.ledger.tallies();
        assert_eq!(get(&tl, "MON-01").outcome, Outcome::Failed);
        let m2 = get(&tl, "MON-02");
        assert_eq!(m2.outcome, Outcome::NotJudged);
        assert!(
            m2.not_judged
                .as_deref()
                .unwrap()
                .starts_with("MON-01 failed at exchange #3")
        );
    }
}
