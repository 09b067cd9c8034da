//! ERR: the error envelope on every ARM 4xx/5xx answer (HEAD answers carry no body): its
//! shape (ERR-01..03), a Pascal-cased code (ERR-04) and the `additionalInfo` shape (ERR-05).

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
    // A member set to null is absent (`"details": null`, `"target": null`).
    if let Some(details) = err.get("details").filter(|d| !d.is_null()) {
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
    if let Some(t) = err.get("target").filter(|t| !t.is_null()) {
        j.ledger.check("ERR-03", t.is_string(), seq, || {
            ("error.target as a string".into(), t.to_string())
        });
    }
    if let Some(code) = err
        .get("code")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
    {
        j.ledger.check("ERR-04", pascal_cased(code), seq, || {
            (
                "a Pascal-cased error.code (like BadArgument)".into(),
                format!("code `{}`", cut(code, 80)),
            )
        });
    }
    // additionalInfo of the error and of each detail.
    let infos: Vec<&Value> = std::iter::once(err)
        .chain(
            err.get("details")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .filter_map(|e| e.get("additionalInfo").filter(|i| !i.is_null()))
        .collect();
    for info in infos {
        j.ledger.check("ERR-05", additional_info_ok(info), seq, || {
            (
                "additionalInfo: an array of {type: string, info: object}".into(),
                cut(&info.to_string(), 200),
            )
        });
    }
}

/// Pascal case: an upper-case letter, then letters and digits; dotted sub-codes
/// (`Conflict.Locked`) are Pascal-cased part by part.
fn pascal_cased(code: &str) -> bool {
    code.split('.').all(|part| {
        let mut c = part.chars();
        c.next().is_some_and(|f| f.is_ascii_uppercase()) && c.all(|x| x.is_ascii_alphanumeric())
    })
}

fn additional_info_ok(v: &Value) -> bool {
    v.as_array().is_some_and(|a| {
        a.iter().all(|x| {
            x.get("type").is_some_and(Value::is_string)
                && x.get("info").is_some_and(Value::is_object)
        })
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::rules::Outcome;
    use crate::rules::testing::{Case, WIDGET, ambient, exchange, failing, passing, run_cases};
    use serde_json::{Value, json};

    fn refused(rule: &str, body: Value) -> Outcome {
        let ex = exchange("PUT", WIDGET, 400, &[("x-ms-request-id", "r-1")], body);
        ambient(rule, &[ex]).0
    }

    fn envelope(extra: Value) -> Value {
        let mut e = json!({"code": "InvalidBody", "message": "size must be a number"});
        if let (Some(e), Some(x)) = (e.as_object_mut(), extra.as_object()) {
            e.extend(x.clone());
        }
        json!({ "error": e })
    }

    /// ERR-01..05, each shown failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("ERR-01", "a flat {code, message} body", || {
            refused("ERR-01", json!({"code": "InvalidBody", "message": "bad"}))
        }),
        failing("ERR-01", "a JSON string holding the envelope", || {
            refused(
                "ERR-01",
                json!(r#"{"error": {"code": "X", "message": "m"}}"#),
            )
        }),
        failing("ERR-01", "`error` a string", || {
            refused("ERR-01", json!({"error": "bad"}))
        }),
        passing("ERR-01", "the error envelope", || {
            refused("ERR-01", envelope(json!({})))
        }),
        failing("ERR-02", "an empty error.message", || {
            refused(
                "ERR-02",
                json!({"error": {"code": "InvalidBody", "message": " "}}),
            )
        }),
        failing("ERR-02", "no error.code", || {
            refused("ERR-02", json!({"error": {"message": "bad"}}))
        }),
        passing("ERR-02", "code and message", || {
            refused("ERR-02", envelope(json!({})))
        }),
        failing("ERR-03", "error.details an object", || {
            refused(
                "ERR-03",
                envelope(json!({"details": {"code": "A", "message": "a"}})),
            )
        }),
        failing("ERR-03", "a detail without message", || {
            refused("ERR-03", envelope(json!({"details": [{"code": "A"}]})))
        }),
        failing("ERR-03", "error.target a number", || {
            refused("ERR-03", envelope(json!({"target": 7})))
        }),
        passing(
            "ERR-03",
            "details of {code, message}, target null (absent)",
            || {
                refused(
                    "ERR-03",
                    envelope(json!({"details": [{"code": "A", "message": "a"}], "target": null})),
                )
            },
        ),
        passing(
            "ERR-03",
            "details of {code, message} and a string target",
            || {
                let extra = json!({"details": [{"code": "A", "message": "a"}], "target": "size"});
                refused("ERR-03", envelope(extra))
            },
        ),
        failing("ERR-04", "a snake_case error.code", || {
            refused(
                "ERR-04",
                json!({"error": {"code": "invalid_body", "message": "bad"}}),
            )
        }),
        passing(
            "ERR-04",
            "a Pascal-cased code, and a dotted sub-code",
            || {
                let dotted = json!({"error": {"code": "Conflict.Locked", "message": "m"}});
                match (
                    refused("ERR-04", envelope(json!({}))),
                    refused("ERR-04", dotted),
                ) {
                    (Outcome::Passed, Outcome::Passed) => Outcome::Passed,
                    (a, b) => {
                        if a == Outcome::Passed {
                            b
                        } else {
                            a
                        }
                    }
                }
            },
        ),
        failing("ERR-05", "additionalInfo an object", || {
            refused(
                "ERR-05",
                envelope(json!({"additionalInfo": {"type": "T", "info": {}}})),
            )
        }),
        failing(
            "ERR-05",
            "a detail's additionalInfo with a string info",
            || {
                let d = json!({"details": [{"code": "A", "message": "a",
                                        "additionalInfo": [{"type": "T", "info": "x"}]}]});
                refused("ERR-05", envelope(d))
            },
        ),
        passing("ERR-05", "additionalInfo of {type, info}", || {
            refused(
                "ERR-05",
                envelope(
                    json!({"additionalInfo": [{"type": "PolicyViolation", "info": {"a": 1}}]}),
                ),
            )
        }),
    ];

    #[test]
    fn err_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn a_head_answer_and_a_success_are_not_judged() {
        let head = exchange(
            "HEAD",
            WIDGET,
            404,
            &[("x-ms-request-id", "r-1")],
            Value::Null,
        );
        assert_eq!(ambient("ERR-01", &[head]).0, Outcome::NotJudged);
        let ok = exchange("GET", WIDGET, 200, &[("x-ms-request-id", "r-1")], json!({}));
        assert_eq!(ambient("ERR-01", &[ok]).0, Outcome::NotJudged);
    }

    #[test]
    fn err_03_is_not_judged_without_details_or_target() {
        assert_eq!(refused("ERR-03", envelope(json!({}))), Outcome::NotJudged);
    }
}
