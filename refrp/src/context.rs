//! [`Req`]: what a handler needs to know about the request — headers, query, the checked
//! api-version, the public base URL for links, identity and preconditions — plus the settings.

use std::time::Instant;

use axum::body::Bytes;
use axum::http::{HeaderMap, Uri};
use serde_json::{Map, Value};

use crate::etag::{Cond, Pre};
use crate::faults::Fault;
use crate::path::{Fold, percent_decode};
use crate::settings::Settings;
use crate::variants::Variant;

/// One request as seen by the handlers.
pub struct Req<'a> {
    pub headers: &'a HeaderMap,
    /// The raw request path (no query).
    pub path: &'a str,
    pub params: Vec<(String, String)>,
    /// The api-version in force (checked, or the default under a fault).
    pub api_version: String,
    pub body: Bytes,
    /// `scheme://authority` for absolute links: the Referer's origin, else the Host.
    pub base: String,
    /// `http://` + the Host the RP was called on (what links are built from under the
    /// `*-from-host` faults).
    pub host: String,
    pub settings: &'a Settings,
    pub now: Instant,
}

impl<'a> Req<'a> {
    pub fn has(&self, fault: Fault) -> bool {
        self.settings.has(fault)
    }

    pub fn is(&self, variant: Variant) -> bool {
        self.settings.is(variant)
    }

    /// How resource names fold into store keys under the case-sensitivity faults.
    pub fn fold(&self) -> Fold {
        Fold {
            names: self.has(Fault::CaseSensitiveIds),
            nested: self.has(Fault::NestedCaseSensitive),
        }
    }

    /// The request's preconditions (`If-Match`, `If-None-Match`) and how to compare tags.
    pub fn pre(&self) -> Pre {
        Pre {
            if_match: self.if_match(),
            if_none_match: self.if_none_match(),
            weak: self.is(Variant::WeakEtags),
        }
    }

    /// A new ETag, weak under `weak-etags`.
    pub fn new_etag(&self) -> String {
        if self.is(Variant::WeakEtags) {
            crate::ids::weak_etag()
        } else {
            crate::ids::etag()
        }
    }

    /// A header as text; `None` when absent or not visible ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The first query parameter with this name (case-insensitive).
    pub fn query(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `If-Match`, or `Absent` under the `ignore-if-match` fault. Unreadable bytes count as
    /// a tag that matches nothing.
    pub fn if_match(&self) -> Cond {
        if self.has(Fault::IgnoreIfMatch) {
            return Cond::Absent;
        }
        self.cond("if-match")
    }

    /// `If-None-Match`, or `Absent` under the `ignore-if-none-match` fault.
    pub fn if_none_match(&self) -> Cond {
        if self.has(Fault::IgnoreIfNoneMatch) {
            return Cond::Absent;
        }
        self.cond("if-none-match")
    }

    fn cond(&self, name: &str) -> Cond {
        match self.headers.get(name) {
            None => Cond::Absent,
            Some(v) => match v.to_str() {
                Ok(s)
                    if name == "if-match"
                        && s.trim() == "\"\""
                        && self.is(Variant::QuotedEmptyIfMatchAbsent) =>
                {
                    Cond::Absent
                }
                Ok(s) => Cond::parse(Some(s)),
                Err(_) => Cond::Tags(vec!["\"\u{fffd}\"".into()]),
            },
        }
    }

    pub fn tenant(&self) -> Option<String> {
        self.identity("x-ms-home-tenant-id")
    }

    pub fn client(&self) -> Option<String> {
        self.identity("x-ms-client-object-id")
    }

    fn identity(&self, name: &str) -> Option<String> {
        self.header(name)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }

    /// The JSON object of `x-ms-arm-resource-system-data`; malformed values are ignored.
    pub fn system_data(&self) -> Option<Map<String, Value>> {
        if self.has(Fault::SystemDataIgnored) {
            return None;
        }
        let raw = self.header("x-ms-arm-resource-system-data")?;
        match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        }
    }

    /// An absolute URL on this server for `path` (already encoded) and `query`, on the public
    /// host the Referer names (on the Host called under `from_host`).
    pub fn absolute(&self, path_and_query: &str) -> String {
        format!("{}{}", self.base, path_and_query)
    }

    /// [`Req::absolute`], on the Host the RP was called on when `fault` is on.
    pub fn link(&self, fault: Fault, path_and_query: &str) -> String {
        if self.has(fault) {
            format!("{}{}", self.host, path_and_query)
        } else {
            self.absolute(path_and_query)
        }
    }
}

/// Splits a raw query string into decoded (name, value) pairs.
pub fn parse_query(raw: Option<&str>) -> Vec<(String, String)> {
    let Some(raw) = raw else { return Vec::new() };
    raw.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let dec = |s: &str| {
                let s = s.replace('+', " ");
                percent_decode(&s).unwrap_or(s)
            };
            (dec(k), dec(v))
        })
        .collect()
}

/// The public base of links: the Referer's origin when it parses, with the path prefix the
/// caller's URL had before this request's own path (a gateway serving the RP under `/rp/v1`
/// strips it; the Referer, the full URL the client called, keeps it), else `http://` + Host,
/// else the URI's authority, else `http://localhost`.
pub fn base_url(headers: &HeaderMap, uri: &Uri) -> String {
    let referer = headers.get("referer").and_then(|v| v.to_str().ok());
    if let Some(r) = referer
        && let Some(o) = origin(r)
    {
        return format!("{o}{}", referer_prefix(r, uri.path()));
    }
    host_base(headers, uri)
}

/// The part of the Referer's path before `path` (this request's), when the Referer's path
/// ends with its segments (letter case and percent-escapes aside); empty otherwise.
fn referer_prefix(referer: &str, path: &str) -> String {
    let rest = referer.split_once("://").map_or("", |(_, r)| r);
    let rpath = rest.find('/').map_or("", |i| &rest[i..]);
    let rpath = rpath.split(['?', '#']).next().unwrap_or("");
    let segs = |p: &'_ str| -> Vec<String> {
        p.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let fold = |s: &str| {
        percent_decode(s)
            .unwrap_or_else(|| s.to_string())
            .to_lowercase()
    };
    let (theirs, own) = (segs(rpath), segs(path));
    if own.is_empty() || theirs.len() <= own.len() {
        return String::new();
    }
    let lead = theirs.len() - own.len();
    if theirs[lead..]
        .iter()
        .zip(&own)
        .any(|(a, b)| fold(a) != fold(b))
    {
        return String::new();
    }
    theirs[..lead].iter().map(|s| format!("/{s}")).collect()
}

/// `http://` + Host (the URI's authority when Host is missing or malformed, else
/// `localhost`): the base of the links the data-plane and task surfaces send.
pub fn host_base(headers: &HeaderMap, uri: &Uri) -> String {
    let host = headers
        .get("host")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|h| valid_authority(h))
        .map(str::to_string)
        .or_else(|| uri.authority().map(|a| a.as_str().to_string()));
    format!("http://{}", host.as_deref().unwrap_or("localhost"))
}

fn valid_authority(a: &str) -> bool {
    !a.is_empty()
        && a.len() <= 255
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'))
}

/// The `scheme://authority` of an absolute http(s) URL.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    valid_authority(authority).then(|| format!("{}://{authority}", scheme.to_ascii_lowercase()))
}

/// Percent-encodes one path segment (unreserved characters and `()` stay as they are).
pub fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'(' | b')') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn base_prefers_referer_then_host() {
        let uri: Uri = "/x".parse().unwrap_or_default();
        let mut h = HeaderMap::new();
        assert_eq!(base_url(&h, &uri), "http://localhost");
        h.insert("host", HeaderValue::from_static("127.0.0.1:8080"));
        assert_eq!(base_url(&h, &uri), "http://127.0.0.1:8080");
        h.insert(
            "referer",
            HeaderValue::from_static("https://arm.example:443/some/path?q"),
        );
        assert_eq!(base_url(&h, &uri), "https://arm.example:443");
        // Behind a gateway that serves the RP under a prefix: the Referer keeps it.
        let sub: Uri = "/subscriptions/S/resourceGroups/g"
            .parse()
            .unwrap_or_default();
        h.insert(
            "referer",
            HeaderValue::from_static(
                "http://gw:81/rp/v1/Subscriptions/s/resourceGroups/g?api-version=1",
            ),
        );
        assert_eq!(base_url(&h, &sub), "http://gw:81/rp/v1");
        h.insert(
            "referer",
            HeaderValue::from_static("http://gw:81/subscriptions/S/resourceGroups/g"),
        );
        assert_eq!(base_url(&h, &sub), "http://gw:81");
        h.insert("referer", HeaderValue::from_static("not a url"));
        assert_eq!(base_url(&h, &uri), "http://127.0.0.1:8080");
        h.insert("host", HeaderValue::from_static("bad host/"));
        h.remove("referer");
        assert_eq!(base_url(&h, &uri), "http://localhost");
    }

    #[test]
    fn query_parsing_and_encoding() {
        let q = parse_query(Some("api-version=2024-05-01&$skipToken=a%20b&flag"));
        assert_eq!(q[0], ("api-version".into(), "2024-05-01".into()));
        assert_eq!(q[1].1, "a b");
        assert_eq!(q[2], ("flag".into(), String::new()));
        assert_eq!(encode_segment("a b/c"), "a%20b%2Fc");
    }
}
