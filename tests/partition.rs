//! `--partition` and `report merge`: the two halves of a partitioned run are disjoint, and
//! merging their report directories gives exactly the tests, rule verdicts and status of one
//! whole run (requests summed), in junit.xml as in report.json, for both `count:M/N` and
//! `hash:M/N`; a shard merged with itself, or with a whole run, is refused. Only `suites/etag.yaml` runs, to keep
//! the test short; the five runs go at once.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{
    FAST, QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, junit_names, read_junit, read_report, result_names,
    rpconform,
};

const SUITE: &str = "suites/etag.yaml";

/// Run SUITE into `dir`, with `--partition` when given; panics on a usage error or no report.
fn run_into(dir: &Path, partition: Option<&str>) {
    let d = dir.display().to_string();
    let mut args = vec!["run", SUITE, "-q", "--report-dir", &d];
    args.extend_from_slice(FAST);
    // Operations end only once seen running: verdicts do not depend on machine load, so the
    // merged shards must judge every rule as the whole run does.
    args.extend(["--hold-reads", "3"]);
    if let Some(p) = partition {
        args.extend(["--partition", p]);
    }
    let out = rpconform(&args, RUN_TIMEOUT);
    assert!(
        matches!(out.code(), 0 | 1) && dir.join("report.json").exists(),
        "run with partition {partition:?} wrote no report\n{}",
        out.tail(3000)
    );
}

/// Each rule of the conformance view with its verdict.
fn verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    report["conformance"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or("").to_string(),
                r["verdict"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn set(v: Vec<String>) -> BTreeSet<String> {
    v.into_iter().collect()
}

/// Names in `a` and not in `b`, for messages.
fn minus(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Vec<String> {
    a.difference(b).cloned().collect()
}

#[test]
fn merged_partitions_hold_exactly_the_tests_of_a_whole_run() {
    let dir = Scratch::new("partition");
    let runs: [(&str, Option<&str>); 5] = [
        ("whole", None),
        ("count1", Some("count:1/2")),
        ("count2", Some("count:2/2")),
        ("hash1", Some("hash:1/2")),
        ("hash2", Some("hash:2/2")),
    ];
    std::thread::scope(|s| {
        for (name, partition) in runs {
            let path = dir.join(name);
            s.spawn(move || run_into(&path, partition));
        }
    });

    let whole = read_report(&dir.join("whole"));
    let whole_names = set(result_names(&whole));
    let whole_junit = set(junit_names(&read_junit(&dir.join("whole"))));
    assert!(
        whole_names.len() >= 4,
        "the whole run of {SUITE} has too few tests to split: {whole_names:?}"
    );
    assert_eq!(
        whole_names, whole_junit,
        "the whole run's junit.xml and report.json list different tests"
    );

    for kind in ["count", "hash"] {
        let (p1, p2) = (dir.join(format!("{kind}1")), dir.join(format!("{kind}2")));
        let (r1, r2) = (read_report(&p1), read_report(&p2));
        let (n1, n2) = (set(result_names(&r1)), set(result_names(&r2)));
        assert_eq!(
            r1["run"]["partition"],
            format!("{kind}:1/2"),
            "run.partition of {kind}:1/2: {}",
            r1["run"]
        );
        let both: Vec<&String> = n1.intersection(&n2).collect();
        assert!(
            both.is_empty(),
            "{kind}:1/2 and {kind}:2/2 both ran {both:?}"
        );
        assert!(
            !n1.is_empty() && !n2.is_empty(),
            "{kind}: a partition of {} tests is empty ({} + {})",
            whole_names.len(),
            n1.len(),
            n2.len()
        );
        if kind == "count" {
            assert!(
                n1.len().abs_diff(n2.len()) <= 1,
                "count:M/2 deals round-robin, yet got {} and {}",
                n1.len(),
                n2.len()
            );
        }

        let merged = dir.join(format!("{kind}-merged"));
        let out = rpconform(
            &[
                "report",
                "merge",
                &p1.display().to_string(),
                &p2.display().to_string(),
                "--out",
                &merged.display().to_string(),
            ],
            QUICK_TIMEOUT,
        );
        assert!(
            matches!(out.code(), 0 | 1),
            "report merge failed\n{}",
            out.tail(2000)
        );
        let report = read_report(&merged);
        let names = set(result_names(&report));
        assert!(
            names == whole_names,
            "{kind}: merged report.json differs from the whole run\n  missing: {:?}\n  extra: {:?}",
            minus(&whole_names, &names),
            minus(&names, &whole_names)
        );
        let junit = set(junit_names(&read_junit(&merged)));
        assert!(
            junit == whole_junit,
            "{kind}: merged junit.xml differs from the whole run\n  missing: {:?}\n  extra: {:?}",
            minus(&whole_junit, &junit),
            minus(&junit, &whole_junit)
        );
        let total: u64 = ["passed", "warned", "failed", "errors", "skipped"]
            .iter()
            .map(|f| common::count(&report, f))
            .sum();
        assert_eq!(
            total as usize,
            names.len(),
            "{kind}: merged counts {} do not add up to its {} results",
            report["counts"],
            names.len()
        );
        // The merged run's status is the exit code, as for the whole run.
        assert_eq!(
            out.code(),
            if report["status"]["state"] == "failed" {
                1
            } else {
                0
            },
            "{kind}: merge's exit code disagrees with its status\n{}",
            out.tail(1000)
        );
        // A complete set is the whole run: no partition left, the shards named.
        assert!(
            report["run"]["partition"].is_null(),
            "{kind}: a complete merged set has no partition: {}",
            report["run"]
        );
        assert_eq!(
            report["run"]["merged_from"].as_array().map(Vec::len),
            Some(2),
            "{}",
            report["run"]
        );
        // Requests are summed over the shards.
        let requests = |r: &serde_json::Value| r["run"]["requests"].as_u64().unwrap();
        assert_eq!(requests(&report), requests(&r1) + requests(&r2));
        // The same rule verdicts as the unsharded run (the hold-open gate makes them exact).
        assert_eq!(
            verdicts(&report),
            verdicts(&whole),
            "{kind}: merged rule verdicts differ from the whole run's"
        );
        assert_eq!(report["status"]["state"], whole["status"]["state"]);
    }
    // A shard merged with itself is refused, naming the files (exit 2).
    let p1 = dir.join("hash1").display().to_string();
    let out = rpconform(
        &["report", "merge", &p1, &p1, "--out", &dir.str("dup")],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(1000));
    assert!(
        out.stderr.contains("a shard merged twice"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("dup").join("report.json").exists());
    // A shard with a whole run is refused too.
    let whole_dir = dir.join("whole").display().to_string();
    let out = rpconform(
        &[
            "report",
            "merge",
            &p1,
            &whole_dir,
            "--out",
            &dir.str("mixed"),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(1000));
    assert!(out.stderr.contains("is not a shard"), "{}", out.stderr);
}
