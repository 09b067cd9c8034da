//! Never panic, never vanish, never hang (issue 24): durations bounded where they are read,
//! templates bounded in what they build, `init --openapi` and `replay DIR` reading regular
//! files only, and `cleanup --journal` honest about what it could not read and careful with a
//! run that still runs.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, rpconform};

const HUGE: &str = "18446744073709551615";

fn no_panic(out: &common::Output) {
    assert!(
        !out.stderr.contains("panicked") && !out.stdout.contains("panicked"),
        "{}",
        out.tail(3000)
    );
}

/// A target file for a server at `base`.
fn target_yaml(base: &str, extra: &str) -> String {
    format!(
        "base_url: {base}\n\
         subscription: 00000000-0000-0000-0000-00000000beef\n\
         resource_group: {{name: rg, disposable: true}}\n\
         namespace: Microsoft.Bounded\n\
         api_version: \"2024-01-01\"\n\
         types:\n  things:\n    kind: tracked\n    create_body: {{location: eastus}}\n\
         {extra}"
    )
}

#[test]
fn durations_past_their_bound_are_usage_errors() {
    let dir = Scratch::new("durations");
    let journal = dir.str("nothing");
    let commands: Vec<Vec<&str>> = vec![
        vec!["run", "--list"],
        vec!["probe", "GET", "/subscriptions"],
        vec!["cleanup", "--journal", &journal],
    ];
    for cmd in &commands {
        for (flag, bound) in [("--deadline", "a week"), ("--request-timeout", "an hour")] {
            let mut args = cmd.clone();
            args.extend([flag, HUGE]);
            let out = rpconform(&args, QUICK_TIMEOUT);
            no_panic(&out);
            assert_eq!(out.code(), 2, "{}", out.tail(2000));
            assert!(
                out.stderr.contains(flag) && out.stderr.contains(bound),
                "{}",
                out.tail(2000)
            );
        }
    }
    // A request rate so low its interval is no duration; an age past ten years.
    let out = rpconform(&["run", "--list", "--max-rps", "1e-300"], QUICK_TIMEOUT);
    no_panic(&out);
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(out.stderr.contains("--max-rps"), "{}", out.tail(2000));
    let t = dir.write("t.yaml", &target_yaml("http://127.0.0.1:9", ""));
    let out = rpconform(
        &[
            "cleanup",
            "--sweep-tagged",
            "--target",
            &t.display().to_string(),
            "--older-than",
            "18446744073709551615d",
        ],
        QUICK_TIMEOUT,
    );
    no_panic(&out);
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    // Help says what each takes.
    let help = rpconform(&["run", "--help"], QUICK_TIMEOUT);
    assert!(
        help.stdout.contains("at most a week") && help.stdout.contains("at most an hour"),
        "{}",
        help.tail(6000)
    );
}

#[test]
fn a_target_deadline_past_a_week_is_a_positioned_error() {
    let dir = Scratch::new("target-deadline");
    let t = dir.write(
        "t.yaml",
        &target_yaml("http://127.0.0.1:9", "deadline: 9223372036854775807\n"),
    );
    let (tp, reports) = (t.display().to_string(), dir.str("r"));
    for args in [
        vec!["check", "--target", &tp],
        vec!["run", "--target", &tp, "--report-dir", &reports],
    ] {
        let out = rpconform(&args, QUICK_TIMEOUT);
        no_panic(&out);
        assert_eq!(out.code(), 2, "{}", out.tail(3000));
        assert!(
            out.stderr.contains(&format!("{tp}:10:11"))
                && out.stderr.contains("from 1 to 604800 seconds (a week)"),
            "{}",
            out.tail(3000)
        );
    }
}

/// vars that grow tenfold a level: refused by `check` when their literals pass the cap,
/// a runner error of the test (not an out-of-memory) when only the run can tell.
#[test]
fn templates_that_grow_tenfold_are_bounded() {
    let dir = Scratch::new("vars");
    let tenfold = |base: &str| {
        let mut v = format!("    vars:\n      a: \"{base}\"\n");
        for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
            .iter()
            .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
        {
            v.push_str(&format!(
                "      {name}: \"{}\"\n",
                format!("${{{prev}}}").repeat(10)
            ));
        }
        v
    };
    let suite = |base: &str| {
        format!(
            "suite: grow\nscenarios:\n  - name: grow\n{}    steps:\n      - sleep: 0\n",
            tenfold(base)
        )
    };
    let literal = dir.write("literal/grow.yaml", &suite("xxxxxxxxxx"));
    let out = rpconform(&["check", &literal.display().to_string()], QUICK_TIMEOUT);
    no_panic(&out);
    assert_eq!(out.code(), 2, "{}", out.tail(3000));
    assert!(
        out.stderr.contains(&format!("{}:", literal.display()))
            && out.stderr.contains("vars.g renders to at least")
            && out.stderr.contains("4 MiB"),
        "{}",
        out.tail(3000)
    );
    // From the run's unique name: only the run can tell.
    let unique = dir.write("unique/grow.yaml", &suite("${unique}"));
    let out = rpconform(&["check", &unique.display().to_string()], QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    let out = rpconform(
        &[
            "run",
            &unique.display().to_string(),
            "--report-dir",
            &dir.str("reports"),
            "--op-duration",
            "300",
            "--time-scale",
            "0.01",
        ],
        RUN_TIMEOUT,
    );
    no_panic(&out);
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("4 MiB") && all.contains(&format!("{}:", unique.display())),
        "{}",
        out.tail(3000)
    );
}

#[test]
fn init_refuses_bad_specs_with_exit_2_and_a_target_past_the_limit_up_front() {
    let dir = Scratch::new("init");
    let out = rpconform(
        &["init", "--openapi", &dir.str("missing.json"), "-o", "-"],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(out.stderr.contains("missing.json"), "{}", out.tail(2000));
    // 14 000 resource types: more than a target file may hold.
    let mut paths = serde_json::Map::new();
    let body = serde_json::json!({"type": "object", "required": ["location", "properties"],
        "properties": {"location": {"type": "string"}, "properties": {"type": "object",
        "required": ["size"], "properties": {"size": {"type": "integer"}}}}});
    for i in 0..14_000 {
        paths.insert(
            format!("/subscriptions/{{s}}/resourceGroups/{{rg}}/providers/X.Y/widgetsWithAFairlyLongTypeName{i}/{{n}}"),
            serde_json::json!({"put": {"parameters": [{"name": "b", "in": "body", "schema": body}], "responses": {"200": {}}}}),
        );
    }
    let spec =
        serde_json::json!({"swagger": "2.0", "info": {"version": "2024-01-01"}, "paths": paths});
    let p = dir.write("many.json", &spec.to_string());
    let out = rpconform(
        &[
            "init",
            "--openapi",
            &p.display().to_string(),
            "-o",
            &dir.str("t.yaml"),
        ],
        RUN_TIMEOUT,
    );
    no_panic(&out);
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(
        out.stderr.contains("14000 resource type(s)")
            && out.stderr.contains("over the limit of 4 MiB")
            && !out.stderr.contains("please report"),
        "{}",
        out.tail(2000)
    );
    assert!(!dir.join("t.yaml").exists());
}

#[cfg(unix)]
#[test]
fn replay_skips_a_fifo_named_like_a_recording() {
    let dir = Scratch::new("replay-fifo");
    let rec = dir.join("recs");
    std::fs::create_dir_all(&rec).unwrap();
    let fixture = common::root().join(
        "tests/fixtures/recordings/compute-28.0.0__test_mgmt_compute_disks.pyTestMgmtComputetest_compute_shot.json",
    );
    std::fs::copy(&fixture, rec.join("shot.json")).unwrap();
    let fifo = rec.join("stuck.har");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    // coreutils' mkfifo is on every machine the tests run on: not making one is a fault.
    assert!(made, "mkfifo {} failed", fifo.display());
    // A loop of links ends too.
    let _ = std::os::unix::fs::symlink(&rec, rec.join("again"));
    let out = rpconform(
        &[
            "replay",
            &rec.display().to_string(),
            "--report-dir",
            &dir.str("reports"),
        ],
        QUICK_TIMEOUT,
    );
    no_panic(&out);
    assert!(
        out.stderr
            .contains(&format!("skipping {}: not a regular file", fifo.display())),
        "{}",
        out.tail(3000)
    );
    assert!(
        out.stdout.contains("1 recordings") || out.stdout.contains("shot.json"),
        "{}",
        out.tail(3000)
    );
}

/// A server that answers every GET 404 and every DELETE 200, recording the request lines.
fn gone_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for stream in l.incoming() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let head = String::from_utf8_lossy(&buf).to_string();
            let line = head.lines().next().unwrap_or("").to_string();
            let status = if line.starts_with("DELETE") {
                "200 OK"
            } else {
                "404 Not Found"
            };
            s2.lock().unwrap().push(line);
            let body = r#"{"error":{"code":"ResourceNotFound","message":"gone"}}"#;
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (base, seen)
}

fn journal_text(base: &str, target_file: &str, pid: u32, lines: &[String]) -> String {
    let header = serde_json::json!({
        "event": "run", "version": 1, "run_id": "r1", "target": target_file,
        "target_file": target_file, "base_url": base,
        "subscription": "00000000-0000-0000-0000-00000000beef", "resource_group": "rg",
        "rg_created": false, "started_at": "2026-01-01T00:00:00.000Z", "pid": pid,
    });
    let mut t = format!("{header}\n");
    for l in lines {
        t.push_str(l);
        t.push('\n');
    }
    t
}

fn put_line(url: &str) -> String {
    serde_json::json!({"event": "put", "url": url, "api_version": "2024-01-01", "by": "t", "at": "2026-01-01T00:00:00.000Z"}).to_string()
}

fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn cleanup_skips_a_damaged_line_cleans_the_rest_and_does_not_claim_all_gone() {
    let dir = Scratch::new("journal-damaged");
    let (base, seen) = gone_server();
    let t = dir.write("t.yaml", &target_yaml(&base, ""));
    let rg = format!(
        "{base}/subscriptions/00000000-0000-0000-0000-00000000beef/resourceGroups/rg/providers/Microsoft.Bounded/things"
    );
    let text = journal_text(
        &base,
        &t.display().to_string(),
        dead_pid(),
        &[
            put_line(&format!("{rg}/one")),
            "{\"event\": \"put\", \"url\": 42}".into(),
            put_line(&format!("{rg}/two")),
        ],
    );
    let j = dir.write("reports/journal-r1.jsonl", &text);
    let out = rpconform(
        &[
            "cleanup",
            "--journal",
            &dir.str("reports"),
            "--deadline",
            "20",
        ],
        QUICK_TIMEOUT,
    );
    no_panic(&out);
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    assert!(
        out.stderr.contains(&format!("{}:3:", j.display())),
        "{}",
        out.tail(3000)
    );
    assert!(
        !out.stdout
            .contains("everything it listed is confirmed gone")
            && out.stdout.contains("could not be read"),
        "{}",
        out.tail(3000)
    );
    let seen = seen.lock().unwrap().join("\n");
    assert!(
        seen.contains("/things/one") && seen.contains("/things/two"),
        "{seen}"
    );
}

#[test]
fn cleanup_leaves_a_live_run_alone_unless_forced() {
    let dir = Scratch::new("journal-alive");
    let (base, seen) = gone_server();
    let t = dir.write("t.yaml", &target_yaml(&base, ""));
    let url = format!(
        "{base}/subscriptions/00000000-0000-0000-0000-00000000beef/resourceGroups/rg/providers/Microsoft.Bounded/things/one"
    );
    // This test's own process: alive.
    let text = journal_text(
        &base,
        &t.display().to_string(),
        std::process::id(),
        &[put_line(&url)],
    );
    dir.write("reports/journal-r1.jsonl", &text);
    let out = rpconform(
        &["cleanup", "--journal", &dir.str("reports")],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(3000));
    assert!(
        out.stderr.contains("still running") && out.stderr.contains("--force"),
        "{}",
        out.tail(3000)
    );
    assert!(seen.lock().unwrap().is_empty());
    let out = rpconform(
        &["cleanup", "--journal", &dir.str("reports"), "--force"],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    assert!(
        out.stdout
            .contains("everything it listed is confirmed gone"),
        "{}",
        out.tail(3000)
    );
}

/// Two runs writing one report directory at once each keep a journal of their own, whole.
#[test]
fn two_runs_in_one_report_directory_keep_their_own_journals() {
    let dir = Scratch::new("two-runs");
    let reports = dir.str("reports");
    let run = |reports: String| {
        std::thread::spawn(move || {
            rpconform(
                &[
                    "run",
                    "-f",
                    "etag",
                    "--op-duration",
                    "300",
                    "--time-scale",
                    "0.01",
                    "--report-dir",
                    &reports,
                ],
                RUN_TIMEOUT,
            )
        })
    };
    let (a, b) = (run(reports.clone()), run(reports.clone()));
    for out in [a.join().unwrap(), b.join().unwrap()] {
        no_panic(&out);
    }
    let mut ids = Vec::new();
    for e in std::fs::read_dir(dir.join("reports")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("journal") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
            .collect();
        assert_eq!(lines[0]["event"], "run", "{name}");
        let id = lines[0]["run_id"].as_str().unwrap().to_string();
        assert_eq!(name, format!("journal-{id}.jsonl"));
        assert_eq!(lines.last().unwrap()["event"], "end", "{name}");
        ids.push(id);
    }
    assert_eq!(ids.len(), 2, "{ids:?}");
}

/// A minimal HAR of one GET.
const HAR: &str = r#"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[{"startedDateTime":"2024-01-01T00:00:00Z","time":1,"request":{"method":"GET","url":"http://127.0.0.1:9/subscriptions/00000000-0000-0000-0000-00000000beef/resourceGroups/rg/providers/Microsoft.Bounded/things/a?api-version=2024-01-01","httpVersion":"HTTP/1.1","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"response":{"status":404,"statusText":"Not Found","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"content":{"size":0,"mimeType":"application/json","text":""},"redirectURL":"","headersSize":-1,"bodySize":0},"cache":{},"timings":{"send":0,"wait":1,"receive":0}}]}}"#;

/// Every output option of every command, pointed at one of the command's inputs (by its
/// path, through a link, or as the report folder holding it under a report's name), is a
/// usage error naming the option, and the input is left byte for byte as it was.
#[test]
fn outputs_that_name_an_input_are_refused_and_the_input_is_kept() {
    let dir = Scratch::new("outputs");
    let target = dir.write("target.yaml", &target_yaml("http://127.0.0.1:9", ""));
    let suite = dir.write(
        "suite.yaml",
        "suite: s\nscenarios:\n  - name: one\n    steps:\n      - request: {method: GET, url: \"${target.base_url}/x\"}\n",
    );
    let rec = dir.write("rec.har", HAR);
    let spec_text = std::fs::read_to_string(common::root().join(
        "tests/fixtures/openapi/contoso/resource-manager/Microsoft.Contoso/stable/2024-05-01/contoso.json",
    ))
    .unwrap();
    let spec = dir.write("spec.json", &spec_text);
    let shard = dir.join("shard");
    std::fs::create_dir_all(&shard).unwrap();
    let shard_report = dir.write("shard/report.json", "{\"not\": \"read\"}");
    let body_dir = dir.join("probe");
    std::fs::create_dir_all(&body_dir).unwrap();
    let body = dir.write("probe/summary.md", "{\"location\": \"eastus\"}");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&target, dir.join("link-to-target.har")).unwrap();
    let s = |p: &std::path::Path| p.display().to_string();
    let (t, su, r, sp) = (s(&target), s(&suite), s(&rec), s(&spec));
    let mut cases: Vec<(Vec<String>, &str, &std::path::Path)> = vec![
        (
            vec![
                "run".into(),
                su.clone(),
                "--target".into(),
                t.clone(),
                "--har".into(),
                t.clone(),
            ],
            "--har",
            &target,
        ),
        (
            vec![
                "run".into(),
                su.clone(),
                "--target".into(),
                t.clone(),
                "--har".into(),
                su.clone(),
            ],
            "--har",
            &suite,
        ),
        (
            vec![
                "run".into(),
                su.clone(),
                "--target".into(),
                t.clone(),
                "--report-dir".into(),
                t.clone(),
            ],
            "--report-dir",
            &target,
        ),
        (
            vec![
                "replay".into(),
                r.clone(),
                "--write-target".into(),
                r.clone(),
            ],
            "--write-target",
            &rec,
        ),
        (
            vec![
                "replay".into(),
                r.clone(),
                "--openapi".into(),
                sp.clone(),
                "--write-target".into(),
                sp.clone(),
            ],
            "--write-target",
            &spec,
        ),
        (
            vec![
                "replay".into(),
                r.clone(),
                "--target".into(),
                t.clone(),
                "--write-target".into(),
                t.clone(),
            ],
            "--write-target",
            &target,
        ),
        (
            vec![
                "init".into(),
                "--openapi".into(),
                sp.clone(),
                "-o".into(),
                sp.clone(),
                "--force".into(),
            ],
            "--output",
            &spec,
        ),
        (
            vec![
                "probe".into(),
                "GET".into(),
                "/x".into(),
                "--body".into(),
                s(&body),
                "--report-dir".into(),
                s(&body_dir),
            ],
            "--report-dir",
            &body,
        ),
        (
            vec![
                "probe".into(),
                "GET".into(),
                "/x".into(),
                "--target".into(),
                t.clone(),
                "--report-dir".into(),
                t.clone(),
            ],
            "--report-dir",
            &target,
        ),
        (
            vec![
                "proxy".into(),
                "--target".into(),
                t.clone(),
                "--report-dir".into(),
                t.clone(),
            ],
            "--report-dir",
            &target,
        ),
        (
            vec![
                "report".into(),
                "merge".into(),
                s(&shard),
                s(&shard),
                "--out".into(),
                s(&shard),
            ],
            "--out",
            &shard_report,
        ),
    ];
    #[cfg(unix)]
    cases.push((
        vec![
            "run".into(),
            su.clone(),
            "--target".into(),
            t.clone(),
            "--har".into(),
            s(&dir.join("link-to-target.har")),
        ],
        "--har",
        &target,
    ));
    for (args, flag, kept) in cases {
        let before = std::fs::read(kept).unwrap();
        let out = rpconform(&args, QUICK_TIMEOUT);
        no_panic(&out);
        let shown = args.join(" ");
        assert_eq!(out.code(), 2, "{shown}: {}", out.tail(2000));
        assert!(
            out.stderr.contains(flag) && out.stderr.contains("refused"),
            "{shown}: {}",
            out.tail(2000)
        );
        assert_eq!(
            std::fs::read(kept).unwrap(),
            before,
            "{shown}: the input changed"
        );
    }
}

/// A spec in which one object gives a key twice (here a definition, in JSON and in YAML),
/// and the commands that read it: each refuses it, naming the file and both lines, before
/// anything is judged by it.
#[test]
fn a_spec_that_gives_a_key_twice_is_refused_naming_both_lines() {
    let dir = Scratch::new("dupkeys");
    let json = "{\n  \"swagger\": \"2.0\",\n  \"info\": {\"title\": \"t\", \"version\": \"2024-01-01\"},\n  \"paths\": {},\n  \"definitions\": {\n    \"Widget\": {\"type\": \"object\"},\n    \"Gadget\": {\"type\": \"object\"},\n    \"Widget\": {\"type\": \"string\"}\n  }\n}\n";
    let yaml = "swagger: \"2.0\"\ninfo: {title: t, version: \"2024-01-01\"}\npaths: {}\ndefinitions:\n  Widget: {type: object}\n  Gadget: {type: object}\n  Widget: {type: string}\n";
    let rec = dir.write("rec.har", HAR);
    for (name, text, lines) in [
        ("dup.json", json, ["6", "8"]),
        ("dup.yaml", yaml, ["5", "7"]),
    ] {
        let spec = dir.write(name, text);
        let spec_s = spec.display().to_string();
        let target = dir.write(
            "target.yaml",
            &target_yaml("http://127.0.0.1:9", &format!("openapi: [{name}]\n")),
        );
        let t = target.display().to_string();
        let reports = dir.str("reports");
        let commands: Vec<Vec<&str>> = vec![
            vec!["init", "--openapi", &spec_s, "-o", "-"],
            vec![
                "replay",
                rec.to_str().unwrap(),
                "--openapi",
                &spec_s,
                "--report-dir",
                &reports,
            ],
            vec!["probe", "GET", "/subscriptions", "--openapi", &spec_s],
            vec!["check", "--target", &t],
            vec![
                "replay",
                rec.to_str().unwrap(),
                "--target",
                &t,
                "--report-dir",
                &reports,
            ],
        ];
        for args in commands {
            let out = rpconform(&args, QUICK_TIMEOUT);
            no_panic(&out);
            let shown = format!("{name}: {}", args.join(" "));
            assert_eq!(out.code(), 2, "{shown}: {}", out.tail(2000));
            let err = &out.stderr;
            let named =
                |l: &str| err.contains(&format!("line {l}")) || err.contains(&format!(":{l}:"));
            assert!(
                err.contains(name) && err.contains("Widget") && named(lines[0]) && named(lines[1]),
                "{shown}: {}",
                out.tail(2000)
            );
        }
    }
}

/// A HAR of one GET of a `things` resource answered 200 with `body`.
fn har_get(body: &str) -> String {
    let entry = serde_json::json!({
        "startedDateTime": "2024-01-01T00:00:00Z", "time": 1,
        "request": {"method": "GET", "url": "http://127.0.0.1:9/subscriptions/00000000-0000-0000-0000-00000000beef/resourceGroups/rg/providers/Microsoft.Bounded/things/a?api-version=2024-01-01",
            "httpVersion": "HTTP/1.1", "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "application/json"}, {"name": "x-ms-request-id", "value": "r1"}],
            "cookies": [], "content": {"size": body.len(), "mimeType": "application/json", "text": body},
            "redirectURL": "", "headersSize": -1, "bodySize": body.len()},
        "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}
    });
    serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [entry]}}).to_string()
}

/// A spec whose `things` GET answers a `Thing` with `pattern` on its name and tags.
fn spec_with_pattern(pattern: &str) -> String {
    serde_json::json!({
        "swagger": "2.0", "info": {"title": "t", "version": "2024-01-01"},
        "paths": {"/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Bounded/things/{name}": {
            "get": {"operationId": "Things_Get", "parameters": [], "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Thing"}}}}
        }},
        "definitions": {"Thing": {"type": "object", "properties": {
            "name": {"type": "string", "pattern": pattern},
            "tags": {"type": "array", "items": {"type": "string", "pattern": pattern}}
        }}}
    })
    .to_string()
}

/// Spec patterns that backtrack (a backreference, a lookahead) against bodies whose strings
/// cost them exponential time: replay ends at once, and SPEC-04 is not judged, saying why,
/// where bounded matching could not decide; a string that plainly does not match still fails
/// and one that matches passes. A linear pattern decides any string.
#[test]
fn spec_patterns_that_backtrack_are_bounded_and_never_a_false_failure() {
    let dir = Scratch::new("backtrack");
    let costly = format!("{}!", "a".repeat(45_000));
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "^(?:(a|a)*\\1b|[a!]+)$",
            serde_json::json!({"name": costly}).to_string(),
            "not-judged",
        ),
        (
            "^(?=(a|a)*\\1b)|^[a!]+$",
            serde_json::json!({"tags": ["ab", costly]}).to_string(),
            "not-judged",
        ),
        (
            "^(?:(a|a)*\\1b|[a!]+)$",
            r#"{"name": "zzz"}"#.to_string(),
            "failed",
        ),
        (
            "^(?:(a|a)*\\1b|[a!]+)$",
            r#"{"name": "aab"}"#.to_string(),
            "passed",
        ),
        (
            "^(a+)+$",
            serde_json::json!({"name": costly}).to_string(),
            "failed",
        ),
    ];
    for (i, (pattern, body, outcome)) in cases.iter().enumerate() {
        let spec = dir.write(&format!("spec{i}.json"), &spec_with_pattern(pattern));
        let rec = dir.write(&format!("rec{i}.har"), &har_get(body));
        let reports = dir.join(format!("reports{i}"));
        let out = rpconform(
            &[
                "replay",
                &rec.display().to_string(),
                "--openapi",
                &spec.display().to_string(),
                "--report-dir",
                &reports.display().to_string(),
            ],
            QUICK_TIMEOUT,
        );
        no_panic(&out);
        let report = common::read_report(&reports);
        let spec04: Vec<&serde_json::Value> = common::verdicts(&report)
            .filter(|v| v["rule"] == "SPEC-04")
            .collect();
        let shown = format!("{pattern} / case {i}: {spec04:?}\n{}", out.tail(2000));
        assert!(
            spec04.iter().any(|v| v["outcome"] == *outcome),
            "SPEC-04 is not {outcome}: {shown}"
        );
        if *outcome == "not-judged" {
            assert!(spec04.iter().all(|v| v["outcome"] != "failed"), "{shown}");
            assert!(
                spec04
                    .iter()
                    .any(|v| v.to_string().contains("backtracking")),
                "the reason is not given: {shown}"
            );
        }
    }
}

/// Write a HAR of `n` small entries, each with its own request id: reads of 500 resources
/// (most 404 with a small error body), and every tenth a PUT that starts an operation (on 50
/// operation URLs in turn), the read of its status and of the resource. The resources and
/// operations repeat, so what the engine remembers per resource or operation (bounded on its
/// own, `rules::recent`) stays small and what grows with the entries shows.
fn many_small_entries(path: &std::path::Path, n: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let base = "https://management.azure.com/subscriptions/00000000-0000-0000-0000-00000000beef/resourceGroups/rg/providers/Microsoft.Bounded";
    let entry = |method: &str, url: String, status: u16, headers: serde_json::Value, body: &str| {
        serde_json::json!({
            "startedDateTime": "2024-01-01T00:00:00Z", "time": 1,
            "request": {"method": method, "url": url, "httpVersion": "HTTP/1.1", "headers": [], "queryString": []},
            "response": {"status": status, "statusText": "", "httpVersion": "HTTP/1.1", "headers": headers,
                "content": {"size": body.len(), "mimeType": "application/json", "text": body}}
        })
        .to_string()
    };
    write!(
        f,
        r#"{{"log":{{"version":"1.2","creator":{{"name":"t","version":"1"}},"entries":["#
    )
    .unwrap();
    let mut i = 0;
    while i < n {
        let id =
            |k: usize| serde_json::json!([{"name": "x-ms-request-id", "value": format!("r{k}")}]);
        let t = i % 500;
        let res = format!("{base}/things/t{t}?api-version=2024-01-01");
        let mut out = Vec::new();
        if i % 10 == 0 {
            let op =
                format!("{base}/locations/eastus/operationStatuses/op{t}?api-version=2024-01-01");
            let mut h = id(i);
            h.as_array_mut()
                .unwrap()
                .push(serde_json::json!({"name": "Azure-AsyncOperation", "value": op}));
            let body = format!(
                r#"{{"id":"/subscriptions/00000000-0000-0000-0000-00000000beef/resourceGroups/rg/providers/Microsoft.Bounded/things/t{t}","name":"t{t}","type":"Microsoft.Bounded/things","properties":{{"provisioningState":"Accepted"}}}}"#
            );
            out.push(entry("PUT", res.clone(), 201, h, &body));
            out.push(entry(
                "GET",
                op,
                200,
                id(i + 1),
                r#"{"status":"Succeeded"}"#,
            ));
            let done = body.replace("Accepted", "Succeeded");
            out.push(entry("GET", res, 200, id(i + 2), &done));
        } else {
            out.push(entry(
                "GET",
                res,
                404,
                id(i),
                r#"{"error":{"code":"NotFound","message":"no"}}"#,
            ));
        }
        for e in out {
            if i > 0 {
                f.write_all(b",").unwrap();
            }
            f.write_all(e.as_bytes()).unwrap();
            i += 1;
        }
    }
    f.write_all(b"]}}").unwrap();
}

/// Start `rpconform args` (output dropped); [`peak_kib`] waits for it (by `wait4`, which
/// also gives its peak memory).
#[cfg(target_os = "linux")]
#[allow(clippy::zombie_processes)]
fn spawn_quiet(args: &[&str]) -> libc::pid_t {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_rpconform"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    child.id() as libc::pid_t
}

/// Wait for child `pid`: its peak resident memory (KiB, the kernel's account of it) and its
/// exit code.
#[cfg(target_os = "linux")]
fn peak_kib(pid: libc::pid_t) -> (i64, i32) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be written over.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is this process's child, not waited for yet; both pointers are valid.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4 failed");
    (usage.ru_maxrss, libc::WEXITSTATUS(status))
}

/// A HAR of many small entries is streamed: ten times the entries costs next to no more
/// memory (what is kept is bounded by what it costs, not by the entries on the wire), and
/// every entry is still judged. Both runs go at once.
#[cfg(target_os = "linux")]
#[test]
fn a_recording_of_many_small_entries_is_read_in_bounded_memory() {
    let dir = Scratch::new("many-small");
    let sizes = [2_000usize, 20_000];
    let mut runs = Vec::new();
    for n in sizes {
        let har = dir.join(format!("small-{n}.har"));
        many_small_entries(&har, n);
        let reports = dir.join(format!("reports-{n}"));
        let pid = spawn_quiet(&[
            "replay",
            har.to_str().unwrap(),
            "--report-dir",
            reports.to_str().unwrap(),
        ]);
        runs.push((n, pid, reports));
    }
    let mut peaks = Vec::new();
    for (n, pid, reports) in runs {
        let (kib, code) = peak_kib(pid);
        assert!(matches!(code, 0 | 1), "exit {code}");
        let report = common::read_report(&reports);
        assert!(
            report
                .to_string()
                .contains(&format!("{n} entries, {n} ARM exchanges judged")),
            "not every entry was judged: {}",
            common::excerpt(&report)
        );
        peaks.push(kib);
    }
    // Held whole, as before streaming, each entry cost about 1 KiB: 18 000 more, 18 MiB.
    let growth_mib = (peaks[1] - peaks[0]) / 1024;
    assert!(
        growth_mib < 6,
        "18 000 more small entries took {growth_mib} MiB more (peaks {peaks:?} KiB): memory follows the entries"
    );
}
