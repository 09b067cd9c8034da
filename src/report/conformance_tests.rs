use super::*;
use crate::report::fixtures::{faulty_run, info, not_judged};

#[test]
fn an_ambient_failure_is_one_failed_rule_with_counts_and_first_evidence() {
    let c = conformance(&info(), &faulty_run());
    assert_eq!(c.verdict, RuleVerdict::Failed);
    // Failures first: MUST ones, in catalogue order when none left another unjudged (never
    // by volume: LOC-02 fails in more tests than ETAG-07).
    assert_eq!(
        c.rules[0].id, "ETAG-07",
        "failures come first, by root cause"
    );
    let first = c.rule("LOC-02").unwrap();
    assert_eq!(c.rules[1].id, "LOC-02");
    assert_eq!(first.verdict, RuleVerdict::Failed);
    assert_eq!((first.tests, first.tests_failed), (2, 2));
    assert_eq!((first.checks_passed, first.checks_failed), (2, 4));
    assert!(first.engine);
    let ev = first.evidence.as_ref().unwrap();
    assert_eq!(
        ev.test, "async-put::create",
        "evidence of the first test in report order"
    );
    assert!(!ev.stated);
    assert_eq!(ev.at, "suites/async-put.yaml:3:5");
    assert!(
        ev.request
            .as_deref()
            .unwrap()
            .starts_with("#1 202 PUT http")
    );
    let etag = c.rule("ETAG-07").unwrap();
    assert_eq!(etag.verdict, RuleVerdict::Failed);
    assert_eq!(etag.evidence.as_ref().unwrap().at, "suites/etag.yaml:14:11");
    assert!(etag.evidence.as_ref().unwrap().stated);
    assert_eq!(c.rule("HDR-02").unwrap().verdict, RuleVerdict::Warned);
    assert_eq!(c.rule("HDR-01").unwrap().verdict, RuleVerdict::Passed);
    assert_eq!(c.rule("HDR-01").unwrap().tests, 2);
    let order: Vec<RuleVerdict> = c.rules.iter().map(|r| r.verdict).take(4).collect();
    assert_eq!(
        order,
        [
            RuleVerdict::Failed,
            RuleVerdict::Failed,
            RuleVerdict::Warned,
            RuleVerdict::Passed
        ]
    );
}

#[test]
fn not_judged_says_why() {
    let c = conformance(&info(), &faulty_run());
    let put03 = c.rule("PUT-03").unwrap();
    assert_eq!(put03.verdict, RuleVerdict::NotJudged);
    let why = put03.why.as_deref().unwrap();
    assert!(why.starts_with("not judged (timing) in 2 test(s)"), "{why}");
    assert!(why.contains("812–1327 ms"), "{why}");
    let sku = c.rule("SKU-01").unwrap();
    assert_eq!(sku.verdict, RuleVerdict::NotApplicable);
    assert_eq!(sku.why.as_deref(), Some("no type in the target has: skus"));
    let loc05 = c.rule("LOC-05").unwrap();
    assert!(
        loc05
            .why
            .as_deref()
            .unwrap()
            .starts_with("no exchange showed it")
    );
    let mut filtered = info();
    filtered.select = vec!["--rule LOC-02".into()];
    let c = conformance(&filtered, &faulty_run());
    assert!(
        c.rule("LOC-05")
            .unwrap()
            .why
            .as_deref()
            .unwrap()
            .starts_with("skipped by filter")
    );
}

#[test]
fn only_declared_profiles_are_in_the_view_and_families_roll_up() {
    let c = conformance(&info(), &faulty_run());
    assert!(!c.rules.is_empty());
    assert!(c.rules.iter().all(|r| r.profile == "arm"));
    assert!(c.rule("OPS-01").is_none(), "aro-hcp is not declared");
    assert!(
        c.undeclared
            .iter()
            .any(|u| u.profile == "aro-hcp" && u.rules > 0)
    );
    let loc = c.families.iter().find(|f| f.family == "LOC").unwrap();
    assert_eq!(loc.verdict, RuleVerdict::Failed);
    assert_eq!(loc.failed, 1);
    let hdr = c.families.iter().find(|f| f.family == "HDR").unwrap();
    assert_eq!(hdr.verdict, RuleVerdict::Warned);
    let mut strict = info();
    strict.strict = true;
    let c = conformance(&strict, &faulty_run());
    assert_eq!(c.rule("HDR-02").unwrap().verdict, RuleVerdict::Failed);
}

#[test]
fn positions_and_durations_parse() {
    assert_eq!(line_of("suites/etag.yaml:14:11"), 14);
    assert_eq!(line_of("C:/x/etag.yaml:7:1"), 7);
    assert_eq!(line_of("nothing"), 0);
    assert_eq!(millis("timing: ended within 941 ms, before"), Some(941));
    assert_eq!(millis("no number"), None);
}

#[test]
fn a_failure_that_left_others_unjudged_ranks_first() {
    let mut run = faulty_run();
    // A rule left unjudged because LOC-02 failed: LOC-02 is the root cause.
    run[0].verdicts.push(not_judged(
        "LOC-06",
        "not judged: LOC-02 failed at step `create`",
    ));
    let c = conformance(&info(), &run);
    assert_eq!(c.rules[0].id, "LOC-02", "the root cause first");
    assert_eq!(c.rules[1].id, "ETAG-07");
    let loc06 = c.rule("LOC-06").unwrap();
    assert_eq!(loc06.verdict, RuleVerdict::NotJudged);
    assert!(loc06.why.as_deref().unwrap().contains("LOC-02 failed"));
}

#[test]
fn a_rule_every_test_found_inapplicable_is_not_applicable_not_unjudged() {
    let mut run = faulty_run();
    let na = |why: &str| not_judged("MON-07", why);
    run[0].verdicts.push(na(
        "not applicable: monitor `m` declares no operation-id header",
    ));
    let mut i = info();
    i.profiles = vec!["arm".into(), "azure-core-lro".into()];
    let c = conformance(&i, &run);
    let r = c.rule("MON-07").unwrap();
    assert_eq!(r.verdict, RuleVerdict::NotApplicable);
    assert!(
        r.why
            .as_deref()
            .unwrap()
            .starts_with("monitor `m` declares")
    );
    // One test that could not decide for another reason: not judged, and that reason shown
    // (whichever test came first).
    run[1].verdicts.push(na("timing: ended before a read"));
    let c = conformance(&i, &run);
    let r = c.rule("MON-07").unwrap();
    assert_eq!(r.verdict, RuleVerdict::NotJudged);
    assert!(
        r.why
            .as_deref()
            .unwrap()
            .contains("timing: ended before a read"),
        "{:?}",
        r.why
    );
}

#[test]
fn a_rule_whose_subject_the_target_never_declares_is_not_applicable_unless_judged() {
    let run = faulty_run();
    let mut i = info();
    i.not_applicable.insert(
        "RES-04".into(),
        "no type in the target has: kind proxy".into(),
    );
    // LOC-02 is judged in the run: a verdict outweighs what the target declares.
    i.not_applicable
        .insert("LOC-02".into(), "said of a rule the run judged".into());
    let c = conformance(&i, &run);
    let r = c.rule("RES-04").unwrap();
    assert_eq!(r.verdict, RuleVerdict::NotApplicable);
    assert_eq!(
        r.why.as_deref(),
        Some("no type in the target has: kind proxy")
    );
    assert_eq!(c.rule("LOC-02").unwrap().verdict, RuleVerdict::Failed);
    // Without it, the same rule is not judged: no exchange showed it.
    let c = conformance(&info(), &run);
    assert_eq!(c.rule("RES-04").unwrap().verdict, RuleVerdict::NotJudged);
}
