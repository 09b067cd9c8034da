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
    let mut out = format!("# rpconform: {verdict}\n\n");
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
        "\n**{} passed · {} warned · {} failed · {} errors · {} skipped** in {:.1} s\n",
        c.passed,
        c.warned,
        c.failed,
        c.errors,
        c.skipped,
        info.duration_ms as f64 / 1000.0
    ));
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
        let sc = counts(&rs.iter().map(|r| (*r).clone()).collect::<Vec<_>>());
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
