//! Reports: `junit.xml` (quick-junit), `report.json` (every verdict and exchange, for
//! machines) and `summary.md` (a table per suite, for CI job summaries), each recording the
//! run settings. `model` is what the runner hands over; `render` writes a failure once as text;
//! `merge` joins the reports of partitioned runs.

mod json;
mod junit;
mod markdown;
mod model;
pub mod render;
mod stream;

pub use json::{JsonReport, read_json_report};
pub use junit::junit_xml;
pub use markdown::summary_md;
pub use model::*;
pub use stream::{RESULTS_FILE, ResultsWriter, write_all};

use std::path::Path;

/// Counts over a run's results.
#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Counts {
    pub passed: usize,
    pub warned: usize,
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
    #[serde(default)]
    pub interrupted: usize,
}

pub fn counts(results: &[ScenarioResult]) -> Counts {
    counts_of(results)
}

/// Counts over any results, without copying them.
pub fn counts_of<'a>(results: impl IntoIterator<Item = &'a ScenarioResult>) -> Counts {
    let mut c = Counts::default();
    for r in results {
        match r.status {
            Status::Passed => c.passed += 1,
            Status::Warned => c.warned += 1,
            Status::Failed => c.failed += 1,
            Status::Error(_) => c.errors += 1,
            Status::Skipped(_) => c.skipped += 1,
            Status::Interrupted(_) => c.interrupted += 1,
        }
    }
    c
}

/// Write the three reports into `dir` from results in memory (`report merge`).
pub fn write_reports(
    dir: &Path,
    info: &RunInfo,
    results: &[ScenarioResult],
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("junit.xml"), junit_xml(info, results))?;
    let json = JsonReport {
        run: info.clone(),
        counts: counts(results),
        results: results.to_vec(),
    };
    std::fs::write(
        dir.join("report.json"),
        serde_json::to_string_pretty(&json).map_err(std::io::Error::other)?,
    )?;
    std::fs::write(dir.join("summary.md"), summary_md(info, results))?;
    Ok(())
}

/// Join the report.json of several partition directories into one report set.
pub fn merge(dirs: &[std::path::PathBuf], out: &Path) -> Result<Counts, String> {
    let mut runs = Vec::new();
    for d in dirs {
        let p = if d.is_dir() {
            d.join("report.json")
        } else {
            d.clone()
        };
        runs.push(read_json_report(&p)?);
    }
    let Some(first) = runs.first() else {
        return Err("nothing to merge".into());
    };
    let mut info = first.run.clone();
    let mut results = Vec::new();
    let mut parts = Vec::new();
    for r in &runs {
        if r.run.target != info.target || r.run.time_scale != info.time_scale {
            return Err(format!(
                "cannot merge runs against different targets or time scales ({} vs {})",
                r.run.target, info.target
            ));
        }
        if let Some(p) = &r.run.partition {
            parts.push(p.clone());
        }
        info.duration_ms = info.duration_ms.max(r.run.duration_ms);
        info.left_behind.extend(r.run.left_behind.iter().cloned());
        results.extend(r.results.iter().cloned());
    }
    info.left_behind.sort();
    info.left_behind.dedup();
    results.sort_by(|a, b| a.name.cmp(&b.name));
    results.dedup_by(|a, b| a.name == b.name);
    info.partition = if parts.is_empty() {
        None
    } else {
        Some(format!("merged: {}", parts.join(", ")))
    };
    write_reports(out, &info, &results)
        .map_err(|e| format!("cannot write reports to {}: {e}", out.display()))?;
    Ok(counts(&results))
}
