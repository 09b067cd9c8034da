//! `summary.md`: the run settings, totals, a table per suite and the failed rules, sized for a
//! CI job summary (GitHub Actions' `$GITHUB_STEP_SUMMARY`, Azure DevOps' summary tab).

use std::collections::BTreeMap;

use super::render::{failed_rules, message};
use super::{RunInfo, ScenarioResult, Status, counts};

fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn summary_md(info: &RunInfo, results: &[ScenarioResult]) -> String {
    let c = counts(results);
    let verdict = if c.failed + c.errors == 0 {
        "✅ passed"
    } else {
        "❌ failed"
    };
    let verdict = if info.interrupted {
        "⏹️ interrupted"
    } else {
        verdict
    };
    let mut out = format!("# rpconform: {verdict}\n\n");
    if info.interrupted {
        out.push_str(
            "**The run was interrupted** (Ctrl-C, SIGTERM or SIGHUP): not every test ran to its end.\n\n",
        );
    }
    out.push_str(&format!(
        "- target: `{}` ({})\n- rpconform {} · run `{}` · started {}\n- time scale: {}{}\n- strict: {}\n",
        info.target,
        info.base_url,
        info.rpconform_version,
        info.run_id,
        info.started_at,
        info.time_scale,
        if info.accelerated { " — **accelerated run: not a certification run**" } else { "" },
        info.strict
    ));
    if !info.filters.is_empty() || !info.skip.is_empty() {
        out.push_str(&format!(
            "- filters: {} · skip: {}\n",
            info.filters.join(" "),
            info.skip.join(" ")
        ));
    }
    if let Some(p) = &info.partition {
        out.push_str(&format!("- partition: {p}\n"));
    }
    if !info.faults.is_empty() {
        out.push_str(&format!(
            "- reference RP faults: {}\n",
            info.faults.join(", ")
        ));
    }
    out.push_str(&format!(
        "\n**{} passed · {} warned · {} failed · {} errors · {} skipped{}** in {:.1} s\n",
        c.passed,
        c.warned,
        c.failed,
        c.errors,
        c.skipped,
        if c.interrupted > 0 {
            format!(" · {} interrupted", c.interrupted)
        } else {
            String::new()
        },
        info.duration_ms as f64 / 1000.0
    ));
    if info.throttling.count > 0 {
        out.push_str(&format!(
            "\nThe target throttled {} request(s) (429, or 503 with Retry-After), waited out in {:.1} s and retried; throttled answers are not judged.\n",
            info.throttling.count,
            info.throttling.wait_ms as f64 / 1000.0
        ));
    }
    if !info.left_behind.is_empty() {
        out.push_str("\n## ⚠️ Left behind (could not delete)\n\n");
        for l in &info.left_behind {
            out.push_str(&format!("- {l}\n"));
        }
    }
    let mut by_suite: BTreeMap<&str, Vec<&ScenarioResult>> = BTreeMap::new();
    for r in results {
        by_suite.entry(r.suite.as_str()).or_default().push(r);
    }
    for (suite, rs) in by_suite {
        let sc = super::counts_of(rs.iter().copied());
        out.push_str(&format!(
            "\n## {suite} — {} passed, {} failed, {} errors, {} skipped\n\n| test | result | rules | detail |\n|---|---|---|---|\n",
            sc.passed + sc.warned,
            sc.failed,
            sc.errors,
            sc.skipped
        ));
        for r in rs {
            let (icon, detail) = match &r.status {
                Status::Passed => ("✅ pass", String::new()),
                Status::Warned => ("⚠️ warn", format!("SHOULD: {}", failed_rules(r).join(", "))),
                Status::Failed => ("❌ fail", message(r)),
                Status::Error(_) => ("💥 error", message(r)),
                Status::Skipped(reason) => ("⏭️ skip", reason.clone()),
                Status::Interrupted(at) => ("⏹️ interrupted", at.clone()),
            };
            let rules: Vec<&str> = r.verdicts.iter().map(|v| v.rule.as_str()).collect();
            out.push_str(&format!(
                "| `{}` | {icon} | {} | {} |\n",
                esc(&r.name),
                esc(&rules.join(" ")),
                esc(&crate::http::cut(&detail, 300))
            ));
        }
    }
    out
}
