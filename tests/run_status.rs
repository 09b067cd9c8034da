//! The run's one status, end to end, as a CI gate reads it: every headline (console, exit code,
//! conformance.md, summary.md, report.html, junit.xml, report.json, results.jsonl) tells the
//! same truth when the target fails every DELETE (resources left behind: failed, and a failing
//! `cleanup` testcase listing them), when the endpoint is dead (a preflight blocker still writes
//! junit.xml with an error), when the target file is bad (exit 2, nothing written), and when
//! `--certify` is asked of an accelerated run (not certified, exit 1).

use crate::common;

use std::net::{Ipv4Addr, SocketAddr};

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use common::{QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, read_junit, read_report, rpconform};

/// A proxy in front of `upstream` that answers every DELETE 500 and passes the rest,
/// rewriting the upstream's origin to its own in headers and bodies.
async fn delete_refusing_proxy(upstream: String) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .await
        .unwrap();
    let me = format!("http://{}", listener.local_addr().unwrap());
    let state = (upstream, me.clone(), reqwest::Client::new());
    let app = axum::Router::new()
        .fallback(
            |State((up, me, client)): State<(String, String, reqwest::Client)>,
             req: Request| async move {
                if req.method() == axum::http::Method::DELETE {
                    return Response::builder()
                        .status(StatusCode::INTERNAL_SERVER_ERROR)
                        .header("content-type", "application/json")
                        .header("x-ms-request-id", uuid_like())
                        .body(Body::from(
                            r#"{"error":{"code":"DeleteRefused","message":"this proxy refuses every DELETE"}}"#,
                        ))
                        .unwrap();
                }
                let url = format!(
                    "{up}{}",
                    req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/")
                );
                let method = reqwest::Method::from_bytes(req.method().as_str().as_bytes()).unwrap();
                let mut out = client.request(method, url);
                for (k, v) in req.headers() {
                    if k != "host" && k != "content-length" {
                        out = out.header(k.as_str(), v.as_bytes());
                    }
                }
                let body = to_bytes(req.into_body(), 1 << 24).await.unwrap_or_default();
                let answer = match out.body(body.to_vec()).send().await {
                    Ok(a) => a,
                    Err(_) => {
                        return Response::builder()
                            .status(StatusCode::BAD_GATEWAY)
                            .body(Body::empty())
                            .unwrap();
                    }
                };
                let mut resp = Response::builder().status(answer.status().as_u16());
                for (k, v) in answer.headers() {
                    if k == "content-length" || k == "transfer-encoding" {
                        continue;
                    }
                    let v = String::from_utf8_lossy(v.as_bytes()).replace(&up, &me);
                    resp = resp.header(k.as_str(), v);
                }
                let text = answer.text().await.unwrap_or_default().replace(&up, &me);
                resp.body(Body::from(text)).unwrap()
            },
        )
        .with_state(state);
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (me, task)
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "00000000-0000-4000-8000-{:012x}",
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn text(dir: &std::path::Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn leftovers_fail_every_headline_and_junit_lists_them() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(rpconform_refrp::start(Default::default(), 0))
        .unwrap();
    let (proxy, task) = rt.block_on(delete_refusing_proxy(server.base_url()));
    let dir = Scratch::new("leftovers");
    let target = dir.write(
        "target.yaml",
        &rpconform::target::embedded_target_yaml(&proxy),
    );
    let reports = dir.join("reports");
    let out = rpconform(
        &[
            "run",
            "suites/async-put.yaml",
            "-q",
            "--target",
            &target.display().to_string(),
            "--time-scale",
            "0.01",
            "--deadline",
            "2",
            "--report-dir",
            &reports.display().to_string(),
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let last = out.stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("rpconform: FAILED"), "{last}");
    assert!(last.contains("left behind"), "{last}");
    // libtest's line agrees: the cleanup is a failure of its own, as in JUnit.
    let result = out
        .stdout
        .lines()
        .find(|l| l.starts_with("test result:"))
        .unwrap_or_default();
    assert!(result.starts_with("test result: FAILED."), "{result}");
    assert!(
        out.stdout.contains("---- cleanup ----"),
        "{}",
        out.tail(2000)
    );
    for file in ["conformance.md", "summary.md"] {
        let md = text(&reports, file);
        let head = md.lines().next().unwrap();
        assert!(
            head.contains("❌ failed") && head.contains("left behind"),
            "{file}: {head}"
        );
        assert!(!head.contains("passed"), "{file}: {head}");
    }
    let html = text(&reports, "report.html");
    assert!(html.contains("run-failed"), "report.html headline");
    let report = read_report(&reports);
    assert_eq!(report["status"]["state"], "failed");
    let left = report["run"]["left_behind"].as_array().unwrap();
    assert!(!left.is_empty());
    let jsonl = text(&reports, "results.jsonl");
    let status: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(status["run_status"]["state"], "failed");
    // JUnit: not green, and a failing `cleanup` testcase naming each URL.
    let junit = read_junit(&reports);
    assert!(junit.failures > 0, "junit.xml is green");
    let run = &junit.test_suites[0];
    assert_eq!(run.name.as_str(), "run");
    let cleanup = run
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == "cleanup")
        .unwrap();
    match &cleanup.status {
        quick_junit::TestCaseStatus::NonSuccess {
            kind: quick_junit::NonSuccessKind::Failure,
            description: Some(d),
            ..
        } => {
            for l in left {
                let url = l.as_str().unwrap().split(' ').next().unwrap();
                assert!(
                    d.as_str().contains(url),
                    "{url} not in the cleanup testcase"
                );
            }
        }
        other => panic!("the cleanup testcase does not fail: {other:?}"),
    }
    task.abort();
    rt.block_on(server.shutdown());
}

#[test]
fn a_dead_endpoint_still_writes_junit_with_an_error() {
    let dir = Scratch::new("dead-endpoint");
    let target = dir.write(
        "target.yaml",
        &rpconform::target::embedded_target_yaml("http://127.0.0.1:9"),
    );
    let reports = dir.join("reports");
    let out = rpconform(
        &[
            "run",
            "suites",
            "--target",
            &target.display().to_string(),
            "--report-dir",
            &reports.display().to_string(),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(2000));
    assert!(out.stderr.contains("not ready"), "{}", out.stderr);
    let junit = read_junit(&reports);
    assert!(junit.errors >= 1, "no error in junit.xml");
    let preflight = junit
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .find(|c| c.name.as_str() == "preflight")
        .expect("a preflight testcase");
    assert!(matches!(
        preflight.status,
        quick_junit::TestCaseStatus::NonSuccess {
            kind: quick_junit::NonSuccessKind::Error,
            ..
        }
    ));
    let summary = text(&reports, "summary.md");
    assert!(summary.starts_with("# rpconform: ❌ failed"), "{summary}");
    assert!(summary.contains("not ready"), "{summary}");
}

#[test]
fn a_bad_target_file_writes_nothing_and_says_so() {
    let dir = Scratch::new("bad-target");
    let target = dir.write("target.yaml", "base_url: [not, a, url]\n");
    let reports = dir.join("reports");
    let out = rpconform(
        &[
            "run",
            "suites",
            "--target",
            &target.display().to_string(),
            "--report-dir",
            &reports.display().to_string(),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(out.stderr.contains("target.yaml:1:"), "{}", out.stderr);
    assert!(
        out.stderr.contains("no report was written"),
        "{}",
        out.stderr
    );
    assert!(!reports.join("junit.xml").exists());
}

#[test]
fn certify_on_an_accelerated_run_says_not_certified_and_exits_1() {
    let dir = Scratch::new("certify");
    let reports = dir.join("reports");
    let out = rpconform(
        &[
            "run",
            "suites/headers-and-errors.yaml",
            "-q",
            "--certify",
            "--time-scale",
            "0.05",
            "--hold-reads",
            "3",
            "--report-dir",
            &reports.display().to_string(),
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(2000));
    let last = out.stdout.lines().last().unwrap_or_default();
    assert!(last.contains("not certified"), "{last}");
    let report = read_report(&reports);
    let cert = &report["status"]["certification"];
    assert_eq!(cert["certified"], false);
    let why = cert["why_not"].to_string();
    assert!(why.contains("time scale 0.05"), "{why}");
    let summary = text(&reports, "summary.md");
    assert!(summary.contains("**Not certified**"), "{summary}");
    // The same run without --certify is no failure: nothing broke, it is only incomplete.
    let out = rpconform(
        &[
            "run",
            "suites/headers-and-errors.yaml",
            "-q",
            "--time-scale",
            "0.05",
            "--hold-reads",
            "3",
            "--report-dir",
            &dir.str("plain"),
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    let report = read_report(&dir.join("plain"));
    assert_eq!(
        report["status"]["state"], "incomplete",
        "{}",
        report["status"]
    );
    // Provenance: the suite set, the catalogue, and suite files relative to the suite set.
    assert!(
        report["run"]["suite_set"]
            .as_str()
            .is_some_and(|s| s.len() == 12)
    );
    assert!(
        report["run"]["catalogue"]
            .as_str()
            .is_some_and(|s| s.contains("rules"))
    );
    let xml = text(&dir.join("plain"), "junit.xml");
    for file in xml.split("file=\"").skip(1) {
        let f = file.split('"').next().unwrap();
        assert!(!f.starts_with('/'), "an absolute file= in junit.xml: {f}");
    }
}
