//! RGDEL: resource-group deletes. RGDEL-03 is judged on a sweep record; RGDEL-01 and RGDEL-02
//! are stated by the suites.

use super::{Judge, SweepRecord};
use crate::http::Exchange;

pub(super) fn sweep(j: &mut Judge<'_>, rec: &SweepRecord, exs: &[Exchange]) {
    let mut bad = false;
    for &i in &rec.deletes {
        let x = &exs[i];
        if let Some(s) = x.status()
            && s >= 500
        {
            bad = true;
            j.ledger.fail(
                "RGDEL-03",
                "every DELETE in the sweep answers 2xx or 4xx",
                format!("DELETE {} answered {s}", x.url),
                Some(x.seq),
                None,
            );
        }
    }
    let left: Vec<&str> = rec
        .finals
        .iter()
        .filter(|(_, i)| exs[*i].status() != Some(404))
        .map(|(u, _)| u.as_str())
        .collect();
    // A DELETE whose operation never ended (OPRES-03, LOC-08) leaves its resource undecided.
    let never_ended = j
        .ledger
        .cause_among(exs.iter().map(|x| x.seq), &["OPRES-03", "LOC-08"]);
    if let (false, Some(c)) = (left.is_empty(), &never_ended) {
        j.ledger.blocked(
            "RGDEL-03",
            c,
            "an operation of the sweep never reached a terminal status, so what is left may still be going",
        );
    } else if !left.is_empty() {
        j.ledger.fail(
            "RGDEL-03",
            "no resource left once a sweep pass makes no progress",
            format!(
                "still there after {} passes: {}",
                rec.passes,
                left.join(", ")
            ),
            None,
            None,
        );
    } else if !bad {
        j.ledger.pass("RGDEL-03");
    }
}
