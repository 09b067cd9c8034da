//! Writing exchanges as HAR 1.2, so a run can keep its traffic (`--har FILE`) and `replay` can
//! judge it again.
//!
//! Each entry carries, besides the standard fields, `_rpconform: {seq, role, foreign}` (HAR
//! allows custom fields starting with `_`), and a request that got no answer is written as
//! status 0 with `response._error`, as browsers do; the reader restores all of them. What an
//! [`Exchange`] does not hold cannot come back: bodies longer than the report cut are written
//! cut (their parsed form then does not come back), and reading applies the replay secret
//! shapes on top of the live redaction.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::har::CREATOR;
use crate::http::Exchange;

/// `startedDateTime` for exchanges whose recording had no time (vcrpy, test-proxy); marked in
/// `_rpconform` so it reads back as no time.
const NO_TIME: &str = "1970-01-01T00:00:00.000Z";

fn headers(h: &[(String, String)]) -> Value {
    Value::Array(
        h.iter()
            .map(|(k, v)| json!({"name": k, "value": v}))
            .collect(),
    )
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn entry(ex: &Exchange) -> Value {
    let query: Vec<Value> = crate::http::parse_url(&ex.url)
        .map(|u| {
            u.query_pairs()
                .map(|(k, v)| json!({"name": k, "value": v}))
                .collect()
        })
        .unwrap_or_default();
    let mut request = json!({
        "method": ex.method,
        "url": ex.url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": headers(&ex.request_headers),
        "queryString": query,
        "headersSize": -1,
        "bodySize": ex.request_body.as_ref().map_or(0, String::len),
    });
    if let Some(b) = &ex.request_body {
        request["postData"] = json!({
            "mimeType": header(&ex.request_headers, "content-type").unwrap_or(""),
            "text": b,
        });
    }
    let response = match &ex.response {
        Some(r) => json!({
            "status": r.status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": headers(&r.headers),
            "content": {
                "size": r.body_bytes,
                "mimeType": header(&r.headers, "content-type").unwrap_or(""),
                "text": r.body,
            },
            "redirectURL": header(&r.headers, "location").unwrap_or(""),
            "headersSize": -1,
            "bodySize": -1,
        }),
        None => json!({
            "status": 0,
            "statusText": "",
            "httpVersion": "",
            "cookies": [],
            "headers": [],
            "content": {"size": 0, "mimeType": ""},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
            "_error": ex.error.clone().unwrap_or_default(),
        }),
    };
    let mut own =
        json!({"seq": ex.seq, "role": ex.role, "foreign": ex.foreign, "surface": ex.surface});
    if ex.started_at.is_empty() {
        own["noTime"] = Value::Bool(true);
    }
    json!({
        "startedDateTime": if ex.started_at.is_empty() { NO_TIME } else { ex.started_at.as_str() },
        "time": ex.elapsed_ms,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"send": 0, "wait": ex.elapsed_ms, "receive": 0},
        "_rpconform": own,
    })
}

/// The HAR document up to its first entry.
fn head(out: &mut impl Write) -> io::Result<()> {
    let creator = json!({"name": CREATOR, "version": env!("CARGO_PKG_VERSION")});
    write!(
        out,
        "{{\n  \"log\": {{\n    \"version\": \"1.2\",\n    \"creator\": {creator},\n    \"entries\": ["
    )
}

/// Entry number `i`, with its separator.
fn put(out: &mut impl Write, i: usize, ex: &Exchange) -> io::Result<()> {
    out.write_all(if i == 0 { b"\n      " } else { b",\n      " })?;
    serde_json::to_writer(&mut *out, &entry(ex))?;
    Ok(())
}

const TAIL: &[u8] = b"\n    ]\n  }\n}\n";

/// Write `exchanges` as one HAR 1.2 document, entry by entry.
pub fn write_har(exchanges: &[Exchange], out: impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    head(&mut out)?;
    for (i, ex) in exchanges.iter().enumerate() {
        put(&mut out, i, ex)?;
    }
    out.write_all(TAIL)?;
    out.flush()
}

/// A HAR file written as a run goes: each exchange is appended as it happens (the run never
/// holds its traffic in memory); [`HarWriter::finish`] closes the document.
pub struct HarWriter {
    out: std::sync::Mutex<(io::BufWriter<std::fs::File>, usize)>,
}

impl HarWriter {
    pub fn create(path: &std::path::Path) -> io::Result<HarWriter> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut out = io::BufWriter::new(std::fs::File::create(path)?);
        head(&mut out)?;
        Ok(HarWriter {
            out: std::sync::Mutex::new((out, 0)),
        })
    }

    /// Append one exchange.
    pub fn push(&self, ex: &Exchange) -> io::Result<()> {
        let mut g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (out, n) = &mut *g;
        put(out, *n, ex)?;
        *n += 1;
        Ok(())
    }

    pub fn finish(&self) -> io::Result<()> {
        let mut g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        g.0.write_all(TAIL)?;
        g.0.flush()
    }
}
