//! OpenAPI 2 schemas as JSON Schema (2020-12), converted and compiled once per response.
//!
//! What changes in the conversion, as AutoRest and the Azure SDKs read a spec:
//! - `$ref`s (within and between files) become `$defs`, so recursive models stay finite;
//! - `x-nullable: true` allows `null`, and so does leaving a property out of `required`: a
//!   member sent as `null` is an absent member (the same reading as RES-04);
//! - an `enum` with `x-ms-enum.modelAsString: true` is extensible: any string passes;
//! - `exclusiveMinimum`/`exclusiveMaximum` are booleans in OpenAPI 2, numbers here;
//! - a `discriminator` dispatches on its property: a body whose discriminator names a subtype
//!   (its `x-ms-discriminator-value`, else its definition name) is held to that subtype too;
//! - `type: file`, `format` (annotations only) and `readOnly` do not constrain a response;
//! - a schema that does not compile (a `pattern` in another regex dialect) is retried
//!   without patterns, then left out with a warning: never a false failure.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::init::spec::{Loc, Store};

/// A compiled response schema.
pub struct Compiled {
    validator: jsonschema::Validator,
    /// What it describes, for messages (`Widget`, or the operation).
    pub name: String,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Compiled({})", self.name)
    }
}

/// Report at most this many errors for one body.
pub const MAX_ERRORS: usize = 3;

/// What validating a body decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Validity {
    Valid,
    /// Why not: each error at its JSON pointer, with the schema path that refused it (at
    /// most [`MAX_ERRORS`]).
    Invalid(Vec<String>),
    /// A pattern that needs backtracking went past its bounds ([`super::pattern`]): nothing
    /// is decided, and this says why.
    Undecided(String),
}

impl Compiled {
    /// Validate `body` within the bounds of [`super::pattern`].
    pub fn check(&self, body: &Value) -> Validity {
        let (errors, spent) = super::pattern::Budget::around(|| {
            let mut undecided = None;
            let mut errors = Vec::new();
            for e in self.validator.iter_errors(body).take(MAX_ERRORS) {
                let text = e.to_string();
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_string() } else { at };
                match text.strip_prefix(super::pattern::UNDECIDED) {
                    Some(why) => {
                        undecided.get_or_insert_with(|| format!("at `{at}`: {why}"));
                    }
                    None => errors.push(format!(
                        "at `{at}`: {} (schema {})",
                        crate::http::cut(&text, 160),
                        e.schema_path()
                    )),
                }
            }
            (errors, undecided)
        });
        match (errors, spent) {
            ((_, Some(why)), _) => Validity::Undecided(why),
            // A bound was passed somewhere (perhaps in a branch of an `anyOf` whose other
            // branch decided): no error or pass can be trusted.
            (_, Some(why)) => Validity::Undecided(why),
            ((e, None), None) if e.is_empty() => Validity::Valid,
            ((e, None), None) => Validity::Invalid(e),
        }
    }

    /// A JSON Schema (2020-12) compiled as a response schema is, its patterns placed.
    #[cfg(test)]
    pub(crate) fn of_json_schema(mut doc: Value) -> Compiled {
        super::pattern::place(&mut doc, &mut Vec::new());
        Compiled {
            validator: build(&doc).expect("compiles"),
            name: "test".into(),
        }
    }

    /// Why `body` does not validate (empty when valid or undecided).
    pub fn errors(&self, body: &Value) -> Vec<String> {
        match self.check(body) {
            Validity::Invalid(e) => e,
            Validity::Valid | Validity::Undecided(_) => Vec::new(),
        }
    }
}

/// Compiles the response schemas of one file set; the same model compiles once.
pub(crate) struct Compiler<'s> {
    store: &'s Store,
    cache: HashMap<String, Option<Arc<Compiled>>>,
    pub warnings: Vec<String>,
}

impl<'s> Compiler<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Compiler {
            store,
            cache: HashMap::new(),
            warnings: Vec::new(),
        }
    }

    /// The compiled schema at `loc` (a response's `schema`); `what` names it in warnings.
    pub(crate) fn compile(&mut self, loc: &Loc, what: &str) -> Option<Arc<Compiled>> {
        let key = match loc.str("$ref") {
            Some(r) => self
                .store
                .resolve(loc, r)
                .map_or_else(|_| loc.describe(), |l| l.describe()),
            None => loc.describe(),
        };
        if let Some(c) = self.cache.get(&key) {
            return c.clone();
        }
        let name = loc
            .str("$ref")
            .and_then(|r| r.rsplit('/').next())
            .unwrap_or(what)
            .to_string();
        let mut conv = Converter {
            store: self.store,
            defs: Map::new(),
            names: HashMap::new(),
            warnings: Vec::new(),
        };
        let root = conv.schema(loc, false);
        self.warnings.append(&mut conv.warnings);
        let doc = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": Value::Object(conv.defs),
            "allOf": [root],
        });
        let mut doc = doc;
        let mut dropped = Vec::new();
        super::pattern::place(&mut doc, &mut dropped);
        for p in dropped {
            self.warnings.push(format!(
                "{}: the pattern `{p}` of {what} is no regular expression rpconform reads; it is not checked",
                loc.describe()
            ));
        }
        let built = build(&doc).or_else(|_| build(&without_patterns(doc)));
        let out = match built {
            Ok(validator) => Some(Arc::new(Compiled { validator, name })),
            Err(e) => {
                self.warnings.push(format!(
                    "{}: the response schema of {what} does not compile ({e}); its bodies are not judged",
                    loc.describe()
                ));
                None
            }
        };
        self.cache.insert(key, out.clone());
        out
    }

    /// The `x-ms-secret` properties a body of this schema may hold, a discriminated model's
    /// subtypes' too (an EventGrid WebHook destination's `endpointUrl`), each with the
    /// discriminator values that select it.
    pub(crate) fn secrets(&self, loc: &Loc) -> Vec<Secret> {
        let mut out: Vec<Secret> = Vec::new();
        let mut seen = HashSet::new();
        let mut visit = |p: &Prop<'_>| {
            let s = Secret {
                pointer: p.pointer.to_string(),
                when: p.when.to_vec(),
            };
            if p.marked("x-ms-secret") && !out.contains(&s) {
                out.push(s);
            }
        };
        let at = Walk {
            at: String::new(),
            depth: 0,
            read_only: None,
            when: Vec::new(),
            subtypes: true,
        };
        self.walk(loc, at, &mut seen, &mut visit);
        out
    }

    /// The members a request body of this schema may hold that are `readOnly` (themselves or
    /// inside a readOnly object) and free text: a string with no `enum`, `format` or `pattern`
    /// (beside a `$ref` too), long enough for [`READ_ONLY_PROBE`], and not a discriminator, so
    /// any server must take the probe as a value (a typed or validated member might be refused
    /// for its form alone). Left out: the envelope's `id`, `name` and `type` (PUT-08 and RES-02
    /// judge those), the top-level `etag` (ETAG's: an RP may read a body etag as a
    /// precondition), and `provisioningState` (PSTATE-03's; the public RPC has a server refuse
    /// a value that is not its own, which would refuse the whole probe).
    pub(crate) fn read_only_text(&self, loc: &Loc) -> Vec<ReadOnlyMember> {
        let mut out: Vec<ReadOnlyMember> = Vec::new();
        self.properties(loc, &mut |p| {
            let Some(root) = p.read_only else { return };
            let either = |k: &str| [p.schema, p.written].iter().find_map(|v| v.get(k));
            let text = either("type").and_then(Value::as_str) == Some("string")
                && ["enum", "format", "pattern", "x-ms-enum"]
                    .iter()
                    .all(|k| either(k).is_none())
                && either("maxLength")
                    .and_then(Value::as_u64)
                    .is_none_or(|m| m >= READ_ONLY_PROBE.len() as u64);
            let own_rules = matches!(p.pointer, "/id" | "/name" | "/type" | "/etag")
                || p.pointer.ends_with("/provisioningState");
            if text && !own_rules && !p.discriminator && !out.iter().any(|m| m.pointer == p.pointer)
            {
                out.push(ReadOnlyMember {
                    pointer: p.pointer.to_string(),
                    root: root.to_string(),
                });
            }
        });
        out
    }

    /// Visit every property a body of this schema may hold (through `allOf` and nested
    /// objects; not into arrays or maps, nor into a discriminated model's subtypes), at most
    /// eight objects deep, each model once per place.
    fn properties(&self, loc: &Loc, visit: &mut dyn FnMut(&Prop<'_>)) {
        let mut seen = HashSet::new();
        let at = Walk {
            at: String::new(),
            depth: 0,
            read_only: None,
            when: Vec::new(),
            subtypes: false,
        };
        self.walk(loc, at, &mut seen, visit);
    }

    fn walk(
        &self,
        loc: &Loc,
        w: Walk<'_>,
        seen: &mut HashSet<String>,
        visit: &mut dyn FnMut(&Prop<'_>),
    ) {
        // allOf parts count a level too, so that a cycle through them ends.
        if w.depth > 16 {
            return;
        }
        let Ok(loc) = self.store.deref(loc) else {
            return;
        };
        if !seen.insert(format!("{}@{}@{:?}", loc.describe(), w.at, w.read_only)) {
            return;
        }
        for part in loc.key("allOf").map(|a| a.items()).unwrap_or_default() {
            self.walk(&part, w.deeper(w.at.clone(), w.read_only), seen, visit);
        }
        let discriminator = loc.str("discriminator");
        if w.subtypes
            && let Some(disc) = discriminator
        {
            let at = format!("{}/{}", w.at, escape(disc));
            for (value, sub) in subtypes(self.store, &loc) {
                let mut inner = w.deeper(w.at.clone(), w.read_only);
                inner.when.push((at.clone(), value));
                self.walk(&sub, inner, seen, visit);
            }
        }
        let Some(props) = loc.key("properties") else {
            return;
        };
        for (name, p) in props.entries() {
            let here = format!("{}/{}", w.at, escape(&name));
            let Ok(pd) = self.store.deref(&p) else {
                continue;
            };
            let marked = flagged(pd.value(), p.value(), "readOnly");
            let root = w
                .read_only
                .map(str::to_string)
                .or(marked.then(|| here.clone()));
            let prop = Prop {
                pointer: &here,
                schema: pd.value(),
                written: p.value(),
                read_only: root.as_deref(),
                discriminator: discriminator == Some(name.as_str()),
                when: &w.when,
            };
            visit(&prop);
            if here.matches('/').count() < 8 {
                self.walk(&pd, w.deeper(here.clone(), root.as_deref()), seen, visit);
            }
        }
    }
}

/// Where [`Compiler::walk`] is: the pointer, how deep, the outermost readOnly object it is in,
/// the discriminator values that led there, and whether to go into subtypes.
struct Walk<'a> {
    at: String,
    depth: usize,
    read_only: Option<&'a str>,
    when: Vec<(String, String)>,
    subtypes: bool,
}

impl<'a> Walk<'a> {
    /// One level down, at `at`.
    fn deeper<'b>(&self, at: String, read_only: Option<&'b str>) -> Walk<'b> {
        Walk {
            at,
            depth: self.depth + 1,
            read_only,
            when: self.when.clone(),
            subtypes: self.subtypes,
        }
    }
}

/// A property name as a JSON pointer segment.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The subtypes of a discriminated model: the definitions of its file whose `allOf` names it,
/// each with the discriminator value that selects it (its `x-ms-discriminator-value`, else
/// its definition name).
fn subtypes(store: &Store, base: &Loc) -> Vec<(String, Loc)> {
    let Ok(defs) = store.resolve(base, "#/definitions") else {
        return Vec::new();
    };
    let me = base.describe();
    defs.entries()
        .into_iter()
        .filter(|(_, d)| {
            d.key("allOf")
                .map(|a| a.items())
                .unwrap_or_default()
                .iter()
                .filter_map(|p| p.str("$ref").and_then(|r| store.resolve(p, r).ok()))
                .any(|t| t.describe() == me)
        })
        .map(|(name, d)| {
            let value = d
                .str("x-ms-discriminator-value")
                .map_or(name, str::to_string);
            (value, d)
        })
        .collect()
}

/// An `x-ms-secret` property of a response body: its JSON pointer, and the discriminator
/// values (pointer, value) the body must carry for it to be the property the spec marks.
#[derive(Debug, Clone, PartialEq)]
pub struct Secret {
    pub pointer: String,
    pub when: Vec<(String, String)>,
}

impl Secret {
    /// Does `body` return this secret (present, not null, under the subtype it belongs to)?
    pub fn shown_in(&self, body: &Value) -> bool {
        body.pointer(&self.pointer).is_some_and(|v| !v.is_null())
            && self
                .when
                .iter()
                .all(|(p, v)| body.pointer(p).and_then(Value::as_str) == Some(v.as_str()))
    }
}

/// A readOnly free-text member of a request body (what SPEC-07 probes).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOnlyMember {
    /// Its JSON pointer.
    pub pointer: String,
    /// The outermost readOnly member it is in (itself, or a readOnly object such as
    /// `/systemData`): what must have somewhere to go in the body it is added to.
    pub root: String,
}

/// The value rpconform sets the readOnly free-text properties to when it probes whether an RP
/// ignores them (SPEC-07): no server would choose it, so seeing it again can only be an echo.
pub const READ_ONLY_PROBE: &str = "rpconform-read-only-probe";

/// One property of a schema, as [`Compiler::properties`] visits it.
struct Prop<'a> {
    /// Its JSON pointer in a body.
    pointer: &'a str,
    /// Its schema, `$ref` followed.
    schema: &'a Value,
    /// The property as written (an extension may sit beside a `$ref`).
    written: &'a Value,
    /// Marked `readOnly`, or inside a property that is: the outermost such property.
    read_only: Option<&'a str>,
    /// The model's discriminator.
    discriminator: bool,
    /// The discriminator values (pointer, value) the body carries where this property is.
    when: &'a [(String, String)],
}

impl Prop<'_> {
    fn marked(&self, extension: &str) -> bool {
        flagged(self.schema, self.written, extension)
    }
}

/// Is `flag` true on a property's schema or beside its `$ref` where it is written?
fn flagged(schema: &Value, written: &Value, flag: &str) -> bool {
    [schema, written]
        .iter()
        .any(|v| v.get(flag) == Some(&Value::Bool(true)))
}

/// `s`, or null. Written as `if null / else s` rather than `anyOf`, so that a non-null value's
/// errors keep their own pointers (an `anyOf` reports only that no branch matched).
fn or_null(s: Value) -> Value {
    json!({"if": {"type": "null"}, "else": s})
}

fn build(doc: &Value) -> Result<jsonschema::Validator, String> {
    super::pattern::options()
        .build(doc)
        .map_err(|e| e.to_string())
}

/// The same schema with every `pattern` removed (a regex dialect the validator refuses).
fn without_patterns(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if m.get("pattern").is_some_and(Value::is_string) {
                    m.remove("pattern");
                }
                m.remove(super::pattern::KEYWORD);
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// One schema's conversion: its definitions, named `d0`, `d1`...
struct Converter<'s> {
    store: &'s Store,
    defs: Map<String, Value>,
    /// `file#pointer` (and `#core` for a discriminated base without its dispatch) → def name.
    names: HashMap<String, String>,
    warnings: Vec<String>,
}

/// Keywords copied as they are.
const COPIED: [&str; 13] = [
    "required",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "const",
];

impl Converter<'_> {
    fn schema(&mut self, loc: &Loc, core: bool) -> Value {
        match loc.str("$ref") {
            Some(r) => match self.store.resolve(loc, r) {
                Ok(target) => json!({"$ref": format!("#/$defs/{}", self.def(&target, core))}),
                Err(e) => {
                    self.warnings.push(format!("{e}; read as an open object"));
                    json!({})
                }
            },
            None => self.body(loc, core),
        }
    }

    /// The definition name for the schema at `target` (converted on first use).
    fn def(&mut self, target: &Loc, core: bool) -> String {
        let target = self.store.deref(target).unwrap_or_else(|_| target.clone());
        let key = format!("{}{}", target.describe(), if core { "#core" } else { "" });
        if let Some(n) = self.names.get(&key) {
            return n.clone();
        }
        let name = format!("d{}", self.names.len());
        self.names.insert(key, name.clone());
        self.defs.insert(name.clone(), json!({}));
        let body = self.body(&target, core);
        self.defs.insert(name.clone(), body);
        name
    }

    fn body(&mut self, loc: &Loc, core: bool) -> Value {
        let Some(v) = loc.value().as_object() else {
            return json!({});
        };
        let mut out = Map::new();
        if let Some(t) = v.get("type")
            && t != "file"
        {
            out.insert("type".into(), t.clone());
        }
        for k in COPIED {
            if let Some(x) = v.get(k) {
                out.insert(k.into(), x.clone());
            }
        }
        for (flag, bound) in [
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ] {
            if v.get(flag) == Some(&Value::Bool(true))
                && let Some(b) = out.remove(bound)
            {
                out.insert(flag.into(), b);
            }
        }
        let extensible =
            v.get("x-ms-enum").and_then(|e| e.get("modelAsString")) == Some(&Value::Bool(true));
        if let Some(e) = v.get("enum")
            && !extensible
        {
            out.insert("enum".into(), e.clone());
        }
        let required: Vec<&str> = v
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(props) = loc.key("properties") {
            let mut m = Map::new();
            for (name, p) in props.entries() {
                let s = self.schema(&p, false);
                let s = if required.contains(&name.as_str()) {
                    s
                } else {
                    or_null(s)
                };
                m.insert(name, s);
            }
            out.insert("properties".into(), Value::Object(m));
        }
        if let Some(ap) = loc.key("additionalProperties") {
            let s = match ap.value() {
                Value::Bool(b) => Value::Bool(*b),
                _ => self.schema(&ap, false),
            };
            out.insert("additionalProperties".into(), s);
        }
        if let Some(items) = loc.key("items") {
            let s = self.schema(&items, false);
            out.insert("items".into(), s);
        }
        // A model's `allOf` names its base: the base without its own dispatch (a subtype of
        // a discriminated base would otherwise dispatch back to itself, forever).
        if let Some(all) = loc.key("allOf") {
            let parts: Vec<Value> = all.items().iter().map(|p| self.schema(p, true)).collect();
            out.insert("allOf".into(), Value::Array(parts));
        }
        for k in ["anyOf", "oneOf"] {
            if let Some(list) = loc.key(k) {
                let parts: Vec<Value> =
                    list.items().iter().map(|p| self.schema(p, false)).collect();
                out.insert(k.into(), Value::Array(parts));
            }
        }
        let mut out = Value::Object(out);
        if !core && let Some(disc) = v.get("discriminator").and_then(Value::as_str) {
            out = self.dispatch(loc, out, disc);
        }
        if v.get("x-nullable") == Some(&Value::Bool(true)) {
            out = or_null(out);
        }
        out
    }

    /// A discriminated base: the base itself, and the subtype its discriminator names.
    fn dispatch(&mut self, base: &Loc, body: Value, disc: &str) -> Value {
        let mut rules = vec![body];
        for (value, d) in subtypes(self.store, base) {
            let sub = self.def(&d, false);
            rules.push(json!({
                "if": {"properties": {disc: {"const": value}}, "required": [disc]},
                "then": {"$ref": format!("#/$defs/{sub}")},
            }));
        }
        if rules.len() == 1 {
            return rules.remove(0);
        }
        json!({"allOf": rules})
    }
}
