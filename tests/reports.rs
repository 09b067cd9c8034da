//! End to end: the reports of real runs against the embedded reference RP — a clean run, a
//! run with the `relative-location` fault (LOC-02 broken on every 202), and a run selecting
//! `--rule LOC-02` — read as a certification board and a CI system would: the conformance view
//! names the broken rule first, JUnit shows it once, `report diff` exits 1 naming it, rule
//! selection runs only (and every) test that can judge the rule, report.json stays small, and
//! report.html renders in headless Chromium (see `tests/html_report.rs`).

use crate::common;

use std::path::PathBuf;
use std::sync::OnceLock;

use common::shared::shared_run;
use common::{FAST, QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, read_junit, read_report, rpconform};
use serde_json::Value;

/// A run's report directory.
struct Run {
    dir: PathBuf,
    code: i32,
    stdout: String,
}

impl Run {
    fn reports(&self) -> PathBuf {
        self.dir.join("reports")
    }
}

/// `rpconform run suites` (fast, gated) with `extra`, in a scratch directory of its own.
fn run(label: &str, extra: &[&str]) -> (Scratch, Run) {
    let dir = Scratch::new(label);
    let report_dir = dir.str("reports");
    let mut args = vec!["run", "suites", "--report-dir", &report_dir];
    args.extend(run_args(extra));
    let out = rpconform(&args, RUN_TIMEOUT);
    assert!(
        dir.join("reports/report.json").exists(),
        "no report.json\n{}",
        out.tail(3000)
    );
    let run = Run {
        code: out.code(),
        stdout: out.stdout,
        dir: dir.path.clone(),
    };
    (dir, run)
}

/// The flags of every run here, then `extra`.
fn run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["-q"];
    args.extend_from_slice(FAST);
    // Operations end only once seen running: every rule judged while one runs gets its
    // verdict whatever the machine's load, so the clean run is complete.
    args.extend(["--hold-reads", "3"]);
    args.extend_from_slice(extra);
    args
}

/// The clean and the faulty run are read by several tests, each a process of its own: run
/// once for all of them ([`shared_run`]).
fn shared(extra: &[&str]) -> Run {
    let mut args = vec!["run", "suites"];
    args.extend(run_args(extra));
    let r = shared_run(&args, RUN_TIMEOUT);
    Run {
        dir: r.dir,
        code: r.code,
        stdout: r.stdout,
    }
}

fn clean() -> &'static Run {
    static R: OnceLock<Run> = OnceLock::new();
    R.get_or_init(|| shared(&[]))
}

fn faulty() -> &'static Run {
    static R: OnceLock<Run> = OnceLock::new();
    R.get_or_init(|| shared(&["--fault", "relative-location"]))
}

fn text(run: &Run, file: &str) -> String {
    std::fs::read_to_string(run.reports().join(file))
        .unwrap_or_else(|e| panic!("cannot read {file}: {e}"))
}

/// The first rule ID a text names, and on which line.
fn first_rule(md: &str) -> (usize, String) {
    let re = regex::Regex::new(r"\b[A-Z]{2,6}-\d\d\b").unwrap();
    md.lines()
        .enumerate()
        .find_map(|(i, l)| re.find(l).map(|m| (i + 1, m.as_str().to_string())))
        .unwrap_or_else(|| panic!("no rule named in\n{md}"))
}

#[test]
fn one_ambient_fault_is_one_failed_rule_named_first() {
    let f = faulty();
    assert_eq!(f.code, 1, "a broken MUST rule fails the run\n{}", f.stdout);
    for file in ["conformance.md", "summary.md"] {
        let md = text(f, file);
        let (line, id) = first_rule(&md);
        assert_eq!(id, "LOC-02", "{file} must name LOC-02 first:\n{md}");
        assert!(line < 10, "{file} names LOC-02 on line {line}:\n{md}");
    }
    let report = read_report(&f.reports());
    let loc = report["conformance"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "LOC-02")
        .unwrap();
    assert_eq!(loc["verdict"], "failed");
    assert!(loc["tests_failed"].as_u64().unwrap() > 10, "{loc}");
    // The evidence names the write whose answer carried the bare path.
    let req = loc["evidence"]["request"].as_str().unwrap();
    assert!([" 201 ", " 202 "].iter().any(|s| req.contains(s)), "{loc}");
    // The tests meeting the ambient defect fail for it (the libtest line and the rule
    // verdicts agree), and LOC-02 is the one rule failed.
    assert!(
        report["counts"]["failed"].as_u64().unwrap() > 10,
        "{}",
        report["counts"]
    );
    assert_eq!(
        report["counts"]["rules"]["failing"],
        serde_json::json!(["LOC-02"])
    );
    assert_eq!(report["status"]["state"], "failed");
    assert!(f.stdout.contains("1 failed (LOC-02)"), "{}", f.stdout);
    let result = f
        .stdout
        .lines()
        .find(|l| l.starts_with("test result:"))
        .unwrap();
    assert!(result.starts_with("test result: FAILED."), "{result}");
}

#[test]
fn junit_shows_the_rule_once_with_file_and_line_and_run_properties_once() {
    let f = faulty();
    let junit = read_junit(&f.reports());
    let run = &junit.test_suites[0];
    assert_eq!(run.name.as_str(), "run");
    let conf = &junit.test_suites[1];
    assert_eq!(conf.name.as_str(), "conformance");
    let loc = conf
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == "LOC-02")
        .unwrap();
    assert!(matches!(
        loc.status,
        quick_junit::TestCaseStatus::NonSuccess { .. }
    ));
    assert!(loc.extra.get("file").is_some() && loc.extra.get("line").is_some());
    let xml = text(f, "junit.xml");
    assert_eq!(xml.matches("name=\"rpconform_version\"").count(), 1);
    for suite in &junit.test_suites[2..] {
        for case in &suite.test_cases {
            assert!(
                case.extra.get("file").is_some() && case.extra.get("line").is_some(),
                "{} has no file/line",
                case.name.as_str()
            );
        }
    }
    // Every failing scenario testcase names LOC-02 first: the rule its exchanges broke.
    let failing: Vec<&quick_junit::TestCase> = junit.test_suites[2..]
        .iter()
        .flat_map(|s| &s.test_cases)
        .filter(|c| matches!(c.status, quick_junit::TestCaseStatus::NonSuccess { .. }))
        .collect();
    assert!(
        failing.len() > 10,
        "{} scenario testcases fail",
        failing.len()
    );
    for c in failing {
        assert!(
            matches!(&c.status, quick_junit::TestCaseStatus::NonSuccess { message: Some(m), .. }
                if m.as_str().starts_with("LOC-02")),
            "{}: {:?}",
            c.name.as_str(),
            c.status
        );
    }
}

#[test]
fn a_clean_run_passes_and_its_report_json_is_small() {
    let c = clean();
    let size = std::fs::metadata(c.reports().join("report.json"))
        .unwrap()
        .len();
    let report = read_report(&c.reports());
    // Passing tests keep a sample of their exchanges, not their transcripts.
    let tests = report["results"].as_array().map_or(1, |r| r.len().max(1)) as u64;
    assert!(
        size / tests < 8_000,
        "report.json is {size} bytes for {tests} tests"
    );
    assert_eq!(report["run"]["transcripts"], "failures");
    let counts = &report["counts"];
    // Exit status and counts agree (a loaded machine can make a timing-bound stated check of
    // the suites fail: that is the suites' business, not the reports').
    let failed = counts["failed"].as_u64().unwrap()
        + counts["errors"].as_u64().unwrap()
        + counts["rules"]["failed"].as_u64().unwrap();
    assert_eq!(failed, 0, "a clean run fails nothing\n{}", c.stdout);
    assert_eq!(c.code, 0, "{}", c.stdout);
    assert_eq!(report["status"]["state"], "passed", "{}", report["status"]);
    assert!(
        c.stdout
            .lines()
            .any(|l| l.starts_with("rpconform: passed.")),
        "{}",
        c.stdout
    );
    let total: u64 = ["passed", "warned", "failed", "errors", "skipped"]
        .iter()
        .map(|k| counts[*k].as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, report["results"].as_array().unwrap().len());
    // The same counts in summary.md and on the console.
    let md = text(c, "summary.md");
    let passed = counts["passed"].as_u64().unwrap();
    assert!(md.contains(&format!("**Tests: {passed} passed")), "{md}");
    assert!(
        c.stdout.contains(&format!("{passed} passed")),
        "{}",
        c.stdout
    );
    let na = counts["not_applicable"].as_u64().unwrap();
    assert!(
        c.stdout.contains(&format!("{na} not applicable")),
        "{}",
        c.stdout
    );
    for r in report["results"].as_array().unwrap() {
        let kept = r["transcript"]["kept"].as_str().unwrap();
        assert!(kept == "sample" || kept == "full", "{}", r["name"]);
        assert!(r["exchanges"].as_array().unwrap().len() <= 2 || kept == "full");
    }
}

#[test]
fn report_diff_names_what_got_worse() {
    let (c, f) = (clean(), faulty());
    let (old, new) = (
        c.reports().display().to_string(),
        f.reports().display().to_string(),
    );
    let out = rpconform(&["report", "diff", &old, &new], QUICK_TIMEOUT);
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    assert!(
        out.stdout.starts_with("rpconform report diff: WORSE"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("  LOC-02 (MUST)  passed → failed"),
        "{}",
        out.stdout
    );
    let md = rpconform(
        &[
            "report",
            "diff",
            &old,
            &format!("{new}/report.json"),
            "--format",
            "markdown",
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(md.code(), 1);
    assert!(
        md.stdout
            .contains("| **LOC-02** | MUST | passed | failed |"),
        "{}",
        md.stdout
    );
    let back = rpconform(&["report", "diff", &new, &old], QUICK_TIMEOUT);
    let better = back
        .stdout
        .split("Rules that got better")
        .nth(1)
        .unwrap_or("");
    assert!(
        better.contains("  LOC-02 (MUST)  failed → passed"),
        "{}",
        back.stdout
    );
    if !back.stdout.contains("Rules that got worse")
        && !back.stdout.contains("Tests that got worse")
    {
        assert_eq!(back.code(), 0, "{}", back.tail(2000));
    }
    let same = rpconform(&["report", "diff", &old, &old], QUICK_TIMEOUT);
    assert_eq!(same.code(), 0);
    let dir = Scratch::new("diff-bad");
    let bad = dir.write("report.json", "{\"run\": 3}");
    let out = rpconform(
        &["report", "diff", &old, &bad.display().to_string()],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(out.stderr.contains("report.json:1:"), "{}", out.stderr);
    let out = rpconform(&["report", "diff", &old, &dir.str("nope")], QUICK_TIMEOUT);
    assert_eq!(out.code(), 2);
}

/// `--list --format json` of the whole suites, by test name.
fn listing(extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["run", "suites", "--list", "--format", "json"];
    args.extend_from_slice(extra);
    let out = rpconform(&args, QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    serde_json::from_str::<Vec<Value>>(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}\n{}", out.stdout))
}

fn judged(r: &Value) -> Vec<String> {
    r["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["passed"].as_u64().unwrap() + v["failed"].as_u64().unwrap() > 0)
        .map(|v| v["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_listing_marks_not_applicable_tests_and_judges_what_runs_judge() {
    // A target that declares only the ARM profile: scenarios of other profiles are listed as
    // not applicable, with the reason (no request is sent by --list).
    let dir = Scratch::new("list-arm");
    let fabrikam = std::fs::read_to_string(common::root().join("tests/other_rp/fabrikam.yaml"))
        .unwrap()
        .replace("{BASE_URL}", "http://127.0.0.1:9");
    let arm_only: String = fabrikam
        .lines()
        .map(|l| {
            if l.starts_with("profiles:") {
                "profiles: [arm]"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let target = dir.write("arm-only.yaml", &arm_only).display().to_string();
    let arm = listing(&["--target", &target]);
    assert!(arm.iter().any(|t| {
        t["status"] == "not-applicable"
            && t["reason"]
                .as_str()
                .is_some_and(|r| r.contains("tests the azure-core-lro profile"))
    }));
    assert!(arm.iter().all(|t| t["line"].as_u64().unwrap() > 0));
    let out = rpconform(
        &["run", "suites", "--list", "--target", &target],
        QUICK_TIMEOUT,
    );
    assert!(
        out.stdout.contains(": test (not applicable: "),
        "{}",
        out.stdout
    );
    let out = rpconform(
        &[
            "run", "suites", "--list", "--target", &target, "--rule", "OPS-01",
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2);
    assert!(
        out.stderr.contains("aro-hcp") && out.stderr.contains("not declared"),
        "{}",
        out.stderr
    );
    let list = listing(&[]);
    // Soundness of the selection: every rule a test judged in the clean run is one the
    // listing says it can judge.
    let report = read_report(&clean().reports());
    for r in report["results"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        let t = list.iter().find(|t| t["name"] == name).unwrap();
        let can: Vec<&str> = t["judges"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for rule in judged(r) {
            assert!(
                can.contains(&rule.as_str()),
                "{name} judged {rule}, the listing says it cannot: {can:?}"
            );
        }
    }
}

#[test]
fn rule_selection_runs_only_and_every_test_that_judges_the_rule() {
    let (_scratch, sel) = run(
        "rule-loc02",
        &["--fault", "relative-location", "--rule", "LOC-02"],
    );
    let report = read_report(&sel.reports());
    let listed = listing(&["--rule", "LOC-02"]);
    let names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
    let ran: Vec<&Value> = report["results"].as_array().unwrap().iter().collect();
    assert_eq!(ran.len(), names.len());
    let all = listing(&[]);
    assert!(
        names.len() < all.len(),
        "the selection keeps {} of {}",
        names.len(),
        all.len()
    );
    for t in &listed {
        assert!(
            t["judges"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == "LOC-02"),
            "{} cannot judge LOC-02",
            t["name"]
        );
    }
    // Every test that judged LOC-02 in the full faulty run is selected.
    let full = read_report(&faulty().reports());
    for r in full["results"].as_array().unwrap() {
        if judged(r).iter().any(|x| x == "LOC-02") {
            assert!(
                names.contains(&r["name"].as_str().unwrap()),
                "{} judged LOC-02 but was not selected",
                r["name"]
            );
        }
    }
    assert_eq!(report["run"]["select"][0], "--rule LOC-02");
    let loc = report["conformance"]["rules"][0].clone();
    assert_eq!(loc["id"], "LOC-02", "{loc}");
    assert_eq!(loc["verdict"], "failed");
    // Rules the selection left out say so.
    let skipped = report["conformance"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["why"]
                .as_str()
                .is_some_and(|w| w.starts_with("skipped by filter"))
        })
        .count();
    assert!(skipped > 0 || ran.len() == all.len());
}

#[test]
fn selection_errors_are_usage_errors() {
    for (args, needle) in [
        (vec!["--rule", "LOC-99"], "unknown rule"),
        (vec!["--family", "NOPE"], "unknown family"),
        (vec!["--profile", "aro"], "unknown profile"),
        (vec!["-f", "no-such-test-name"], "no test name matches"),
        (vec!["--transcripts", "some"], "--transcripts"),
    ] {
        let mut a = vec!["run", "suites", "--list"];
        a.extend_from_slice(&args);
        let out = rpconform(&a, QUICK_TIMEOUT);
        assert_eq!(out.code(), 2, "{args:?}\n{}", out.tail(2000));
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
    }
    // Several -f filters: any matches.
    let two = listing(&["-f", "etag::", "-f", "location-202::"]);
    assert!(!two.is_empty());
    assert!(two.iter().all(|t| {
        let n = t["name"].as_str().unwrap();
        n.starts_with("etag::") || n.starts_with("location-202::")
    }));
    assert!(
        two.iter()
            .any(|t| t["name"].as_str().unwrap().starts_with("location-202::"))
    );
}

/// The SARIF 2.1.0 schema, as the npm package `@microsoft/jest-sarif` ships it (see
/// tests/fixtures/sarif/README.md): no network.
fn sarif_validator() -> jsonschema::Validator {
    let path = common::root().join("tests/fixtures/sarif/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("the SARIF schema: {e}"))
}

/// results.sarif is valid SARIF 2.1.0; every result names a rule of `tool.driver.rules`, is
/// located in the target's own file (the embedded target's, never a suite file) with the suite
/// lines that checked it as related locations (files of the checkout), and carries a
/// fingerprint; the faulty run's broken rule is an `error` result with a stable message (no
/// exchange number, no run id), the clean run has none, and each run's invocation says it
/// executed.
#[test]
fn results_sarif_is_valid_sarif_2_1_0_one_result_per_defect() {
    let validator = sarif_validator();
    for (run, broken) in [(faulty(), true), (clean(), false)] {
        let sarif: Value = serde_json::from_str(&text(run, "results.sarif"))
            .unwrap_or_else(|e| panic!("results.sarif is not JSON: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(&sarif)
            .take(10)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "results.sarif is not valid SARIF 2.1.0: {errors:#?}"
        );
        assert_eq!(sarif["version"], "2.1.0");
        assert!(
            sarif["$schema"]
                .as_str()
                .is_some_and(|s| s.contains("sarif"))
        );
        let r0 = &sarif["runs"][0];
        assert_eq!(r0["tool"]["driver"]["name"], "rpconform");
        assert!(
            r0["properties"]["flakyTests"].is_u64(),
            "{}",
            r0["properties"]
        );
        let rules: Vec<&str> = r0["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert!(rules.len() >= 132, "{} rules", rules.len());
        let run_id = r0["invocations"][0]["properties"]["runId"]
            .as_str()
            .unwrap();
        let results = r0["results"].as_array().unwrap();
        for x in results {
            let id = x["ruleId"].as_str().unwrap();
            assert!(rules.contains(&id), "result on unknown rule {id}");
            let loc = &x["locations"][0]["physicalLocation"];
            let uri = loc["artifactLocation"]["uri"].as_str().unwrap();
            assert_eq!(uri, "embedded-target.yaml", "{x}");
            assert!(loc["region"]["startLine"].as_u64().unwrap() > 1, "{x}");
            for r in x["relatedLocations"].as_array().unwrap() {
                let uri = r["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap();
                assert!(
                    uri.starts_with("suites/") && common::root().join(uri).is_file(),
                    "{uri} is not a suite file of the checkout"
                );
            }
            assert!(
                x["partialFingerprints"]["rpconformDefect/v1"].is_string(),
                "{x}"
            );
            let text = x["message"]["text"].as_str().unwrap();
            assert!(!text.contains(run_id) && !text.contains('#'), "{text}");
        }
        let loc02: Vec<&Value> = results.iter().filter(|x| x["ruleId"] == "LOC-02").collect();
        if broken {
            assert!(!loc02.is_empty(), "no LOC-02 result in the faulty run");
            assert!(results.len() <= 30, "{} results", results.len());
            assert!(loc02.iter().all(|x| x["level"] == "error"));
            let text = loc02[0]["message"]["text"].as_str().unwrap();
            assert!(text.contains("expected") && text.contains("seen"), "{text}");
            assert!(text.contains(" occurrence(s) in "), "{text}");
            assert_eq!(r0["invocations"][0]["exitCode"], 1);
        } else {
            assert!(results.is_empty(), "the clean run has results: {results:?}");
        }
        assert_eq!(r0["invocations"][0]["executionSuccessful"], true);
    }
}
