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
                format!("{} with Retry-After {:?}", resp.status, ra),
            )
        },
    );
}
