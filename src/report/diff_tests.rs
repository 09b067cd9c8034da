use super::*;
use crate::report::Status;
use crate::report::conformance::conformance;
use crate::report::fixtures::{faulty_run, info, pass};

fn side(label: &str, results: &[crate::report::ScenarioResult]) -> Side {
    Side {
        label: label.into(),
        run: info(),
        conformance: conformance(&info(), results),
        status: None,
        tests: results
            .iter()
            .map(|r| (r.name.clone(), (Kind::of(&r.status), render::message(r))))
            .collect(),
    }
}

fn clean() -> Vec<crate::report::ScenarioResult> {
    let mut run = faulty_run();
    for r in &mut run {
        for v in &mut r.verdicts {
            if v.outcome == "failed" {
                *v = pass(&v.rule, &v.level, 3);
            }
        }
        if r.status == Status::Failed {
            r.status = Status::Passed;
        }
    }
    run
}

#[test]
fn a_new_failure_is_worse_and_named() {
    let (old, new) = (side("old", &clean()), side("new", &faulty_run()));
    let d = diff(&old, &new);
    assert!(d.worse());
    let worse: Vec<&str> = d.rules_worse.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(worse, ["ETAG-07", "LOC-02", "HDR-02"]);
    // A test fails on every rule its exchanges broke: LOC-02 (ambient) fails async-put::create.
    let tests: Vec<&str> = d.tests_worse.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tests, ["async-put::create", "etag::if-match"]);
    let text = render(&d, &old, &new, false);
    assert!(text.starts_with("rpconform report diff: WORSE"), "{text}");
    assert!(text.contains("  LOC-02 (MUST)  passed → failed  in 2 test(s), 4 check(s); first: expected what LOC-02 wants"), "{text}");
    assert!(
        text.contains("  etag::if-match  passed → failed  ETAG-07, LOC-02, HDR-02: expected"),
        "{text}"
    );
    let md = render(&d, &old, &new, true);
    assert!(md.starts_with("# rpconform report diff: ❌ worse"), "{md}");
    assert!(
        md.contains("| **LOC-02** | MUST | passed | failed |"),
        "{md}"
    );
}

#[test]
fn the_reverse_is_better_and_not_worse() {
    let (old, new) = (side("old", &faulty_run()), side("new", &clean()));
    let d = diff(&old, &new);
    assert!(!d.worse());
    assert_eq!(d.rules_better.len(), 3);
    assert_eq!(d.tests_better.len(), 2);
    let text = render(&d, &old, &new, false);
    assert!(
        text.starts_with("rpconform report diff: not worse"),
        "{text}"
    );
}

#[test]
fn coverage_changes_are_listed_but_not_worse() {
    let mut fewer = clean();
    fewer.retain(|r| r.name != "headers::ids");
    fewer[0].verdicts.retain(|v| v.rule != "PUT-04");
    let (old, new) = (side("old", &clean()), side("new", &fewer));
    let d = diff(&old, &new);
    assert!(!d.worse());
    assert!(d.rules_coverage.iter().any(|c| c.id == "PUT-04"));
    assert!(
        d.tests_coverage
            .iter()
            .any(|c| c.name == "headers::ids" && c.new.is_none())
    );
    assert!(
        compare(None, Some(0)).is_lt(),
        "a new failing test is worse"
    );
}
