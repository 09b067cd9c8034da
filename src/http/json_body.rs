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

/// Redact secrets inside parsed JSON strings too (rules read the parsed form); `changed` says
/// whether anything was masked (then the runner keeps what was sent, for the traffic).
pub(crate) fn scrub_json(
    v: &serde_json::Value,
    r: &Redactor,
    changed: &mut bool,
) -> serde_json::Value {
    use serde_json::Value;
    fn text(s: &str, r: &Redactor, changed: &mut bool) -> String {
        let t = r.text(s);
        if t != s {
            *changed = true;
        }
        t
    }
    match v {
        Value::String(s) => Value::String(text(s, r, changed)),
        Value::Array(a) => Value::Array(a.iter().map(|x| scrub_json(x, r, changed)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (text(k, r, changed), scrub_json(x, r, changed)))
                .collect(),
        ),
        other => other.clone(),
    }
}
