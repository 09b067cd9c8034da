//! Evaluating the expectations a scenario states against what a step produced.

use serde_json::Value;

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

/// `Ok(())` when the check holds; otherwise (expected, seen).
pub fn evaluate(check: &Check, subject: &Subject<'_>, scope: &Scope) -> Result<(), (String, String)> {
    let resp = subject.exchange.and_then(|e| e.response.as_ref());
    let no_resp = || {
        let why = subject
            .exchange
            .and_then(|e| e.error.clone())
            .unwrap_or_else(|| "no response to check".into());
        why
    };
    match check {
        Check::Status(codes) => {
            let want = codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or ");
            match resp {
                Some(r) if codes.contains(&r.status) => Ok(()),
                Some(r) => Err((format!("status {want}"), format!("status {}{}", r.status, error_hint(r.json.as_ref())))),
                None => Err((format!("status {want}"), no_resp())),
            }
        }
        Check::Header { name, predicate, ignore_case } => {
            let Some(r) = resp else { return Err((format!("header {name}"), no_resp())) };
            let v = r.header(name).map(|s| Value::String(s.to_string()));
            test(predicate, v.as_ref(), scope, *ignore_case).map_err(|(e, s)| (format!("header {name} {e}"), s))
        }
        Check::Pointer { pointer, predicate, ignore_case } => {
            let Some(r) = resp else { return Err((format!("body {pointer}"), no_resp())) };
            let Some(j) = &r.json else {
                if matches!(predicate, Predicate::Absent) {
                    return Ok(());
                }
                return Err((format!("body {pointer}"), format!("no JSON body ({})", r.json_error.clone().unwrap_or("empty".into()))));
            };
            let shown = if pointer.is_empty() { "body".to_string() } else { format!("body {pointer}") };
            test(predicate, j.pointer(pointer), scope, *ignore_case).map_err(|(e, s)| (format!("{shown} {e}"), s))
        }
        Check::Schema { file, validator } => {
            let Some(r) = resp else { return Err((format!("body valid against {file}"), no_resp())) };
            let Some(j) = &r.json else {
                return Err((format!("body valid against {file}"), format!("no JSON body ({})", r.json_error.clone().unwrap_or("empty".into()))));
            };
            let errors: Vec<String> = validator
                .iter_errors(j)
                .take(5)
                .map(|e| format!("{} at `{}`", e, e.instance_path()))
                .collect();
            if errors.is_empty() { Ok(()) } else { Err((format!("body valid against {file}"), errors.join("; "))) }
        }
        Check::Outcome(want) => {
            let got = subject.outcome.unwrap_or("no outcome");
            if want.iter().any(|w| w.eq_ignore_ascii_case(got)) {
                Ok(())
            } else {
                Err((format!("operation ends {}", want.join(" or ")), got.to_string()))
            }
        }
        Check::ListContains(t) | Check::ListOmits(t) => {
            let id = t.render(scope).map_err(|e| ("a resource id".to_string(), e))?;
            let items: Vec<&Value> = match subject.items {
                Some(items) => items.iter().collect(),
                None => resp
                    .and_then(|r| r.json.as_ref())
                    .and_then(|j| j.get("value"))
                    .and_then(Value::as_array)
                    .map(|a| a.iter().collect())
                    .unwrap_or_default(),
            };
            let found = items.iter().any(|i| {
                i.get("id").and_then(Value::as_str).is_some_and(|x| x.trim_end_matches('/').eq_ignore_ascii_case(id.trim_end_matches('/')))
            });
            let contains = matches!(check, Check::ListContains(_));
            if found == contains {
                Ok(())
            } else {
                let verb = if contains { "lists" } else { "does not list" };
                Err((format!("the collection {verb} {id}"), format!("{} items, {}", items.len(), if found { "including it" } else { "not including it" })))
            }
        }
    }
}

fn error_hint(j: Option<&Value>) -> String {
    match j.and_then(|j| j.get("error")).and_then(|e| e.get("code")).and_then(Value::as_str) {
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

fn show(v: Option<&Value>) -> String {
    match v {
        None => "absent".into(),
        Some(v) => crate::http::cut(&v.to_string(), 200),
    }
}

fn test(p: &Predicate, v: Option<&Value>, scope: &Scope, ignore_case: bool) -> Result<(), (String, String)> {
    let render = |jt: &crate::template::JsonTemplate| jt.render(scope).map_err(|e| ("a value".to_string(), e));
    match p {
        Predicate::Present => v.map(|_| ()).ok_or_else(|| ("present".into(), "absent".into())),
        Predicate::Absent => match v {
            None => Ok(()),
            Some(x) => Err(("absent".into(), show(Some(x)))),
        },
        Predicate::Equals(jt) => {
            let want = render(jt)?;
            match v {
                Some(x) if eq(x, &want, ignore_case) => Ok(()),
                _ => Err((format!("= {}", crate::http::cut(&want.to_string(), 200)), show(v))),
            }
        }
        Predicate::NotEquals(jt) => {
            let want = render(jt)?;
            match v {
                Some(x) if eq(x, &want, ignore_case) => Err((format!("≠ {}", crate::http::cut(&want.to_string(), 200)), show(v))),
                None => Err((format!("present and ≠ {}", crate::http::cut(&want.to_string(), 200)), "absent".into())),
                _ => Ok(()),
            }
        }
        Predicate::Matches(re) => match v {
            Some(x) if re.is_match(&value_to_text(x)) => Ok(()),
            _ => Err((format!("matching /{}/", re.as_str()), show(v))),
        },
        Predicate::OneOf(list) | Predicate::NotOneOf(list) => {
            let wants: Vec<Value> = list.iter().map(render).collect::<Result<_, _>>()?;
            let hit = v.is_some_and(|x| wants.iter().any(|w| eq(x, w, ignore_case)));
            let shown = wants.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(", ");
            match p {
                Predicate::OneOf(_) if hit => Ok(()),
                Predicate::OneOf(_) => Err((format!("one of {shown}"), show(v))),
                _ if !hit && v.is_some() => Ok(()),
                _ => Err((format!("present and none of {shown}"), show(v))),
            }
        }
    }
}
