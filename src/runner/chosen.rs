//! Which tests a run runs, and what they will cost: the selection (names, rules,
//! `--coverage min`, a partition) and the plan the reports set against what the run sent.

use std::sync::Arc;

use super::harness;
use super::settings::{Settings, TargetSpec};
use crate::plan::Coverage;
use crate::scenario::{Instance, Suite, expand, select};
use crate::target::Target;

impl Settings {
    /// What the plan assumes of the RP's timing: the embedded RP's own knobs, else a real
    /// RP's (types may declare their own operation time).
    pub fn timing(&self) -> crate::plan::Timing {
        match &self.target {
            TargetSpec::Embedded { settings, .. } => crate::plan::Timing {
                operation_seconds: settings.op_duration.as_secs_f64(),
                retry_after_seconds: settings.retry_after_secs as f64,
                min_reads: settings.complete_after_reads,
                time_scale: self.time_scale,
            },
            TargetSpec::File(_) => crate::plan::Timing {
                time_scale: self.time_scale,
                ..crate::plan::Timing::ARM
            },
        }
    }
}

/// The tests a run selects from the suites, for `--list`, `plan` and the run.
pub struct Chosen {
    pub tests: Vec<Instance>,
    /// How many tests the selection left out.
    pub out: usize,
    /// What `--coverage min` kept and which tests stood in for which.
    pub coverage: Option<Coverage>,
}

/// The tests a run selects from the suites: by name and rule, then (`--coverage min`) the
/// fewest that judge what those judge, then one partition of them.
pub fn selected(suites: &[Arc<Suite>], target: &Target, s: &Settings) -> Result<Chosen, String> {
    let all = expand(suites, target);
    let total = all.len();
    let mut chosen = select(all, &s.selection, target)?;
    let mut coverage = None;
    if s.selection.minimal {
        let t = s.timing();
        let (kept, c) = crate::plan::minimal(chosen, target, &s.selection.rules, |i| {
            let c = crate::plan::estimate(i, target, &t);
            (!c.not_applicable).then_some(c.puts)
        });
        chosen = kept;
        coverage = Some(c);
    }
    let kept = harness::partitioned(chosen, s.partition);
    let out = total - kept.len();
    Ok(Chosen {
        tests: kept,
        out,
        coverage,
    })
}

pub(super) fn planned(target: &Target, s: &Settings, tests: &[Instance]) -> crate::plan::Plan {
    crate::plan::plan(
        tests,
        target,
        &s.timing(),
        &target.limits(s.max_rps),
        s.test_threads,
        s.libtest.include_ignored || s.libtest.ignored,
    )
}
