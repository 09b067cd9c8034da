//! Reading OpenAPI documents (JSON or YAML) and following `$ref`s between and inside them.
//!
//! A [`Loc`] is a place in a loaded document: the file, the document and a JSON Pointer. Refs
//! resolve relative to the file that holds them, so a schema found through another file keeps
//! resolving its own refs correctly. The [`Store`] loads each file once.
//!
//! ARM specs point at the shared `common-types/resource-management/vN/types.json` of the
//! azure-rest-api-specs repository. When that file is present (a checkout of the repository) it
//! is read like any other; when it is absent (a spec folder copied alone, TypeSpec output), a
//! small built-in description of the definitions and parameters the generator needs stands in
//! (written here from the ARM contract, not copied), and a definition it does not know is an
//! opaque object with a warning. Any other ref that does not resolve is an error.

use super::InitError;
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

/// A place inside a loaded document.
#[derive(Clone, Debug)]
pub(crate) struct Loc {
    pub file: Rc<PathBuf>,
    doc: Rc<Value>,
    pub pointer: String,
    /// The document is the built-in stand-in for a missing common-types file.
    builtin: bool,
}

static NULL: Value = Value::Null;

impl Loc {
    pub fn value(&self) -> &Value {
        self.doc.pointer(&self.pointer).unwrap_or(&NULL)
    }

    /// The member `key` of an object, if present.
    pub fn key(&self, key: &str) -> Option<Loc> {
        self.value().get(key)?;
        Some(self.child(key))
    }

    /// The members of an object, in document order.
    pub fn entries(&self) -> Vec<(String, Loc)> {
        match self.value() {
            Value::Object(m) => m.keys().map(|k| (k.clone(), self.child(k))).collect(),
            _ => Vec::new(),
        }
    }

    /// The elements of an array.
    pub fn items(&self) -> Vec<Loc> {
        match self.value() {
            Value::Array(a) => (0..a.len()).map(|i| self.child(&i.to_string())).collect(),
            _ => Vec::new(),
        }
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.value().get(key)?.as_str()
    }

    fn child(&self, token: &str) -> Loc {
        let mut l = self.clone();
        l.pointer.push('/');
        l.pointer
            .push_str(&token.replace('~', "~0").replace('/', "~1"));
        l
    }

    /// A document that lives only in memory (unit tests).
    #[cfg(test)]
    pub fn inline(name: &str, value: Value) -> Loc {
        Loc {
            file: Rc::new(PathBuf::from(name)),
            doc: Rc::new(value),
            pointer: String::new(),
            builtin: false,
        }
    }

    /// `file#/pointer` for messages.
    pub fn describe(&self) -> String {
        format!("{}#{}", self.file.display(), self.pointer)
    }
}

/// Loaded documents, by path.
#[derive(Default)]
pub(crate) struct Store {
    docs: RefCell<HashMap<PathBuf, (Rc<Value>, bool)>>,
    pub warnings: RefCell<Vec<String>>,
}

/// Largest spec file read (the largest azure-rest-api-specs files are a few MiB).
pub const MAX_SPEC_BYTES: usize = 32 * 1024 * 1024;

/// Deepest nesting of a YAML spec (JSON's reader stops at 128 levels too).
const MAX_YAML_DEPTH: usize = 128;

/// Refs followed in a row before a chain counts as a cycle.
const MAX_REF_CHAIN: usize = 64;

impl Store {
    /// The root of a spec file the user named.
    pub fn root(&self, path: &Path) -> Result<Loc, InitError> {
        let path = normalize(path);
        let (doc, builtin) = self.load(&path, None, false)?;
        Ok(Loc {
            file: Rc::new(path),
            doc,
            pointer: String::new(),
            builtin,
        })
    }

    /// A document held in memory under `path` (the embedded RP's spec), read as if from disk.
    pub fn preload(&self, path: &Path, doc: Value) {
        self.docs
            .borrow_mut()
            .insert(normalize(path), (Rc::new(doc), false));
    }

    /// Read a JSON or YAML file (an example) relative to `from`'s file; `Ok(None)` when it
    /// does not exist.
    pub fn load_relative(&self, from: &Loc, rel: &str) -> Result<Option<Loc>, InitError> {
        let path = normalize(&from.file.parent().unwrap_or(Path::new("")).join(rel));
        if !path.is_file() {
            return Ok(None);
        }
        let (doc, builtin) = self.load(&path, Some(from), true)?;
        Ok(Some(Loc {
            file: Rc::new(path),
            doc,
            pointer: String::new(),
            builtin,
        }))
    }

    /// Follow `loc` while it is a `{"$ref": ...}` object.
    pub fn deref(&self, loc: &Loc) -> Result<Loc, InitError> {
        let mut cur = loc.clone();
        for _ in 0..MAX_REF_CHAIN {
            match cur.value().get("$ref") {
                Some(Value::String(r)) => cur = self.resolve(&cur, r)?,
                Some(_) => {
                    return Err(InitError::Ref {
                        at: cur.describe(),
                        reference: cur.value()["$ref"].to_string(),
                        reason: "`$ref` must be a string".into(),
                    });
                }
                None => return Ok(cur),
            }
        }
        Err(InitError::Ref {
            at: loc.describe(),
            reference: loc.str("$ref").unwrap_or_default().into(),
            reason: format!("more than {MAX_REF_CHAIN} refs in a row (a cycle?)"),
        })
    }

    /// Resolve one ref string found at `from`.
    pub fn resolve(&self, from: &Loc, reference: &str) -> Result<Loc, InitError> {
        let (file_part, fragment) = match reference.split_once('#') {
            Some((f, p)) => (f, p),
            None => (reference, ""),
        };
        let err = |reason: String| InitError::Ref {
            at: from.describe(),
            reference: reference.to_string(),
            reason,
        };
        let (file, doc, builtin) = if file_part.is_empty() {
            (from.file.clone(), from.doc.clone(), from.builtin)
        } else if file_part.contains("://") {
            return Err(err("remote refs are not followed".into()));
        } else {
            let path = normalize(&from.file.parent().unwrap_or(Path::new("")).join(file_part));
            let (doc, builtin) = self.load(&path, Some(from), false)?;
            (Rc::new(path), doc, builtin)
        };
        let pointer = percent_decode(fragment);
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(err(format!("`#{fragment}` is not a JSON Pointer")));
        }
        if doc.pointer(&pointer).is_none() {
            if builtin {
                self.warn(format!(
                    "{reference}: not in rpconform's built-in common-types (the file is absent); treated as an open object"
                ));
                let doc = Rc::new(json!({"type": "object"}));
                return Ok(Loc {
                    file,
                    doc,
                    pointer: String::new(),
                    builtin,
                });
            }
            return Err(err(format!(
                "{} has nothing at `{pointer}`",
                file.display()
            )));
        }
        Ok(Loc {
            file,
            doc,
            pointer,
            builtin,
        })
    }

    pub fn warn(&self, msg: String) {
        let mut w = self.warnings.borrow_mut();
        if !w.contains(&msg) {
            w.push(msg);
        }
    }

    /// Load a spec file (`example`: an `x-ms-examples` file, which decides no verdict: a key
    /// given twice in it is a warning, the last value read, not an error).
    fn load(
        &self,
        path: &Path,
        from: Option<&Loc>,
        example: bool,
    ) -> Result<(Rc<Value>, bool), InitError> {
        if let Some((doc, builtin)) = self.docs.borrow().get(path) {
            return Ok((doc.clone(), *builtin));
        }
        // Regular files only, bounded: a `$ref` to /dev/zero or a FIFO must not hang or fill
        // memory.
        let (doc, builtin) = match crate::yaml::read_text(path, MAX_SPEC_BYTES) {
            Ok(text) if example => {
                let (doc, twice) = parse_checked(path, text.as_bytes())?;
                if let Some(d) = twice {
                    self.warn(format!(
                        "{}:{}:{}: {} (the last is used)",
                        path.display(),
                        d.line,
                        d.column,
                        d.message()
                    ));
                }
                (Rc::new(doc), false)
            }
            Ok(text) => (Rc::new(parse_document(path, text.as_bytes())?), false),
            Err(e) if e.not_found() && is_common_types(path) => {
                self.warn(format!(
                    "{} not found: using rpconform's built-in description of ARM common types",
                    path.display()
                ));
                (Rc::new(builtin_common_types()), true)
            }
            // Not UTF-8: where the first bad byte is.
            Err(e) if (e.line, e.col) != (1, 1) => {
                return Err(InitError::Parse {
                    path: path.to_path_buf(),
                    line: e.line,
                    column: e.col,
                    message: e.message,
                });
            }
            Err(e) => {
                let kind = if e.not_found() {
                    std::io::ErrorKind::NotFound
                } else {
                    std::io::ErrorKind::Other
                };
                let msg = e
                    .message
                    .strip_prefix("cannot read: ")
                    .unwrap_or(&e.message);
                return Err(InitError::Io {
                    path: path.to_path_buf(),
                    referenced_from: from.map(Loc::describe),
                    source: std::io::Error::new(kind, msg.to_string()),
                });
            }
        };
        self.docs
            .borrow_mut()
            .insert(path.to_path_buf(), (doc.clone(), builtin));
        Ok((doc, builtin))
    }
}

/// Parse JSON or YAML: by extension, and for other names JSON when the text starts with `{`.
/// A key given twice in one object is an error naming both lines.
pub(crate) fn parse_document(path: &Path, bytes: &[u8]) -> Result<Value, InitError> {
    match parse_checked(path, bytes)? {
        (doc, None) => Ok(doc),
        (_, Some(d)) => Err(InitError::Parse {
            path: path.to_path_buf(),
            line: d.line,
            column: d.column,
            message: d.message(),
        }),
    }
}

/// [`parse_document`], a key given twice in JSON returned beside the document (the last value
/// read) rather than refused.
fn parse_checked(
    path: &Path,
    bytes: &[u8],
) -> Result<(Value, Option<super::dup_keys::Duplicate>), InitError> {
    let text = std::str::from_utf8(bytes).map_err(|e| InitError::Parse {
        path: path.to_path_buf(),
        line: 0,
        column: 0,
        message: format!("not UTF-8: {e}"),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let json = match ext.as_str() {
        "json" => true,
        "yaml" | "yml" => false,
        _ => text.trim_start().starts_with('{'),
    };
    if json {
        let doc = serde_json::from_str(text).map_err(|e| InitError::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        // The reader kept the last of a key given twice; which one counts is not ours to pick.
        Ok((doc, super::dup_keys::first_duplicate(text)))
    } else {
        // Refused before parsing: the YAML reader takes quadratic time on deep nesting.
        if let Some(line) = crate::yaml::too_deep(text, MAX_YAML_DEPTH) {
            return Err(InitError::Parse {
                path: path.to_path_buf(),
                line,
                column: 1,
                message: format!("the YAML nests deeper than {MAX_YAML_DEPTH} levels"),
            });
        }
        let v: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
            // serde_yaml names neither line of a key given twice.
            if let Some(d) = super::dup_keys::first_yaml_duplicate(text) {
                return InitError::Parse {
                    path: path.to_path_buf(),
                    line: d.line,
                    column: d.column,
                    message: d.message(),
                };
            }
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            InitError::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.to_string(),
            }
        })?;
        Ok((yaml_to_json(v), None))
    }
}

/// YAML to JSON; keys that are not strings (`200:` unquoted) become their text.
fn yaml_to_json(v: serde_yaml::Value) -> Value {
    use serde_yaml::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(s) => Value::Array(s.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| {
                    let key = match k {
                        Y::String(s) => s,
                        Y::Number(n) => n.to_string(),
                        Y::Bool(b) => b.to_string(),
                        Y::Null => "null".into(),
                        other => serde_yaml::to_string(&other)
                            .unwrap_or_default()
                            .trim()
                            .to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Y::Tagged(t) => yaml_to_json(t.value),
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(hex) = std::str::from_utf8(&bytes[i + 1..i + 3])
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Lexically resolve `.` and `..` (the file may not exist, so no canonicalize).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn is_common_types(path: &Path) -> bool {
    let s = path.to_string_lossy().replace('\\', "/");
    s.contains("common-types/resource-management/")
}

/// The parts of ARM's common types the generator reads: resource envelopes (tracked ones
/// require `location`; AzureEntityResource carries `etag`) and the standard parameters.
fn builtin_common_types() -> Value {
    let id = json!({"type": "string", "readOnly": true});
    let resource = json!({
        "type": "object",
        "properties": {"id": id, "name": id, "type": id,
                       "systemData": {"type": "object", "readOnly": true}}
    });
    let path_param =
        |name: &str| json!({"name": name, "in": "path", "required": true, "type": "string"});
    json!({
        "definitions": {
            "Resource": resource,
            "ProxyResource": {"type": "object", "allOf": [{"$ref": "#/definitions/Resource"}]},
            "ExtensionResource": {"type": "object", "allOf": [{"$ref": "#/definitions/Resource"}]},
            "TrackedResource": {
                "type": "object",
                "required": ["location"],
                "properties": {
                    "location": {"type": "string"},
                    "tags": {"type": "object", "additionalProperties": {"type": "string"}}
                },
                "allOf": [{"$ref": "#/definitions/Resource"}]
            },
            "AzureEntityResource": {
                "type": "object",
                "properties": {"etag": {"type": "string", "readOnly": true}},
                "allOf": [{"$ref": "#/definitions/Resource"}]
            },
            "ErrorResponse": {"type": "object"},
            "ErrorDetail": {"type": "object"},
            "systemData": {"type": "object", "readOnly": true},
        },
        "parameters": {
            "SubscriptionIdParameter": path_param("subscriptionId"),
            "ResourceGroupNameParameter": path_param("resourceGroupName"),
            "LocationParameter": path_param("location"),
            "ManagementGroupNameParameter": path_param("managementGroupName"),
            "ScopeParameter": path_param("scope"),
            "OperationIdParameter": path_param("operationId"),
            "ApiVersionParameter": {"name": "api-version", "in": "query", "required": true, "type": "string"},
            "If-Match": {"name": "If-Match", "in": "header", "required": false, "type": "string"},
            "If-None-Match": {"name": "If-None-Match", "in": "header", "required": false, "type": "string"}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_keeps_leading_parents() {
        assert_eq!(
            normalize(Path::new("a/b/../../../c/./d.json")),
            PathBuf::from("../c/d.json")
        );
        assert_eq!(normalize(Path::new("/x/y/../z")), PathBuf::from("/x/z"));
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("/definitions/A%20B"), "/definitions/A B");
        assert_eq!(percent_decode("/x%2"), "/x%2");
    }

    #[test]
    fn yaml_numeric_keys_become_strings() {
        let v = parse_document(
            Path::new("x.yaml"),
            b"responses:\n  200: {description: ok}\n",
        )
        .unwrap();
        assert_eq!(v["responses"]["200"]["description"], "ok");
    }

    /// A spec or a file it refers to that gives a key twice is refused; an example file, which
    /// decides no verdict, is read (its last value) with a warning naming both lines.
    #[test]
    fn a_key_given_twice_is_refused_in_specs_and_said_in_examples() {
        let dir = std::env::temp_dir().join(format!("rpconform-dupkeys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let twice = "{\n  \"a\": 1,\n  \"a\": 2\n}\n";
        std::fs::write(dir.join("spec.json"), twice).unwrap();
        std::fs::write(dir.join("example.json"), twice).unwrap();
        let store = Store::default();
        let e = store.root(&dir.join("spec.json")).unwrap_err().to_string();
        assert!(e.contains("spec.json:3:") && e.contains("line 2"), "{e}");
        let from = Loc::inline(dir.join("spec.json").to_str().unwrap(), json!({}));
        let ex = store.load_relative(&from, "example.json").unwrap().unwrap();
        assert_eq!(ex.value()["a"], 2);
        let w = store.warnings.borrow().join("\n");
        assert!(w.contains("example.json:3:") && w.contains("line 2"), "{w}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parse_errors_have_positions() {
        let e = parse_document(Path::new("x.json"), b"{\n  \"a\": 1,\n}").unwrap_err();
        let s = e.to_string();
        assert!(s.contains("x.json:3:1"), "{s}");
        let e = parse_document(Path::new("x.yaml"), b"a: [1,\nb: {").unwrap_err();
        assert!(e.to_string().contains("x.yaml:"), "{e}");
    }
}
