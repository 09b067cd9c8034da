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
    if !left.is_empty() {
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
