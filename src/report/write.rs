//! From `results.jsonl` to the reports, streaming: a first pass counts the tests, builds the
//! conformance view and keeps a small index (where each line is, its suite and position, its
//! summary line); a second pass reads each test once more, in report order (suite file, then
//! line, then name), and hands it to the JUnit, JSON and HTML writers in turn. No more than one
//! test's transcript is in memory at a time (and one suite's JUnit testcases).

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom};
use std::path::Path;

use super::conformance::{Builder, Conformance, line_of};
use super::counts::Counts;
use super::html::HtmlWriter;
use super::json::JsonWriter;
use super::junit::JunitWriter;
use super::markdown::{TestLine, conformance_md, summary_md};
use super::sarif::{SARIF_FILE, SarifWriter};
use super::status::RunStatus;
use super::stream::RESULTS_FILE;
use super::{RunInfo, ScenarioResult};

/// The last line of results.jsonl: the run's status and settings, for readers of the stream
/// (`{"run_status": {...}, "run": {...}}`); skipped when the results are read back.
const STATUS_LINE_START: &str = "{\"run_status\"";

/// What writing the reports gave: the counts and the run's one status.
#[derive(Debug, Clone)]
pub struct Written {
    pub counts: Counts,
    pub status: RunStatus,
}

/// Where one test's line is in results.jsonl, and what summary.md shows of it.
struct Entry {
    offset: u64,
    len: usize,
    key: (String, usize, String),
    line: TestLine,
}

fn bad_line(path: &Path, n: usize, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}:{n}: not a test result: {e}", path.display()),
    )
}

/// Pass one: counts, the conformance view, the index (later duplicates of a name dropped).
fn scan(path: &Path, info: &RunInfo) -> io::Result<(Vec<Entry>, Counts, Conformance)> {
    let mut entries = Vec::new();
    let mut counts = Counts::default();
    let mut builder = Builder::new(info);
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let conf = builder.finish();
            counts.set_rules(&conf);
            return Ok((entries, counts, conf));
        }
        Err(e) => return Err(e),
    };
    let mut reader = BufReader::new(file);
    let mut seen = HashSet::new();
    let mut offset = 0u64;
    let mut buf = Vec::new();
    let mut n = 0;
    loop {
        buf.clear();
        let read = reader.read_until(b'\n', &mut buf)?;
        if read == 0 {
            break;
        }
        n += 1;
        let start = offset;
        offset += read as u64;
        let text = std::str::from_utf8(&buf).map_err(|e| bad_line(path, n, e))?;
        if text.trim().is_empty() || text.starts_with(STATUS_LINE_START) {
            continue;
        }
        let r: ScenarioResult = serde_json::from_str(text).map_err(|e| bad_line(path, n, e))?;
        if !seen.insert(r.name.clone()) {
            continue;
        }
        counts.add(&r);
        builder.add(&r);
        entries.push(Entry {
            offset: start,
            len: text.trim_end().len(),
            key: (r.suite_file.clone(), line_of(&r.at), r.name.clone()),
            line: TestLine::of(&r),
        });
    }
    let conf = builder.finish();
    counts.set_rules(&conf);
    entries.sort_by(|a, b| a.key.cmp(&b.key));
    Ok((entries, counts, conf))
}

fn create(dir: &Path, name: &str) -> io::Result<BufWriter<File>> {
    Ok(BufWriter::new(File::create(dir.join(name))?))
}

/// Append the status line to results.jsonl.
fn append_status(path: &Path, info: &RunInfo, status: &RunStatus) -> io::Result<()> {
    use std::io::Write;
    let line = serde_json::json!({"run_status": status, "run": info});
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(f, "{line}")?;
    f.sync_all()
}

/// Write junit.xml, report.json, summary.md, conformance.md, report.html and results.sarif into `dir` from
/// `dir/results.jsonl` (what [`super::ResultsWriter`] wrote), with the run's status computed
/// once here ([`RunStatus::compute`]) and appended to results.jsonl.
pub fn write_all(dir: &Path, info: &RunInfo) -> io::Result<Written> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(RESULTS_FILE);
    let (entries, counts, conf) = scan(&path, info)?;
    let status = RunStatus::compute(info, &counts, &conf);
    append_status(&path, info, &status)?;
    std::fs::write(
        dir.join("conformance.md"),
        conformance_md(info, &counts, &conf, &status),
    )?;
    let lines: Vec<TestLine> = entries.iter().map(|e| e.line.clone()).collect();
    std::fs::write(
        dir.join("summary.md"),
        summary_md(info, &counts, &conf, &status, &lines),
    )?;
    drop(lines);
    let mut junit = JunitWriter::begin(create(dir, "junit.xml")?, info, &counts, &conf, &status)?;
    let mut json = JsonWriter::begin(create(dir, "report.json")?, info, &counts, &conf, &status)?;
    let mut html = HtmlWriter::begin(create(dir, "report.html")?, info, &counts, &conf, &status)?;
    let mut sarif = SarifWriter::begin(create(dir, SARIF_FILE)?, info, &counts, &status)?;
    if !entries.is_empty() {
        let mut file = File::open(&path)?;
        let mut buf = Vec::new();
        for e in &entries {
            file.seek(SeekFrom::Start(e.offset))?;
            buf.resize(e.len, 0);
            file.read_exact(&mut buf)?;
            let r: ScenarioResult =
                serde_json::from_slice(&buf).map_err(|err| bad_line(&path, 0, err))?;
            junit.add(&r)?;
            json.add_raw(&buf)?;
            html.add(&r)?;
            sarif.add(&r)?;
        }
    }
    junit
        .end()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    json.end()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    html.end()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    sarif
        .end()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    Ok(Written { counts, status })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{faulty_run, info};
    use crate::report::{ResultsWriter, Transcripts};

    #[test]
    fn every_report_comes_from_the_streamed_results_in_report_order() {
        let dir = std::env::temp_dir().join(format!("rpconform-write-{}", std::process::id()));
        let mut w = ResultsWriter::create(&dir, Transcripts::Failures).unwrap();
        let mut run = faulty_run();
        run.reverse();
        for r in &run {
            w.push(r).unwrap();
        }
        // A repeated name is counted once.
        w.push(&run[0]).unwrap();
        w.finish().unwrap();
        let c = write_all(&dir, &info()).unwrap().counts;
        assert_eq!(
            (c.passed, c.failed, c.not_applicable, c.tests()),
            (1, 2, 1, 4)
        );
        assert_eq!(c.rules.failing, ["ETAG-07", "LOC-02"]);
        for f in [
            "junit.xml",
            "report.json",
            "summary.md",
            "conformance.md",
            "report.html",
            "results.sarif",
        ] {
            assert!(dir.join(f).exists(), "{f}");
        }
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap())
                .unwrap();
        let names: Vec<&str> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "async-put::create",
                "etag::if-match",
                "etag::skus",
                "headers::ids"
            ]
        );
        assert_eq!(v["counts"]["failed"], 2);
        assert_eq!(v["counts"]["rules"]["failed"], 2);
        assert_eq!(v["conformance"]["rules"][0]["id"], "ETAG-07");
        let junit = quick_junit::Report::deserialize_from_str(
            &std::fs::read_to_string(dir.join("junit.xml")).unwrap(),
        )
        .unwrap();
        let suites: Vec<&str> = junit.test_suites.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            suites,
            ["run", "conformance", "async-put", "etag", "headers"]
        );
        // results.jsonl ends with the run's status, for readers of the stream.
        let jsonl = std::fs::read_to_string(dir.join(RESULTS_FILE)).unwrap();
        let last: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
        assert_eq!(last["run_status"]["state"], "failed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_broken_results_line_is_an_error_naming_the_line() {
        let dir = std::env::temp_dir().join(format!("rpconform-write-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(RESULTS_FILE), "\n{\"name\": 3}\n").unwrap();
        let e = write_all(&dir, &info()).unwrap_err();
        assert!(
            e.to_string().contains("results.jsonl:2: not a test result"),
            "{e}"
        );
        std::fs::remove_file(dir.join(RESULTS_FILE)).unwrap();
        let c = write_all(&dir, &info()).unwrap().counts;
        assert_eq!(c.tests(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
