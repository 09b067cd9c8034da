//! `rpconform doctor`: the three answers that matter before a run — a dead port, a failing
//! token command, a working RP — each right, in a few seconds; a token that is JSON is named
//! as such; warnings exit 0; and `run` stops at the same checks with one error, before any
//! test (no per-test errors, no reports).

use crate::common;
use crate::local;

use std::time::Duration;

use base64::Engine;
use common::{Output, QUICK_TIMEOUT, Scratch, rpconform};
use local::{LocalServer, ok_empty};

/// A doctor run must take "a few seconds".
const FEW_SECONDS: Duration = Duration::from_secs(15);

fn target(base: &str, auth: &str, rg: &str) -> String {
    format!(
        "base_url: {base}\nauth: {auth}\nsubscription: 00000000-0000-0000-0000-0000000000d0\n\
         resource_group: {rg}\nnamespace: Microsoft.Contoso\napi_version: \"2024-05-01\"\n\
         location: eastus\ntypes:\n  widgets:\n    kind: tracked\n    create_body: {{location: eastus}}\n"
    )
}

fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    l.local_addr().expect("addr").port()
}

fn doctor(target: &std::path::Path) -> Output {
    rpconform(
        &[
            "doctor",
            "--target",
            &target.display().to_string(),
            "--timeout",
            "5",
        ],
        QUICK_TIMEOUT,
    )
}

/// The checklist line of `check`, e.g. `  BLOCKER endpoint ...`.
fn line<'a>(out: &'a Output, check: &str) -> &'a str {
    out.stdout
        .lines()
        .find(|l| {
            let t = l.trim_start();
            let (tag, rest) = t.split_once(' ').unwrap_or((t, ""));
            ["ok", "skip", "warn", "BLOCKER"].contains(&tag) && rest.trim_start().starts_with(check)
        })
        .unwrap_or_else(|| panic!("no `{check}` line\n{}", out.tail(3000)))
}

fn level<'a>(out: &'a Output, check: &str) -> &'a str {
    line(out, check).split_whitespace().next().unwrap_or("")
}

#[test]
fn a_dead_port_is_an_endpoint_blocker() {
    let dir = Scratch::new("doctor-dead");
    let port = closed_port();
    let t = dir.write(
        "target.yaml",
        &target(
            &format!("http://127.0.0.1:{port}"),
            "none",
            "{name: rg, create: true}",
        ),
    );
    let out = doctor(&t);
    assert_eq!(out.code(), 1, "a blocker exits 1\n{}", out.tail(3000));
    assert!(out.elapsed < FEW_SECONDS, "{}", out.tail(3000));
    assert_eq!(level(&out, "endpoint"), "BLOCKER", "{}", out.tail(3000));
    assert!(
        line(&out, "endpoint").contains("connection refused"),
        "{}",
        out.tail(3000)
    );
    assert_eq!(level(&out, "token"), "ok");
    // What needs the endpoint is not checked, and says why once.
    assert!(
        line(&out, "resource group").contains("the endpoint does not answer"),
        "{}",
        out.tail(3000)
    );
    assert!(
        out.stdout.contains("not ready: 1 blocker"),
        "{}",
        out.tail(3000)
    );
}

#[test]
fn a_failing_token_command_is_a_token_blocker_with_its_stderr() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("doctor-token");
    let script = dir.write(
        "token.sh",
        "echo \"ERROR: Please run 'az login' to setup account.\" >&2\nexit 1\n",
    );
    let t = dir.write(
        "target.yaml",
        &target(
            &server.base_url(),
            &format!("{{command: \"sh {}\"}}", script.display()),
            "{name: rg, disposable: true}",
        ),
    );
    let out = doctor(&t);
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    assert!(out.elapsed < FEW_SECONDS, "{}", out.tail(3000));
    assert_eq!(level(&out, "token"), "BLOCKER", "{}", out.tail(3000));
    assert!(
        out.stdout.contains("Please run 'az login'"),
        "the command's stderr is shown\n{}",
        out.tail(3000)
    );
    assert!(out.stdout.contains("exit status: 1"), "{}", out.tail(3000));
    // The endpoint itself is fine, and is said to be.
    assert_eq!(level(&out, "endpoint"), "ok", "{}", out.tail(3000));
    assert!(
        line(&out, "resource group").contains("no token"),
        "{}",
        out.tail(3000)
    );
    assert!(
        server
            .seen()
            .iter()
            .all(|r| r.header("authorization").is_none()),
        "nothing authenticated went out"
    );
}

#[test]
fn a_command_printing_json_is_named_as_such() {
    let server = LocalServer::start(ok_empty);
    let dir = Scratch::new("doctor-json");
    let script = dir.write(
        "token.sh",
        "echo '{\"accessToken\": \"eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiJ4In0.c2ln\", \"tokenType\": \"Bearer\"}'\n",
    );
    let t = dir.write(
        "target.yaml",
        &target(
            &server.base_url(),
            &format!("{{command: \"sh {}\"}}", script.display()),
            "{name: rg, disposable: true}",
        ),
    );
    let out = doctor(&t);
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    assert!(
        line(&out, "token").contains("holds JSON"),
        "{}",
        out.tail(3000)
    );
    assert!(
        out.stdout.contains("--query accessToken -o tsv"),
        "{}",
        out.tail(3000)
    );
    assert!(
        !out.stdout.contains("c2ln"),
        "no part of the token is printed"
    );
}

#[test]
fn the_embedded_rp_is_ready() {
    let out = rpconform(&["doctor", "--target", "embedded"], QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    assert!(out.elapsed < FEW_SECONDS, "{}", out.tail(3000));
    for check in ["token", "endpoint", "clock", "resource group"] {
        assert_eq!(level(&out, check), "ok", "{check}\n{}", out.tail(3000));
    }
    // Not ARM: no registration to read, and the checklist says so.
    assert_eq!(level(&out, "provider"), "skip");
    assert!(
        line(&out, "provider").contains("embedded"),
        "{}",
        out.tail(3000)
    );
    assert!(out.stdout.contains("ready: "), "{}", out.tail(3000));
}

/// A JWT-shaped token (unsigned) for `aud`, expiring in `secs`.
fn jwt(aud: &str, secs: i64) -> String {
    let e = |v: serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + secs;
    format!(
        "{}.{}.c2lnbmF0dXJlLWRvY3Rvci10ZXN0",
        e(serde_json::json!({"alg": "none"})),
        e(
            serde_json::json!({"aud": aud, "exp": exp, "oid": "11111111-2222-3333-4444-555555555555"})
        )
    )
}

#[test]
fn a_served_reference_rp_with_a_short_lived_token_is_ready_with_a_warning() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(rpconform_refrp::start(
            rpconform_refrp::Settings::default(),
            0,
        ))
        .unwrap();
    let dir = Scratch::new("doctor-served");
    let yaml = rpconform::target::embedded_target_yaml(&server.base_url())
        .replace("auth: none", "auth: {bearer_env: DOCTOR_TEST_TOKEN}");
    let t = dir.write("target.yaml", &yaml);
    let token = jwt("https://management.azure.com/", 5 * 60);
    let out = common::rpconform_in(
        &common::root(),
        &[("DOCTOR_TEST_TOKEN", token.as_str())],
        &["doctor", "--target", &t.display().to_string()],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "warnings exit 0\n{}", out.tail(3000));
    assert_eq!(level(&out, "token"), "warn", "{}", out.tail(3000));
    let tok = line(&out, "token");
    assert!(
        tok.contains("environment variable DOCTOR_TEST_TOKEN"),
        "{tok}"
    );
    assert!(
        tok.contains("a JWT for https://management.azure.com/"),
        "{tok}"
    );
    assert!(
        tok.contains("expires in 4 min") || tok.contains("expires in 5 min"),
        "{tok}"
    );
    assert!(
        out.stdout
            .contains("nothing renews a token from a variable"),
        "{}",
        out.tail(3000)
    );
    for part in token.split('.') {
        assert!(
            !out.stdout.contains(part) || part.len() < 8,
            "a part of the token was printed"
        );
    }
    assert_eq!(level(&out, "endpoint"), "ok");
    assert!(out.stdout.contains("ready: "), "{}", out.tail(3000));
    rt.block_on(server.shutdown());
}

#[test]
fn run_stops_at_a_blocker_with_one_error_and_no_test() {
    let dir = Scratch::new("doctor-run");
    let port = closed_port();
    let t = dir.write(
        "target.yaml",
        &target(
            &format!("http://127.0.0.1:{port}"),
            "none",
            "{name: rg, create: true}",
        ),
    );
    let reports = dir.join("reports");
    let out = rpconform(
        &[
            "run",
            "--target",
            &t.display().to_string(),
            "--report-dir",
            &reports.display().to_string(),
            "--time-scale",
            "0.01",
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    assert!(out.elapsed < FEW_SECONDS, "{}", out.tail(3000));
    assert!(out.stderr.contains("no test was run"), "{}", out.tail(3000));
    assert_eq!(
        out.stderr.matches("connection refused").count(),
        1,
        "one error, not one per test\n{}",
        out.tail(3000)
    );
    assert!(
        !out.stdout.contains("test result"),
        "no test started\n{}",
        out.tail(3000)
    );
    // No test ran, but a CI step publishing test results finds junit.xml with the blocker as
    // one error testcase.
    let junit = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&junit).unwrap();
    assert_eq!(junit.errors, 1, "one error testcase: the blocker");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["status"]["state"], "failed");
    assert_eq!(report["results"].as_array().map(Vec::len), Some(1));
}
