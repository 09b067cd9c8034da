//! Credentials never leak: not into report.json, junit.xml, summary.md or any other file of the
//! report directory, and not onto stdout or stderr.
//!
//! Two kinds of target get a fake JWT-shaped bearer token (from `auth: {bearer_env: ...}` or
//! `auth: {command: ...}`) and a secret header (`secret_headers: [x-api-key]` with
//! `headers: {x-api-key: ...}`):
//!
//! - the embedded reference RP, served by `rpconform serve --write-target` and run with every
//!   suite (so every code path that records an exchange sees the credentials);
//! - the hostile server in echo mode (tests/hostile), which sends the credentials back in
//!   response headers (plain, in `Set-Cookie`, in `WWW-Authenticate`), in JSON bodies, in an
//!   error envelope, in a Location URL that the poller then follows, the JWT's middle segment
//!   on its own, and a body that puts the token across the 64 Ki-character mark where report
//!   bodies are cut; its suite also has expectations that fail on those echoed values, so the
//!   failure texts (expected / seen) render them.
//!
//! Then every byte under the report directory and the captured output is searched for the
//! token, its JWT middle (claims) and last (signature) segments, and the secret header value.

use crate::common;
use crate::hostile;

use std::path::{Path, PathBuf};
use std::time::Instant;

use common::Scratch;
use hostile::{Mode, Run, Server, run_bounded, target_yaml};

/// A fake token shaped like a JWT (header.claims.signature), as `az` would print one.
const TOKEN: &str = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzZWNyZXRzLXRlc3QiLCJhdWQiOiJodHRwczovL21hbmFnZW1lbnQuYXp1cmUuY29tLyIsIm9pZCI6InJwY29uZm9ybSJ9.c2lnbmF0dXJlLW9mLXRoZS1zZWNyZXRzLXRlc3QtdG9rZW4tLW5vdC1yZWFs";
/// A secret header value with no recognisable shape: only value-based scrubbing catches it.
const API_KEY: &str = "k3y-7c0ffee9-d00d-secret-header-value";
const TOKEN_ENV: &str = "RPCONFORM_TEST_TOKEN";

/// What must appear nowhere: the token, its claims and signature segments, the header value.
fn secrets() -> Vec<(&'static str, &'static str)> {
    let mut parts = TOKEN.split('.');
    let _header = parts.next();
    vec![
        ("the token", TOKEN),
        ("the token's middle (claims) segment", parts.next().unwrap()),
        ("the token's signature segment", parts.next().unwrap()),
        ("the x-api-key value", API_KEY),
    ]
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn find(haystack: &[u8], needle: &str) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
}

/// Search the report directory and the run's output; fail naming where a secret appears.
fn assert_no_secret(run: &Run, reports: &Path) {
    let files = files_under(reports);
    let names: Vec<String> = files
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    for f in ["report.json", "junit.xml", "summary.md"] {
        assert!(
            names.iter().any(|n| n == f),
            "{f} was not written: {names:?}\n{}",
            run.context()
        );
    }
    let mut places: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read(p).unwrap_or_default(),
            )
        })
        .collect();
    places.push(("stdout".into(), run.stdout.clone().into_bytes()));
    places.push(("stderr".into(), run.stderr.clone().into_bytes()));
    for (what, secret) in secrets() {
        for (place, bytes) in &places {
            if let Some(at) = find(bytes, secret) {
                let from = at.saturating_sub(200);
                let to = (at + secret.len() + 200).min(bytes.len());
                panic!(
                    "{what} leaked into {place} at byte {at}:\n…{}…",
                    String::from_utf8_lossy(&bytes[from..to])
                );
            }
        }
    }
    for (_, s) in secrets() {
        assert!(
            !run.command.contains(s),
            "test bug: a secret is on the command line"
        );
    }
}

/// The `[REDACTED]` mask shows credentials were sent and scrubbed, not simply never sent.
fn assert_masked(reports: &Path) {
    let json = std::fs::read_to_string(reports.join("report.json")).unwrap_or_default();
    assert!(
        json.contains("Bearer [REDACTED]"),
        "report.json shows no redacted Authorization header: was the token ever sent?"
    );
}

fn rpconform_run(dir: &Scratch, suites: &[&str], target: &Path, extra: &[&str]) -> Run {
    let reports = dir.join("reports");
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(suites.iter().map(|s| s.to_string()));
    for a in [
        "--target",
        &target.display().to_string(),
        "--request-timeout",
        "3",
        "--deadline",
        "6",
        "--time-scale",
        "0.01",
        "--report-dir",
        &reports.display().to_string(),
        "--schemas",
        &common::schemas_dir().display().to_string(),
    ] {
        args.push(a.to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    run_bounded("secrets", &args, &[(TOKEN_ENV, TOKEN)], &reports)
}

#[test]
fn no_secret_leaks_from_a_run_of_every_suite_against_the_reference_rp() {
    let started = Instant::now();
    let dir = Scratch::new("secrets-embedded");
    let target = dir.join("embedded-target.yaml");
    let _served = common::serve(&target, &[]);
    // The written target, with credentials added (the reference RP ignores them).
    let text = std::fs::read_to_string(&target).expect("serve wrote the target file");
    assert!(text.contains("\nauth: none\n"), "{text}");
    let text = text.replace(
        "\nauth: none\n",
        &format!(
            "\nauth: {{bearer_env: {TOKEN_ENV}}}\nsecret_headers: [x-api-key]\nheaders: {{x-api-key: {API_KEY}}}\n"
        ),
    );
    std::fs::write(&target, text).expect("target rewritten");
    let suites = common::suites_dir().display().to_string();
    let run = rpconform_run(&dir, &[&suites], &target, &[]);
    let ctx = run.context();
    assert!(
        !run.stdout.contains("panicked") && !run.stderr.contains("panicked"),
        "{ctx}"
    );
    // A conforming RP: 0, or 1 if a suite being edited fails; never a usage error or a crash.
    assert!(matches!(run.code, Some(0 | 1)), "{ctx}");
    assert_no_secret(&run, &dir.join("reports"));
    assert_masked(&dir.join("reports"));
    eprintln!(
        "reference RP, every suite: {:.1} s in all",
        started.elapsed().as_secs_f64()
    );
}

/// Steps that make the echo server send the credentials back every way it can, and
/// expectations that fail on the echoed values (so failure texts render them).
const ECHO_SUITE: &str = r#"suite: secrets
scenarios:
  - name: echo
    for_each_type: [any]
    steps:
      - name: make
        create: {as: r}
        expect:
          - {outcome: Succeeded, rule: PUT-04}
      - name: get
        request: {method: GET, url: "${r.url}"}
        expect:
          - {header: x-echo-token, absent: true, rule: HDR-01}
          - {header: x-echo-key, equals: "not the key", rule: HDR-01}
          - {pointer: /properties/echo, equals: {}, rule: RES-01}
          - {pointer: /properties/echo/token, one_of: [nothing], rule: RES-01}
      - name: error
        request: {method: GET, url: "${r.url}?echo=error"}
        expect:
          - {status: 200, rule: RES-01}
          - {pointer: /error/message, equals: "", rule: ERR-02}
      - name: straddle
        request: {method: GET, url: "${r.url}?echo=straddle"}
        expect:
          - {pointer: /pad, equals: "", rule: RES-01}
      - name: replay
        request:
          method: PUT
          url: "${r.url}?echo=replay"
          body: {"...": "${get.body}", tags: {echoed: "${get.headers.x-echo-token}"}}
        expect:
          - {status: 418, rule: PUT-01}
"#;

fn echo_case(label: &str, auth: &str) {
    let server = Server::start("127.0.0.1", Mode::Echo);
    let dir = Scratch::new(label);
    let target = dir.write(
        "target.yaml",
        &target_yaml(
            &server.base_url(),
            &format!(
                "auth: {auth}\nsecret_headers: [x-api-key]\nheaders: {{x-api-key: {API_KEY}}}\n"
            ),
        ),
    );
    let suite = dir.write("suite.yaml", ECHO_SUITE);
    let run = rpconform_run(&dir, &[&suite.display().to_string()], &target, &[]);
    let ctx = run.context();
    assert!(
        !run.stdout.contains("panicked") && !run.stderr.contains("panicked"),
        "{ctx}"
    );
    assert_eq!(
        run.code,
        Some(1),
        "the echo target fails expectations\n{ctx}"
    );
    // The server did get the credentials (so they were there to leak)...
    let seen = server.seen();
    assert!(
        seen.iter().any(
            |s| s.header("authorization") == Some(&format!("Bearer {TOKEN}"))
                && s.header("x-api-key") == Some(API_KEY)
        ),
        "the echo server never got the credentials: {seen:?}"
    );
    // ...and the poller followed the Location exactly as the target wrote it, token and all
    // (redaction applies to what the tool writes, never to the traffic).
    assert!(
        seen.iter()
            .any(|s| s.target.contains("/operationresults/") && s.target.contains(TOKEN)),
        "the Location with the echoed token was not followed: {seen:?}"
    );
    // ...and nothing of them is in the reports or the output.
    assert_no_secret(&run, &dir.join("reports"));
    assert_masked(&dir.join("reports"));
    // Failure texts did render the echoed values (masked), so the check had something to see.
    let json = std::fs::read_to_string(dir.join("reports/report.json")).unwrap_or_default();
    assert!(
        json.matches("[REDACTED]").count() > 10,
        "too few masks: the echoes never reached the report?"
    );
}

#[test]
fn no_secret_leaks_when_a_hostile_target_echoes_them_bearer_env() {
    echo_case("secrets-echo-env", &format!("{{bearer_env: {TOKEN_ENV}}}"));
}

#[test]
fn no_secret_leaks_when_a_hostile_target_echoes_them_token_command() {
    // The token comes from a command, as with `az account get-access-token`.
    echo_case(
        "secrets-echo-cmd",
        &format!("{{command: \"printenv {TOKEN_ENV}\"}}"),
    );
}
