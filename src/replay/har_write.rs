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
    let query: Vec<Value> = url::Url::parse(&ex.url)
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

/// Write `exchanges` as one HAR 1.2 document, entry by entry.
pub fn write_har(exchanges: &[Exchange], out: impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let creator = json!({"name": CREATOR, "version": env!("CARGO_PKG_VERSION")});
    write!(
        out,
        "{{\n  \"log\": {{\n    \"version\": \"1.2\",\n    \"creator\": {creator},\n    \"entries\": ["
    )?;
    for (i, ex) in exchanges.iter().enumerate() {
        out.write_all(if i == 0 { b"\n      " } else { b",\n      " })?;
        serde_json::to_writer(&mut out, &entry(ex))?;
    }
    out.write_all(b"\n    ]\n  }\n}\n")?;
    out.flush()
}

/// Write every exchange of a run's results as one HAR file, in the order they were sent (by
/// `seq`, which the run numbers across its tests), each exchange once.
pub fn write_run_har(
    path: &std::path::Path,
    results: &[crate::report::ScenarioResult],
) -> io::Result<()> {
    let mut all: Vec<&Exchange> = results.iter().flat_map(|r| &r.exchanges).collect();
    all.sort_by_key(|x| x.seq);
    all.dedup_by_key(|x| x.seq);
    let owned: Vec<Exchange> = all.into_iter().cloned().collect();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    write_har(&owned, std::fs::File::create(path)?)
}
