//! Every fault knob of the embedded reference RP is caught: for each fault that
//! `rpconform serve --list-faults` lists, a strict run of the suites with that fault on must
//! fail every rule the fault names (outcome "failed" in some result's verdicts of report.json).
//!
//! Rules that no suite cites yet and no ambient check observes (suites still being written)
//! are reported as "not yet covered" instead of failing the test; a rule that IS covered but
//! was not caught fails it. One exception: when a fault caught none of its rules and some of
//! them are not covered, its covered rules are ambient ones whose situation (a cancel, say)
//! only the missing suites create; that is "not yet covered" too, and says so.
//!
//! Runs go four at a time; the test prints one table at the end and asserts once, so a single
//! run shows every mismatch.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use common::{FAST, QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, read_report, rpconform};
use serde_json::Value;

/// How many fault runs go at once.
const PARALLEL: usize = 4;

/// One line of `serve --list-faults`: `name  RULE-01,RULE-02  description`.
#[derive(Debug, Clone)]
struct FaultSpec {
    name: String,
    rules: Vec<String>,
}

fn is_rule_id(s: &str) -> bool {
    let Some((family, num)) = s.split_once('-') else {
        return false;
    };
    !family.is_empty()
        && family.chars().all(|c| c.is_ascii_uppercase())
        && !num.is_empty()
        && num.chars().all(|c| c.is_ascii_digit())
}

fn list_faults() -> Vec<FaultSpec> {
    let out = rpconform(&["serve", "--list-faults"], QUICK_TIMEOUT);
    assert_eq!(
        out.code(),
        0,
        "serve --list-faults failed\n{}",
        out.tail(2000)
    );
    let faults: Vec<FaultSpec> = out
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut cols = line.split_whitespace();
            let name = cols.next().unwrap_or_default().to_string();
            let rules: Vec<String> = cols
                .next()
                .unwrap_or_default()
                .split(',')
                .map(str::to_string)
                .collect();
            assert!(
                !name.is_empty() && rules.iter().all(|r| is_rule_id(r)),
                "a --list-faults line is not `name  RULE-01,RULE-02  description`: {line:?}"
            );
            FaultSpec { name, rules }
        })
        .collect();
    assert!(
        !faults.is_empty(),
        "serve --list-faults listed nothing\n{}",
        out.tail(2000)
    );
    faults
}

/// Rule IDs that some suite cites or an ambient check observes.
fn covered_rules() -> BTreeSet<String> {
    let out = rpconform(&["rules", "--format", "json"], QUICK_TIMEOUT);
    assert_eq!(
        out.code(),
        0,
        "rules --format json failed\n{}",
        out.tail(2000)
    );
    let rules: Vec<Value> = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("rules --format json is not JSON: {e}"));
    rules
        .iter()
        .filter(|r| r["ambient"] == true || r["suites"].as_array().is_some_and(|s| !s.is_empty()))
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect()
}

/// What one fault run found.
#[derive(Debug, Default)]
struct Finding {
    failed: BTreeSet<String>,
    /// Why the run could not be judged (no report, usage error), if it could not.
    broken: Option<String>,
    counts: String,
    errors: Vec<String>,
    secs: f64,
}

fn run_fault(dir: &Scratch, fault: &FaultSpec) -> Finding {
    let report_dir = dir.str(&fault.name);
    // A short poll deadline: some faults (an unknown terminal status) keep every poll going
    // until it gives up, and operations here last 300 ms.
    let mut args = vec![
        "run",
        "suites",
        "--fault",
        &fault.name,
        "--strict",
        "-q",
        "--deadline",
        "3",
        "--report-dir",
        &report_dir,
    ];
    args.extend_from_slice(FAST);
    let out = rpconform(&args, RUN_TIMEOUT);
    let path = dir.join(&fault.name);
    let mut f = Finding {
        secs: out.elapsed.as_secs_f64(),
        ..Default::default()
    };
    if !path.join("report.json").exists() {
        f.broken = Some(format!(
            "no report.json (exit {}): {}",
            out.code(),
            common::tail(out.stderr.trim(), 300)
        ));
        return f;
    }
    let report = read_report(&path);
    f.counts = report["counts"].to_string();
    for r in common::results(&report) {
        if r["status"] == "error" {
            f.errors.push(format!(
                "{}: {}",
                r["name"].as_str().unwrap_or("?"),
                common::cut(r["detail"].as_str().unwrap_or(""), 160)
            ));
        }
        for v in r["verdicts"].as_array().into_iter().flatten() {
            if v["outcome"] == "failed"
                && let Some(rule) = v["rule"].as_str()
            {
                f.failed.insert(rule.to_string());
            }
        }
    }
    if out.code() == 0 && !f.failed.is_empty() {
        f.broken = Some("exit 0 although rules failed under --strict".into());
    } else if out.code() == 2 {
        f.broken = Some(format!(
            "usage error: {}",
            common::tail(out.stderr.trim(), 300)
        ));
    }
    f
}

fn join(v: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let s: Vec<String> = v.into_iter().map(|x| x.as_ref().to_string()).collect();
    if s.is_empty() {
        "-".into()
    } else {
        s.join(",")
    }
}

#[test]
fn every_fault_breaks_the_rules_it_names() {
    let faults = list_faults();
    let covered = covered_rules();
    let dir = Scratch::new("faults");

    let queue: Mutex<Vec<FaultSpec>> = Mutex::new(faults.iter().rev().cloned().collect());
    let found: Mutex<BTreeMap<String, Finding>> = Mutex::new(BTreeMap::new());
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                    let Some(fault) = next else { break };
                    let f = run_fault(&dir, &fault);
                    found
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(fault.name.clone(), f);
                }
            });
        }
    });
    let found = found.into_inner().unwrap_or_else(|e| e.into_inner());

    let mut table = format!(
        "{:<32} {:<44} {:<44} {:<30} {}\n",
        "fault", "named rules", "failed (of named)", "missed", "verdict"
    );
    let mut problems = Vec::new();
    let mut extras = String::new();
    for fault in &faults {
        let f = &found[&fault.name];
        let named: BTreeSet<String> = fault.rules.iter().cloned().collect();
        let caught: Vec<&String> = named.intersection(&f.failed).collect();
        let missed: Vec<&String> = named
            .difference(&f.failed)
            .filter(|r| covered.contains(*r))
            .collect();
        let uncovered: Vec<&String> = named
            .difference(&f.failed)
            .filter(|r| !covered.contains(*r))
            .collect();
        let verdict = if let Some(why) = &f.broken {
            problems.push(format!("{}: {why}", fault.name));
            format!("BROKEN RUN: {why}")
        } else if !missed.is_empty() && (!caught.is_empty() || uncovered.is_empty()) {
            problems.push(format!(
                "{}: covered rules not caught: {}",
                fault.name,
                join(&missed)
            ));
            format!("MISSED {}", join(&missed))
        } else if !missed.is_empty() {
            // Nothing the fault names was caught and some of it no suite cites yet: the
            // situation the fault needs (a cancel, a dependency...) belongs to those rules'
            // suites, so the covered (ambient) rules were never exercised either.
            format!(
                "not yet covered: {} (so {} not exercised)",
                join(&uncovered),
                join(&missed)
            )
        } else if !uncovered.is_empty() {
            format!("not yet covered: {}", join(&uncovered))
        } else {
            "ok".to_string()
        };
        table.push_str(&format!(
            "{:<32} {:<44} {:<44} {:<30} {verdict}  ({:.0} s)\n",
            fault.name,
            join(&fault.rules),
            join(&caught),
            join(&missed),
            f.secs
        ));
        let extra: Vec<&String> = f.failed.difference(&named).collect();
        if !extra.is_empty() || !f.errors.is_empty() {
            extras.push_str(&format!(
                "{:<32} extra failed: {}",
                fault.name,
                join(&extra)
            ));
            if !f.errors.is_empty() {
                extras.push_str(&format!(
                    "; {} runner error(s), first: {}",
                    f.errors.len(),
                    f.errors[0]
                ));
            }
            extras.push('\n');
        }
    }
    println!(
        "fault matrix ({} faults, {:.0} s):\n{table}",
        faults.len(),
        started.elapsed().as_secs_f64()
    );
    println!("rules failed beyond the named ones (informational):\n{extras}");
    assert!(
        problems.is_empty(),
        "{} fault(s) not caught:\n  {}\n\n{table}\nreports kept in {}",
        problems.len(),
        problems.join("\n  "),
        dir.path.display()
    );
}
