//! What a run prints while it goes: libtest's lines on stdout (`running N tests`, `test NAME
//! ... ok|FAILED|ignored`, the `failures:` section, `test result: ...`; one character per test
//! with `-q`, printed as each test ends), and on stderr a live progress line in a terminal
//! (done/total, failures, running, elapsed, an ETA) or, without one (CI), a heartbeat line
//! every 30 s; and in both, a notice when a test runs long. `-v` shows each exchange as it
//! happens (already redacted).
//!
//! The live line is an `indicatif` bar on stderr: it draws and clears itself, and stays hidden
//! when stderr is no terminal (or a dumb one). Every other line is written with the bar lifted
//! ([`ProgressBar::suspend`]), so a libtest line and the live line never share a row.
//!
//! Writing never panics: a closed stdout (`rpconform run ... | head`) only stops the printing;
//! the run goes on, cleans up and writes its reports.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};

use crate::http::Exchange;
use crate::report::{ScenarioResult, Status};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Color {
    #[default]
    Auto,
    Always,
    Never,
}

impl std::str::FromStr for Color {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Color::Auto),
            "always" => Ok(Color::Always),
            "never" => Ok(Color::Never),
            _ => Err(format!("--color takes auto, always or never, not `{s}`")),
        }
    }
}

/// How the console behaves.
#[derive(Debug, Clone)]
pub struct ConsoleOptions {
    /// One character per test (`-q`).
    pub quiet: bool,
    pub color: Color,
    /// Show each exchange as it happens (`-v`).
    pub verbose: bool,
    /// Write libtest's lines to this file instead of stdout, and nothing to stderr (the fault
    /// matrix runs several runs at once).
    pub logfile: Option<std::path::PathBuf>,
    /// Interval of the heartbeat line when stderr is not a terminal.
    pub heartbeat: Duration,
    /// A running test is announced as slow past this (and at each doubling).
    pub slow: Duration,
}

impl Default for ConsoleOptions {
    fn default() -> Self {
        ConsoleOptions {
            quiet: false,
            color: Color::Auto,
            verbose: false,
            logfile: None,
            heartbeat: Duration::from_secs(30),
            slow: Duration::from_secs(60),
        }
    }
}

/// Does NO_COLOR ask for no color (set and not empty)?
fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Makes the target the live line is drawn on (stderr in a run), anew each time the line
/// reappears after it was cleared.
pub type LiveTarget = Box<dyn Fn() -> ProgressDrawTarget + Send + Sync>;

struct Out {
    sink: Box<dyn Write + Send>,
    /// stderr: notices, heartbeats (the live line is the bar's).
    err: Box<dyn Write + Send>,
    /// stdout (or the log) failed: a closed pipe. Nothing more is written there.
    closed: bool,
    /// Characters on the current terse line.
    terse_col: usize,
    /// The live line, while it is on screen.
    bar: Option<ProgressBar>,
    last_heartbeat: Instant,
    /// When a status line (`deleting N resources`) was last printed, without a terminal.
    last_status: Option<Instant>,
}

struct Running {
    since: Instant,
    estimate: Duration,
    slow_noted: Duration,
}

#[derive(Default)]
struct Progress {
    total: usize,
    done: usize,
    failed: usize,
    /// The rules that failed in the tests so far (ambient rules included), MUST or not.
    rules_failing: std::collections::BTreeSet<String>,
    running: HashMap<String, Running>,
    /// Tests skipped without a line of their own (not applicable, not run), by reason, in the
    /// order first seen: one line per reason ([`Console::skipped_summary`]).
    skipped: Vec<(String, usize)>,
    /// Estimated work of the tests not started yet, and how many may run at once.
    queued: Duration,
    slots: usize,
    /// Resources the ended tests' cleanups are still deleting.
    deleting: usize,
}

pub struct Console {
    opts: ConsoleOptions,
    color: bool,
    /// Where a live progress line is drawn: a terminal's stderr, not quiet, no logfile.
    live: Option<LiveTarget>,
    /// Heartbeat and slow-test lines on stderr.
    notices: bool,
    out: Mutex<Out>,
    progress: Mutex<Progress>,
    start: Instant,
}

const TERSE_WIDTH: usize = 88;

/// Failed tests whose failure text the console prints in full.
const MAX_FAILURE_DETAILS: usize = 20;

fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

impl Console {
    pub fn new(opts: ConsoleOptions) -> std::io::Result<Console> {
        let (sink, tty): (Box<dyn Write + Send>, bool) = match &opts.logfile {
            Some(p) => (Box::new(std::fs::File::create(p)?), false),
            None => (Box::new(std::io::stdout()), std::io::stdout().is_terminal()),
        };
        Ok(Self::with_sinks(
            opts,
            sink,
            tty,
            Box::new(std::io::stderr()),
            Box::new(ProgressDrawTarget::stderr),
        ))
    }

    /// A console writing to these sinks, its live line drawn on what `live` makes (only when
    /// that is a terminal: plain lines on `err` otherwise).
    pub fn with_sinks(
        opts: ConsoleOptions,
        sink: Box<dyn Write + Send>,
        tty: bool,
        err: Box<dyn Write + Send>,
        live: LiveTarget,
    ) -> Console {
        let color = match opts.color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => tty && !no_color_env(),
        };
        let live = (opts.logfile.is_none() && !opts.quiet && !live().is_hidden()).then_some(live);
        Console {
            live,
            notices: opts.logfile.is_none(),
            color,
            out: Mutex::new(Out {
                sink,
                err,
                closed: false,
                terse_col: 0,
                bar: None,
                last_heartbeat: Instant::now(),
                last_status: None,
            }),
            progress: Mutex::new(Progress::default()),
            start: Instant::now(),
            opts,
        }
    }

    pub fn verbose(&self) -> bool {
        self.opts.verbose
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Out> {
        self.out.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn paint(&self, text: &str, code: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Write to stdout (or the log); a failure (a closed pipe) stops stdout output for good.
    fn write_out(out: &mut Out, text: &str, flush: bool) {
        if out.closed {
            return;
        }
        let ok =
            out.sink.write_all(text.as_bytes()).is_ok() && (!flush || out.sink.flush().is_ok());
        if !ok {
            out.closed = true;
        }
    }

    /// Remove the live line from the screen (it is drawn anew by the next [`Console::tick`]).
    fn clear_status(out: &mut Out) {
        if let Some(bar) = out.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Write with the live line lifted: it is cleared, `write` runs, and it is drawn again
    /// below what was written. Every write happens with `out` locked, and the bar's own lock
    /// is only ever taken inside that one, so the two cannot deadlock.
    fn above_live(out: &mut Out, write: impl FnOnce(&mut Out)) {
        match out.bar.clone() {
            Some(bar) => bar.suspend(|| write(out)),
            None => write(out),
        }
    }

    /// Show `text` as the live line, drawing the bar if it is not on screen.
    fn show_live(&self, out: &mut Out, text: String) {
        let Some(target) = &self.live else { return };
        let bar = out.bar.get_or_insert_with(|| {
            // The text is the whole line, cut to the terminal's width.
            let style = ProgressStyle::with_template("  {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            ProgressBar::with_draw_target(None, target())
                .with_style(style)
                .with_finish(ProgressFinish::AndClear)
        });
        bar.set_message(text);
    }

    /// Before a line on stderr: a row of `-q` characters on stdout is ended first, so the
    /// two never share a line (in a CI log they are one stream).
    fn end_terse_row(out: &mut Out) {
        if out.terse_col > 0 {
            Self::write_out(out, "\n", true);
            out.terse_col = 0;
        }
    }

    /// A whole line on stderr.
    fn err_line(out: &mut Out, text: &str) {
        Self::above_live(out, |out| {
            Self::end_terse_row(out);
            let _ = writeln!(out.err, "{text}");
            let _ = out.err.flush();
        });
    }

    /// A whole line on stdout (above the live line).
    pub fn line(&self, text: &str) {
        let mut out = self.lock();
        Self::above_live(&mut out, |out| {
            if out.terse_col > 0 {
                Self::write_out(out, "\n", false);
                out.terse_col = 0;
            }
            Self::write_out(out, &format!("{text}\n"), true);
        });
    }

    /// A line on stderr (notices, warnings); never fails.
    pub fn note(&self, text: &str) {
        if !self.notices {
            return;
        }
        let mut out = self.lock();
        Self::err_line(&mut out, text);
    }

    /// A line about what the run is doing now (`deleting 284 resources…`): the live line in a
    /// terminal; without one a plain line on stderr, at most every 2 s.
    pub fn status(&self, text: &str) {
        if !self.notices {
            return;
        }
        let mut out = self.lock();
        if self.live.is_some() {
            self.show_live(&mut out, text.to_string());
        } else if out
            .last_status
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(2))
        {
            out.last_status = Some(Instant::now());
            Self::err_line(&mut out, &format!("rpconform: {text}"));
        }
    }

    /// Remove the live line [`Console::status`] drew.
    pub fn clear_status_line(&self) {
        let mut out = self.lock();
        Self::clear_status(&mut out);
    }

    /// Has stdout gone away (a closed pipe)?
    pub fn closed(&self) -> bool {
        self.lock().closed
    }

    /// `running N tests`.
    pub fn title(&self, selected: usize, slots: usize) {
        {
            let mut p = self.progress.lock().unwrap_or_else(|e| e.into_inner());
            p.total = selected;
            p.slots = slots.max(1);
        }
        self.line("");
        self.line(&format!(
            "running {selected} test{}",
            if selected == 1 { "" } else { "s" }
        ));
    }

    /// The estimated work not started yet (for the ETA).
    pub fn queued(&self, work: Duration) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .queued = work;
    }

    /// How many resources the ended tests' cleanups are still deleting (shown once every
    /// test has reported: the run is not over until they are gone).
    pub fn deleting(&self, n: usize) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .deleting = n;
    }

    pub fn started(&self, name: &str, estimate: Duration) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .running
            .insert(
                name.to_string(),
                Running {
                    since: Instant::now(),
                    estimate,
                    slow_noted: Duration::ZERO,
                },
            );
    }

    /// A test is over (or was ignored): its libtest line, or its character with `-q`.
    pub fn finished(&self, r: &ScenarioResult) {
        let failed = matches!(r.status, Status::Failed | Status::Error(_));
        {
            let mut p = self.progress.lock().unwrap_or_else(|e| e.into_inner());
            p.running.remove(&r.name);
            p.done += 1;
            if failed {
                p.failed += 1;
            }
            for v in r.verdicts.iter().filter(|v| v.failed_outcome()) {
                if !p.rules_failing.contains(&v.rule) {
                    p.rules_failing.insert(v.rule.clone());
                }
            }
        }
        if self.opts.quiet {
            let c = match &r.status {
                Status::Passed | Status::Warned => self.paint(".", "32"),
                Status::Failed | Status::Error(_) => self.paint("F", "31"),
                Status::Skipped(_) => self.paint("i", "33"),
                Status::Interrupted(_) => self.paint("!", "33"),
            };
            let (done, total) = {
                let p = self.progress.lock().unwrap_or_else(|e| e.into_inner());
                (p.done, p.total)
            };
            let mut out = self.lock();
            Self::write_out(&mut out, &c, true);
            out.terse_col += 1;
            if out.terse_col >= TERSE_WIDTH {
                Self::write_out(&mut out, &format!(" {done}/{total}\n"), true);
                out.terse_col = 0;
            }
            return;
        }
        if let Status::Skipped(reason) = &r.status
            && !self.opts.verbose
            && !reason.starts_with("ignored")
        {
            // Not applicable, or not run: one line per reason, not one per test.
            let mut p = self.progress.lock().unwrap_or_else(|e| e.into_inner());
            match p.skipped.iter_mut().find(|(x, _)| x == reason) {
                Some((_, n)) => *n += 1,
                None => p.skipped.push((reason.clone(), 1)),
            }
            return;
        }
        let outcome = match &r.status {
            Status::Passed => self.paint("ok", "32"),
            Status::Warned => format!("{} (SHOULD rules failed)", self.paint("ok", "32")),
            Status::Failed | Status::Error(_) => self.paint("FAILED", "31"),
            Status::Skipped(reason) => self.paint(&format!("ignored, {reason}"), "33"),
            Status::Interrupted(at) => self.paint(&format!("interrupted, {at}"), "33"),
        };
        self.line(&format!("test {} ... {outcome}", r.name));
    }

    /// The tests skipped since the last call without a line of their own: one line per reason
    /// (`ignored, not applicable: needs a task API (...) — 12 tests`); `-v` prints each test
    /// instead, and the reports list every one.
    pub fn skipped_summary(&self) {
        let lines = std::mem::take(
            &mut self
                .progress
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .skipped,
        );
        if lines.is_empty() {
            return;
        }
        for (reason, n) in &lines {
            let tests = if *n == 1 { "test" } else { "tests" };
            self.line(&format!(
                "{} — {n} {tests}",
                self.paint(&format!("ignored, {reason}"), "33")
            ));
        }
        self.line("(each test by name: -v, or the reports)");
    }

    /// `-v`: one line per exchange, as it happens.
    pub fn exchange(&self, test: &str, ex: &Exchange) {
        if !self.opts.verbose {
            return;
        }
        let mut line = format!("    [{test}] {} ({} ms)", ex.summary(), ex.elapsed_ms);
        if ex.throttled_times > 0 {
            line.push_str(&format!(
                " after {} throttled answer(s)",
                ex.throttled_times
            ));
        }
        self.line(&line);
    }

    /// The failures section and `test result:`, once cleanup is over: resources left behind
    /// are a failed `cleanup` (as in JUnit), and a run interrupted during cleanup says so.
    pub fn summary(
        &self,
        failures: &[(String, String)],
        c: &crate::report::Counts,
        filtered: usize,
        left_behind: &[String],
        interrupted: bool,
    ) {
        let cleanup = (!left_behind.is_empty()).then(|| {
            (
                "cleanup".to_string(),
                format!(
                    "{} resource(s) the run created left behind (not confirmed deleted):\n{}",
                    left_behind.len(),
                    left_behind.join("\n")
                ),
            )
        });
        let failures: Vec<&(String, String)> = failures.iter().chain(&cleanup).collect();
        if !failures.is_empty() {
            self.line("");
            self.line("failures:");
            self.line("");
            // A defect every test meets would print hundreds of the same text: the first few in
            // full, then the names (every one is in the reports).
            for (name, text) in failures.iter().take(MAX_FAILURE_DETAILS) {
                self.line(&format!("---- {name} ----"));
                self.line(text.trim_end());
                self.line("");
            }
            if failures.len() > MAX_FAILURE_DETAILS {
                self.line(&format!(
                    "---- and {} more failed tests: every failure is in junit.xml, summary.md and report.html ----",
                    failures.len() - MAX_FAILURE_DETAILS
                ));
                self.line("");
            }
            self.line("");
            self.line("failures:");
            for (name, _) in failures {
                self.line(&format!("    {name}"));
            }
        }
        let bad = c.failed + c.errors + usize::from(cleanup.is_some());
        let word = if c.interrupted > 0 || interrupted {
            self.paint("INTERRUPTED", "33")
        } else if bad > 0 {
            self.paint("FAILED", "31")
        } else {
            self.paint("ok", "32")
        };
        let interrupted = if c.interrupted > 0 {
            format!("; {} interrupted", c.interrupted)
        } else {
            String::new()
        };
        self.line("");
        self.line(&format!(
            "test result: {word}. {} passed; {} failed; {} ignored; 0 measured; {filtered} filtered out{interrupted}; finished in {:.2}s",
            c.passed + c.warned,
            bad,
            c.skipped,
            self.start.elapsed().as_secs_f64()
        ));
        self.line("");
    }

    /// Redraw the live line, or print a heartbeat and slow-test notices; called a few times a
    /// second by the harness.
    pub fn tick(&self) {
        if !self.notices {
            return;
        }
        let now = Instant::now();
        let elapsed = now - self.start;
        let mut slow = Vec::new();
        let (line, running) = {
            let mut p = self.progress.lock().unwrap_or_else(|e| e.into_inner());
            let threshold = self.opts.slow;
            for (name, r) in p.running.iter_mut() {
                let took = now - r.since;
                let next = if r.slow_noted.is_zero() {
                    threshold
                } else {
                    r.slow_noted * 2
                };
                if took >= next {
                    r.slow_noted = next;
                    slow.push(format!("SLOW [> {}] {name}", human(next)));
                }
            }
            // ETA: the longest remaining estimate of a running test, or the queued work shared
            // by the slots, whichever is longer.
            let running_left = p
                .running
                .values()
                .map(|r| r.estimate.saturating_sub(now - r.since))
                .max()
                .unwrap_or_default();
            let eta = running_left.max(p.queued / p.slots.max(1) as u32);
            let eta = if p.done < p.total && !eta.is_zero() {
                format!(", ETA ~{}", human(eta))
            } else if p.done >= p.total && p.deleting > 0 {
                format!(", deleting {} resource(s) they created", p.deleting)
            } else {
                String::new()
            };
            let rules = match p.rules_failing.len() {
                0 => String::new(),
                n => format!(
                    " ({n} rule{} failing: {})",
                    if n == 1 { "" } else { "s" },
                    p.rules_failing
                        .iter()
                        .take(3)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                        + if n > 3 { ", …" } else { "" }
                ),
            };
            (
                format!(
                    "{}/{} done, {} failed{rules}, {} running, {} elapsed{eta}",
                    p.done,
                    p.total,
                    p.failed,
                    p.running.len(),
                    human(elapsed)
                ),
                p.running.len(),
            )
        };
        for s in slow {
            self.note(&s);
        }
        let mut out = self.lock();
        if self.live.is_some() {
            self.show_live(&mut out, line);
        } else if now - out.last_heartbeat >= self.opts.heartbeat && running > 0 {
            out.last_heartbeat = now;
            Self::err_line(&mut out, &format!("rpconform: {line}"));
        }
    }

    /// Remove the live line (before the final output), and say what was skipped.
    pub fn done(&self) {
        {
            let mut out = self.lock();
            Self::clear_status(&mut out);
        }
        self.skipped_summary();
        let mut out = self.lock();
        Self::clear_status(&mut out);
        if out.terse_col > 0 {
            Self::write_out(&mut out, "\n", true);
            out.terse_col = 0;
        }
        Self::write_out(&mut out, "", true);
    }
}

#[cfg(test)]
#[path = "console_tests.rs"]
mod tests;
