//! OPRES: the operation resource an Azure-AsyncOperation URL answers. Every read is checked
//! as it happens (OPRES-01, 02, 04..09); OPRES-03 (a terminal status within the deadline) once
//! the operation has been followed.

use serde_json::Value;

use super::flow::{End, Flow};
use super::{Judge, iso8601};
use crate::http::{Exchange, Role};
use crate::lro::{Channel, Outcome};

/// What the engine judges of OPRES by itself, and on which exchanges (the selection reads it).
/// OPRES-10 is judged on the answer that hands the operation out.
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Follow(None),
    &[
        ("OPRES-10", super::Shows::Write(None)),
        ("OPRES-12", super::Shows::Follow(None)),
    ],
);

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    operation_id_not_exposed(j, ex);
    successive_ids(j, ex);
    if ex.role != Role::OperationStatus {
        return;
    }
    let Some(resp) = &ex.response else { return };
    if !answers_200(j, ex, resp) {
        return;
    }
    let Some(b) = operation_body(j, ex, resp) else {
        return;
    };
    let status = b.get("status").and_then(Value::as_str);
    j.ledger
        .check("OPRES-02", status.is_some(), Some(ex.seq), || {
            (
                "a string `status`".into(),
                format!("status = {}", super::words::json(b.get("status"))),
            )
        });
    identity(j, ex, b);
    times(j, ex, b);
    let Some(st) = status else { return };
    terminal_fields(j, ex, b, st);
    casing(j, ex, st, "status");
}

/// OPRES-01: 200 on every read of an operation resource. False when the read did not.
fn answers_200(j: &mut Judge<'_>, ex: &Exchange, resp: &crate::http::Response) -> bool {
    j.ledger.check("OPRES-01", resp.status == 200, Some(ex.seq), || {
        (
            "200 on every read of an operation resource the RP handed out".into(),
            if (200..300).contains(&resp.status) {
                format!(
                    "{} {} (the read answers 200 whatever the operation's state; its body says whether it runs)",
                    resp.status,
                    crate::http::cut(resp.body.trim(), 80)
                )
            } else {
                format!(
                    "{} (a 4xx/5xx says the read failed, not the operation)",
                    resp.status
                )
            },
        )
    });
    resp.status == 200
}

/// OPRES-02 on a body that is no JSON object: an empty or unparsable body has no `status`
/// either. The object, when it is one.
fn operation_body<'r>(
    j: &mut Judge<'_>,
    ex: &Exchange,
    resp: &'r crate::http::Response,
) -> Option<&'r Value> {
    let b = resp.json.as_ref().filter(|j| j.is_object());
    if b.is_none() {
        j.ledger.fail(
            "OPRES-02",
            "a JSON object with a string `status`",
            if resp.body.trim().is_empty() {
                "an empty body".to_string()
            } else {
                format!("not a JSON object: {}", crate::http::cut(&resp.body, 120))
            },
            Some(ex.seq),
            None,
        );
    }
    b
}

/// OPRES-04 (`id` and `name`, the id's path the URL read) and OPRES-05 (`name` the last
/// segment of `id`).
fn identity(j: &mut Judge<'_>, ex: &Exchange, b: &Value) {
    let seq = Some(ex.seq);
    let id = b.get("id").and_then(Value::as_str);
    let name = b.get("name").and_then(Value::as_str);
    let id_path = id.map(|i| crate::lro::url_path(i).into_owned());
    // Once per operation (its URL), not once per read; paths compared as ARM compares them:
    // percent-decoded and without case (`West%20US/operationResults` is `West US/operationresults`).
    let key = crate::lro::path_key(&ex.url);
    if j.history.ids_judged.insert(key.clone()) {
        j.ledger.check(
            "OPRES-04",
            id.is_some()
                && name.is_some()
                && id_path
                    .as_deref()
                    .is_some_and(|p| crate::lro::path_key(p) == key),
            seq,
            || {
                (
                    "`id` and `name` present, the path of `id` equal to the URL path read (optional but recommended)".into(),
                    format!(
                        "id = {}, name = {}, URL path {}",
                        super::words::text(id),
                        super::words::text(name),
                        crate::lro::url_path(&ex.url)
                    ),
                )
            },
        );
    }
    // The last segment of the id's path (an id written as a URL with `?api-version` has its
    // query cut), compared ignoring case as ARM compares names.
    let last = id_path.as_deref().map(|p| {
        p.trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string()
    });
    name_is_last_segment(j, seq, name, id, last.as_deref());
}

/// OPRES-05: `name` equal to the last segment of `id`, when both are present.
fn name_is_last_segment(
    j: &mut Judge<'_>,
    seq: Option<u64>,
    name: Option<&str>,
    id: Option<&str>,
    last: Option<&str>,
) {
    if let (Some(n), Some(i), Some(last)) = (name, id, last)
        && (j.placeholder(n) || j.placeholder(last))
    {
        j.ledger.not_judged(
            "OPRES-05",
            format!("the recorder replaced the operation's name or id with a placeholder (name = {n}, id = {i})"),
        );
    } else if let (Some(n), Some(i), Some(last)) = (name, id, last) {
        j.ledger
            .check("OPRES-05", n.eq_ignore_ascii_case(last), seq, || {
                (
                    "`name` equal to the last segment of `id`".into(),
                    format!("name = {n}, id = {i}"),
                )
            });
    } else {
        // Both are optional (OPRES-04, a SHOULD, asks for them): "when present" is its subject.
        let absent = match (name, id) {
            (None, None) => "neither `name` nor `id`",
            (None, Some(_)) => "no `name`",
            _ => "no `id` to compare its `name` with",
        };
        j.ledger.not_applicable(
            "OPRES-05",
            format!("the operation resource carries {absent} (optional): OPRES-05 compares a `name` that is present with the last segment of `id`"),
        );
    }
}

/// OPRES-07 (`properties` only on success) and OPRES-08 (a failure's or cancellation's
/// `error`), on a body whose `status` is `st`.
fn terminal_fields(j: &mut Judge<'_>, ex: &Exchange, b: &Value, st: &str) {
    let seq = Some(ex.seq);
    let outcome = Outcome::of_arm(st);
    if b.get("properties").is_some_and(|p| !p.is_null()) {
        j.ledger
            .check("OPRES-07", outcome == Some(Outcome::Succeeded), seq, || {
                (
                    "`properties` only when status is Succeeded".into(),
                    format!("status {st} with properties"),
                )
            });
    }
    let err = b.get("error");
    let nonempty = |k: &str| {
        err.and_then(|e| e.get(k))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    };
    let shown = || {
        format!(
            "error = {}",
            err.map(|e| e.to_string()).unwrap_or("(none)".into())
        )
    };
    match outcome {
        Some(Outcome::Failed) => j.ledger.check(
            "OPRES-08",
            nonempty("code") && nonempty("message"),
            seq,
            || {
                (
                    "status Failed with error.code and error.message".into(),
                    shown(),
                )
            },
        ),
        Some(Outcome::Canceled) => j.ledger.check("OPRES-08", nonempty("code"), seq, || {
            ("status Canceled with error.code".into(), shown())
        }),
        _ => {}
    }
}

/// OPRES-09: a terminal value spelled exactly as 001 names it.
pub(super) fn casing(j: &mut Judge<'_>, ex: &Exchange, value: &str, field: &str) {
    if let Some(o) = Outcome::of_arm(value) {
        j.ledger
            .check("OPRES-09", value == o.as_str(), Some(ex.seq), || {
                (
                    format!("`{field}` spelled {o}"),
                    format!("`{field}` = {value} (Azure SDKs compare case-insensitively)"),
                )
            });
    }
}

/// OPRES-06: startTime/endTime as ISO 8601, percentComplete within 0..100.
fn times(j: &mut Judge<'_>, ex: &Exchange, b: &Value) {
    let mut bad = Vec::new();
    for k in ["startTime", "endTime"] {
        if let Some(v) = b.get(k)
            && !v.is_null()
            && v.as_str().and_then(iso8601::parse).is_none()
        {
            bad.push(format!("{k} = {v}"));
        }
    }
    if let Some(p) = b.get("percentComplete")
        && !p.is_null()
        && !p.as_f64().is_some_and(|v| (0.0..=100.0).contains(&v))
    {
        bad.push(format!("percentComplete = {p}"));
    }
    if ["startTime", "endTime", "percentComplete"]
        .iter()
        .any(|k| b.get(k).is_some_and(|v| !v.is_null()))
    {
        j.ledger
            .check("OPRES-06", bad.is_empty(), Some(ex.seq), || {
                (
                    "ISO 8601 startTime/endTime, percentComplete from 0 to 100".into(),
                    bad.join(", "),
                )
            });
    } else {
        j.ledger.not_applicable(
            "OPRES-06",
            "the operation resource carries no startTime, endTime or percentComplete (all optional): OPRES-06 judges the form of those present",
        );
    }
}

pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.channel != Some(Channel::AzureAsyncOperation) {
        return;
    }
    match &flow.end {
        End::Finished(_) => j.ledger.pass("OPRES-03"),
        End::TimedOut => {
            let last = flow.polls().last();
            j.ledger.fail(
                "OPRES-03",
                format!(
                    "the operation status to become Succeeded, Failed or Canceled within the deadline ({} s)",
                    flow.deadline_secs
                ),
                format!(
                    "after {} polls over {} ms the status was still {}",
                    flow.polls().count(),
                    flow.elapsed_ms,
                    last.map(|(_, s)| s.to_string()).unwrap_or("unread".into())
                ),
                last.map(|(i, _)| exs[i].seq),
                None,
            );
        }
        _ => {}
    }
}

/// An operation URL handed out, as later answers showed it (OPRES-12).
#[derive(Debug, Clone, Default)]
pub(super) struct Handed {
    /// The read that showed the operation ended.
    ended: Option<u64>,
    /// A write that handed the URL out again after it ended: (seq, method).
    again: Option<(u64, String)>,
}

/// The operation id (last path segment) of an operation-shaped URL an answer hands out in
/// `header`, with its path key; `None` for other links (a Location that is the resource).
fn handed_out(j: &Judge<'_>, ex: &Exchange, header: &str) -> Option<(String, String)> {
    let resp = ex.response.as_ref()?;
    let url = crate::lro::resolve(&ex.url, resp.header(header)?)?;
    let key = crate::lro::path_key(&url);
    let mut segs = key.rsplit('/');
    let (id, kind) = (segs.next()?, segs.next()?);
    let operation_shaped = matches!(
        kind,
        "operationresults" | "operationstatuses" | "operationsstatus" | "operations"
    );
    let id = id.to_string();
    (operation_shaped && !id.is_empty() && !j.placeholder(&id)).then_some((id, key))
}

/// OPRES-12: an operation URL that ended and is handed out again must not start a new
/// operation under the old id. Handing a finished operation out again (a repeated request
/// the RP treats as done) is allowed; a read showing it running again is not.
fn successive_ids(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    if ex.method != "GET" {
        for h in ["azure-asyncoperation", "location"] {
            let Some((_, key)) = handed_out(j, ex, h) else {
                continue;
            };
            let entry = j.history.op_urls.or_default(key.clone());
            if entry.ended.is_some() {
                entry.again = Some((ex.seq, ex.method.clone()));
                // Its reads from here on are of whatever operation the URL now names: OPS-07
                // and OPS-08 judge them afresh (a new operation under the old id is this
                // rule's failure, not a terminal status that changed).
                j.history.ops.remove(&key);
            } else {
                j.ledger.pass("OPRES-12");
            }
        }
        return;
    }
    let key = crate::lro::path_key(&ex.url);
    let Some(entry) = j.history.op_urls.get_mut(&key) else {
        return;
    };
    let status = resp
        .json
        .as_ref()
        .and_then(|b| b.get("status"))
        .and_then(Value::as_str);
    let running = match status {
        Some(st) => Outcome::of_arm(st).is_none(),
        None => resp.status == 202,
    };
    if !running {
        if (200..300).contains(&resp.status) {
            entry.ended = Some(ex.seq);
            entry.again = None;
        }
        return;
    }
    if let (Some(ended), Some((again, method))) = (entry.ended, entry.again.take()) {
        entry.ended = None;
        let shown = status.map_or_else(|| resp.status.to_string(), str::to_string);
        j.ledger.fail(
            "OPRES-12",
            "a new operation id for each operation on a resource",
            format!(
                "this operation URL ended (read #{ended}), was handed out again by {method} #{again}, and now reads {shown}: a new operation under the old id"
            ),
            Some(ex.seq),
            None,
        );
    }
}

/// OPRES-10: the operation id an answer hands out (the last segment of an `operationResults`
/// or `operationStatuses` URL) is none of the ids the exchange already exposes: the request's
/// correlation or client request id, the answer's `x-ms-request-id`.
fn operation_id_not_exposed(j: &mut Judge<'_>, ex: &Exchange) {
    if matches!(
        ex.role,
        Role::OperationStatus | Role::LocationPoll | Role::MonitorPoll
    ) {
        return;
    }
    let Some(resp) = &ex.response else { return };
    for h in ["azure-asyncoperation", "location"] {
        let Some((id, _)) = handed_out(j, ex, h) else {
            continue;
        };
        let id = id.as_str();
        let exposed = [
            (
                "the request's x-ms-correlation-request-id",
                ex.request_header("x-ms-correlation-request-id"),
            ),
            (
                "the request's x-ms-client-request-id",
                ex.request_header("x-ms-client-request-id"),
            ),
            (
                "the answer's x-ms-request-id",
                resp.header("x-ms-request-id"),
            ),
        ];
        let same = exposed
            .iter()
            .find(|(_, v)| v.is_some_and(|v| v.trim().eq_ignore_ascii_case(id)));
        j.ledger.check("OPRES-10", same.is_none(), Some(ex.seq), || {
            (
                "an operation id not exposed by other means (not the correlation or request id)".into(),
                format!(
                    "operation id {id} in {h} is {}",
                    same.map(|(w, _)| *w).unwrap_or_default()
                ),
            )
        });
    }
}

#[cfg(test)]
#[path = "opres_tests.rs"]
pub(crate) mod tests;
