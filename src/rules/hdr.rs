//! HDR: correlation and request-id headers, on every ARM answer.

use super::Judge;
use crate::http::Exchange;

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
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
    for h in ["x-ms-client-request-id", "x-ms-correlation-request-id"] {
        let Some(sent) = ex.request_header(h) else {
            continue;
        };
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
