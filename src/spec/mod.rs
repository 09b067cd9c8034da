//! An RP's own OpenAPI description, indexed for judging behaviour against it (the SPEC rules):
//! every operation of every file (`paths` and `x-ms-paths`), with its path template, method,
//! api-version, declared responses (status → body schema, headers), whether it is declared
//! long-running and where its final result is (`final-state-via`), and where it is written
//! (file and line, for reports).
//!
//! Loaded once, before anything is judged, from the files a target names (`openapi:`), the
//! files `replay`/`proxy`/`probe` are given (`--openapi`), or the embedded RP's own spec. Each
//! response schema is converted to JSON Schema and compiled once ([`schema`]). Lookups map an
//! exchange to its operation: fixed segments compared without case, parameters one segment
//! (a parameter marked `x-ms-skip-url-encoding`, such as `{resourceUri}`, one or more), the
//! most specific template winning, and only files written for the request's api-version.

mod pattern;
pub mod schema;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::init::spec::{Loc, Store};

/// A declared response.
#[derive(Debug)]
pub struct Response {
    /// The body's schema, compiled (None: the response declares no body).
    pub schema: Option<Arc<schema::Compiled>>,
    /// Declared header names, lower-case.
    pub headers: Vec<String>,
}

/// One segment of a path template.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    /// A fixed segment, lower-case.
    Lit(String),
    /// A parameter: exactly one segment.
    Param,
    /// A parameter that is a path itself (`x-ms-skip-url-encoding`): one or more segments.
    Path,
}

/// One operation of a spec.
#[derive(Debug)]
pub struct Operation {
    /// `operationId`, else `METHOD template`.
    pub id: String,
    /// Upper-case.
    pub method: String,
    /// The path template as written.
    pub template: String,
    /// The file as given (reports name it), and the 1-based line of the template's key.
    pub file: String,
    pub line: usize,
    /// The same place, as findings carry it.
    pub pos: crate::diag::Pos,
    segs: Vec<Seg>,
    /// A fixed query an `x-ms-paths` key adds (`?monitor=true`), lower-case.
    query: Vec<(String, String)>,
    /// The api-version the file describes (`info.version`), when it looks like one.
    pub api_version: Option<String>,
    /// By status code (`"200"`, `"default"`).
    pub responses: BTreeMap<String, Response>,
    pub long_running: bool,
    /// `x-ms-long-running-operation-options.final-state-via`, lower-case, when declared.
    pub final_state_via: Option<String>,
    /// The properties a successful answer's body may hold that are marked `x-ms-secret`
    /// (a discriminated model's subtypes' too, each under its discriminator value).
    pub secrets: Vec<schema::Secret>,
    /// The request body's free-text members marked `readOnly` (what SPEC-07 probes; see
    /// [`schema::READ_ONLY_PROBE`]).
    pub read_only_text: Vec<schema::ReadOnlyMember>,
}

impl Operation {
    /// `file:line`, for reports.
    pub fn place(&self) -> String {
        if self.line > 0 {
            format!("{}:{}", self.file, self.line)
        } else {
            self.file.clone()
        }
    }

    /// The declared response for `status`: its own, or `default` for an error status.
    pub fn response(&self, status: u16) -> Option<&Response> {
        self.responses.get(&status.to_string()).or_else(|| {
            (status >= 400)
                .then(|| self.responses.get("default"))
                .flatten()
        })
    }

    /// The declared status codes, for messages.
    pub fn declared(&self) -> String {
        self.responses
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every operation of a set of spec files.
#[derive(Debug, Default)]
pub struct Specs {
    ops: Vec<Operation>,
    /// The files, as given.
    pub files: Vec<String>,
    /// What loading noticed (a ref read as an open object, a schema that did not compile).
    pub warnings: Vec<String>,
}

/// What an exchange maps to.
pub enum Found<'s> {
    Operation(&'s Operation),
    /// A template matches, but only in files written for other api-versions (or the
    /// exchange names no api-version).
    OtherVersion(Vec<&'s str>),
    None,
}

impl Specs {
    /// Load spec files from disk.
    pub fn load(paths: &[PathBuf]) -> Result<Specs, String> {
        let store = Store::default();
        let mut specs = Specs::default();
        for p in paths {
            // Read once: the text gives the lines, the parsed document goes to the store.
            let text = crate::yaml::read_text(p, crate::init::spec::MAX_SPEC_BYTES)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            let doc =
                crate::init::spec::parse_document(p, text.as_bytes()).map_err(|e| e.to_string())?;
            store.preload(p, doc);
            let root = store.root(p).map_err(|e| e.to_string())?;
            specs.add_file(&store, &root, &p.display().to_string(), &text)?;
        }
        specs
            .warnings
            .extend(store.warnings.borrow().iter().cloned());
        Ok(specs)
    }

    /// Load documents held in memory: (name reports use, text for line numbers, document).
    pub fn from_documents(docs: &[(String, String, Value)]) -> Result<Specs, String> {
        let store = Store::default();
        for (name, _, doc) in docs {
            store.preload(Path::new(name), doc.clone());
        }
        let mut specs = Specs::default();
        for (name, text, _) in docs {
            let root = store.root(Path::new(name)).map_err(|e| e.to_string())?;
            specs.add_file(&store, &root, name, text)?;
        }
        specs
            .warnings
            .extend(store.warnings.borrow().iter().cloned());
        Ok(specs)
    }

    fn add_file(
        &mut self,
        store: &Store,
        root: &Loc,
        name: &str,
        text: &str,
    ) -> Result<(), String> {
        let doc = root.value();
        if doc.get("swagger").is_none() && doc.get("openapi").is_none() {
            return Err(format!(
                "{name}: not an OpenAPI document (no `swagger` or `openapi` member)"
            ));
        }
        let version = doc
            .pointer("/info/version")
            .and_then(Value::as_str)
            .filter(|v| v.len() >= 10 && v.as_bytes()[4] == b'-')
            .map(str::to_string);
        let base = doc
            .get("basePath")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim_end_matches('/')
            .to_string();
        let mut compiler = schema::Compiler::new(store);
        for key in ["paths", "x-ms-paths"] {
            let Some(paths) = root.key(key) else { continue };
            for (template, item) in paths.entries() {
                let item = store.deref(&item).map_err(|e| e.to_string())?;
                let line = line_of(text, &template);
                let shared = item.key("parameters");
                for (method, op) in item.entries() {
                    let method = method.to_ascii_uppercase();
                    if !matches!(
                        method.as_str(),
                        "GET" | "PUT" | "PATCH" | "POST" | "DELETE" | "HEAD"
                    ) {
                        continue;
                    }
                    let built = self.operation(
                        store,
                        &mut compiler,
                        &op,
                        shared.as_ref(),
                        OpAt {
                            method,
                            template: &template,
                            base: &base,
                            file: name,
                            line,
                            version: version.clone(),
                        },
                    )?;
                    self.ops.push(built);
                }
            }
        }
        self.warnings.extend(compiler.warnings);
        self.files.push(name.to_string());
        Ok(())
    }

    fn operation(
        &self,
        store: &Store,
        compiler: &mut schema::Compiler<'_>,
        op: &Loc,
        shared: Option<&Loc>,
        at: OpAt<'_>,
    ) -> Result<Operation, String> {
        let (path, query) = match at.template.split_once('?') {
            Some((p, q)) => (p, q),
            None => (at.template, ""),
        };
        // Parameters that are paths themselves (`{resourceUri}`, `{scope}`), and the body's.
        let mut path_params = Vec::new();
        let mut read_only_text = Vec::new();
        for list in [shared.cloned(), op.key("parameters")]
            .into_iter()
            .flatten()
        {
            for p in list.items() {
                let p = store.deref(&p).map_err(|e| e.to_string())?;
                if p.value().get("x-ms-skip-url-encoding") == Some(&Value::Bool(true))
                    && let Some(n) = p.str("name")
                {
                    path_params.push(n.to_string());
                }
                if p.str("in") == Some("body")
                    && let Some(s) = p.key("schema")
                {
                    read_only_text = compiler.read_only_text(&s);
                }
            }
        }
        let full = format!("{}{}", at.base, path);
        let segs = full
            .split('/')
            .filter(|s| !s.is_empty())
            .map(
                |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(name) if path_params.iter().any(|p| p == name) => Seg::Path,
                    Some(_) => Seg::Param,
                    None => Seg::Lit(s.to_ascii_lowercase()),
                },
            )
            .collect();
        let query = query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_ascii_lowercase()))
            .collect();
        let mut responses = BTreeMap::new();
        let mut secrets = Vec::new();
        if let Some(rs) = op.key("responses") {
            for (code, r) in rs.entries() {
                let r = store.deref(&r).map_err(|e| e.to_string())?;
                let schema = match r.key("schema") {
                    Some(s) => {
                        let c = compiler.compile(&s, &format!("{} {}", at.method, at.template));
                        if code.starts_with('2') {
                            for p in compiler.secrets(&s) {
                                if !secrets.contains(&p) {
                                    secrets.push(p);
                                }
                            }
                        }
                        c
                    }
                    None => None,
                };
                let headers = r
                    .key("headers")
                    .map(|h| {
                        h.entries()
                            .into_iter()
                            .map(|(k, _)| k.to_ascii_lowercase())
                            .collect()
                    })
                    .unwrap_or_default();
                responses.insert(code, Response { schema, headers });
            }
        }
        let v = op.value();
        Ok(Operation {
            id: v
                .get("operationId")
                .and_then(Value::as_str)
                .map_or_else(|| format!("{} {}", at.method, at.template), str::to_string),
            method: at.method,
            template: at.template.to_string(),
            file: at.file.to_string(),
            line: at.line,
            pos: crate::diag::Pos::new(&Arc::from(Path::new(at.file)), at.line, 1),
            segs,
            query,
            api_version: at.version,
            responses,
            long_running: v.get("x-ms-long-running-operation") == Some(&Value::Bool(true)),
            final_state_via: v
                .pointer("/x-ms-long-running-operation-options/final-state-via")
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase),
            secrets,
            read_only_text,
        })
    }

    /// The operation `method url` maps to.
    pub fn find(&self, method: &str, url: &str) -> Found<'_> {
        let Ok(u) = crate::http::parse_url(url) else {
            return Found::None;
        };
        let key = crate::lro::path_key(url);
        let segs: Vec<String> = key
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let query: Vec<(String, String)> = u
            .query_pairs()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_ascii_lowercase()))
            .collect();
        let version = query
            .iter()
            .find(|(k, _)| k == "api-version")
            .map(|(_, v)| v.clone());
        let mut best: Option<(&Operation, (usize, usize))> = None;
        let mut other_versions = Vec::new();
        for op in self
            .ops
            .iter()
            .filter(|o| o.method.eq_ignore_ascii_case(method))
        {
            if !op.query.iter().all(|q| query.contains(q)) || !matches(&op.segs, &segs) {
                continue;
            }
            // A file written for one api-version describes only exchanges that name it: one
            // that names none (or another) is not held to it.
            if let Some(have) = &op.api_version
                && !version
                    .as_ref()
                    .is_some_and(|want| want.eq_ignore_ascii_case(have))
            {
                other_versions.push(have.as_str());
                continue;
            }
            let literal = op.segs.iter().filter(|s| matches!(s, Seg::Lit(_))).count();
            let rank = (op.query.len(), literal);
            if best.is_none_or(|(_, r)| rank > r) {
                best = Some((op, rank));
            }
        }
        match best {
            Some((op, _)) => Found::Operation(op),
            None if !other_versions.is_empty() => {
                other_versions.sort_unstable();
                other_versions.dedup();
                Found::OtherVersion(other_versions)
            }
            None => Found::None,
        }
    }

    /// What to add to `base` (the body a write would send anyway) to probe whether the RP
    /// ignores readOnly members on `method url` (SPEC-07): each free-text member the
    /// operation's request body marks readOnly, set to [`schema::READ_ONLY_PROBE`], where
    /// `base` has room for it — the object holding the member's outermost readOnly object is
    /// already there (a probe never makes a writable object up: an `identity` with only its
    /// readOnly ids would switch a feature on, or be refused for the `type` it lacks). None
    /// when there is nothing to probe.
    pub fn read_only_probe(&self, method: &str, url: &str, base: &Value) -> Option<Value> {
        let Found::Operation(op) = self.find(method, url) else {
            return None;
        };
        let mut body = Value::Object(Default::default());
        for m in &op.read_only_text {
            let holder = m.root.rsplit_once('/').map_or("", |(h, _)| h);
            if base.pointer(holder).is_some_and(Value::is_object) {
                set_at(&mut body, &m.pointer, Value::from(schema::READ_ONLY_PROBE));
            }
        }
        (body.as_object().is_some_and(|o| !o.is_empty())).then_some(body)
    }

    pub fn operations(&self) -> &[Operation] {
        &self.ops
    }
}

/// Where an operation is written.
struct OpAt<'a> {
    method: String,
    template: &'a str,
    base: &'a str,
    file: &'a str,
    line: usize,
    version: Option<String>,
}

/// Set `v` at a JSON pointer, making the objects on the way (a non-object on the way: left).
fn set_at(root: &mut Value, pointer: &str, v: Value) {
    let keys: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|k| k.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some((last, path)) = keys.split_last() else {
        return;
    };
    let mut cur = root;
    for k in path {
        let Some(o) = cur.as_object_mut() else { return };
        cur = o
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Default::default()));
    }
    if let Some(o) = cur.as_object_mut() {
        o.insert(last.clone(), v);
    }
}

/// Does the template match these (lower-case, decoded) segments?
fn matches(t: &[Seg], s: &[String]) -> bool {
    match (t.split_first(), s.split_first()) {
        (None, None) => true,
        (Some((Seg::Lit(l), tr)), Some((x, sr))) => l == x && matches(tr, sr),
        (Some((Seg::Param, tr)), Some((_, sr))) => matches(tr, sr),
        // A path parameter takes one or more segments: the shortest that lets the rest match.
        (Some((Seg::Path, tr)), Some(_)) => (1..=s.len()).any(|n| matches(tr, &s[n..])),
        _ => false,
    }
}

/// The 1-based line of a path template's key in the file's text (0 when not found).
fn line_of(text: &str, template: &str) -> usize {
    let key = format!("\"{template}\"");
    let yaml_keys = [format!("{template}:"), format!("'{template}':")];
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with(&key) || yaml_keys.iter().any(|k| t.starts_with(k.as_str()))
        })
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
