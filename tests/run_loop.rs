//! The run loop end to end, against the reference RP in this process (a target file, so the
//! RP outlives the run) and, where a misbehaviour is needed, a proxy in front of it
//! (tests/proxy): signals (SIGINT, SIGINT then SIGTERM, SIGHUP, SIGKILL then `cleanup
//! --journal`), a closed stdout, throttling, the scheduler (tests at once, longest first),
//! cleanup as each test ends, confirmed deletes, and `cleanup --sweep-tagged`.

use crate::common;
mod proxy;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::{
    QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, read_report, results, rpconform, schemas_dir, signal,
    suites_dir,
};
use proxy::{Mode, Proxy};
use serde_json::Value;

const SUB: &str = "00000000-0000-0000-0000-00000000c0de";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rpconform")
}

/// The reference RP on 127.0.0.1 with operations of `op_ms`, and the runtime that serves it.
fn start_rp(op_ms: u64) -> (tokio::runtime::Runtime, rpconform_refrp::RunningServer) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let settings = rpconform_refrp::Settings {
        op_duration: Duration::from_millis(op_ms),
        ..Default::default()
    };
    let server = rt.block_on(rpconform_refrp::start(settings, 0)).unwrap();
    (rt, server)
}

fn target_file(dir: &Scratch, base: &str) -> PathBuf {
    dir.write(
        "target.yaml",
        &rpconform::target::embedded_target_yaml(base),
    )
}

fn spawn(args: &[&str], stdout: Stdio) -> Child {
    Command::new(bin())
        .args(args)
        .current_dir(common::root())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for the child (killing it past `limit`); its status and stderr.
fn finish(child: Child, limit: Duration) -> (ExitStatus, String) {
    let out = common::finish(child, "the run", limit);
    (out.status, out.stderr)
}

fn get_status(rt: &tokio::runtime::Runtime, url: &str) -> u16 {
    rt.block_on(async { reqwest::get(url).await.map(|r| r.status().as_u16()) })
        .unwrap()
}

fn rg_url(base: &str, report: &Value) -> String {
    format!(
        "{base}/subscriptions/{SUB}/resourceGroups/rpconform-{}?api-version=2021-04-01",
        report["run"]["run_id"].as_str().unwrap()
    )
}

/// The lines of the journals in `dir` (one per run: `journal-<run id>.jsonl`), oldest first.
fn journal_lines(dir: &Path) -> Vec<Value> {
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("journal") && n.ends_with(".jsonl"))
                })
                .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .flat_map(|(_, p)| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect::<Vec<Value>>()
        })
        .collect()
}

fn statuses(report: &Value) -> Vec<(String, String)> {
    results(report)
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or("").to_string(),
                r["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// No test failed or errored because of the interruption, and the reports say interrupted.
fn assert_interrupted_cleanly(report: &Value) {
    assert_eq!(report["run"]["interrupted"], true, "{}", report["run"]);
    let bad: Vec<(String, String)> = statuses(report)
        .into_iter()
        .filter(|(_, s)| s == "failed" || s == "error")
        .collect();
    assert!(bad.is_empty(), "the interruption made tests fail: {bad:?}");
    assert!(
        statuses(report).iter().any(|(_, s)| s == "interrupted"),
        "no test is marked interrupted"
    );
}

#[test]
fn sigint_mid_poll_is_interrupted_not_a_rule_failure() {
    // Operations that last a minute: every poll is waiting when SIGINT comes.
    let (rt, server) = start_rp(60_000);
    let dir = Scratch::new("sigint-poll");
    let target = target_file(&dir, &server.base_url());
    let suite = dir.write(
        "suite.yaml",
        "suite: poll\nscenarios:\n  - name: put-and-poll\n    steps:\n      - fresh: {as: r, type: widgets}\n      - name: put\n        request: {method: PUT, url: \"${r.url}\", body: \"${r.sent}\"}\n      - name: wait\n        poll: put\n        expect:\n          - {outcome: Succeeded, rule: PUT-04}\n",
    );
    let reports = dir.join("reports");
    let child = spawn(
        &[
            "run",
            suite.to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.01",
            "--report-dir",
            reports.to_str().unwrap(),
            "--schemas",
            schemas_dir().to_str().unwrap(),
        ],
        Stdio::null(),
    );
    // Once it has created something: the signal then always finds tests running.
    common::wait_until_journaled(&reports);
    signal(&child, "INT");
    let (status, stderr) = finish(child, Duration::from_secs(120));
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report = read_report(&reports);
    assert_interrupted_cleanly(&report);
    let r = &results(&report)[0];
    assert!(
        r["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| !common::is_failed(v)),
        "{r}"
    );
    assert!(
        std::fs::read_to_string(reports.join("summary.md"))
            .unwrap()
            .contains("interrupted")
    );
    assert!(
        std::fs::read_to_string(reports.join("junit.xml"))
            .unwrap()
            .contains("interrupted")
    );
    assert_eq!(get_status(&rt, &rg_url(&server.base_url(), &report)), 404);
    rt.block_on(server.shutdown());
}

/// How CI systems cancel a job: SIGINT, then SIGTERM a few seconds later. Cleanup still
/// happens, or what it could not confirm is in the journal, which `cleanup --journal` finishes.
#[test]
fn sigint_then_sigterm_still_cleans_up() {
    let (rt, server) = start_rp(1500);
    let dir = Scratch::new("int-term");
    let target = target_file(&dir, &server.base_url());
    let reports = dir.join("reports");
    let child = spawn(
        &[
            "run",
            suites_dir().to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.05",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    // Once it has created something: the signal then always finds tests running.
    common::wait_until_journaled(&reports);
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, "TERM");
    let (status, stderr) = finish(child, Duration::from_secs(120));
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report = read_report(&reports);
    assert_interrupted_cleanly(&report);
    let left = report["run"]["left_behind"].as_array().unwrap().clone();
    let journal = journal_lines(&reports);
    assert!(journal.iter().any(|l| l["event"] == "end"), "{journal:?}");
    if !left.is_empty() {
        // Forced: the journal knows what is left, and cleanup finishes it.
        let out = rpconform(
            &["cleanup", "--journal", reports.to_str().unwrap()],
            QUICK_TIMEOUT,
        );
        assert_eq!(out.code(), 0, "{}{}", out.stdout, out.stderr);
    }
    assert_eq!(get_status(&rt, &rg_url(&server.base_url(), &report)), 404);
    rt.block_on(server.shutdown());
}

/// A dropped ssh session (SIGHUP) interrupts the run like Ctrl-C: it cleans up and reports.
#[test]
fn sighup_does_not_kill_the_run() {
    let (rt, server) = start_rp(1500);
    let dir = Scratch::new("sighup");
    let target = target_file(&dir, &server.base_url());
    let reports = dir.join("reports");
    let child = spawn(
        &[
            "run",
            suites_dir().to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.05",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    // Once it has created something: the signal then always finds tests running.
    common::wait_until_journaled(&reports);
    signal(&child, "HUP");
    let (status, stderr) = finish(child, Duration::from_secs(120));
    assert_eq!(
        status.code(),
        Some(130),
        "killed by SIGHUP, or not marked interrupted\n{stderr}"
    );
    let report = read_report(&reports);
    assert_interrupted_cleanly(&report);
    assert_eq!(
        report["run"]["left_behind"].as_array().map(Vec::len),
        Some(0),
        "{}",
        report["run"]
    );
    assert_eq!(get_status(&rt, &rg_url(&server.base_url(), &report)), 404);
    rt.block_on(server.shutdown());
}

/// `rpconform run ... | head`: stdout goes away early; no panic, the run still cleans up and
/// writes its reports. `run --list | head -1` exits 0.
#[test]
fn a_closed_stdout_never_panics_and_still_cleans_up() {
    let (rt, server) = start_rp(300);
    let dir = Scratch::new("closed-pipe");
    let target = target_file(&dir, &server.base_url());
    let reports = dir.join("reports");
    let mut child = spawn(
        &[
            "run",
            suites_dir().join("async-put.yaml").to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.01",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
        Stdio::piped(),
    );
    // Read one line, then close the pipe (what `head -1` does).
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    let _ = out.read(&mut first);
    drop(out);
    let (status, stderr) = finish(child, Duration::from_secs(120));
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
    let report = read_report(&reports);
    assert_eq!(
        report["run"]["left_behind"].as_array().map(Vec::len),
        Some(0)
    );
    assert_eq!(get_status(&rt, &rg_url(&server.base_url(), &report)), 404);

    let mut child = spawn(
        &["run", suites_dir().to_str().unwrap(), "--list"],
        Stdio::piped(),
    );
    let mut out = child.stdout.take().unwrap();
    let _ = out.read(&mut first);
    drop(out);
    let (status, stderr) = finish(child, Duration::from_secs(60));
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
    rt.block_on(server.shutdown());
}

/// A run killed outright leaves its journal; `cleanup --journal` deletes exactly what it lists
/// (confirmed), the tagged resource group included, and a second pass has nothing to do.
#[test]
fn sigkill_then_cleanup_journal() {
    let (rt, server) = start_rp(3000);
    let base = server.base_url();
    let dir = Scratch::new("sigkill");
    let target = target_file(&dir, &base);
    let reports = dir.join("reports");
    let mut child = spawn(
        &[
            "run",
            suites_dir().to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.05",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    // Until the journal names a few resources (data-plane ones too), then SIGKILL.
    let start = Instant::now();
    loop {
        let j = journal_lines(&reports);
        let puts = j.iter().filter(|l| l["event"] == "put").count();
        let dp = j.iter().any(|l| {
            l["event"] == "put" && l["url"].as_str().unwrap_or("").contains("/dataplane/")
        });
        if puts >= 20 && dp {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the journal never listed resources: {j:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    let _ = child.wait();
    let journal = journal_lines(&reports);
    let header = &journal[0];
    assert_eq!(header["event"], "run");
    let run_id = header["run_id"].as_str().unwrap();
    let rg = format!(
        "{base}/subscriptions/{SUB}/resourceGroups/rpconform-{run_id}?api-version=2021-04-01"
    );
    // The group is there, tagged as the run's.
    let tags = rt.block_on(async {
        let text = reqwest::get(&rg).await.unwrap().text().await.unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["tags"].clone()
    });
    assert_eq!(tags["rpconform-run"], run_id, "{tags}");
    assert_eq!(tags["created-by"], "rpconform", "{tags}");
    assert!(tags["rpconform-created-at"].is_string(), "{tags}");
    let dataplane: Vec<String> = journal
        .iter()
        .filter(|l| l["event"] == "put")
        .filter_map(|l| l["url"].as_str())
        .filter(|u| u.contains("/dataplane/"))
        .map(|u| format!("{u}?api-version=2024-05-01"))
        .collect();
    let out = rpconform(
        &["cleanup", "--journal", reports.to_str().unwrap()],
        QUICK_TIMEOUT,
    );
    let text = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(out.code(), 0, "{text}");
    assert!(text.contains("confirmed gone"), "{text}");
    assert_eq!(get_status(&rt, &rg), 404, "{text}");
    for u in &dataplane {
        assert_eq!(get_status(&rt, u), 404, "{u} is still there\n{text}");
    }
    // Everything is confirmed: a second pass has nothing to do.
    let out = rpconform(
        &["cleanup", "--journal", reports.to_str().unwrap()],
        QUICK_TIMEOUT,
    );
    let text = &out.stdout;
    assert_eq!(out.code(), 0, "{text}");
    assert!(text.contains("nothing outstanding"), "{text}");
    rt.block_on(server.shutdown());
}

/// A front door that throttles one request in five: waited out and retried, counted in the
/// reports, never judged: the verdict is clean.
#[test]
fn a_throttling_target_still_gets_a_clean_verdict() {
    let (rt, server) = start_rp(300);
    let proxy = Proxy::start(&server.base_url(), Mode::ThrottleEvery(5));
    let dir = Scratch::new("throttle");
    let target = target_file(&dir, &proxy.base_url());
    let reports = dir.join("reports");
    let s = suites_dir();
    let out = rpconform(
        &[
            "run",
            s.join("async-put.yaml").to_str().unwrap(),
            s.join("etag.yaml").to_str().unwrap(),
            s.join("location-202.yaml").to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.01",
            "--report-dir",
            reports.to_str().unwrap(),
        ],
        RUN_TIMEOUT,
    );
    let report = read_report(&reports);
    assert_eq!(
        out.code(),
        0,
        "{}\n{}",
        common::excerpt(&report),
        out.stdout
    );
    let seen_429 = proxy.seen().iter().filter(|(_, _, s)| *s == 429).count() as u64;
    let counted = report["run"]["throttling"]["count"].as_u64().unwrap();
    assert!(
        seen_429 > 10,
        "the proxy throttled only {seen_429} requests"
    );
    assert_eq!(counted, seen_429, "{}", report["run"]);
    assert!(report["run"]["requests"].as_u64().unwrap() > counted);
    assert!(report["run"]["request_rate"].as_f64().unwrap() > 0.0);
    // The throttled answers stay on the exchanges, marked as such.
    let marked = results(&report)
        .iter()
        .flat_map(|r| r["exchanges"].as_array().cloned().unwrap_or_default())
        .filter(|x| x["throttled"].as_array().is_some_and(|t| !t.is_empty()))
        .count();
    assert!(marked > 0, "no exchange keeps its throttled answers");
    let summary = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(summary.contains("throttled"), "{summary}");
    drop(proxy);
    rt.block_on(server.shutdown());
}

fn sleep_suite(dir: &Scratch, tests: &[(&str, u32)]) -> PathBuf {
    let mut s = String::from("suite: timing\nscenarios:\n");
    for (name, secs) in tests {
        s.push_str(&format!(
            "  - name: {name}\n    steps:\n      - sleep: {secs}\n      - request: {{url: \"${{target.provider_url}}/widgets\"}}\n        expect:\n          - {{status: 200, rule: PUT-04}}\n"
        ));
    }
    dir.write("timing.yaml", &s)
}

/// Tests are waits: twenty that each wait 2 s take about 2 s together, not 40. Under a cap
/// (`--test-threads 1`) the longest start first.
#[test]
fn tests_wait_together_and_the_longest_start_first() {
    let dir = Scratch::new("sched");
    let names: Vec<String> = (0..20).map(|i| format!("w{i:02}")).collect();
    let tests: Vec<(&str, u32)> = names.iter().map(|n| (n.as_str(), 200)).collect();
    let suite = sleep_suite(&dir, &tests);
    let reports = dir.join("reports");
    let out = common::rpconform(
        &[
            "run",
            suite.to_str().unwrap(),
            "--time-scale",
            "0.01",
            "--report-dir",
            reports.to_str().unwrap(),
            "--schemas",
            schemas_dir().to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    let report = read_report(&reports);
    let longest = results(&report)
        .iter()
        .map(|r| r["duration_ms"].as_u64().unwrap())
        .max()
        .unwrap();
    let sum: u64 = results(&report)
        .iter()
        .map(|r| r["duration_ms"].as_u64().unwrap())
        .sum();
    assert!(longest >= 2000, "a test waited {longest} ms");
    let wall = report["run"]["duration_ms"].as_u64().unwrap();
    assert!(
        wall < sum / 4,
        "20 waiting tests took {wall} ms in all (sum {sum} ms): they did not wait together"
    );

    let dir = Scratch::new("longest-first");
    let suite = sleep_suite(&dir, &[("short", 10), ("longest", 100), ("middle", 50)]);
    let reports = dir.join("reports");
    let out = common::rpconform(
        &[
            "run",
            suite.to_str().unwrap(),
            "--time-scale",
            "0.01",
            "--test-threads",
            "1",
            "--report-dir",
            reports.to_str().unwrap(),
            "--schemas",
            schemas_dir().to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    let order: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test timing::"))
        .map(|l| l.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(order, vec!["longest", "middle", "short"], "{}", out.stdout);
    assert!(
        out.stdout.contains("test result: ok. 3 passed"),
        "{}",
        out.stdout
    );
}

/// A test's resources are deleted (and confirmed gone) as it ends, not when the run does.
#[test]
fn resources_go_as_each_test_ends() {
    let (rt, server) = start_rp(300);
    let dir = Scratch::new("per-test");
    let target = target_file(&dir, &server.base_url());
    let suite = dir.write(
        "suite.yaml",
        "suite: pertest\nscenarios:\n  - name: quick\n    steps:\n      - create: {as: r, type: widgets}\n        expect:\n          - {outcome: Succeeded, rule: PUT-04}\n  - name: slow\n    steps:\n      - sleep: 400\n      - request: {url: \"${target.provider_url}/widgets\"}\n        expect:\n          - {status: 200, rule: PUT-04}\n",
    );
    let reports = dir.join("reports");
    let out = common::rpconform(
        &[
            "run",
            suite.to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.01",
            "--report-dir",
            reports.to_str().unwrap(),
            "--schemas",
            schemas_dir().to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    let journal = journal_lines(&reports);
    let at = |l: &Value| {
        chrono::DateTime::parse_from_rfc3339(l["at"].as_str().unwrap())
            .unwrap()
            .timestamp_millis()
    };
    let widget = journal
        .iter()
        .find(|l| l["event"] == "gone" && l["url"].as_str().unwrap().contains("/widgets/"))
        .unwrap_or_else(|| panic!("no widget confirmed gone: {journal:?}"));
    let end = journal.iter().find(|l| l["event"] == "end").unwrap();
    assert!(
        at(end) - at(widget) > 2000,
        "the widget went {} ms before the run ended: not as its test ended",
        at(end) - at(widget)
    );
    rt.block_on(server.shutdown());
}

/// A DELETE that answers 200 while the resource stays is not counted as deleted: the
/// resource is listed as left behind, with the reason, in the reports and the journal.
#[test]
fn a_delete_that_keeps_the_resource_is_listed() {
    let (rt, server) = start_rp(300);
    let proxy = Proxy::start(&server.base_url(), Mode::DeleteKeeps);
    let dir = Scratch::new("delete-keeps");
    let target = target_file(&dir, &proxy.base_url());
    let suite = dir.write(
        "suite.yaml",
        "suite: keeps\nscenarios:\n  - name: make\n    steps:\n      - create: {as: r, type: widgets}\n        expect:\n          - {outcome: Succeeded, rule: PUT-04}\n",
    );
    let reports = dir.join("reports");
    let out = common::rpconform(
        &[
            "run",
            suite.to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.01",
            "--deadline",
            "3",
            "--report-dir",
            reports.to_str().unwrap(),
            "--schemas",
            schemas_dir().to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(
        out.code(),
        1,
        "left-behind resources fail the run\n{}",
        out.tail(3000)
    );
    let report = read_report(&reports);
    let left: Vec<String> = report["run"]["left_behind"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(
        left.iter()
            .any(|l| l.contains("/widgets/") && l.contains("still there")),
        "{left:?}"
    );
    assert!(
        left.iter().any(|l| l.contains("resource group")),
        "{left:?}"
    );
    let journal = journal_lines(&reports);
    assert!(
        journal
            .iter()
            .any(|l| l["event"] == "left" && l["url"].as_str().unwrap().contains("/widgets/")),
        "{journal:?}"
    );
    assert!(out.stdout.contains("could not confirm"), "{}", out.stdout);
    drop(proxy);
    rt.block_on(server.shutdown());
}

/// A PUT that creates the resource but whose answer never comes: the run never heard of it
/// being created, yet it reads it at cleanup, deletes it and confirms it gone.
#[test]
fn a_put_without_an_answer_is_still_cleaned_up() {
    let (rt, server) = start_rp(300);
    let proxy = Proxy::start(&server.base_url(), Mode::PutHangs(Duration::from_secs(8)));
    let dir = Scratch::new("put-hangs");
    let target = target_file(&dir, &proxy.base_url());
    let suite = dir.write(
        "suite.yaml",
        "suite: hangs\nscenarios:\n  - name: make\n    steps:\n      - create: {as: r, type: widgets}\n        expect:\n          - {outcome: Succeeded, rule: PUT-04}\n",
    );
    let reports = dir.join("reports");
    let out = common::rpconform(
        &[
            "run",
            suite.to_str().unwrap(),
            "--target",
            target.to_str().unwrap(),
            "--time-scale",
            "0.01",
            "--request-timeout",
            "2",
            "--report-dir",
            reports.to_str().unwrap(),
            "--schemas",
            schemas_dir().to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    let report = read_report(&reports);
    assert_eq!(
        report["run"]["left_behind"].as_array().map(Vec::len),
        Some(0),
        "{}",
        out.tail(3000)
    );
    // The journal named it before its PUT left.
    let put = journal_lines(&reports)
        .iter()
        .filter(|l| l["event"] == "put")
        .filter_map(|l| l["url"].as_str())
        .find(|u| u.contains("/widgets/"))
        .map(|u| u.trim_start_matches(&proxy.base_url()).to_string())
        .expect("a widget PUT in the journal");
    assert!(
        proxy
            .seen()
            .iter()
            .any(|(m, p, _)| m == "DELETE" && p.starts_with(&put)),
        "the widget whose PUT had no answer was never deleted"
    );
    let url = format!("{}{put}?api-version=2024-05-01", server.base_url());
    assert_eq!(get_status(&rt, &url), 404);
    drop(proxy);
    rt.block_on(server.shutdown());
}

/// `cleanup --sweep-tagged` deletes only groups a run tagged, older than asked; untagged and
/// foreign groups, and newer run groups, are never touched.
#[test]
fn sweep_tagged_deletes_only_old_run_groups() {
    let now = chrono::Utc::now();
    let ago = |h: i64| (now - chrono::Duration::hours(h)).to_rfc3339();
    let sub = Proxy::subscription(vec![
        (
            "rpconform-old".into(),
            serde_json::json!({"rpconform-run": "old", "created-by": "rpconform", "rpconform-created-at": ago(5)}),
        ),
        (
            "rpconform-new".into(),
            serde_json::json!({"rpconform-run": "new", "created-by": "rpconform", "rpconform-created-at": ago(0)}),
        ),
        (
            "someone-elses".into(),
            serde_json::json!({"rpconform-run": "x", "created-by": "someone", "rpconform-created-at": ago(9)}),
        ),
        ("untagged".into(), Value::Null),
    ]);
    let dir = Scratch::new("sweep-tagged");
    let target = dir.write(
        "target.yaml",
        &format!(
            "base_url: {}\nsubscription: {SUB}\nresource_group: {{name: rg, create: true}}\nnamespace: Microsoft.Fake\napi_version: \"2024-01-01\"\nlocation: eastus\ntypes:\n  things: {{kind: tracked, create_body: {{location: eastus}}}}\n",
            sub.base_url()
        ),
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "cleanup",
            "--sweep-tagged",
            "--older-than",
            "2h",
            "--target",
            target.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        rpconform(&args, QUICK_TIMEOUT)
    };
    let dry = run(&["--dry-run"]);
    assert_eq!(dry.code(), 0);
    assert_eq!(sub.groups().len(), 4, "a dry run deleted something");
    let out = run(&[]);
    let text = &out.stdout;
    assert_eq!(out.code(), 0, "{text}");
    assert_eq!(
        sub.groups(),
        vec!["rpconform-new", "someone-elses", "untagged"],
        "{text}"
    );
    let deletes: Vec<String> = sub
        .seen()
        .into_iter()
        .filter(|(m, _, _)| m == "DELETE")
        .map(|(_, p, _)| p)
        .collect();
    assert_eq!(deletes.len(), 1, "{deletes:?}");
    assert!(deletes[0].contains("rpconform-old"), "{deletes:?}");
}

/// Every wait is capped by the operation deadline: a suite that sleeps a day ends in seconds.
#[test]
fn no_wait_outlives_the_deadline() {
    let dir = Scratch::new("capped");
    let suite = sleep_suite(&dir, &[("day", 86_400)]);
    let reports = dir.join("reports");
    let out = common::rpconform(
        &[
            "run",
            suite.to_str().unwrap(),
            "--deadline",
            "2",
            "--report-dir",
            reports.to_str().unwrap(),
            "--schemas",
            schemas_dir().to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    assert!(out.elapsed < Duration::from_secs(30), "{:?}", out.elapsed);
}
