use super::*;
use crate::report::conformance::conformance;
use crate::report::fixtures::{faulty_run, info};

fn document() -> (String, quick_junit::Report) {
    let run = faulty_run();
    let conf = conformance(&info(), &run);
    let mut counts = Counts::default();
    for r in &run {
        counts.add(r);
    }
    counts.set_rules(&conf);
    let status = RunStatus::compute(&info(), &counts, &conf);
    let mut w = JunitWriter::begin(Vec::new(), &info(), &counts, &conf, &status).unwrap();
    for r in &run {
        w.add(r).unwrap();
    }
    let text = String::from_utf8(w.end().unwrap()).unwrap();
    let report =
        quick_junit::Report::deserialize_from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (text, report)
}

#[test]
fn the_conformance_testsuite_comes_first_with_one_case_per_rule_and_run_properties_once() {
    let (text, report) = document();
    // The run's own testcases first (the headline), then the conformance testsuite.
    let run = &report.test_suites[0];
    assert_eq!(run.name.as_str(), "run");
    let names: Vec<&str> = run.test_cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["run status", "cleanup"]);
    assert!(matches!(
        &run.test_cases[0].status,
        TestCaseStatus::NonSuccess { kind: NonSuccessKind::Failure, message: Some(m), .. }
            if m.as_str().starts_with("FAILED — 2 rules broken (ETAG-07, LOC-02)")
    ));
    assert!(matches!(
        run.test_cases[1].status,
        TestCaseStatus::Success { .. }
    ));
    let conf = &report.test_suites[1];
    assert_eq!(conf.name.as_str(), "conformance");
    assert!(conf.properties.iter().any(|p| p.name.as_str() == "target"));
    assert_eq!(
        text.matches("name=\"rpconform_version\"").count(),
        1,
        "run properties once"
    );
    assert_eq!(conf.test_cases[0].name.as_str(), "ETAG-07");
    let loc = &conf.test_cases[1];
    assert_eq!(loc.name.as_str(), "LOC-02");
    assert!(matches!(
        &loc.status,
        TestCaseStatus::NonSuccess { kind: NonSuccessKind::Failure, message: Some(m), .. }
            if m.as_str().starts_with("LOC-02 (MUST) failed in 2 test(s), 4 check(s): expected")
    ));
    assert_eq!(
        loc.extra.get("file").map(|s| s.as_str()),
        Some("suites/async-put.yaml")
    );
    assert_eq!(loc.extra.get("line").map(|s| s.as_str()), Some("3"));
    assert!(
        matches!(&loc.status, TestCaseStatus::NonSuccess { description: Some(d), .. }
        if d.as_str().contains("--- exchange (redacted) ---\n=== #1 202 PUT http"))
    );
    let put03 = conf
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == "PUT-03")
        .unwrap();
    assert!(
        matches!(&put03.status, TestCaseStatus::Skipped { message: Some(m), .. }
        if m.as_str().contains("not judged (timing)"))
    );
    assert!(
        !conf
            .test_cases
            .iter()
            .any(|c| c.name.as_str().starts_with("OPS-01"))
    );
}

#[test]
fn scenario_testcases_fail_on_every_rule_their_exchanges_broke_and_carry_file_and_line() {
    let (text, report) = document();
    let put = report
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "async-put")
        .unwrap();
    let create = &put.test_cases[0];
    assert!(matches!(
        &create.status,
        TestCaseStatus::NonSuccess { kind: NonSuccessKind::Failure, message: Some(m), .. }
            if m.as_str().starts_with("LOC-02")
    ));
    assert!(
        create
            .properties
            .iter()
            .any(|p| p.name.as_str() == "conformance_failures" && p.value.as_str() == "LOC-02")
    );
    let etag = report
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "etag")
        .unwrap();
    let ifm = &etag.test_cases[0];
    assert_eq!(
        ifm.extra.get("file").map(|s| s.as_str()),
        Some("suites/etag.yaml")
    );
    assert_eq!(ifm.extra.get("line").map(|s| s.as_str()), Some("10"));
    assert!(
        ifm.properties
            .iter()
            .any(|p| p.name.as_str() == "failed_rules"
                && p.value.as_str() == "ETAG-07,LOC-02,HDR-02")
    );
    assert!(
        matches!(&ifm.status, TestCaseStatus::NonSuccess { description: Some(d), .. }
        if d.as_str().contains("exchange: #12 200 PUT http"))
    );
    let skus = &etag.test_cases[1];
    assert!(matches!(skus.status, TestCaseStatus::Skipped { .. }));
    assert!(
        text.contains("failures=\"5\""),
        "2 tests + 2 rules + the run status: {}",
        &text[..300]
    );
}

#[test]
fn a_flaky_test_has_a_flaky_property() {
    let mut run = faulty_run();
    let i = run
        .iter()
        .position(|r| r.status == crate::report::Status::Passed)
        .unwrap();
    run[i].notes.push(format!(
        "{}1 request(s) got no answer of the RP's and were sent again (--retries)",
        crate::report::FLAKY_NOTE
    ));
    assert!(run[i].flaky());
    let conf = conformance(&info(), &run);
    let mut counts = Counts::default();
    for r in &run {
        counts.add(r);
    }
    counts.set_rules(&conf);
    let status = RunStatus::compute(&info(), &counts, &conf);
    let mut w = JunitWriter::begin(Vec::new(), &info(), &counts, &conf, &status).unwrap();
    for r in &run {
        w.add(r).unwrap();
    }
    let text = String::from_utf8(w.end().unwrap()).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&text).unwrap();
    let flaky: Vec<&str> = report
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .filter(|c| {
            c.properties
                .iter()
                .any(|p| p.name.as_str() == "flaky" && p.value.as_str() == "true")
        })
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(flaky, [run[i].name.as_str()], "{text}");
    // A flaky pass stays a pass.
    let case = report
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .find(|c| c.name.as_str() == run[i].name)
        .unwrap();
    assert!(matches!(case.status, TestCaseStatus::Success { .. }));
}

#[test]
fn failure_messages_are_stable_and_a_spec_failure_points_at_the_spec() {
    let mut r = faulty_run().remove(0);
    r.verdicts[0] = crate::report::fixtures::fail("SPEC-01", "MUST", 1, Some("specs/w.json:40:7"));
    r.verdicts[0].failures[0].seen =
        "202 on /subscriptions/s/resourceGroups/g-r1x/providers/Microsoft.Contoso/widgets/rpcr1x7 at #31"
            .into();
    let tc = test_case(&r, &["r1x".to_string()]);
    assert_eq!(
        tc.extra.get("file").map(|s| s.as_str()),
        Some("specs/w.json")
    );
    assert_eq!(tc.extra.get("line").map(|s| s.as_str()), Some("40"));
    let TestCaseStatus::NonSuccess {
        message: Some(m), ..
    } = &tc.status
    else {
        panic!("{:?}", tc.status)
    };
    let m = m.as_str();
    assert!(m.starts_with("SPEC-01"), "{m}");
    assert!(
        m.contains(
            "/resourceGroups/{resourceGroup}/providers/Microsoft.Contoso/widgets/{name} at #…"
        ),
        "{m}"
    );
    assert!(!m.contains("r1x"), "{m}");
}
