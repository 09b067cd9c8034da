//! A key given twice in one object of a spec. serde_json (like `JSON.parse`) keeps the last
//! silently, so a definition written twice decides what SPEC-04 checks without anyone having
//! chosen it; RFC 8259 leaves such a document's meaning to the reader. One linear pass over
//! text already known to be valid JSON finds the first such key with both its lines. YAML
//! forbids duplicate keys and serde_yaml refuses them, naming neither line: marked_yaml names
//! both.

use std::collections::HashMap;

/// A key found twice in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Duplicate {
    /// The key, decoded.
    pub key: String,
    /// JSON Pointer of the object holding it (`/definitions`), when known.
    pub object: Option<String>,
    /// 1-based line of the first occurrence.
    pub first_line: usize,
    /// 1-based line and column of the second.
    pub line: usize,
    pub column: usize,
}

impl Duplicate {
    pub fn message(&self) -> String {
        let object = match self.object.as_deref() {
            None => "one mapping".to_string(),
            Some("") => "the document's top level".to_string(),
            Some(o) => format!("`#{o}`"),
        };
        format!(
            "`{}` is given twice in {object}: on line {} and again on line {}; a reader keeps only one of them, so which one counts was never chosen. Remove or rename one",
            self.key, self.first_line, self.line
        )
    }
}

enum Frame {
    Object {
        keys: HashMap<String, usize>,
        expecting_key: bool,
        /// The member being read (its pointer token).
        current: String,
    },
    Array {
        index: usize,
    },
}

/// The first key given twice in an object of `text` (valid JSON), if any.
pub(crate) fn first_duplicate(text: &str) -> Option<Duplicate> {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let (mut line, mut line_start) = (1usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            b'{' => stack.push(Frame::Object {
                keys: HashMap::new(),
                expecting_key: true,
                current: String::new(),
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { expecting_key, .. }) => *expecting_key = true,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            b'"' => {
                let end = string_end(bytes, i);
                if let Some(Frame::Object {
                    keys,
                    expecting_key: expecting @ true,
                    current,
                }) = stack.last_mut()
                {
                    *expecting = false;
                    let key = decode(&text[i..end]);
                    if let Some(&first_line) = keys.get(&key) {
                        return Some(Duplicate {
                            object: Some(pointer(&stack[..stack.len() - 1])),
                            key,
                            first_line,
                            line,
                            column: text[line_start..i].chars().count() + 1,
                        });
                    }
                    *current = key.replace('~', "~0").replace('/', "~1");
                    keys.insert(key, line);
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The first key given twice in a mapping of YAML `text`, if any (`None` also when the text
/// cannot be read for another reason: the caller reports that).
pub(crate) fn first_yaml_duplicate(text: &str) -> Option<Duplicate> {
    let opts = marked_yaml::LoaderOptions::default().error_on_duplicate_keys(true);
    let Err(marked_yaml::LoadError::DuplicateKey(d)) =
        marked_yaml::parse_yaml_with_options(0, text, opts)
    else {
        return None;
    };
    let start = |k: &marked_yaml::types::MarkedScalarNode| {
        k.span().start().map_or((0, 0), |m| (m.line(), m.column()))
    };
    let ((first_line, _), (line, column)) = (start(&d.prev_key), start(&d.key));
    Some(Duplicate {
        key: d.key.as_str().to_string(),
        object: None,
        first_line,
        line,
        column,
    })
}

/// The byte after the closing quote of the string starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut j = start + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            _ => j += 1,
        }
    }
    bytes.len()
}

/// A JSON string literal's value (escapes undone only when there are some).
fn decode(literal: &str) -> String {
    if literal.contains('\\') {
        serde_json::from_str(literal).unwrap_or_else(|_| literal.to_string())
    } else if literal.len() >= 2 {
        literal[1..literal.len() - 1].to_string()
    } else {
        literal.to_string()
    }
}

/// The pointer of the innermost frame of `stack` (the frames around the object in question).
fn pointer(stack: &[Frame]) -> String {
    let mut out = String::new();
    for f in stack {
        out.push('/');
        match f {
            Frame::Object { current, .. } => out.push_str(current),
            Frame::Array { index } => out.push_str(&index.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_is_found_with_both_lines_and_its_object() {
        let text = "{\n  \"definitions\": {\n    \"Widget\": {\"type\": \"object\"},\n    \"Other\": {},\n    \"Widget\": {\"type\": \"string\"}\n  }\n}";
        let d = first_duplicate(text).expect("found");
        assert_eq!(
            (
                d.key.as_str(),
                d.object.as_deref(),
                d.first_line,
                d.line,
                d.column
            ),
            ("Widget", Some("/definitions"), 3, 5, 5)
        );
        assert!(
            d.message().contains("line 3") && d.message().contains("line 5"),
            "{}",
            d.message()
        );
    }

    #[test]
    fn keys_spelled_apart_but_equal_once_read_are_one_key() {
        let d = first_duplicate(r#"{"paths": [{"a\u0062": 1, "ab": 2}]}"#).expect("found");
        assert_eq!(
            (d.key.as_str(), d.object.as_deref()),
            ("ab", Some("/paths/0"))
        );
        let d = first_duplicate(r#"{"x/y": {"k": 1, "k": 1}}"#).expect("found");
        assert_eq!(d.object.as_deref(), Some("/x~1y"));
    }

    #[test]
    fn a_yaml_key_given_twice_is_found_with_both_lines() {
        let text =
            "definitions:\n  Widget: {type: object}\n  Gadget: {}\n  Widget: {type: string}\n";
        let d = first_yaml_duplicate(text).expect("found");
        assert_eq!((d.key.as_str(), d.first_line, d.line), ("Widget", 2, 4));
        assert_eq!(first_yaml_duplicate("a: {b: 1}\nc: {b: 1}\n"), None);
    }

    #[test]
    fn the_same_key_in_different_objects_and_values_that_look_like_keys_are_fine() {
        for ok in [
            r#"{"a": {"type": 1}, "b": {"type": 2}}"#,
            r#"{"enum": ["a", "a"], "k": "a", "a": "k"}"#,
            r#"[{"a": 1}, {"a": 2}]"#,
            r#"{"s": "with \"quotes\", {braces} and [brackets]", "t": "\\"}"#,
            "{}",
        ] {
            assert_eq!(first_duplicate(ok), None, "{ok}");
        }
    }
}
