//! The two matrices of the embedded reference RP, in one test binary so they run at once
//! (their child runs mostly wait). Every run is a child process, several at once, with the
//! hold-open gate, so no verdict depends on machine load.
//!
//! - Every fault knob is caught, and a clean run fails nothing: `rpconform run suites
//!   --fault-matrix` runs the suites once with no fault and once per fault, each run writing
//!   its own report.json. The test grades every run itself, from those reports and the rules
//!   each knob names (`serve --list-faults`), never from the product's own table: every named
//!   rule failed, no other rule failed, the clean run failed nothing and ended no test in an
//!   error. Each row runs first the one set `--coverage min` keeps: every fault must be caught
//!   by it (the embedded target declares every kind of type a knob acts on).
//! - No false failure on any legal behaviour, and no fault hidden by one: `rpconform run suites
//!   --variant-matrix` runs the suites with no variant, each variant alone and every compatible
//!   variant at once, then the fault matrix with the compatible set on. Graded from each run's
//!   report.json and `serve --list-variants` / `--list-faults`: no MUST failure, no runner
//!   error, no SHOULD failure beyond the ones the variant says it departs from, nothing that
//!   leaves the run incomplete (so each could be certified but for the acceleration; a variant
//!   of the set runs alone on the tests `--coverage min` keeps, every test in the set's run,
//!   and a rule none of those judged is still a reason); every fault
//!   still fails the rules it names with the set on (but those the set hides, listed).

use crate::common;

use common::{Scratch, rpconform};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
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

/// `serve --list-X` as name → the rules in its bracketed `[tag: …]` (or, for faults, its second
/// column).
fn listed(kind: &str) -> BTreeMap<String, BTreeSet<String>> {
    let out = rpconform(&["serve", &format!("--list-{kind}")], common::QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    let mut map = BTreeMap::new();
    for line in out.stdout.lines().filter(|l| !l.trim().is_empty()) {
        let mut cols = line.split_whitespace();
        let name = cols.next().unwrap().to_string();
        let rules: BTreeSet<String> = if kind == "faults" {
            cols.next()
                .unwrap_or_default()
                .split(',')
                .map(str::to_string)
                .collect()
        } else {
            line.split("[departs from: ")
                .nth(1)
                .and_then(|t| t.split(']').next())
                .map(|t| t.split([',', ' ']).filter(|r| !r.is_empty()))
                .into_iter()
                .flatten()
                .map(str::to_string)
                .collect()
        };
        map.insert(name, rules);
    }
    assert!(!map.is_empty(), "serve --list-{kind} listed nothing");
    map
}

/// What one child run's report says: rules failed at MUST and at SHOULD level, tests that
/// ended in an error, why the run is incomplete (a MUST rule whose subject the RP offered and
/// the run did not judge).
struct Graded {
    must: BTreeSet<String>,
    should: BTreeSet<String>,
    errors: Vec<String>,
    incomplete: Vec<String>,
}

impl Graded {
    fn failed(&self) -> BTreeSet<String> {
        self.must.union(&self.should).cloned().collect()
    }
}

fn grade(dir: &Path) -> Graded {
    assert!(
        dir.join("report.json").is_file(),
        "no report.json in {} (see its run.log)",
        dir.display()
    );
    let report = common::read_report(dir);
    let mut g = Graded {
        must: BTreeSet::new(),
        should: BTreeSet::new(),
        errors: Vec::new(),
        incomplete: report["status"]["incomplete"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            // A run on the tests `--coverage min` keeps is incomplete by its choice; the rules
            // it gave no verdict are a reason of their own.
            .filter(|why| !why.ends_with("selected out (--coverage min)"))
            .collect(),
    };
    let results = common::results(&report);
    assert!(!results.is_empty(), "no test results in {}", dir.display());
    for t in results {
        if t["status"] == "error" {
            g.errors.push(t["name"].as_str().unwrap_or("?").to_string());
        }
        for v in t["verdicts"].as_array().into_iter().flatten() {
            if common::is_failed(v) {
                let rule = v["rule"].as_str().unwrap_or("?").to_string();
                if v["level"] == "MUST" {
                    g.must.insert(rule);
                } else {
                    g.should.insert(rule);
                }
            }
        }
    }
    g
}

/// One fault run graded: None when it failed exactly the named rules (beyond `allowed`).
fn fault_problem(
    name: &str,
    named: &BTreeSet<String>,
    dir: &Path,
    allowed: &BTreeSet<String>,
) -> Option<String> {
    let g = grade(dir);
    let failed = g.failed();
    let missed: Vec<&String> = named.difference(&failed).collect();
    let extra: Vec<&String> = failed
        .difference(named)
        .filter(|r| !allowed.contains(*r))
        .collect();
    (!missed.is_empty() || !extra.is_empty()).then(|| {
        format!(
            "{name}: missed {missed:?}, also failed {extra:?} ({})",
            dir.display()
        )
    })
}

/// The fault runs of one matrix directory: each fault's minimal run must catch exactly it.
fn grade_faults(
    dir: &Path,
    faults: &BTreeMap<String, BTreeSet<String>>,
    hidden: &BTreeSet<String>,
    allowed: &BTreeSet<String>,
) -> Vec<String> {
    faults
        .iter()
        .filter(|(name, _)| !hidden.contains(*name))
        .filter_map(|(name, named)| {
            fault_problem(name, named, &dir.join(format!("{name}-minimal")), allowed)
        })
        .collect()
}

#[test]
fn every_fault_breaks_the_rules_it_names_and_a_clean_run_fails_nothing() {
    let (dir, out, md) = run_matrix("fault");
    let faults = listed("faults");
    let runs = dir.join("reports/fault-matrix");
    let clean = grade(&runs.join("none"));
    assert!(
        clean.failed().is_empty() && clean.errors.is_empty(),
        "a clean run failed {:?}, errors {:?}",
        clean.failed(),
        clean.errors
    );
    // One fault fails only its own rules, and the one minimal set catches every fault.
    let problems = grade_faults(&runs, &faults, &BTreeSet::new(), &BTreeSet::new());
    assert!(
        problems.is_empty(),
        "{} fault(s) not caught exactly by the minimal set:\n{}\nreports kept in {}",
        problems.len(),
        problems.join("\n"),
        dir.path.display()
    );
    // The product's own table agrees, row for row.
    let rows = md.lines().filter(|l| l.starts_with("| `")).count();
    assert_eq!(
        rows,
        faults.len() + 1,
        "one row per fault and the clean run\n{md}"
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
}

#[test]
fn every_variant_passes_and_the_combined_set_still_catches_every_fault() {
    let (dir, out, md) = run_matrix("variant");
    let variants = listed("variants");
    assert!(variants.len() >= 15, "{variants:?}");
    let runs = dir.join("reports/variant-matrix");
    let mut problems = Vec::new();
    let mut all_departs = BTreeSet::new();
    for (name, departs) in variants
        .iter()
        .chain([(&"none".to_string(), &BTreeSet::new())])
    {
        all_departs.extend(departs.iter().cloned());
        let g = grade(&runs.join(name));
        let undocumented: Vec<&String> = g.should.difference(departs).collect();
        // A legal choice is never a reason a run is incomplete (issue 34): a rule whose subject
        // the RP does not offer is not applicable, so each variant could be certified.
        if !g.must.is_empty()
            || !g.errors.is_empty()
            || !undocumented.is_empty()
            || !g.incomplete.is_empty()
        {
            problems.push(format!(
                "{name}: MUST failed {:?}, SHOULD failed beyond its departures {undocumented:?}, errors {:?}, incomplete {:?}",
                g.must, g.errors, g.incomplete
            ));
        }
    }
    // The set's own run: every compatible variant at once (the product names the set).
    let set = grade(&runs.join("compatible-set"));
    let beyond: Vec<&String> = set.should.difference(&all_departs).collect();
    if !set.must.is_empty()
        || !set.errors.is_empty()
        || !beyond.is_empty()
        || !set.incomplete.is_empty()
    {
        problems.push(format!(
            "compatible-set: MUST failed {:?}, SHOULD beyond departures {beyond:?}, errors {:?}, incomplete {:?}",
            set.must, set.errors, set.incomplete
        ));
    }
    // With the set on, every fault it does not hide still fails the rules it names.
    let hidden: BTreeSet<String> = md
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter(|l| l.contains("`: hidden by "))
        .filter_map(|l| l.split('`').next().map(str::to_string))
        .collect();
    let faults = listed("faults");
    let set_faults = runs.join("faults");
    for (name, named) in faults.iter().filter(|(n, _)| !hidden.contains(*n)) {
        let g = grade(&set_faults.join(format!("{name}-minimal")));
        let failed = g.failed();
        let missed: Vec<&String> = named.difference(&failed).collect();
        if !missed.is_empty() {
            problems.push(format!("compatible-set+{name}: missed {missed:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}\nreports kept in {}",
        problems.len(),
        problems.join("\n"),
        dir.path.display()
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
}
