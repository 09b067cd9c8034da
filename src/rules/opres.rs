//! OPRES: the operation resource an Azure-AsyncOperation URL answers. Every read is checked
//! as it happens (OPRES-01, 02, 04..09); OPRES-03 (a terminal status within the deadline) once
//! the operation has been followed.

use serde_json::Value;

use super::flow::{End, Flow};
use super::{Judge, iso8601};
use crate::http::{Exchange, Role};
use crate::lro::{Channel, Outcome};

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    if ex.role != Role::OperationStatus {
        return;
    }
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
    j.ledger.check("OPRES-01", resp.status == 200, seq, || {
        (
            "200 on every read of an operation resource the RP handed out".into(),
            format!(
                "{} (a 4xx/5xx says the read failed, not the operation)",
                resp.status
            ),
        )
    });
    if resp.status != 200 {
        return;
    }
    let Some(b) = resp.json.as_ref().filter(|j| j.is_object()) else {
        // An empty or unparsable body has no `status` either.
        j.ledger.fail(
            "OPRES-02",
            "a JSON object with a string `status`",
            if resp.body.trim().is_empty() {
                "an empty body".to_string()
            } else {
                format!("not a JSON object: {}", crate::http::cut(&resp.body, 120))
            },
            seq,
            None,
        );
        return;
    };
    let status = b.get("status").and_then(Value::as_str);
    j.ledger.check("OPRES-02", status.is_some(), seq, || {
        (
            "a string `status`".into(),
            format!("status = {:?}", b.get("status")),
        )
    });
    let path = url::Url::parse(&ex.url)
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    let id = b.get("id").and_then(Value::as_str);
    let name = b.get("name").and_then(Value::as_str);
    let id_path = id.map(|i| {
        url::Url::parse(i)
            .map(|u| u.path().to_string())
            .unwrap_or_else(|_| i.split('?').next().unwrap_or(i).to_string())
    });
    j.ledger.check(
        "OPRES-04",
        id.is_some()
            && name.is_some()
            && id_path
                .as_deref()
                .is_some_and(|p| p.trim_end_matches('/').eq_ignore_ascii_case(path.trim_end_matches('/'))),
        seq,
        || {
            (
                "`id` and `name` present, the path of `id` equal to the URL path read (optional but recommended)".into(),
                format!("id = {id:?}, name = {name:?}, URL path {path}"),
            )
        },
    );
    if let (Some(n), Some(i)) = (name, id) {
        let last = i.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        j.ledger.check("OPRES-05", n == last, seq, || {
            (
                "`name` equal to the last segment of `id`".into(),
                format!("name = {n}, id = {i}"),
            )
        });
    }
    times(j, ex, b);
    let Some(st) = status else { return };
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
    casing(j, ex, st, "status");
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
                    last.map(|(_, s)| format!("{s:?}")).unwrap_or("unread".into())
                ),
                last.map(|(i, _)| exs[i].seq),
                None,
            );
        }
        _ => {}
    }
}
