//! `rpconform run`: validate the arguments into a [`session::Settings`], hand the run to
//! [`session::run`] (target, journal, preflight, tests, cleanup, reports), and print its one
//! status ([`crate::report::RunStatus`]): the console's last line and the exit code (0 passed
//! or incomplete, 1 failed or not certified under `--certify`, 130 interrupted, 2 bad input).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::args::RunArgs;
use super::common::{err, load, paths_and_filters, runtime, suite_set_of, usage};
use super::embedded::{label, parse_faults, parse_variants, settings};
use super::outputs::{self, Input};
use super::signals::spawn_signal_handler;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::report::{self, Transcripts};
use crate::runner::console::{Console, ConsoleOptions};
use crate::runner::partition::Partition;
use crate::runner::session::{self, Ended, TargetSpec};
use crate::scenario::{Selection, Suite};

/// Everything `run` needs once arguments are validated.
pub(super) struct RunPlan {
    pub paths: Vec<PathBuf>,
    /// Name filters, `--skip`, and rule selection: `scenario::select` applies it.
    pub selection: Selection,
    pub partition: Option<Partition>,
    pub transcripts: Transcripts,
}

pub(super) fn plan(a: &RunArgs) -> Result<RunPlan, u8> {
    let (paths, mut filters) = paths_and_filters(&a.paths, &a.suites);
    // Something that looks like a path but is not there is a typo, not a name filter.
    for f in &filters {
        if f.contains('/') || f.ends_with(".yaml") || f.ends_with(".yml") {
            return Err(usage(format!("{f}: no such file or directory")));
        }
    }
    filters.extend(a.filters.iter().cloned());
    let selection = Selection::new(
        filters,
        a.exact,
        a.skip.clone(),
        &a.rules,
        &a.families,
        &a.profiles,
    )
    .map_err(usage)?;
    if !(a.time_scale > 0.0 && a.time_scale.is_finite() && a.time_scale <= 100.0) {
        return Err(usage(
            "--time-scale must be a number above 0 and at most 100",
        ));
    }
    // One request in 1000 s at the slowest: the interval between requests is a duration.
    if let Some(r) = a.max_rps
        && !(r >= 0.001 && r.is_finite())
    {
        return Err(usage("--max-rps must be a number from 0.001 up"));
    }
    if a.test_threads == Some(0) {
        return Err(usage("--test-threads must be at least 1"));
    }
    if a.rule_only && a.rules.is_empty() && a.families.is_empty() && a.profiles.is_empty() {
        return Err(usage(
            "--rule-only needs a rule selection (--rule, --family or --profile)",
        ));
    }
    let mut selection = selection;
    if a.coverage == "min" {
        selection.minimal("--coverage min");
    } else if a.rule_only {
        selection.minimal("--rule-only");
    }
    let partition = match &a.partition {
        Some(p) => Some(p.parse::<Partition>().map_err(usage)?),
        None => None,
    };
    Ok(RunPlan {
        paths,
        selection,
        partition,
        transcripts: a.transcripts.parse().map_err(usage)?,
    })
}

/// The suites and the run's settings, once the arguments are valid (`run` and `plan`).
fn loaded(a: &RunArgs, plan: RunPlan) -> Result<(Vec<Arc<Suite>>, session::Settings), u8> {
    let suites = load(&plan.paths, &a.schemas)?;
    let suite_set = suite_set_of(&plan.paths, &a.schemas, &suites)?;
    let mut settings = settings_of(a, plan)?;
    settings.suite_set = suite_set;
    Ok((suites, settings))
}

/// `rpconform plan`: the selection `run` would make with these options, costed.
pub(super) fn plan_command(a: RunArgs) -> u8 {
    let plan = match plan(&a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let (suites, settings) = match loaded(&a, plan) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let rt = runtime();
    let code = match session::plan(&rt, &settings, &suites) {
        Ok((p, chosen)) => {
            if a.format == "json" {
                let mut v = serde_json::to_value(&p).unwrap_or_default();
                v["selected_out"] = serde_json::json!(chosen.out);
                if let Some(c) = &chosen.coverage {
                    v["coverage"] = serde_json::to_value(c).unwrap_or_default();
                }
                outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                out!("{}", p.text());
                if let Some(c) = &chosen.coverage {
                    outln!(
                        "--coverage min: {} of {} tests cover the {} (rule, type shape) pairs the selection judges",
                        c.kept,
                        c.of,
                        c.pairs
                    );
                }
            }
            EXIT_OK
        }
        Err(e) => usage(e),
    };
    rt.shutdown_timeout(Duration::from_secs(1));
    code
}

pub(super) fn run(a: RunArgs) -> u8 {
    let mut plan = match plan(&a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    if let Some(dir) = &a.rerun_failed {
        let dir = if dir.is_empty() {
            a.report_dir.clone()
        } else {
            PathBuf::from(dir)
        };
        let path = report::report_path(&dir);
        let failed = match failed_in(&path) {
            Ok(f) => f,
            Err(e) => return usage(format!("--rerun-failed: {e}")),
        };
        if failed.is_empty() {
            err(&format!(
                "--rerun-failed: every test in {} finished and none failed; nothing to run",
                path.display()
            ));
            return EXIT_OK;
        }
        // On stderr: stdout is the test log (or `--list --format json`).
        err(&format!(
            "--rerun-failed: {} test{} failed or did not finish in {}; running {}",
            failed.len(),
            if failed.len() == 1 { "" } else { "s" },
            path.display(),
            if failed.len() == 1 { "it" } else { "them" }
        ));
        plan.selection
            .only(failed, format!("--rerun-failed={}", dir.display()));
    }
    let paths = plan.paths.clone();
    let (suites, settings) = match loaded(&a, plan) {
        Ok(x) => x,
        Err(c) => return c,
    };
    if !a.list
        && let Err(e) = outputs_apart(&a, &paths, &suites)
    {
        return usage(e);
    }
    let rt = runtime();
    let code = if a.list {
        match session::list(&rt, &settings, &suites) {
            Ok((instances, target)) => {
                super::list::print(&instances, &target, a.format == "json");
                EXIT_OK
            }
            // A target file's diagnostics come rendered, each saying `error:` already.
            Err(e) if e.starts_with("error: ") => {
                err(e.trim_end());
                EXIT_USAGE
            }
            Err(e) => usage(e),
        }
    } else {
        run_session(&rt, &a, &settings, suites)
    };
    rt.shutdown_timeout(Duration::from_secs(1));
    code
}

/// The HAR and the reports never replace the target file, its specs, a suite or a schema.
fn outputs_apart(a: &RunArgs, paths: &[PathBuf], suites: &[Arc<Suite>]) -> Result<(), String> {
    let mut inputs = Vec::new();
    if a.target != "embedded" {
        inputs.extend(outputs::target_inputs(std::path::Path::new(&a.target)));
    }
    inputs.extend(suites.iter().map(|s| Input::new("a suite", &s.path)));
    if let Ok(dir) = super::common::schema_dir(&a.schemas, paths) {
        inputs.extend(outputs::files_in(&dir, "a schema"));
    }
    let mut written = vec![("--report-dir", outputs::report_files(&a.report_dir))];
    if let Some(h) = &a.har {
        written.push(("--har", vec![h.clone()]));
    }
    outputs::refuse_overlap(&written, &inputs)
}

/// The tests of a report.json to run again, read one result at a time: those that failed or
/// errored, and those that did not finish (interrupted, or never started: a signal or
/// `--fail-fast` stopped the run first).
fn failed_in(path: &std::path::Path) -> Result<std::collections::BTreeSet<String>, String> {
    let mut failed = std::collections::BTreeSet::new();
    report::read_report(path, &mut |_| Ok(()), &mut |r| {
        let again = match &r.status {
            report::Status::Failed | report::Status::Error(_) | report::Status::Interrupted(_) => {
                true
            }
            report::Status::Skipped(why) => why.starts_with("not run:"),
            _ => false,
        };
        if again {
            failed.insert(r.name);
        }
        Ok(())
    })?;
    Ok(failed)
}

/// The run's settings from the arguments; bad input is a usage error (exit 2).
fn settings_of(a: &RunArgs, plan: RunPlan) -> Result<session::Settings, u8> {
    let faults = parse_faults(&a.faults).map_err(usage)?;
    if !faults.is_empty() && a.target != "embedded" {
        return Err(usage("--fault only applies to --target embedded"));
    }
    let variants = parse_variants(&a.variants).map_err(usage)?;
    for r in &a.rules {
        if crate::rules::lookup(r).is_none() {
            return Err(usage(format!(
                "unknown rule `{r}`; `rpconform rules` lists them"
            )));
        }
    }
    if (!a.variants.is_empty() || a.hold_reads > 0) && a.target != "embedded" {
        return Err(usage(
            "--variant and --hold-reads only apply to --target embedded",
        ));
    }
    if a.target == "embedded" && !a.list && a.hold_reads == 0 {
        // The first poll waits the advertised Retry-After (10 s) scaled; if that outlasts the
        // operation, rules judged only while an operation runs (LOC-05, PUT-03...) get no verdict.
        let first_poll_ms = 10_000.0 * a.time_scale;
        if first_poll_ms >= a.op_duration as f64 {
            err(&format!(
                "warning: the first poll ({first_poll_ms:.0} ms) comes after the embedded RP's operations end ({} ms): \
                 rules judged while an operation runs will get no verdict; lower --time-scale or raise --op-duration",
                a.op_duration
            ));
        }
    }
    let target = if a.target == "embedded" {
        TargetSpec::Embedded {
            settings: settings(
                a.op_duration,
                None,
                a.hold_reads,
                faults.clone(),
                variants.clone(),
            ),
            label: label(&variants),
            variants,
        }
    } else {
        TargetSpec::File(PathBuf::from(&a.target))
    };
    if let Some(subj) = &a.subject {
        crate::target::check_subject(subj).map_err(|e| usage(format!("--subject: {e}")))?;
    }
    Ok(session::Settings {
        suite_set: crate::suiteset::ID.to_string(),
        subject: a.subject.clone(),
        target,
        report_dir: a.report_dir.clone(),
        time_scale: a.time_scale,
        strict: a.strict,
        certify: a.certify,
        deadline: a.deadline,
        request_timeout: a.request_timeout,
        retries: a.retries,
        body_cap: a.body_cap,
        insecure: a.insecure,
        no_foreign: a.no_foreign,
        max_rps: a.max_rps,
        test_threads: a.test_threads,
        fail_fast: a.fail_fast && !a.no_fail_fast,
        selection: plan.selection,
        partition: plan.partition,
        transcripts: plan.transcripts,
        libtest: libtest_mimic::Arguments {
            filter: None,
            exact: a.exact,
            skip: a.skip.clone(),
            list: a.list,
            include_ignored: a.include_ignored,
            ignored: a.ignored,
            test_threads: a.test_threads,
            quiet: a.quiet,
            ..Default::default()
        },
        har: a.har.clone(),
        verbose: a.verbose,
        faults: faults.iter().map(|f| f.name().to_string()).collect(),
    })
}

/// Run, and print the run's status: the last line and the exit code.
fn run_session(
    rt: &tokio::runtime::Runtime,
    a: &RunArgs,
    settings: &session::Settings,
    suites: Vec<Arc<crate::scenario::Suite>>,
) -> u8 {
    let console = match Console::new(ConsoleOptions {
        quiet: a.quiet,
        color: a.color.parse().unwrap_or_default(),
        verbose: a.verbose,
        ..Default::default()
    }) {
        Ok(c) => Arc::new(c),
        Err(e) => return usage(format!("cannot write the test log: {e}")),
    };
    let signals = {
        let console = console.clone();
        move |ctx| spawn_signal_handler(rt, ctx, console)
    };
    match session::run(rt, settings, suites, console.clone(), signals) {
        Ended::Reported(r) => {
            console.line(&report::console_summary(
                &r.counts,
                &r.info,
                &a.report_dir,
                &r.status,
            ));
            r.status.exit_code()
        }
        Ended::Usage(e) => {
            err(&format!("{}\nno report was written", e.trim_end()));
            EXIT_USAGE
        }
        Ended::Failed(e) => {
            err(&format!("error: {e}"));
            EXIT_FAILED
        }
    }
}
