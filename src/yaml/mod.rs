//! Positioned YAML: parse a file into `marked_yaml` nodes and read them into typed values while
//! collecting every mistake as a [`Diagnostic`] with file, line and column.
//!
//! serde_yaml only knows positions of its own syntax errors; the scenario language needs the
//! position of valid nodes too (an unknown rule ID on line 12), hence this small layer.
//! [`Reader`] is the cursor that owns the diagnostics; [`Map`] checks a mapping's keys against
//! the ones a node accepts (unknown keys are errors, with a did-you-mean).

mod file;

pub use file::{FileError, MAX_SOURCE_BYTES, human_bytes, read_text};

use std::path::Path;
use std::sync::Arc;

use marked_yaml::{LoaderOptions, Node, types::MarkedMappingNode};

use crate::diag::{Diagnostic, Pos, did_you_mean};

/// Parse YAML text whose top level must be a mapping.
pub fn parse(file: &Arc<Path>, text: &str) -> Result<Node, Diagnostic> {
    // Files are read within this bound; text from elsewhere is held to it too.
    if text.len() > MAX_SOURCE_BYTES {
        return Err(Diagnostic::new(
            Pos::new(file, 1, 1),
            format!(
                "the YAML text is {}, over the limit of {}",
                human_bytes(text.len() as u64),
                human_bytes(MAX_SOURCE_BYTES as u64)
            ),
        ));
    }
    // Guard the recursive loader against pathological nesting (a fuzz finding class).
    if let Some(line) = too_deep(text, 200) {
        return Err(Diagnostic::new(
            Pos::new(file, line, 1),
            "YAML nests deeper than 200 levels",
        ));
    }
    // prevent_coercion marks quoted scalars as strings (plain ones stay typed).
    let opts = LoaderOptions::default()
        .error_on_duplicate_keys(true)
        .prevent_coercion(true);
    marked_yaml::parse_yaml_with_options(0, text, opts).map_err(|e| load_error(file, e))
}

/// The first line (1-based) where nesting passes `limit` levels: flow brackets, or block
/// nesting by indentation and by compact indicators on one line (`- - - x`, `? - ? x`).
/// yaml-rust2 limits flow nesting itself but not block nesting, whose recursion a line of
/// 100 000 `- ` overflowed the stack with (an abort, not a catchable panic).
pub(crate) fn too_deep(text: &str, limit: usize) -> Option<usize> {
    let mut flow: usize = 0;
    for (n, line) in text.lines().enumerate() {
        if block_column(line) / 2 > limit {
            return Some(n + 1);
        }
        for c in line.chars() {
            match c {
                '[' | '{' => {
                    flow += 1;
                    if flow > limit {
                        return Some(n + 1);
                    }
                }
                ']' | '}' => flow = flow.saturating_sub(1),
                _ => {}
            }
        }
    }
    None
}

/// The column where a line's content starts once its indentation and any compact block
/// indicators (`- `, `? `, `: `, with anchors and tags between them) are skipped: the depth
/// of block nesting on that line, in columns.
fn block_column(line: &str) -> usize {
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let at = i;
        match b.get(i) {
            Some(b'-' | b'?' | b':') if matches!(b.get(i + 1), None | Some(b' ' | b'\t')) => {
                i += 1;
            }
            Some(b'&' | b'!') => {
                while i < b.len() && !matches!(b[i], b' ' | b'\t') {
                    i += 1;
                }
            }
            _ => return at,
        }
    }
}

fn load_error(file: &Arc<Path>, e: marked_yaml::LoadError) -> Diagnostic {
    use marked_yaml::LoadError as E;
    let at = |m: &marked_yaml::Marker| Pos::new(file, m.line().max(1), m.column().max(1));
    match e {
        E::TopLevelMustBeMapping(m) => Diagnostic::new(at(&m), "the top level must be a mapping")
            .expected("`key: value` lines"),
        E::TopLevelMustBeSequence(m) => Diagnostic::new(at(&m), "the top level must be a sequence"),
        E::UnexpectedAnchor(m) => Diagnostic::new(
            at(&m),
            "YAML anchors and aliases are not supported; write the value out",
        ),
        E::MappingKeyMustBeScalar(m) => {
            Diagnostic::new(at(&m), "mapping keys must be plain strings")
        }
        E::UnexpectedTag(m) => Diagnostic::new(at(&m), "YAML tags (`!tag`) are not supported"),
        E::ScanError(m, se) => Diagnostic::new(at(&m), format!("invalid YAML: {}", se.info()))
            .expected("valid YAML here; the mistake may be earlier (an unclosed bracket or quote, a tab used for indentation)"),
        E::DuplicateKey(d) => {
            let m = d
                .key
                .span()
                .start()
                .copied()
                .unwrap_or(marked_yaml::Marker::new(0, 0, 1, 1));
            let first = d.prev_key.span().start().map_or(0, |m| m.line());
            Diagnostic::new(
                at(&m),
                format!(
                    "duplicate key `{}` (first given at line {first}; only one may be)",
                    d.key.as_str()
                ),
            )
        }
    }
}

/// Reads nodes into values, remembering every problem.
pub struct Reader {
    pub file: Arc<Path>,
    pub diags: Vec<Diagnostic>,
}

impl Reader {
    pub fn new(file: Arc<Path>) -> Self {
        Reader {
            file,
            diags: Vec::new(),
        }
    }

    pub fn pos(&self, node: &Node) -> Pos {
        match node.span().start() {
            Some(m) => Pos::new(&self.file, m.line().max(1), m.column().max(1)),
            None => Pos::new(&self.file, 1, 1),
        }
    }

    pub fn error(&mut self, node: &Node, message: impl Into<String>, expected: Option<String>) {
        let mut d = Diagnostic::new(self.pos(node), message);
        d.expected = expected;
        self.diags.push(d);
    }

    /// A mapping whose keys must all be in `allowed`.
    pub fn map<'n>(&mut self, node: &'n Node, what: &str, allowed: &[&str]) -> Option<Map<'n>> {
        let Some(m) = node.as_mapping() else {
            self.error(
                node,
                format!("{what} must be a mapping"),
                Some("`key: value` entries".into()),
            );
            return None;
        };
        for key in m.keys() {
            let k = key.as_str();
            if !allowed.contains(&k) {
                let kn = Node::Scalar(key.clone());
                let hint = match did_you_mean(k, allowed.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`? (allowed: {})", allowed.join(", ")),
                    None => format!("one of: {}", allowed.join(", ")),
                };
                self.error(&kn, format!("unknown key `{k}` in {what}"), Some(hint));
            }
        }
        Some(Map { node: m })
    }

    /// A mapping with free-form keys (headers, variables, table rows).
    pub fn free_map<'n>(&mut self, node: &'n Node, what: &str) -> Option<Map<'n>> {
        match node.as_mapping() {
            Some(m) => Some(Map { node: m }),
            None => {
                self.error(node, format!("{what} must be a mapping"), None);
                None
            }
        }
    }

    pub fn seq<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [Node]> {
        match node.as_sequence() {
            Some(s) => Some(s.as_slice()),
            None => {
                self.error(
                    node,
                    format!("{what} must be a list"),
                    Some("`- item` entries".into()),
                );
                None
            }
        }
    }

    /// A list, or a single item read as a list of one.
    pub fn one_or_many<'n>(&mut self, node: &'n Node) -> Vec<&'n Node> {
        match node.as_sequence() {
            Some(s) => s.iter().collect(),
            None => vec![node],
        }
    }

    pub fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match node.as_scalar() {
            Some(s) => Some(s.as_str().to_string()),
            None => {
                self.error(node, format!("{what} must be a string"), None);
                None
            }
        }
    }

    pub fn u64(&mut self, node: &Node, what: &str) -> Option<u64> {
        match node
            .as_scalar()
            .and_then(|s| s.as_str().trim().parse::<u64>().ok())
        {
            Some(v) => Some(v),
            None => {
                self.error(node, format!("{what} must be a whole number"), None);
                None
            }
        }
    }

    /// Whole seconds from 1 to `max` (`max_text` says the bound for people: "a week").
    pub fn seconds(&mut self, node: &Node, what: &str, max: u64, max_text: &str) -> Option<u64> {
        let v = self.u64(node, &format!("{what} (seconds)"))?;
        if v == 0 || v > max {
            self.error(
                node,
                format!("{what} must be from 1 to {max} seconds ({max_text}), not {v}"),
                None,
            );
            return None;
        }
        Some(v)
    }

    pub fn f64(&mut self, node: &Node, what: &str) -> Option<f64> {
        match node
            .as_scalar()
            .and_then(|s| s.as_str().trim().parse::<f64>().ok())
        {
            Some(v) if v.is_finite() => Some(v),
            _ => {
                self.error(node, format!("{what} must be a number"), None);
                None
            }
        }
    }

    pub fn bool(&mut self, node: &Node, what: &str) -> Option<bool> {
        match node.as_scalar().and_then(|s| s.as_bool()) {
            Some(v) => Some(v),
            None => {
                self.error(node, format!("{what} must be true or false"), None);
                None
            }
        }
    }

    /// A list of strings, or a single string.
    pub fn strings(&mut self, node: &Node, what: &str) -> Vec<(String, Pos)> {
        let mut out = Vec::new();
        for n in self.one_or_many(node) {
            if let Some(s) = self.string(n, what) {
                out.push((s, self.pos(n)));
            }
        }
        out
    }
}

/// Convert a node to JSON: plain scalars are typed (null, booleans, numbers), quoted ones stay
/// strings, so `"200"` and `200` mean what they look like.
pub fn to_json(node: &Node) -> serde_json::Value {
    use serde_json::Value;
    match node {
        Node::Scalar(s) => {
            let text = s.as_str();
            if !s.may_coerce() {
                return Value::String(text.to_string());
            }
            match text {
                "" | "~" | "null" | "Null" | "NULL" => Value::Null,
                _ => {
                    if let Some(b) = s.as_bool() {
                        Value::Bool(b)
                    } else if let Ok(i) = text.parse::<i64>() {
                        Value::from(i)
                    } else if let Some(n) = text
                        .parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite() && text.chars().any(|c| c.is_ascii_digit()))
                        .and_then(serde_json::Number::from_f64)
                    {
                        Value::Number(n)
                    } else {
                        Value::String(text.to_string())
                    }
                }
            }
        }
        Node::Sequence(seq) => Value::Array(seq.iter().map(to_json).collect()),
        Node::Mapping(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().to_string(), to_json(v)))
                .collect(),
        ),
    }
}

/// A mapping node whose keys were checked.
pub struct Map<'n> {
    node: &'n MarkedMappingNode,
}

impl<'n> Map<'n> {
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.node.get_node(key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.node.get_node(key).is_some()
    }

    /// Entries in file order, with each key's node (for positions).
    pub fn entries(&self) -> Vec<(Node, &'n Node)> {
        self.node
            .iter()
            .map(|(k, v)| (Node::Scalar(k.clone()), v))
            .collect()
    }

    pub fn keys(&self) -> Vec<String> {
        self.node.keys().map(|k| k.as_str().to_string()).collect()
    }

    pub fn node_pos(&self, reader: &Reader) -> Pos {
        match self.node.span().start() {
            Some(m) => Pos::new(&reader.file, m.line().max(1), m.column().max(1)),
            None => Pos::new(&reader.file, 1, 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> Arc<Path> {
        Arc::from(Path::new("t.yaml"))
    }

    #[test]
    fn unknown_keys_are_positioned_with_suggestion() {
        let node = parse(&file(), "a: 1\nstauts: 2\n").unwrap();
        let mut r = Reader::new(file());
        r.map(&node, "step", &["a", "status"]);
        assert_eq!(r.diags.len(), 1);
        assert_eq!((r.diags[0].pos.line, r.diags[0].pos.col), (2, 1));
        assert!(
            r.diags[0]
                .expected
                .as_deref()
                .unwrap()
                .contains("did you mean `status`")
        );
    }

    #[test]
    fn json_conversion_respects_quotes() {
        let node = parse(&file(), "a: 200\nb: \"200\"\nc: true\nd: ~\ne: x\nf: 1.5\n").unwrap();
        let v = to_json(&node);
        assert_eq!(
            v,
            serde_json::json!({"a":200,"b":"200","c":true,"d":null,"e":"x","f":1.5})
        );
    }

    #[test]
    fn syntax_errors_are_positioned() {
        let err = parse(&file(), "a: [1, 2\nb: 3\n").unwrap_err();
        assert!(err.pos.line >= 1);
        let err = parse(&file(), "a: 1\na: 2\n").unwrap_err();
        assert!(err.message.contains("duplicate key"), "{}", err.message);
        assert_eq!(err.pos.line, 2);
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&file(), &text).is_err());
    }

    #[test]
    fn compact_block_nesting_is_refused_not_overflowed() {
        // Each of these overflowed the stack (an abort, not a panic) before the guard
        // counted compact indicators.
        for text in [
            format!("a:\n{}x\n", "- ".repeat(100_000)),
            format!("a:\n{}\n", "- ".repeat(100_000)),
            format!("a:\n- {}x\n", "? - ".repeat(50_000)),
            format!("a:\n{}x\n", "- &a !t ".repeat(30_000)),
        ] {
            let err = parse(&file(), &text).unwrap_err();
            assert!(err.message.contains("deeper than"), "{}", err.message);
        }
        // A few compact levels are ordinary YAML.
        let v = to_json(&parse(&file(), "a:\n- - - x\n- ? k\n  : v\n").unwrap());
        assert_eq!(v, serde_json::json!({"a": [[["x"]], {"k": "v"}]}));
        assert_eq!(block_column("  - - ? x"), 8);
        assert_eq!(block_column("---"), 0);
        assert_eq!(block_column("- -x"), 2);
        let err = parse(&file(), &format!("a: 1\nb:\n{}x\n", "- ".repeat(500))).unwrap_err();
        assert_eq!((err.pos.line, err.pos.col), (3, 1));
    }
}
