//! `rpconform run`: validate the plan, start the target (embedded or a file), run the tests
//! (each a task; see `runner::harness`), clean up as each ends and at the end, write the
//! reports. A journal in the report directory records what the run creates as it goes.
//!
//! Signals: the first SIGINT, SIGTERM or SIGHUP stops the tests (they end "interrupted") and
//! cleanup still runs; a second one stops cleanup from waiting (deletes already sent are
//! listed as unconfirmed); a third exits at once, leaving the journal. An interrupted run
//! exits 130 and says so in every report.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::args::RunArgs;
use super::common::{load, paths_and_filters, runtime, usage};
use super::embedded::{label, parse_faults, parse_variants, settings};
use super::signals::spawn_signal_handler;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::http::{Http, HttpOptions, Limits, Redactor, TokenSource};
use crate::report::{self, ResultsWriter, RunInfo, Throttling, Transcripts};
use crate::runner::console::{Console, ConsoleOptions};
use crate::runner::harness::{self, Durations};
use crate::runner::journal::{self, Journal};
use crate::runner::{self, RunCtx, partition::Partition};
use crate::scenario::{Selection, Suite, expand, select};
use crate::target::{embedded_target_yaml_for, load_target, parse_target};

/// The exit status of an interrupted run (128 + SIGINT), as shells report Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

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
    if let Some(r) = a.max_rps
        && !(r > 0.0 && r.is_finite())
    {
        return Err(usage("--max-rps must be a number above 0"));
    }
    if a.test_threads == Some(0) {
        return Err(usage("--test-threads must be at least 1"));
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
    if let Err(e) = parse_variants(&a.variants) {
        return usage(e);
    }
    for r in &a.rules {
        if crate::rules::lookup(r).is_none() {
            return usage(format!("unknown rule `{r}`; `rpconform rules` lists them"));
        }
    }
    if (!a.variants.is_empty() || a.hold_reads > 0) && a.target != "embedded" {
        return usage("--variant and --hold-reads only apply to --target embedded");
    }
    let outcome = run_suites(&rt, &a, &plan, suites, faults);
    rt.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(o) => o.exit,
        Err(code) => code,
    }
}

pub(super) struct RunOutcome {
    pub exit: u8,
}

/// Print to stderr without ever panicking (a closed stderr is not the run's problem).
pub(super) fn eprint_safe(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Is this a local endpoint (the embedded RP, a server on this machine)?
pub(super) fn is_local(base: &url::Url) -> bool {
    match base.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The rate limits: what `--max-rps` says, else none for a local endpoint (the embedded RP)
/// and ARM's for a real one.
fn limits(a: &RunArgs, base: &url::Url) -> Limits {
    match (a.max_rps, is_local(base)) {
        (Some(r), true) => Limits {
            max_rps: Some(r),
            max_write_rps: None,
        },
        (Some(r), false) => Limits {
            max_rps: Some(r),
            max_write_rps: Limits::ARM.max_write_rps.map(|w| w.min(r)),
        },
        (None, true) => Limits::default(),
        (None, false) => Limits::ARM,
    }
}

/// Start the target (embedded or a file), run, clean up, write reports.
pub(super) fn run_suites(
    rt: &tokio::runtime::Runtime,
    a: &RunArgs,
    plan: &RunPlan,
    suites: Vec<Arc<Suite>>,
    faults: BTreeSet<rpconform_refrp::Fault>,
) -> Result<RunOutcome, u8> {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    // The target: an in-process reference RP, or a file.
    if a.target == "embedded" && !a.list && a.hold_reads == 0 {
        // The first poll waits the advertised Retry-After (10 s) scaled; if that outlasts the
        // operation, rules judged only while an operation runs (LOC-05, PUT-03...) get no verdict.
        let first_poll_ms = 10_000.0 * a.time_scale;
        if first_poll_ms >= a.op_duration as f64 {
            eprint_safe(&format!(
                "warning: the first poll ({first_poll_ms:.0} ms) comes after the embedded RP's operations end ({} ms): \
                 rules judged while an operation runs will get no verdict; lower --time-scale or raise --op-duration",
                a.op_duration
            ));
        }
    }
    let (mut target, server) = if a.target == "embedded" {
        let variants = parse_variants(&a.variants).map_err(usage)?;
        let settings = settings(
            a.op_duration,
            None,
            a.hold_reads,
            faults.clone(),
            variants.clone(),
        );
        let server = match rt.block_on(rpconform_refrp::start(settings, 0)) {
            Ok(s) => s,
            Err(e) => return Err(usage(format!("cannot start the embedded RP: {e}"))),
        };
        let yaml = embedded_target_yaml_for(&server.base_url(), &variants);
        match parse_target(Path::new("embedded-target.yaml"), &yaml, &label(&variants)) {
            Ok(t) => (t, Some(server)),
            Err(r) => {
                eprint_safe(&r.render());
                return Err(EXIT_USAGE);
            }
        }
    } else {
        match load_target(Path::new(&a.target)) {
            Ok(t) => (t, None),
            Err(r) => {
                eprint_safe(&r.render());
                return Err(EXIT_USAGE);
            }
        }
    };
    let shutdown = |server: Option<rpconform_refrp::RunningServer>| {
        if let Some(s) = server {
            rt.block_on(s.shutdown());
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
        limits: limits(a, &target.base_url),
        throttle_budget: target.deadline,
        time_scale: a.time_scale,
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
        Err(e) => {
            shutdown(server);
            return Err(usage(e));
        }
    };
    let all = match select(expand(&suites, &target), &plan.selection, &target) {
        Ok(all) => all,
        Err(e) => {
            shutdown(server);
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
    let base_url = redactor.text(&crate::http::strip_userinfo(&target.base()));
    let args = libtest_mimic::Arguments {
        filter: None,
        exact: a.exact,
        skip: a.skip.clone(),
        list: a.list,
        include_ignored: a.include_ignored,
        ignored: a.ignored,
        test_threads: a.test_threads,
        quiet: a.quiet,
        ..Default::default()
    };
    let console = Console::new(ConsoleOptions {
        quiet: a.quiet,
        color: a.color.parse().unwrap_or_default(),
        verbose: a.verbose,
        ..Default::default()
    });
    let console = match console {
        Ok(c) => Arc::new(c),
        Err(e) => {
            shutdown(server);
            return Err(usage(format!("cannot write the test log: {e}")));
        }
    };
    if a.list {
        super::list::print(&instances, &target, a.format == "json");
        shutdown(server);
        return Ok(RunOutcome { exit: EXIT_OK });
    }
    // `--har`: every exchange appended as it happens.
    let har = match &a.har {
        Some(h) => match crate::replay::HarWriter::create(h) {
            Ok(w) => Some(Arc::new(w)),
            Err(e) => {
                shutdown(server);
                return Err(usage(format!(
                    "cannot write the HAR file {}: {e}",
                    h.display()
                )));
            }
        },
        None => None,
    };
    let mut ctx = RunCtx::new(target, http, a.time_scale, a.strict, run_id.clone());
    let shown = a.verbose.then(|| console.clone());
    if shown.is_some() || har.is_some() {
        let har = har.clone();
        ctx.observer = Some(Arc::new(move |test, ex| {
            if let Some(c) = &shown {
                c.exchange(test, ex);
            }
            if let Some(h) = &har
                && let Err(e) = h.push(ex)
            {
                eprint_safe(&format!("error: cannot write the HAR file: {e}"));
            }
        }));
    }
    let ctx = Arc::new(ctx);
    // The journal, before anything is created.
    let header = journal::Header {
        version: 1,
        run_id: run_id.clone(),
        target: label.clone(),
        target_file: (a.target != "embedded").then(|| {
            std::fs::canonicalize(&a.target)
                .unwrap_or_else(|_| PathBuf::from(&a.target))
                .display()
                .to_string()
        }),
        base_url: base_url.clone(),
        subscription: ctx.target.subscription.clone(),
        resource_group: ctx.target.resource_group.name.clone(),
        rg_created: ctx.target.resource_group.create,
        started_at: started_at.clone(),
        pid: std::process::id(),
    };
    let journal_path = match Journal::create(&a.report_dir, &header) {
        Ok((j, kept)) => {
            if let Some(k) = kept {
                console.note(&format!(
                    "warning: an earlier run's journal lists resources not confirmed gone; kept as {} (`rpconform cleanup --journal {}`)",
                    k.display(),
                    a.report_dir.display()
                ));
            }
            let p = j.path().display().to_string();
            ctx.cleanup.set_journal(j);
            Some(p)
        }
        Err(e) => {
            console.note(&format!(
                "warning: cannot write the journal in {}: {e}; a killed run would leave no record of what it created",
                a.report_dir.display()
            ));
            None
        }
    };
    let mut sink = match ResultsWriter::create(&a.report_dir, plan.transcripts) {
        Ok(w) => w,
        Err(e) => {
            shutdown(server);
            eprint_safe(&format!(
                "error: cannot write reports to {}: {e}",
                a.report_dir.display()
            ));
            return Err(EXIT_FAILED);
        }
    };
    // Signals, registered before anything is created.
    spawn_signal_handler(rt, ctx.clone(), console.clone());
    // Token, endpoint, registration, resource group: one clear error instead of one per test.
    if let Err(code) = super::doctor::gate(rt, &ctx.target, &ctx.http, &tokens) {
        shutdown(server);
        return Err(code);
    }
    if let Err(e) = rt.block_on(runner::create_resource_group(&ctx)) {
        console.note(&format!("error: {}", redactor.text(&e)));
        // It may exist even so: the final cleanup reads it and deletes it.
        let left = rt.block_on(runner::final_cleanup(ctx.clone(), ctx.target.deadline));
        for l in &left {
            console.note(&format!("warning: left behind: {}", redactor.text(l)));
        }
        if let Some(j) = ctx.cleanup.journal() {
            j.end(left.len(), ctx.cancel.is_cancelled());
        }
        shutdown(server);
        return Err(EXIT_FAILED);
    }
    let in_flight = a.test_threads.unwrap_or(if is_local(&ctx.target.base_url) {
        harness::DEFAULT_IN_FLIGHT
    } else {
        64
    });
    let last = Durations::read(&a.report_dir);
    let outcome = rt.block_on(harness::run(
        ctx.clone(),
        instances,
        &args,
        &harness::Limits { in_flight },
        &last,
        console.clone(),
        &mut sink,
    ));
    let left = rt.block_on(async {
        let c = ctx.clone();
        // Deletes are operations too: bound cleanup by the operation deadline, within reason;
        // once forced to stop, a few seconds to send what it can.
        let budget = (ctx.target.deadline * 2).clamp(Duration::from_secs(10), Duration::from_secs(600));
        tokio::select! {
            left = runner::final_cleanup(c, budget) => left,
            _ = async {
                ctx.cancel.forced().await;
                tokio::time::sleep(Duration::from_secs(5)).await;
            } => {
                ctx.cleanup
                    .remaining()
                    .into_iter()
                    .map(|t| {
                        let why = t.left.clone().unwrap_or_else(|| "not deleted: the run was stopped".into());
                        if let Some(j) = ctx.cleanup.journal() {
                            j.left(&t.url, &why);
                        }
                        format!("{} (created by {}): {why}", t.url, t.by)
                    })
                    .collect()
            }
        }
    });
    // URLs shown on the console and in reports: without userinfo or echoed secrets.
    let left: Vec<String> = left.iter().map(|l| redactor.text(l)).collect();
    let interrupted = ctx.cancel.is_cancelled();
    if let Some(j) = ctx.cleanup.journal() {
        j.end(left.len(), interrupted);
    }
    shutdown(server);
    if let Some(h) = &har
        && let Err(e) = h.finish()
    {
        eprint_safe(&format!("error: cannot write the HAR file: {e}"));
    }
    if let Err(e) = sink.finish() {
        eprint_safe(&format!(
            "error: cannot write reports to {}: {e}",
            a.report_dir.display()
        ));
        return Err(EXIT_FAILED);
    }
    let duration_ms = started.elapsed().as_millis() as u64;
    let stats = ctx.http.stats();
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
        duration_ms,
        left_behind: left.clone(),
        faults: faults.iter().map(|f| f.name().to_string()).collect(),
        profiles,
        select: plan.selection.given.clone(),
        transcripts: plan.transcripts.name().into(),
        interrupted,
        requests: stats.requests,
        request_rate: if duration_ms > 0 {
            (stats.requests as f64 * 1000.0 / duration_ms as f64 * 10.0).round() / 10.0
        } else {
            0.0
        },
        throttling: Throttling {
            count: stats.throttled,
            wait_ms: stats.throttle_wait_ms,
        },
        journal: journal_path,
    };
    let c = match report::write_all(&a.report_dir, &info) {
        Ok(c) => c,
        Err(e) => {
            eprint_safe(&format!(
                "error: cannot write reports to {}: {e}",
                a.report_dir.display()
            ));
            return Err(EXIT_FAILED);
        }
    };
    if let Some(e) = &outcome.write_error {
        eprint_safe(&format!(
            "error: some results could not be written to {}: {e}",
            a.report_dir.display()
        ));
    }
    if !interrupted {
        last.write(&a.report_dir, a.time_scale, &outcome.durations);
    }
    if !left.is_empty() {
        console.line(&format!(
            "warning: could not confirm {} resource(s) the run created gone (also in the journal, for `rpconform cleanup --journal {}`):",
            left.len(),
            a.report_dir.display()
        ));
        for l in &left {
            console.line(&format!("    {l}"));
        }
    }
    if stats.throttled > 0 {
        console.line(&format!(
            "note: the target throttled {} request(s); waited {:.1} s in all and retried (not judged)",
            stats.throttled,
            stats.throttle_wait_ms as f64 / 1000.0
        ));
    }
    console.line(&report::console_summary(&c, &info, &a.report_dir));
    let exit = if interrupted {
        EXIT_INTERRUPTED
    } else if c.failed_run() || !left.is_empty() || outcome.write_error.is_some() {
        EXIT_FAILED
    } else {
        EXIT_OK
    };
    Ok(RunOutcome { exit })
}
