//! Azure SDK test-proxy JSON, streamed: `Entries[]` are read one at a time.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::body::{BoundedBody, RawBody};
use super::raw::{RawEntry, RawResponse, header_pairs};

/// One test-proxy entry, from its JSON text.
pub(crate) fn entry(raw: &[u8], cap: usize) -> serde_json::Result<RawEntry> {
    let mut de = serde_json::Deserializer::from_slice(raw);
    let e = Entry { cap }.deserialize(&mut de)?;
    de.end()?;
    Ok(e)
}

struct Entry {
    cap: usize,
}

impl<'de> DeserializeSeed<'de> for Entry {
    type Value = RawEntry;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<RawEntry, D::Error> {
        d.deserialize_map(self)
    }
}

/// Headers: an object of strings or arrays of strings.
fn headers<E: de::Error>(v: Value, side: &str) -> Result<Vec<(String, String)>, E> {
    match v {
        Value::Object(_) => Ok(header_pairs(&v)),
        Value::Null => Ok(Vec::new()),
        other => Err(E::custom(format!(
            "`{side}` must be an object of header names to strings or arrays of strings, found {}",
            kind(&other)
        ))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'de> Visitor<'de> for Entry {
    type Value = RawEntry;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a test-proxy entry object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEntry, A::Error> {
        let (mut uri, mut method, mut status) = (None::<String>, None::<String>, None::<u16>);
        let (mut req_h, mut resp_h) = (Vec::new(), Vec::new());
        let (mut req_b, mut resp_b) = (RawBody::Empty, RawBody::Empty);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "RequestUri" => uri = Some(map.next_value()?),
                "RequestMethod" => method = Some(map.next_value()?),
                "StatusCode" => status = Some(map.next_value()?),
                "RequestHeaders" => req_h = headers(map.next_value()?, "RequestHeaders")?,
                "ResponseHeaders" => resp_h = headers(map.next_value()?, "ResponseHeaders")?,
                "RequestBody" => req_b = map.next_value_seed(BoundedBody { cap: self.cap })?,
                "ResponseBody" => resp_b = map.next_value_seed(BoundedBody { cap: self.cap })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let uri = uri.ok_or_else(|| de::Error::missing_field("RequestUri"))?;
        let method = method.ok_or_else(|| de::Error::missing_field("RequestMethod"))?;
        let status = status.ok_or_else(|| de::Error::missing_field("StatusCode"))?;
        let mut e = RawEntry::new(method, uri);
        e.request_headers = req_h;
        e.request_body = match req_b {
            RawBody::Empty => None,
            b => Some(b),
        };
        e.response = Some(RawResponse {
            status,
            headers: resp_h,
            body: resp_b,
            size: None,
        });
        Ok(e)
    }
}
