//! The two matrices of the embedded reference RP, in one test binary so they run at once
//! (their child runs mostly wait). Every run is a child process, several at once, with the
//! hold-open gate, so no verdict depends on machine load.
//!
//! - Every fault knob is caught, and a clean run fails nothing: `rpconform run suites
//!   --fault-matrix` runs the suites once with no fault and once per fault and writes
//!   `fault-matrix.md`; the test prints the table and fails on any row that is not ✅ (a fault
//!   whose rules are not all failed, a fault that fails a rule it does not name — its `extra`
//!   column —, a clean run with a failure, a run that could not be judged, a fault reported
//!   ⏳ "not observable": the embedded target declares every kind of type a knob acts on).
//!   Each row runs first the one set `--coverage min` keeps: every fault must be caught by it.
//! - No false failure on any legal behaviour, and no fault hidden by one: `rpconform run suites
//!   --variant-matrix` runs the suites with no variant, each variant alone and every compatible
//!   variant at once (no MUST failure, no runner error, no SHOULD failure beyond the ones the
//!   variant is documented to depart from), then the fault matrix with the compatible set on
//!   (every fault must still fail the rules it names; pairs a variant hides are listed).

mod common;

use common::{Scratch, rpconform};
use std::time::Duration;

/// One full fault matrix, bounded well above what it takes on two busy cores.
const MATRIX_TIMEOUT: Duration = Duration::from_secs(1800);

/// Run `rpconform run suites --KIND-matrix` (scaled) and read the table it writes.
fn run_matrix(kind: &str) -> (Scratch, common::Output, String) {
    let dir = Scratch::new(&format!("{kind}-matrix"));
    let report_dir = dir.str("reports");
    let flag = format!("--{kind}-matrix");
    let out = rpconform(
        &[
            "run",
            "suites",
            &flag,
            "--op-duration",
            "300",
            "--time-scale",
            "0.01",
            "--report-dir",
            &report_dir,
        ],
        MATRIX_TIMEOUT,
    );
    let file = format!("{kind}-matrix.md");
    let md = std::fs::read_to_string(dir.join("reports").join(&file))
        .unwrap_or_else(|e| panic!("no {file} ({e})\n{}", out.tail(3000)));
    println!("{md}\n({:.0} s)", out.elapsed.as_secs_f64());
    (dir, out, md)
}

#[test]
fn every_fault_breaks_the_rules_it_names_and_a_clean_run_fails_nothing() {
    let (dir, out, md) = run_matrix("fault");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| `")).collect();
    let faults = rpconform(&["serve", "--list-faults"], common::QUICK_TIMEOUT);
    let listed = faults
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    assert_eq!(
        rows.len(),
        listed + 1,
        "one row per fault plus the clean run\n{md}"
    );
    let bad: Vec<&&str> = rows
        .iter()
        // Every knob acts on a type the embedded target declares: none is "not observable".
        .filter(|r| !r.contains("✅"))
        .collect();
    // One fault fails only its own rules: the last column (`extra`) is empty on every row.
    let extra: Vec<&&str> = rows
        .iter()
        .filter(|r| {
            r.trim_end()
                .trim_end_matches('|')
                .rsplit('|')
                .next()
                .is_some_and(|c| !c.trim().is_empty())
        })
        .collect();
    assert!(
        extra.is_empty(),
        "{} fault(s) fail rules they do not name:\n{}\nreports kept in {}",
        extra.len(),
        extra
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        dir.path.display()
    );
    assert!(
        bad.is_empty(),
        "{} row(s) not caught:\n{}\nreports kept in {}",
        bad.len(),
        bad.iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        dir.path.display()
    );
    // `--coverage min` is the proof that the cheapest run still catches every fault: each row
    // was caught by the one minimal set, none needed every test.
    let needed_all: Vec<&&str> = rows
        .iter()
        .filter(|r| r.contains("✅") && !r.contains("✅ clean") && !r.contains("(--coverage min)"))
        .collect();
    assert!(
        needed_all.is_empty(),
        "{} fault(s) the --coverage min set did not catch:\n{}",
        needed_all.len(),
        needed_all
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
}

#[test]
fn every_variant_passes_and_the_combined_set_still_catches_every_fault() {
    let (dir, out, md) = run_matrix("variant");
    let variants = rpconform(&["serve", "--list-variants"], common::QUICK_TIMEOUT);
    let listed: Vec<String> = variants
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(listed.len() >= 15, "{}", variants.tail(2000));
    for v in &listed {
        assert!(
            md.contains(&format!("| `{v}` |")),
            "variant {v} has no row\n{md}"
        );
    }
    assert!(md.contains("| `compatible-set` |"), "{md}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| `")).collect();
    let bad: Vec<&&str> = rows.iter().filter(|r| !r.contains("✅")).collect();
    assert!(
        bad.is_empty(),
        "{} row(s) failed:\n{}\nreports kept in {}",
        bad.len(),
        bad.iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        dir.path.display()
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
}
