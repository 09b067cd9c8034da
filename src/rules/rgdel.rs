//! RGDEL: resource-group deletes. RGDEL-03 is judged on a sweep record; RGDEL-01 and RGDEL-02
//! are stated by the suites.

use super::{Judge, SweepRecord};
use crate::http::Exchange;

/// RGDEL rules are judged only where a test's action states them (the selection reads it).
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (super::Shows::Stated, &[]);

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

#[cfg(test)]
pub(crate) mod tests {
    use crate::rules::testing::{
        Case, WIDGET, exchange, failing, judged, numbered, passing, run_cases,
    };
    use crate::rules::{Outcome, SweepRecord};
    use serde_json::Value;

    /// A sweep: one DELETE answered `deleted`, then a read of the resource answered `left`.
    fn sweep(deleted: u16, left: u16) -> Outcome {
        let exs = numbered(vec![
            exchange("DELETE", WIDGET, deleted, &[], Value::Null),
            exchange("GET", WIDGET, left, &[], Value::Null),
        ]);
        let rec = SweepRecord {
            deletes: vec![0],
            finals: vec![(WIDGET.to_string(), 1)],
            passes: 2,
        };
        judged("RGDEL-03", |j| j.sweep(&rec, &exs))
    }

    /// RGDEL-03 (01 and 02 are stated by the suites), failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("RGDEL-03", "a DELETE in the sweep answered 500", || {
            sweep(500, 404)
        }),
        failing(
            "RGDEL-03",
            "a resource left once the sweep made no progress",
            || sweep(409, 200),
        ),
        passing("RGDEL-03", "every DELETE 2xx/4xx and nothing left", || {
            sweep(200, 404)
        }),
        passing("RGDEL-03", "a refused DELETE, then nothing left", || {
            sweep(409, 404)
        }),
    ];

    #[test]
    fn rgdel_cases_show_what_they_say() {
        run_cases(CASES);
    }
}
