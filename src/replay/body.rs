//! Bodies: what a format holds, read within the caps, then parsed, scrubbed and cut the way the
//! live client does it (same value limit, same report cut).

use std::fmt;

use base64::Engine;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::BodyState;
use super::secrets::Scrubber;
use super::stream::over_cap;
use crate::http::{
    MAX_JSON_DEPTH, MAX_JSON_VALUES, REPORT_BODY_CHARS, cut, json_depth_over, json_values_over,
    too_deep,
};

/// A body as a format holds it, before parsing, scrubbing and cutting.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawBody {
    /// No body.
    Empty,
    Text(String),
    /// Decoded bytes (YAML `!!binary`).
    Bytes(Vec<u8>),
    /// Base64 text (HAR `encoding: base64`), decoded only if the body is kept.
    Base64(String),
    /// A JSON value embedded in the file (test-proxy).
    Json(Value),
    /// The format did not keep this body.
    NotRecorded,
    /// Dropped while reading: over the cap or the value limit; at least this many bytes.
    OverCap(u64),
    /// An embedded body nested deeper than [`MAX_JSON_DEPTH`]: skipped while reading, not read.
    TooDeep,
}

impl RawBody {
    /// Turn a text that may be empty into a body.
    pub(crate) fn text(s: String) -> RawBody {
        if s.is_empty() {
            RawBody::Empty
        } else {
            RawBody::Text(s)
        }
    }
}

/// Largest body of a non-ARM exchange parsed to learn its secrets (token responses are a few
/// KiB; portal scripts, which are not parsed, are megabytes).
const LEARN_LIMIT: usize = 64 * 1024;

/// A body after the first step: parsed (so its secrets can be learned), not yet scrubbed.
pub(crate) struct Prepared {
    text: Option<String>,
    json: Option<Value>,
    json_error: Option<String>,
    bytes: usize,
    state: BodyState,
    /// Keep the text in the exchange (false for bodies of non-ARM exchanges).
    keep: bool,
}

/// What the JSON budget of a recording has left, and what it refused.
#[derive(Debug)]
pub(crate) struct JsonBudget {
    pub left: usize,
    pub refused: usize,
}

impl Prepared {
    /// Parse `raw` (when `keep`, or when small enough to learn secrets from) within `cap`.
    pub(crate) fn new(raw: RawBody, cap: usize, keep: bool, budget: &mut JsonBudget) -> Self {
        let mut p = Prepared {
            text: None,
            json: None,
            json_error: None,
            bytes: 0,
            state: BodyState::Recorded,
            keep,
        };
        let bytes = match raw {
            RawBody::Empty => return p,
            RawBody::NotRecorded => {
                p.state = BodyState::NotRecorded;
                return p;
            }
            RawBody::OverCap(n) => {
                p.state = BodyState::OverCap { bytes: n };
                return p;
            }
            RawBody::TooDeep => {
                p.json_error = Some(too_deep());
                return p;
            }
            RawBody::Json(v) => {
                let text = serde_json::to_string(&v).unwrap_or_default();
                p.bytes = text.len();
                if !keep {
                    // Kept only until its secrets are learned.
                    p.json = Some(v);
                } else if budget.left >= p.bytes {
                    budget.left -= p.bytes;
                    p.json = Some(v);
                } else {
                    budget.refused += 1;
                    p.json_error = Some(budget_spent());
                }
                p.text = Some(text);
                return p;
            }
            RawBody::Text(s) => s.into_bytes(),
            RawBody::Bytes(b) => b,
            RawBody::Base64(t) if !keep && t.len() > LEARN_LIMIT => {
                // Not kept and too large to hold a token response: not even decoded.
                p.bytes = t.len() / 4 * 3;
                return p;
            }
            RawBody::Base64(t) => {
                let compact: String = t.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                match base64::engine::general_purpose::STANDARD.decode(compact.as_bytes()) {
                    Ok(b) => b,
                    Err(e) => {
                        p.bytes = t.len();
                        p.json_error = Some(format!("the body is marked base64 but is not: {e}"));
                        p.text = Some(t);
                        return p;
                    }
                }
            }
        };
        p.bytes = bytes.len();
        if p.bytes > cap {
            p.state = BodyState::OverCap {
                bytes: p.bytes as u64,
            };
            p.bytes = 0;
            return p;
        }
        // Bodies not kept are parsed only to learn their secrets, and only when small.
        let parse = keep || p.bytes <= LEARN_LIMIT;
        if parse && !bytes.iter().all(u8::is_ascii_whitespace) {
            if json_depth_over(&bytes, MAX_JSON_DEPTH) {
                p.json_error = Some(too_deep());
            } else if json_values_over(&bytes, MAX_JSON_VALUES) {
                p.json_error = Some(format!(
                    "body holds more than {MAX_JSON_VALUES} JSON values; not parsed (memory bound)"
                ));
            } else if keep && budget.left < p.bytes {
                budget.refused += 1;
                p.json_error = Some(budget_spent());
            } else {
                match serde_json::from_slice::<Value>(&bytes) {
                    Ok(v) => {
                        if keep {
                            budget.left -= p.bytes;
                        }
                        p.json = Some(v);
                    }
                    Err(e) => p.json_error = Some(format!("body is not valid JSON: {e}")),
                }
            }
        }
        p.text = Some(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        });
        p
    }

    /// The unscrubbed text, for unpacking portal batches.
    pub(crate) fn raw_text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The unscrubbed parsed body, for unpacking portal batches.
    pub(crate) fn json(&self) -> Option<&Value> {
        self.json.as_ref()
    }

    pub(crate) fn learn(&self, scrub: &Scrubber) {
        if let Some(t) = &self.text {
            scrub.learn_body(t, self.json.as_ref());
        }
    }

    /// Scrub and cut: (text, original size in bytes, parsed JSON, why not JSON, state).
    pub(crate) fn finish(self, scrub: &Scrubber) -> Finished {
        if !self.keep {
            let state = match self.state {
                BodyState::Recorded if self.bytes > 0 => BodyState::NotRecorded,
                s => s,
            };
            return Finished {
                text: String::new(),
                bytes: 0,
                json: None,
                json_error: None,
                state,
            };
        }
        let mut json = self.json;
        let mut text = self.text.unwrap_or_default();
        if let Some(v) = json.as_mut()
            && scrub.json(v)
        {
            // A member was masked: the text must not keep it; write it from the value.
            text = serde_json::to_string(v).unwrap_or_default();
        }
        let json_error = match self.state {
            BodyState::OverCap { bytes } => Some(format!(
                "body of {bytes} bytes or more is over the cap; not kept"
            )),
            _ => self.json_error.map(|e| scrub.text(&e)),
        };
        Finished {
            // Redact the whole text before cutting it, as the live client does.
            text: cut(&scrub.text(&text), REPORT_BODY_CHARS),
            bytes: self.bytes,
            json,
            json_error,
            state: self.state,
        }
    }
}

pub(crate) struct Finished {
    pub text: String,
    pub bytes: usize,
    pub json: Option<Value>,
    pub json_error: Option<String>,
    pub state: BodyState,
}

fn budget_spent() -> String {
    "not parsed: the recording's JSON budget is spent (memory bound)".into()
}

/// A string field read within a cap: longer strings are measured, not kept.
pub(crate) struct CappedText(pub usize);

#[derive(Debug)]
pub(crate) enum Capped {
    Text(String),
    Over(u64),
}

impl<'de> DeserializeSeed<'de> for CappedText {
    type Value = Capped;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Capped, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CappedText {
    type Value = Capped;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Capped, E> {
        if let Some(n) = over_cap(s) {
            Ok(Capped::Over(n))
        } else if s.len() > self.0 {
            Ok(Capped::Over(s.len() as u64))
        } else {
            Ok(Capped::Text(s.to_string()))
        }
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Capped, E> {
        if let Some(n) = over_cap(&s) {
            Ok(Capped::Over(n))
        } else if s.len() > self.0 {
            Ok(Capped::Over(s.len() as u64))
        } else {
            Ok(Capped::Text(s))
        }
    }
    fn visit_unit<E: de::Error>(self) -> Result<Capped, E> {
        Ok(Capped::Text(String::new()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Capped, E> {
        Ok(Capped::Text(String::new()))
    }
}

/// A test-proxy body (any JSON value) read within a byte cap and the value limit; the
/// .NET lines form is joined (see the module docs of `replay`).
pub(crate) struct BoundedBody {
    pub cap: usize,
}

struct Tally {
    bytes: usize,
    values: usize,
    cap: usize,
    over: bool,
    /// Containers open now, and whether they ever nested past [`MAX_JSON_DEPTH`] (the rest
    /// is then skipped without recursion, before serde_json's own bound on the file).
    depth: usize,
    too_deep: bool,
}

impl Tally {
    /// A container opens.
    fn open(&mut self) {
        self.depth += 1;
        if self.depth > MAX_JSON_DEPTH {
            self.too_deep = true;
        }
    }

    fn add(&mut self, bytes: usize) {
        self.bytes += bytes;
        self.values += 1;
        if self.bytes > self.cap || self.values > MAX_JSON_VALUES {
            self.over = true;
        }
    }
}

impl<'de> DeserializeSeed<'de> for BoundedBody {
    type Value = RawBody;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<RawBody, D::Error> {
        let mut t = Tally {
            bytes: 0,
            values: 0,
            cap: self.cap,
            over: false,
            depth: 0,
            too_deep: false,
        };
        let v = Bounded(&mut t).deserialize(d)?;
        if t.over {
            return Ok(RawBody::OverCap(t.bytes as u64));
        }
        if t.too_deep {
            return Ok(RawBody::TooDeep);
        }
        Ok(match v {
            Value::Null => RawBody::Empty,
            Value::String(s) => RawBody::text(s),
            Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_string) => {
                let joined: String = a.iter().filter_map(Value::as_str).collect();
                let t = joined.trim_start();
                let lines = (t.starts_with('{') || t.starts_with('['))
                    && serde_json::from_str::<IgnoredAny>(&joined).is_ok();
                if lines {
                    RawBody::Text(joined)
                } else {
                    RawBody::Json(Value::Array(a))
                }
            }
            other => RawBody::Json(other),
        })
    }
}

struct Bounded<'t>(&'t mut Tally);

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.0.over || self.0.too_deep {
            IgnoredAny::deserialize(d)?;
            return Ok(Value::Null);
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.0.add(4);
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.0.add(5);
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        self.0.add(8);
        Ok(Value::from(n))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        self.0.add(8);
        Ok(Value::from(n))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        self.0.add(8);
        Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.0.add(over_cap(s).map_or(s.len(), |n| n as usize) + 2);
        if over_cap(s).is_some() {
            self.0.over = true;
        }
        Ok(if self.0.over {
            Value::Null
        } else {
            Value::String(s.to_string())
        })
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.visit_str(&s)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.add(2);
        self.0.open();
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Bounded(&mut *self.0))? {
            if !self.0.over {
                out.push(v);
            }
        }
        self.0.depth -= 1;
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.add(2);
        self.0.open();
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            self.0.add(k.len() + 3);
            let v = map.next_value_seed(Bounded(&mut *self.0))?;
            if !self.0.over {
                out.insert(k, v);
            }
        }
        self.0.depth -= 1;
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounded(json: &str, cap: usize) -> RawBody {
        let mut de = serde_json::Deserializer::from_str(json);
        BoundedBody { cap }.deserialize(&mut de).unwrap()
    }

    /// An embedded body nested past the bound is skipped without recursion (serde_json's own
    /// bound on the whole file is never reached) and said to be too deep; one under it is read.
    #[test]
    fn an_embedded_body_too_deep_is_skipped_and_said_so() {
        let nested = |d: usize| format!("{}1{}", "{\"a\":".repeat(d), "}".repeat(d));
        assert_eq!(bounded(&nested(300), 1 << 20), RawBody::TooDeep);
        assert!(matches!(
            bounded(&nested(MAX_JSON_DEPTH), 1 << 20),
            RawBody::Json(_)
        ));
        // Three levels down in a file, as a test-proxy recording holds it.
        let file = format!(
            "{{\"Entries\": [{{\"ResponseBody\": {}}}]}}",
            nested(100_000)
        );
        let mut de = serde_json::Deserializer::from_str(&file);
        let v: FileOfOne = serde::Deserialize::deserialize(&mut de).expect("the file reads");
        assert_eq!(v.entries[0].body, RawBody::TooDeep);
        let mut budget = JsonBudget {
            left: 1 << 20,
            refused: 0,
        };
        let p = Prepared::new(RawBody::TooDeep, 1 << 20, true, &mut budget);
        assert!(p.json_error.is_some_and(|e| crate::http::is_too_deep(&e)));
    }

    #[derive(serde::Deserialize)]
    struct FileOfOne {
        #[serde(rename = "Entries")]
        entries: Vec<EntryOfOne>,
    }

    struct EntryOfOne {
        body: RawBody,
    }

    impl<'de> serde::Deserialize<'de> for EntryOfOne {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = EntryOfOne;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an entry")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<EntryOfOne, A::Error> {
                    let mut body = RawBody::Empty;
                    while let Some(k) = m.next_key::<String>()? {
                        if k == "ResponseBody" {
                            body = m.next_value_seed(BoundedBody { cap: 1 << 20 })?;
                        } else {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(EntryOfOne { body })
                }
            }
            d.deserialize_map(V)
        }
    }

    #[test]
    fn test_proxy_body_shapes() {
        assert_eq!(bounded("null", 100), RawBody::Empty);
        assert_eq!(bounded("\"null\"", 100), RawBody::Text("null".into()));
        assert_eq!(bounded("\"\"", 100), RawBody::Empty);
        assert_eq!(
            bounded(r#"["{\r\n", "  \"a\": 1\r\n", "}"]"#, 100),
            RawBody::Text("{\r\n  \"a\": 1\r\n}".into())
        );
        // An array of strings that is not JSON text once joined is a JSON array body.
        assert_eq!(
            bounded(r#"["1", "2"]"#, 100),
            RawBody::Json(serde_json::json!(["1", "2"]))
        );
        assert_eq!(
            bounded(r#"{"a": [1, 2]}"#, 100),
            RawBody::Json(serde_json::json!({"a": [1, 2]}))
        );
        assert!(matches!(
            bounded(r#"{"a": "0123456789012345678901234567890123456789"}"#, 20),
            RawBody::OverCap(n) if n > 20
        ));
    }

    #[test]
    fn prepared_bodies_follow_the_live_limits() {
        let scrub = Scrubber::new();
        let mut budget = JsonBudget {
            left: 1000,
            refused: 0,
        };
        let p = Prepared::new(RawBody::text("{\"a\":1}".into()), 100, true, &mut budget);
        let f = p.finish(&scrub);
        assert_eq!(f.json, Some(serde_json::json!({"a": 1})));
        assert_eq!((f.text.as_str(), f.bytes), ("{\"a\":1}", 7));
        assert_eq!(budget.left, 993);
        let f =
            Prepared::new(RawBody::text("x".repeat(101)), 100, true, &mut budget).finish(&scrub);
        assert_eq!(f.state, BodyState::OverCap { bytes: 101 });
        assert!(f.text.is_empty() && f.json_error.unwrap().contains("over the cap"));
        let f =
            Prepared::new(RawBody::text("<html>".into()), 100, true, &mut budget).finish(&scrub);
        assert!(f.json_error.unwrap().starts_with("body is not valid JSON"));
        let mut small = JsonBudget {
            left: 3,
            refused: 0,
        };
        let f =
            Prepared::new(RawBody::text("[1,2,3]".into()), 100, true, &mut small).finish(&scrub);
        assert!(f.json.is_none() && f.json_error.unwrap().contains("budget"));
        assert_eq!(small.refused, 1);
        let f = Prepared::new(RawBody::text("{}".into()), 100, false, &mut small).finish(&scrub);
        assert_eq!(f.state, BodyState::NotRecorded);
        assert!(f.text.is_empty());
    }

    #[test]
    fn a_masked_member_rewrites_the_text() {
        let scrub = Scrubber::new();
        let mut budget = JsonBudget {
            left: 1000,
            refused: 0,
        };
        let raw = RawBody::text("{\n \"refresh_token\": \"0.AR-opaque\", \"n\": 1\n}".into());
        let f = Prepared::new(raw, 100, true, &mut budget).finish(&scrub);
        assert_eq!(f.text, "{\"refresh_token\":\"[REDACTED]\",\"n\":1}");
    }
}
