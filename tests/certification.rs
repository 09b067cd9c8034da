//! A certificate a conforming RP can earn and a board can sign (issue 34), end to end:
//! - the suites that ran are named (their hash), and only the built-in set certifies;
//! - a shard of a certification run is judged on its part, and `report merge --certify` gives
//!   the one verdict, naming the subject; a missing shard or shards that differ in a setting
//!   that changes verdicts are refused;
//! - `--rerun-failed` after an interrupted run runs the tests that did not finish;
//! - under `--retries`, a test whose every attempt went unanswered is an error, never flaky;
//! - a certified run at time scale 1.

use crate::common;
use crate::hostile;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, rpconform};
use serde_json::Value;

const SUBJECT: &str = "contoso-rp@1.4.2";

fn why_not(report: &Value) -> Vec<String> {
    report["status"]["certification"]["why_not"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Only the acceleration stands between this run and a certificate.
fn only_accelerated(report: &Value) {
    let why = why_not(report);
    assert_eq!(why.len(), 1, "{why:#?}\n{}", common::excerpt(report));
    assert!(why[0].starts_with("accelerated"), "{why:?}");
}

#[test]
fn a_replaced_suite_set_is_named_and_not_certified() {
    let dir = Scratch::new("cert-suites");
    let mine = dir.join("suites");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::copy(
        common::suites_dir().join("headers-and-errors.yaml"),
        mine.join("headers-and-errors.yaml"),
    )
    .unwrap();
    let reports = dir.str("reports");
    let out = rpconform(
        &[
            "run",
            "--suites",
            &dir.str("suites"),
            "--target",
            "embedded",
            "--time-scale",
            "0.05",
            "--hold-reads",
            "3",
            "--certify",
            "--report-dir",
            &reports,
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(2000));
    let report = common::read_report(Path::new(&reports));
    let ran = report["run"]["suite_set"].as_str().unwrap();
    let builtin = rpconform(&["--version"], QUICK_TIMEOUT).stdout;
    assert!(
        !builtin.contains(ran),
        "{ran} is the built-in set: {builtin}"
    );
    let why = why_not(&report);
    assert!(
        why.iter()
            .any(|w| w.contains(&format!("set {ran}")) && w.contains("built-in")),
        "{why:?}"
    );
    // The built-in set, run from this checkout's suites/, is named as `--version` names it.
    let reports2 = dir.str("reports2");
    let out = rpconform(
        &[
            "run",
            "suites",
            "--target",
            "embedded",
            "--time-scale",
            "0.05",
            "--hold-reads",
            "3",
            "--certify",
            "--report-dir",
            &reports2,
            "headers-and-errors::",
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(2000));
    let report = common::read_report(Path::new(&reports2));
    let set = report["run"]["suite_set"].as_str().unwrap();
    assert!(builtin.contains(set), "{set} vs {builtin}");
}

/// Run shard `m` of 3 of a certification run against the embedded RP, with `extra` options.
fn shard(dir: &Scratch, m: u32, extra: &[&str]) -> (String, Value) {
    let reports = dir.str(format!("shard-{m}"));
    let partition = format!("count:{m}/3");
    let mut args = vec![
        "run",
        "suites",
        "--target",
        "embedded",
        "--time-scale",
        "0.05",
        "--hold-reads",
        "3",
        "--certify",
        "--subject",
        SUBJECT,
        "--partition",
        &partition,
        "--report-dir",
        &reports,
    ];
    args.extend_from_slice(extra);
    let out = rpconform(&args, RUN_TIMEOUT);
    // Judged on its part: not certified only because it is accelerated.
    assert_eq!(out.code(), 1, "{}", out.tail(2000));
    let report = common::read_report(Path::new(&reports));
    (reports, report)
}

#[test]
fn shards_certify_their_part_and_the_merge_gives_the_one_verdict() {
    let dir = Scratch::new("cert-shards");
    let shards: Vec<(String, Value)> = (1..=3).map(|m| shard(&dir, m, &[])).collect();
    for (_, r) in &shards {
        only_accelerated(r);
        assert_eq!(r["run"]["subject"], SUBJECT);
        assert!(r["status"]["certification"]["shard"].as_str().is_some());
    }
    let out = dir.str("merged");
    let merged = rpconform(
        &[
            "report",
            "merge",
            "--certify",
            &shards[0].0,
            &shards[1].0,
            &shards[2].0,
            "--out",
            &out,
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(merged.code(), 1, "{}", merged.tail(2000));
    let report = common::read_report(Path::new(&out));
    only_accelerated(&report);
    assert_eq!(report["run"]["subject"], SUBJECT);
    assert!(report["status"]["certification"]["shard"].is_null());
    let conf = std::fs::read_to_string(dir.join("merged/conformance.md")).unwrap();
    assert!(conf.lines().next().unwrap().contains(SUBJECT), "{conf}");
    // A shard missing: named, and the merge fails.
    let partial = rpconform(
        &[
            "report",
            "merge",
            "--certify",
            &shards[0].0,
            &shards[1].0,
            "--out",
            &dir.str("partial"),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(partial.code(), 1, "{}", partial.tail(2000));
    assert!(partial.stderr.contains("count:3/3"), "{}", partial.stderr);
    // A shard with another operation deadline is no shard of this run.
    let (other, _) = shard(&dir, 3, &["--deadline", "45"]);
    let mixed = rpconform(
        &[
            "report",
            "merge",
            "--certify",
            &shards[0].0,
            &shards[1].0,
            &other,
            "--out",
            &dir.str("mixed"),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(mixed.code(), 2, "{}", mixed.tail(2000));
    assert!(
        mixed.stderr.contains("deadline differs"),
        "{}",
        mixed.stderr
    );
}

#[test]
fn rerun_failed_runs_what_an_interrupted_run_did_not_finish() {
    let dir = Scratch::new("cert-rerun");
    // Operations that never end on their own: every test is still running when the signal
    // comes, whenever it comes.
    let stuck = dir.join("stuck.yaml");
    let _held = common::serve(&stuck, &["--hold-reads", "100000"]);
    let reports = dir.join("reports");
    let child = Command::new(env!("CARGO_BIN_EXE_rpconform"))
        .args(["run", "suites", "--target"])
        .arg(&stuck)
        // Operations never end here: the cleanup after the signal gives each up at the deadline.
        .args(["--time-scale", "0.01", "--deadline", "10", "--report-dir"])
        .arg(&reports)
        .arg("async-put::create-then-replace")
        .current_dir(common::root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Signal once a test has created something (its PUT is journaled before it leaves).
    common::wait_until_journaled(&reports);
    common::signal(&child, "TERM");
    let ended = common::finish(child, "the run after SIGTERM", Duration::from_secs(120));
    assert_eq!(ended.status.code(), Some(130), "{}", ended.stderr);
    let first = common::read_report(&reports);
    let unfinished: Vec<String> = common::results(&first)
        .iter()
        .filter(|r| r["status"] == "interrupted")
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!unfinished.is_empty(), "{}", common::excerpt(&first));
    // Against an RP whose operations end: exactly the tests that did not finish run again.
    let ok = dir.join("ok.yaml");
    let _rp = common::serve(&ok, &[]);
    let again = dir.str("again");
    let out = rpconform(
        &[
            "run",
            "suites",
            "--target",
            &ok.display().to_string(),
            "--time-scale",
            "0.01",
            "--report-dir",
            &again,
            &format!("--rerun-failed={}", reports.display()),
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    assert!(out.stderr.contains("did not finish"), "{}", out.stderr);
    let report = common::read_report(Path::new(&again));
    let mut ran: Vec<String> = common::results(&report)
        .iter()
        .filter(|r| {
            r["status"] != "not-applicable"
                && !r["status"].as_str().unwrap_or("").starts_with("skipped")
        })
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    ran.sort();
    let mut want = unfinished.clone();
    want.sort();
    assert_eq!(ran, want);
}

#[test]
fn under_retries_a_test_whose_every_attempt_went_unanswered_is_not_flaky() {
    let dir = Scratch::new("cert-retries");
    let server = hostile::Server::start("127.0.0.1", hostile::Mode::ResetPut);
    let target = dir.write("t.yaml", &hostile::target_yaml(&server.base_url(), ""));
    let reports = dir.str("reports");
    let out = rpconform(
        &[
            "run",
            "suites",
            "--target",
            &target.display().to_string(),
            "--time-scale",
            "0.01",
            "--request-timeout",
            "3",
            "--deadline",
            "6",
            "--retries",
            "2",
            "--report-dir",
            &reports,
            "async-put::create-then-replace",
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let report = common::read_report(Path::new(&reports));
    let results = common::results(&report);
    assert!(!results.is_empty());
    for r in results {
        if r["status"] == "not-applicable" {
            continue;
        }
        assert_ne!(r["status"], "passed", "{r}");
        let notes: Vec<&str> = r["notes"]
            .as_array()
            .map(|n| n.iter().filter_map(|x| x.as_str()).collect())
            .unwrap_or_default();
        assert!(notes.iter().all(|n| !n.starts_with("flaky: ")), "{notes:?}");
        assert!(
            notes.iter().any(|n| n.starts_with("retried: ")),
            "{notes:?}"
        );
    }
    let junit = std::fs::read_to_string(Path::new(&reports).join("junit.xml")).unwrap();
    assert!(!junit.contains(r#"name="flaky""#), "{junit}");
}

#[test]
fn a_conforming_rp_certifies_at_time_scale_1() {
    let dir = Scratch::new("cert-real-time");
    let reports = dir.str("reports");
    let out = rpconform(
        &[
            "run",
            "suites",
            "--target",
            "embedded",
            "--hold-reads",
            "3",
            "--certify",
            "--subject",
            SUBJECT,
            "--report-dir",
            &reports,
        ],
        Duration::from_secs(900),
    );
    let report = common::read_report(Path::new(&reports));
    assert_eq!(out.code(), 0, "{}\n{:?}", out.tail(3000), why_not(&report));
    assert_eq!(report["status"]["certification"]["certified"], true);
    let conf = std::fs::read_to_string(dir.join("reports/conformance.md")).unwrap();
    assert!(conf.lines().next().unwrap().contains("certified"), "{conf}");
}
