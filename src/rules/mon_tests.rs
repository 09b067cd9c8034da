//! Tests of `mon`: a failing and a passing case per rule (the catalogue walk runs
//! `CASES`).

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
