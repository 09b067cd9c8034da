//! `rpconform replay` on the real recordings (tests/fixtures/recordings): every file is read
//! (no runner error), one result each, and the verdicts agree with the independent counter
//! (`count.py` → `expected-counts.json`, which shares no code with the Rust reader):
//! - no LOC-03 failure where every Retry-After is whole seconds;
//! - no AAO-02 or OPRES-01 failure where every operation read answered 200;
//! - LOC-04 fails exactly as often as a 202 carries a Retry-After outside 10..600;
//! - LOC-01 fails exactly as often as a 202 comes without Location;
//! - no header rule fails where the recorder stripped the header (HDR-01 on vcrpy and Python
//!   test-proxy files, Retry-After rules on vcrpy files).
//!
//! It prints the per-fixture table of failed rules (`cargo test --test e2e replay_real::
//! -- --nocapture`). The inferred target it writes is a valid target file.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Scratch, read_report, results, rpconform};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recordings")
}

/// (outcome, failed count) of a rule in a result; ("absent", 0) when it has no verdict.
fn verdict(r: &Value, rule: &str) -> (String, u64) {
    r["verdicts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["rule"] == rule)
        .map_or(("absent".into(), 0), |v| {
            (
                v["outcome"].as_str().unwrap_or("").to_string(),
                v["failed"].as_u64().unwrap_or(0),
            )
        })
}

#[test]
fn replay_judges_every_fixture_as_the_counter_counts() {
    let s = Scratch::new("replay-real");
    let out = rpconform(
        &[
            "replay",
            &fixtures().display().to_string(),
            "--report-dir",
            &s.str("rep"),
            "--write-target",
            &s.str("inferred.yaml"),
        ],
        Duration::from_secs(120),
    );
    // Real RPs deviate (LOC-04 on Compute...): exit 1, never a usage error.
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    assert!(
        out.stdout
            .contains("skipped 1 file(s) that are not recordings"),
        "expected-counts.json is skipped: {}",
        out.tail(2000)
    );
    let report = read_report(&s.join("rep"));
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("expected-counts.json")).unwrap(),
    )
    .unwrap();
    let rs = results(&report);
    assert_eq!(rs.len(), expected.as_object().unwrap().len());
    let mut problems = Vec::new();
    eprintln!("| fixture | status | failed rules (failures) | not judged |");
    eprintln!("|---|---|---|---|");
    for (name, c) in expected.as_object().unwrap() {
        let Some(r) = rs.iter().find(|r| r["name"] == format!("replay::{name}")) else {
            problems.push(format!("{name}: no result"));
            continue;
        };
        let status = r["status"].as_str().unwrap_or("");
        if status == "error" {
            problems.push(format!("{name}: runner error {}", r["detail"]));
        }
        let n = |k: &str| c[k].as_u64().unwrap();
        let mut check = |what: &str, ok: bool| {
            if !ok {
                problems.push(format!("{name}: {what}"));
            }
        };
        let (loc03, _) = verdict(r, "LOC-03");
        if n("non_integer_retry_after") == 0 {
            check(
                "LOC-03 failed with integer Retry-After only",
                loc03 != "failed",
            );
        }
        let all_200 = c["aao_read_statuses"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| k == "200");
        for rule in ["AAO-02", "OPRES-01"] {
            if all_200 {
                check(
                    &format!("{rule} failed though every operation read answered 200"),
                    verdict(r, rule).0 != "failed",
                );
            }
        }
        let want04 = n("retry_after_below_10_on_202") + n("retry_after_above_600_on_202");
        let (o04, f04) = verdict(r, "LOC-04");
        check(
            &format!("LOC-04 failed {f04} times, the counter says {want04}"),
            f04 == want04 && (want04 == 0) == (o04 != "failed"),
        );
        let want01 = n("responses_202_without_location");
        let (o01, f01) = verdict(r, "LOC-01");
        check(
            &format!("LOC-01 failed {f01} times, the counter says {want01}"),
            f01 == want01 && (want01 == 0) == (o01 != "failed"),
        );
        // The recorder stripped x-ms-request-id wherever the counter finds it missing.
        if n("responses_without_request_id") > 0 {
            check(
                "HDR-01 failed where the recorder strips x-ms-request-id",
                verdict(r, "HDR-01").0 != "failed",
            );
        }
        if name.ends_with(".yaml") {
            for rule in ["DEL-02", "RETRY-01"] {
                check(
                    &format!("{rule} failed where vcrpy strips Retry-After"),
                    verdict(r, rule).0 != "failed",
                );
            }
        }
        let verdicts = r["verdicts"].as_array().cloned().unwrap_or_default();
        let failed: Vec<String> = verdicts
            .iter()
            .filter(|v| common::is_failed(v))
            .map(|v| format!("{} ({})", v["rule"].as_str().unwrap(), v["failed"]))
            .collect();
        let not_judged: Vec<&str> = verdicts
            .iter()
            .filter(|v| v["outcome"] == "not-judged")
            .map(|v| v["rule"].as_str().unwrap())
            .collect();
        eprintln!(
            "| {name} | {status} | {} | {} |",
            failed.join(", "),
            not_judged.join(", ")
        );
        // Findings and notes name the provider namespace.
        let notes = r["notes"].as_array().cloned().unwrap_or_default();
        if !name.starts_with("resource-15.0.0__test_mgmt_resource.test_resource_groups") {
            check(
                "no per-namespace breakdown in the notes",
                notes
                    .iter()
                    .any(|x| x.as_str().is_some_and(|s| s.starts_with("Microsoft."))),
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let t = rpconform::target::load_target(&s.join("inferred.yaml"))
        .unwrap_or_else(|r| panic!("the inferred target does not parse:\n{}", r.render()));
    assert!(t.namespaces.len() >= 10, "{:?}", t.namespaces);
    assert!(t.types.len() >= 20, "{} types", t.types.len());
}

#[test]
fn a_damaged_recording_is_a_positioned_error_result() {
    let s = Scratch::new("replay-damaged");
    let bad = s.write(
        "bad.json",
        "{\"Entries\": [{\"RequestUri\": \"https://management.azure.com/x\", \"RequestMethod\": 5}]}",
    );
    let out = rpconform(
        &[
            "replay",
            &bad.display().to_string(),
            "--report-dir",
            &s.str("rep"),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(out.code(), 1, "{}", out.tail(2000));
    assert!(out.stderr.contains("bad.json:1:"), "{}", out.tail(2000));
    let report = read_report(&s.join("rep"));
    assert_eq!(results(&report)[0]["status"], "error");
}
