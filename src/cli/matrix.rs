//! `rpconform run --fault-matrix`: run the suites against the embedded RP once with no fault
//! and once per fault knob (strict, so SHOULD rules count), and write `fault-matrix.md`: for
//! each fault, the rules it names, the rules that failed, and whether the named ones were
//! caught. Exit 1 when the clean run fails anything or a fault's rules are not all caught.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::args::RunArgs;
use super::common::load;
use super::run::{plan, run_suites};
use super::{EXIT_FAILED, EXIT_OK};
use crate::report::Counts;

/// One matrix row: the markdown line and whether the fault was caught (or the clean run clean).
/// `failed` holds every rule that failed (the run is strict: SHOULD rules count too).
fn judge(name: &str, named: &[String], c: &Counts) -> (String, bool) {
    let failed: BTreeSet<String> = c
        .rules
        .failing
        .iter()
        .chain(&c.rules.warning)
        .cloned()
        .collect();
    let named_set: BTreeSet<String> = named.iter().cloned().collect();
    let caught = named_set.is_subset(&failed);
    let extra: Vec<String> = failed.difference(&named_set).cloned().collect();
    let (mark, ok) = if name == "none" {
        if failed.is_empty() && c.errors + c.failed == 0 {
            ("✅ clean".to_string(), true)
        } else {
            (
                format!(
                    "❌ failures on a conforming RP: {} ({} failed tests, {} errors)",
                    failed.iter().cloned().collect::<Vec<_>>().join(" "),
                    c.failed,
                    c.errors
                ),
                false,
            )
        }
    } else if caught {
        ("✅".to_string(), true)
    } else {
        let missed: Vec<String> = named_set.difference(&failed).cloned().collect();
        (format!("❌ missed {}", missed.join(", ")), false)
    };
    let row = format!(
        "| `{name}` | {} | {} | {mark} | {} |",
        named.join(" "),
        failed.iter().cloned().collect::<Vec<_>>().join(" "),
        extra.join(" ")
    );
    (row, ok)
}

pub fn fault_matrix(mut a: RunArgs) -> u8 {
    if a.target != "embedded" {
        eprintln!("error: --fault-matrix runs against --target embedded only");
        return super::EXIT_USAGE;
    }
    a.strict = true;
    // A fault that never ends an operation makes every poll run to the deadline: keep it short.
    a.deadline = a.deadline.or(Some(10));
    let plan = match plan(&a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let suites = match load(&plan.paths, &a.schemas) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let base_dir = a.report_dir.clone();
    let mut md = String::from(
        "# Fault matrix\n\nEach row runs the suites against the embedded reference RP with one fault knob on (`--strict`).\n\
         `named` are the rules the knob claims to break; `caught` says whether all of them failed; `extra` lists other rules that failed.\n\n\
         | fault | named | failed | caught | extra |\n|---|---|---|---|---|\n",
    );
    let mut runs: Vec<(String, Vec<String>)> = vec![("none".into(), Vec::new())];
    runs.extend(rpconform_refrp::Fault::all().iter().map(|f| {
        (
            f.name().to_string(),
            f.rules().iter().map(|s| s.to_string()).collect(),
        )
    }));
    // Runs mostly wait on polls: a few at once keep two cores busy without starving timing.
    let queue = std::sync::Mutex::new(runs.clone().into_iter().enumerate().collect::<Vec<_>>());
    let rows: std::sync::Mutex<Vec<(usize, String, bool)>> = std::sync::Mutex::new(Vec::new());
    let parallel = a.test_threads.unwrap_or(3).clamp(1, 8);
    std::thread::scope(|scope| {
        for _ in 0..parallel {
            scope.spawn(|| {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                loop {
                    let Some((idx, (name, named))) =
                        queue.lock().unwrap_or_else(|e| e.into_inner()).pop()
                    else {
                        break;
                    };
                    let mut args = a.clone();
                    args.report_dir = base_dir.join("fault-matrix").join(&name);
                    args.test_threads = Some(32);
                    let faults = if name == "none" {
                        Default::default()
                    } else {
                        super::embedded::parse_faults(std::slice::from_ref(&name))
                            .unwrap_or_default()
                    };
                    let (row, ok) =
                        match run_suites(&rt, &args, &plan, suites.clone(), faults, false) {
                            Ok(o) => judge(&name, &named, &o.counts),
                            Err(_) => (
                                format!(
                                    "| `{name}` | {} | | ❌ could not run | |",
                                    named.join(" ")
                                ),
                                false,
                            ),
                        };
                    eprintln!("fault {name:<36} {}", if ok { "✅" } else { "❌" });
                    rows.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((idx, row, ok));
                }
            });
        }
    });
    let mut rows = rows.into_inner().unwrap_or_else(|e| e.into_inner());
    rows.sort_by_key(|(i, _, _)| *i);
    let ok = rows.iter().all(|(_, _, ok)| *ok);
    for (_, row, _) in &rows {
        let _ = writeln!(md, "{row}");
    }
    let path = base_dir.join("fault-matrix.md");
    let _ = std::fs::create_dir_all(&base_dir);
    if let Err(e) = std::fs::write(&path, &md) {
        eprintln!("error: cannot write {}: {e}", path.display());
        return EXIT_FAILED;
    }
    println!("fault matrix written to {}", path.display());
    if ok { EXIT_OK } else { EXIT_FAILED }
}
