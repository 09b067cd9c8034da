//! `src/rules/field.tsv` is what `rpconform replay` says of the real recordings kept as
//! fixtures: per rule, the recordings that judged it, those that failed it and their RPs (the
//! SDK package each fixture comes from, the part of its file name before the version). The
//! table is recomputed here from a replay of every fixture and must match; after a change that
//! moves a verdict, `RPCONFORM_BLESS=1 cargo test --test e2e field_rates::` rewrites it (and the diff
//! shows which rule moved, on which RP).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{Scratch, read_report, results, rpconform};

/// `network-17.0.0__test_cli_mgmt_network_route_table...` → `network`.
fn rp_of(scenario: &str) -> String {
    let file = scenario.rsplit('/').next().unwrap_or(scenario);
    let package = file.split("__").next().unwrap_or(file);
    match package.rsplit_once('-') {
        Some((name, version)) if version.starts_with(|c: char| c.is_ascii_digit()) => name,
        _ => package,
    }
    .to_string()
}

#[test]
fn the_field_rates_are_what_replay_says_of_the_real_recordings() {
    let dir = Scratch::new("field-rates");
    let fixtures = common::root().join("tests/fixtures/recordings");
    let out = rpconform(
        &[
            "replay",
            &fixtures.display().to_string(),
            "--report-dir",
            &dir.str("reports"),
        ],
        common::QUICK_TIMEOUT,
    );
    assert!(matches!(out.code(), 0 | 1), "{}", out.tail(3000));
    let report = read_report(Path::new(&dir.str("reports")));
    let mut judged: BTreeMap<String, u32> = BTreeMap::new();
    let mut failed: BTreeMap<String, u32> = BTreeMap::new();
    let mut rps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let recordings = results(&report);
    assert!(recordings.len() >= 20, "{} recordings", recordings.len());
    for r in recordings {
        let rp = rp_of(r["scenario"].as_str().unwrap_or(""));
        for v in r["verdicts"].as_array().into_iter().flatten() {
            let id = v["rule"].as_str().unwrap_or("").to_string();
            match v["outcome"].as_str() {
                Some("passed") => *judged.entry(id).or_default() += 1,
                Some("failed") => {
                    *judged.entry(id.clone()).or_default() += 1;
                    *failed.entry(id.clone()).or_default() += 1;
                    rps.entry(id).or_default().insert(rp.clone());
                }
                _ => {}
            }
        }
    }
    let mut table = String::from(
        "# rule\tjudged\tfailed\trps (written by tests/field_rates.rs: RPCONFORM_BLESS=1 cargo test --test e2e field_rates::)\n",
    );
    for (id, n) in &judged {
        let f = failed.get(id).copied().unwrap_or(0);
        let who: Vec<String> = rps.get(id).into_iter().flatten().cloned().collect();
        table.push_str(&format!("{id}\t{n}\t{f}\t{}\n", who.join(",")));
    }
    let path = common::root().join("src/rules/field.tsv");
    if std::env::var("RPCONFORM_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &table).unwrap();
        return;
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        kept, table,
        "src/rules/field.tsv is not what replay says of the fixtures now: rerun with RPCONFORM_BLESS=1 and review the diff"
    );
}

#[test]
fn rules_shows_the_field_rate_beside_a_rule() {
    let out = rpconform(&["rules", "--rule", "HDR-01"], common::QUICK_TIMEOUT);
    assert!(out.stdout.contains("real traffic: "), "{}", out.tail(2000));
    let json = rpconform(&["rules", "--format", "json"], common::QUICK_TIMEOUT);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let with_rate = v
        .as_array()
        .map(|a| a.iter().filter(|r| r["field"].is_object()).count())
        .unwrap_or(0);
    assert!(with_rate >= 20, "{with_rate} rules carry a field rate");
}

#[test]
fn a_failed_rule_is_shown_beside_its_field_rate() {
    let dir = Scratch::new("field-rates-report");
    let out = rpconform(
        &[
            "run",
            "suites/location-202.yaml",
            "--fault",
            "retry-after-out-of-range",
            "--hold-reads",
            "1",
            "--time-scale",
            "0.01",
            "-q",
            "--report-dir",
            &dir.str("reports"),
        ],
        common::RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let md = std::fs::read_to_string(dir.join("reports/conformance.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| **LOC-04**"))
        .unwrap_or_else(|| panic!("no LOC-04 row:\n{md}"));
    assert!(row.contains("real recordings"), "{row}");
}
