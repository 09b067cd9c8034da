//! The secrets a target file holds, found before the file is checked, so that no error about
//! it (its line quoted under a caret, a value named in a message) shows one: the value of every
//! header given inline (a header `secret_headers` or the redactor names secret, any other
//! whose value is long enough not to be ordinary text, as the HTTP client registers them),
//! the `auth.command` text and its words (a token passed on the command line), the userinfo
//! of `base_url`.
//!
//! A file that parses as YAML is read by structure: every `headers:` mapping at any depth,
//! `auth.command` wherever `auth` is. A file that does not parse is read line by line: the
//! value after any key that names a secret header, a command, or a token, secret, password or
//! key, is taken as a secret. Lines keep their width when masked (`*` per character), so the
//! caret under a quoted line still points at the column the message names.

use std::sync::Arc;

use marked_yaml::Node;

use crate::diag::Report;
use crate::http::Redactor;

/// Words of a command shorter than this are its verbs and flags, not a credential.
const MIN_WORD: usize = crate::http::SHORT_SECRET;

/// Secret values of one target file and the redactor they are registered with.
pub(crate) struct FileSecrets {
    values: Vec<String>,
    redactor: Redactor,
}

impl FileSecrets {
    /// Read `text` (a target file, valid or not) for its secrets.
    pub fn of(text: &str) -> FileSecrets {
        let file: Arc<std::path::Path> = Arc::from(std::path::Path::new("target"));
        let mut found = Found::default();
        match crate::yaml::parse(&file, text) {
            Ok(root) => found.walk(&root),
            Err(_) => found.lines(text),
        }
        let redactor = Redactor::new(&found.secret_names);
        let mut values = Vec::new();
        for (name, value) in &found.headers {
            if redactor.is_secret_header(name) || value.trim().len() >= MIN_WORD {
                values.push(value.clone());
                redactor.register_header_value(value);
                if let Some((_, cred)) = value.trim().split_once(' ') {
                    values.push(cred.trim().to_string());
                }
            }
        }
        for command in &found.commands {
            values.push(command.clone());
            redactor.register(command);
            for word in words(command) {
                values.push(word.to_string());
                redactor.register(word);
            }
        }
        for url in &found.urls {
            if let Ok(u) = crate::http::parse_url(url) {
                redactor.register_userinfo(&u);
            }
        }
        values.retain(|v| !v.trim().is_empty());
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        FileSecrets { values, redactor }
    }

    /// Byte spans of `s` holding a secret: the values as written, and what the redactor finds
    /// (encoded forms, tokens by shape).
    fn spans(&self, s: &str) -> Vec<(usize, usize)> {
        let mut spans = self.redactor.spans(s);
        for v in &self.values {
            // A short value is masked only where it stands alone (as the redactor does).
            let whole_word_only = v.chars().count() < MIN_WORD;
            for (at, _) in s.match_indices(v.as_str()) {
                let end = at + v.len();
                let alone = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
                if !whole_word_only
                    || (alone(s[..at].chars().next_back()) && alone(s[end..].chars().next()))
                {
                    spans.push((at, end));
                }
            }
        }
        spans.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (a, b) in spans {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        merged
    }

    /// `s` with each secret replaced by `mask(its text)`.
    fn replace(&self, s: &str, mask: impl Fn(&str) -> String) -> String {
        let spans = self.spans(s);
        if spans.is_empty() {
            return s.to_string();
        }
        let mut out = String::with_capacity(s.len());
        let mut at = 0;
        for (a, b) in spans {
            out.push_str(&s[at..a]);
            out.push_str(&mask(&s[a..b]));
            at = b;
        }
        out.push_str(&s[at..]);
        out
    }

    /// A line of the file as a diagnostic quotes it: each secret character a `*`.
    pub fn line(&self, line: &str) -> String {
        self.replace(line, |m| "*".repeat(m.chars().count()))
    }

    /// A message or hint: each secret `[REDACTED]`.
    pub fn text(&self, s: &str) -> String {
        self.replace(s, |_| crate::http::MASK.to_string())
    }

    /// Every diagnostic of `report` and the lines it quotes, scrubbed.
    pub fn scrub(&self, report: &mut Report) {
        report.scrub(&|l| self.line(l), &|t| self.text(t));
    }
}

/// Where the secrets are.
#[derive(Default)]
struct Found {
    secret_names: Vec<String>,
    headers: Vec<(String, String)>,
    commands: Vec<String>,
    urls: Vec<String>,
}

impl Found {
    /// Every node of a parsed file.
    fn walk(&mut self, node: &Node) {
        match node {
            Node::Mapping(m) => {
                for (k, v) in m.iter() {
                    // A key misspelt is still what it meant (`secret_header`, `headres`): the
                    // error about it quotes its line.
                    let key = k.as_str().to_ascii_lowercase();
                    let meant = crate::diag::did_you_mean(
                        &key,
                        ["secret_headers", "headers", "command", "base_url"],
                    )
                    .unwrap_or(key.clone());
                    if secret_name(&key) {
                        self.headers
                            .extend(scalars(v).into_iter().map(|x| (key.clone(), x)));
                        self.secret_names.push(key.clone());
                    }
                    match meant.as_str() {
                        "secret_headers" => {
                            self.secret_names
                                .extend(scalars(v).into_iter().map(|s| s.to_ascii_lowercase()));
                        }
                        "headers" => match v.as_mapping() {
                            Some(h) => self.headers.extend(
                                h.iter()
                                    .flat_map(|(n, x)| {
                                        scalars(x).into_iter().map(|x| (n.as_str().to_string(), x))
                                    })
                                    .collect::<Vec<_>>(),
                            ),
                            None => self.commands.extend(scalars(v)),
                        },
                        "command" => self.commands.extend(scalars(v)),
                        "base_url" | "url" => self.urls.extend(scalars(v)),
                        _ => {}
                    }
                    self.walk(v);
                }
            }
            Node::Sequence(s) => s.iter().for_each(|n| self.walk(n)),
            Node::Scalar(_) => {}
        }
    }

    /// A file that is not YAML: the value after each key that names a secret, line by line.
    fn lines(&mut self, text: &str) {
        static KEY: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let key = KEY.get_or_init(|| {
            regex::Regex::new(r#"([A-Za-z0-9_.-]+)["']?\s*:(?:\s+|$)"#).expect("valid regex")
        });
        for line in text.lines() {
            if let Some(list) = line.trim_start().strip_prefix("secret_headers:") {
                self.secret_names.extend(
                    list.split([',', '[', ']', '"', '\''])
                        .map(|n| n.trim().to_ascii_lowercase())
                        .filter(|n| !n.is_empty()),
                );
            }
        }
        let names = Redactor::new(&self.secret_names);
        for line in text.lines() {
            // Each key's value runs to the next key on the line (`{a: x, b: y}`) or its end.
            let keys: Vec<regex::Captures<'_>> = key.captures_iter(line).collect();
            for (i, c) in keys.iter().enumerate() {
                let from = c.get(0).map_or(0, |m| m.end());
                let to = keys
                    .get(i + 1)
                    .and_then(|n| n.get(0))
                    .map_or(line.len(), |m| m.start());
                let value = line[from..to.max(from)]
                    .trim()
                    .trim_end_matches([',', '}', ']', '{', '['])
                    .trim()
                    .trim_matches(['"', '\''])
                    .to_string();
                if value.is_empty() {
                    continue;
                }
                let name = c[1].to_ascii_lowercase();
                let secret = names.is_secret_header(&name) || secret_name(&name);
                if name == "command" {
                    self.commands.push(value);
                } else if secret {
                    self.secret_names.push(name.clone());
                    self.headers.push((name, value));
                } else if name == "base_url" {
                    self.urls.push(value);
                }
            }
        }
    }
}

/// A key whose value is a credential by its name (`x-api-key`, `client_secret`); not the
/// list of secret header names itself.
fn secret_name(name: &str) -> bool {
    !name.starts_with("secret_header")
        && [
            "token",
            "secret",
            "password",
            "passwd",
            "key",
            "credential",
            "authorization",
        ]
        .iter()
        .any(|w| name.contains(w))
}

/// The scalars in a node, at any depth.
fn scalars(n: &Node) -> Vec<String> {
    match n {
        Node::Scalar(s) => vec![s.as_str().to_string()],
        Node::Sequence(s) => s.iter().flat_map(scalars).collect(),
        Node::Mapping(m) => m.iter().flat_map(|(_, v)| scalars(v)).collect(),
    }
}

/// The words of a command that may be a credential: all but the program and the flags, long
/// enough not to be ordinary text, split at spaces, quotes, `=` and `:` (`--password=...`,
/// `Authorization: Bearer ...`). Which of them is a token cannot be told by its look
/// (`echo abcdefghijkl`): they are all kept out of what is shown.
fn words(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '=' | '`'))
        .filter(|w| !w.is_empty())
        .skip(1)
        .flat_map(|w| std::iter::once(w).chain(w.split_once(':').map(|(_, b)| b)))
        .map(|w| w.trim_matches([',', ';', '(', ')']))
        .filter(|w| w.chars().count() >= MIN_WORD && !w.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "k3y-9f8e7d6c5b4a-inline-value";
    const TOKEN: &str = "tok_5a4b3c2d1e0f9g8h";
    const SHORT: &str = "ab1";

    fn file(extra: &str) -> String {
        format!(
            "base_url: https://user:pa55word@rp.example.com\nsecret_headers: [x-api-key, x-short]\nheaders:\n  x-api-key: {KEY}\n  x-short: {SHORT}\n  accept-language: en\nauth: {{command: \"get-token --secret {TOKEN} --tenant common\"}}\n{extra}"
        )
    }

    /// Every way a secret reaches a diagnostic: a quoted line keeps its width, a message
    /// loses the value, whether the file parses or not.
    #[test]
    fn secrets_are_found_by_structure_and_by_line() {
        for text in [file("types: {}\n"), file("types: [\n  - {bad\n")] {
            let s = FileSecrets::of(&text);
            for line in text.lines() {
                let masked = s.line(line);
                assert_eq!(masked.chars().count(), line.chars().count(), "{line}");
                for secret in [KEY, TOKEN, "pa55word"] {
                    assert!(!masked.contains(secret), "{masked}");
                }
            }
            let msg = s.text(&format!("header value `{KEY}` or `{TOKEN}` is not valid"));
            assert!(!msg.contains(KEY) && !msg.contains(TOKEN), "{msg}");
            // Words of the command that are flags, and plain values, are kept.
            assert!(s.line("auth: {command: \"get-token").contains("get-token"));
            assert_eq!(s.line("  accept-language: en"), "  accept-language: en");
        }
        // Misspelt keys still say what their values are.
        let typo = format!(
            "secret_header: [x-short]\nheadres: {{x-short: {SHORT}}}\nauth: {{comand: \"run {TOKEN}\"}}\n"
        );
        let s = FileSecrets::of(&typo);
        for line in typo.lines() {
            let masked = s.line(line);
            assert!(
                !masked.contains(SHORT) && !masked.contains(TOKEN),
                "{masked}"
            );
        }
        // A short secret value is masked where it stands alone.
        let s = FileSecrets::of(&file(""));
        assert_eq!(s.line("  x-short: ab1"), "  x-short: ***");
        assert_eq!(s.line("cab12"), "cab12");
    }
}
