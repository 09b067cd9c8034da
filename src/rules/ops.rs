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
    let err = b.get(error_field).cloned().unwrap_or(Value::Null);
    let seq = Some(ex.seq);
    let h = j.history.ops.entry(key).or_default().clone();
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
    let start = b.get("startTime").and_then(Value::as_str);
    let end = b
        .get("endTime")
        .and_then(Value::as_str)
        .and_then(iso8601::parse);
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
