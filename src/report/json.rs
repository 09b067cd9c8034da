//! `report.json`: the run settings, counts, and every test with its verdicts (rule, level,
//! expected, seen, exchange) and redacted exchanges. It is also the input of `report merge`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Counts, RunInfo, ScenarioResult};

#[derive(Debug, Serialize, Deserialize)]
pub struct JsonReport {
    pub run: RunInfo,
    pub counts: Counts,
    pub results: Vec<ScenarioResult>,
}

pub fn read_json_report(path: &Path) -> Result<JsonReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not an rpconform report.json: {e}", path.display()))
}
