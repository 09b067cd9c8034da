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

/// MON rules are judged only where a test's action states them (the selection reads it).
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (super::Shows::Stated, &[]);

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
                    format!("Operation-Location: {}", super::words::text(link)),
                )
            });
    }
    // MON-10: the link carries the api-version the starting request carried.
    if let Some(v) = &mon.api_version
        && let Some(link) = resp.header(mon.link.header())
    {
        let has = crate::lro::resolve(&ex.url, link)
            .and_then(|u| crate::http::parse_url(&u).ok())
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
            super::words::text(got),
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
                super::words::json(e),
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
                    last.map(|(_, s)| s.to_string()).unwrap_or("unread".into()),
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
#[path = "mon_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "mon_causal_tests.rs"]
mod causal_tests;
