//! A spec's `pattern`s, matched in bounded time.
//!
//! A pattern the `regex` crate compiles (after ECMA 262 syntax is read as Rust's) is matched by
//! it, in time linear in the string: the validator runs with `PatternOptions::regex()`. A
//! pattern that needs backtracking (a backreference, a lookaround) cannot be; it becomes the
//! keyword [`KEYWORD`], matched by `fancy-regex` under two bounds: [`BACKTRACK_LIMIT`] steps a
//! match, and [`MATCHES_PER_BODY`] such matches a body ([`Budget`]). A match past either bound
//! decides nothing: the body's validation is then *undecided* (SPEC-04 not judged, naming the
//! pattern and where), never a failure, since the RP's string may well match.

use std::cell::Cell;

use serde_json::Value;

/// The keyword a backtracking pattern is moved to.
pub(crate) const KEYWORD: &str = "x-rpconform-backtracking-pattern";

/// Backtracking steps one match may take.
pub const BACKTRACK_LIMIT: usize = 20_000;

/// Backtracking matches one body may take (so at most about 4e7 steps a body).
pub const MATCHES_PER_BODY: usize = 2_000;

/// What a backtracking match left undecided (the first one of a body), as the error message
/// of the keyword begins, so the validator's errors tell it from a mismatch.
pub(crate) const UNDECIDED: &str = "\u{1}undecided: ";

/// How a schema's `pattern` is matched.
pub(crate) enum Engine {
    /// By the linear-time `regex` crate.
    Linear,
    /// By `fancy-regex`, bounded ([`KEYWORD`]).
    Backtracking,
    /// By neither (not a regex either engine reads): left out.
    Neither,
}

/// The engine `pattern` needs.
pub(crate) fn engine(pattern: &str) -> Engine {
    let Ok(rust) = jsonschema_regex::to_rust_regex(pattern) else {
        return Engine::Neither;
    };
    if regex::Regex::new(&rust).is_ok() {
        Engine::Linear
    } else if backtracking(&rust).is_ok() {
        Engine::Backtracking
    } else {
        Engine::Neither
    }
}

fn backtracking(rust: &str) -> Result<fancy_regex::Regex, fancy_regex::Error> {
    fancy_regex::RegexBuilder::new(rust)
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
}

thread_local! {
    /// The budget of the body being validated on this thread.
    static BUDGET: Cell<Budget> = const { Cell::new(Budget::Unlimited) };
    /// Why the body being validated is undecided (the first match past a bound).
    static WHY: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// What is left of a body's budget for backtracking matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Budget {
    /// Outside a body's validation (compiling, tests of the keyword alone).
    Unlimited,
    Left(usize),
    /// A match went past a bound: the body is undecided.
    Spent,
}

impl Budget {
    /// Validate with a fresh budget; why the result is undecided, if a bound was passed.
    pub(crate) fn around<T>(f: impl FnOnce() -> T) -> (T, Option<String>) {
        BUDGET.with(|b| b.set(Budget::Left(MATCHES_PER_BODY)));
        WHY.with(|w| w.borrow_mut().take());
        let out = f();
        BUDGET.with(|b| b.set(Budget::Unlimited));
        (out, WHY.with(|w| w.borrow_mut().take()))
    }

    /// Take one match from the budget; false when none is left.
    fn take() -> bool {
        BUDGET.with(|b| match b.get() {
            Budget::Unlimited => true,
            Budget::Left(0) | Budget::Spent => {
                b.set(Budget::Spent);
                false
            }
            Budget::Left(n) => {
                b.set(Budget::Left(n - 1));
                true
            }
        })
    }

    /// The body is undecided, for this reason (the first one given is kept).
    fn spend(why: &str) {
        BUDGET.with(|b| {
            if b.get() != Budget::Unlimited {
                b.set(Budget::Spent);
                WHY.with(|w| {
                    w.borrow_mut().get_or_insert_with(|| why.to_string());
                });
            }
        });
    }
}

/// The keyword's matcher.
struct Backtracking {
    re: fancy_regex::Regex,
    source: String,
}

impl Backtracking {
    fn check(&self, instance: &Value) -> Result<(), String> {
        let Value::String(s) = instance else {
            return Ok(());
        };
        let why = if !Budget::take() {
            format!(
                "more than {MATCHES_PER_BODY} strings of the body are held to patterns that need backtracking (such as `{}`)",
                self.source
            )
        } else {
            match self.re.is_match(s) {
                Ok(true) => return Ok(()),
                Ok(false) => {
                    return Err(format!(
                        "{} does not match \"{}\"",
                        crate::http::cut(&Value::String(s.clone()).to_string(), 80),
                        self.source
                    ));
                }
                Err(_) => format!(
                    "the pattern `{}` needs backtracking and a string of {} characters took it past {BACKTRACK_LIMIT} steps",
                    self.source,
                    s.chars().count()
                ),
            }
        };
        Budget::spend(&why);
        Err(format!("{UNDECIDED}{why}"))
    }
}

impl<'i> jsonschema::Keyword<'i> for Backtracking {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        self.check(instance)
            .map_err(jsonschema::ValidationError::custom)
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.check(instance).is_ok()
    }
}

/// The validator's options: linear patterns, and [`KEYWORD`] for the others.
pub(crate) fn options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .should_validate_formats(false)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .with_keyword(KEYWORD, |_, value, _| {
            let source = value.as_str().unwrap_or_default().to_string();
            let re = jsonschema_regex::to_rust_regex(&source)
                .map_err(|_| ())
                .and_then(|rust| backtracking(&rust).map_err(|_| ()))
                .map_err(|()| {
                    jsonschema::ValidationError::custom(format!(
                        "`{source}` is not a regular expression"
                    ))
                })?;
            Ok(Box::new(Backtracking { re, source }) as Box<dyn for<'i> jsonschema::Keyword<'i>>)
        })
}

/// Every `pattern` of `schema` placed by its engine: a backtracking one moved to [`KEYWORD`],
/// one neither engine reads removed (with a warning in `dropped`).
pub(crate) fn place(schema: &mut Value, dropped: &mut Vec<String>) {
    match schema {
        Value::Object(m) => {
            if let Some(Value::String(p)) = m.get("pattern") {
                let p = p.clone();
                match engine(&p) {
                    Engine::Linear => {}
                    Engine::Backtracking => {
                        m.remove("pattern");
                        m.insert(KEYWORD.into(), Value::String(p));
                    }
                    Engine::Neither => {
                        m.remove("pattern");
                        dropped.push(p);
                    }
                }
            }
            for (k, v) in m.iter_mut() {
                // Values are data, not schemas: an `enum` member holding a `pattern` member
                // stays as it is.
                if !matches!(
                    k.as_str(),
                    KEYWORD | "enum" | "const" | "default" | "example" | "examples"
                ) {
                    place(v, dropped);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| place(v, dropped)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::schema::{Compiled, Validity};
    use serde_json::json;

    /// The pattern of the issue: its first branch backtracks exponentially on `aaa…!`, which
    /// its second branch matches.
    const EXPONENTIAL: &str = "^(?:(a|a)*\\1b|[a!]+)$";

    fn names(pattern: &str) -> Compiled {
        Compiled::of_json_schema(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": pattern},
                "tags": {"type": "array", "items": {"type": "string", "pattern": pattern}},
                "either": {"anyOf": [{"type": "string", "pattern": pattern}, {"type": "integer"}]}
            }
        }))
    }

    #[test]
    fn each_pattern_gets_the_engine_it_needs() {
        assert!(matches!(engine("^[a-z][a-z0-9-]{2,62}$"), Engine::Linear));
        assert!(matches!(engine("^\\d+\\.\\w*$"), Engine::Linear));
        assert!(matches!(engine(EXPONENTIAL), Engine::Backtracking));
        assert!(matches!(engine("^(?!default$).*"), Engine::Backtracking));
        assert!(matches!(engine("^(?<=a)b"), Engine::Backtracking));
        assert!(matches!(engine("(unclosed"), Engine::Neither));
    }

    /// Linear patterns judge as before, in linear time whatever the string.
    #[test]
    fn a_linear_pattern_decides_every_string() {
        let c = names("^(a+)+$");
        assert_eq!(c.check(&json!({"name": "aaaa"})), Validity::Valid);
        let long = format!("{}!", "a".repeat(100_000));
        assert!(matches!(
            c.check(&json!({"name": long})),
            Validity::Invalid(_)
        ));
    }

    /// A backtracking pattern decides what it can within its bounds; past them (one string
    /// too costly, or too many strings in a body, also inside one branch of an `anyOf`) the
    /// body is undecided, never invalid.
    #[test]
    fn a_backtracking_pattern_is_bounded_and_undecided_past_its_bounds() {
        let c = names(EXPONENTIAL);
        assert_eq!(c.check(&json!({"name": "aab"})), Validity::Valid);
        assert_eq!(c.check(&json!({"name": "a!a"})), Validity::Valid);
        assert!(matches!(
            c.check(&json!({"name": "b"})),
            Validity::Invalid(_)
        ));
        let costly = format!("{}!", "a".repeat(45_000));
        for body in [
            json!({"name": costly}),
            json!({"tags": ["aab", costly]}),
            json!({"either": costly}),
            json!({"name": "b", "tags": [costly]}),
        ] {
            match c.check(&body) {
                Validity::Undecided(why) => {
                    assert!(
                        why.contains("backtracking") && why.contains(EXPONENTIAL),
                        "{why}"
                    )
                }
                other => panic!("{other:?}"),
            }
        }
        let many: Vec<String> = (0..=MATCHES_PER_BODY).map(|_| "ab".to_string()).collect();
        let many = json!({"tags": many});
        assert!(matches!(c.check(&many), Validity::Undecided(_)));
        // The budget is the body's: the next body starts afresh.
        assert_eq!(c.check(&json!({"name": "aab"})), Validity::Valid);
    }

    #[test]
    fn data_is_never_taken_for_a_schema() {
        let mut v = json!({"enum": [{"pattern": EXPONENTIAL}], "properties": {"pattern": {"type": "string", "pattern": EXPONENTIAL}}});
        place(&mut v, &mut Vec::new());
        assert_eq!(v["enum"][0]["pattern"], EXPONENTIAL);
        assert_eq!(v["properties"]["pattern"][KEYWORD], EXPONENTIAL);
    }
}
