//! The matrices' child runs: each a `rpconform run` process of its own with the knobs of one
//! row, several at once, each read back from its report.json; and the listing of the minimal
//! set a narrowed row picks its tests from.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rpconform_refrp::{Fault, Variant};

use super::super::EXIT_USAGE;
use super::super::args::RunArgs;
use crate::report::{Status, read_report};

/// A child run that outlives this is killed and its row fails.
const RUN_BOUND: Duration = Duration::from_secs(900);

/// One child run: its knobs and where its reports go.
#[derive(Debug, Clone, Default)]
pub(super) struct Job {
    /// Row key (`none`, a fault or variant name, `compatible-set`, `compatible-set+fault`).
    pub(super) key: String,
    pub(super) faults: Vec<Fault>,
    pub(super) variants: Vec<Variant>,
    /// Run only the tests `--coverage min` keeps (else every test).
    pub(super) minimal: bool,
    /// Run exactly these tests (names from the minimal set), instead of `minimal`'s choice.
    pub(super) only: Vec<String>,
    pub(super) dir: PathBuf,
}

/// What one child run found.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Rules failed at MUST level, and at SHOULD level.
    pub(super) must: BTreeSet<String>,
    pub(super) should: BTreeSet<String>,
    /// Tests that ended in a runner error.
    pub(super) errors: Vec<String>,
    /// Why the run gave no report.
    pub(super) broken: Option<String>,
    pub(super) secs: f64,
}

impl Found {
    pub(super) fn failed(&self) -> BTreeSet<String> {
        self.must.union(&self.should).cloned().collect()
    }
}

/// The arguments every child run gets (the parent's, minus the matrix flags).
pub(super) fn child_args(
    a: &RunArgs,
    paths: &[PathBuf],
    filters: &[String],
    job: &Job,
) -> Vec<String> {
    let mut v: Vec<String> = vec!["run".into()];
    v.extend(paths.iter().map(|p| p.display().to_string()));
    v.extend([
        "--target".into(),
        "embedded".into(),
        "--strict".into(),
        "-q".into(),
        "--report-dir".into(),
        job.dir.display().to_string(),
        "--op-duration".into(),
        a.op_duration.to_string(),
        "--time-scale".into(),
        a.time_scale.to_string(),
        "--hold-reads".into(),
        a.hold_reads.to_string(),
        "--request-timeout".into(),
        a.request_timeout.to_string(),
        "--test-threads".into(),
        a.test_threads.unwrap_or(32).to_string(),
    ]);
    if let Some(d) = a.deadline {
        v.extend(["--deadline".into(), d.to_string()]);
    }
    for s in &a.schemas {
        v.extend(["--schemas".into(), s.clone()]);
    }
    // Exact names replace the filters: they were chosen among the tests the filters select.
    let names = if job.only.is_empty() {
        filters
    } else {
        &job.only
    };
    for f in names {
        v.extend(["--filter".into(), f.clone()]);
    }
    if a.exact || !job.only.is_empty() {
        v.push("--exact".into());
    }
    for s in &a.skip {
        v.extend(["--skip".into(), s.clone()]);
    }
    for f in &job.faults {
        v.extend(["--fault".into(), f.name().into()]);
    }
    for x in &job.variants {
        v.extend(["--variant".into(), x.name().into()]);
    }
    if job.only.is_empty() && (job.minimal || a.coverage == "min") {
        v.extend(["--coverage".into(), "min".into()]);
    }
    v
}

/// The tests `--coverage min` keeps with `variants` on, each with the rules it is written to
/// judge (`--list --format json`'s `judges`): runnable ones only.
pub(super) fn minimal_set(
    a: &RunArgs,
    paths: &[PathBuf],
    filters: &[String],
    variants: &[Variant],
) -> Result<Vec<(String, BTreeSet<String>)>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find rpconform: {e}"))?;
    let job = Job {
        key: "list".into(),
        variants: variants.to_vec(),
        minimal: true,
        dir: a.report_dir.clone(),
        ..Job::default()
    };
    let mut args = child_args(a, paths, filters, &job);
    args.extend(["--list".into(), "--format".into(), "json".into()]);
    let out = Command::new(exe)
        .args(&args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot list the minimal set: {e}"))?;
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cannot read the minimal set's listing: {e}"))?;
    Ok(listed
        .iter()
        .filter(|t| t["status"] == "runnable")
        .filter_map(|t| {
            let judges = t["judges"].as_array()?.iter();
            Some((
                t["name"].as_str()?.to_string(),
                judges
                    .filter_map(|r| r.as_str().map(str::to_string))
                    .collect(),
            ))
        })
        .collect())
}

/// The tests of the minimal set written to judge any of `fault`'s rules: every test of that
/// set that can catch it (a test judges no rule outside what it is written to judge).
pub(super) fn judging(set: &[(String, BTreeSet<String>)], fault: Fault) -> Vec<String> {
    set.iter()
        .filter(|(_, judges)| fault.rules().iter().any(|r| judges.contains(*r)))
        .map(|(name, _)| name.clone())
        .collect()
}

/// Run one child to its end (or kill it at the bound) and read its report.
pub(super) fn run_child(exe: &Path, args: &[String], dir: &Path) -> Found {
    let started = Instant::now();
    let _ = std::fs::create_dir_all(dir);
    let log = std::fs::File::create(dir.join("run.log"));
    let mut cmd = Command::new(exe);
    cmd.args(args).stdin(Stdio::null());
    match log.and_then(|l| Ok((l.try_clone()?, l))) {
        Ok((out, err)) => {
            cmd.stdout(out).stderr(err);
        }
        Err(_) => {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
        }
    }
    let mut found = Found::default();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            found.broken = Some(format!("cannot start {}: {e}", exe.display()));
            return found;
        }
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if started.elapsed() > RUN_BOUND => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => break None,
        }
    };
    found.secs = started.elapsed().as_secs_f64();
    let Some(status) = status else {
        found.broken = Some(format!(
            "killed after {} s (see {})",
            RUN_BOUND.as_secs(),
            dir.join("run.log").display()
        ));
        return found;
    };
    if status.code() == Some(i32::from(EXIT_USAGE)) {
        found.broken = Some(format!(
            "usage error (see {})",
            dir.join("run.log").display()
        ));
        return found;
    }
    let read = read_report(&dir.join("report.json"), &mut |_| Ok(()), &mut |r| {
        if let Status::Error(e) = &r.status {
            found
                .errors
                .push(format!("{}: {}", r.name, crate::http::cut(e, 160)));
        }
        for v in r.verdicts.iter().filter(|v| v.failed_outcome()) {
            if v.level == "MUST" {
                found.must.insert(v.rule.clone());
            } else {
                found.should.insert(v.rule.clone());
            }
        }
        Ok(())
    });
    if let Err(e) = read {
        let exit = status
            .code()
            .map_or_else(|| "by a signal".into(), |c| c.to_string());
        found.broken = Some(format!("exit {exit}, no report: {e}"));
    }
    found
}

/// The order jobs start in: those with a knob that makes the run mostly wait out a timeout
/// first (so the wait overlaps the others' work instead of being the last thing the matrix
/// does), then the rest, each group in its own order.
fn start_order(jobs: &[Job]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| !jobs[i].faults.iter().any(|f| f.waits_out_a_timeout()));
    order
}

/// Run every job, `jobs` at once; results in job order.
pub(super) fn run_all(
    a: &RunArgs,
    paths: &[PathBuf],
    filters: &[String],
    jobs: &[Job],
) -> Vec<Found> {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return jobs
                .iter()
                .map(|_| Found {
                    broken: Some(format!("cannot find the rpconform executable: {e}")),
                    ..Default::default()
                })
                .collect();
        }
    };
    let parallel = a
        .matrix_jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() + 1)
                .unwrap_or(3)
        })
        .clamp(1, 16);
    // Popped from the end.
    let mut order = start_order(jobs);
    order.reverse();
    let queue = Mutex::new(order);
    let out: Mutex<Vec<Option<Found>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..parallel {
            scope.spawn(|| {
                loop {
                    let Some(i) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop() else {
                        break;
                    };
                    let job = &jobs[i];
                    let f = run_child(&exe, &child_args(a, paths, filters, job), &job.dir);
                    eprintln!(
                        "{:<48} {}  ({:.0} s)",
                        job.key,
                        if f.broken.is_some() { "broken" } else { "done" },
                        f.secs
                    );
                    out.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(f);
                }
            });
        }
    });
    out.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Job, start_order};
    use rpconform_refrp::Fault;

    #[test]
    fn jobs_that_mostly_wait_start_first_and_the_rest_keep_their_order() {
        let job = |key: &str, faults: Vec<Fault>| Job {
            key: key.into(),
            faults,
            ..Job::default()
        };
        let jobs = [
            job("a", Vec::new()),
            job("b", vec![Fault::SlowSkus]),
            job("c", vec![Fault::FlatError]),
            job("d", vec![Fault::UnknownTerminalStatus]),
        ];
        assert_eq!(start_order(&jobs), vec![1, 3, 0, 2]);
        assert!(start_order(&[]).is_empty());
    }
}
