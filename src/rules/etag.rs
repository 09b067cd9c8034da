//! ETAG: ETag-24 is ambient (every answer of an ETag-capable type carries its ETag); the
//! ETag tables (ETAG-01..23), ETAG-25 and ETAG-26 are stated by the suites, row for row.

use serde_json::Value;

use super::Judge;
use crate::http::Exchange;
use crate::target::Addressed;

/// A quoted entity-tag (RFC 7232), optionally weak.
pub(crate) fn quoted(e: &str) -> bool {
    let e = e.strip_prefix("W/").unwrap_or(e);
    e.len() >= 2 && e.starts_with('"') && e.ends_with('"')
}

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    if !matches!(ex.method.as_str(), "GET" | "PUT" | "PATCH") || !matches!(resp.status, 200 | 201) {
        return;
    }
    let Addressed::Resource(ty) = j.target.address(&ex.url) else {
        return;
    };
    if !ty.etag {
        return;
    }
    let header = resp.header("etag");
    let body = resp
        .json
        .as_ref()
        .and_then(|b| b.get("etag"))
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    let ok = match header {
        Some(h) => quoted(h),
        None => body.is_some(),
    };
    j.ledger.check("ETAG-24", ok, Some(ex.seq), || {
        (
            "the ETag: a quoted ETag header (W/ allowed), or the body's `etag` when no header is sent".into(),
            match header {
                Some(h) => format!("ETag: {h} (not a quoted entity-tag)"),
                None => "no ETag header and no `etag` in the body".into(),
            },
        )
    });
}
