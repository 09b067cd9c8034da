//! The console's last line of a run (and of `report merge`): the run's status first, as every
//! report heads with it, then its counts. Beside both the counts and the status, so neither
//! imports the other.

use super::status::list;
use super::{Counts, RunInfo, RunStatus};

/// The one-line summary the console prints at the end of a run (and `report merge`): the run's
/// status first, as every report heads with it.
pub fn console_summary(
    c: &Counts,
    info: &RunInfo,
    dir: &std::path::Path,
    status: &RunStatus,
) -> String {
    let mut tests = format!(
        "{} passed, {} warned, {} failed, {} errors",
        c.passed, c.warned, c.failed, c.errors
    );
    if c.not_applicable > 0 {
        tests.push_str(&format!(", {} not applicable", c.not_applicable));
    }
    if c.ignored > 0 {
        tests.push_str(&format!(", {} ignored", c.ignored));
    }
    let other = c.skipped - c.not_applicable - c.ignored;
    if other > 0 {
        tests.push_str(&format!(", {other} skipped"));
    }
    if c.interrupted > 0 {
        tests.push_str(&format!(", {} interrupted", c.interrupted));
    }
    if info.selected_out > 0 {
        tests.push_str(&format!(", {} selected out", info.selected_out));
    }
    tests.push_str(&format!(", {} flaky", c.flaky));
    let r = &c.rules;
    let mut rules = String::new();
    if r.failed > 0 {
        rules.push_str(&format!("{} failed ({}), ", r.failed, list(&r.failing, 5)));
    }
    if r.warned > 0 {
        rules.push_str(&format!("{} warned ({}), ", r.warned, list(&r.warning, 5)));
    }
    rules.push_str(&format!(
        "{} passed, {} not judged, {} not applicable",
        r.passed, r.not_judged, r.not_applicable
    ));
    let mut out = format!(
        "rpconform: {}. tests: {tests} (of {}); rules: {rules}; reports in {}",
        status.headline(),
        // The tests of the suites: those the selection left out count too.
        c.tests() + info.selected_out,
        dir.display()
    );
    if info.accelerated {
        out.push_str(&format!(" (accelerated ×{})", info.time_scale));
    }
    if info.requests > 0 {
        out.push_str(&format!(
            "; {} requests ({:.1}/s)",
            info.requests, info.request_rate
        ));
    }
    out
}
