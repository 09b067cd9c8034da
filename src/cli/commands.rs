//! What each subcommand does.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::args::{CheckArgs, Cli, Command, ReportCommand, RulesArgs, RunArgs, ServeArgs};
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::http::{Http, HttpOptions, Redactor, TokenSource};
use crate::report::{self, RunInfo, Status};
use crate::runner::{self, RunCtx, harness, partition::Partition};
use crate::scenario::{LoadOptions, Suite, expand, load_suites};
use crate::target::{Target, embedded_target_yaml, load_target, parse_target};

pub fn dispatch(cli: Cli) -> u8 {
    match cli.command {
        Command::Run(a) => {
            if a.fault_matrix {
                super::matrix::fault_matrix(a)
            } else {
                run(a)
            }
        }
        Command::Check(a) => check(a),
        Command::Rules(a) => rules(a),
        Command::Serve(a) => serve(a),
        Command::Report(ReportCommand::Merge { inputs, out }) => match report::merge(&inputs, &out)
        {
            Ok(c) => {
                println!(
                    "merged {} reports into {}: {} passed, {} warned, {} failed, {} errors, {} skipped",
                    inputs.len(),
                    out.display(),
                    c.passed,
                    c.warned,
                    c.failed,
                    c.errors,
                    c.skipped
                );
                if c.failed + c.errors > 0 {
                    EXIT_FAILED
                } else {
                    EXIT_OK
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_USAGE
            }
        },
    }
}

fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error: {msg}");
    EXIT_USAGE
}

/// Split positional arguments into suite paths (they exist) and name filters (they do not).
fn paths_and_filters(args: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let mut paths = Vec::new();
    let mut filters = Vec::new();
    for a in args {
        if a.exists() {
            paths.push(a.clone());
        } else {
            filters.push(a.display().to_string());
        }
    }
    if paths.is_empty() {
        paths.push(PathBuf::from("suites"));
    }
    (paths, filters)
}

fn schema_dir(given: &Path, paths: &[PathBuf]) -> PathBuf {
    if given.is_dir() {
        return given.to_path_buf();
    }
    // Next to the suites: <suites>/../schemas.
    for p in paths {
        let base = if p.is_dir() {
            p.clone()
        } else {
            p.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let cand = base.join("..").join("schemas");
        if cand.is_dir() {
            return cand;
        }
    }
    given.to_path_buf()
}

pub(super) fn load(paths: &[PathBuf], schemas: &Path) -> Result<Vec<Arc<Suite>>, u8> {
    let opts = LoadOptions {
        schema_dir: schema_dir(schemas, paths),
    };
    match load_suites(paths, &opts) {
        Ok(s) => Ok(s.into_iter().map(Arc::new).collect()),
        Err(report) => {
            eprint!("{}", report.render());
            eprintln!(
                "error: {} problem(s) in the suites; nothing was run",
                report.len()
            );
            Err(EXIT_USAGE)
        }
    }
}

fn check(a: CheckArgs) -> u8 {
    let (paths, extra) = paths_and_filters(&a.paths);
    if !extra.is_empty() {
        return usage(format!("no such file or directory: {}", extra.join(", ")));
    }
    let suites = match load(&paths, &a.schemas) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let n: usize = suites.iter().map(|s| s.scenarios.len()).sum();
    if let Some(t) = &a.target {
        match load_target(t) {
            Ok(target) => {
                let inst = expand(&suites, &target);
                let na = inst.iter().filter(|i| i.not_applicable.is_some()).count();
                println!(
                    "{}: ok ({} tests, {} not applicable to this target)",
                    t.display(),
                    inst.len(),
                    na
                );
            }
            Err(r) => {
                eprint!("{}", r.render());
                return EXIT_USAGE;
            }
        }
    }
    println!("ok: {} suite files, {} scenarios", suites.len(), n);
    EXIT_OK
}

fn rules(a: RulesArgs) -> u8 {
    // Which suites cite each rule (best effort: suites that fail to load show no coverage).
    let mut coverage: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    if a.suites.exists()
        && let Ok(suites) = load_suites(
            std::slice::from_ref(&a.suites),
            &LoadOptions {
                schema_dir: schema_dir(Path::new("schemas"), std::slice::from_ref(&a.suites)),
            },
        )
    {
        for s in &suites {
            for sc in &s.scenarios {
                for r in sc.rules() {
                    let e = coverage.entry(r).or_default();
                    if !e.contains(&s.name) {
                        e.push(s.name.clone());
                    }
                }
            }
        }
    }
    let ambient = crate::checks::ambient_rules();
    if a.format == "json" {
        let v: Vec<serde_json::Value> = crate::rules::all()
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id, "level": r.level.as_str(), "rule": r.rule, "source": r.source,
                    "observed_by": r.observed_by,
                    "suites": coverage.get(r.id).cloned().unwrap_or_default(),
                    "ambient": ambient.contains(&r.id),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return EXIT_OK;
    }
    for r in crate::rules::all() {
        let mut cov = coverage.get(r.id).cloned().unwrap_or_default();
        if ambient.contains(&r.id) {
            cov.insert(0, "ambient".into());
        }
        let cov = if cov.is_empty() {
            "-".to_string()
        } else {
            cov.join(",")
        };
        println!(
            "{:<9} {:<6} {:<28} {}  [{}]",
            r.id,
            r.level.as_str(),
            cov,
            crate::http::cut(r.rule, 110),
            crate::http::cut(r.source, 80)
        );
    }
    EXIT_OK
}

pub(super) fn parse_faults(
    names: &[String],
) -> Result<std::collections::BTreeSet<rpconform_refrp::Fault>, String> {
    let mut set = std::collections::BTreeSet::new();
    for n in names {
        match rpconform_refrp::Fault::from_name(n) {
            Some(f) => {
                set.insert(f);
            }
            None => {
                let all: Vec<&str> = rpconform_refrp::Fault::all()
                    .iter()
                    .map(|f| f.name())
                    .collect();
                let hint = crate::diag::did_you_mean(n, all.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                return Err(format!(
                    "unknown fault `{n}`{hint}; `rpconform serve --list-faults` lists them"
                ));
            }
        }
    }
    Ok(set)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn serve(a: ServeArgs) -> u8 {
    if a.list_faults {
        print!("{}", rpconform_refrp::list_faults_text());
        return EXIT_OK;
    }
    let faults = match parse_faults(&a.faults) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let settings = rpconform_refrp::Settings {
        op_duration: Duration::from_millis(a.op_duration),
        retry_after_secs: a.retry_after,
        faults,
        ..Default::default()
    };
    let rt = runtime();
    rt.block_on(async {
        let server = match rpconform_refrp::start(settings, a.port).await {
            Ok(s) => s,
            Err(e) => return usage(format!("cannot listen on 127.0.0.1:{}: {e}", a.port)),
        };
        let base = server.base_url();
        if let Some(dir) = a.write_target.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(&a.write_target, embedded_target_yaml(&base)) {
            return usage(format!("cannot write {}: {e}", a.write_target.display()));
        }
        println!("rpconform reference RP listening on {base}");
        println!("target file: {}", a.write_target.display());
        println!(
            "try: rpconform run suites/ --target {} --time-scale 0.05",
            a.write_target.display()
        );
        let _ = tokio::signal::ctrl_c().await;
        server.shutdown().await;
        EXIT_OK
    })
}

/// Everything `run` needs once arguments are validated.
pub(super) struct RunPlan {
    pub paths: Vec<PathBuf>,
    pub filter: Option<String>,
    pub partition: Option<Partition>,
}

pub(super) fn plan(a: &RunArgs) -> Result<RunPlan, u8> {
    let (paths, mut filters) = paths_and_filters(&a.paths);
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

fn run(a: RunArgs) -> u8 {
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
        tokens,
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

#[allow(dead_code)]
fn _target_type_check(_: &Target) {}
