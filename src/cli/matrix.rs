//! `rpconform run --fault-matrix`: run the suites against the embedded RP once with no fault
//! and once per fault knob (strict, so SHOULD rules count), and write `fault-matrix.md`: for
//! each fault, the rules it names, the rules that failed, and whether the named ones were
//! caught. Exit 1 when the clean run fails anything or a fault's rules are not all caught.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::args::RunArgs;
use super::commands::{load, plan, run_suites};
use super::{EXIT_FAILED, EXIT_OK};
use crate::report::{ScenarioResult, Status};

fn failed_rules(results: &[ScenarioResult]) -> BTreeSet<String> {
    results
        .iter()
        .flat_map(|r| r.verdicts.iter().filter(|v| v.failed_outcome()).map(|v| v.rule.clone()))
        .collect()
}

fn errors(results: &[ScenarioResult]) -> Vec<String> {
    results.iter().filter(|r| matches!(r.status, Status::Error(_))).map(|r| r.name.clone()).collect()
}

pub fn fault_matrix(mut a: RunArgs) -> u8 {
    if a.target != "embedded" {
        eprintln!("error: --fault-matrix runs against --target embedded only");
        return super::EXIT_USAGE;
    }
    a.strict = true;
    let plan = match plan(&a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let suites = match load(&plan.paths, &a.schemas) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime");
    let base_dir = a.report_dir.clone();
    let mut md = String::from("# Fault matrix\n\nEach row runs the suites against the embedded reference RP with one fault knob on (`--strict`).\n`named` are the rules the knob claims to break; `caught` says whether all of them failed; `extra` lists other rules that failed.\n\n| fault | named | failed | caught | extra |\n|---|---|---|---|---|\n");
    let mut ok = true;
    let mut runs: Vec<(String, Vec<String>)> = vec![("none".into(), Vec::new())];
    runs.extend(rpconform_refrp::Fault::all().iter().map(|f| (f.name().to_string(), f.rules().iter().map(|s| s.to_string()).collect())));
    for (name, named) in runs {
        a.report_dir = base_dir.join("fault-matrix").join(&name);
        let faults = if name == "none" { Default::default() } else { super::commands::parse_faults(std::slice::from_ref(&name)).unwrap_or_default() };
        eprint!("fault {name:<32} ");
        let outcome = match run_suites(&rt, &a, &plan, suites.clone(), faults, false) {
            Ok(o) => o,
            Err(c) => return c,
        };
        let failed = failed_rules(&outcome.results);
        let errs = errors(&outcome.results);
        let named_set: BTreeSet<String> = named.iter().cloned().collect();
        let caught = named_set.is_subset(&failed);
        let extra: Vec<String> = failed.difference(&named_set).cloned().collect();
        let clean_ok = name != "none" || (failed.is_empty() && errs.is_empty());
        if !caught || !clean_ok {
            ok = false;
        }
        let mark = if name == "none" {
            if clean_ok { "✅ clean".to_string() } else { format!("❌ failures on a conforming RP (errors: {})", errs.join(", ")) }
        } else if caught {
            "✅".to_string()
        } else {
            let missed: Vec<String> = named_set.difference(&failed).cloned().collect();
            format!("❌ missed {}", missed.join(", "))
        };
        eprintln!("{mark}");
        let _ = writeln!(
            md,
            "| `{name}` | {} | {} | {mark} | {} |",
            named.join(" "),
            failed.iter().cloned().collect::<Vec<_>>().join(" "),
            extra.join(" ")
        );
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
