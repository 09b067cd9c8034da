//! End to end, against the embedded reference RP: `plan` says before anything is sent what the
//! run then sends (its PUTs within 15% of the PUTs in the run's HAR, and the run's reports set
//! the two side by side); `--coverage min` judges exactly the rules the full run judges with at
//! most a quarter of its PUTs, and says which tests stood in for which.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, read_report, rpconform};
use serde_json::Value;

/// The README's first command's settings.
const ARGS: &[&str] = &["--time-scale", "0.05", "--hold-reads", "3"];

fn har_puts(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).expect("HAR written");
    let har: Value = serde_json::from_str(&text).expect("HAR is JSON");
    har["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["request"]["method"] == "PUT")
        .count() as u64
}

fn verdicts(report: &Value) -> BTreeMap<String, String> {
    report["conformance"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// 1102 as the README writes it: "1 102".
fn spaced(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn plan(extra: &[&str]) -> Value {
    let mut args = vec!["plan", "suites", "--format", "json"];
    args.extend_from_slice(ARGS);
    args.extend_from_slice(extra);
    let out = rpconform(&args, common::RUN_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", out.tail(2000)))
}

fn run(dir: &Scratch, name: &str, extra: &[&str]) -> (Value, u64) {
    let rd = dir.str(name);
    let har = dir.str(format!("{name}.har"));
    let mut args = vec!["run", "suites", "-q", "--report-dir", &rd, "--har", &har];
    args.extend_from_slice(ARGS);
    args.extend_from_slice(extra);
    let out = rpconform(&args, RUN_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    (
        read_report(&dir.join(name)),
        har_puts(&dir.join(format!("{name}.har"))),
    )
}

#[test]
fn plan_predicts_the_puts_and_coverage_min_judges_every_rule_for_a_quarter_of_them() {
    let full_plan = plan(&[]);
    for key in [
        "tests",
        "puts",
        "requests",
        "resources_by_type",
        "estimated_seconds",
    ] {
        assert!(full_plan.get(key).is_some(), "no `{key}` in {full_plan}");
    }
    let dir = Scratch::new("plan-coverage");
    let (full, full_puts) = run(&dir, "full", &[]);
    let predicted = full_plan["puts"].as_u64().unwrap();
    let off = (predicted as f64 - full_puts as f64).abs() / full_puts as f64;
    assert!(
        off <= 0.15,
        "plan said {predicted} PUTs, the run sent {full_puts}"
    );
    // Each test that ran reports its cleanup's time apart from its own.
    let ran: Vec<&Value> = common::results(&full)
        .iter()
        .filter(|r| r["status"] == "passed")
        .collect();
    assert!(!ran.is_empty());
    let without: Vec<&str> = ran
        .iter()
        .filter(|r| r["cleanup_ms"].as_u64().is_none())
        .map(|r| r["name"].as_str().unwrap_or_default())
        .collect();
    assert!(without.is_empty(), "no cleanup_ms: {without:?}");
    // The run's reports hold both.
    assert_eq!(full["run"]["planned"]["puts"].as_u64(), Some(predicted));
    assert_eq!(full["run"]["puts"].as_u64(), Some(full_puts));

    let min_plan = plan(&["--coverage", "min"]);
    let (min, min_puts) = run(&dir, "min", &["--coverage", "min"]);
    // About a quarter (27 % at most: the front-door and lifecycle scenarios added their own).
    assert!(
        min_puts * 100 <= full_puts * 27,
        "--coverage min sent {min_puts} PUTs, the full run {full_puts}"
    );
    assert!(min_plan["puts"].as_u64().unwrap() * 100 <= predicted * 27);
    let (a, b) = (verdicts(&full), verdicts(&min));
    let differ: Vec<_> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}: full {v}, min {:?}", b.get(k)))
        .collect();
    assert!(differ.is_empty(), "{differ:#?}");
    // It says what stood in for what, and that the run is not the whole selection.
    let cov = &min["run"]["coverage"];
    assert!(
        cov["stand_ins"].as_array().is_some_and(|s| s
            .iter()
            .any(|x| !x["stands_in_for"].as_array().unwrap().is_empty())),
        "{cov}"
    );
    assert_eq!(min["status"]["state"], "incomplete", "{}", min["status"]);
    // The README's figures are the plan's and the run's, so they cannot drift.
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    for claim in [
        format!(
            "it plans {} tests and {} PUTs",
            spaced(full_plan["tests"].as_u64().unwrap()),
            spaced(predicted)
        ),
        format!(
            "it keeps {} tests and {} of\nthe {} PUTs",
            spaced(min_plan["tests"].as_u64().unwrap()),
            spaced(min_plan["puts"].as_u64().unwrap()),
            spaced(predicted)
        ),
    ] {
        let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat(&readme).contains(&flat(&claim)),
            "README.md does not say \"{claim}\" (update its cost paragraphs)"
        );
    }
    let size = std::fs::metadata(dir.join("full").join("report.json"))
        .unwrap()
        .len();
    assert!(
        readme.contains("writes a report.json under 6 MB") && size < 6 * 1024 * 1024,
        "report.json is {size} bytes; README.md promises under 6 MB"
    );
    // --rule-only needs a rule selection, and keeps fewer tests than --rule alone.
    let bare = rpconform(&["plan", "suites", "--rule-only"], QUICK_TIMEOUT);
    assert_eq!(bare.code(), 2, "{}", bare.tail(2000));
    let wide = plan(&["--rule", "LOC-02"]);
    let narrow = plan(&["--rule", "LOC-02", "--rule-only"]);
    assert!(
        narrow["tests"].as_u64().unwrap() * 4 < wide["tests"].as_u64().unwrap(),
        "--rule-only kept {} tests, --rule {}",
        narrow["tests"],
        wide["tests"]
    );
}
