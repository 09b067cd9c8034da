//! Tests of `mon`: a check an earlier failure made impossible is not judged, naming it.

use crate::rules::flow::End;
use crate::rules::testing::{arm_flow as flow, exchange, target, with_seq};
use crate::rules::{Judge, MonitorRecord, Outcome, Registry, RuleTally};
use serde_json::json;

fn get<'a>(t: &'a [RuleTally], rule: &str) -> &'a RuleTally {
    t.iter()
        .find(|x| x.rule == rule)
        .unwrap_or_else(|| panic!("{rule}"))
}

#[test]
fn a_default_terminal_name_on_a_custom_monitor_is_not_judged_for_its_result() {
    let t = target();
    let reg = Registry::default();
    let mon = t.monitor_named("widget-export").unwrap();
    assert!(mon.result_field.is_some());
    let mut j = Judge::new(&t, &reg);
    let read = |status: &str, seq| {
        with_seq(
            exchange(
                "GET",
                "http://h/dataplane/ops/1",
                200,
                &[],
                json!({"status": status, "result": {"x": 1}}),
            ),
            seq,
        )
    };
    j.monitor_read(mon, &read("Succeeded", 4));
    let tl = j.ledger.tallies();
    let m4 = get(&tl, "MON-04");
    assert_eq!(m4.outcome, Outcome::NotJudged);
    assert!(
        m4.not_judged.as_deref().unwrap().contains("MON-03"),
        "{m4:?}"
    );
    // A running status with the result field still fails MON-04.
    j.monitor_read(mon, &read("Running", 5));
    assert_eq!(get(&j.ledger.tallies(), "MON-04").outcome, Outcome::Failed);
}

#[test]
fn a_monitor_never_read_for_want_of_operation_location_is_mon_01s_failure() {
    let t = target();
    let reg = Registry::default();
    let mon = t.monitor_named("widget-put").unwrap();
    let init = with_seq(
        exchange("PUT", "http://h/dataplane/widgets/a", 201, &[], json!({})),
        3,
    );
    let rec = MonitorRecord {
        flow: flow(
            "PUT",
            "http://h/dataplane/widgets/a",
            None,
            Vec::new(),
            End::Unfollowable("no operation-location link in the initial answer".into()),
        ),
    };
    let mut j = Judge::new(&t, &reg);
    j.monitor_flow(mon, &rec, std::slice::from_ref(&init));
    assert_eq!(get(&j.ledger.tallies(), "MON-02").outcome, Outcome::Failed);
    let mut j = Judge::new(&t, &reg);
    j.monitor_started(mon, &init, None);
    j.monitor_flow(mon, &rec, &[init]);
    let tl = j.ledger.tallies();
    assert_eq!(get(&tl, "MON-01").outcome, Outcome::Failed);
    let m2 = get(&tl, "MON-02");
    assert_eq!(m2.outcome, Outcome::NotJudged);
    assert!(
        m2.not_judged
            .as_deref()
            .unwrap()
            .starts_with("MON-01 failed at exchange #3")
    );
}
