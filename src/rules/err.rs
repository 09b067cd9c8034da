//! ERR: the error envelope on every ARM 4xx/5xx answer (HEAD answers carry no body).

use serde_json::Value;

use super::Judge;
use crate::http::{Exchange, cut};

/// `error.code` and `error.message` as non-empty strings, when the body has an error object.
pub(crate) fn has_code_and_message(body: Option<&Value>) -> bool {
    let err = body.and_then(|b| b.get("error"));
    let nonempty = |k: &str| {
        err.and_then(|e| e.get(k))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    };
    nonempty("code") && nonempty("message")
}

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    if resp.status < 400 || ex.method == "HEAD" {
        return;
    }
    let seq = Some(ex.seq);
    let err = resp
        .json
        .as_ref()
        .and_then(|j| j.get("error"))
        .filter(|e| e.is_object());
    let Some(err) = err else {
        let seen = match (&resp.json, &resp.json_error) {
            (Some(Value::String(s)), _) if s.contains("\"error\"") => format!(
                "{} with a JSON string that holds the envelope as text: {}",
                resp.status,
                cut(s, 200)
            ),
            (Some(v), _) if v.get("code").is_some() => format!(
                "{} with a flat {{code, message}} object, no `error` wrapper: {}",
                resp.status,
                cut(&v.to_string(), 200)
            ),
            (Some(v), _) => format!(
                "{} body without a top-level `error` object: {}",
                resp.status,
                cut(&v.to_string(), 200)
            ),
            (None, Some(e)) => format!("{} with a body that is not JSON ({e})", resp.status),
            (None, None) => format!("{} with an empty body", resp.status),
        };
        j.ledger
            .fail("ERR-01", r#"a JSON body {"error": {...}}"#, seen, seq, None);
        return;
    };
    j.ledger.pass("ERR-01");
    j.ledger.check(
        "ERR-02",
        has_code_and_message(resp.json.as_ref()),
        seq,
        || {
            (
                "error.code and error.message as non-empty strings".into(),
                format!("error = {}", cut(&err.to_string(), 200)),
            )
        },
    );
    if let Some(details) = err.get("details") {
        let ok = details.as_array().is_some_and(|a| {
            a.iter().all(|d| {
                d.get("code").is_some_and(Value::is_string)
                    && d.get("message").is_some_and(Value::is_string)
            })
        });
        j.ledger.check("ERR-03", ok, seq, || {
            (
                "error.details: an array of {code, message} objects".into(),
                cut(&details.to_string(), 200),
            )
        });
    }
    if let Some(t) = err.get("target") {
        j.ledger.check("ERR-03", t.is_string(), seq, || {
            ("error.target as a string".into(), t.to_string())
        });
    }
}
