//! Results streamed to disk as tests end (`<dir>/results.jsonl`, one result per line), so a
//! run's memory does not grow with its size; the final reports are written from that file.
//!
//! Interim implementation behind the API the reports work provides (`ResultsWriter`,
//! `write_all(dir, &info)`): report.json is copied from the stream a line at a time, and
//! junit.xml and summary.md are rendered from results that keep their exchanges only where a
//! failure's text cites them.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{Counts, RunInfo, ScenarioResult, Status, counts_of, junit_xml, summary_md};

pub const RESULTS_FILE: &str = "results.jsonl";

/// Appends one result per line to `<dir>/results.jsonl`.
pub struct ResultsWriter {
    path: PathBuf,
    out: BufWriter<File>,
    count: usize,
}

impl ResultsWriter {
    /// Start `<dir>/results.jsonl` (the directory is created; an older file is replaced).
    pub fn create(dir: &Path) -> std::io::Result<ResultsWriter> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(RESULTS_FILE);
        let out = BufWriter::new(File::create(&path)?);
        Ok(ResultsWriter {
            path,
            out,
            count: 0,
        })
    }

    pub fn push(&mut self, r: &ScenarioResult) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, r).map_err(std::io::Error::other)?;
        self.out.write_all(b"\n")?;
        self.count += 1;
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_data()
    }
}

/// What the final reports keep of a result: exchanges only where a failure's text cites them.
fn slim(mut r: ScenarioResult) -> ScenarioResult {
    if matches!(
        r.status,
        Status::Passed | Status::Skipped(_) | Status::Interrupted(_)
    ) {
        r.exchanges = Vec::new();
    } else {
        let cited: std::collections::HashSet<u64> = r
            .verdicts
            .iter()
            .flat_map(|v| v.failures.iter().filter_map(|f| f.exchange))
            .collect();
        r.exchanges.retain(|x| cited.contains(&x.seq));
    }
    r
}

/// Write junit.xml, report.json and summary.md into `dir` from `<dir>/results.jsonl`.
pub fn write_all(dir: &Path, info: &RunInfo) -> std::io::Result<Counts> {
    let path = dir.join(RESULTS_FILE);
    let mut index: Vec<(String, u64, usize)> = Vec::new();
    let mut kept: Vec<ScenarioResult> = Vec::new();
    {
        let mut reader = BufReader::new(File::open(&path)?);
        let mut line = String::new();
        let mut offset = 0u64;
        loop {
            line.clear();
            let n = reader.read_line(&mut line)?;
            if n == 0 {
                break;
            }
            if !line.trim().is_empty() {
                let r: ScenarioResult = serde_json::from_str(&line)
                    .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
                index.push((r.name.clone(), offset, line.trim_end().len()));
                kept.push(slim(r));
            }
            offset += n as u64;
        }
    }
    kept.sort_by(|a, b| a.name.cmp(&b.name));
    index.sort_by(|a, b| a.0.cmp(&b.0));
    let counts = counts_of(&kept);
    // report.json: the results copied from the stream, in name order.
    {
        let mut src = File::open(&path)?;
        let mut out = BufWriter::new(File::create(dir.join("report.json"))?);
        out.write_all(b"{\n\"run\": ")?;
        serde_json::to_writer_pretty(&mut out, info).map_err(std::io::Error::other)?;
        out.write_all(b",\n\"counts\": ")?;
        serde_json::to_writer_pretty(&mut out, &counts).map_err(std::io::Error::other)?;
        out.write_all(b",\n\"results\": [")?;
        let mut buf = Vec::new();
        for (i, (_, off, len)) in index.iter().enumerate() {
            src.seek(SeekFrom::Start(*off))?;
            buf.resize(*len, 0);
            src.read_exact(&mut buf)?;
            out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
            out.write_all(&buf)?;
        }
        out.write_all(b"\n]\n}\n")?;
        out.flush()?;
    }
    std::fs::write(dir.join("junit.xml"), junit_xml(info, &kept))?;
    std::fs::write(dir.join("summary.md"), summary_md(info, &kept))?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, status: Status) -> ScenarioResult {
        ScenarioResult {
            name: name.into(),
            suite: "s".into(),
            suite_file: "s.yaml".into(),
            scenario: "x".into(),
            type_name: None,
            row: None,
            at: "s.yaml:1:1".into(),
            status,
            duration_ms: 1,
            verdicts: Vec::new(),
            polls: Vec::new(),
            notes: Vec::new(),
            exchanges: Vec::new(),
        }
    }

    #[test]
    fn reports_come_from_the_stream_in_name_order() {
        let dir = std::env::temp_dir().join(format!("rpconform-stream-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut w = ResultsWriter::create(&dir).unwrap();
        w.push(&result("s::b", Status::Passed)).unwrap();
        w.push(&result("s::a", Status::Failed)).unwrap();
        w.push(&result("s::c", Status::Interrupted("step x".into())))
            .unwrap();
        w.finish().unwrap();
        let info: RunInfo = serde_json::from_value(serde_json::json!({
            "rpconform_version": "0", "run_id": "r", "target": "t", "base_url": "b",
            "time_scale": 1.0, "accelerated": false, "strict": false, "filters": [],
            "skip": [], "started_at": "now", "duration_ms": 1, "interrupted": true
        }))
        .unwrap();
        let c = write_all(&dir, &info).unwrap();
        assert_eq!((c.passed, c.failed, c.interrupted), (1, 1, 1));
        let report = super::super::read_json_report(&dir.join("report.json")).unwrap();
        let names: Vec<&str> = report.results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["s::a", "s::b", "s::c"]);
        assert!(report.run.interrupted);
        assert!(
            std::fs::read_to_string(dir.join("summary.md"))
                .unwrap()
                .contains("interrupted")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
