//! `report merge`: join the reports of partitioned runs (directories or report.json files)
//! into one report set. Each input is read one result at a time into a fresh `results.jsonl`
//! (a test in two inputs is kept once), then the reports are written from it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::json::read_report;
use super::{Counts, ResultsWriter, RunInfo, Transcripts, write_all};

/// Merge the inputs into `out`; the merged counts and settings.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<(Counts, RunInfo), String> {
    if inputs.is_empty() {
        return Err("nothing to merge".into());
    }
    let mut writer = ResultsWriter::create(out, Transcripts::All)
        .map_err(|e| format!("cannot write to {}: {e}", out.display()))?;
    let mut info: Option<RunInfo> = None;
    let mut parts = Vec::new();
    let mut left = Vec::new();
    let mut seen = HashSet::new();
    for input in inputs {
        let mut check = |r: &RunInfo| -> Result<(), String> {
            match &info {
                Some(i) if i.target != r.target || i.time_scale != r.time_scale => Err(format!(
                    "cannot merge runs against different targets or time scales ({} ×{} vs {} ×{})",
                    r.target, r.time_scale, i.target, i.time_scale
                )),
                _ => Ok(()),
            }
        };
        let mut push = |r: super::ScenarioResult| -> Result<(), String> {
            if seen.insert(r.name.clone()) {
                writer.push(&r).map_err(|e| e.to_string())?;
            }
            Ok(())
        };
        let head = read_report(input, &mut check, &mut push)?;
        let run = head.run;
        if let Some(p) = &run.partition {
            parts.push(p.clone());
        }
        left.extend(run.left_behind.iter().cloned());
        match info.as_mut() {
            None => info = Some(run),
            Some(i) => {
                i.duration_ms = i.duration_ms.max(run.duration_ms);
                i.interrupted |= run.interrupted;
            }
        }
    }
    writer
        .finish()
        .map_err(|e| format!("cannot write to {}: {e}", out.display()))?;
    let mut info = info.unwrap_or_default();
    left.sort();
    left.dedup();
    info.left_behind = left;
    info.partition = if parts.is_empty() {
        None
    } else {
        Some(format!("merged: {}", parts.join(", ")))
    };
    let counts = write_all(out, &info)
        .map_err(|e| format!("cannot write reports to {}: {e}", out.display()))?;
    Ok((counts, info))
}
