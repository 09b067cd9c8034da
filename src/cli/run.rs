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
use crate::report::{self, RunInfo, Status};
use crate::runner::{self, RunCtx, harness, partition::Partition};
use crate::scenario::{Suite, expand};
use crate::target::{embedded_target_yaml, load_target, parse_target};

/// Everything `run` needs once arguments are validated.
pub(super) struct RunPlan {
    pub paths: Vec<PathBuf>,
    pub filter: Option<String>,
    pub partition: Option<Partition>,
}

pub(super) fn plan(a: &RunArgs) -> Result<RunPlan, u8> {
    let (paths, mut filters) = paths_and_filters(&a.paths, &a.suites);
    // Something that looks like a path but is not there is a typo, not a name filter.
    for f in &filters {
        if f.contains('/') || f.ends_with(".yaml") || f.ends_with(".yml") {
            return Err(usage(format!("{f}: no such file or directory")));
        }
    }
    if let Some(f) = &a.filter {
        filters.push(f.clone());
    }
    if filters.len() > 1 {
        return Err(usage(format!(
            "one name filter at a time (got {}); use --skip to leave tests out",
            filters.join(", ")
        )));
    }
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
        filter: filters.pop(),
        partition,
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
    pub results: Vec<crate::report::ScenarioResult>,
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
        tokens.clone(),
        redactor.clone(),
        opts,
        target.headers.clone(),
    ) {
        Ok(h) => h,
        Err(e) => return Err(usage(e)),
    };
    let all = expand(&suites, &target);
    if let Some(f) = &plan.filter {
        let hit = all.iter().any(|i| {
            if a.exact {
                &i.name == f
            } else {
                i.name.contains(f.as_str())
            }
        });
        if !hit {
            if let Some(s) = server {
                rt.block_on(s.shutdown());
            }
            return Err(usage(format!(
                "no test name matches `{f}`; `--list` shows them"
            )));
        }
    }
    let instances = harness::partitioned(all, plan.partition);
    let label = target.label.clone();
    // Shown in every report: without the userinfo of `https://user:password@host`.
    let base_url = redactor.text(&target.base());
    let ctx = Arc::new(RunCtx::new(
        target,
        http,
        a.time_scale,
        a.strict,
        run_id.clone(),
    ));
    let args = libtest_mimic::Arguments {
        filter: plan.filter.clone(),
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
        let _ = libtest_mimic::run(
            &args,
            instances
                .iter()
                .map(|i| libtest_mimic::Trial::test(i.name.clone(), || Ok(())))
                .collect(),
        );
        return Ok(RunOutcome {
            exit: EXIT_OK,
            results: Vec::new(),
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
            ctx.http.cancel_auth();
            wait_for_signal().await;
            std::process::exit(130);
        });
    }
    // Token, endpoint, registration, resource group: one clear error instead of one per test.
    if let Err(code) = super::doctor::gate(rt, &ctx.target, &ctx.http, &tokens, console) {
        if let Some(s) = server {
            rt.block_on(s.shutdown());
        }
        return Err(code);
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
    // URLs shown on the console and in reports: without userinfo or echoed secrets.
    let left: Vec<String> = left.iter().map(|l| redactor.text(l)).collect();
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
        filters: plan.filter.clone().into_iter().collect(),
        skip: a.skip.clone(),
        partition: plan.partition.map(|p| p.to_string()),
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        left_behind: left.clone(),
        faults: faults.iter().map(|f| f.name().to_string()).collect(),
    };
    if let Err(e) = report::write_all(&a.report_dir, &info, &results) {
        eprintln!(
            "error: cannot write reports to {}: {e}",
            a.report_dir.display()
        );
        return Err(EXIT_FAILED);
    }
    let c = report::counts(&results);
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
        println!(
            "rpconform: {} passed, {} warned, {} failed, {} errors, {} skipped{}; reports in {}",
            c.passed,
            c.warned,
            c.failed,
            c.errors,
            c.skipped,
            if info.accelerated {
                format!(" (accelerated ×{})", a.time_scale)
            } else {
                String::new()
            },
            a.report_dir.display()
        );
    }
    let exit = if c.failed + c.errors > 0 || !left.is_empty() {
        EXIT_FAILED
    } else {
        EXIT_OK
    };
    Ok(RunOutcome { exit, results })
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
