//! ACT: POST actions. ACT-01 is ambient on an action's answer that hands out a polling URL
//! (the action runs long): 202 Accepted with a Location header. The rest of ACT is stated by
//! the suites.

use super::Judge;
use crate::http::Exchange;
use crate::target::Addressed;

/// What the engine judges of ACT by itself, and on which exchanges (the selection reads it).
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) =
    (super::Shows::Write(Some("POST")), &[]);

/// ACT-01 on a successful POST of an action on a declared resource (`{resourceUrl}/{action}`)
/// whose answer hands out an operation URL (`Azure-AsyncOperation`, or a 202's `Location`):
/// the action runs long, so it answers 202 with a Location. A 200 or 204 that hands out an
/// operation URL leaves a client unsure whether to poll (the SDK polls a 204 no more). A
/// Location on a 200 names what the action made (SQL's job execution), no operation (LOC-02's
/// decision): no verdict.
pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    if ex.method != "POST" || !(200..300).contains(&resp.status) {
        return;
    }
    let on_resource = crate::lro::resource_of("POST", &ex.url)
        .is_some_and(|r| matches!(j.target.address(&r), Addressed::Resource(_)));
    let aao = resp.header("azure-asyncoperation");
    let loc = resp.header("location").filter(|_| resp.status == 202);
    if !on_resource || (aao.is_none() && loc.is_none()) {
        return;
    }
    j.ledger.check(
        "ACT-01",
        resp.status == 202 && loc.is_some(),
        Some(ex.seq),
        || {
            let handed = match (aao, loc) {
                (Some(_), Some(_)) => "Azure-AsyncOperation and Location",
                (Some(_), None) => "Azure-AsyncOperation and no Location",
                _ => "Location",
            };
            (
                "202 Accepted with a Location header for a long-running action".into(),
                format!("{} with {handed}", resp.status),
            )
        },
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::rules::testing::{
        Case, OP_RESULT, OP_STATUS, WIDGET, ambient, exchange, failing, passing, run_cases,
    };
    use serde_json::Value;

    fn restart(status: u16, headers: &[(&str, &str)]) -> crate::rules::Outcome {
        let url = WIDGET.replace("?api-version", "/restart?api-version");
        let mut h = vec![("x-ms-request-id", "r-1")];
        h.extend_from_slice(headers);
        ambient("ACT-01", &[exchange("POST", &url, status, &h, Value::Null)]).0
    }

    /// ACT-01 (ambient on a long-running action's answer; also stated), failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing(
            "ACT-01",
            "an action answered 204 with an Azure-AsyncOperation",
            || restart(204, &[("Azure-AsyncOperation", OP_STATUS)]),
        ),
        passing("ACT-01", "an action answered 202 with a Location", || {
            restart(202, &[("Location", OP_RESULT), ("Retry-After", "10")])
        }),
    ];

    #[test]
    fn act_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn a_200_whose_location_names_what_the_action_made_is_no_operation() {
        // SQL's job start: 200 with the execution it created and Location = its address.
        let exec = WIDGET.replace("?api-version", "/executions/e1?api-version");
        assert_eq!(
            restart(200, &[("Location", exec.as_str())]),
            crate::rules::Outcome::NotJudged
        );
    }

    #[test]
    fn an_action_answered_202_without_location_fails_loc_01_alone() {
        // ACT-01 only restates LOC-01 there (the catalogue): not judged, naming it.
        let url = WIDGET.replace("?api-version", "/restart?api-version");
        let x = exchange(
            "POST",
            &url,
            202,
            &[
                ("x-ms-request-id", "r-1"),
                ("Azure-AsyncOperation", OP_STATUS),
            ],
            Value::Null,
        );
        let t = crate::rules::testing::target();
        let registry = crate::rules::Registry::default();
        let mut j = crate::rules::Judge::new(&t, &registry);
        j.exchange(&x);
        let tallies = j.ledger.tallies();
        let get = |r: &str| tallies.iter().find(|t| t.rule == r).unwrap();
        assert_eq!(get("LOC-01").outcome, crate::rules::Outcome::Failed);
        assert_eq!(get("ACT-01").outcome, crate::rules::Outcome::NotJudged);
        assert!(
            get("ACT-01")
                .not_judged
                .as_deref()
                .is_some_and(|w| w.starts_with("LOC-01 failed at exchange #1")),
            "{:?}",
            get("ACT-01")
        );
    }
}
