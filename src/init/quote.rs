//! YAML scalars for the emitter.
//!
//! Quoting is deliberately conservative: a string is written plain only when it starts with a
//! letter, `_` or `/`, uses only `[A-Za-z0-9_./-]`, and is not a word some YAML reader
//! resolves to a boolean or null (`yes`, `No`, `on`, `null`, `~`…, YAML 1.1 and 1.2 alike).
//! Everything else — numbers-looking text (`1.0`, `2024-05-01`, GUIDs), `#`, `: `, leading
//! `*`/`&`/`!`/`-`, flow indicators, the empty string, non-ASCII — is double-quoted with
//! escapes for `"`, `\` and every non-printable character, which is valid in every YAML
//! context (block and flow, keys and values).

use std::fmt::Write as _;

/// Words that some YAML reader (1.1 or 1.2) resolves to a non-string when plain.
const RESERVED: &[&str] = &[
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf",
];

/// A string as a YAML scalar: plain when that is unambiguous, else double-quoted.
pub(crate) fn scalar_string(s: &str) -> String {
    if is_plain_safe(s) {
        s.to_string()
    } else {
        quoted(s)
    }
}

fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
        && !RESERVED.contains(&s.to_ascii_lowercase().as_str())
}

fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if printable(c) => out.push(c),
            c if (c as u32) <= 0xFF => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c if (c as u32) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08X}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// YAML's printable set (c-printable), minus the line and paragraph separators and the BOM,
/// which readers treat as breaks or markers.
fn printable(c: char) -> bool {
    let u = c as u32;
    matches!(u, 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
        && !matches!(u, 0x2028 | 0x2029 | 0xFEFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(s: &str) {
        let doc = format!(
            "k: {}\nl: [{}]\n{}: 1\n",
            scalar_string(s),
            scalar_string(s),
            scalar_string(s)
        );
        let v: serde_yaml::Value =
            serde_yaml::from_str(&doc).unwrap_or_else(|e| panic!("{s:?}: {e}\n{doc}"));
        assert_eq!(v["k"], serde_yaml::Value::String(s.into()), "{doc}");
        assert_eq!(v["l"][0], serde_yaml::Value::String(s.into()), "{doc}");
        assert_eq!(v[s], serde_yaml::Value::Number(1.into()), "{doc}");
        // The marked YAML reader the target parser uses must see the same string.
        let node = marked_yaml::parse_yaml(0, &doc).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        let m = node.as_mapping().unwrap();
        assert_eq!(m.get_scalar("k").unwrap().as_str(), s, "{doc}");
    }

    #[test]
    fn tricky_strings_round_trip() {
        for s in [
            "yes",
            "No",
            "ON",
            "off",
            "y",
            "N",
            "true",
            "False",
            "null",
            "Null",
            "~",
            "1.0",
            "1",
            "-1",
            "+1",
            ".5",
            "0x1F",
            "1e3",
            "1_000",
            "12:30",
            "2024-05-01",
            ".inf",
            "-.inf",
            ".nan",
            "#",
            "a #b",
            "a#b",
            ": ",
            "a: b",
            "key:",
            "*alias",
            "&anchor",
            "!tag",
            "!!str",
            "",
            " ",
            " lead",
            "trail ",
            "-",
            "- x",
            "--- ",
            "...",
            "?",
            "? x",
            "[a]",
            "{a}",
            "a, b",
            "@at",
            "`tick",
            "|",
            ">",
            "%dir",
            "'single'",
            "\"double\"",
            "back\\slash",
            "tab\there",
            "line\nbreak",
            "cr\rlf",
            "nul\u{0}x",
            "del\u{7f}",
            "nel\u{85}",
            "ls\u{2028}",
            "bom\u{feff}",
            "é ü 日本",
            "emoji 🦀",
            "${target.location}",
            "/subscriptions/x/resourceGroups/y",
            "00000000-0000-0000-0000-000000000000",
            "Standard_D2s_v3",
            "az account get-access-token --query accessToken -o tsv",
        ] {
            roundtrip(s);
        }
    }

    #[test]
    fn plain_where_safe() {
        assert_eq!(scalar_string("widgets"), "widgets");
        assert_eq!(scalar_string("Microsoft.Contoso"), "Microsoft.Contoso");
        assert_eq!(
            scalar_string("azure-async-operation"),
            "azure-async-operation"
        );
        assert_eq!(scalar_string("2024-05-01"), "\"2024-05-01\"");
        assert_eq!(scalar_string("yes"), "\"yes\"");
    }
}
