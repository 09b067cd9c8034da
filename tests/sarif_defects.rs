//! End to end: what code scanning gets from a served RP with one fault, run twice through the
//! target file `rpconform serve` writes. One defect (`relative-location`: LOC-02 on every 202)
//! is a handful of SARIF results — one per operation of the RP that shows it —, each with a
//! fingerprint that the second run gives again, no run id in any message, every primary
//! location in the target file (never a suite of rpconform's), the suite lines only as related
//! locations; and report.html stays small enough to open.

use crate::common;

use std::collections::BTreeSet;

use common::{RUN_TIMEOUT, Scratch, rpconform};
use serde_json::Value;

/// `results.sarif` of one accelerated run of the suites against `target`.
fn run(dir: &Scratch, label: &str, target: &str) -> (Value, std::path::PathBuf) {
    let reports = dir.join(label);
    let out = rpconform(
        &[
            "run",
            "suites",
            "--target",
            target,
            "--time-scale",
            "0.01",
            "--report-dir",
            &reports.display().to_string(),
            "-q",
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "LOC-02 is broken\n{}", out.tail(3000));
    let text = std::fs::read_to_string(reports.join("results.sarif")).unwrap();
    (serde_json::from_str(&text).unwrap(), reports)
}

fn fingerprints(sarif: &Value) -> BTreeSet<String> {
    sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            x["partialFingerprints"]["rpconformDefect/v1"]
                .as_str()
                .unwrap_or_else(|| panic!("no fingerprint: {x}"))
                .to_string()
        })
        .collect()
}

#[test]
fn one_fault_is_a_few_stable_results_in_the_users_target_file() {
    let dir = Scratch::new("sarif-defects");
    let target = dir.join("served.yaml");
    let _rp = common::serve(
        &target,
        &["--fault", "relative-location", "--hold-reads", "3"],
    );
    let target = target.display().to_string();
    let mut prints = Vec::new();
    for label in ["first", "second"] {
        let (sarif, reports) = run(&dir, label, &target);
        let run0 = &sarif["runs"][0];
        let run_id = run0["properties"]["runId"].as_str().unwrap().to_string();
        assert!(!run_id.is_empty());
        let results = run0["results"].as_array().unwrap();
        assert!(
            !results.is_empty() && results.len() <= 30,
            "{} results",
            results.len()
        );
        for x in results {
            assert_eq!(x["ruleId"], "LOC-02", "{x}");
            let text = x["message"]["text"].as_str().unwrap();
            assert!(!text.contains(&run_id), "run id {run_id} in {text}");
            let uri = x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap();
            assert!(
                uri.ends_with("/served.yaml") && !uri.contains("suites/"),
                "{uri}"
            );
            for r in x["relatedLocations"].as_array().unwrap() {
                let u = r["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap();
                assert!(u.starts_with("suites/"), "{u}");
                let t = r["message"]["text"].as_str().unwrap();
                assert!(!t.contains(&run_id), "{t}");
            }
        }
        prints.push(fingerprints(&sarif));
        let html = std::fs::metadata(reports.join("report.html"))
            .unwrap()
            .len();
        assert!(html <= 5 << 20, "report.html is {html} bytes");
    }
    assert_eq!(prints[0], prints[1], "fingerprints differ between runs");
}
