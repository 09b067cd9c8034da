//! OPS: operation lifecycle rules that the engine judges from what it sees: OPS-07 (a terminal
//! status never changes) and OPS-08 (startTime fixed, endTime never backwards), on every read
//! of an operation resource or status monitor. The ARO-HCP rules of this family (OPS-01..05,
//! 09, 11, 13) and OPS-06, 10, 12 are stated by the suites, which send the requests they need.

use serde_json::Value;

use super::flow::{AfterRead, Flow};
use super::{Judge, iso8601};
use crate::http::{Exchange, Role};
use crate::lro::{Outcome, Vocabulary};
use crate::target::Monitor;

/// What the engine judges of OPS by itself, and on which exchanges (the selection reads it):
/// OPS-07/08 on a followed operation's reads.
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Any,
    &[
        ("OPS-07", super::Shows::Follow(None)),
        ("OPS-08", super::Shows::Follow(None)),
    ],
);

/// What reads of one operation showed.
#[derive(Debug, Default, Clone)]
pub(crate) struct OpSeen {
    start: Option<String>,
    end: Option<chrono::DateTime<chrono::FixedOffset>>,
    terminal: Option<(Outcome, Value)>,
}

/// One read of an operation's status (an operation resource or a monitor).
fn read(j: &mut Judge<'_>, ex: &Exchange, vocab: &Vocabulary, error_field: &str) {
    let Some(b) = ex
        .response
        .as_ref()
        .filter(|r| r.status == 200)
        .and_then(|r| r.json.as_ref())
        .filter(|b| b.is_object())
    else {
        return;
    };
    let Some(st) = b.get(&vocab.field).and_then(Value::as_str) else {
        return;
    };
    let key = crate::lro::path_key(&ex.url);
    // An operation URL whose id the recorder replaced names every operation alike: reads of
    // different operations cannot be told apart.
    if j.placeholder(key.rsplit('/').next().unwrap_or("")) {
        for rule in ["OPS-07", "OPS-08"] {
            j.ledger.not_judged(
                rule,
                "the recorder replaced the operation's id in its URL with a placeholder: reads of different operations cannot be told apart",
            );
        }
        return;
    }
    let err = b.get(error_field).cloned().unwrap_or(Value::Null);
    let seq = Some(ex.seq);
    let h = j.history.ops.or_default(key).clone();
    let mut now = h.clone();
    match (&h.terminal, vocab.outcome_of(st)) {
        (Some((prev, prev_err)), o) => {
            let same = o == Some(*prev) && *prev_err == err;
            j.ledger.check("OPS-07", same, seq, || {
                (
                    format!("status to stay {prev} once terminal, with the same error"),
                    format!("status {st}, error {err}"),
                )
            });
        }
        (None, Some(o)) => now.terminal = Some((o, err)),
        (None, None) => {}
    }
    // .NET's unset DateTime (`0001-01-01T00:00:00`, what a running operation of some RPs
    // carries as its endTime) and its twin `DateTime.MaxValue` (`9999-12-31T23:59:59.9999999`)
    // are placeholders, never times: read as absent, and said.
    let unset = |key: &str| {
        b.get(key)
            .and_then(Value::as_str)
            .is_some_and(|v| iso8601::parse(v).is_some() && real_time(v).is_none())
    };
    for key in ["startTime", "endTime"] {
        if unset(key) {
            let shown = b.get(key).and_then(Value::as_str).unwrap_or_default();
            j.ledger.not_judged(
                "OPS-08",
                format!(
                    "{key} {shown} is .NET's DateTime.MinValue or MaxValue, a placeholder: read as absent"
                ),
            );
        }
    }
    let start = b
        .get("startTime")
        .and_then(Value::as_str)
        .filter(|_| !unset("startTime"));
    let end = b
        .get("endTime")
        .and_then(Value::as_str)
        .and_then(iso8601::parse)
        .filter(|_| !unset("endTime"));
    let mut why = None;
    if let Some(s) = start {
        match &h.start {
            Some(prev) if prev != s => why = Some(format!("startTime changed from {prev} to {s}")),
            _ => now.start = Some(s.to_string()),
        }
        if let (Some(e), Some(sv)) = (end, iso8601::parse(s))
            && e < sv
        {
            why = Some(format!("endTime {e} is before startTime {s}"));
        }
    }
    if let Some(e) = end {
        if let Some(prev) = h.end
            && e < prev
        {
            why = Some(format!("endTime moved back from {prev} to {e}"));
        }
        now.end = Some(e);
    }
    if ["startTime", "endTime"]
        .iter()
        .all(|k| b.get(*k).is_none_or(Value::is_null))
    {
        j.ledger.not_applicable(
            "OPS-08",
            "the operation's status carries no startTime or endTime (optional): OPS-08 compares them across reads where they are sent",
        );
    }
    if start.is_some() || end.is_some() {
        let ok = why.is_none();
        j.ledger.check("OPS-08", ok, seq, || {
            (
                "startTime fixed; endTime never earlier than before or than startTime".into(),
                why.unwrap_or_default(),
            )
        });
    }
    j.history.ops.insert(crate::lro::path_key(&ex.url), now);
}

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    if ex.role == Role::OperationStatus {
        read(j, ex, &Vocabulary::arm(), "error");
    }
}

/// The operation was read again after it ended: that read went through `ambient` already;
/// a flow with no such read says why OPS-07 has no verdict.
pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, _exs: &[Exchange]) {
    if flow.finished().is_some()
        && flow.channel == Some(crate::lro::Channel::AzureAsyncOperation)
        && flow.after(AfterRead::Status).next().is_none()
    {
        j.ledger
            .not_judged("OPS-07", "the operation was not read again after it ended");
    }
}

/// Status monitors: the same two rules with the monitor's own vocabulary.
pub(super) fn monitor_read(j: &mut Judge<'_>, mon: &Monitor, ex: &Exchange) {
    read(j, ex, &mon.vocabulary(), &mon.error_field);
}

/// How long before the DELETE's own operation stamp an operation may have ended and still be
/// read as ended by the DELETE's arrival (the RPC's "same instant", with room for one RP's
/// clocks and rounding).
const STAMPED_WINDOW_MS: i64 = 50;

/// OPS-03 and OPS-04 ask a superseded operation to end Canceled only if it was still running
/// when the superseding request (a DELETE) reached the RP. The scenario judges only after a
/// read right before the DELETE showed it running; that leaves a race: it may have ended on
/// its own in between.
///
/// `op_read` is the operation's final read; `later` every read of it made after the DELETE
/// was answered; `superseding` the DELETE's own answer (its `elapsed_ms` is the round trip);
/// `its_status` reads of the DELETE's operation. The expectation is judged when the operation
/// ended Canceled, when a later read showed it still running (it outlived the DELETE's
/// arrival), or when it ended within the DELETE's round trip or after: its `endTime` after
/// the latest moment the DELETE can have arrived — the DELETE operation's `startTime` (the
/// RP's own record; a whole-second time counts its second) minus the round trip, at most
/// [`STAMPED_WINDOW_MS`], else the DELETE answer's `Date` plus the second it truncates, minus
/// the round trip — all in the RP's clock. An operation
/// seen running just before that ended while the DELETE was on its way ended because of it
/// (an RP that lets it finish `Succeeded` at the instant the DELETE arrives, 53 µs apart in
/// its clock, did not cancel it). Otherwise it may have ended first: the reason, for "not
/// judged".
pub(crate) fn ended_before(
    op_read: &Exchange,
    later: &[&Exchange],
    superseding: &Exchange,
    its_status: &[&Exchange],
) -> Option<String> {
    let body_of = |e: &Exchange| {
        e.response
            .as_ref()
            .filter(|r| r.status == 200)
            .and_then(|r| r.json.clone())
    };
    let status_of = |b: &Value| b.get("status").and_then(Value::as_str).map(str::to_string);
    let body = body_of(op_read)?;
    let status = status_of(&body)?;
    if Outcome::of_arm(&status) == Some(Outcome::Canceled) {
        return None;
    }
    let outlived = later
        .iter()
        .filter_map(|e| body_of(e).as_ref().and_then(status_of))
        .any(|s| Outcome::of_arm(&s).is_none());
    if outlived {
        return None;
    }
    let end_text = body.get("endTime").and_then(Value::as_str);
    let Some((end, end_text)) = end_text.and_then(|t| real_time(t).map(|e| (e, t))) else {
        return Some(format!(
            "the operation ended {status} with no endTime, and no read after the DELETE showed it still running: it may have ended before the DELETE arrived"
        ));
    };
    let started = its_status
        .iter()
        .filter_map(|e| body_of(e))
        .filter_map(|b| {
            b.get("startTime")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .filter_map(|s| real_time(&s).map(|t| (t, s)))
        .min_by_key(|(t, _)| *t);
    // With the RP's own stamp of the DELETE's operation, the window before it is at most
    // STAMPED_WINDOW_MS: an operation that ended earlier than that ended on its own schedule (a
    // conforming RP whose operation ran out while a slow DELETE was in flight), not at the
    // DELETE's arrival.
    let (latest, what, stamped) = match started {
        // A startTime without fractions is truncated to its second.
        Some((t, s)) if !s.contains('.') => (
            t + chrono::Duration::seconds(1),
            format!("the DELETE's operation started at {s}"),
            true,
        ),
        Some((t, s)) => (t, format!("the DELETE's operation started at {s}"), true),
        None => {
            let date = superseding.response.as_ref().and_then(|r| r.header("date"));
            let Some((t, date)) = date.and_then(|d| {
                crate::http::parse_http_date(d)
                    .map(|t| (chrono::DateTime::<chrono::Utc>::from(t).fixed_offset(), d))
            }) else {
                return Some(format!(
                    "the operation ended {status} at {end_text}, and nothing tells when the DELETE arrived (no operation startTime, no Date)"
                ));
            };
            (
                t + chrono::Duration::seconds(1),
                format!("the DELETE was answered with Date {date}"),
                false,
            )
        }
    };
    // At most an hour (the longest a request may take): a time far out of range is no clock.
    // The round trip is kept in whole milliseconds, cut down: it may be a millisecond longer.
    let round_trip = i64::try_from(superseding.elapsed_ms.min(3_600_000)).unwrap_or(0);
    let window = if stamped {
        round_trip.min(STAMPED_WINDOW_MS)
    } else {
        round_trip
    };
    let sent = latest - chrono::Duration::milliseconds(window + 1);
    (end <= sent).then(|| {
        format!(
            "the operation ended {status} at {end_text}, and {what} after a {round_trip} ms round trip: it may have ended on its own before the DELETE arrived"
        )
    })
}

/// A time an operation resource gives, unless it is .NET's DateTime.MinValue or MaxValue
/// (`0001-01-01…`, `9999-12-31…`): placeholders for "not set", never times.
fn real_time(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    iso8601::parse(s).filter(|t| {
        let y = chrono::Datelike::year(t);
        y > 1 && y < 9999
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rules::testing::{
        Case, ambient, failing, numbered, op_read, op_status, passing, run_cases,
    };
    use serde_json::json;

    /// Reads of one operation resource, in order.
    fn reads(rule: &str, bodies: Vec<Value>) -> crate::rules::Outcome {
        ambient(rule, &numbered(bodies.into_iter().map(op_read).collect())).0
    }

    fn with(status: &str, key: &str, v: Value) -> Value {
        let mut b = op_status(status);
        b[key] = v;
        b
    }

    /// OPS-07 and OPS-08 (the rest of OPS is stated by the suites), failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("OPS-07", "Succeeded, then Failed", || {
            reads("OPS-07", vec![op_status("Succeeded"), op_status("Failed")])
        }),
        failing("OPS-07", "Failed, then Failed with another error", || {
            let other = with("Failed", "error", json!({"code": "Other", "message": "m"}));
            reads("OPS-07", vec![op_status("Failed"), other])
        }),
        passing("OPS-07", "Succeeded, then Succeeded again", || {
            reads(
                "OPS-07",
                vec![
                    op_status("InProgress"),
                    op_status("Succeeded"),
                    op_status("Succeeded"),
                ],
            )
        }),
        failing("OPS-08", "startTime changed", || {
            let moved = with("InProgress", "startTime", json!("2026-01-01T10:00:01Z"));
            reads("OPS-08", vec![op_status("InProgress"), moved])
        }),
        passing(
            "OPS-08",
            "a running operation's endTime 0001-01-01T00:00:00 (.NET's unset DateTime)",
            || {
                let unset = with("InProgress", "endTime", json!("0001-01-01T00:00:00"));
                reads("OPS-08", vec![unset, op_status("Succeeded")])
            },
        ),
        passing(
            "OPS-08",
            "a running operation's endTime 9999-12-31T23:59:59.9999999Z (.NET's DateTime.MaxValue)",
            || {
                let max = with(
                    "InProgress",
                    "endTime",
                    json!("9999-12-31T23:59:59.9999999Z"),
                );
                reads("OPS-08", vec![max, op_status("Succeeded")])
            },
        ),
        failing("OPS-08", "endTime before startTime", || {
            reads(
                "OPS-08",
                vec![with("Succeeded", "endTime", json!("2026-01-01T09:59:00Z"))],
            )
        }),
        failing("OPS-08", "endTime moved back", || {
            let earlier = with("Succeeded", "endTime", json!("2026-01-01T10:00:04Z"));
            reads("OPS-08", vec![op_status("Succeeded"), earlier])
        }),
        passing("OPS-08", "startTime fixed, endTime after it", || {
            reads(
                "OPS-08",
                vec![
                    op_status("InProgress"),
                    op_status("Succeeded"),
                    op_status("Succeeded"),
                ],
            )
        }),
    ];

    #[test]
    fn ops_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn an_operation_status_without_times_is_not_applicable_to_ops_08() {
        let bare = || op_read(json!({"status": "InProgress"}));
        let done = || op_read(json!({"status": "Succeeded"}));
        let why = crate::rules::testing::why_not("OPS-08", vec![bare(), done()], None).unwrap();
        assert!(
            why.starts_with(
                "not applicable: the operation's status carries no startTime or endTime"
            ),
            "{why}"
        );
        // Sent, they are compared across reads, whatever reads without them said.
        let moved = with("Succeeded", "startTime", json!("2026-01-01T10:00:01Z"));
        assert_eq!(
            reads(
                "OPS-08",
                vec![
                    json!({"status": "InProgress"}),
                    op_status("InProgress"),
                    moved
                ]
            ),
            crate::rules::Outcome::Failed
        );
        assert_eq!(
            reads(
                "OPS-08",
                vec![op_status("InProgress"), op_status("Succeeded")]
            ),
            crate::rules::Outcome::Passed
        );
        // .NET's unset DateTime is no time, and says so (not "not applicable").
        let unset = with("InProgress", "startTime", json!("0001-01-01T00:00:00"));
        let why = crate::rules::testing::why_not("OPS-08", vec![op_read(unset)], None).unwrap();
        assert!(why.starts_with("startTime 0001-01-01T00:00:00"), "{why}");
    }

    fn ex(status: u16, headers: &[(&str, &str)], body: Value) -> Exchange {
        crate::rules::testing::exchange("GET", "http://h/op", status, headers, body)
    }

    fn op(status: &str, end: Option<&str>) -> Exchange {
        let mut b = json!({"status": status, "startTime": "2026-01-01T10:00:00.000Z"});
        if let Some(e) = end {
            b["endTime"] = json!(e);
        }
        ex(200, &[], b)
    }

    fn delete(date: &str) -> Exchange {
        ex(202, &[("Date", date)], Value::Null)
    }

    #[test]
    fn an_operation_that_ended_before_the_delete_operation_started_is_not_judged() {
        let first = op("Succeeded", Some("2026-01-01T10:00:05.100Z"));
        let del = delete("Thu, 01 Jan 2026 10:00:05 GMT");
        let del_op = ex(
            200,
            &[],
            json!({"status": "InProgress", "startTime": "2026-01-01T10:00:05.300Z"}),
        );
        let why = ended_before(&first, &[], &del, &[&del_op]).expect("may have ended first");
        assert!(why.contains("10:00:05.300"), "{why}");
    }

    #[test]
    fn an_operation_that_ended_after_the_delete_operation_started_is_judged() {
        // Still running when the DELETE arrived: it should have been canceled.
        let first = op("Succeeded", Some("2026-01-01T10:00:05.400Z"));
        let del = delete("Thu, 01 Jan 2026 10:00:05 GMT");
        let del_op = ex(
            200,
            &[],
            json!({"status": "InProgress", "startTime": "2026-01-01T10:00:05.300Z"}),
        );
        assert_eq!(ended_before(&first, &[], &del, &[&del_op]), None);
    }

    #[test]
    fn an_operation_that_ended_within_the_deletes_round_trip_ended_because_of_it() {
        // The RP let the PUT end Succeeded 53 µs before it stamped the DELETE's operation:
        // the DELETE was already on its way (a 40 ms round trip), so it should have canceled.
        let first = op("Succeeded", Some("2026-01-01T10:00:05.2999470Z"));
        let mut del = delete("Thu, 01 Jan 2026 10:00:05 GMT");
        del.elapsed_ms = 40;
        let del_op = ex(
            200,
            &[],
            json!({"status": "InProgress", "startTime": "2026-01-01T10:00:05.3000000Z"}),
        );
        assert_eq!(ended_before(&first, &[], &del, &[&del_op]), None);
        // Ended before the DELETE was sent (more than the round trip before it started).
        let earlier = op("Succeeded", Some("2026-01-01T10:00:05.2500000Z"));
        let why = ended_before(&earlier, &[], &del, &[&del_op]).expect("may have ended first");
        assert!(why.contains("40 ms round trip"), "{why}");
        // A slow DELETE (675 ms on a busy machine) and an operation that ran out on its own
        // 91 ms before the RP stamped the DELETE's operation: it did not end because of it.
        let mut slow = delete("Thu, 01 Jan 2026 10:00:05 GMT");
        slow.elapsed_ms = 675;
        let ran_out = op("Succeeded", Some("2026-01-01T10:00:05.209Z"));
        let why = ended_before(&ran_out, &[], &slow, &[&del_op]).expect("ran out on its own");
        assert!(why.contains("on its own"), "{why}");
        // The same within the round trip of the Date's second.
        let mut del = delete("Thu, 01 Jan 2026 10:00:05 GMT");
        del.elapsed_ms = 300;
        let end = op("Succeeded", Some("2026-01-01T10:00:05.800Z"));
        assert_eq!(ended_before(&end, &[], &del, &[]), None);
        // .NET's DateTime.MaxValue is no endTime.
        let max = op("Succeeded", Some("9999-12-31T23:59:59.9999999Z"));
        let why = ended_before(&max, &[], &del, &[]).expect("no endTime");
        assert!(why.contains("no endTime"), "{why}");
    }

    #[test]
    fn whole_second_times_and_dates_count_the_second_they_truncate() {
        let first = op("Succeeded", Some("2026-01-01T10:00:05.900Z"));
        let del = delete("Thu, 01 Jan 2026 10:00:05 GMT");
        let del_op = ex(
            200,
            &[],
            json!({"status": "InProgress", "startTime": "2026-01-01T10:00:05Z"}),
        );
        assert!(ended_before(&first, &[], &del, &[&del_op]).is_some());
        // No operation read: the Date, plus its second.
        assert!(ended_before(&first, &[], &del, &[]).is_some());
        let late = op("Succeeded", Some("2026-01-01T10:00:06.200Z"));
        assert_eq!(ended_before(&late, &[], &del, &[]), None);
    }

    #[test]
    fn without_an_end_time_or_a_clock_it_may_have_ended_first() {
        let del = delete("Thu, 01 Jan 2026 10:00:05 GMT");
        let why = ended_before(&op("Succeeded", None), &[], &del, &[]).expect("no evidence");
        assert!(why.contains("no endTime"), "{why}");
        let first = op("Succeeded", Some("2026-01-01T10:00:09Z"));
        let no_date = ex(202, &[], Value::Null);
        assert!(ended_before(&first, &[], &no_date, &[]).is_some());
    }

    #[test]
    fn canceled_or_seen_running_after_the_delete_is_judged() {
        let del = delete("Thu, 01 Jan 2026 10:00:05 GMT");
        // Canceled: only the DELETE ends it so.
        assert_eq!(ended_before(&op("Canceled", None), &[], &del, &[]), None);
        // Read running after the DELETE was answered: it outlived the DELETE's arrival.
        let running = op("InProgress", None);
        assert_eq!(
            ended_before(&op("Succeeded", None), &[&running], &del, &[]),
            None
        );
        let done = op("Succeeded", None);
        assert!(ended_before(&op("Succeeded", None), &[&done], &del, &[]).is_some());
    }

    #[test]
    fn reads_of_operations_whose_ids_the_recorder_replaced_are_not_one_operation() {
        use crate::http::Role;
        use crate::rules::testing::{exchange, recorded, with_role};
        let url = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/00000000-0000-0000-0000-000000000000?api-version=2024-05-01";
        let read = |st: &str| {
            with_role(
                exchange("GET", url, 200, &[("x-ms-request-id", "r")], op_status(st)),
                Role::OperationStatus,
            )
        };
        let two = numbered(vec![read("Succeeded"), read("InProgress")]);
        assert_eq!(ambient("OPS-07", &two).0, crate::rules::Outcome::Failed);
        assert_eq!(recorded("OPS-07", &two), crate::rules::Outcome::NotJudged);
    }
}
