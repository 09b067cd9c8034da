//! HDR: correlation and request-id headers (HDR-01..03), the body's Content-Type (HDR-04)
//! and the Date (HDR-05), on every ARM answer.

use super::Judge;
use crate::http::Exchange;

/// The largest answer ARM accepts from an RP: 8 MB, read as 8 MiB (the larger of the two
/// readings, so no answer between them fails).
const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
    content_type_and_date(j, ex);
    j.ledger
        .check("HDR-06", resp.body_bytes <= MAX_RESPONSE_BYTES, seq, || {
            (
                "a response body of at most 8 MB".into(),
                format!(
                    "{} bytes (ARM drops a larger answer and returns 500)",
                    resp.body_bytes
                ),
            )
        });
    let rid = resp
        .header("x-ms-request-id")
        .map(str::trim)
        .filter(|s| !s.is_empty());
    match rid {
        None if j.response_stripped("x-ms-request-id") => j.ledger.not_judged(
            "HDR-01",
            "the recording format strips x-ms-request-id from responses",
        ),
        None => j.ledger.fail(
            "HDR-01",
            "a non-empty x-ms-request-id header",
            "no x-ms-request-id",
            seq,
            None,
        ),
        Some(id) if j.placeholder(id) => j.ledger.not_judged(
            "HDR-01",
            format!("the recorder replaced x-ms-request-id with the placeholder `{id}`"),
        ),
        Some(id) => match j.registry.request_id_used(id, ex.seq) {
            Some(first) => j.ledger.fail(
                "HDR-01",
                "an x-ms-request-id no other response carried",
                format!("`{id}` was already returned by exchange #{first}"),
                seq,
                None,
            ),
            None => j.ledger.pass("HDR-01"),
        },
    }
    if let (Some(id), Some(routing)) = (rid, ex.request_header("x-ms-routing-request-id")) {
        j.ledger.check("HDR-02", id != routing, seq, || {
            (
                "x-ms-request-id different from the request's x-ms-routing-request-id".into(),
                format!("both are `{id}`"),
            )
        });
    }
    // The correlation id is always echoed; the client request id only when the request asks
    // (`x-ms-return-client-request-id: true`, common-api-details.md): without the flag an
    // echo is allowed, not required.
    let asked = ex
        .request_header("x-ms-return-client-request-id")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    for h in ["x-ms-client-request-id", "x-ms-correlation-request-id"] {
        let Some(sent) = ex.request_header(h) else {
            continue;
        };
        if h == "x-ms-client-request-id" && !asked {
            continue;
        }
        let got = resp.header(h);
        if got.is_none() && j.response_stripped(h) {
            j.ledger.not_judged(
                "HDR-03",
                format!("the recording format strips {h} from responses"),
            );
            continue;
        }
        j.ledger.check("HDR-03", got == Some(sent), seq, || {
            (
                format!("{h}: {sent} echoed"),
                match got {
                    Some(g) => format!("{h}: {g}"),
                    None => format!("no {h} header (ARM itself and AKS do not echo it either)"),
                },
            )
        });
    }
}

/// HDR-04: a body is declared `application/json`; HDR-05: a `Date` in RFC 1123 format.
fn content_type_and_date(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
    // A JSON body (one that is not JSON is the envelope rules' failure, not this one's).
    if resp.body_bytes > 0 && resp.json.is_some() && ex.method != "HEAD" {
        let ct = resp.header("content-type");
        match ct {
            None if j.response_stripped("content-type") => {}
            _ => {
                let json = ct.is_some_and(|v| {
                    let media = v
                        .split(';')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_ascii_lowercase();
                    media == "application/json" || media.ends_with("+json")
                });
                j.ledger.check("HDR-04", json, seq, || {
                    (
                        "Content-Type: application/json on an answer with a body".into(),
                        match ct {
                            Some(v) => format!("Content-Type: {v}"),
                            None => "no Content-Type".into(),
                        },
                    )
                });
            }
        }
    }
    match resp.header("date") {
        // A recording's missing Date says nothing: recorders may drop it.
        None if j.stripped.recorded || j.response_stripped("date") => {}
        None => j
            .ledger
            .fail("HDR-05", "a Date header (RFC 1123)", "no Date", seq, None),
        Some(d) => {
            // RFC 1123 as HTTP has it, the IMF-fixdate (`Thu, 26 Nov 2026 18:00:00 GMT`): what
            // a sender MUST generate (RFC 9110 §5.6.7), not the obsolete forms a recipient reads.
            let ok = crate::http::is_imf_fixdate(d);
            j.ledger.check("HDR-05", ok, seq, || {
                ("a Date in RFC 1123 format".into(), format!("Date: {d}"))
            });
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::rules::Outcome;
    use crate::rules::testing::{
        Case, ambient, exchange, failing, numbered, passing, run_cases, with_request_headers,
    };
    use serde_json::json;

    /// HDR-05's outcome on one answer carrying `Date: date`.
    fn dated(date: &str) -> Outcome {
        let h = [("x-ms-request-id", "r-1"), ("Date", date)];
        ambient("HDR-05", &[exchange("GET", URL, 200, &h, json!({}))]).0
    }

    /// HDR-01..05, each shown failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("HDR-04", "a JSON body declared text/plain", || {
            let h = [("x-ms-request-id", "r-1"), ("Content-Type", "text/plain")];
            ambient("HDR-04", &[exchange("GET", URL, 200, &h, json!({"a": 1}))]).0
        }),
        passing("HDR-04", "application/json; charset=utf-8", || {
            let h = [
                ("x-ms-request-id", "r-1"),
                ("Content-Type", "application/json; charset=utf-8"),
            ];
            ambient("HDR-04", &[exchange("GET", URL, 200, &h, json!({"a": 1}))]).0
        }),
        failing("HDR-05", "an ISO 8601 Date", || {
            dated("2026-11-26T18:00:00Z")
        }),
        // The obsolete forms a recipient still reads are no form a sender may write.
        failing("HDR-05", "an RFC 850 Date", || {
            dated("Thursday, 26-Nov-26 18:00:00 GMT")
        }),
        failing("HDR-05", "an asctime Date", || {
            dated("Thu Nov 26 18:00:00 2026")
        }),
        passing("HDR-05", "an RFC 1123 Date", || {
            dated("Thu, 26 Nov 2026 18:00:00 GMT")
        }),
        failing("HDR-06", "a 9 MiB answer", || {
            let mut ex = exchange("GET", URL, 200, &[("x-ms-request-id", "r-1")], json!({}));
            if let Some(r) = ex.response.as_mut() {
                r.body_bytes = 9 * 1024 * 1024;
            }
            ambient("HDR-06", &[ex]).0
        }),
        passing("HDR-06", "an answer of exactly 8 MiB", || {
            let mut ex = exchange("GET", URL, 200, &[("x-ms-request-id", "r-1")], json!({}));
            if let Some(r) = ex.response.as_mut() {
                r.body_bytes = 8 * 1024 * 1024;
            }
            ambient("HDR-06", &[ex]).0
        }),
        failing("HDR-01", "an answer without x-ms-request-id", || {
            ambient("HDR-01", &[exchange("GET", URL, 200, &[], json!({}))]).0
        }),
        failing("HDR-01", "an empty x-ms-request-id", || {
            let ex = exchange("GET", URL, 200, &[("x-ms-request-id", " ")], json!({}));
            ambient("HDR-01", &[ex]).0
        }),
        failing("HDR-01", "two answers with one x-ms-request-id", || {
            let a = answer(&[], &[]);
            ambient("HDR-01", &numbered(vec![a.clone(), a])).0
        }),
        passing(
            "HDR-01",
            "a different x-ms-request-id on each answer",
            || {
                let a = answer(&[], &[]);
                let mut b = a.clone();
                b.response.as_mut().unwrap().headers[0].1 = "r-2".into();
                ambient("HDR-01", &numbered(vec![a, b])).0
            },
        ),
        failing(
            "HDR-02",
            "x-ms-request-id equal to the routing id sent",
            || {
                let ex = exchange("GET", URL, 200, &[("x-ms-request-id", "rt-1")], json!({}));
                let ex = with_request_headers(ex, &[("x-ms-routing-request-id", "rt-1")]);
                ambient("HDR-02", &[ex]).0
            },
        ),
        passing("HDR-02", "x-ms-request-id of the RP's own", || {
            ambient(
                "HDR-02",
                &[answer(&[], &[("x-ms-routing-request-id", "rt-1")])],
            )
            .0
        }),
        failing("HDR-03", "the correlation id not echoed", || {
            ambient(
                "HDR-03",
                &[answer(&[], &[("x-ms-correlation-request-id", "corr-1")])],
            )
            .0
        }),
        failing("HDR-03", "another correlation id answered", || {
            let sent = [("x-ms-correlation-request-id", "corr-1")];
            let got = [("x-ms-correlation-request-id", "corr-2")];
            ambient("HDR-03", &[answer(&got, &sent)]).0
        }),
        passing("HDR-03", "the correlation id echoed", || {
            let sent = [("x-ms-correlation-request-id", "corr-1")];
            ambient("HDR-03", &[answer(&sent, &sent)]).0
        }),
        passing("HDR-03", "the client request id echoed when asked", || {
            let asked = [
                ("x-ms-client-request-id", "c-1"),
                ("x-ms-return-client-request-id", "true"),
            ];
            ambient("HDR-03", &[answer(&asked[..1], &asked)]).0
        }),
    ];

    #[test]
    fn hdr_cases_show_what_they_say() {
        run_cases(CASES);
    }

    const URL: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";

    fn answer(headers: &[(&str, &str)], sent: &[(&str, &str)]) -> crate::http::Exchange {
        let mut h = vec![("x-ms-request-id", "r-1")];
        h.extend_from_slice(headers);
        with_request_headers(exchange("GET", URL, 200, &h, json!({})), sent)
    }

    #[test]
    fn hdr_03_the_correlation_id_is_always_echoed() {
        let sent = [("x-ms-correlation-request-id", "corr-1")];
        let echoed = answer(&[("x-ms-correlation-request-id", "corr-1")], &sent);
        assert_eq!(ambient("HDR-03", &[echoed]).0, Outcome::Passed);
        let dropped = answer(&[], &sent);
        assert_eq!(ambient("HDR-03", &[dropped]).0, Outcome::Failed);
    }

    #[test]
    fn hdr_03_the_client_request_id_is_echoed_only_when_asked() {
        // Not asked: an echo is allowed, not required (the public RPC's common API details).
        let sent = [("x-ms-client-request-id", "c-1")];
        assert_eq!(
            ambient("HDR-03", &[answer(&[], &sent)]).0,
            Outcome::NotJudged
        );
        let asked = [
            ("x-ms-client-request-id", "c-1"),
            ("x-ms-return-client-request-id", "true"),
        ];
        assert_eq!(ambient("HDR-03", &[answer(&[], &asked)]).0, Outcome::Failed);
        let echoed = answer(&[("x-ms-client-request-id", "c-1")], &asked);
        assert_eq!(ambient("HDR-03", &[echoed]).0, Outcome::Passed);
    }

    #[test]
    fn a_zero_guid_request_id_is_a_recorders_placeholder_never_a_reuse() {
        let zero = "00000000-0000-0000-0000-000000000000";
        let two = numbered(vec![
            exchange("GET", URL, 200, &[("x-ms-request-id", zero)], json!({})),
            exchange("GET", URL, 200, &[("x-ms-request-id", zero)], json!({})),
        ]);
        // Live, the RP sent the same id twice.
        assert_eq!(ambient("HDR-01", &two).0, Outcome::Failed);
        // Recorded, the recorder wrote it: nothing to judge.
        assert_eq!(
            crate::rules::testing::recorded("HDR-01", &two),
            Outcome::NotJudged
        );
    }

    #[test]
    fn a_region_prefixed_zero_guid_is_a_placeholder_too_but_a_real_id_is_not() {
        use super::super::engine::is_placeholder;
        let prefixed = "southeastasia:00000000-0000-0000-0000-000000000000";
        assert!(is_placeholder(prefixed));
        assert!(is_placeholder(
            "00000000-0000-0000-0000-000000000000_M5SN1_M5SN1"
        ));
        assert!(!is_placeholder(
            "southeastasia:5f0c7a1e-1111-4000-8000-000000000001"
        ));
        assert!(!is_placeholder(
            "00000000-0000-0000-0000-000000000000/5f0c7a1e11114000"
        ));
        assert!(!is_placeholder("southeastasia"));
        let two = numbered(vec![
            exchange("GET", URL, 200, &[("x-ms-request-id", prefixed)], json!({})),
            exchange("GET", URL, 200, &[("x-ms-request-id", prefixed)], json!({})),
        ]);
        assert_eq!(ambient("HDR-01", &two).0, Outcome::Failed);
        assert_eq!(
            crate::rules::testing::recorded("HDR-01", &two),
            Outcome::NotJudged
        );
    }
}
