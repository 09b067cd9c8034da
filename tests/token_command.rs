//! The token command (`auth: {command: ...}`) and the token file (`auth: {token_file: ...}`)
//! against a local server on 127.0.0.1.
//!
//! The commands are shell scripts in the test's scratch directory that log each run, write the
//! pid of a child they leave running, and print (or not) a token. The tests check that a
//! hanging command is killed with its whole process group on timeout and on SIGTERM, that
//! concurrent requests share one fetch (also a failing one), that failures say why with the
//! command's stderr, that output that is not a bare token (JSON, several lines, endless
//! output) is refused with a clear message and never sent, and that a token file is read
//! again when it changes. No token ever appears in a report or on the console.

use crate::common;
use crate::hostile;
use crate::local;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Scratch;
use hostile::{Run, run_bounded, target_yaml};
use local::{LocalServer, Req, assert_absent, ok_empty, outputs, response};

/// `n` scenarios of one GET each: `n` tests that want a token at the same moment.
fn suite(n: usize) -> String {
    let mut s = String::from("suite: token\nscenarios:\n");
    for i in 0..n {
        s.push_str(&format!(
            "  - name: get{i}\n    for_each_type: [any]\n    steps:\n      - name: get\n        \
             request: {{method: GET, url: \"${{target.base_url}}/x{i}\"}}\n        expect:\n          \
             - {{status: 200, rule: RES-01}}\n"
        ));
    }
    s
}

/// A target whose token comes from `sh SCRIPT` (`extra` adds keys to `auth`).
fn command_target(dir: &Scratch, base: &str, script: &str, extra: &str) -> std::path::PathBuf {
    let path = dir.write("token.sh", script);
    dir.write(
        "target.yaml",
        &target_yaml(
            base,
            &format!("auth: {{command: \"sh {}\"{extra}}}\n", path.display()),
        ),
    )
}

fn args(dir: &Scratch, target: &Path, tests: usize) -> Vec<String> {
    let suite = dir.write("suite.yaml", &suite(tests));
    [
        "run",
        &suite.display().to_string(),
        "--target",
        &target.display().to_string(),
        "--request-timeout",
        "5",
        "--time-scale",
        "0.01",
        "--test-threads",
        "8",
        "--report-dir",
        &dir.str("reports"),
        "--schemas",
        &common::schemas_dir().display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run(label: &str, dir: &Scratch, target: &Path, tests: usize) -> Run {
    run_bounded(label, &args(dir, target, tests), &[], &dir.join("reports"))
}

/// How many times the script ran (it appends a line to `runs` each time).
fn runs(dir: &Scratch) -> usize {
    std::fs::read_to_string(dir.join("runs"))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// Is `pid` a live process (not gone, not a zombie)?
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
    }
}

/// The pid the script wrote to `child.pid`, waiting up to `wait` for it.
fn child_pid(dir: &Scratch, wait: Duration) -> Option<u32> {
    let started = Instant::now();
    loop {
        if let Some(p) = std::fs::read_to_string(dir.join("child.pid"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return Some(p);
        }
        if started.elapsed() > wait {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_gone(pid: u32, what: &str) {
    let started = Instant::now();
    while alive(pid) {
        if started.elapsed() > Duration::from_secs(5) {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{what} (pid {pid}) outlived the run: the process group was not killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The report, the console and the run's own words, for message checks.
fn everything(run: &Run) -> String {
    format!(
        "{}\n{}\n{}",
        run.report
            .as_ref()
            .map(|r| r.to_string())
            .unwrap_or_default(),
        run.stdout,
        run.stderr
    )
}

/// A script that logs its run, says something on stderr, leaves a child running and waits.
fn hanging_script(dir: &Scratch) -> String {
    format!(
        "echo run >> {d}/runs\n\
         echo 'To sign in, open https://microsoft.com/devicelogin and enter the code' >&2\n\
         sleep 300 &\n\
         echo $! > {d}/child.pid\n\
         wait\n",
        d = dir.path.display()
    )
}

#[test]
fn a_hanging_command_is_killed_with_its_group_once_for_all_callers() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("token-hang");
    let target = command_target(
        &dir,
        &server.base_url(),
        &hanging_script(&dir),
        ", timeout: 2",
    );
    let r = run("token-hang", &dir, &target, 6);
    let ctx = r.context();
    // Six tests waited for one fetch that timed out after 2 s: not six fetches in a row.
    assert!(r.elapsed < Duration::from_secs(20), "{ctx}");
    assert_eq!(r.code, Some(1), "{ctx}");
    assert_eq!(runs(&dir), 1, "one fetch for all waiting callers\n{ctx}");
    let pid = child_pid(&dir, Duration::from_secs(1)).expect("the script started its child");
    assert_gone(pid, "the token command's child");
    let all = everything(&r);
    assert!(all.contains("did not finish within 2 s"), "{ctx}");
    assert!(
        all.contains("devicelogin"),
        "the error shows the command's stderr\n{ctx}"
    );
    // Only the preflight's credential-free probe of the base URL reached the server.
    let seen = server.seen();
    assert!(
        !seen
            .iter()
            .any(|s| s.target != "/" || s.header("authorization").is_some()),
        "nothing but the preflight probe is sent without a token: {seen:?}"
    );
}

#[test]
fn sigterm_kills_a_running_token_command_and_its_children() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("token-sigterm");
    let target = command_target(
        &dir,
        &server.base_url(),
        &hanging_script(&dir),
        ", timeout: 300",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpconform"))
        .args(args(&dir, &target, 3))
        .current_dir(common::root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rpconform starts");
    let Some(pid) = child_pid(&dir, Duration::from_secs(30)) else {
        let _ = child.kill();
        let out = child.wait_with_output().expect("output");
        panic!(
            "the token command never started:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    assert!(alive(pid));
    let signalled = Instant::now();
    common::signal(&child, "TERM");
    // Past the bound, rpconform and everything under it (the hanging command too) is killed.
    let ended = common::finish(
        child,
        "rpconform after SIGTERM while its token command hung",
        Duration::from_secs(30),
    );
    eprintln!(
        "ended {:.1} s after SIGTERM with {}",
        signalled.elapsed().as_secs_f64(),
        ended.status
    );
    assert!(signalled.elapsed() < Duration::from_secs(15));
    assert_gone(pid, "the token command's child");
    assert_eq!(
        runs(&dir),
        1,
        "the interrupted run does not start the command again"
    );
}

#[test]
fn a_failing_command_is_run_once_and_its_stderr_is_shown() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("token-fail");
    // A JWT-shaped string on stderr (a debug trace, say) is still masked.
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzdGRlcnItbGVhayJ9.c3RkZXJyLXNpZ25hdHVyZQ";
    let script = format!(
        "echo run >> {d}/runs\nsleep 1\necho 'az: command not found' >&2\necho 'trace {jwt}' >&2\nexit 127\n",
        d = dir.path.display()
    );
    let target = command_target(&dir, &server.base_url(), &script, "");
    let r = run("token-fail", &dir, &target, 6);
    let ctx = r.context();
    assert_eq!(r.code, Some(1), "{ctx}");
    assert_eq!(
        runs(&dir),
        1,
        "concurrent callers share one failed fetch\n{ctx}"
    );
    let all = everything(&r);
    assert!(all.contains("exit status: 127"), "{ctx}");
    assert!(all.contains("az: command not found"), "{ctx}");
    let places = outputs(&dir.join("reports"), &r.stdout, &r.stderr);
    assert_absent(&places, "the JWT printed on stderr", &jwt[40..], false);
}

#[test]
fn json_output_is_refused_with_a_hint_and_never_sent() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("token-json");
    let token =
        "eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiJqc29uLW91dHB1dC10ZXN0In0.anNvbi1vdXRwdXQtc2lnbmF0dXJl";
    let script = format!(
        "cat <<'EOF'\n{{\n  \"accessToken\": \"{token}\",\n  \"expiresOn\": \"2030-01-01 00:00:00.000000\",\n  \
         \"subscription\": \"00000000-0000-0000-0000-000000000000\",\n  \"tokenType\": \"Bearer\"\n}}\nEOF\n"
    );
    let target = command_target(&dir, &server.base_url(), &script, "");
    let r = run("token-json", &dir, &target, 2);
    let ctx = r.context();
    let all = everything(&r);
    assert!(all.contains("--query accessToken -o tsv"), "{ctx}");
    assert!(all.contains("accessToken, expiresOn"), "{ctx}");
    assert!(
        server
            .seen()
            .iter()
            .all(|s| s.header("authorization").is_none()),
        "the JSON went out as a token"
    );
    let places = outputs(&dir.join("reports"), &r.stdout, &r.stderr);
    assert_absent(
        &places,
        "the token inside the JSON",
        token.split('.').nth(2).unwrap(),
        false,
    );
}

#[test]
fn several_lines_are_refused() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("token-lines");
    let script =
        "echo 'WARNING: this command is deprecated'\necho 'tok-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c'\n";
    let target = command_target(&dir, &server.base_url(), script, "");
    let r = run("token-lines", &dir, &target, 1);
    let ctx = r.context();
    assert!(
        everything(&r).contains("2 lines, not a single token"),
        "{ctx}"
    );
    assert!(
        server
            .seen()
            .iter()
            .all(|s| s.header("authorization").is_none())
    );
    let places = outputs(&dir.join("reports"), &r.stdout, &r.stderr);
    assert_absent(
        &places,
        "the token line",
        "tok-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
        true,
    );
}

#[test]
fn endless_output_is_cut_and_the_run_ends() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("token-endless");
    let target = command_target(&dir, &server.base_url(), "yes token\n", ", timeout: 20");
    let r = run("token-endless", &dir, &target, 2);
    let ctx = r.context();
    assert!(r.elapsed < Duration::from_secs(15), "{ctx}");
    assert!(r.peak_kb < 300 * 1024, "memory stays bounded\n{ctx}");
    assert!(everything(&r).contains("printed more than 64 KiB"), "{ctx}");
}

#[test]
fn concurrent_callers_share_one_successful_fetch() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("token-flight");
    let token = "tok-single-flight-0123456789abcdef";
    let script = format!(
        "echo run >> {d}/runs\nsleep 1\necho {token}\n",
        d = dir.path.display()
    );
    let target = command_target(&dir, &server.base_url(), &script, "");
    let r = run("token-flight", &dir, &target, 6);
    let ctx = r.context();
    assert_eq!(r.code, Some(0), "{ctx}");
    assert_eq!(runs(&dir), 1, "{ctx}");
    // The six tests' requests (the preflight's reads come first: they share the one fetch).
    let seen: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.target.starts_with("/x"))
        .collect();
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert!(
        seen.iter()
            .all(|s| s.header("authorization") == Some(&format!("Bearer {token}")))
    );
    let places = outputs(&dir.join("reports"), &r.stdout, &r.stderr);
    assert_absent(&places, "the token", token, true);
}

#[test]
fn a_token_file_is_read_again_when_it_changes() {
    const FIRST: &str = "file-token-first-0123456789abcdef";
    const SECOND: &str = "file-token-second-rotated-fedcba9876543210";
    let dir = Scratch::new("token-file");
    let file = dir.write("token.txt", &format!("{FIRST}\n"));
    // The server rotates the file (as CI would) when it sees the first token, and echoes
    // the credential back.
    let rotate = file.clone();
    let server = LocalServer::start(move |req: &Req| {
        let auth = req.header("authorization").unwrap_or("").to_string();
        if auth.ends_with(FIRST) {
            let tmp = rotate.with_extension("tmp");
            std::fs::write(&tmp, format!("{SECOND}\n")).expect("write the new token");
            std::fs::rename(&tmp, &rotate).expect("replace the token file");
        }
        response(
            200,
            &[("x-echo".to_string(), auth.clone())],
            &format!("{{\"auth\":\"{auth}\"}}"),
        )
    });
    // A relative path: relative to the target file's directory.
    let target = dir.write(
        "target.yaml",
        &target_yaml(
            &server.base_url(),
            "auth: {token_file: token.txt, refresh: 3600}\n",
        ),
    );
    let suite = dir.write(
        "file-suite.yaml",
        "suite: file\nscenarios:\n  - name: twice\n    for_each_type: [any]\n    steps:\n      \
         - {name: one, request: {method: GET, url: \"${target.base_url}/one\"}, expect: [{status: 200, rule: RES-01}]}\n      \
         - {name: two, request: {method: GET, url: \"${target.base_url}/two\"}, expect: [{status: 200, rule: RES-01}]}\n",
    );
    let mut a = args(&dir, &target, 1);
    a[1] = suite.display().to_string();
    let r = run_bounded("token-file", &a, &[], &dir.join("reports"));
    let ctx = r.context();
    assert_eq!(r.code, Some(0), "{ctx}");
    let seen = server.seen();
    let auth_of = |path: &str| {
        seen.iter()
            .find(|s| s.target.starts_with(path))
            .and_then(|s| s.header("authorization"))
            .map(str::to_string)
    };
    // The first authenticated request (the run's preflight read of the group) carries the
    // first token; the server rotates the file then, and later requests carry the new one.
    let first = seen
        .iter()
        .find_map(|s| s.header("authorization"))
        .map(str::to_string);
    assert_eq!(first, Some(format!("Bearer {FIRST}")), "{seen:?}");
    assert_eq!(
        auth_of("/two"),
        Some(format!("Bearer {SECOND}")),
        "{seen:?}"
    );
    let places = outputs(&dir.join("reports"), &r.stdout, &r.stderr);
    assert_absent(&places, "the first file token", FIRST, true);
    assert_absent(&places, "the rotated file token", SECOND, true);
}
