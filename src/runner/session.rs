//! One run, from start to reports: start the target (the embedded reference RP or a target
//! file), open the journal, run preflight, run the selected tests, clean up, and write the
//! reports — whose [`RunStatus`] (computed once, in `report::write_all`) is the run's verdict.
//! The CLI only parses arguments into [`Settings`] and prints; every output renders the status
//! this returns.
//!
//! What is written when:
//! - bad input (a target file, a selection that matches nothing, an unwritable report
//!   directory) → [`Ended::Usage`]: nothing is written, and the message says so;
//! - a preflight blocker → junit.xml with one error testcase and summary.md saying why, then
//!   exit 1 (a CI step publishing test results finds them);
//! - otherwise the full report set, whatever happened (failures, leftovers, interruption).
//!
//! Signals: the first SIGINT, SIGTERM or SIGHUP stops scheduling and every test's waits at once
//! (they end "interrupted"), then cleanup deletes what the run created, in parallel, with a live
//! count; a second one stops cleanup from waiting (what is not confirmed gone is listed in the
//! reports and the journal); a third exits at once (see `cli::signals`).

use std::path::Path;
use std::sync::Arc;

use super::chosen::{Chosen, planned, selected};
use super::ready::{get_ready, open_journal};
pub use super::settings::{Settings, TargetSpec};
use std::time::{Duration, Instant};

use crate::http::{HttpOptions, Redactor};
use crate::report::{self, ResultsWriter, RunInfo, RunStatus, Throttling};
use crate::runner::console::Console;
use crate::runner::harness::{self, Durations};
use crate::runner::{self, RunCtx};
use crate::scenario::{Instance, Suite};
use crate::target::{Connection, Target, embedded_target_yaml_for, load_target, parse_target};

/// How a run ended.
pub enum Ended {
    /// The run went to its end (or was interrupted) and wrote its reports.
    Reported(Box<Reported>),
    /// Bad input: nothing was written (the message says why); exit 2.
    Usage(String),
    /// The run could not write its reports (exit 1).
    Failed(String),
}

/// A run that wrote its reports: its status, counts and settings.
pub struct Reported {
    pub status: RunStatus,
    pub counts: report::Counts,
    pub info: RunInfo,
}

/// A started target: its declarations, and the embedded server to stop at the end.
struct Started {
    target: Target,
    server: Option<rpconform_refrp::RunningServer>,
    /// The target file's path and a hash of its redacted text.
    file: Option<(String, String)>,
    variants: Vec<String>,
}

fn start_target(rt: &tokio::runtime::Runtime, spec: &TargetSpec) -> Result<Started, String> {
    match spec {
        TargetSpec::Embedded {
            settings,
            variants,
            label,
        } => {
            let server = rt
                .block_on(rpconform_refrp::start(settings.clone(), 0))
                .map_err(|e| format!("cannot start the embedded RP: {e}"))?;
            let yaml = embedded_target_yaml_for(&server.base_url(), settings);
            let parsed = parse_target(Path::new("embedded-target.yaml"), &yaml, label)
                .map_err(|r| r.render())
                .and_then(|mut t| {
                    let specs = crate::target::embedded_specs(settings)?;
                    t.attach_specs(std::sync::Arc::new(specs), "the embedded RP's spec");
                    Ok(t)
                });
            match parsed {
                Ok(target) => Ok(Started {
                    target,
                    server: Some(server),
                    file: None,
                    variants: variants.iter().map(|v| v.name().to_string()).collect(),
                }),
                Err(e) => {
                    rt.block_on(server.shutdown());
                    Err(e)
                }
            }
        }
        TargetSpec::File(path) => {
            let target = load_target(path).map_err(|r| r.render())?;
            // Hash the text as reports could show it: secrets redacted.
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let redacted = Redactor::new(&target.secret_headers).text(&text);
            let shown = std::fs::canonicalize(path)
                .ok()
                .and_then(|abs| {
                    let cwd = std::env::current_dir().ok()?;
                    abs.strip_prefix(&cwd).ok().map(Path::to_path_buf)
                })
                .unwrap_or_else(|| path.clone());
            Ok(Started {
                target,
                server: None,
                file: Some((
                    shown.display().to_string(),
                    crate::fingerprint::short(redacted.as_bytes()),
                )),
                variants: Vec::new(),
            })
        }
    }
}

/// Deletes at once in cleanup against an endpoint without rate limits (the embedded RP, a
/// local server): cleanup is then bound by the RP's operation time, not by the tester.
const LOCAL_DELETE_SLOTS: usize = 256;

/// What a run with these settings would send, before anything is sent (`rpconform plan`).
pub fn plan(
    rt: &tokio::runtime::Runtime,
    s: &Settings,
    suites: &[Arc<Suite>],
) -> Result<(crate::plan::Plan, Chosen), String> {
    let started = start_target(rt, &s.target)?;
    let r = selected(suites, &started.target, s).map(|c| {
        let p = planned(&started.target, s, &c.tests);
        (p, c)
    });
    if let Some(server) = started.server {
        rt.block_on(server.shutdown());
    }
    r
}

/// Load the target and list the tests the run would select (`run --list`).
pub fn list(
    rt: &tokio::runtime::Runtime,
    s: &Settings,
    suites: &[Arc<Suite>],
) -> Result<(Vec<Instance>, Target), String> {
    let started = start_target(rt, &s.target)?;
    let r = selected(suites, &started.target, s);
    if let Some(server) = started.server {
        rt.block_on(server.shutdown());
    }
    r.map(|c| (c.tests, started.target))
}

/// The run's settings for the reports, before anything ran.
struct Provenance {
    subject: Option<String>,
    options: std::collections::BTreeMap<String, String>,
    front_door: Option<String>,
    run_id: String,
    started_at: String,
    label: String,
    base_url: String,
    profiles: Vec<String>,
    /// Rules whose subject the target never declares, with why.
    not_applicable: std::collections::BTreeMap<String, String>,
    file: Option<(String, String)>,
    variants: Vec<String>,
    /// Where the target's declarations are, for SARIF.
    sites: Vec<crate::report::stable::Site>,
}

impl Provenance {
    fn of(
        target: &Target,
        s: &Settings,
        redactor: &Redactor,
        run_id: String,
        started_at: &str,
        file: Option<(String, String)>,
        variants: Vec<String>,
    ) -> Provenance {
        Provenance {
            subject: target.subject.clone(),
            options: verdict_options(s, target),
            front_door: target.front_door.clone(),
            run_id,
            started_at: started_at.to_string(),
            label: target.label.clone(),
            base_url: redactor.text(&crate::http::strip_userinfo(&target.base())),
            profiles: target
                .profiles
                .iter()
                .map(|p| p.name().to_string())
                .collect(),
            not_applicable: crate::rules::undeclared_subjects(target),
            sites: match &file {
                Some((f, _)) => crate::report::stable::sites_of(target, f, true),
                None => {
                    crate::report::stable::sites_of(target, crate::report::EMBEDDED_TARGET, false)
                }
            },
            file,
            variants,
        }
    }

    fn info(&self, s: &Settings, selected_out: usize) -> RunInfo {
        RunInfo {
            rpconform_version: env!("CARGO_PKG_VERSION").into(),
            run_id: self.run_id.clone(),
            target: self.label.clone(),
            base_url: self.base_url.clone(),
            time_scale: s.time_scale,
            accelerated: s.time_scale != 1.0,
            strict: s.strict,
            filters: s.selection.names.clone(),
            skip: s.libtest.skip.clone(),
            partition: s.partition.map(|p| p.to_string()),
            started_at: self.started_at.clone(),
            faults: s.faults.clone(),
            profiles: self.profiles.clone(),
            not_applicable: self.not_applicable.clone(),
            select: s.selection.given.clone(),
            transcripts: s.transcripts.name().into(),
            certify: s.certify,
            selected_out,
            suite_set: s.suite_set.clone(),
            subject: s.subject.clone().or_else(|| self.subject.clone()),
            options: self.options.clone(),
            front_door: self.front_door.clone(),
            catalogue: crate::rules::catalogue_id(),
            target_file: self.file.as_ref().map(|f| f.0.clone()),
            target_hash: self.file.as_ref().map(|f| f.1.clone()),
            variants: self.variants.clone(),
            sites: self.sites.clone(),
            ..Default::default()
        }
    }
}

/// The settings that change verdicts, as [`RunInfo::options`] records them.
fn verdict_options(s: &Settings, target: &Target) -> std::collections::BTreeMap<String, String> {
    let mut o = std::collections::BTreeMap::new();
    o.insert(
        "deadline".into(),
        format!("{} s", target.deadline.as_secs()),
    );
    o.insert("request timeout".into(), format!("{} s", s.request_timeout));
    o.insert("retries".into(), s.retries.to_string());
    o.insert("body cap".into(), s.body_cap.to_string());
    o.insert("no foreign".into(), s.no_foreign.to_string());
    if let TargetSpec::Embedded { settings, .. } = &s.target {
        o.insert(
            "operation duration".into(),
            format!("{} ms", settings.op_duration.as_millis()),
        );
        o.insert(
            "hold reads".into(),
            settings.complete_after_reads.to_string(),
        );
        o.insert(
            "retry after".into(),
            format!("{} s", settings.retry_after_secs),
        );
    }
    o
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The embedded reference RP, when the run started one: stopped on every way out.
struct Server(Option<rpconform_refrp::RunningServer>);

impl Server {
    fn stop(self, rt: &tokio::runtime::Runtime) {
        if let Some(srv) = self.0 {
            rt.block_on(srv.shutdown());
        }
    }
}

/// Run the suites against the target and write the reports: set up (target, connection,
/// selection, report sinks), open the journal, get the target ready (preflight, resource
/// group), run the tests, then clean up and write the reports.
pub fn run(
    rt: &tokio::runtime::Runtime,
    s: &Settings,
    suites: Vec<Arc<Suite>>,
    console: Arc<Console>,
    on_signal: impl FnOnce(Arc<RunCtx>),
) -> Ended {
    let started = Instant::now();
    let started_at = now();
    let st = match start_target(rt, &s.target) {
        Ok(t) => t,
        Err(e) => return Ended::Usage(e),
    };
    let server = Server(st.server);
    let Set {
        ctx,
        prov,
        tests,
        selected_out,
        coverage,
        har,
        mut sink,
        redactor,
        tokens,
    } = match set_up(
        s,
        &suites,
        &console,
        st.target,
        st.file,
        st.variants,
        &started_at,
    ) {
        Ok(set) => set,
        Err(e) => {
            server.stop(rt);
            return Ended::Usage(e);
        }
    };
    let journal = open_journal(s, &ctx, &console, &tokens, &redactor, &started_at);
    // Signals, registered before anything is created.
    on_signal(ctx.clone());
    let mut info = prov.info(s, selected_out);
    info.journal = journal.path;
    info.coverage = coverage;
    info.planned = Some(crate::report::Planned::of(&planned(&ctx.target, s, &tests)));
    let mut problems: Vec<String> = journal.problem.into_iter().collect();
    // A run that cannot journal must not create what it could lose.
    if let Some(why) = journal.blocked {
        let why = format!("{why}; no test was run");
        console.note(&format!("error: {why}"));
        server.stop(rt);
        return blocked(s, sink, info, started, &why, "");
    }
    if let Err(b) = rt.block_on(get_ready(
        s,
        &ctx,
        &console,
        &tokens,
        &redactor,
        &prov.label,
    )) {
        if let Some(left) = b.left {
            info.left_behind = left;
        }
        server.stop(rt);
        return blocked(s, sink, info, started, &b.why, &b.detail);
    }
    let local = ctx.target.is_local();
    let in_flight = s.test_threads.unwrap_or(if local {
        harness::DEFAULT_IN_FLIGHT
    } else {
        64
    });
    let last = Durations::read(&s.report_dir);
    let outcome = rt.block_on(harness::run(
        ctx.clone(),
        tests,
        &s.libtest,
        &harness::Limits {
            in_flight,
            selected_out,
            fail_fast: s.fail_fast,
            timing: s.timing(),
        },
        &last,
        console.clone(),
        &mut sink,
    ));
    info.selected_out += outcome.filtered_out;
    info.stopped_after = outcome.stopped_after.clone();
    info.not_run = outcome.not_run;
    let left = rt.block_on(final_cleanup(&ctx, &console));
    // URLs shown on the console and in reports: without userinfo or echoed secrets.
    let left: Vec<String> = left.iter().map(|l| redactor.text(l)).collect();
    let interrupted = ctx.cancel.is_cancelled();
    console.summary(
        &outcome.failures,
        &outcome.counts,
        info.selected_out,
        &left,
        interrupted,
    );
    if let Some(j) = ctx.cleanup.journal() {
        j.end(left.len(), interrupted);
        if let Some(why) = j.failure() {
            problems.push(format!(
                "{why}: the run stopped creating resources; what it lists may be incomplete"
            ));
        }
    }
    server.stop(rt);
    if let Some(h) = &har
        && let Err(e) = h.finish()
    {
        problems.push(format!("the HAR file could not be written: {e}"));
    }
    if let Err(e) = sink.finish() {
        return Ended::Failed(format!(
            "cannot write reports to {}: {e}",
            s.report_dir.display()
        ));
    }
    if let Some(e) = &outcome.write_error {
        problems.push(format!(
            "some results could not be written to {}: {e}",
            s.report_dir.display()
        ));
    }
    info.left_behind = left;
    info.interrupted = interrupted;
    info.problems = problems;
    write_reports(s, &ctx, &console, info, started, last, &outcome)
}

/// What [`set_up`] hands the run: the context every test shares, what the reports say of
/// the run, the selected tests, and where results go.
struct Set {
    ctx: Arc<RunCtx>,
    prov: Provenance,
    tests: Vec<Instance>,
    selected_out: usize,
    coverage: Option<crate::plan::Coverage>,
    har: Option<Arc<crate::replay::HarWriter>>,
    sink: ResultsWriter,
    redactor: Arc<Redactor>,
    tokens: crate::http::TokenSource,
}

/// Everything before the journal: the run's settings applied to the target, its connection,
/// the selection, the run's provenance, the HAR file and the results sink. Bad input is an
/// `Err` with the message; nothing has been sent or written then.
fn set_up(
    s: &Settings,
    suites: &[Arc<Suite>],
    console: &Arc<Console>,
    mut target: Target,
    file: Option<(String, String)>,
    variants: Vec<String>,
    started_at: &str,
) -> Result<Set, String> {
    if let Some(d) = s.deadline {
        target.deadline = Duration::from_secs(d.max(1));
    }
    if let Some(note) = target.implied_note("the target") {
        console.note(&note);
    }
    // Every path the rules compare is read after the base URL's prefix (a gateway's).
    crate::lro::set_base_path(target.base_path());
    let run_id = runner::ids::run_id();
    if target.resource_group.create {
        target.resource_group.name = format!("{}-{run_id}", target.resource_group.name);
    }
    let opts = HttpOptions {
        request_timeout: Duration::from_secs(s.request_timeout.max(1)),
        body_cap: s.body_cap,
        insecure: s.insecure,
        follow_foreign: !s.no_foreign,
        limits: target.limits(s.max_rps),
        throttle_budget: target.deadline,
        time_scale: s.time_scale,
        retries: s.retries,
        ..Default::default()
    };
    let Connection {
        http,
        redactor,
        tokens,
    } = target.connect(opts)?;
    let Chosen {
        tests,
        out: selected_out,
        coverage,
    } = selected(suites, &target, s)?;
    let prov = Provenance::of(
        &target,
        s,
        &redactor,
        run_id.clone(),
        started_at,
        file,
        variants,
    );
    // `--har`: every exchange appended as it happens.
    let har = match &s.har {
        Some(h) => Some(Arc::new(crate::replay::HarWriter::create(h).map_err(
            |e| format!("cannot write the HAR file {}: {e}", h.display()),
        )?)),
        None => None,
    };
    let sink = ResultsWriter::create(&s.report_dir, s.transcripts)
        .map_err(|e| format!("cannot write reports to {}: {e}", s.report_dir.display()))?;
    let local = target.is_local();
    let mut ctx = RunCtx::new(target, http, s.time_scale, s.strict, run_id);
    if local {
        ctx.delete_slots
            .add_permits(LOCAL_DELETE_SLOTS.saturating_sub(super::context::DELETE_SLOTS));
    }
    ctx.observer = observer(s.verbose.then(|| console.clone()), har.clone(), console);
    Ok(Set {
        ctx: Arc::new(ctx),
        prov,
        tests,
        selected_out,
        coverage,
        har,
        sink,
        redactor,
        tokens,
    })
}

/// What sees every exchange as it happens: the console under `-v`, the HAR file under `--har`.
fn observer(
    shown: Option<Arc<Console>>,
    har: Option<Arc<crate::replay::HarWriter>>,
    console: &Arc<Console>,
) -> Option<runner::ExchangeObserver> {
    if shown.is_none() && har.is_none() {
        return None;
    }
    let console = console.clone();
    Some(Arc::new(move |test, ex| {
        if let Some(c) = &shown {
            c.exchange(test, ex);
        }
        if let Some(h) = &har
            && let Err(e) = h.push(ex)
        {
            console.note(&format!("error: cannot write the HAR file: {e}"));
        }
    }))
}

/// The run's figures into `info`, every report written from it, then what the console says
/// after the summary (leftovers, throttling, retries).
fn write_reports(
    s: &Settings,
    ctx: &RunCtx,
    console: &Console,
    mut info: RunInfo,
    started: Instant,
    last: Durations,
    outcome: &harness::Outcome,
) -> Ended {
    let stats = ctx.http.stats();
    let duration_ms = started.elapsed().as_millis() as u64;
    info.duration_ms = duration_ms;
    info.ended_at = now();
    info.requests = stats.requests;
    info.puts = stats.puts;
    info.request_rate = rate(stats.requests, duration_ms);
    info.throttling = Throttling {
        count: stats.throttled,
        wait_ms: stats.throttle_wait_ms,
    };
    let written = match report::write_all(&s.report_dir, &info) {
        Ok(w) => w,
        Err(e) => {
            return Ended::Failed(format!(
                "cannot write reports to {}: {e}",
                s.report_dir.display()
            ));
        }
    };
    if !info.interrupted {
        last.write(&s.report_dir, s.time_scale, &outcome.durations);
    }
    if !info.left_behind.is_empty() {
        console.line(&format!(
            "error: could not confirm {} resource(s) the run created gone (also in the journal, for `rpconform cleanup --journal {}`):",
            info.left_behind.len(),
            s.report_dir.display()
        ));
        for l in &info.left_behind {
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
    if stats.retried > 0 {
        console.line(&format!(
            "note: {} request(s) got no answer of the RP's and were sent again (--retries); their tests are reported flaky",
            stats.retried
        ));
    }
    Ended::Reported(Box::new(Reported {
        status: written.status,
        counts: written.counts,
        info,
    }))
}

fn rate(requests: u64, ms: u64) -> f64 {
    if ms == 0 {
        0.0
    } else {
        (requests as f64 * 1000.0 / ms as f64 * 10.0).round() / 10.0
    }
}

/// Delete what is left, with a live count; bounded by the operation deadline (within reason)
/// and, once forced to stop, a few seconds to send what it can.
async fn final_cleanup(ctx: &Arc<RunCtx>, console: &Console) -> Vec<String> {
    let n = ctx.cleanup.len();
    if let Some(j) = ctx.cleanup.journal() {
        // On disk before any wait: a SIGKILL during cleanup still leaves the list.
        j.sync();
    }
    if n > 0 && ctx.cancel.is_cancelled() && !ctx.cancel.is_forced() {
        console.note(&super::cleanup::deleting_line(n));
    }
    let budget = (ctx.target.deadline * 2).clamp(Duration::from_secs(10), Duration::from_secs(600));
    let count = async {
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tick.tick().await;
            let left = ctx.cleanup.len();
            if ctx.cancel.is_cancelled() && left > 0 {
                console.status(&super::cleanup::deleting_line(left));
            }
        }
    };
    let forced = async {
        ctx.cancel.forced().await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    };
    let left = tokio::select! {
        left = runner::final_cleanup(ctx.clone(), budget) => left,
        () = count => Vec::new(),
        () = forced => {
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
    };
    console.clear_status_line();
    left
}

/// A run that could not start its tests: junit.xml with one error testcase, summary.md and
/// the rest of the reports, all saying why.
fn blocked(
    s: &Settings,
    mut sink: ResultsWriter,
    mut info: RunInfo,
    started: Instant,
    why: &str,
    detail: &str,
) -> Ended {
    let r = report::ScenarioResult {
        name: "preflight".into(),
        suite: "preflight".into(),
        suite_file: String::new(),
        scenario: "preflight".into(),
        type_name: None,
        row: None,
        at: String::new(),
        status: report::Status::Error(format!("{why}\n{detail}")),
        duration_ms: started.elapsed().as_millis() as u64,
        cleanup_ms: None,
        verdicts: Vec::new(),
        polls: Vec::new(),
        notes: Vec::new(),
        exchanges: Vec::new(),
        stated: Vec::new(),
        transcript: None,
    };
    let pushed = sink.push(&r).and_then(|()| sink.finish());
    if let Err(e) = pushed {
        return Ended::Failed(format!(
            "cannot write reports to {}: {e}",
            s.report_dir.display()
        ));
    }
    info.duration_ms = r.duration_ms;
    info.ended_at = now();
    info.problems.push(why.to_string());
    match report::write_all(&s.report_dir, &info) {
        Ok(w) => Ended::Reported(Box::new(Reported {
            status: w.status,
            counts: w.counts,
            info,
        })),
        Err(e) => Ended::Failed(format!(
            "cannot write reports to {}: {e}",
            s.report_dir.display()
        )),
    }
}
