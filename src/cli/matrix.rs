//! `rpconform run --fault-matrix` and `--variant-matrix`: the suites against the embedded RP
//! many times, each run a child `rpconform run` process of its own (runs go in parallel and
//! one run's trouble never takes the others down), then one Markdown table.
//!
//! - Fault matrix (`fault-matrix.md`): a clean run must fail nothing; each fault knob's run must
//!   fail every rule the knob names (strict, so SHOULD rules count).
//! - Variant matrix (`variant-matrix.md`): every variant alone and the combined
//!   [`Variant::compatible_set`] must give no MUST failure, no runner error and no SHOULD
//!   failure beyond the ones the variant is documented to cause (`departs_from`); then the fault
//!   matrix again with the combined set on, skipping the pairs a variant hides
//!   (`hides_faults`), which the table says.
//!
//! Both use the hold-open gate (`--hold-reads`, default 3 here) so no verdict depends on
//! machine load. Exit 1 when a row fails.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rpconform_refrp::{Fault, Variant};

use super::args::RunArgs;
use super::common::load;
use super::run::plan;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::report::{Status, read_json_report};

/// Reads an operation needs before the matrices' reference RP lets it end.
const MATRIX_HOLD_READS: u32 = 3;
/// A child run that outlives this is killed and its row fails.
const RUN_BOUND: Duration = Duration::from_secs(900);

/// One child run: its knobs and where its reports go.
#[derive(Debug, Clone)]
struct Job {
    /// Row key (`none`, a fault or variant name, `compatible-set`, `compatible-set+fault`).
    key: String,
    faults: Vec<Fault>,
    variants: Vec<Variant>,
    dir: PathBuf,
}

/// What one child run found.
#[derive(Debug, Default)]
struct Found {
    /// Rules failed at MUST level, and at SHOULD level.
    must: BTreeSet<String>,
    should: BTreeSet<String>,
    /// Tests that ended in a runner error.
    errors: Vec<String>,
    /// Why the run gave no report.
    broken: Option<String>,
    secs: f64,
}

impl Found {
    fn failed(&self) -> BTreeSet<String> {
        self.must.union(&self.should).cloned().collect()
    }
}

/// The arguments every child run gets (the parent's, minus the matrix flags).
fn child_args(a: &RunArgs, paths: &[PathBuf], filter: Option<&str>, job: &Job) -> Vec<String> {
    let mut v: Vec<String> = vec!["run".into()];
    v.extend(paths.iter().map(|p| p.display().to_string()));
    v.extend([
        "--target".into(),
        "embedded".into(),
        "--strict".into(),
        "-q".into(),
        "--report-dir".into(),
        job.dir.display().to_string(),
        "--schemas".into(),
        a.schemas.display().to_string(),
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
    if let Some(f) = filter {
        v.extend(["--filter".into(), f.to_string()]);
    }
    if a.exact {
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
    v
}

/// Run one child to its end (or kill it at the bound) and read its report.
fn run_child(exe: &Path, args: &[String], dir: &Path) -> Found {
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
    let report = match read_json_report(&dir.join("report.json")) {
        Ok(r) => r,
        Err(e) => {
            found.broken = Some(format!("exit {:?}, no report: {e}", status.code()));
            return found;
        }
    };
    for r in &report.results {
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
    }
    found
}

/// Run every job, `jobs` at once; results in job order.
fn run_all(a: &RunArgs, paths: &[PathBuf], filter: Option<&str>, jobs: &[Job]) -> Vec<Found> {
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
    let queue = Mutex::new((0..jobs.len()).rev().collect::<Vec<_>>());
    let out: Mutex<Vec<Option<Found>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..parallel {
            scope.spawn(|| {
                loop {
                    let Some(i) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop() else {
                        break;
                    };
                    let job = &jobs[i];
                    let f = run_child(&exe, &child_args(a, paths, filter, job), &job.dir);
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

fn join(set: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    set.into_iter()
        .map(|s| s.as_ref().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A fault row: caught when every named rule failed.
fn fault_row(fault: Option<Fault>, f: &Found) -> (String, bool) {
    let failed = f.failed();
    let (name, named): (&str, BTreeSet<String>) = match fault {
        Some(x) => (x.name(), x.rules().iter().map(|s| s.to_string()).collect()),
        None => ("none", BTreeSet::new()),
    };
    let extra: Vec<&String> = failed.difference(&named).collect();
    let (mark, ok) = if let Some(why) = &f.broken {
        (format!("❌ could not run: {why}"), false)
    } else if fault.is_none() {
        if failed.is_empty() && f.errors.is_empty() {
            ("✅ clean".to_string(), true)
        } else {
            (
                format!(
                    "❌ failures on a conforming RP: {} (errors: {})",
                    join(&failed),
                    f.errors.join("; ")
                ),
                false,
            )
        }
    } else if named.is_subset(&failed) {
        ("✅".to_string(), true)
    } else {
        let missed: Vec<&String> = named.difference(&failed).collect();
        (format!("❌ missed {}", join(missed)), false)
    };
    (
        format!(
            "| `{name}` | {} | {} | {mark} | {} |",
            join(&named),
            join(&failed),
            join(extra)
        ),
        ok,
    )
}

/// A variant row: no MUST failure, no runner error, no SHOULD failure beyond `departs`.
fn variant_row(key: &str, departs: &BTreeSet<String>, f: &Found) -> (String, bool) {
    let undocumented: Vec<&String> = f.should.difference(departs).collect();
    let (mark, ok) = if let Some(why) = &f.broken {
        (format!("❌ could not run: {why}"), false)
    } else if !f.must.is_empty() || !f.errors.is_empty() || !undocumented.is_empty() {
        let mut why = Vec::new();
        if !f.must.is_empty() {
            why.push(format!("MUST failed: {}", join(&f.must)));
        }
        if !undocumented.is_empty() {
            why.push(format!(
                "undocumented SHOULD failures: {}",
                join(undocumented)
            ));
        }
        if !f.errors.is_empty() {
            why.push(format!(
                "{} runner error(s), first: {}",
                f.errors.len(),
                f.errors[0]
            ));
        }
        (format!("❌ {}", why.join("; ")), false)
    } else {
        ("✅".to_string(), true)
    };
    (
        format!(
            "| `{key}` | {} | {} | {mark} | {:.0} s |",
            join(departs),
            join(&f.should),
            f.secs
        ),
        ok,
    )
}

/// Shared preparation: matrix defaults, the plan, the suites (checked once here so a broken
/// suite is one usage error, not a failed row per run).
fn prepare(a: &mut RunArgs) -> Result<(Vec<PathBuf>, Option<String>), u8> {
    if a.target != "embedded" {
        eprintln!("error: the matrices run against --target embedded only");
        return Err(EXIT_USAGE);
    }
    if !a.faults.is_empty() || !a.variants.is_empty() {
        eprintln!("error: the matrices choose the --fault and --variant knobs themselves");
        return Err(EXIT_USAGE);
    }
    // A fault that never ends an operation makes every poll run to the deadline: keep it short.
    a.deadline = a.deadline.or(Some(10));
    if a.hold_reads == 0 {
        a.hold_reads = MATRIX_HOLD_READS;
    }
    let plan = plan(a)?;
    load(&plan.paths, &a.schemas)?;
    Ok((plan.paths, plan.filter))
}

fn write(base_dir: &Path, file: &str, md: &str) -> bool {
    let path = base_dir.join(file);
    let _ = std::fs::create_dir_all(base_dir);
    match std::fs::write(&path, md) {
        Ok(()) => {
            println!("written to {}", path.display());
            true
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            false
        }
    }
}

fn fault_jobs(dir: &Path, with: &[Variant], prefix: &str) -> Vec<Job> {
    Fault::all()
        .into_iter()
        .map(|f| Job {
            key: format!("{prefix}{}", f.name()),
            faults: vec![f],
            variants: with.to_vec(),
            dir: dir.join(f.name()),
        })
        .collect()
}

const FAULT_HEAD: &str = "| fault | named | failed | caught | extra |\n|---|---|---|---|---|\n";

pub fn fault_matrix(mut a: RunArgs) -> u8 {
    let (paths, filter) = match prepare(&mut a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let base_dir = a.report_dir.clone();
    let dir = base_dir.join("fault-matrix");
    let mut jobs = vec![Job {
        key: "none".into(),
        faults: Vec::new(),
        variants: Vec::new(),
        dir: dir.join("none"),
    }];
    jobs.extend(fault_jobs(&dir, &[], ""));
    let found = run_all(&a, &paths, filter.as_deref(), &jobs);
    let mut md = format!(
        "# Fault matrix\n\nEach row runs the suites against the embedded reference RP with one fault knob on \
         (`--strict`, `--hold-reads {}`).\n`named` are the rules the knob claims to break; `caught` says whether all of \
         them failed; `extra` lists other rules that failed.\n\n{FAULT_HEAD}",
        a.hold_reads
    );
    let mut ok = true;
    for (job, f) in jobs.iter().zip(&found) {
        let (row, good) = fault_row(job.faults.first().copied(), f);
        ok &= good;
        let _ = writeln!(md, "{row}");
    }
    if !write(&base_dir, "fault-matrix.md", &md) {
        return EXIT_FAILED;
    }
    if ok { EXIT_OK } else { EXIT_FAILED }
}

pub fn variant_matrix(mut a: RunArgs) -> u8 {
    let (paths, filter) = match prepare(&mut a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let base_dir = a.report_dir.clone();
    let dir = base_dir.join("variant-matrix");
    let combined = Variant::compatible_set();
    let hidden: BTreeSet<Fault> = combined
        .iter()
        .flat_map(|v| v.hides_faults().iter().copied())
        .collect();
    let mut jobs: Vec<Job> = Variant::all()
        .into_iter()
        .map(|v| Job {
            key: v.name().into(),
            faults: Vec::new(),
            variants: vec![v],
            dir: dir.join(v.name()),
        })
        .collect();
    jobs.push(Job {
        key: "compatible-set".into(),
        faults: Vec::new(),
        variants: combined.clone(),
        dir: dir.join("compatible-set"),
    });
    let variant_count = jobs.len();
    jobs.extend(
        fault_jobs(&dir.join("faults"), &combined, "compatible-set+")
            .into_iter()
            .filter(|j| !j.faults.iter().any(|f| hidden.contains(f))),
    );
    let found = run_all(&a, &paths, filter.as_deref(), &jobs);

    let mut ok = true;
    let mut md = format!(
        "# Variant matrix\n\nThe suites against the embedded reference RP with legal variant knobs on (`--strict`, \
         `--hold-reads {}`). A row passes when no MUST rule fails, no test ends in a runner error, and no SHOULD \
         rule fails beyond the ones the variant is documented to depart from (`departs from`, from \
         `Variant::departs_from`).\n\n## Each variant alone, then all compatible variants at once\n\n\
         | variants | departs from | SHOULD failed | verdict | time |\n|---|---|---|---|---|\n",
        a.hold_reads
    );
    for (job, f) in jobs.iter().zip(&found).take(variant_count) {
        let departs: BTreeSet<String> = job
            .variants
            .iter()
            .flat_map(|v| v.departs_from().iter().map(|s| s.to_string()))
            .collect();
        let (row, good) = variant_row(&job.key, &departs, f);
        ok &= good;
        let _ = writeln!(md, "{row}");
    }
    let _ = writeln!(
        md,
        "\n`compatible-set` = {}.\n\n## The fault matrix with the compatible set on\n\n\
         Each fault must still fail every rule it names.\n\n{FAULT_HEAD}",
        join(combined.iter().map(|v| v.name()))
    );
    for (job, f) in jobs.iter().zip(&found).skip(variant_count) {
        let (row, good) = fault_row(job.faults.first().copied(), f);
        ok &= good;
        let _ = writeln!(md, "{row}");
    }
    if !hidden.is_empty() {
        let _ = writeln!(
            md,
            "\nNot run (a variant of the set makes the fault's break unobservable, `Variant::hides_faults`):\n"
        );
        for f in &hidden {
            let by: Vec<&str> = combined
                .iter()
                .filter(|v| v.hides_faults().contains(f))
                .map(|v| v.name())
                .collect();
            let _ = writeln!(md, "- `{}`: hidden by {}", f.name(), join(by));
        }
    }
    if !write(&base_dir, "variant-matrix.md", &md) {
        return EXIT_FAILED;
    }
    if ok { EXIT_OK } else { EXIT_FAILED }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(must: &[&str], should: &[&str]) -> Found {
        Found {
            must: must.iter().map(|s| s.to_string()).collect(),
            should: should.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_fault_row_needs_every_named_rule() {
        let (row, ok) = fault_row(Some(Fault::DeleteNoLocation), &found(&["LOC-01"], &[]));
        assert!(!ok && row.contains("missed DEL-01"), "{row}");
        let (_, ok) = fault_row(
            Some(Fault::DeleteNoLocation),
            &found(&["LOC-01", "DEL-01", "ERR-01"], &[]),
        );
        assert!(ok);
        let (row, ok) = fault_row(None, &found(&[], &["HDR-03"]));
        assert!(!ok && row.contains("HDR-03"), "{row}");
        assert!(fault_row(None, &found(&[], &[])).1);
    }

    #[test]
    fn a_variant_row_allows_only_documented_should_failures() {
        let departs: BTreeSet<String> = ["DEL-02".to_string()].into_iter().collect();
        assert!(variant_row("no-retry-after", &departs, &found(&[], &["DEL-02"])).1);
        let (row, ok) = variant_row("x", &departs, &found(&[], &["OPRES-04"]));
        assert!(
            !ok && row.contains("undocumented SHOULD failures: OPRES-04"),
            "{row}"
        );
        let (row, ok) = variant_row("x", &departs, &found(&["PUT-03"], &[]));
        assert!(!ok && row.contains("MUST failed: PUT-03"), "{row}");
        let mut broken = found(&[], &[]);
        broken.errors.push("t: deadline".into());
        assert!(!variant_row("x", &departs, &broken).1);
    }

    #[test]
    fn child_runs_get_the_knobs_and_never_the_matrix_flags() {
        let a = RunArgs {
            paths: vec![],
            target: "embedded".into(),
            faults: vec![],
            variants: vec![],
            hold_reads: 3,
            op_duration: 100,
            time_scale: 0.01,
            strict: false,
            report_dir: "r".into(),
            schemas: "schemas".into(),
            partition: None,
            insecure: false,
            no_foreign: false,
            deadline: Some(10),
            request_timeout: 60,
            body_cap: 1,
            fault_matrix: false,
            variant_matrix: true,
            matrix_jobs: None,
            filter: None,
            exact: false,
            skip: vec![],
            list: false,
            include_ignored: false,
            ignored: false,
            test_threads: None,
            quiet: false,
        };
        let job = Job {
            key: "k".into(),
            faults: vec![Fault::FlatError],
            variants: vec![Variant::SyncPatch, Variant::WeakEtags],
            dir: "r/x".into(),
        };
        let v = child_args(&a, &[PathBuf::from("suites")], None, &job).join(" ");
        assert!(
            v.starts_with("run suites --target embedded --strict"),
            "{v}"
        );
        assert!(v.contains("--fault flat-error"), "{v}");
        assert!(
            v.contains("--variant sync-patch --variant weak-etags"),
            "{v}"
        );
        assert!(
            v.contains("--hold-reads 3") && v.contains("--deadline 10"),
            "{v}"
        );
        assert!(!v.contains("matrix"), "{v}");
    }
}
