//! ETAG: ETag-24 is ambient (every answer of an ETag-capable type carries its ETag); the
//! ETag tables (ETAG-01..23), ETAG-25 and ETAG-26 are stated by the suites, row for row.

use serde_json::Value;

use super::Judge;
use crate::http::Exchange;
use crate::target::{Addressed, Target};

/// ETAG-24 speaks of ETag-capable types: a target that declares none never offers its subject.
pub(super) fn undeclared(t: &Target) -> Vec<(&'static str, String)> {
    if t.types.iter().any(|ty| ty.etag) {
        return Vec::new();
    }
    vec![(
        "ETAG-24",
        "no type in the target has: etag (ETAG-24 is judged on the answers of ETag-capable types)"
            .into(),
    )]
}

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

#[cfg(test)]
pub(crate) mod tests {
    use crate::rules::Outcome;
    use crate::rules::testing::{
        Case, WIDGET, ambient, exchange, failing, passing, run_cases, widget,
    };

    fn read(etag: Option<&str>, body_etag: Option<&str>) -> Outcome {
        let mut h = vec![("x-ms-request-id", "r-1")];
        if let Some(e) = etag {
            h.push(("ETag", e));
        }
        let mut b = widget("Succeeded");
        if let Some(e) = body_etag {
            b["etag"] = e.into();
        }
        ambient("ETAG-24", &[exchange("GET", WIDGET, 200, &h, b)]).0
    }

    /// ETAG-24 (the ambient ETag rule), failing and passing on both of its forms (the header,
    /// or the body's `etag` when no header is sent) and on a weak tag.
    pub(crate) const CASES: &[Case] = &[
        failing("ETAG-24", "an unquoted ETag header", || {
            read(Some("abc"), None)
        }),
        failing("ETAG-24", "no ETag header and no body etag", || {
            read(None, None)
        }),
        failing("ETAG-24", "an unquoted header beside a body etag", || {
            read(Some("abc"), Some("\"abc\""))
        }),
        passing("ETAG-24", "a quoted ETag header", || {
            read(Some("\"abc\""), None)
        }),
        passing("ETAG-24", "a weak ETag header", || {
            read(Some("W/\"abc\""), None)
        }),
        passing("ETAG-24", "the body's etag, no header", || {
            read(None, Some("\"abc\""))
        }),
    ];

    #[test]
    fn etag_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn etag_24_judges_only_answers_with_the_resource() {
        let created = exchange(
            "PUT",
            WIDGET,
            202,
            &[("x-ms-request-id", "r-1")],
            widget("Creating"),
        );
        assert_eq!(ambient("ETAG-24", &[created]).0, Outcome::NotJudged);
    }
}
