//! The operations of one spec, read into one shape whether the document is OpenAPI 2.0
//! (autorest / azure-rest-api-specs) or OpenAPI 3 (the TypeSpec `openapi3` emitter): method,
//! path template, resolved parameters, request body schema, responses with their declared
//! headers, the `x-ms-long-running-operation` flag and options, and `x-ms-examples`.

use super::InitError;
use super::spec::{Loc, Store};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Put,
    Patch,
    Delete,
    Post,
}

impl Method {
    fn parse(s: &str) -> Option<Method> {
        Some(match s {
            "get" => Method::Get,
            "put" => Method::Put,
            "patch" => Method::Patch,
            "delete" => Method::Delete,
            "post" => Method::Post,
            _ => return None,
        })
    }

    pub fn upper(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Post => "POST",
        }
    }
}

/// A resolved parameter.
#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub name: String,
    /// `path`, `query`, `header`, `body`…
    pub location: String,
    pub enum_values: Vec<String>,
    pub pattern: Option<String>,
    pub max_length: Option<u64>,
}

#[derive(Clone, Debug)]
pub(crate) struct Response {
    /// `200`, `201`, `default`…
    pub code: String,
    /// Declared header names as written.
    pub headers: Vec<String>,
    pub schema: Option<Loc>,
}

impl Response {
    pub fn status(&self) -> Option<u16> {
        self.code.parse().ok()
    }

    pub fn has_header(&self, name: &str) -> bool {
        self.headers.iter().any(|h| h.eq_ignore_ascii_case(name))
    }
}

/// One operation of a spec.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    /// Index of the spec in the user's list.
    pub spec: usize,
    pub method: Method,
    pub path: String,
    pub params: Vec<Param>,
    /// Name of the body parameter (the key of the body in an example's `parameters`).
    pub body_name: Option<String>,
    pub body_schema: Option<Loc>,
    pub responses: Vec<Response>,
    /// `x-ms-long-running-operation`, when the operation states it.
    pub long_running: Option<bool>,
    /// `x-ms-long-running-operation-options.final-state-via`, as written.
    pub final_state_via: Option<String>,
    /// `x-ms-examples`: title and the example object (usually `{"$ref": "./examples/…"}`).
    pub examples: Vec<(String, Loc)>,
    /// The document is OpenAPI 3 (which has no `x-ms-long-running-operation`).
    pub oas3: bool,
}

impl Op {
    pub fn describe(&self) -> String {
        format!("{} {}", self.method.upper(), self.path)
    }

    pub fn success(&self) -> impl Iterator<Item = &Response> {
        self.responses
            .iter()
            .filter(|r| r.status().is_some_and(|s| (200..300).contains(&s)))
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    pub fn has_header_param(&self, name: &str) -> bool {
        self.params
            .iter()
            .any(|p| p.location == "header" && p.name.eq_ignore_ascii_case(name))
    }
}

/// One input document.
#[derive(Debug)]
pub(crate) struct Spec {
    /// `info.version`.
    pub version: Option<String>,
    pub ops: Vec<Op>,
    pub oas3: bool,
}

/// Read a spec file and its operations.
pub(crate) fn read_spec(store: &Store, path: &Path, index: usize) -> Result<Spec, InitError> {
    let root = store.root(path)?;
    let oas3 = match (root.str("swagger"), root.str("openapi")) {
        (Some("2.0"), _) => false,
        (_, Some(v)) if v.starts_with('3') => true,
        _ => {
            return Err(InitError::NotOpenApi {
                path: path.to_path_buf(),
                reason: "no `swagger: \"2.0\"` or `openapi: 3.x` at the top".into(),
            });
        }
    };
    let version = root
        .key("info")
        .and_then(|i| i.str("version").map(str::to_string));
    let mut ops = Vec::new();
    // `x-ms-paths` holds paths that differ only by a query (`...?op=x`); they are paths too.
    for paths in ["paths", "x-ms-paths"].iter().filter_map(|k| root.key(k)) {
        for (path, item) in paths.entries() {
            let item = store.deref(&item)?;
            let shared = match item.key("parameters") {
                Some(p) => read_params(store, &p)?,
                None => Vec::new(),
            };
            for (method, op) in item.entries() {
                let Some(method) = Method::parse(&method.to_ascii_lowercase()) else {
                    continue;
                };
                ops.push(read_op(store, index, oas3, method, &path, &op, &shared)?);
            }
        }
    }
    Ok(Spec { version, ops, oas3 })
}

fn read_op(
    store: &Store,
    spec: usize,
    oas3: bool,
    method: Method,
    path: &str,
    op: &Loc,
    shared: &[(Param, Option<Loc>)],
) -> Result<Op, InitError> {
    let mut params: Vec<(Param, Option<Loc>)> = shared.to_vec();
    if let Some(p) = op.key("parameters") {
        for (param, schema) in read_params(store, &p)? {
            params.retain(|(q, _)| !(q.name == param.name && q.location == param.location));
            params.push((param, schema));
        }
    }
    let (mut body_name, mut body_schema) = (None, None);
    for (p, schema) in &params {
        if p.location == "body" {
            body_name = Some(p.name.clone());
            body_schema = schema.clone();
        }
    }
    if oas3 && let Some(rb) = op.key("requestBody") {
        let rb = store.deref(&rb)?;
        if let Some(schema) = json_content_schema(&rb) {
            body_schema = Some(schema);
            body_name = Some(
                rb.str("x-ms-requestBody-name")
                    .or(op.str("x-ms-requestBody-name"))
                    .unwrap_or("body")
                    .to_string(),
            );
        }
    }
    let mut responses = Vec::new();
    if let Some(rs) = op.key("responses") {
        for (code, r) in rs.entries() {
            let r = store.deref(&r)?;
            let headers = r
                .key("headers")
                .map(|h| h.entries().into_iter().map(|(k, _)| k).collect())
                .unwrap_or_default();
            let schema = if oas3 {
                json_content_schema(&r)
            } else {
                r.key("schema")
            };
            responses.push(Response {
                code,
                headers,
                schema,
            });
        }
    }
    let long_running = op
        .value()
        .get("x-ms-long-running-operation")
        .and_then(|v| v.as_bool());
    let final_state_via = op
        .value()
        .pointer("/x-ms-long-running-operation-options/final-state-via")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let examples = op
        .key("x-ms-examples")
        .map(|e| e.entries())
        .unwrap_or_default();
    Ok(Op {
        spec,
        method,
        path: path.to_string(),
        params: params.into_iter().map(|(p, _)| p).collect(),
        body_name,
        body_schema,
        responses,
        long_running,
        final_state_via,
        examples,
        oas3,
    })
}

/// The schema of an OpenAPI 3 `content` entry for JSON.
fn json_content_schema(holder: &Loc) -> Option<Loc> {
    let content = holder.key("content")?;
    let entries = content.entries();
    let pick = entries
        .iter()
        .find(|(k, _)| k.starts_with("application/json"))
        .or_else(|| entries.iter().find(|(k, _)| k.contains("json")))?;
    pick.1.key("schema")
}

fn read_params(store: &Store, list: &Loc) -> Result<Vec<(Param, Option<Loc>)>, InitError> {
    let mut out = Vec::new();
    for p in list.items() {
        let p = store.deref(&p)?;
        let (Some(name), Some(location)) = (p.str("name"), p.str("in")) else {
            continue;
        };
        let schema = match p.key("schema") {
            Some(s) => Some(store.deref(&s)?),
            None => None,
        };
        // OpenAPI 2 keeps enum/pattern on the parameter; 3 in its schema.
        let facet = |key: &str| {
            p.value()
                .get(key)
                .or_else(|| schema.as_ref().and_then(|s| s.value().get(key)))
                .cloned()
        };
        let enum_values = facet("enum")
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        out.push((
            Param {
                name: name.to_string(),
                location: location.to_string(),
                enum_values,
                pattern: facet("pattern").and_then(|v| v.as_str().map(str::to_string)),
                max_length: facet("maxLength").and_then(|v| v.as_u64()),
            },
            if location == "body" { schema } else { None },
        ));
    }
    Ok(out)
}
