//! End to end, against the embedded reference RP with one fault on (`relative-location`:
//! LOC-02 broken on every 202): `--fail-fast` starts no test after the first failure, reports
//! the others skipped "not run", never passed, and exits 1; `--rerun-failed` runs exactly the
//! tests that failed before, and with none failed runs nothing and exits 0.

use crate::common;

use std::collections::BTreeSet;

use common::{FAST, QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, read_report, results, rpconform};
use serde_json::Value;

fn faulty_args<'a>(report_dir: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "suites",
        "--report-dir",
        report_dir,
        "--fault",
        "relative-location",
        "--hold-reads",
        "3",
        "-q",
    ];
    args.extend_from_slice(FAST);
    args.extend_from_slice(extra);
    args
}

fn names_where(report: &Value, pred: impl Fn(&Value) -> bool) -> BTreeSet<String> {
    results(report)
        .iter()
        .filter(|r| pred(r))
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

fn failed(r: &Value) -> bool {
    matches!(r["status"].as_str(), Some("failed" | "error"))
}

fn ran(r: &Value) -> bool {
    !matches!(r["status"].as_str(), Some("skipped"))
}

fn not_run(r: &Value) -> bool {
    r["status"] == "skipped"
        && r["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("not run: --fail-fast stopped the run after "))
}

#[test]
fn fail_fast_stops_starting_tests_after_the_first_failure_and_exits_1() {
    let dir = Scratch::new("fail-fast");
    let rd = dir.str("reports");
    let out = rpconform(
        &faulty_args(&rd, &["--fail-fast", "--test-threads", "2"]),
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let report = read_report(&dir.join("reports"));
    let all = results(&report).len();
    let stopped = names_where(&report, not_run);
    let ran = names_where(&report, ran);
    assert!(
        !stopped.is_empty(),
        "no test was left not run\n{}",
        out.tail(3000)
    );
    assert!(
        ran.len() + stopped.len() <= all && ran.len() < all / 2,
        "ran {} of {all}",
        ran.len()
    );
    assert!(!names_where(&report, failed).is_empty());
    assert_eq!(report["status"]["state"], "failed");
    assert_eq!(
        report["run"]["not_run"].as_u64(),
        Some(stopped.len() as u64)
    );
    let incomplete = report["status"]["incomplete"].to_string();
    assert!(
        incomplete.contains(&format!("{} tests not run: --fail-fast", stopped.len())),
        "{incomplete}"
    );
    // Not-run tests are counted skipped, never passed; the console says why in one line.
    assert!(report["counts"]["skipped"].as_u64().unwrap() >= stopped.len() as u64);
    // The console says it stopped, and the headline why the run is incomplete.
    assert!(
        out.stderr.contains("--fail-fast: ") && out.stderr.contains("no more tests start"),
        "{}",
        out.tail(3000)
    );
    assert!(
        out.stdout.contains(&format!(
            "{} tests not run: --fail-fast stopped the run after",
            stopped.len()
        )),
        "{}",
        out.tail(3000)
    );
    // `--no-fail-fast` undoes it (last one wins): accepted as an argument.
    let listing = rpconform(
        &["run", "suites", "--fail-fast", "--no-fail-fast", "--list"],
        QUICK_TIMEOUT,
    );
    assert_eq!(listing.code(), 0, "{}", listing.tail(2000));
}

#[test]
fn rerun_failed_runs_exactly_the_tests_that_failed_and_nothing_when_none_did() {
    let dir = Scratch::new("rerun-failed");
    let rd = dir.str("reports");
    let first = rpconform(&faulty_args(&rd, &[]), RUN_TIMEOUT);
    assert_eq!(first.code(), 1, "{}", first.tail(3000));
    let before = names_where(&read_report(&dir.join("reports")), failed);
    assert!(!before.is_empty());

    // Default DIR: the report directory, read before this run overwrites it.
    let again = rpconform(&faulty_args(&rd, &["--rerun-failed"]), RUN_TIMEOUT);
    assert_eq!(again.code(), 1, "{}", again.tail(3000));
    assert!(
        again.stderr.contains(&format!(
            "--rerun-failed: {} tests failed or did not finish in {}",
            before.len(),
            dir.join("reports/report.json").display()
        )),
        "{}",
        again.tail(3000)
    );
    let report = read_report(&dir.join("reports"));
    assert_eq!(names_where(&report, ran), before);
    assert_eq!(report["status"]["state"], "failed");
    assert!(
        report["run"]["select"]
            .to_string()
            .contains("--rerun-failed"),
        "{}",
        report["run"]
    );

    // `--list --format json` lists them, and stdout stays JSON.
    let listing = rpconform(
        &[
            "run",
            "suites",
            &format!("--rerun-failed={rd}"),
            "--list",
            "--format",
            "json",
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(listing.code(), 0, "{}", listing.tail(2000));
    let listed: Value = serde_json::from_str(&listing.stdout)
        .unwrap_or_else(|e| panic!("not JSON: {e}\n{}", listing.tail(2000)));
    let listed: BTreeSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, before);

    // A report where nothing failed: nothing to run, exit 0, no run.
    let mut clean = read_report(&dir.join("reports"));
    clean["results"] = Value::Array(Vec::new());
    let quiet = dir.join("clean");
    std::fs::create_dir_all(&quiet).unwrap();
    std::fs::write(quiet.join("report.json"), clean.to_string()).unwrap();
    let out = rpconform(
        &[
            "run",
            "suites",
            "--report-dir",
            &dir.str("unused"),
            &format!("--rerun-failed={}", quiet.display()),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    assert!(
        out.stderr.contains("none failed") && out.stderr.contains("nothing to run"),
        "{}",
        out.tail(2000)
    );
    assert!(!dir.join("unused/report.json").exists(), "a run happened");
    // A directory without a report is a usage error.
    let out = rpconform(
        &[
            "run",
            "suites",
            &format!("--rerun-failed={}", dir.str("nowhere")),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
}
