//! ARM's part, played in front of an RP's own endpoint (issue 40), against an RP written apart
//! from the reference RP (tests/frontdoor_rp): with the front door, an RP that builds its links
//! from the Referer passes the front-door rules, and one that builds them from its own Host, one
//! that ignores ARM's system data and one that answers an operation to another tenant each fail
//! the rule that judges it — rules that, without the front door (`front_door: none`, the run as
//! it was), never fail them. Everything listens on 127.0.0.1.

use crate::common;
mod frontdoor_rp;

use std::collections::BTreeSet;
use std::path::Path;

use common::{RUN_TIMEOUT, Scratch, rpconform};
use frontdoor_rp::Mode;
use serde_json::Value;

/// The suites that show what an RP offers ARM: its async create and replace, a paged list,
/// its operation read by others.
const FILTERS: &[&str] = &[
    "async-put::create-then-replace::",
    "front-door::",
    "headers-and-errors::list-paging::",
    "location-202::delete-flow::",
];

/// Run those suites against an independent RP in `mode` (its target with `extra` lines).
fn run(mode: Mode, extra: &str, label: &str) -> Value {
    let rp = frontdoor_rp::start(mode);
    let dir = Scratch::new(&format!("frontdoor-{label}"));
    let target = dir.write(
        "t.yaml",
        &frontdoor_rp::target(&format!("http://127.0.0.1:{}", rp.port), extra),
    );
    let reports = dir.str("reports");
    let mut args = vec![
        "run".to_string(),
        "suites".into(),
        "--target".into(),
        target.display().to_string(),
        "--time-scale".into(),
        "0.01".into(),
        "--report-dir".into(),
        reports.clone(),
    ];
    args.extend(FILTERS.iter().map(|f| f.to_string()));
    let out = rpconform(&args, RUN_TIMEOUT);
    assert!(matches!(out.code(), 0 | 1), "{label}: {}", out.tail(3000));
    common::read_report(Path::new(&reports))
}

fn failed(r: &Value) -> BTreeSet<String> {
    common::failed_rules(r)
}

fn fd_passed(r: &Value) -> BTreeSet<String> {
    common::passed_rules(r)
        .into_iter()
        .filter(|x| x.starts_with("FD-"))
        .collect()
}

#[test]
fn an_rp_judged_as_arm_calls_it_fails_only_where_it_builds_on_its_own_endpoint() {
    let good = run(Mode::Conforming, "", "conforming");
    let base = failed(&good);
    assert!(
        !base.iter().any(|r| r.starts_with("FD-")),
        "a conforming RP failed {base:?}\n{}",
        common::excerpt(&good)
    );
    // The front door judged what it passed: links, the deadline, system data, scoping.
    for rule in ["FD-01", "FD-04", "FD-06", "FD-08"] {
        assert!(
            fd_passed(&good).contains(rule),
            "{rule} not judged: {:?}",
            fd_passed(&good)
        );
    }
    for (mode, label, rules) in [
        (
            Mode::LinksFromHost,
            "links-from-host",
            &["FD-01", "FD-02"][..],
        ),
        (Mode::IgnoresSystemData, "system-data", &["FD-04"][..]),
        (
            Mode::AnswersAnyTenant,
            "any-tenant",
            &["FD-06", "FD-07"][..],
        ),
    ] {
        let r = run(mode, "", label);
        let more: BTreeSet<String> = failed(&r).difference(&base).cloned().collect();
        let want: BTreeSet<String> = rules.iter().map(|s| s.to_string()).collect();
        assert_eq!(more, want, "{label}\n{}", common::excerpt(&r));
        // Without the front door the same defect goes unseen: what the run did before.
        let blind = run(mode, "front_door: none\n", &format!("{label}-blind"));
        let seen: BTreeSet<String> = failed(&blind)
            .into_iter()
            .filter(|x| x.starts_with("FD-") || x.starts_with("LOC-09") || x.starts_with("AAO-03"))
            .collect();
        assert!(seen.is_empty(), "{label} without the front door: {seen:?}");
    }
}
