//! `rpconform run`: validate the plan, start the target (embedded or a file), run the tests,
//! clean up, write the reports.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::args::RunArgs;
use super::common::{load, paths_and_filters, runtime, usage};
use super::embedded::parse_faults;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::http::{Http, HttpOptions, Redactor, TokenSource};
use crate::report::{self, ResultsWriter, RunInfo, Status, Transcripts};
use crate::runner::{self, RunCtx, harness, partition::Partition};
use crate::scenario::{Selection, Suite, expand, select};
use crate::target::{embedded_target_yaml, load_target, parse_target};

/// Everything `run` needs once arguments are validated.
pub(super) struct RunPlan {
    pub paths: Vec<PathBuf>,
    /// Name filters, `--skip`, and rule selection: `scenario::select` applies it.
    pub selection: Selection,
    pub partition: Option<Partition>,
    pub transcripts: Transcripts,
}

pub(super) fn plan(a: &RunArgs) -> Result<RunPlan, u8> {
    let (paths, mut filters) = paths_and_filters(&a.paths);
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

pub(super) fn run(a: RunArgs) -> u8 {
    let plan = match plan(&a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let suites = match load(&plan.paths, &a.schemas) {
        Ok(s) => s,
        Err(c) => return c,
    };
    let rt = runtime();
    let faults = match parse_faults(&a.faults) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    if !faults.is_empty() && a.target != "embedded" {
        return usage("--fault only applies to --target embedded");
    }
    let outcome = run_suites(&rt, &a, &plan, suites, faults, true);
    rt.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(o) => o.exit,
        Err(code) => code,
    }
}

pub(super) struct RunOutcome {
    pub exit: u8,
    pub counts: report::Counts,
}

/// Start the target (embedded or a file), run, clean up, write reports.
pub(super) fn run_suites(
    rt: &tokio::runtime::Runtime,
    a: &RunArgs,
    plan: &RunPlan,
    suites: Vec<Arc<Suite>>,
    faults: std::collections::BTreeSet<rpconform_refrp::Fault>,
    console: bool,
) -> Result<RunOutcome, u8> {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    // The target: an in-process reference RP, or a file.
    if a.target == "embedded" && console {
        // The first poll waits the advertised Retry-After (10 s) scaled; if that outlasts the
        // operation, rules judged only while an operation runs (LOC-05, PUT-03...) get no verdict.
        let first_poll_ms = 10_000.0 * a.time_scale;
        if first_poll_ms >= a.op_duration as f64 {
            eprintln!(
                "warning: the first poll ({first_poll_ms:.0} ms) comes after the embedded RP's operations end ({} ms): \
                 rules judged while an operation runs will get no verdict; lower --time-scale or raise --op-duration",
                a.op_duration
            );
        }
    }
    let (mut target, server) = if a.target == "embedded" {
        let settings = rpconform_refrp::Settings {
            op_duration: Duration::from_millis(a.op_duration),
            faults: faults.clone(),
            ..Default::default()
        };
        let server = match rt.block_on(rpconform_refrp::start(settings, 0)) {
            Ok(s) => s,
            Err(e) => return Err(usage(format!("cannot start the embedded RP: {e}"))),
        };
        let yaml = embedded_target_yaml(&server.base_url());
        match parse_target(Path::new("embedded-target.yaml"), &yaml, "embedded") {
            Ok(t) => (t, Some(server)),
            Err(r) => {
                eprint!("{}", r.render());
                return Err(EXIT_USAGE);
            }
        }
    } else {
        match load_target(Path::new(&a.target)) {
            Ok(t) => (t, None),
            Err(r) => {
                eprint!("{}", r.render());
                return Err(EXIT_USAGE);
            }
        }
    };
    if let Some(d) = a.deadline {
        target.deadline = Duration::from_secs(d.max(1));
    }
    let run_id = runner::ids::run_id();
    if target.resource_group.create {
        target.resource_group.name = format!("{}-{run_id}", target.resource_group.name);
    }
    let redactor = Arc::new(Redactor::new(&target.secret_headers));
    let tokens = TokenSource::new(target.auth.clone(), redactor.clone());
    let opts = HttpOptions {
        request_timeout: Duration::from_secs(a.request_timeout.max(1)),
        body_cap: a.body_cap,
        insecure: a.insecure,
        follow_foreign: !a.no_foreign,
        ..Default::default()
    };
    let http = match Http::new(
        target.base_url.clone(),
        tokens,
        redactor.clone(),
        opts,
        target.headers.clone(),
    ) {
        Ok(h) => h,
        Err(e) => return Err(usage(e)),
    };
    let all = match select(expand(&suites, &target), &plan.selection, &target) {
        Ok(all) => all,
        Err(e) => {
            if let Some(s) = server {
                rt.block_on(s.shutdown());
            }
            return Err(usage(e));
        }
    };
    let instances = harness::partitioned(all, plan.partition);
    let profiles: Vec<String> = target
        .profiles
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    let label = target.label.clone();
    let base_url = target.base();
    let ctx = Arc::new(RunCtx::new(
        target,
        http,
        a.time_scale,
        a.strict,
        run_id.clone(),
    ));
    let args = libtest_mimic::Arguments {
        filter: None,
        exact: a.exact,
        skip: a.skip.clone(),
        list: a.list,
        include_ignored: a.include_ignored,
        ignored: a.ignored,
        test_threads: Some(a.test_threads.unwrap_or(32).max(1)),
        quiet: a.quiet || !console,
        // Without a console (the fault matrix), libtest's lines go to a log in the report dir.
        logfile: (!console).then(|| a.report_dir.join("libtest.log").display().to_string()),
        ..Default::default()
    };
    if !console {
        let _ = std::fs::create_dir_all(&a.report_dir);
    }
    if a.list {
        super::list::print(&instances, &ctx.target, a.format == "json");
        if let Some(s) = server {
            rt.block_on(s.shutdown());
        }
        return Ok(RunOutcome {
            exit: EXIT_OK,
            counts: report::Counts::default(),
        });
    }
    // Ctrl-C / SIGTERM: stop waiting, run teardowns, clean up, still write reports.
    {
        let ctx = ctx.clone();
        rt.spawn(async move {
            wait_for_signal().await;
            eprintln!(
                "\ninterrupted: finishing teardown and cleanup (press Ctrl-C again to abort)"
            );
            ctx.cancel.cancel();
            wait_for_signal().await;
            std::process::exit(130);
        });
    }
    if let Err(e) = rt.block_on(runner::create_resource_group(&ctx)) {
        eprintln!("error: {}", redactor.text(&e));
        if let Some(s) = server {
            rt.block_on(s.shutdown());
        }
        return Err(EXIT_FAILED);
    }
    let (results, _conclusion) = harness::run(ctx.clone(), rt.handle(), instances, &args);
    let left = rt.block_on(runner::final_cleanup(
        ctx.clone(),
        // Deletes are operations too: bound cleanup by the operation deadline, within reason.
        (ctx.target.deadline * 2).clamp(Duration::from_secs(10), Duration::from_secs(300)),
    ));
    if let Some(s) = server {
        rt.block_on(s.shutdown());
    }
    let info = RunInfo {
        rpconform_version: env!("CARGO_PKG_VERSION").into(),
        run_id,
        target: label,
        base_url,
        time_scale: a.time_scale,
        accelerated: a.time_scale != 1.0,
        strict: a.strict,
        filters: plan.selection.names.clone(),
        skip: a.skip.clone(),
        partition: plan.partition.map(|p| p.to_string()),
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        left_behind: left.clone(),
        faults: faults.iter().map(|f| f.name().to_string()).collect(),
        profiles,
        select: plan.selection.given.clone(),
        transcripts: plan.transcripts.name().into(),
        interrupted: ctx.cancel.is_cancelled(),
    };
    let written = ResultsWriter::create(&a.report_dir, plan.transcripts)
        .and_then(|mut w| {
            for r in &results {
                w.push(r)?;
            }
            w.finish()
        })
        .and_then(|_| report::write_all(&a.report_dir, &info));
    let c = match written {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "error: cannot write reports to {}: {e}",
                a.report_dir.display()
            );
            return Err(EXIT_FAILED);
        }
    };
    if console {
        for r in results.iter().filter(|r| r.status == Status::Warned) {
            println!(
                "warning: {} — SHOULD rules failed: {}",
                r.name,
                report::render::failed_rules(r).join(", ")
            );
        }
        if !left.is_empty() {
            println!(
                "warning: could not delete {} resource(s) the run created:",
                left.len()
            );
            for l in &left {
                println!("    {l}");
            }
        }
        println!("{}", report::console_summary(&c, &info, &a.report_dir));
    }
    let exit = if c.failed_run() || !left.is_empty() {
        EXIT_FAILED
    } else {
        EXIT_OK
    };
    Ok(RunOutcome { exit, counts: c })
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
