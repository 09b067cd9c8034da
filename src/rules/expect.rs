//! Evaluating the expectations a scenario states against what a step produced, and telling
//! when a miss is an earlier failure's doing ([`cause_of_miss`]).

use serde_json::Value;

use super::{Cause, Ledger};
use crate::http::Exchange;
use crate::scenario::{Check, Predicate};
use crate::template::{Scope, value_to_text};

/// What a step produced, as expectations see it.
#[derive(Debug, Default)]
pub struct Subject<'a> {
    /// The response checked: the step's response, or a poll's final answer.
    pub exchange: Option<&'a Exchange>,
    /// All items of all pages (`pages: all`).
    pub items: Option<&'a [Value]>,
    /// A poll's outcome: Succeeded, Failed, Canceled, or why it has none.
    pub outcome: Option<&'a str>,
}

/// Why a check did not pass.
#[derive(Debug)]
pub enum Miss {
    /// The target did not do what the rule says: (expected, seen).
    Failed(String, String),
    /// The check could not be made (a variable the scenario needs is missing): a runner error.
    Broken(String),
}

impl From<(String, String)> for Miss {
    fn from((e, s): (String, String)) -> Self {
        Miss::Failed(e, s)
    }
}

/// `Ok(())` when the check holds.
pub fn evaluate(check: &Check, subject: &Subject<'_>, scope: &Scope) -> Result<(), Miss> {
    match check {
        Check::Status(codes) => status(codes, subject),
        Check::StatusFrom(t) => {
            let v = t.render_value(scope).map_err(Miss::Broken)?;
            let codes: Vec<u16> = match &v {
                Value::Array(a) => a.iter().filter_map(status_of).collect(),
                other => status_of(other).into_iter().collect(),
            };
            if codes.is_empty() {
                return Err(Miss::Broken(format!("`{v}` is not a status code")));
            }
            evaluate(&Check::Status(codes), subject, scope)
        }
        Check::Header {
            name,
            predicate,
            ignore_case,
        } => header(name, predicate, *ignore_case, subject, scope),
        Check::Value {
            template,
            predicate,
            ignore_case,
        } => {
            let v = template.render_value(scope).map_err(Miss::Broken)?;
            let v = (!v.is_null()).then_some(v);
            test(predicate, v.as_ref(), scope, *ignore_case).map_err(|m| prefix(m, "value"))
        }
        Check::Pointer {
            pointer,
            predicate,
            ignore_case,
        } => body_pointer(pointer, predicate, *ignore_case, subject, scope),
        Check::Schema { file, validator } => schema(file, validator, subject),
        Check::Outcome(want) => {
            let got = subject.outcome.unwrap_or("no outcome");
            if want.iter().any(|w| w.eq_ignore_ascii_case(got)) {
                Ok(())
            } else {
                Err(Miss::Failed(
                    format!("operation ends {}", want.join(" or ")),
                    got.to_string(),
                ))
            }
        }
        Check::ListContains(t) => listed(t, true, subject, scope),
        Check::ListOmits(t) => listed(t, false, subject, scope),
    }
}

/// The checked response, if the step had one.
fn response<'a>(subject: &Subject<'a>) -> Option<&'a crate::http::Response> {
    subject.exchange.and_then(|e| e.response.as_ref())
}

/// What was seen when there is no response to check: the exchange's error, if any.
fn no_response(subject: &Subject<'_>) -> String {
    subject
        .exchange
        .and_then(|e| e.error.clone())
        .unwrap_or_else(|| "no response to check".into())
}

/// A name that may be a template, rendered.
fn rendered(text: &str, scope: &Scope) -> Result<String, Miss> {
    if !text.contains("${") {
        return Ok(text.to_string());
    }
    crate::template::Template::parse(text)
        .map_err(|(_, m)| Miss::Broken(m))?
        .render(scope)
        .map_err(Miss::Broken)
}

/// `status`: one of the codes.
fn status(codes: &[u16], subject: &Subject<'_>) -> Result<(), Miss> {
    let want = super::words::statuses(codes);
    match response(subject) {
        Some(r) if codes.contains(&r.status) => Ok(()),
        Some(r) => Err(Miss::Failed(
            format!("status {want}"),
            format!("status {}{}", r.status, error_hint(r.json.as_ref())),
        )),
        None => Err(Miss::Failed(format!("status {want}"), no_response(subject))),
    }
}

/// `header`: the predicate on the header's value.
fn header(
    name: &str,
    predicate: &Predicate,
    ignore_case: bool,
    subject: &Subject<'_>,
    scope: &Scope,
) -> Result<(), Miss> {
    let Some(r) = response(subject) else {
        return Err(Miss::Failed(format!("header {name}"), no_response(subject)));
    };
    let name = rendered(name, scope)?;
    let v = r.header(&name).map(|s| Value::String(s.to_string()));
    test(predicate, v.as_ref(), scope, ignore_case)
        .map_err(|m| prefix(m, &format!("header {name}")))
}

/// `pointer`: the predicate on the value at a JSON Pointer into the body.
fn body_pointer(
    pointer: &str,
    predicate: &Predicate,
    ignore_case: bool,
    subject: &Subject<'_>,
    scope: &Scope,
) -> Result<(), Miss> {
    let pointer = rendered(pointer, scope)?;
    let Some(r) = response(subject) else {
        return Err(Miss::Failed(
            format!("body {pointer}"),
            no_response(subject),
        ));
    };
    let Some(j) = &r.json else {
        if matches!(predicate, Predicate::Absent) {
            return Ok(());
        }
        return Err(Miss::Failed(
            format!("body {pointer}"),
            format!(
                "no JSON body ({})",
                r.json_error.clone().unwrap_or("empty".into())
            ),
        ));
    };
    let shown = if pointer.is_empty() {
        "body".to_string()
    } else {
        format!("body {pointer}")
    };
    test(predicate, j.pointer(&pointer), scope, ignore_case).map_err(|m| prefix(m, &shown))
}

/// `schema`: the body is valid against the schema file.
fn schema(
    file: &str,
    validator: &jsonschema::Validator,
    subject: &Subject<'_>,
) -> Result<(), Miss> {
    let Some(r) = response(subject) else {
        return Err(Miss::Failed(
            format!("body valid against {file}"),
            no_response(subject),
        ));
    };
    let Some(j) = &r.json else {
        return Err(Miss::Failed(
            format!("body valid against {file}"),
            format!(
                "no JSON body ({})",
                r.json_error.clone().unwrap_or("empty".into())
            ),
        ));
    };
    let errors: Vec<String> = validator
        .iter_errors(j)
        .take(5)
        .map(|e| format!("{} at `{}`", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Miss::Failed(
            format!("body valid against {file}"),
            errors.join("; "),
        ))
    }
}

/// `list_contains` / `list_omits`: the collection (all pages', or the body's `value`) lists
/// the item (or does not).
fn listed(
    t: &crate::template::Template,
    contains: bool,
    subject: &Subject<'_>,
    scope: &Scope,
) -> Result<(), Miss> {
    let id = t.render(scope).map_err(Miss::Broken)?;
    let items: Vec<&Value> = match subject.items {
        Some(items) => items.iter().collect(),
        None => response(subject)
            .and_then(|r| r.json.as_ref())
            .and_then(|j| j.get("value"))
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default(),
    };
    // An item is named by its `id`; one without (an operations API entry) by `name`.
    let found = items.iter().any(|i| {
        i.get("id")
            .or_else(|| i.get("name"))
            .and_then(Value::as_str)
            .is_some_and(|x| {
                x.trim_end_matches('/')
                    .eq_ignore_ascii_case(id.trim_end_matches('/'))
            })
    });
    if found == contains {
        return Ok(());
    }
    let verb = if contains { "lists" } else { "does not list" };
    Err(Miss::Failed(
        format!("the collection {verb} {id}"),
        format!(
            "{} items, {}",
            items.len(),
            if found {
                "including it"
            } else {
                "not including it"
            }
        ),
    ))
}

/// Rules whose failure leaves a followed operation without what a client would have read: its
/// Location not followed (LOC-01, LOC-02), its status URL not followed or not answering an
/// operation resource (AAO-01, AAO-02, OPRES-01, OPRES-02), no terminal status in time
/// (OPRES-03, LOC-08), a task or monitor that cannot be followed (a reused task id, a task
/// that never ends or names no resource, a resource answered with a task: TASK-01, TASK-02,
/// TASK-03, TASK-05; no Operation-Location: MON-01).
const FOLLOWING: &[&str] = &[
    "LOC-01", "LOC-02", "LOC-08", "AAO-01", "AAO-02", "OPRES-01", "OPRES-02", "OPRES-03",
    "TASK-01", "TASK-02", "TASK-03", "TASK-05", "MON-01",
];

/// OPS-12 (ids matched case-insensitively), a rule the suites state: family modules that wait
/// on its failure name it through this constant, so the engine's own rule list (the IDs its
/// family sources quote) does not count it among the rules the engine judges.
pub(crate) const CASE_INSENSITIVE_IDS: &str = "OPS-12";

/// Rules whose failure means an operation never ended: everything the test reads after it
/// (the resource's state, a collection, a repeated request) waits on an end that never came.
const NEVER_ENDED: &[&str] = &["OPRES-03", "LOC-08"];

/// Why a stated check that missed is an earlier failure's doing, not the cited rules': a rule
/// the check depends on failed on the exchanges it reads. `before` are the test's exchanges up
/// to the end of the step (a followed operation acts on what earlier steps made: a resource
/// whose reads could not be made is no base for it); the cited rules are never their own
/// cause. A cited rule that restates the cause (ETAG-18 "answers per DEL-01", the catalogue's
/// `restates`) is not judged past it either: one defect, one failed rule.
/// The checks and what they depend on:
///
/// - anything read from a followed operation (its outcome, its result): the [`FOLLOWING`]
///   rules, on any of those exchanges;
/// - anything at all: an operation of the test that never ended ([`NEVER_ENDED`]);
/// - a pointer into `/error`: the error envelope (ERR-01, ERR-02) of the answer read;
/// - `/id`, or a collection listing a resource: the ids the RP answered in the test (RES-02);
/// - a status: an operation-status read that failed as such (OPRES-01), or a DELETE answered
///   against DEL-01, on the answer read.
///
/// Called only on a miss: a check that passes is judged whatever failed before.
pub fn cause_of_miss(
    check: &Check,
    subject: &Subject<'_>,
    before: &[&Exchange],
    ledger: &Ledger,
    cited: &[&str],
) -> Option<(Cause, &'static str)> {
    let causes = |rules: &[&'static str]| -> Vec<&'static str> {
        rules
            .iter()
            .copied()
            .filter(|r| !cited.contains(r))
            .collect()
    };
    let all = || {
        before
            .iter()
            .map(|x| x.seq)
            .chain(subject.exchange.map(|x| x.seq))
    };
    if subject.outcome.is_some()
        && let Some(c) = ledger.cause_among(all(), &causes(FOLLOWING))
    {
        return Some((
            c,
            "the operation could not be followed as a client follows it, so its outcome and result are not the ones this check reads",
        ));
    }
    if let Some(c) = ledger.cause_among(all(), &causes(NEVER_ENDED)) {
        return Some((
            c,
            "an operation of this test never reached a terminal status, so what the test reads after it waits on an end that never came",
        ));
    }
    let read = subject.exchange.map(|x| x.seq);
    // ARM's front door answered itself: the RP's answer never came to be read.
    if let Some(c) = ledger.cause_among(read, &causes(&["FD-08"])) {
        return Some((
            c,
            "the RP did not answer within ARM's 60 s: the answer read is ARM's 504",
        ));
    }
    match check {
        Check::Pointer { pointer, .. } if pointer.starts_with("/systemData") => ledger
            .cause_among(read, &causes(&["RES-06"]))
            .map(|c| (c, "the answer's systemData is malformed, so its values cannot be compared")),
        Check::Pointer { pointer, .. } if pointer.starts_with("/error") => ledger
            .cause_among(read, &causes(&["ERR-01", "ERR-02"]))
            .map(|c| (c, "the answer has no error envelope to read the field from")),
        Check::Pointer { pointer, .. } if pointer == "/id" => ledger
            .cause_among(all(), &causes(&["RES-02"]))
            .map(|c| (c, "the RP answers ids that are not the resources' paths, so an id cannot be compared")),
        Check::ListContains(_) | Check::ListOmits(_) => ledger
            .cause_among(all(), &causes(&["RES-02"]))
            .map(|c| (c, "the RP answers ids that are not the resources' paths, so a collection cannot be searched for one")),
        Check::Status(_) | Check::StatusFrom(_) => ledger
            .cause_among(read, &causes(&["OPRES-01", "DEL-01"]))
            .map(|c| {
                (
                    c,
                    "the answer already broke that rule, so its status says nothing more about this one",
                )
            }),
        _ => None,
    }
}

fn status_of(v: &Value) -> Option<u16> {
    match v {
        Value::Number(n) => n
            .as_u64()
            .filter(|c| (100..600).contains(c))
            .map(|c| c as u16),
        Value::String(s) => s
            .trim()
            .parse::<u16>()
            .ok()
            .filter(|c| (100..600).contains(c)),
        _ => None,
    }
}

fn error_hint(j: Option<&Value>) -> String {
    match j
        .and_then(|j| j.get("error"))
        .and_then(|e| e.get("code"))
        .and_then(Value::as_str)
    {
        Some(code) => format!(" (error.code {code})"),
        None => String::new(),
    }
}

fn eq(a: &Value, b: &Value, ignore_case: bool) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) if ignore_case => x.eq_ignore_ascii_case(y),
        _ => a == b,
    }
}

/// `have` has every field of `want` with the same value; objects compare as subsets.
fn contains(have: &Value, want: &Value, ignore_case: bool) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => {
            // A null in the expected value means "any value, or none".
            w.iter().all(|(k, wv)| {
                wv.is_null() || h.get(k).is_some_and(|hv| contains(hv, wv, ignore_case))
            })
        }
        _ => eq(have, want, ignore_case),
    }
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "absent".into(),
        Some(v) => crate::http::cut(&v.to_string(), 200),
    }
}

fn prefix(m: Miss, what: &str) -> Miss {
    match m {
        Miss::Failed(e, s) => Miss::Failed(format!("{what} {e}"), s),
        b => b,
    }
}

fn test(p: &Predicate, v: Option<&Value>, scope: &Scope, ignore_case: bool) -> Result<(), Miss> {
    let render = |jt: &crate::template::JsonTemplate| jt.render(scope).map_err(Miss::Broken);
    match p {
        Predicate::Present => v
            .map(|_| ())
            .ok_or_else(|| Miss::Failed("present".into(), "absent".into())),
        Predicate::Absent => match v {
            None => Ok(()),
            Some(x) => Err(Miss::Failed("absent".into(), show(Some(x)))),
        },
        Predicate::Equals(jt) => {
            let want = render(jt)?;
            match v {
                Some(x) if eq(x, &want, ignore_case) => Ok(()),
                _ => Err(Miss::Failed(
                    format!("= {}", crate::http::cut(&want.to_string(), 200)),
                    show(v),
                )),
            }
        }
        Predicate::NotEquals(jt) => {
            let want = render(jt)?;
            match v {
                Some(x) if eq(x, &want, ignore_case) => Err(Miss::Failed(
                    format!("≠ {}", crate::http::cut(&want.to_string(), 200)),
                    show(v),
                )),
                None => Err(Miss::Failed(
                    format!("present and ≠ {}", crate::http::cut(&want.to_string(), 200)),
                    "absent".into(),
                )),
                _ => Ok(()),
            }
        }
        Predicate::Contains(jt) => {
            let want = render(jt)?;
            match v {
                // A string contains a text; an object the expected fields.
                Some(Value::String(have)) if want.is_string() => {
                    let w = value_to_text(&want);
                    let found = if ignore_case {
                        have.to_lowercase().contains(&w.to_lowercase())
                    } else {
                        have.contains(&w)
                    };
                    if found {
                        Ok(())
                    } else {
                        Err(Miss::Failed(
                            format!("containing {}", Value::from(w.as_str())),
                            show(v),
                        ))
                    }
                }
                Some(x) if contains(x, &want, ignore_case) => Ok(()),
                _ => Err(Miss::Failed(
                    format!("containing {}", crate::http::cut(&want.to_string(), 200)),
                    show(v),
                )),
            }
        }
        Predicate::Matches(re) => match v {
            Some(x) if re.is_match(&value_to_text(x)) => Ok(()),
            _ => Err(Miss::Failed(format!("matching /{}/", re.as_str()), show(v))),
        },
        Predicate::OneOf(list) | Predicate::NotOneOf(list) => {
            let wants: Vec<Value> = list.iter().map(render).collect::<Result<_, _>>()?;
            let hit = v.is_some_and(|x| wants.iter().any(|w| eq(x, w, ignore_case)));
            let shown = wants
                .iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            match p {
                Predicate::OneOf(_) if hit => Ok(()),
                Predicate::OneOf(_) => Err(Miss::Failed(format!("one of {shown}"), show(v))),
                _ if !hit && v.is_some() => Ok(()),
                _ => Err(Miss::Failed(
                    format!("present and none of {shown}"),
                    show(v),
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{exchange, with_seq};
    use serde_json::json;

    fn outcome() -> Check {
        Check::Outcome(vec!["Succeeded".into()])
    }

    fn error_code() -> Check {
        Check::Pointer {
            pointer: "/error/code".into(),
            predicate: Predicate::Present,
            ignore_case: false,
        }
    }

    #[test]
    fn a_followed_operation_that_could_not_be_followed_names_the_cause() {
        let start = with_seq(exchange("PUT", "http://h/w/a", 202, &[], json!({})), 3);
        let last = with_seq(
            exchange(
                "GET",
                "http://h/ops/1",
                200,
                &[],
                json!({"status": "Completed"}),
            ),
            9,
        );
        let subject = Subject {
            exchange: Some(&last),
            items: None,
            outcome: Some("timed out after 10 s"),
        };
        let mut l = Ledger::default();
        l.step = Some("done".into());
        // Nothing failed before: the miss is the cited rule's.
        assert!(cause_of_miss(&outcome(), &subject, &[&start, &last], &l, &["ACT-02"]).is_none());
        l.fail("OPRES-03", "terminal", "Completed", Some(9), None);
        let (c, why) =
            cause_of_miss(&outcome(), &subject, &[&start, &last], &l, &["ACT-02"]).unwrap();
        assert_eq!(
            c.to_string(),
            "OPRES-03 failed at exchange #9 (step `done`)"
        );
        assert!(why.contains("could not be followed"), "{why}");
        // A rule is never its own cause.
        assert!(cause_of_miss(&outcome(), &subject, &[&start, &last], &l, &["OPRES-03"]).is_none());
        // A failure that does not stop following is no cause.
        let mut other = Ledger::default();
        other.fail("OPRES-06", "ISO 8601", "11/22/2026", Some(9), None);
        assert!(
            cause_of_miss(&outcome(), &subject, &[&start, &last], &other, &["ACT-02"]).is_none()
        );
    }

    #[test]
    fn an_error_field_is_not_judged_past_a_missing_envelope() {
        let flat = with_seq(
            exchange(
                "GET",
                "http://h/w",
                400,
                &[],
                json!({"code": "X", "message": "m"}),
            ),
            4,
        );
        let subject = Subject {
            exchange: Some(&flat),
            ..Default::default()
        };
        let mut l = Ledger::default();
        assert!(cause_of_miss(&error_code(), &subject, &[&flat], &l, &["API-03"]).is_none());
        l.fail("ERR-01", "an error object", "none", Some(4), None);
        let (c, _) = cause_of_miss(&error_code(), &subject, &[&flat], &l, &["API-03"]).unwrap();
        assert_eq!(c.rule, "ERR-01");
        // A status check does not read the envelope.
        assert!(
            cause_of_miss(
                &Check::Status(vec![400]),
                &subject,
                &[&flat],
                &l,
                &["API-03"]
            )
            .is_none()
        );
    }

    #[test]
    fn a_status_read_that_failed_as_such_decides_a_status_check() {
        let read = with_seq(exchange("GET", "http://h/ops/1", 404, &[], json!({})), 5);
        let subject = Subject {
            exchange: Some(&read),
            ..Default::default()
        };
        let mut l = Ledger::default();
        let status = Check::Status(vec![200, 202]);
        assert!(cause_of_miss(&status, &subject, &[&read], &l, &["OPS-05"]).is_none());
        l.fail("OPRES-01", "200", "404", Some(5), None);
        let (c, _) = cause_of_miss(&status, &subject, &[&read], &l, &["OPS-05"]).unwrap();
        assert_eq!(c.rule, "OPRES-01");
    }

    #[test]
    fn a_rule_that_restates_the_cause_is_not_judged_past_it() {
        let del = with_seq(exchange("DELETE", "http://h/w/c", 204, &[], json!(null)), 6);
        let subject = Subject {
            exchange: Some(&del),
            ..Default::default()
        };
        let mut l = Ledger::default();
        l.fail("DEL-01", "200 or 202", "204", Some(6), None);
        let status = Check::Status(vec![200, 202]);
        // OPS-12 speaks of casing: the DELETE's status is DEL-01's.
        let (c, _) = cause_of_miss(&status, &subject, &[&del], &l, &["OPS-12"]).unwrap();
        assert_eq!(c.rule, "DEL-01");
        // ETAG-18 says "200, or 202 per DEL-01": it only restates DEL-01's failure.
        let (c, _) = cause_of_miss(&status, &subject, &[&del], &l, &["ETAG-18"]).unwrap();
        assert_eq!((c.rule, c.seq), ("DEL-01", 6));
    }

    #[test]
    fn an_operation_that_never_ended_decides_what_the_test_reads_after_it() {
        let poll = with_seq(
            exchange(
                "GET",
                "http://h/ops/1",
                200,
                &[],
                json!({"status": "Completed"}),
            ),
            2,
        );
        let list = with_seq(
            exchange("GET", "http://h/w", 200, &[], json!({"value": []})),
            8,
        );
        let subject = Subject {
            exchange: Some(&list),
            ..Default::default()
        };
        let omits = Check::Status(vec![404]);
        let mut l = Ledger::default();
        assert!(cause_of_miss(&omits, &subject, &[&poll, &list], &l, &["RGDEL-03"]).is_none());
        l.fail("OPRES-03", "terminal", "Completed", Some(2), None);
        let (c, why) = cause_of_miss(&omits, &subject, &[&poll, &list], &l, &["RGDEL-03"]).unwrap();
        assert_eq!(c.rule, "OPRES-03");
        assert!(why.contains("never reached a terminal status"), "{why}");
    }

    #[test]
    fn an_id_is_not_compared_past_wrong_ids() {
        let put = with_seq(
            exchange("PUT", "http://h/w/a", 201, &[], json!({"id": "/w/a"})),
            1,
        );
        let get = with_seq(
            exchange("GET", "http://h/w/A", 200, &[], json!({"id": "/w/a"})),
            4,
        );
        let subject = Subject {
            exchange: Some(&get),
            ..Default::default()
        };
        let id = Check::Pointer {
            pointer: "/id".into(),
            predicate: Predicate::Present,
            ignore_case: false,
        };
        let mut l = Ledger::default();
        assert!(cause_of_miss(&id, &subject, &[&put, &get], &l, &["OPS-13"]).is_none());
        l.fail("RES-02", "id = path", "/w/a", Some(1), None);
        let (c, _) = cause_of_miss(&id, &subject, &[&put, &get], &l, &["OPS-13"]).unwrap();
        assert_eq!((c.rule, c.seq), ("RES-02", 1));
    }
}
