//! A response body's JSON, bounded and redacted: how many values a body may hold to be parsed
//! (counted without parsing), and the parsed value with every string scrubbed.

use super::Redactor;

/// Most JSON values (scalars and containers) a body may hold to be parsed. A parsed value
/// costs some 80 bytes, so without this a 16 MiB body of `[0,0,0,...]` (8 million values)
/// would take over a gigabyte; ARM bodies hold thousands of values, a large page a few
/// hundred thousand.
pub(crate) const MAX_JSON_VALUES: usize = 1_000_000;

/// Does `body` hold more than `limit` JSON values? A cheap upper-bound count, no parse: one
/// value, plus one per `,` outside strings, plus one per `[` or `{` (an empty container holds
/// none, which only overcounts).
pub(crate) fn json_values_over(body: &[u8], limit: usize) -> bool {
    let mut count: usize = 1;
    let mut in_string = false;
    let mut escaped = false;
    for &b in body {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                count += 1;
                if count > limit {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Deepest nesting of arrays and objects a body may have to be read. JSON readers bound it
/// (serde_json at 128, .NET's System.Text.Json, which the Azure SDKs for .NET use, at 64); a
/// body deeper than this is one rpconform cannot read, the same in `run`, `replay` and `proxy`
/// (a test-proxy recording embeds bodies a few levels down in its own JSON, so the bound
/// leaves room under serde_json's).
pub(crate) const MAX_JSON_DEPTH: usize = 100;

/// How [`too_deep`]'s message begins (rules tell an unread body from a malformed one by it).
const TOO_DEEP: &str = "the body could not be read: it nests deeper than";

/// Why a body deeper than [`MAX_JSON_DEPTH`] is not read.
pub(crate) fn too_deep() -> String {
    format!(
        "{TOO_DEEP} {MAX_JSON_DEPTH} levels, the most rpconform reads (JSON readers bound nesting: 64 levels in the Azure SDKs for .NET); to such a reader it is not valid JSON"
    )
}

/// Is `json_error` [`too_deep`]'s?
pub fn is_too_deep(json_error: &str) -> bool {
    json_error.starts_with(TOO_DEEP)
}

/// Do `body`'s arrays and objects nest deeper than `limit`? A scan, no parse (strings
/// skipped), so a body of a million `[` costs one pass, not a stack.
pub(crate) fn json_depth_over(body: &[u8], limit: usize) -> bool {
    let mut depth: usize = 0;
    let mut in_string = false;
    let mut escaped = false;
    for &b in body {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// About what a parsed value holds in memory: a node per value, what its strings and keys
/// own, an entry per object member. Many small values cost far more parsed than as text
/// (`0,` is two bytes, its node 32), so what is kept parsed is bounded by this, not by bytes.
pub(crate) fn json_cost(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    const NODE: usize = std::mem::size_of::<Value>();
    // A member: its hash, its key's header and the index slot of an ordered map.
    const MEMBER: usize = 8 + std::mem::size_of::<String>() + 8;
    let mut cost = 0usize;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        cost = cost.saturating_add(NODE);
        match v {
            Value::String(s) => cost = cost.saturating_add(s.capacity()),
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => {
                for (k, x) in m {
                    cost = cost.saturating_add(MEMBER + k.capacity());
                    stack.push(x);
                }
            }
            _ => {}
        }
    }
    cost
}

/// Redact secrets inside parsed JSON strings too (rules read the parsed form). The value is
/// copied only when something in it is masked: the copy keeps what was sent, for the traffic
/// (a body of a million values is never held twice for nothing). `Some(original)` then.
pub(crate) fn scrub_json(v: &mut serde_json::Value, r: &Redactor) -> Option<serde_json::Value> {
    if !holds_secret(v, r) {
        return None;
    }
    let original = v.clone();
    scrub_in_place(v, r);
    Some(original)
}

/// Does a string or a key anywhere in `v` hold what the redactor masks? (No copy, no stack.)
fn holds_secret(v: &serde_json::Value, r: &Redactor) -> bool {
    use serde_json::Value;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if r.has_secret(s) => return true,
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => {
                for (k, x) in m {
                    if r.has_secret(k) {
                        return true;
                    }
                    stack.push(x);
                }
            }
            _ => {}
        }
    }
    false
}

fn scrub_in_place(v: &mut serde_json::Value, r: &Redactor) {
    use serde_json::Value;
    match v {
        Value::String(s) => *s = r.text(s),
        Value::Array(a) => a.iter_mut().for_each(|x| scrub_in_place(x, r)),
        Value::Object(m) => {
            if m.keys().any(|k| r.has_secret(k)) {
                let taken = std::mem::take(m);
                *m = taken.into_iter().map(|(k, x)| (r.text(&k), x)).collect();
            }
            m.values_mut().for_each(|x| scrub_in_place(x, r));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    /// The scan agrees with the parser below the bound, and every body past the bound is
    /// one the parser would refuse once embedded a few levels down (a test-proxy file).
    #[test]
    fn depth_is_measured_without_parsing() {
        for d in [1, 50, MAX_JSON_DEPTH] {
            assert!(
                !json_depth_over(nested(d).as_bytes(), MAX_JSON_DEPTH),
                "{d}"
            );
            assert!(serde_json::from_str::<serde_json::Value>(&nested(d)).is_ok());
        }
        for d in [MAX_JSON_DEPTH + 1, 300, 100_000] {
            assert!(json_depth_over(nested(d).as_bytes(), MAX_JSON_DEPTH), "{d}");
        }
        // Brackets in strings are text, and closing ones bring the depth back.
        let text = format!("[\"{}\", {}]", "[".repeat(500), "[1],".repeat(500) + "1");
        assert!(!json_depth_over(text.as_bytes(), 3));
        assert!(is_too_deep(&too_deep()));
        // Small values cost many times their text once parsed.
        let zeros: serde_json::Value =
            serde_json::from_str(&format!("[{}0]", "0,".repeat(9_999))).unwrap();
        assert!(json_cost(&zeros) >= 10_000 * 16, "{}", json_cost(&zeros));
        assert!(!is_too_deep("body is not valid JSON: expected value"));
    }
}
