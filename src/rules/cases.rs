//! The catalogue walk: every rule of the catalogue is shown failing and shown passing by a case
//! that runs here. A case is registered by being in one of the case tables below (each
//! family's `tests::CASES`, the suites' statements in `stated`), and counts only by what it
//! does when run: a failing case must leave its rule Failed, a passing case Passed. A rule
//! that only a whole run can break is listed with the fault knob of the reference RP that
//! breaks it (`BY_KNOB`): the knob must exist and name the rule, and the fault matrix
//! (`tests/matrices.rs`) proves the knob fails it while the clean run passes it.

use std::collections::BTreeMap;

use super::testing::{Case, run_cases};
use super::{
    Outcome, aao, act, del, err, etag, hdr, loc, mon, opres, ops, patch, pstate, put, res,
};
use super::{retry, rgdel, stated, task};

/// Every registered case.
fn all_cases() -> Vec<&'static Case> {
    let tables: &[&'static [Case]] = &[
        hdr::tests::CASES,
        err::tests::CASES,
        etag::tests::CASES,
        put::tests::CASES,
        patch::tests::CASES,
        act::tests::CASES,
        del::tests::CASES,
        loc::tests::CASES,
        aao::tests::CASES,
        opres::tests::CASES,
        pstate::tests::CASES,
        rgdel::tests::CASES,
        retry::tests::CASES,
        res::tests::CASES,
        mon::tests::CASES,
        ops::tests::CASES,
        super::spec::tests::CASES,
        super::fd::tests::CASES,
        task::tests::CASES,
        stated::ETAG,
        stated::WRITES,
        stated::SHAPES,
        stated::PROPAGATION,
        stated::OPERATIONS,
        super::stated_rpc::CASES,
    ];
    tables.iter().flat_map(|t| t.iter()).collect()
}

/// Rules shown failing only by a whole run: (rule, the fault knob that breaks it). Empty while
/// every rule has a unit case; a rule belongs here only when no hand-built exchange, flow or
/// record can show it.
const BY_KNOB: &[(&str, &str)] = &[];

/// The knobs whose rules the fault matrix cannot observe on the embedded target (its
/// `SHAPE_FAULTS`): they prove nothing.
const UNOBSERVABLE_KNOBS: &[&str] = &[
    "subscription-level-wrong-id",
    "extension-wrong-type",
    "location-type-no-request-id",
    "namespace-api-version-mixup",
];

/// Does this fault knob of the reference RP exist, name the rule and show it in the fault
/// matrix?
fn knob_shows(rule: &str, knob: &str) -> Result<(), String> {
    if UNOBSERVABLE_KNOBS.contains(&knob) {
        return Err(format!(
            "{rule}: knob {knob} is not observable on the embedded target"
        ));
    }
    let f = rpconform_refrp::Fault::from_name(knob)
        .ok_or_else(|| format!("{rule}: no fault knob {knob}"))?;
    if !f.rules().contains(&rule) {
        return Err(format!(
            "{rule}: knob {knob} names {:?}, not {rule}",
            f.rules()
        ));
    }
    Ok(())
}

#[test]
fn a_knob_counts_only_when_it_exists_names_the_rule_and_is_observable() {
    assert_eq!(knob_shows("LOC-01", "delete-no-location"), Ok(()));
    assert!(knob_shows("HDR-02", "delete-no-location").is_err());
    assert!(knob_shows("HDR-02", "no-such-knob").is_err());
    assert!(knob_shows("HDR-01", "location-type-no-request-id").is_err());
}

#[test]
fn every_catalogued_rule_is_shown_failing_and_passing() {
    let cases = all_cases();
    // Every case shows what it says (run, not trusted).
    run_cases(cases.iter().copied());
    let mut shown: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for c in &cases {
        assert!(
            super::lookup(c.rule).is_some(),
            "a case of {} ({}), which is not catalogued",
            c.rule,
            c.what
        );
        let e = shown.entry(c.rule).or_default();
        match c.shows {
            Outcome::Failed => e.0 += 1,
            Outcome::Passed => e.1 += 1,
            other => panic!(
                "{} ({}): a case shows Failed or Passed, not {other:?}",
                c.rule, c.what
            ),
        }
    }
    for (rule, knob) in BY_KNOB {
        if let Err(why) = knob_shows(rule, knob) {
            panic!("{why}");
        }
        let e = shown.entry(rule).or_default();
        e.0 += 1;
        e.1 += 1;
    }
    let missing: Vec<String> = super::all()
        .iter()
        .filter_map(|r| {
            let (f, p) = shown.get(r.id).copied().unwrap_or_default();
            let mut why = Vec::new();
            if f == 0 {
                why.push("no failing case");
            }
            if p == 0 {
                why.push("no passing case");
            }
            (!why.is_empty()).then(|| format!("{} ({:?}): {}", r.id, r.level, why.join(", ")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} rules are not shown both ways:\n{}",
        missing.len(),
        super::all().len(),
        missing.join("\n")
    );
}
