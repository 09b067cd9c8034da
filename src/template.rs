//! `${...}` interpolation: templates are parsed when a suite loads (so an undefined variable is
//! a positioned load error) and rendered against a [`Scope`] when a step runs.
//!
//! `${a.b.c}` looks up `a` in the scope and walks object keys (or array indexes). A filter may
//! follow a bar: `${w.id|upper}` (`upper`, `lower`, `swapcase`, `json`). `$${` writes a literal
//! `${`. In JSON bodies a string that is exactly one `${x}` is replaced by the value itself, so
//! `body: ${type.create_body}` inserts an object.

use serde_json::Value;
use std::collections::BTreeMap;

/// Variables visible to a step: target, type, row, captures, created resources...
pub type Scope = BTreeMap<String, Value>;

/// Largest value a template may build (a string it joins, an array or object it assembles), as
/// YAML aliases are bounded: variables that repeat each other grow tenfold a level otherwise.
/// A single `${x}` passes its value on as it is (a response body, bounded by the body cap).
pub const MAX_RENDERED_BYTES: usize = 4 * 1024 * 1024;

fn too_large() -> String {
    format!(
        "the rendered value passes {} (the most a template may build); a template that repeats variables grows with each level",
        crate::yaml::human_bytes(MAX_RENDERED_BYTES as u64)
    )
}

/// The size of `v` as JSON text, roughly; counting stops once past `limit`.
fn json_size(v: &Value, limit: usize) -> usize {
    let mut n = 0usize;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        n = n.saturating_add(match v {
            Value::String(s) => s.len() + 2,
            Value::Array(a) => {
                stack.extend(a);
                2 + a.len()
            }
            Value::Object(m) => {
                for (k, x) in m {
                    n = n.saturating_add(k.len() + 4);
                    stack.push(x);
                }
                2
            }
            _ => 5,
        });
        if n > limit {
            return n;
        }
    }
    n
}

/// Take `n` bytes from what a template may still build.
fn charge(budget: &mut usize, n: usize) -> Result<(), String> {
    match budget.checked_sub(n) {
        Some(left) => {
            *budget = left;
            Ok(())
        }
        None => Err(too_large()),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct VarRef {
    pub root: String,
    pub path: Vec<String>,
    pub filter: Option<Filter>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Filter {
    Upper,
    Lower,
    SwapCase,
    Json,
    /// A URL or path without its last segment (and without its query).
    Dirname,
    /// An ARM path with the case of its group, namespace, type and name segments swapped; the
    /// fixed words and the subscription id stay as they are.
    Recase,
    /// A URL with another subscription id in place of its own (empty when it names none).
    OtherSubscription,
    /// A URL's path (no scheme, host or query): an ARM id from a URL.
    Path,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Lit(String),
    Var(VarRef),
}

/// A string with `${...}` references.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
}

impl Template {
    /// Parse; the error says what is wrong and at which character offset.
    pub fn parse(text: &str) -> Result<Template, (usize, String)> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            if text[i..].starts_with("$${") {
                lit.push_str("${");
                i += 3;
            } else if text[i..].starts_with("${") {
                let Some(end) = text[i + 2..].find('}') else {
                    return Err((i, "`${` without a closing `}`".into()));
                };
                let inner = text[i + 2..i + 2 + end].trim();
                let var = parse_var(inner).map_err(|m| (i, m))?;
                if !lit.is_empty() {
                    parts.push(Part::Lit(std::mem::take(&mut lit)));
                }
                parts.push(Part::Var(var));
                i += 2 + end + 1;
            } else {
                let ch = text[i..].chars().next().unwrap_or(' ');
                lit.push(ch);
                i += ch.len_utf8().max(1);
                let _ = bytes;
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        Ok(Template { parts })
    }

    pub fn literal(text: &str) -> Template {
        Template {
            parts: vec![Part::Lit(text.to_string())],
        }
    }

    pub fn vars(&self) -> impl Iterator<Item = &VarRef> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v),
            Part::Lit(_) => None,
        })
    }

    /// The text, when the template has no variables.
    pub fn as_literal(&self) -> Option<String> {
        if self.vars().next().is_some() {
            return None;
        }
        Some(
            self.parts
                .iter()
                .map(|p| if let Part::Lit(s) = p { s.as_str() } else { "" })
                .collect(),
        )
    }

    /// Render to a string (at most [`MAX_RENDERED_BYTES`] built).
    pub fn render(&self, scope: &Scope) -> Result<String, String> {
        if let [Part::Var(v)] = self.parts.as_slice() {
            return resolve(v, scope).map(|x| value_to_text(&x));
        }
        let mut budget = MAX_RENDERED_BYTES;
        self.render_within(scope, &mut budget)
    }

    fn render_within(&self, scope: &Scope, budget: &mut usize) -> Result<String, String> {
        let mut out = String::new();
        for p in &self.parts {
            let piece = match p {
                Part::Lit(s) => std::borrow::Cow::Borrowed(s.as_str()),
                Part::Var(v) => {
                    let x = resolve(v, scope)?;
                    // Sized before it is turned into text: a huge object is not printed.
                    if json_size(&x, *budget) > *budget {
                        return Err(too_large());
                    }
                    std::borrow::Cow::Owned(value_to_text(&x))
                }
            };
            charge(budget, piece.len())?;
            out.push_str(&piece);
        }
        Ok(out)
    }

    /// Render keeping the JSON type when the template is exactly one variable.
    pub fn render_value(&self, scope: &Scope) -> Result<Value, String> {
        match self.parts.as_slice() {
            [Part::Var(v)] => resolve(v, scope),
            _ => self.render(scope).map(Value::String),
        }
    }

    /// The fewest bytes this template renders to, given the fewest of some variables (those
    /// `known` names; others count 0): what `check` can tell without a scope.
    pub fn min_len(&self, known: &dyn Fn(&str) -> Option<usize>) -> usize {
        self.parts.iter().fold(0usize, |n, p| {
            n.saturating_add(match p {
                Part::Lit(s) => s.len(),
                Part::Var(v) if v.path.is_empty() && v.filter.is_none() => {
                    known(&v.root).unwrap_or(0)
                }
                Part::Var(_) => 0,
            })
        })
    }
}

fn parse_var(inner: &str) -> Result<VarRef, String> {
    let (path, filter) = match inner.split_once('|') {
        Some((p, f)) => {
            let filter = match f.trim() {
                "upper" => Filter::Upper,
                "lower" => Filter::Lower,
                "swapcase" => Filter::SwapCase,
                "json" => Filter::Json,
                "dirname" => Filter::Dirname,
                "recase" => Filter::Recase,
                "other_subscription" => Filter::OtherSubscription,
                "path" => Filter::Path,
                other => {
                    return Err(format!(
                        "unknown filter `{other}` (expected upper, lower, swapcase, json, dirname, recase, other_subscription or path)"
                    ));
                }
            };
            (p.trim(), Some(filter))
        }
        None => (inner, None),
    };
    let mut segs = path.split('.');
    let root = segs.next().unwrap_or("").to_string();
    let valid = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if !valid(&root) {
        return Err(format!(
            "`${{{inner}}}` is not a variable reference (expected `${{name.field}}`)"
        ));
    }
    let path: Vec<String> = segs.map(str::to_string).collect();
    if path.iter().any(|s| !valid(s)) {
        return Err(format!("`${{{inner}}}` has an empty or invalid field name"));
    }
    Ok(VarRef { root, path, filter })
}

fn resolve(v: &VarRef, scope: &Scope) -> Result<Value, String> {
    let mut cur = scope
        .get(&v.root)
        .ok_or_else(|| format!("variable `{}` is not defined", v.root))?;
    for (i, seg) in v.path.iter().enumerate() {
        // A header the response did not carry reads as null, not as a scenario error.
        if i > 0
            && v.path[i - 1] == "headers"
            && matches!(cur, Value::Object(_))
            && v.path.len() == i + 1
        {
            return Ok(cur.get(seg).cloned().unwrap_or(Value::Null));
        }
        let next = match cur {
            // A field an object lacks reads as null: bodies differ between RPs.
            Value::Object(m) => Some(m.get(seg).unwrap_or(&Value::Null)),
            Value::Array(a) => seg
                .parse::<usize>()
                .ok()
                .map(|i| a.get(i).unwrap_or(&Value::Null)),
            Value::Null => Some(&Value::Null),
            _ => None,
        };
        cur =
            next.ok_or_else(|| format!("`{}.{}` is not defined", v.root, v.path[..=i].join(".")))?;
    }
    Ok(match v.filter {
        None => cur.clone(),
        Some(Filter::Json) => Value::String(cur.to_string()),
        Some(f) => {
            let s = value_to_text(cur);
            Value::String(match f {
                Filter::Upper => s.to_uppercase(),
                Filter::Lower => s.to_lowercase(),
                Filter::SwapCase => s
                    .chars()
                    .map(|c| {
                        if c.is_uppercase() {
                            c.to_ascii_lowercase()
                        } else {
                            c.to_ascii_uppercase()
                        }
                    })
                    .collect(),
                Filter::Dirname => {
                    let no_query = s.split('?').next().unwrap_or("").trim_end_matches('/');
                    no_query
                        .rsplit_once('/')
                        .map(|(d, _)| d.to_string())
                        .unwrap_or_default()
                }
                Filter::Recase => recase(&s),
                Filter::OtherSubscription => other_subscription(&s),
                // The ARM path: after the base URL's prefix (a gateway's), as resource ids are.
                Filter::Path => crate::lro::url_path(&s).into_owned(),
                Filter::Json => unreachable!("handled above"),
            })
        }
    })
}

/// A subscription id no run uses (OPRES-11 reads an operation under it).
pub const OTHER_SUBSCRIPTION: &str = "11111111-2222-4333-8444-555555555555";

/// The URL with the segment after `subscriptions` replaced by [`OTHER_SUBSCRIPTION`]; empty
/// when it has no such segment (or already names that subscription).
fn other_subscription(url: &str) -> String {
    let mut segs: Vec<&str> = url.split('/').collect();
    let Some(i) = segs
        .iter()
        .position(|s| s.eq_ignore_ascii_case("subscriptions"))
        .filter(|i| i + 1 < segs.len() && !segs[i + 1].is_empty())
    else {
        return String::new();
    };
    if segs[i + 1].eq_ignore_ascii_case(OTHER_SUBSCRIPTION) {
        return String::new();
    }
    segs[i + 1] = OTHER_SUBSCRIPTION;
    segs.join("/")
}

fn swap(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_uppercase() {
                c.to_ascii_lowercase()
            } else {
                c.to_ascii_uppercase()
            }
        })
        .collect()
}

fn recase(path: &str) -> String {
    let mut after_subscriptions = false;
    path.split('/')
        .map(|seg| {
            let fixed = ["subscriptions", "resourcegroups", "providers"]
                .contains(&seg.to_ascii_lowercase().as_str());
            let keep = fixed || after_subscriptions;
            after_subscriptions = seg.eq_ignore_ascii_case("subscriptions");
            if keep || seg.is_empty() {
                seg.to_string()
            } else {
                swap(seg)
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

pub fn value_to_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Is a condition's value true? `a == b` / `a != b` compare the rendered text.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::String(s) if s.contains(" == ") || s.contains(" != ") => {
            let (l, r, eq) = match s.split_once(" == ") {
                Some((l, r)) => (l, r, true),
                None => {
                    let (l, r) = s.split_once(" != ").unwrap_or((s, ""));
                    (l, r, false)
                }
            };
            (l.trim() == r.trim()) == eq
        }
        Value::Bool(b) => *b,
        Value::Null => false,
        Value::String(s) => !s.is_empty() && s != "false",
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    }
}

const SPREAD: &str = "...";

fn deep_merge(old: &mut serde_json::Map<String, Value>, new: serde_json::Map<String, Value>) {
    for (k, v) in new {
        match (old.get_mut(&k), v) {
            (Some(Value::Object(o)), Value::Object(n)) => deep_merge(o, n),
            (_, v) => {
                old.insert(k, v);
            }
        }
    }
}

/// A JSON value whose strings may hold templates.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonTemplate {
    Str(Template),
    Array(Vec<JsonTemplate>),
    Object(Vec<(String, JsonTemplate)>),
    Other(Value),
}

impl JsonTemplate {
    pub fn parse(v: &Value) -> Result<JsonTemplate, String> {
        Ok(match v {
            Value::String(s) => JsonTemplate::Str(Template::parse(s).map_err(|(_, m)| m)?),
            Value::Array(a) => JsonTemplate::Array(
                a.iter()
                    .map(JsonTemplate::parse)
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(m) => JsonTemplate::Object(
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), JsonTemplate::parse(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => JsonTemplate::Other(other.clone()),
        })
    }

    /// Render (at most [`MAX_RENDERED_BYTES`] built; a lone `${x}` passes its value on).
    pub fn render(&self, scope: &Scope) -> Result<Value, String> {
        if let JsonTemplate::Str(t) = self {
            return t.render_value(scope);
        }
        let mut budget = MAX_RENDERED_BYTES;
        self.render_within(scope, &mut budget)
    }

    /// The fewest bytes this renders to (see [`Template::min_len`]).
    pub fn min_len(&self, known: &dyn Fn(&str) -> Option<usize>) -> usize {
        match self {
            JsonTemplate::Str(t) => t.min_len(known),
            JsonTemplate::Array(a) => a
                .iter()
                .fold(0usize, |n, t| n.saturating_add(t.min_len(known))),
            JsonTemplate::Object(m) => m.iter().fold(0usize, |n, (k, t)| {
                n.saturating_add(k.len()).saturating_add(t.min_len(known))
            }),
            JsonTemplate::Other(_) => 0,
        }
    }

    fn render_within(&self, scope: &Scope, budget: &mut usize) -> Result<Value, String> {
        Ok(match self {
            JsonTemplate::Str(t) => match t.parts.as_slice() {
                [Part::Var(v)] => {
                    let x = resolve(v, scope)?;
                    let n = json_size(&x, *budget);
                    charge(budget, n)?;
                    x
                }
                _ => Value::String(t.render_within(scope, budget)?),
            },
            JsonTemplate::Array(a) => Value::Array(
                a.iter()
                    .map(|t| t.render_within(scope, budget))
                    .collect::<Result<_, _>>()?,
            ),
            JsonTemplate::Object(m) => {
                // `"...": ${x}` spreads an object; the other keys are merged deeply onto it.
                let mut base = serde_json::Map::new();
                if let Some((_, t)) = m.iter().find(|(k, _)| k == SPREAD) {
                    // One object, or a list of objects merged in order; nulls are skipped.
                    let items = match t.render_within(scope, budget)? {
                        Value::Array(a) => a,
                        v => vec![v],
                    };
                    for item in items {
                        match item {
                            Value::Object(o) => deep_merge(&mut base, o),
                            Value::Null => {}
                            other => return Err(format!("`...` spreads objects, not {other}")),
                        }
                    }
                }
                for (k, t) in m.iter().filter(|(k, _)| k != SPREAD) {
                    charge(budget, k.len())?;
                    let v = t.render_within(scope, budget)?;
                    match (base.get_mut(k), v) {
                        (Some(Value::Object(old)), Value::Object(new)) => deep_merge(old, new),
                        (_, v) => {
                            base.insert(k.clone(), v);
                        }
                    }
                }
                Value::Object(base)
            }
            JsonTemplate::Other(v) => v.clone(),
        })
    }

    pub fn vars(&self) -> Vec<&VarRef> {
        match self {
            JsonTemplate::Str(t) => t.vars().collect(),
            JsonTemplate::Array(a) => a.iter().flat_map(|t| t.vars()).collect(),
            JsonTemplate::Object(m) => m.iter().flat_map(|(_, t)| t.vars()).collect(),
            JsonTemplate::Other(_) => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope() -> Scope {
        let mut s = Scope::new();
        s.insert("w".into(), json!({"id": "/a/B", "n": 3, "body": {"x": 1}}));
        s
    }

    #[test]
    fn renders_strings_values_and_filters() {
        let t = Template::parse("id=${w.id} n=${ w.n }").unwrap();
        assert_eq!(t.render(&scope()).unwrap(), "id=/a/B n=3");
        assert_eq!(
            Template::parse("${w.body}")
                .unwrap()
                .render_value(&scope())
                .unwrap(),
            json!({"x": 1})
        );
        assert_eq!(
            Template::parse("${w.id|swapcase}")
                .unwrap()
                .render(&scope())
                .unwrap(),
            "/A/b"
        );
        assert_eq!(
            Template::parse("$${x}").unwrap().render(&scope()).unwrap(),
            "${x}"
        );
    }

    #[test]
    fn reports_undefined_and_malformed() {
        assert!(
            Template::parse("${nope}")
                .unwrap()
                .render(&scope())
                .unwrap_err()
                .contains("nope")
        );
        assert_eq!(
            Template::parse("${w.nope}")
                .unwrap()
                .render_value(&scope())
                .unwrap(),
            Value::Null
        );
        assert!(
            Template::parse("${w.id.x}")
                .unwrap()
                .render(&scope())
                .is_err()
        );
        assert!(Template::parse("${unclosed").is_err());
        assert!(Template::parse("${a|bogus}").is_err());
        assert!(Template::parse("${}").is_err());
    }

    #[test]
    fn spread_merges_deeply_and_dirname_strips() {
        let mut s = scope();
        s.insert("b".into(), json!({"p": {"a": 1, "b": 2}, "q": 1}));
        let jt = JsonTemplate::parse(&json!({"...": "${b}", "p": {"b": 3}})).unwrap();
        assert_eq!(
            jt.render(&s).unwrap(),
            json!({"p": {"a": 1, "b": 3}, "q": 1})
        );
        s.insert(
            "p".into(),
            json!("/subscriptions/Ab1/resourceGroups/rG/providers/Ns.X/things/nAme"),
        );
        assert_eq!(
            Template::parse("${p|recase}").unwrap().render(&s).unwrap(),
            "/subscriptions/Ab1/resourceGroups/Rg/providers/nS.x/THINGS/NaME"
        );
        s.insert("u".into(), json!("http://h/x/ops/123?api-version=1"));
        assert_eq!(
            Template::parse("${u|dirname}").unwrap().render(&s).unwrap(),
            "http://h/x/ops"
        );
    }

    #[test]
    fn json_templates_keep_types() {
        let jt =
            JsonTemplate::parse(&json!({"a": "${w.n}", "b": ["x-${w.n}"], "c": true})).unwrap();
        assert_eq!(
            jt.render(&scope()).unwrap(),
            json!({"a": 3, "b": ["x-3"], "c": true})
        );
    }

    #[test]
    fn rendering_is_bounded() {
        // vars that repeat each other tenfold a level: an error, not hundreds of MiB.
        let mut s = Scope::new();
        s.insert("a".into(), json!("x".repeat(1000)));
        let ten = Template::parse(&"${a}".repeat(10)).unwrap();
        let mut v = ten.render(&s).unwrap();
        assert_eq!(v.len(), 10_000);
        let mut grew = None;
        for _ in 0..6 {
            s.insert("a".into(), Value::String(v.clone()));
            match ten.render(&s) {
                Ok(next) => v = next,
                Err(e) => {
                    grew = Some(e);
                    break;
                }
            }
        }
        let e = grew.expect("the cap stops the growth");
        assert!(e.contains("4 MiB"), "{e}");
        assert!(v.len() <= MAX_RENDERED_BYTES);
        // The same through JSON templates: arrays and objects of a big value.
        s.insert("a".into(), json!("y".repeat(1024 * 1024)));
        let arr = JsonTemplate::parse(&json!(["${a}", "${a}", "${a}", "${a}", "${a}"])).unwrap();
        assert!(arr.render(&s).unwrap_err().contains("4 MiB"));
        let obj = JsonTemplate::parse(&json!({"p": "${a}", "q": {"r": ["${a}"]}})).unwrap();
        assert!(obj.render(&s).is_ok());
        // A lone variable passes a big value on (it is already held).
        s.insert("big".into(), json!("z".repeat(MAX_RENDERED_BYTES + 10)));
        let lone = JsonTemplate::parse(&json!("${big}")).unwrap();
        assert_eq!(
            lone.render(&s).unwrap().as_str().unwrap().len(),
            MAX_RENDERED_BYTES + 10
        );
        assert!(Template::parse("${big}").unwrap().render(&s).is_ok());
        assert!(Template::parse("x${big}").unwrap().render(&s).is_err());
        // What check can tell: the fewest bytes, from literals and known variables.
        let t = JsonTemplate::parse(&json!({"k": ["ab${a}", "${b}${b}"]})).unwrap();
        let known = |n: &str| (n == "b").then_some(100);
        assert_eq!(t.min_len(&known), 1 + 2 + 200);
    }
}
