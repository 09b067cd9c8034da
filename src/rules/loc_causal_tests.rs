//! Tests of `loc`: a check an earlier failure made impossible is not judged, naming it.

use super::*;
use crate::lro::State;
use crate::rules::flow::End;
use crate::rules::testing::{arm_flow as a_flow, exchange, target, with_seq};
use crate::rules::{Outcome as Verdict, Registry};
use serde_json::json;

const R: &str =
    "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/a?api-version=1";

/// A PUT answered 202 with this Location and an operation resource, followed to Succeeded
/// through the operation resource, its Location never read.
fn judged(location: &str) -> Vec<crate::rules::RuleTally> {
    let t = target();
    let reg = Registry::default();
    let mut j = Judge::new(&t, &reg);
    let put = with_seq(
        exchange(
            "PUT",
            R,
            202,
            &[
                ("Location", location),
                ("Azure-AsyncOperation", "http://h/ops/1?api-version=1"),
                ("Retry-After", "10"),
            ],
            json!({}),
        ),
        7,
    );
    let poll = with_seq(
        exchange(
            "GET",
            "http://h/ops/1?api-version=1",
            200,
            &[],
            json!({"status": "Succeeded"}),
        ),
        8,
    );
    j.ledger.step = Some("put".into());
    j.exchange(&put);
    let f = a_flow(
        "PUT",
        R,
        Some(Channel::AzureAsyncOperation),
        vec![Event::Poll {
            ex: 1,
            channel: Channel::AzureAsyncOperation,
            state: State::Done(Outcome::Succeeded, "Succeeded".into()),
        }],
        End::Finished(Outcome::Succeeded),
    );
    flow(&mut j, &f, &[put, poll]);
    j.ledger.tallies()
}

#[test]
fn an_unread_relative_location_leaves_its_rules_not_judged_naming_loc_02() {
    let t = judged("/subscriptions/s/operationResults/1");
    let get = |r: &str| t.iter().find(|x| x.rule == r);
    assert_eq!(get("LOC-02").unwrap().outcome, Verdict::Failed);
    for rule in ["LOC-05", "LOC-06", "LOC-08"] {
        let x = get(rule).unwrap_or_else(|| panic!("{rule} has no tally"));
        assert_eq!(x.outcome, Verdict::NotJudged, "{rule}");
        let why = x.not_judged.as_deref().unwrap_or_default();
        assert!(
            why.starts_with("LOC-02 failed at exchange #7 (step `put`)"),
            "{rule}: {why}"
        );
    }
}

#[test]
fn an_absolute_location_left_unread_is_no_cause() {
    let t = judged("http://h/operationResults/1?api-version=1");
    let get = |r: &str| t.iter().find(|x| x.rule == r);
    assert_eq!(get("LOC-02").unwrap().outcome, Verdict::Passed);
    for rule in ["LOC-06", "LOC-08"] {
        assert!(get(rule).is_none(), "{rule}");
    }
    // Its first read said it had ended: no Location read while it ran was possible, and
    // that is said as such, never as LOC-02's doing.
    let why = get("LOC-05").and_then(|x| x.not_judged.clone()).unwrap();
    assert!(
        why.starts_with("not applicable: the PUT's operation was never seen running"),
        "{why}"
    );
}
