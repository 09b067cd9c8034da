//! libtest-mimic drives the tests: one trial per instance, cargo-test flags, progress lines as
//! tests finish. Trials block on the shared tokio runtime, so a run with many threads waits on
//! many polls at once while the runtime's two workers do the I/O.

use std::sync::{Arc, Mutex};

use libtest_mimic::{Arguments, Conclusion, Failed, Trial};

use super::context::RunCtx;
use super::exec::run_instance;
use super::partition::Partition;
use crate::report::{ScenarioResult, Status, render};
use crate::scenario::Instance;

/// The instances left after `--partition`, in order.
pub fn partitioned(instances: Vec<Instance>, partition: Option<Partition>) -> Vec<Instance> {
    match partition {
        None => instances,
        Some(p) => {
            let names: Vec<String> = instances.iter().map(|i| i.name.clone()).collect();
            let keep = p.select(&names);
            instances
                .into_iter()
                .zip(keep)
                .filter_map(|(i, k)| k.then_some(i))
                .collect()
        }
    }
}

fn ignored_reason(inst: &Instance) -> Option<String> {
    inst.not_applicable
        .as_ref()
        .map(|r| format!("not applicable: {r}"))
        .or_else(|| {
            inst.scenario()
                .ignore
                .as_ref()
                .map(|r| format!("ignored: {r}"))
        })
}

/// Run the trials; returns every selected test's result and libtest's conclusion.
pub fn run(
    ctx: Arc<RunCtx>,
    rt: &tokio::runtime::Handle,
    instances: Vec<Instance>,
    args: &Arguments,
) -> (Vec<ScenarioResult>, Conclusion) {
    let results: Arc<Mutex<Vec<ScenarioResult>>> = Arc::new(Mutex::new(Vec::new()));
    let mut trials = Vec::new();
    for inst in &instances {
        let ctx = ctx.clone();
        let results = results.clone();
        let inst2 = inst.clone();
        let handle = rt.clone();
        let trial = Trial::test(inst.name.clone(), move || {
            let res = handle.block_on(run_instance(&ctx, &inst2));
            let verdict = match &res.status {
                Status::Failed | Status::Error(_) => {
                    Err(Failed::from(render::failure_text(&res, false)))
                }
                _ => Ok(()),
            };
            results.lock().unwrap_or_else(|e| e.into_inner()).push(res);
            verdict
        })
        .with_ignored_flag(ignored_reason(inst).is_some());
        trials.push(trial);
    }
    // Selection as libtest sees it, so tests that were selected but not run (ignored) still
    // appear in reports as skipped with their reason.
    let selected: Vec<(bool, bool)> = trials
        .iter()
        .map(|t| (!args.is_filtered_out(t), args.is_ignored(t)))
        .collect();
    let conclusion = libtest_mimic::run(args, trials);
    let mut results = std::mem::take(&mut *results.lock().unwrap_or_else(|e| e.into_inner()));
    for (inst, (sel, ign)) in instances.iter().zip(selected) {
        if sel && ign && !results.iter().any(|r| r.name == inst.name) {
            let reason = ignored_reason(inst).unwrap_or_default();
            results.push(render::skipped_result(inst, reason));
        }
    }
    let order: std::collections::HashMap<&str, usize> = instances
        .iter()
        .enumerate()
        .map(|(i, x)| (x.name.as_str(), i))
        .collect();
    results.sort_by_key(|r| order.get(r.name.as_str()).copied().unwrap_or(usize::MAX));
    (results, conclusion)
}
