//! The scheduler: every selected test is a task on the run's tokio runtime. Tests are waits
//! (polls, Retry-After), not work, so they do not hold a thread: a run starts as many as the
//! limits allow at once, and the request-rate limits of the HTTP client pace what they send.
//! Selection and output follow libtest (`libtest_mimic::Arguments`: filters, `--exact`,
//! `--skip`, `--ignored`, `--include-ignored`, `--list`; `--test-threads N` caps how many tests
//! run at once), and so do the lines printed (see [`super::console`]).
//!
//! When a cap applies, the longest tests start first: their expected duration comes from the
//! previous run's `durations.json` in the report directory, or from what the scenario waits
//! for (operations it follows, resources it creates, sleeps). As each test ends, what it
//! created is deleted (children first), so a run ends when its longest test does.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::{Arguments, Trial};
use serde::{Deserialize, Serialize};

use super::console::Console;
use super::context::RunCtx;
use super::exec::run_instance;
use super::partition::Partition;
use crate::plan::Timing;
use crate::report::{Counts, ResultsWriter, ScenarioResult, Status, render};
use crate::scenario::Instance;

/// Tests in flight at once when nothing else caps them: a bound on memory (each running test
/// holds its exchanges), far above what a suite needs to overlap all its waits.
pub const DEFAULT_IN_FLIGHT: usize = 1024;

/// Tests started at most per admission tick (10 ms): a ramp, so the scheduler sees the load
/// the tests make before it starts more.
const RAMP: usize = 16;
/// While the runtime answers late by more than this (it is busy: tests are work now, not
/// waits, or the machine is loaded), no more tests start, beyond a few.
const LAG_LIMIT: Duration = Duration::from_millis(30);
const MIN_RUNNING: usize = 4;

/// How late the runtime wakes a 10 ms timer (smoothed): how busy it is.
fn watch_lag(lag: Arc<std::sync::atomic::AtomicU64>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut smooth = 0.0f64;
        loop {
            let t = std::time::Instant::now();
            tokio::time::sleep(Duration::from_millis(10)).await;
            let late = t.elapsed().saturating_sub(Duration::from_millis(10));
            smooth = smooth * 0.7 + late.as_micros() as f64 * 0.3;
            lag.store(smooth as u64, std::sync::atomic::Ordering::Relaxed);
        }
    })
}

/// The instances left after `--partition`, in order.
pub fn partitioned(instances: Vec<Instance>, partition: Option<Partition>) -> Vec<Instance> {
    match partition {
        None => instances,
        Some(p) => {
            let names: Vec<String> = instances.iter().map(|i| i.name.clone()).collect();
            let keep = p.select(&names);
            instances
                .into_iter()
                .zip(keep)
                .filter_map(|(i, k)| k.then_some(i))
                .collect()
        }
    }
}

fn ignored_reason(inst: &Instance) -> Option<String> {
    inst.not_applicable
        .as_ref()
        .map(|r| format!("not applicable: {r}"))
        .or_else(|| {
            inst.scenario()
                .ignore
                .as_ref()
                .map(|r| format!("ignored: {r}"))
        })
}

/// How libtest's arguments see an instance.
fn trial(inst: &Instance) -> Trial {
    Trial::test(inst.name.clone(), || Ok(())).with_ignored_flag(ignored_reason(inst).is_some())
}

/// `--list`: `NAME: test` per selected test (with `--ignored`, only ignored ones). Returns
/// false when stdout went away (a closed pipe), which is not an error.
pub fn list(instances: &[Instance], args: &Arguments, console: &Console) {
    for inst in instances {
        let t = trial(inst);
        if args.is_filtered_out(&t) || (args.ignored && ignored_reason(inst).is_none()) {
            continue;
        }
        console.line(&format!("{}: test", inst.name));
        if console.closed() {
            return;
        }
    }
}

/// The durations of the last run (`<report dir>/durations.json`), to start the longest first.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Durations {
    pub time_scale: f64,
    pub tests: HashMap<String, u64>,
}

pub const DURATIONS_FILE: &str = "durations.json";

impl Durations {
    pub fn read(dir: &Path) -> Durations {
        std::fs::read_to_string(dir.join(DURATIONS_FILE))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Keep this run's durations (and the earlier ones of tests it did not run).
    pub fn write(mut self, dir: &Path, time_scale: f64, this_run: &[(String, u64)]) {
        if self.time_scale != time_scale {
            self.tests.clear();
        }
        self.time_scale = time_scale;
        for (n, ms) in this_run {
            self.tests.insert(n.clone(), *ms);
        }
        if let Ok(text) = serde_json::to_string(&self) {
            let _ = std::fs::write(dir.join(DURATIONS_FILE), text);
        }
    }
}

/// What a test is expected to take, its cleanup included: the last run's duration (and the
/// plan's cleanup), or the plan's waits ([`crate::plan::estimate`]).
pub fn estimate(ctx: &RunCtx, inst: &Instance, last: &Durations, timing: &Timing) -> Duration {
    let plan = crate::plan::estimate(inst, &ctx.target, timing);
    let secs = match last.tests.get(&inst.name) {
        // A hand-edited file cannot make the sum of the estimates overflow.
        Some(ms) => (*ms).min(1_000_000_000) as f64 / 1000.0,
        None => plan.wait_seconds,
    };
    Duration::from_secs_f64((secs + plan.cleanup_seconds).clamp(0.0, 1e6))
}

/// How a run of the harness went.
#[derive(Debug, Default)]
pub struct Outcome {
    pub counts: Counts,
    /// Duration of every test that ran.
    pub durations: Vec<(String, u64)>,
    pub filtered_out: usize,
    /// A result could not be written (the reports are incomplete).
    pub write_error: Option<String>,
    /// `--fail-fast`: the test whose failure stopped the scheduling, and how many tests were
    /// then never started.
    pub stopped_after: Option<String>,
    pub not_run: usize,
    /// The failed tests with their failure text, by name, for libtest's `failures:` section
    /// (printed once the run's cleanup is over: a resource left behind fails the run too).
    pub failures: Vec<(String, String)>,
}

/// Limits of the scheduler.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Tests in flight at once (`--test-threads`, or a memory bound).
    pub in_flight: usize,
    /// Tests the run's selection left out before the harness (`--rule`, a partition, name
    /// filters): counted as filtered out in libtest's line.
    pub selected_out: usize,
    /// `--fail-fast`: after the first test that fails (or errors), start no other; those
    /// running end as usual.
    pub fail_fast: bool,
    /// What the run assumes of the RP's timing, for the estimates (ETA, longest first).
    pub timing: Timing,
}

/// The reason of a test `--fail-fast` did not start.
pub fn not_run_reason(failed: &str) -> String {
    format!("not run: --fail-fast stopped the run after {failed} failed")
}

/// Run `fut` in a task of its own; a panic in it comes back as `Err` with its message, never
/// as a result that vanishes.
pub async fn catch_panic<T, F>(fut: F) -> Result<T, String>
where
    T: Send + 'static,
    F: std::future::Future<Output = T> + Send + 'static,
{
    match tokio::spawn(fut).await {
        Ok(v) => Ok(v),
        Err(e) if e.is_panic() => {
            let p = e.into_panic();
            Err(p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into()))
        }
        Err(e) => Err(format!("its task ended without a result: {e}")),
    }
}

/// The result of a test whose runner panicked: an error, counted and failing the run.
fn panicked_result(inst: &Instance, why: &str) -> ScenarioResult {
    let mut r = render::skipped_result(inst, String::new());
    r.status = Status::Error(format!("the runner panicked: {why} (please report this)"));
    r
}

/// Run one test to its result: a panic in the runner is an error result of that test.
async fn run_one(ctx: Arc<RunCtx>, inst: Instance) -> ScenarioResult {
    let i = inst.clone();
    let started = std::time::Instant::now();
    match catch_panic(async move { run_instance(&ctx, &i).await }).await {
        Ok(r) => r,
        Err(why) => {
            let mut r = panicked_result(&inst, &why);
            r.duration_ms = started.elapsed().as_millis() as u64;
            r
        }
    }
}

fn interrupted_result(inst: &Instance, why: &str) -> ScenarioResult {
    let mut r = render::skipped_result(inst, String::new());
    r.status = Status::Interrupted(why.to_string());
    r
}

/// What a test's task tells the harness.
enum Msg {
    /// A test is over (its verdict); `true` when its cleanup is too (or it had none to do).
    Ended(Box<ScenarioResult>, bool),
    /// A test's cleanup is over, after this many milliseconds.
    Cleaned(String, u64),
}

impl Msg {
    /// A test that did not run: nothing to clean up.
    fn over(r: ScenarioResult) -> Msg {
        Msg::Ended(Box::new(r), true)
    }
}

/// A result for a test that never started (interrupted or stopped before it).
fn is_not_started(r: &ScenarioResult) -> bool {
    match &r.status {
        Status::Interrupted(why) => why.starts_with("not started"),
        Status::Skipped(why) => why.starts_with("not run: --fail-fast"),
        _ => false,
    }
}

/// Run the selected tests; every result goes to `sink` once its cleanup is over (its verdict
/// to the console at once).
pub async fn run(
    ctx: Arc<RunCtx>,
    instances: Vec<Instance>,
    args: &Arguments,
    limits: &Limits,
    last: &Durations,
    console: Arc<Console>,
    sink: &mut ResultsWriter,
) -> Outcome {
    let mut out = Collect::new(sink, &console);
    let mut ignored = Vec::new();
    let mut runnable = Vec::new();
    for inst in instances {
        let t = trial(&inst);
        if args.is_filtered_out(&t) {
            out.outcome.filtered_out += 1;
        } else if args.is_ignored(&t) {
            ignored.push(inst);
        } else {
            runnable.push(inst);
        }
    }
    let slots = limits.in_flight.max(1);
    console.title(ignored.len() + runnable.len(), slots);
    for inst in &ignored {
        let r = render::skipped_result(inst, ignored_reason(inst).unwrap_or_default());
        out.over(&r);
    }
    console.skipped_summary();
    // Longest first (stable: declaration order among equals).
    let mut order: Vec<(Duration, Instance)> = runnable
        .into_iter()
        .map(|i| (estimate(&ctx, &i, last, &limits.timing), i))
        .collect();
    order.sort_by_key(|o| std::cmp::Reverse(o.0));
    console.queued(order.iter().map(|(d, _)| *d).sum());
    out.pending = order
        .iter()
        .map(|(_, i)| (i.name.clone(), i.clone()))
        .collect();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    // `--fail-fast`: the first test that failed; once set, nothing more starts.
    let stop: Arc<std::sync::OnceLock<String>> = Arc::default();
    let lag = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let lag_watch = watch_lag(lag.clone());
    let feeder = tokio::spawn(feed(
        Feed {
            ctx: ctx.clone(),
            console: console.clone(),
            tx,
            stop: stop.clone(),
            sem: Arc::new(tokio::sync::Semaphore::new(slots)),
            lag,
            slots,
        },
        order,
    ));
    out.receive(&ctx, rx, limits, &stop, &feeder).await;
    let _ = feeder.await;
    lag_watch.abort();
    console.done();
    out.finish()
}

/// What the feeder needs to start tests: the run, where results go, the `--fail-fast` stop,
/// the slots and how busy the runtime is.
struct Feed {
    ctx: Arc<RunCtx>,
    console: Arc<Console>,
    tx: tokio::sync::mpsc::UnboundedSender<Msg>,
    stop: Arc<std::sync::OnceLock<String>>,
    sem: Arc<tokio::sync::Semaphore>,
    lag: Arc<std::sync::atomic::AtomicU64>,
    slots: usize,
}

/// Start the tests in `order` as slots free up, ramping up and holding off while the runtime
/// is busy; once stopped (`--fail-fast`) or interrupted, report the rest as not started.
async fn feed(f: Feed, order: Vec<(Duration, Instance)>) {
    let mut left: Duration = order.iter().map(|(d, _)| *d).sum();
    let mut queue = order.into_iter();
    let mut ramp = Ramp {
        tick: std::time::Instant::now(),
        this_tick: 0,
    };
    let not_started = |inst: &Instance| {
        Msg::over(interrupted_result(
            inst,
            "not started: the run was interrupted",
        ))
    };
    for (est, inst) in queue.by_ref() {
        ramp.wait(&f).await;
        let permit = tokio::select! {
            p = f.sem.clone().acquire_owned() => p,
            _ = f.ctx.cancel.cancelled() => {
                let _ = f.tx.send(not_started(&inst));
                break;
            }
        };
        let Ok(permit) = permit else { break };
        if let Some(failed) = f.stop.get() {
            let why = not_run_reason(failed);
            let _ =
                f.tx.send(Msg::over(render::skipped_result(&inst, why.clone())));
            for (_, inst) in queue.by_ref() {
                let _ =
                    f.tx.send(Msg::over(render::skipped_result(&inst, why.clone())));
            }
            break;
        }
        if f.ctx.cancel.is_cancelled() {
            let _ = f.tx.send(not_started(&inst));
            break;
        }
        left = left.saturating_sub(est);
        f.console.queued(left);
        f.console.started(&inst.name, est);
        tokio::spawn(run_and_clean(f.ctx.clone(), inst, f.tx.clone(), permit));
    }
    for (_, inst) in queue {
        let _ = f.tx.send(not_started(&inst));
    }
}

/// The admission pace: at most [`RAMP`] starts per 10 ms tick, none while the runtime is busy.
struct Ramp {
    tick: std::time::Instant,
    this_tick: usize,
}

impl Ramp {
    async fn wait(&mut self, f: &Feed) {
        loop {
            if self.tick.elapsed() >= Duration::from_millis(10) {
                self.tick = std::time::Instant::now();
                self.this_tick = 0;
            }
            let running = f.slots - f.sem.available_permits();
            let busy = Duration::from_micros(f.lag.load(std::sync::atomic::Ordering::Relaxed))
                > LAG_LIMIT
                && running >= MIN_RUNNING;
            if self.this_tick < RAMP && !busy {
                break;
            }
            if !f.ctx.cancel.sleep(Duration::from_millis(5)).await {
                break;
            }
        }
        self.this_tick += 1;
    }
}

/// One test, then its resources: they go as it ends (the slot is held until they are gone, so
/// cleanup counts against the tests in flight). A verdict is reported at once, its cleanup
/// time when it is over; an interrupted test says what its cleanup did.
async fn run_and_clean(
    ctx: Arc<RunCtx>,
    inst: Instance,
    tx: tokio::sync::mpsc::UnboundedSender<Msg>,
    permit: tokio::sync::OwnedSemaphorePermit,
) {
    let mut res = run_one(ctx.clone(), inst.clone()).await;
    let cleaning = std::time::Instant::now();
    if let Status::Interrupted(why) = &mut res.status {
        let done = super::cleanup::after_test(&ctx, &inst.name).await;
        why.push_str(&format!("; {}", done.describe()));
        res.cleanup_ms = Some(cleaning.elapsed().as_millis() as u64);
        let _ = tx.send(Msg::Ended(Box::new(res), true));
    } else {
        let name = res.name.clone();
        let _ = tx.send(Msg::Ended(Box::new(res), false));
        super::cleanup::after_test(&ctx, &inst.name).await;
        let _ = tx.send(Msg::Cleaned(name, cleaning.elapsed().as_millis() as u64));
    }
    drop(permit);
}

/// The results as they come in: to the console at once, to the sink once their cleanup is
/// over, counted in the outcome.
struct Collect<'a> {
    sink: &'a mut ResultsWriter,
    console: &'a Console,
    outcome: Outcome,
    /// The tests not over yet, to report them interrupted should the run be forced to stop.
    pending: HashMap<String, Instance>,
    /// Results whose test ended and whose cleanup has not: written once it is over.
    cleaning: HashMap<String, ScenarioResult>,
    failures: Vec<(String, String)>,
}

impl<'a> Collect<'a> {
    fn new(sink: &'a mut ResultsWriter, console: &'a Console) -> Self {
        Collect {
            sink,
            console,
            outcome: Outcome::default(),
            pending: HashMap::new(),
            cleaning: HashMap::new(),
            failures: Vec::new(),
        }
    }

    fn write(&mut self, r: &ScenarioResult) {
        if let Err(e) = self.sink.push(r)
            && self.outcome.write_error.is_none()
        {
            self.outcome.write_error = Some(e.to_string());
        }
    }

    /// A test that never ran, or that the run gave up on: shown, counted and written.
    fn over(&mut self, r: &ScenarioResult) {
        self.console.finished(r);
        self.outcome.counts.add(r);
        self.write(r);
    }

    /// Receive until every test is over (or the run, forced to stop, gives up on them).
    async fn receive(
        &mut self,
        ctx: &RunCtx,
        mut rx: tokio::sync::mpsc::UnboundedReceiver<Msg>,
        limits: &Limits,
        stop: &std::sync::OnceLock<String>,
        feeder: &tokio::task::JoinHandle<()>,
    ) {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        // Forced to stop: a test stuck in a request gets a moment, then is reported interrupted.
        let gave_up = async {
            ctx.cancel.forced().await;
            tokio::time::sleep(Duration::from_secs(2)).await;
        };
        tokio::pin!(gave_up);
        loop {
            tokio::select! {
                got = rx.recv() => match got {
                    None => break,
                    Some(Msg::Ended(res, cleaned)) => self.ended(*res, cleaned, limits, stop),
                    // A test's cleanup is over: its result, with the time it took, is written.
                    Some(Msg::Cleaned(name, ms)) => {
                        if let Some(mut r) = self.cleaning.remove(&name) {
                            r.cleanup_ms = Some(ms);
                            self.write(&r);
                        }
                    }
                },
                _ = tick.tick() => {
                    // Interrupted, every test over: what is left is their cleanup; say so.
                    let deleting = ctx.cleanup.len();
                    if ctx.cancel.is_cancelled() && self.pending.is_empty() && deleting > 0 {
                        self.console.status(&super::cleanup::deleting_line(deleting));
                    } else {
                        self.console.deleting(deleting);
                        self.console.tick();
                    }
                }
                _ = &mut gave_up => {
                    let mut rest: Vec<Instance> = self.pending.drain().map(|(_, i)| i).collect();
                    rest.sort_by(|a, b| a.name.cmp(&b.name));
                    for inst in rest {
                        self.over(&interrupted_result(&inst, "still running when the run was forced to stop"));
                    }
                    feeder.abort();
                    break;
                }
            }
        }
    }

    /// A test's verdict: to the console, the failures and (`--fail-fast`) the stop; written
    /// now when its cleanup is over, else once it is.
    fn ended(
        &mut self,
        res: ScenarioResult,
        cleaned: bool,
        limits: &Limits,
        stop: &std::sync::OnceLock<String>,
    ) {
        let ran = self.pending.remove(&res.name).is_some() && !is_not_started(&res);
        if ran {
            self.outcome
                .durations
                .push((res.name.clone(), res.duration_ms));
        }
        if matches!(res.status, Status::Failed | Status::Error(_)) {
            self.failures
                .push((res.name.clone(), render::failure_text(&res, false)));
            if limits.fail_fast && ran && stop.set(res.name.clone()).is_ok() {
                self.outcome.stopped_after = Some(res.name.clone());
                self.console.note(&format!(
                    "--fail-fast: {} failed; no more tests start, those running end",
                    res.name
                ));
            }
        }
        if !ran
            && matches!(&res.status, Status::Skipped(why) if why.starts_with("not run: --fail-fast"))
        {
            self.outcome.not_run += 1;
        }
        self.console.finished(&res);
        self.outcome.counts.add(&res);
        if cleaned {
            self.write(&res);
        } else {
            self.cleaning.insert(res.name.clone(), res);
        }
    }

    /// Forced to stop while some were still cleaning up: their results, without a cleanup
    /// time; then the outcome.
    fn finish(mut self) -> Outcome {
        let mut left: Vec<ScenarioResult> =
            std::mem::take(&mut self.cleaning).into_values().collect();
        left.sort_by(|a, b| a.name.cmp(&b.name));
        for r in &left {
            self.write(r);
        }
        self.failures.sort();
        self.outcome.failures = std::mem::take(&mut self.failures);
        self.outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_test_is_an_error_not_a_missing_result() {
        let got: Result<u8, String> = catch_panic(async {
            if std::hint::black_box(true) {
                panic!("overflow when adding duration to instant");
            }
            1
        })
        .await;
        let why = got.unwrap_err();
        assert!(why.contains("overflow when adding"), "{why}");
        let got: Result<u8, String> =
            catch_panic(async { panic!("{} at {}", "formatted", 3) }).await;
        assert_eq!(got.unwrap_err(), "formatted at 3");
        assert_eq!(catch_panic(async { 7u8 }).await, Ok(7));
    }
}
