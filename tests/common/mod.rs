//! Helpers shared by the end-to-end tests: run the `rpconform` binary (or any command) with a
//! time bound, and signal and wait for a child a test drives itself; give each test its own
//! scratch directory; read and summarise the reports a run writes, with the one reading of
//! its verdicts; and (in [`http`]) read the requests a raw-socket test server receives.
//!
//! Every run talks only to the embedded reference RP, which listens on 127.0.0.1.

#![allow(dead_code)] // each test binary uses a different subset of these helpers

pub mod gateway;
pub mod http;
pub mod shared;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The flags that keep a run against the embedded RP short: operations last 300 ms and every
/// wait (Retry-After, sleeps) is scaled by 0.01.
///
/// The first poll of an operation waits Retry-After (10 s) × the time scale, so the scaled wait
/// (100 ms) must stay well below the operation duration: otherwise every operation has ended
/// before it is first polled, and the rules only judged while an operation runs (LOC-05,
/// PUT-03, PSTATE-05 during a create...) get no verdict at all. `--op-duration 200
/// --time-scale 0.02` (200 ms wait, 200 ms operation) is exactly that case.
pub const FAST: &[&str] = &["--op-duration", "300", "--time-scale", "0.01"];

/// The time scale in [`FAST`], as reports record it.
pub const FAST_SCALE: f64 = 0.01;

/// Generous bound for one whole run of the suites; a run that takes longer is killed.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// Bound for commands that send no request (check, rules, --list, bad usage).
pub const QUICK_TIMEOUT: Duration = Duration::from_secs(60);

/// The crate root: suites/ and schemas/ are found relative to it.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn schemas_dir() -> PathBuf {
    root().join("schemas")
}

pub fn suites_dir() -> PathBuf {
    root().join("suites")
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub command: String,
}

impl Output {
    /// The exit code (-1 when killed by a signal).
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }

    /// stdout and stderr, cut to their last `max` characters each, for assertion messages.
    pub fn tail(&self, max: usize) -> String {
        format!(
            "$ {}\n--- exit {} after {:.1} s\n--- stdout (tail):\n{}\n--- stderr (tail):\n{}",
            self.command,
            self.code(),
            self.elapsed.as_secs_f64(),
            tail(&self.stdout, max),
            tail(&self.stderr, max)
        )
    }
}

/// The last `max` characters of `s` (whole string when shorter).
pub fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Run `rpconform ARGS` in the crate root; kill it and panic when it outlives `timeout`.
pub fn rpconform<S: AsRef<str>>(args: &[S], timeout: Duration) -> Output {
    rpconform_in(&root(), &[], args, timeout)
}

/// Run `rpconform ARGS` in `dir` with the variables `env` added; kill it and panic when it
/// outlives `timeout`.
pub fn rpconform_in<S: AsRef<str>>(
    dir: &Path,
    env: &[(&str, &str)],
    args: &[S],
    timeout: Duration,
) -> Output {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rpconform"));
    cmd.args(&args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1");
    run_command(cmd, &format!("rpconform {}", args.join(" ")), timeout)
}

/// Run `cmd` (named `command` in messages) with stdin closed and its output captured; kill it
/// and panic when it outlives `timeout`.
pub fn run_command(cmd: Command, command: &str, timeout: Duration) -> Output {
    run_watched(cmd, command, timeout, |_| None)
}

/// [`run_command`], asking `watch` every 20 ms (with the child's pid) whether the process must
/// be stopped: when it gives a reason, or the run outlives `timeout`, the process and every
/// process it started are killed and the test panics with the reason and the output so far.
pub fn run_watched(
    mut cmd: Command,
    command: &str,
    timeout: Duration,
    watch: impl FnMut(u32) -> Option<String>,
) -> Output {
    let started = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
    wait_bounded(child, command, started, timeout, watch)
}

/// Wait for a child the test started and drove itself (signals, reads of its output) for at
/// most `limit`, then kill it (and every process it started) and panic. The output is what its
/// piped stdout and stderr still held (a stream the test took is empty here).
pub fn finish(child: Child, command: &str, limit: Duration) -> Output {
    wait_bounded(child, command, Instant::now(), limit, |_| None)
}

/// Send `sig` (`INT`, `TERM`, `HUP`, `KILL`...) to the child, with kill(1).
pub fn signal(child: &Child, sig: &str) {
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args([&format!("-{sig}"), &pid])
        .status()
        .unwrap_or_else(|e| panic!("cannot run kill -{sig} {pid}: {e}"));
    assert!(sent.success(), "kill -{sig} {pid} failed: {sent}");
}

fn wait_bounded(
    mut child: Child,
    command: &str,
    started: Instant,
    limit: Duration,
    mut watch: impl FnMut(u32) -> Option<String>,
) -> Output {
    // Drain both pipes on threads so a chatty child never blocks on a full pipe.
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let status = loop {
        let why = watch(child.id()).or_else(|| {
            (started.elapsed() > limit).then(|| format!("it ran longer than {} s", limit.as_secs()))
        });
        if let Some(why) = why {
            kill_tree(&mut child);
            let stdout = out.join().unwrap_or_default();
            let stderr = err.join().unwrap_or_default();
            panic!(
                "{command} was killed: {why}\n--- stdout (tail):\n{}\n--- stderr (tail):\n{}",
                tail(&stdout, 4000),
                tail(&stderr, 4000)
            );
        }
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for {command}: {e}"),
        }
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        elapsed: started.elapsed(),
        command: command.to_string(),
    }
}

/// Read a pipe to its end on a thread, lossily as text (empty when there is no pipe).
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = pipe {
            let _ = r.read_to_end(&mut buf);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Kill the child and every process under it (read from /proc: a wrapper's child, a token
/// command's shell and what it started), and reap the child.
fn kill_tree(child: &mut Child) {
    let mut under = Vec::new();
    let mut todo = vec![child.id()];
    while let Some(pid) = todo.pop() {
        for task in std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for c in children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok())
            {
                under.push(c);
                todo.push(c);
            }
        }
    }
    if !under.is_empty() {
        let _ = Command::new("kill")
            .arg("-KILL")
            .args(under.iter().map(u32::to_string))
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A scratch directory of its own per test, removed when dropped, except after a failed
/// assertion, when it is kept (and its path printed) so the reports can be inspected.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(label: &str) -> Self {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let path = std::env::temp_dir().join(format!(
            "rpconform-e2e-{label}-{}-{stamp}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
        Scratch { path }
    }

    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.path.join(p)
    }

    /// Path as a `&str` for command lines.
    pub fn str(&self, p: impl AsRef<Path>) -> String {
        self.join(p).display().to_string()
    }

    /// Write `text` to `name` inside the directory; returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", d.display()));
        }
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", p.display()));
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "kept scratch directory for inspection: {}",
                self.path.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Read and parse `DIR/report.json`.
pub fn read_report(dir: &Path) -> Value {
    let p = dir.join("report.json");
    let text =
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", p.display()))
}

/// Read and parse `DIR/junit.xml` with quick-junit's own deserializer.
pub fn read_junit(dir: &Path) -> quick_junit::Report {
    let p = dir.join("junit.xml");
    let text =
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
    quick_junit::Report::deserialize_from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{} does not parse as JUnit XML: {e}\n{}",
            p.display(),
            tail(&text, 2000)
        )
    })
}

/// The `results` array of a report.json.
pub fn results(report: &Value) -> &[Value] {
    report["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Every test name of a report.json, sorted.
pub fn result_names(report: &Value) -> Vec<String> {
    let mut v: Vec<String> = results(report)
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_string))
        .collect();
    v.sort();
    v
}

/// Every test's testcase name of a JUnit report, sorted (the `run` testsuite — the run's status
/// and cleanup — and the `conformance` testsuite, one testcase per rule, left out).
pub fn junit_names(report: &quick_junit::Report) -> Vec<String> {
    let mut v: Vec<String> = report
        .test_suites
        .iter()
        .filter(|s| !matches!(s.name.as_str(), "conformance" | "run"))
        .flat_map(|s| s.test_cases.iter().map(|c| c.name.as_str().to_string()))
        .collect();
    v.sort();
    v
}

// ---- Verdicts: the one reading of what passed, failed and was judged ----
//
// Each test of a report.json holds one verdict per rule it checked, with an `outcome`:
// `passed`, `failed`, `exempt` or `not-judged`. A rule *failed* in a test when its outcome there
// is `failed` (at any level); it was *judged* there when its outcome is `passed` or `failed` (a
// check of it decided something), as the conformance view counts it.

/// Every verdict of every test of a report.json.
pub fn verdicts(report: &Value) -> impl Iterator<Item = &Value> {
    results(report)
        .iter()
        .flat_map(|r| r["verdicts"].as_array().into_iter().flatten())
}

/// Did the rule of this verdict fail (at any level)?
pub fn is_failed(verdict: &Value) -> bool {
    verdict["outcome"] == "failed"
}

/// Was the rule of this verdict judged: did a check of it pass or fail?
pub fn is_judged(verdict: &Value) -> bool {
    verdict["outcome"] == "passed" || is_failed(verdict)
}

/// The rules of a report's verdicts that `keep` keeps, each once.
pub fn rules_where(report: &Value, keep: impl Fn(&Value) -> bool) -> BTreeSet<String> {
    verdicts(report)
        .filter(|v| keep(v))
        .filter_map(|v| v["rule"].as_str().map(str::to_string))
        .collect()
}

/// The rules with the outcome `outcome` (`passed`, `failed`, `exempt`, `not-judged`) in at
/// least one test.
pub fn rules_with_outcome(report: &Value, outcome: &str) -> BTreeSet<String> {
    rules_where(report, |v| v["outcome"] == outcome)
}

/// The rules that failed in at least one test.
pub fn failed_rules(report: &Value) -> BTreeSet<String> {
    rules_where(report, is_failed)
}

/// The rules that passed in at least one test.
pub fn passed_rules(report: &Value) -> BTreeSet<String> {
    rules_with_outcome(report, "passed")
}

/// The rules judged (passed or failed) in at least one test.
pub fn judged_rules(report: &Value) -> BTreeSet<String> {
    rules_where(report, is_judged)
}

/// Per failed rule: in how many tests it failed.
pub fn failed_rule_counts(report: &Value) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for v in verdicts(report).filter(|v| is_failed(v)) {
        if let Some(rule) = v["rule"].as_str() {
            *out.entry(rule.to_string()).or_default() += 1;
        }
    }
    out
}

/// Every failure (expected / seen / at) of every failed verdict, with its verdict.
pub fn failures(report: &Value) -> impl Iterator<Item = (&Value, &Value)> {
    verdicts(report).filter(|v| is_failed(v)).flat_map(|v| {
        v["failures"]
            .as_array()
            .into_iter()
            .flatten()
            .map(move |f| (v, f))
    })
}

/// `counts.<field>` of a report.json (0 when absent, so a missing field fails loudly elsewhere).
pub fn count(report: &Value, field: &str) -> u64 {
    report["counts"][field]
        .as_u64()
        .unwrap_or_else(|| panic!("report.json has no counts.{field}: {}", report["counts"]))
}

/// A short, readable digest of every test that did not pass or skip: name, status, detail and
/// each failed verdict with expected/seen. For assertion messages.
pub fn excerpt(report: &Value) -> String {
    let mut out = format!("counts: {}\n", report["counts"]);
    for r in results(report) {
        let status = r["status"].as_str().unwrap_or("?");
        if status == "passed" || status == "skipped" {
            continue;
        }
        out.push_str(&format!(
            "- {} [{status}]",
            r["name"].as_str().unwrap_or("?")
        ));
        if let Some(d) = r["detail"].as_str() {
            out.push_str(&format!(": {}", cut(d, 300)));
        }
        out.push('\n');
        for v in r["verdicts"].as_array().into_iter().flatten() {
            if !is_failed(v) {
                continue;
            }
            out.push_str(&format!(
                "    {} {}:",
                v["rule"].as_str().unwrap_or("?"),
                v["level"].as_str().unwrap_or("?")
            ));
            for f in v["failures"].as_array().into_iter().flatten().take(2) {
                out.push_str(&format!(
                    " expected {} / seen {} ({});",
                    cut(f["expected"].as_str().unwrap_or("?"), 120),
                    cut(f["seen"].as_str().unwrap_or("?"), 120),
                    f["at"].as_str().unwrap_or("-")
                ));
            }
            out.push('\n');
        }
    }
    out
}

/// `s` cut to `max` characters, with an ellipsis.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(max).collect();
        c.push('…');
        c
    }
}

/// Wait until a run writing its reports to `reports` has journaled a resource it creates (its
/// PUT is journaled before it is sent): the moment a test that interrupts a run must wait for,
/// whatever the machine load. Panics after two minutes.
pub fn wait_until_journaled(reports: &Path) {
    let journaled = || {
        std::fs::read_dir(reports).ok().is_some_and(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("journal-"))
                .any(|e| {
                    std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains(r#""event":"put""#))
                })
        })
    };
    let waited = Instant::now();
    while !journaled() {
        assert!(
            waited.elapsed() < Duration::from_secs(120),
            "the run journaled nothing it created in 120 s ({})",
            reports.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Is this a CI run? `CI` set to a true value (`1`, `true`, `yes`, any case), as GitHub Actions,
/// Azure Pipelines and `.ci/run` set it.
pub fn in_ci() -> bool {
    std::env::var("CI")
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// A test that needs a tool (a browser, a Python package, a mock server) calls this when the
/// tool is missing: under CI it fails, saying what to install (CI installs everything the tests
/// need, so a missing tool is a broken CI, never a silent pass); elsewhere it prints a skip no
/// one can miss and returns, so the caller returns too.
pub fn require_tool(what: &str, how: &str) {
    let msg = format!(
        "\n\n==================== SKIPPED ====================\n{what} is not available: {how}\n\
         (under CI — CI=1 or CI=true — this is a failure, not a skip)\n=================================================\n"
    );
    if in_ci() {
        panic!("{msg}");
    }
    skipped(format!("{what} is not available ({how})"));
}

thread_local! {
    /// Why the test running on this thread skipped itself (see [`tool_tests`]).
    static SKIPPED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Record that the test on this thread is skipping itself, and why: [`tool_tests`] counts it
/// as ignored, with the reason, on the libtest line.
pub fn skipped(why: String) {
    SKIPPED.with(|s| *s.borrow_mut() = Some(why));
}

/// The `main` of a test file whose tests need a tool that may be missing (a browser, the Azure
/// SDK, the npm mock servers; the file sets `harness = false`): each test that skips itself
/// ([`require_tool`]) is reported *ignored* with its reason, never `ok`. libtest's arguments
/// (filters, `--list`, `--test-threads`) work as ever.
pub fn tool_tests(tests: &[(&'static str, fn())]) -> std::process::ExitCode {
    use libtest_mimic::{Arguments, Completion, Trial};
    let args = Arguments::from_args();
    let trials = tests
        .iter()
        .map(|&(name, f)| {
            Trial::ignorable_test(name, move || {
                SKIPPED.with(|s| s.borrow_mut().take());
                f();
                Ok(match SKIPPED.with(|s| s.borrow_mut().take()) {
                    Some(why) => Completion::ignored_with(why),
                    None => Completion::Completed,
                })
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// `rpconform serve`, killed (by its pid) when dropped.
pub struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`, as it said it listens.
    pub base_url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `rpconform serve --port 0 --write-target FILE` with `extra` arguments (by default
/// `--op-duration 300`), and wait until it says the file is written.
pub fn serve(target: &Path, extra: &[&str]) -> Served {
    use std::io::BufRead;
    let mut args: Vec<String> = vec!["serve".into(), "--port".into(), "0".into()];
    if !extra.contains(&"--op-duration") {
        args.extend(["--op-duration".into(), "300".into()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--write-target".into(), target.display().to_string()]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpconform"))
        .args(&args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rpconform serve starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut base = String::new();
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(b) = line.strip_prefix("rpconform reference RP listening on ") {
                base = b.trim().to_string();
            }
            if line.starts_with("target file:") {
                let _ = tx.send(base.clone());
            }
        }
    });
    let mut served = Served {
        child,
        base_url: String::new(),
    };
    served.base_url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("rpconform serve wrote its target file within 30 s");
    served
}
