//! HAR 1.2, streamed: `log.entries[]` are read one at a time and handed to the builder, with
//! body texts measured against the cap before they are kept.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::body::{Capped, CappedText, RawBody};
use super::raw::{OwnMeta, RawEntry, RawResponse};
use crate::http::Role;

/// The creator name [`super::write_har`] writes, by which its files are known.
pub(crate) const CREATOR: &str = "rpconform";

/// One HAR entry, from its JSON text.
pub(crate) fn entry(raw: &[u8], cap: usize) -> serde_json::Result<RawEntry> {
    let mut de = serde_json::Deserializer::from_slice(raw);
    let e = EntrySeed { cap }.deserialize(&mut de)?;
    de.end()?;
    Ok(e)
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

fn pairs(h: Vec<Header>) -> Vec<(String, String)> {
    h.into_iter().map(|h| (h.name, h.value)).collect()
}

/// What rpconform's writer adds to an entry.
#[derive(Deserialize)]
struct Own {
    seq: u64,
    role: Role,
    #[serde(default)]
    foreign: bool,
    /// The declared surface (absent: the ARM surface, as rpconform writes it).
    #[serde(default)]
    surface: crate::http::Surface,
    /// The exchange had no start time (`startedDateTime` is a placeholder).
    #[serde(default, rename = "noTime")]
    no_time: bool,
}

struct EntrySeed {
    cap: usize,
}

impl<'de> DeserializeSeed<'de> for EntrySeed {
    type Value = RawEntry;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<RawEntry, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EntrySeed {
    type Value = RawEntry;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a HAR entry object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEntry, A::Error> {
        let mut started = String::new();
        let mut time: Option<f64> = None;
        let mut request: Option<RawEntry> = None;
        let mut response: Option<(Option<RawResponse>, Option<String>)> = None;
        let mut own: Option<OwnMeta> = None;
        let mut no_time = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "startedDateTime" => started = map.next_value()?,
                "time" => time = map.next_value()?,
                "request" => request = Some(map.next_value_seed(Part::Request(self.cap))?.0),
                "response" => {
                    let PartOut(_, r, e) = map.next_value_seed(Part::Response(self.cap))?;
                    response = Some((r, e));
                }
                "_rpconform" => {
                    let o: Own = map.next_value()?;
                    no_time = o.no_time;
                    own = Some(OwnMeta {
                        seq: o.seq,
                        role: o.role,
                        foreign: o.foreign,
                        surface: o.surface,
                    });
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let mut e = request.ok_or_else(|| de::Error::missing_field("request"))?;
        let (resp, error) = response.ok_or_else(|| de::Error::missing_field("response"))?;
        e.started_at = if no_time { String::new() } else { started };
        e.elapsed_ms = time
            .filter(|t| t.is_finite() && *t >= 0.0)
            .map_or(0, |t| t.round() as u64);
        e.error = match (&resp, error) {
            (None, Some(why)) => Some(why),
            (None, None) => Some("no response recorded (HAR status 0)".into()),
            (Some(_), _) => None,
        };
        e.response = resp;
        e.own = own;
        Ok(e)
    }
}

/// A HAR `request` or `response` object.
enum Part {
    Request(usize),
    Response(usize),
}

/// A part read: the request as an entry, or the response (none for status 0) and its `_error`.
struct PartOut(RawEntry, Option<RawResponse>, Option<String>);

impl<'de> DeserializeSeed<'de> for Part {
    type Value = PartOut;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<PartOut, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Part {
    type Value = PartOut;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Part::Request(_) => f.write_str("a HAR request object"),
            Part::Response(_) => f.write_str("a HAR response object"),
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PartOut, A::Error> {
        let cap = match self {
            Part::Request(c) | Part::Response(c) => c,
        };
        let (mut method, mut url, mut status) = (None::<String>, None::<String>, None::<i64>);
        let mut headers = Vec::new();
        let mut body: Option<RawBody> = None;
        let mut size: Option<u64> = None;
        let mut error: Option<String> = None;
        while let Some(key) = map.next_key::<String>()? {
            match (&self, key.as_str()) {
                (Part::Request(_), "method") => method = Some(map.next_value()?),
                (Part::Request(_), "url") => url = Some(map.next_value()?),
                (Part::Response(_), "status") => status = Some(map.next_value()?),
                (Part::Response(_), "_error") => error = map.next_value()?,
                (_, "headers") => headers = pairs(map.next_value()?),
                (Part::Request(_), "postData") => {
                    body = map.next_value_seed(Content { cap, request: true })?.0;
                }
                (Part::Response(_), "content") => {
                    let c = map.next_value_seed(Content {
                        cap,
                        request: false,
                    })?;
                    body = c.0;
                    size = c.1;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match self {
            Part::Request(_) => {
                let method = method.ok_or_else(|| de::Error::missing_field("method"))?;
                let url = url.ok_or_else(|| de::Error::missing_field("url"))?;
                let mut e = RawEntry::new(method, url);
                e.request_headers = headers;
                e.request_body = body;
                Ok(PartOut(e, None, None))
            }
            Part::Response(_) => {
                let status = status.ok_or_else(|| de::Error::missing_field("status"))?;
                let resp = u16::try_from(status)
                    .ok()
                    .filter(|s| (100..1000).contains(s))
                    .map(|status| RawResponse {
                        status,
                        headers,
                        body: body.unwrap_or(RawBody::NotRecorded),
                        size,
                    });
                Ok(PartOut(
                    RawEntry::new(String::new(), String::new()),
                    resp,
                    error,
                ))
            }
        }
    }
}

/// `postData` or `content`: the body (None for a request without `text`) and the stated size.
struct Content {
    cap: usize,
    request: bool,
}

struct ContentOut(Option<RawBody>, Option<u64>);

impl<'de> DeserializeSeed<'de> for Content {
    type Value = ContentOut;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ContentOut, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Content {
    type Value = ContentOut;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a HAR content object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ContentOut, A::Error> {
        let mut text: Option<Capped> = None;
        let mut base64 = false;
        let mut size: Option<i64> = None;
        // Base64 text is 4/3 of its bytes: measure against the cap after decoding.
        let raw_cap = self.cap.saturating_mul(4) / 3 + 4;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "text" => text = Some(map.next_value_seed(CappedText(raw_cap))?),
                "encoding" => {
                    let enc: Option<String> = map.next_value()?;
                    base64 = enc.is_some_and(|e| e.eq_ignore_ascii_case("base64"));
                }
                "size" => size = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let size = size.and_then(|s| u64::try_from(s).ok());
        let body = match text {
            None if self.request => None,
            None if size == Some(0) => Some(RawBody::Empty),
            None => Some(RawBody::NotRecorded),
            Some(Capped::Over(n)) => Some(RawBody::OverCap(if base64 { n * 3 / 4 } else { n })),
            Some(Capped::Text(t)) if base64 => Some(if t.len() / 4 * 3 > self.cap {
                RawBody::OverCap(t.len() as u64 / 4 * 3)
            } else {
                // Decoded later, and only if the body is kept.
                RawBody::Base64(t)
            }),
            Some(Capped::Text(t)) if t.len() > self.cap => Some(RawBody::OverCap(t.len() as u64)),
            Some(Capped::Text(t)) if self.request => Some(RawBody::Text(t)),
            Some(Capped::Text(t)) => Some(RawBody::text(t)),
        };
        Ok(ContentOut(body, size))
    }
}
