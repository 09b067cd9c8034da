//! `rpconform replay PATHS...`: judge recorded traffic (HAR, Azure SDK test-proxy JSON, vcrpy
//! YAML) with the rule engine and write the same reports as `run`, one result per recording.
//!
//! Files named on the command line are read whatever their name (a pipe too: `<(...)`);
//! directories are searched (recursively, in name order, each real directory once) for
//! regular files named `*.json`, `*.har`, `*.yaml` and `*.yml` (anything else of those names,
//! a FIFO or a device, is skipped with a warning), and a file there that is JSON or YAML of
//! another shape is skipped with a note. Every file is read twice, entry by entry, never held
//! whole (`replay::streamed`): first to pair its operations and infer targets (without
//! `--target`, the set's for the reports and each file's own for judging it), then to judge
//! it; memory follows what judging holds, not the files.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::args::ReplayArgs;
use super::common::usage;
use super::outputs;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::replay::streamed::{Scanned, judge_scanned, scan};
use crate::replay::{Format, ReadOptions, infer};
use crate::report::{self, RunInfo, ScenarioResult, Status};
use crate::rules::Registry;
use crate::target::{Target, load_target};

const EXTENSIONS: &[&str] = &["json", "har", "yaml", "yml"];

/// A recording to read; `found` when a directory walk found it (not named by the user).
struct Input {
    path: PathBuf,
    found: bool,
}

/// Recordings in `dir` and below: regular files only (a FIFO named `*.har` would block the
/// read forever, a device never end), each real directory once (a symlink loop ends).
fn walk(
    dir: &Path,
    out: &mut Vec<Input>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<()> {
    if !seen.insert(std::fs::canonicalize(dir)?) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        // Following links, as a reader would.
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, out, seen)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        {
            if meta.is_file() {
                out.push(Input {
                    path: p,
                    found: true,
                });
            } else {
                eprintln!(
                    "warning: skipping {}: not a regular file (a FIFO, socket or device)",
                    p.display()
                );
            }
        }
    }
    Ok(())
}

fn inputs(paths: &[PathBuf]) -> Result<Vec<Input>, String> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out, &mut seen).map_err(|e| format!("{}: {e}", p.display()))?;
        } else if p.exists() {
            out.push(Input {
                path: p.clone(),
                found: false,
            });
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

/// Each input's name in reports: its file name, or as many of its last path components as
/// tell it from another input with the same file name (two `test_create.json` in different
/// folders are two results, never one).
fn unique_names(paths: &[&Path]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            p.components()
                .rev()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .collect();
    let suffix = |i: usize, n: usize| -> String {
        let mut v: Vec<&str> = parts[i].iter().take(n).map(String::as_str).collect();
        v.reverse();
        v.join("/")
    };
    (0..paths.len())
        .map(|i| {
            let mut n = 1;
            while n < parts[i].len()
                && (0..paths.len()).any(|k| k != i && suffix(k, n) == suffix(i, n))
            {
                n += 1;
            }
            suffix(i, n)
        })
        .collect()
}

/// A result renamed `replay::{name}`.
fn named(mut r: ScenarioResult, name: &str) -> ScenarioResult {
    r.name = format!("replay::{name}");
    r.scenario = name.to_string();
    r
}

fn error_result(path: &Path, message: String) -> ScenarioResult {
    let mut r = crate::replay::result(
        format!(
            "replay::{}",
            path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into()
            )
        ),
        "replay",
        path.display().to_string(),
        &[],
        false,
        Vec::new(),
        Vec::new(),
        0,
    );
    r.status = Status::Error(message);
    r
}

/// Write the reports (the one place `replay` and `proxy` hand results to the report module).
pub(super) fn write_reports(
    dir: &Path,
    info: &RunInfo,
    results: &[ScenarioResult],
) -> Option<report::Counts> {
    let written = report::ResultsWriter::create(dir, report::Transcripts::Failures)
        .and_then(|mut w| {
            for r in results {
                w.push(r)?;
            }
            w.finish()
        })
        .and_then(|_| report::write_all(dir, info));
    match written {
        Ok(w) => Some(w.counts),
        Err(e) => {
            eprintln!("error: cannot write reports to {}: {e}", dir.display());
            None
        }
    }
}

/// The run settings recorded in replay and proxy reports.
pub(super) fn run_info(target: &Target, strict: bool, started_at: String, ms: u64) -> RunInfo {
    RunInfo {
        rpconform_version: env!("CARGO_PKG_VERSION").into(),
        run_id: crate::runner::ids::run_id(),
        target: target.label.clone(),
        base_url: target.base(),
        time_scale: 1.0,
        accelerated: false,
        strict,
        filters: Vec::new(),
        skip: Vec::new(),
        partition: None,
        started_at,
        duration_ms: ms,
        left_behind: Vec::new(),
        faults: Vec::new(),
        profiles: target
            .profiles
            .iter()
            .map(|p| p.name().to_string())
            .collect(),
        select: Vec::new(),
        transcripts: report::Transcripts::Failures.name().into(),
        interrupted: false,
        requests: 0,
        request_rate: 0.0,
        throttling: Default::default(),
        journal: None,
        suite_set: crate::suiteset::ID.to_string(),
        catalogue: crate::rules::catalogue_id(),
        ended_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ..Default::default()
    }
}

/// The reports and `--write-target` never replace a recording, the target file or a spec.
fn outputs_apart(a: &ReplayArgs, files: &[Input], target: &Target) -> Result<(), String> {
    let mut inputs: Vec<outputs::Input> = files
        .iter()
        .map(|f| outputs::Input::new("a recording", &f.path))
        .collect();
    if let Some(t) = &a.target {
        inputs.push(outputs::Input::new("the target file", t));
    }
    if let Some(s) = &target.specs {
        inputs.extend(
            s.files
                .iter()
                .map(|f| outputs::Input::new("an OpenAPI spec", f)),
        );
    }
    let mut written = vec![("--report-dir", outputs::report_files(&a.report_dir))];
    if let Some(w) = &a.write_target {
        written.push(("--write-target", vec![w.clone()]));
    }
    outputs::refuse_overlap(&written, &inputs)
}

pub(super) fn replay(a: ReplayArgs) -> u8 {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let files = match inputs(&a.paths) {
        Ok(f) if f.is_empty() => return usage("no recording (*.json, *.har, *.yaml) found"),
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let mut opts = ReadOptions {
        format: a.format.as_deref().and_then(Format::from_name),
        body_cap: a.body_cap,
        arm_hosts: a.arm_hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
        ..Default::default()
    };
    let given = match &a.target {
        Some(t) => match load_target(t) {
            Ok(t) => Some(t),
            Err(r) => {
                eprint!("{}", r.render());
                return EXIT_USAGE;
            }
        },
        None => None,
    };
    // An inferred target's host is one the readers already take as ARM.
    if let Some(h) = given.as_ref().and_then(|t| t.base_url.host_str()) {
        opts.arm_hosts.push(h.to_ascii_lowercase());
    }
    let specs = if a.openapi.is_empty() {
        None
    } else {
        match crate::spec::Specs::load(&a.openapi) {
            Ok(s) => {
                for w in &s.warnings {
                    eprintln!("warning: {w}");
                }
                Some(std::sync::Arc::new(s))
            }
            Err(e) => return usage(format!("--openapi: {e}")),
        }
    };
    let (scans, global) = scan_all(&files, &opts, given.is_none());
    let mut target = given.unwrap_or_else(|| global.target());
    if let Some(s) = &specs {
        target.attach_specs(s.clone(), "--openapi");
    }
    if let Err(e) = outputs_apart(&a, &files, &target) {
        return usage(e);
    }
    if let Some(w) = &a.write_target {
        if let Err(e) = std::fs::write(w, crate::replay::target_yaml(&target)) {
            return usage(format!("cannot write {}: {e}", w.display()));
        }
        outln!("wrote the target to {}", w.display());
    }
    let names = unique_names(&files.iter().map(|f| f.path.as_path()).collect::<Vec<_>>());
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for ((input, name), scanned) in files.iter().zip(&names).zip(scans) {
        let judged = scanned.and_then(|(s, own)| {
            // Without a target file, each recording is judged by what it shows itself: the
            // types, capabilities and extended resources another recording (or another
            // api-version) shows are not this one's, and a file's verdict never depends on
            // which files ran with it.
            let own = a.target.is_none().then(|| {
                let mut t = own.target();
                if let Some(s) = &specs {
                    t.attach_specs(s.clone(), "--openapi");
                }
                t
            });
            let registry = Registry::default();
            let by = own.as_ref().unwrap_or(&target);
            judge_scanned(&s, &opts, by, &registry, a.strict, a.target.is_some())
        });
        let r = match judged {
            Ok(r) => named(r, name),
            // Skipped when a walk found it and it is no recording; else an error result.
            Err(e) if input.found && e.not_a_recording => {
                skipped.push(input.path.display().to_string());
                continue;
            }
            Err(e) => {
                eprintln!("error: {e}");
                results.push(named(error_result(&input.path, e.to_string()), name));
                continue;
            }
        };
        print_line(&input.path, &r);
        results.push(r);
    }
    if !skipped.is_empty() {
        outln!(
            "skipped {} file(s) that are not recordings: {}",
            skipped.len(),
            skipped.join(", ")
        );
    }
    let info = run_info(
        &target,
        a.strict,
        started_at,
        started.elapsed().as_millis() as u64,
    );
    let Some(c) = write_reports(&a.report_dir, &info, &results) else {
        return EXIT_FAILED;
    };
    outln!(
        "rpconform replay: {} recordings: {} passed, {} warned, {} failed, {} errors, {} skipped; reports in {}",
        results.len(),
        c.passed,
        c.warned,
        c.failed,
        c.errors,
        c.skipped,
        a.report_dir.display()
    );
    if c.failed_run() { EXIT_FAILED } else { EXIT_OK }
}

/// One file's first pass and the target its own entries show.
type Scan = Result<(Scanned, infer::Inference), crate::replay::ReplayError>;

/// The first pass over every file ([`crate::replay::streamed::scan`]): where each file's
/// operations end, what each shows of its target, and (when `infer`) the target all show.
fn scan_all(files: &[Input], opts: &ReadOptions, infer: bool) -> (Vec<Scan>, infer::Inference) {
    let mut global = infer::Inference::new();
    let mut scans = Vec::with_capacity(files.len());
    for input in files {
        let mut own = infer::Inference::new();
        own.begin();
        if infer {
            global.begin();
        }
        let scanned = scan(&input.path, opts, |ex, meta| {
            own.entry(ex, meta);
            if infer {
                global.entry(ex, meta);
            }
        });
        scans.push(scanned.map(|s| (s, own)));
    }
    (scans, global)
}

/// `file: passed` (or what else), with the failed rules.
fn print_line(path: &Path, r: &ScenarioResult) {
    let failed = report::render::failed_rules(r);
    outln!(
        "{}: {}{}",
        path.display(),
        match &r.status {
            Status::Passed => "passed".to_string(),
            Status::Warned => "warned".to_string(),
            Status::Failed => "failed".to_string(),
            Status::Error(e) => format!("error: {e}"),
            Status::Skipped(why) | Status::Interrupted(why) => format!("skipped: {why}"),
        },
        if failed.is_empty() {
            String::new()
        } else {
            format!(" ({})", failed.join(", "))
        }
    );
}

#[cfg(test)]
mod tests {
    use super::unique_names;
    use std::path::Path;

    #[test]
    fn recordings_with_one_file_name_in_two_folders_keep_two_names() {
        let paths = [
            Path::new("recs/storage/test_create.json"),
            Path::new("recs/web/test_create.json"),
            Path::new("recs/web/test_delete.json"),
            Path::new("a/x/same/t.json"),
            Path::new("b/x/same/t.json"),
        ];
        assert_eq!(
            unique_names(&paths),
            [
                "storage/test_create.json",
                "web/test_create.json",
                "test_delete.json",
                "a/x/same/t.json",
                "b/x/same/t.json"
            ]
        );
    }
}
