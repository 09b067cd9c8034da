//! Results as a run produces them: [`ResultsWriter`] appends each finished test to
//! `<report-dir>/results.jsonl` (one JSON line each), keeping the exchanges the transcript
//! policy asks for, so memory never holds more than one test's transcript; `write_all` then
//! reads that file back, streaming, into the reports.
//!
//! Transcript policy (`--transcripts`):
//! - `failures` (default): every exchange of a test that failed, errored or warned; for the
//!   others the first [`SAMPLE`] exchanges the scenario's own steps sent (bodies cut to
//!   [`SAMPLE_BODY`] characters) and every exchange a failure cites (an ambient rule broken in
//!   a passing test keeps its evidence);
//! - `all`: every exchange of every test;
//! - `none`: no exchange (each failure still names its exchange in one line).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::counts::{Counts, Kind};
use super::{ScenarioResult, Transcript, render};
use crate::http::{Exchange, Role};

/// Exchanges kept of a passing test under `failures`.
pub const SAMPLE: usize = 2;
/// Body characters kept in a sampled exchange.
pub const SAMPLE_BODY: usize = 1000;

/// Which exchanges reports keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transcripts {
    All,
    #[default]
    Failures,
    None,
}

impl Transcripts {
    pub const NAMES: [&'static str; 3] = ["all", "failures", "none"];

    pub fn name(self) -> &'static str {
        match self {
            Transcripts::All => "all",
            Transcripts::Failures => "failures",
            Transcripts::None => "none",
        }
    }
}

impl std::str::FromStr for Transcripts {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Transcripts::All),
            "failures" => Ok(Transcripts::Failures),
            "none" => Ok(Transcripts::None),
            _ => Err(format!(
                "--transcripts takes {} (got `{s}`)",
                Transcripts::NAMES.join(", ")
            )),
        }
    }
}

fn cut_body(mut x: Exchange, max: usize) -> Exchange {
    if let Some(b) = x.request_body.take() {
        x.request_body = Some(crate::http::cut(&b, max));
    }
    if let Some(r) = x.response.as_mut() {
        r.body = crate::http::cut(&r.body, max);
    }
    x
}

/// A copy of a result as reports keep it: each failure names its exchange in one line, and
/// only the exchanges the policy keeps are there.
pub fn apply_policy(r: &ScenarioResult, policy: Transcripts) -> ScenarioResult {
    let mut out = ScenarioResult {
        name: r.name.clone(),
        suite: r.suite.clone(),
        suite_file: r.suite_file.clone(),
        scenario: r.scenario.clone(),
        type_name: r.type_name.clone(),
        row: r.row.clone(),
        at: r.at.clone(),
        status: r.status.clone(),
        duration_ms: r.duration_ms,
        cleanup_ms: r.cleanup_ms,
        verdicts: r.verdicts.clone(),
        polls: r.polls.clone(),
        notes: r.notes.clone(),
        exchanges: Vec::new(),
        stated: r.stated.clone(),
        transcript: None,
    };
    if let Some(t) = &r.transcript {
        // Already through a writer (a merge): keep what it kept.
        out.exchanges = r.exchanges.clone();
        out.transcript = Some(t.clone());
        return out;
    }
    let find = |seq: u64| r.exchanges.iter().find(|x| x.seq == seq);
    let mut cited = BTreeSet::new();
    for f in out.verdicts.iter_mut().flat_map(|v| v.failures.iter_mut()) {
        if f.request.is_none() {
            f.request = f.exchange.and_then(find).map(render::exchange_line);
        }
        cited.extend(f.exchange);
        cited.extend(f.last_exchange);
    }
    // A flaky test keeps every exchange that needed a retry, with its attempts.
    cited.extend(
        r.exchanges
            .iter()
            .filter(|x| !x.retried.is_empty())
            .map(|x| x.seq),
    );
    let failing = matches!(
        Kind::of(&r.status),
        Kind::Failed | Kind::Error | Kind::Warned
    );
    let total = r.exchanges.len();
    let (kept, exchanges) = match policy {
        Transcripts::All => ("full", r.exchanges.clone()),
        Transcripts::Failures if failing => ("full", r.exchanges.clone()),
        Transcripts::Failures => {
            let mut sample: BTreeSet<u64> = r
                .exchanges
                .iter()
                .filter(|x| x.role == Role::Step)
                .chain(r.exchanges.iter())
                .map(|x| x.seq)
                .take(SAMPLE)
                .collect();
            if sample.len() < SAMPLE {
                sample.extend(r.exchanges.iter().map(|x| x.seq).take(SAMPLE));
            }
            let kept: Vec<Exchange> = r
                .exchanges
                .iter()
                .filter(|x| sample.contains(&x.seq) || cited.contains(&x.seq))
                .map(|x| {
                    if cited.contains(&x.seq) {
                        x.clone()
                    } else {
                        cut_body(x.clone(), SAMPLE_BODY)
                    }
                })
                .collect();
            let mode = if kept.len() == total {
                "full"
            } else {
                "sample"
            };
            (mode, kept)
        }
        Transcripts::None => ("none", Vec::new()),
    };
    out.exchanges = exchanges;
    out.transcript = Some(Transcript {
        kept: kept.into(),
        total,
    });
    out
}

/// Appends finished tests to `results.jsonl`, one JSON line each, as they finish.
#[derive(Debug)]
pub struct ResultsWriter {
    out: BufWriter<File>,
    path: PathBuf,
    policy: Transcripts,
    counts: Counts,
    failing: BTreeSet<String>,
    warning: BTreeSet<String>,
}

/// The file the writer appends to and `write_all` reads.
pub const RESULTS_FILE: &str = "results.jsonl";

impl ResultsWriter {
    /// Start `<dir>/results.jsonl` afresh (the directory is created).
    pub fn create(dir: &Path, policy: Transcripts) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(RESULTS_FILE);
        let file = File::create(&path)?;
        Ok(ResultsWriter {
            out: BufWriter::new(file),
            path,
            policy,
            counts: Counts::default(),
            failing: BTreeSet::new(),
            warning: BTreeSet::new(),
        })
    }

    /// Append one finished test (the transcript policy applied); the line is on disk when this
    /// returns.
    pub fn push(&mut self, r: &ScenarioResult) -> io::Result<()> {
        let kept = apply_policy(r, self.policy);
        serde_json::to_writer(&mut self.out, &kept).map_err(io::Error::other)?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        self.counts.add(r);
        for v in r.verdicts.iter().filter(|v| v.failed_outcome()) {
            if v.level == "MUST" {
                self.failing.insert(v.rule.clone());
            } else {
                self.warning.insert(v.rule.clone());
            }
        }
        self.counts.rules.failed = self.failing.len();
        self.counts.rules.failing = self.failing.iter().cloned().collect();
        self.counts.rules.warned = self.warning.len();
        self.counts.rules.warning = self.warning.iter().cloned().collect();
        Ok(())
    }

    /// Tests so far, and the rules failed so far (MUST rules as failed, others as warned).
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flush and close; the counts so far.
    pub fn finish(mut self) -> io::Result<Counts> {
        self.out.flush()?;
        self.out.get_ref().sync_all()?;
        Ok(self.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Role;
    use crate::report::Status;
    use crate::report::fixtures::{exchange, faulty_run, result};

    fn busy(status: Status) -> ScenarioResult {
        let mut r = result("s", "busy", 3, status);
        let big = "x".repeat(5000);
        r.exchanges = (1..=20)
            .map(|i| {
                let mut x = exchange(i, "GET", "http://h/r", 200);
                x.role = if i == 5 { Role::Step } else { Role::Setup };
                x.response.as_mut().unwrap().body = big.clone();
                x
            })
            .collect();
        r
    }

    #[test]
    fn passing_tests_keep_a_bounded_sample_and_failing_ones_everything() {
        let kept = apply_policy(&busy(Status::Passed), Transcripts::Failures);
        assert_eq!(kept.exchanges.len(), SAMPLE);
        assert_eq!(
            kept.exchanges[1].seq, 5,
            "the scenario's own request is sampled"
        );
        assert!(kept.exchanges[0].response.as_ref().unwrap().body.len() < 1100);
        assert_eq!(
            kept.transcript,
            Some(Transcript {
                kept: "sample".into(),
                total: 20
            })
        );
        let kept = apply_policy(&busy(Status::Failed), Transcripts::Failures);
        assert_eq!(kept.exchanges.len(), 20);
        assert_eq!(kept.transcript.as_ref().unwrap().kept, "full");
        assert_eq!(
            kept.exchanges[0].response.as_ref().unwrap().body.len(),
            5000
        );
        let kept = apply_policy(&busy(Status::Passed), Transcripts::All);
        assert_eq!(kept.exchanges.len(), 20);
        let kept = apply_policy(&busy(Status::Failed), Transcripts::None);
        assert!(kept.exchanges.is_empty());
        assert_eq!(kept.transcript.as_ref().unwrap().kept, "none");
    }

    #[test]
    fn cited_exchanges_and_request_lines_survive_any_policy() {
        let run = faulty_run();
        // A passing test whose exchange broke an ambient rule keeps that exchange in full.
        let kept = apply_policy(&run[0], Transcripts::Failures);
        assert!(kept.exchanges.iter().any(|x| x.seq == 1));
        let kept = apply_policy(&run[0], Transcripts::None);
        let f = &kept.verdicts[0].failures[0];
        assert!(
            f.request
                .as_deref()
                .unwrap()
                .starts_with("#1 202 PUT http://127.0.0.1:1/")
        );
        // Applying it twice changes nothing.
        let again = apply_policy(&kept, Transcripts::All);
        assert!(again.exchanges.is_empty());
    }

    #[test]
    fn the_writer_appends_one_line_per_test_and_counts() {
        let dir = std::env::temp_dir().join(format!("rpconform-stream-{}", std::process::id()));
        let mut w = ResultsWriter::create(&dir, Transcripts::Failures).unwrap();
        for r in faulty_run() {
            w.push(&r).unwrap();
        }
        assert_eq!(w.counts().failed, 2);
        assert_eq!(w.counts().rules.failing, ["ETAG-07", "LOC-02"]);
        let c = w.finish().unwrap();
        assert_eq!((c.passed, c.failed, c.not_applicable), (1, 2, 1));
        let text = std::fs::read_to_string(dir.join(RESULTS_FILE)).unwrap();
        assert_eq!(text.lines().count(), 4);
        for line in text.lines() {
            let r: ScenarioResult = serde_json::from_str(line).unwrap();
            assert!(r.transcript.is_some());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
