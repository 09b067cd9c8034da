//! RETRY: what makes client retries safe, judged on ARM answers. RETRY-02 and RETRY-03 are
//! stated by the suites (they need a repeated request).

use super::Judge;
use crate::http::Exchange;
use crate::lro::retry_after_secs;

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    if !(matches!(resp.status, 408 | 429) || resp.status >= 500) {
        return;
    }
    let ra = resp.header("retry-after");
    if ra.is_none() && j.response_stripped("retry-after") {
        j.ledger
            .not_judged("RETRY-01", "the recording format strips Retry-After");
        return;
    }
    j.ledger.check(
        "RETRY-01",
        ra.is_some_and(|v| retry_after_secs(v).is_some()),
        Some(ex.seq),
        || {
            (
                "Retry-After in whole seconds on a 408/429/5xx".into(),
                match ra {
                    Some(v) => format!(
                        "{} with Retry-After {}",
                        resp.status,
                        serde_json::Value::from(v)
                    ),
                    None => format!("{} with no Retry-After", resp.status),
                },
            )
        },
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::rules::Outcome;
    use crate::rules::testing::{Case, WIDGET, ambient, exchange, failing, passing, run_cases};
    use serde_json::json;

    fn answered(status: u16, retry_after: Option<&str>) -> Outcome {
        let mut h = vec![("x-ms-request-id", "r-1")];
        if let Some(r) = retry_after {
            h.push(("Retry-After", r));
        }
        let body = json!({"error": {"code": "Busy", "message": "try later"}});
        ambient("RETRY-01", &[exchange("GET", WIDGET, status, &h, body)]).0
    }

    /// RETRY-01 on 503, 429 and 408 answers.
    pub(crate) const CASES: &[Case] = &[
        failing("RETRY-01", "a 503 without Retry-After", || {
            answered(503, None)
        }),
        failing("RETRY-01", "a 429 with an HTTP-date", || {
            answered(429, Some("Wed, 21 Oct 2026 07:28:00 GMT"))
        }),
        passing("RETRY-01", "a 503 with Retry-After: 10", || {
            answered(503, Some("10"))
        }),
        passing("RETRY-01", "a 408 with Retry-After: 1", || {
            answered(408, Some("1"))
        }),
    ];

    #[test]
    fn retry_cases_show_what_they_say() {
        run_cases(CASES);
        assert_eq!(answered(400, None), Outcome::NotJudged);
    }
}
