//! A small YAML writer that can place comments: the document is a tree of [`Node`]s whose map
//! entries and sequence items carry comment lines above them and a comment at the end of their
//! line. serde_yaml cannot write comments, and splicing them into its output at known keys
//! breaks as soon as a key repeats (every type has `create_body`), so the generator builds this
//! tree and writes it itself.
//!
//! Scalars are written by [`super::quote`].

use super::quote::scalar_string;
use serde_json::Value;
use std::fmt::Write as _;

/// A YAML node to write.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// A JSON scalar: null, bool, number or string.
    Scalar(Value),
    Map(Vec<Entry>),
    Seq(Vec<Item>),
}

/// One `key: value` of a map.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: String,
    pub value: Node,
    /// Full-line comments written above the entry.
    pub above: Vec<String>,
    /// A comment at the end of the key's line.
    pub trailing: Option<String>,
}

/// One `- value` of a sequence.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub value: Node,
    pub above: Vec<String>,
    pub trailing: Option<String>,
}

impl Node {
    pub fn str(s: impl Into<String>) -> Node {
        Node::Scalar(Value::String(s.into()))
    }

    pub fn bool(b: bool) -> Node {
        Node::Scalar(Value::Bool(b))
    }

    pub fn map() -> Node {
        Node::Map(Vec::new())
    }

    /// Convert JSON into nodes (no comments).
    pub fn from_json(v: &Value) -> Node {
        match v {
            Value::Object(m) => Node::Map(
                m.iter()
                    .map(|(k, v)| Entry::new(k, Node::from_json(v)))
                    .collect(),
            ),
            Value::Array(a) => Node::Seq(a.iter().map(|v| Item::new(Node::from_json(v))).collect()),
            other => Node::Scalar(other.clone()),
        }
    }

    /// Append `key: value` to a map node. The generator calls it only on maps it built.
    pub fn push(&mut self, key: &str, value: Node) -> &mut Entry {
        let Node::Map(entries) = self else {
            panic!("push on a non-map node (a generator bug)")
        };
        entries.push(Entry::new(key, value));
        entries.last_mut().expect("just pushed")
    }

    /// The entry a JSON Pointer names inside this node (object keys and array indexes), or
    /// `None`; used to hang comments on body fields.
    pub fn at_pointer_mut(&mut self, pointer: &str) -> Option<Spot<'_>> {
        if pointer.is_empty() {
            return None;
        }
        let mut tokens = pointer
            .strip_prefix('/')?
            .split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"));
        let mut cur = self;
        let mut tok = tokens.next()?;
        loop {
            let next = tokens.next();
            match cur {
                Node::Map(entries) => {
                    let e = entries.iter_mut().find(|e| e.key == tok)?;
                    match next {
                        None => return Some(Spot::Entry(e)),
                        Some(n) => {
                            cur = &mut e.value;
                            tok = n;
                        }
                    }
                }
                Node::Seq(items) => {
                    let i: usize = tok.parse().ok()?;
                    let it = items.get_mut(i)?;
                    match next {
                        None => return Some(Spot::Item(it)),
                        Some(n) => {
                            cur = &mut it.value;
                            tok = n;
                        }
                    }
                }
                Node::Scalar(_) => return None,
            }
        }
    }
}

/// A commentable place inside a node tree.
pub(crate) enum Spot<'a> {
    Entry(&'a mut Entry),
    Item(&'a mut Item),
}

impl Spot<'_> {
    /// Add to the end-of-line comment (joined with `; ` when there is one already).
    pub fn add_trailing(&mut self, text: &str) {
        let slot = match self {
            Spot::Entry(e) => &mut e.trailing,
            Spot::Item(i) => &mut i.trailing,
        };
        *slot = Some(match slot.take() {
            Some(old) => format!("{old}; {text}"),
            None => text.to_string(),
        });
    }
}

impl Entry {
    pub fn new(key: &str, value: Node) -> Entry {
        Entry {
            key: key.to_string(),
            value,
            above: Vec::new(),
            trailing: None,
        }
    }

    pub fn comment(&mut self, text: impl Into<String>) -> &mut Self {
        let text = text.into();
        self.trailing = Some(match self.trailing.take() {
            Some(old) => format!("{old}; {text}"),
            None => text,
        });
        self
    }

    pub fn above(&mut self, text: impl Into<String>) -> &mut Self {
        self.above.push(text.into());
        self
    }
}

impl Item {
    pub fn new(value: Node) -> Item {
        Item {
            value,
            above: Vec::new(),
            trailing: None,
        }
    }
}

/// Write a document whose root is a map, with comment lines above it.
pub(crate) fn write_document(header: &[String], root: &Node) -> String {
    let mut out = String::new();
    for line in header {
        comment_line(&mut out, 0, line);
    }
    match root {
        Node::Map(entries) if !entries.is_empty() => write_map(&mut out, 0, entries),
        other => {
            out.push_str(&inline(other).unwrap_or_else(|| "{}".into()));
            out.push('\n');
        }
    }
    out
}

/// Longest flow-style line for a small collection of scalars (`[arm]`, `{env: test}`).
const FLOW_WIDTH: usize = 72;

fn write_map(out: &mut String, indent: usize, entries: &[Entry]) {
    for e in entries {
        for c in &e.above {
            comment_line(out, indent, c);
        }
        let pad = " ".repeat(indent);
        let key = scalar_string(&e.key);
        match inline(&e.value) {
            Some(text) => {
                let _ = write!(out, "{pad}{key}: {text}");
                trailing(out, e.trailing.as_deref());
            }
            None => {
                let _ = write!(out, "{pad}{key}:");
                trailing(out, e.trailing.as_deref());
                write_block(out, indent + 2, &e.value);
            }
        }
    }
}

fn write_seq(out: &mut String, indent: usize, items: &[Item]) {
    let pad = " ".repeat(indent);
    for it in items {
        for c in &it.above {
            comment_line(out, indent, c);
        }
        if let Some(text) = inline(&it.value) {
            let _ = write!(out, "{pad}- {text}");
            trailing(out, it.trailing.as_deref());
            continue;
        }
        match &it.value {
            Node::Map(entries) => {
                // `- ` then the map's entries, all at indent + 2; the first shares the dash's line.
                let mut body = String::new();
                write_map(&mut body, indent + 2, entries);
                let body = body.trim_start_matches(' ');
                if let Some(t) = &it.trailing {
                    comment_line(out, indent, t);
                }
                let _ = write!(out, "{pad}- {body}");
            }
            other => {
                let _ = write!(out, "{pad}-");
                trailing(out, it.trailing.as_deref());
                write_block(out, indent + 2, other);
            }
        }
    }
}

fn write_block(out: &mut String, indent: usize, node: &Node) {
    match node {
        Node::Map(entries) => write_map(out, indent, entries),
        Node::Seq(items) => write_seq(out, indent, items),
        Node::Scalar(_) => unreachable!("scalars are written inline"),
    }
}

/// The one-line form of a node: scalars, empty collections, and short collections of scalars
/// without comments. `None` when the node needs block style.
fn inline(node: &Node) -> Option<String> {
    match node {
        Node::Scalar(v) => Some(scalar(v)),
        Node::Map(entries) if entries.is_empty() => Some("{}".into()),
        Node::Seq(items) if items.is_empty() => Some("[]".into()),
        Node::Map(entries) => {
            let mut parts = Vec::new();
            for e in entries {
                match &e.value {
                    Node::Scalar(v) if e.above.is_empty() && e.trailing.is_none() => {
                        parts.push(format!("{}: {}", scalar_string(&e.key), scalar(v)))
                    }
                    _ => return None,
                }
            }
            let text = format!("{{{}}}", parts.join(", "));
            (text.len() <= FLOW_WIDTH).then_some(text)
        }
        Node::Seq(items) => {
            let mut parts = Vec::new();
            for it in items {
                match &it.value {
                    Node::Scalar(v) if it.above.is_empty() && it.trailing.is_none() => {
                        parts.push(scalar(v))
                    }
                    _ => return None,
                }
            }
            let text = format!("[{}]", parts.join(", "));
            (text.len() <= FLOW_WIDTH).then_some(text)
        }
    }
}

fn trailing(out: &mut String, comment: Option<&str>) {
    if let Some(c) = comment {
        let _ = write!(out, "  # {}", one_line(c));
    }
    out.push('\n');
}

fn comment_line(out: &mut String, indent: usize, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "{}# {}", " ".repeat(indent), one_line(line));
    }
    if text.is_empty() {
        let _ = writeln!(out, "{}#", " ".repeat(indent));
    }
}

/// Comments are one line each: newlines and other control characters become spaces.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim_end()
        .to_string()
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_string(s),
        // Collections never reach here (from_json makes them nodes); write them as JSON,
        // which is valid flow YAML.
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn document_with_comments_parses() {
        let mut root = Node::map();
        root.push("a", Node::str("x")).comment("TODO: one");
        let mut body = Node::from_json(&json!({
            "location": "${target.location}",
            "properties": {"size": 3, "list": [{"k": "v", "n": {"deep": true}}, [1, 2], "s"]},
            "empty": {}, "none": [], "nul": null
        }));
        if let Some(mut t) = body.at_pointer_mut("/properties/list/0/k") {
            t.add_trailing("TODO: check # and: colons");
        }
        if let Some(mut t) = body.at_pointer_mut("/properties/size") {
            t.add_trailing("min 1");
        }
        root.push("body", body)
            .comment("TODO: check")
            .above("above line\nsecond");
        let seq = Node::Seq(vec![Item {
            value: Node::from_json(&json!({"name": "restart", "result": {"status": 200}})),
            above: vec!["an action".into()],
            trailing: Some("TODO: item".into()),
        }]);
        root.push("actions", seq);
        let text = write_document(&["header".into()], &root);
        let v: serde_json::Value =
            serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(
            v,
            json!({"a": "x", "body": {"location": "${target.location}",
                "properties": {"size": 3, "list": [{"k": "v", "n": {"deep": true}}, [1, 2], "s"]},
                "empty": {}, "none": [], "nul": null},
                "actions": [{"name": "restart", "result": {"status": 200}}]}),
            "{text}"
        );
        assert!(text.contains("k: v  # TODO: check # and: colons"), "{text}");
        assert!(text.contains("# TODO: item"), "{text}");
        assert!(text.starts_with("# header\n"), "{text}");
    }
}
