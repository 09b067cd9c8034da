//! "Safe to point at anything": `rpconform run` against hostile targets (tests/hostile) gives a
//! clear, failing verdict in bounded time, never panics, keeps its memory bounded, and never
//! sends or leaks a credential to another origin.
//!
//! Each case starts a hostile server with one misbehaviour, writes a one-scenario suite and a
//! target file into a scratch directory, and runs the binary with `--request-timeout 3
//! --deadline 6 --time-scale 0.01` under a hard wall-clock bound (killed, and the test failed,
//! after 60 s, or at once past 1 GB resident) while measuring its peak resident memory (VmHWM
//! samples from /proc, and GNU time's maximum RSS when /usr/bin/time exists). Every case asserts:
//! exit code 1 (a failing verdict: not 0, not 2, not a panic's 101 or a signal), no "panicked"
//! on stdout/stderr, a report.json whose failing verdict or runner error names the case's rule
//! and says why in words ("over the cap", "timed out", "not valid JSON"...), and a peak RSS
//! under 300 MB. The foreign-origin cases also check, on a second listener on 127.0.0.2, that
//! no Authorization or secret header reached it.
//!
//! `HOSTILE_VERBOSE=1 cargo test --test e2e hostile_targets:: -- --nocapture` prints each run's
//! time, peak memory and the reasons its report gives.

use crate::common;
use crate::hostile;

use std::time::Duration;

use common::{Scratch, schemas_dir};
use hostile::{Mode, Run, Server, closed_port, run_bounded, target_yaml};
use serde_json::Value;

/// Peak resident memory a run may reach.
const MEMORY_BOUND_KB: u64 = 300 * 1024;

/// The token a target's `auth: {bearer_env: ...}` reads in these tests (JWT-shaped, fake).
const TOKEN: &str = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJob3N0aWxlLXRlc3QiLCJhdWQiOiJycGNvbmZvcm0ifQ.c2lnbmF0dXJlLWZvci1ob3N0aWxlLXRlc3Rz";
const API_KEY: &str = "hk-4f1e2d3c-secret-api-key-value";

/// A list read to its end (`pages: all`).
const SUITE_ALL_PAGES: &str = r#"suite: hostile
scenarios:
  - name: all-pages
    steps:
      - request: {method: GET, url: "${target.base_url}/list?list=1&page=0", pages: all}
"#;

/// A PUT, then a poll of what it started: exercises both the request and the poller.
const SUITE_PUT_POLL: &str = r#"suite: hostile
scenarios:
  - name: put-and-poll
    for_each_type: [any]
    steps:
      - fresh: {as: r}
      - name: put
        request: {method: PUT, url: "${r.url}", body: "${type.create_body}"}
        expect:
          - {status: [200, 201, 202], rule: PUT-01}
      - name: wait
        poll: put
        expect:
          - {outcome: Succeeded, rule: PUT-04}
"#;

/// A `create` step (PUT and wait, as every suite's setup does).
const SUITE_CREATE: &str = r#"suite: hostile
scenarios:
  - name: create
    for_each_type: [any]
    steps:
      - name: make
        create: {as: r}
        expect:
          - {outcome: Succeeded, rule: PUT-04}
"#;

/// Run `rpconform run` on `suite` against `target` with the hostile-run flags (plus `extra`),
/// bounded by [`hostile::WALL_CLOCK`], measuring peak memory.
fn run(dir: &Scratch, target: &str, suite: &str, extra: &[&str]) -> Run {
    let suite_path = dir.write("suite.yaml", suite);
    let target_path = dir.write("target.yaml", target);
    let reports = dir.join("reports");
    let schemas = schemas_dir();
    let mut args: Vec<String> = [
        "run",
        &suite_path.display().to_string(),
        "--target",
        &target_path.display().to_string(),
        "--request-timeout",
        "3",
        "--deadline",
        "6",
        "--time-scale",
        "0.01",
        "--report-dir",
        &reports.display().to_string(),
        "--schemas",
        &schemas.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let label = dir
        .path
        .file_name()
        // rpconform-e2e-LABEL-PID-STAMP-SEQ
        .map(|n| {
            let n = n.to_string_lossy();
            let n = n.trim_start_matches("rpconform-e2e-");
            n.rsplitn(4, '-').last().unwrap_or("").to_string()
        })
        .unwrap_or_default();
    run_bounded(&label, &args, &[("RPCONFORM_TEST_TOKEN", TOKEN)], &reports)
}

/// What a case must show.
struct Expect<'a> {
    /// Rules of which one must have a failed verdict (empty: a runner error is enough).
    rules: &'a [&'a str],
    /// Phrases of which one must appear (case-insensitive) in the report's reasons.
    reason: &'a [&'a str],
    /// The test must have ended as a runner error ("could not check").
    runner_error: bool,
}

/// The assertions every case makes: exit 1, no panic, bounded memory, and a report naming
/// the rule (or the runner error) with a clear reason.
fn assert_failing_verdict(run: &Run, exp: &Expect<'_>) {
    let ctx = run.context();
    if std::env::var_os("HOSTILE_VERBOSE").is_some() {
        eprintln!("[{}] reasons:\n{}", run.label, run.reasons());
    }
    for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(!text.contains("panicked"), "{name} shows a panic\n{ctx}");
    }
    assert_eq!(
        run.code,
        Some(1),
        "a hostile target must get a failing verdict: exit 1 (not 0, 2, 101 or a signal)\n{ctx}"
    );
    assert!(
        run.peak_kb < MEMORY_BOUND_KB,
        "peak memory {} MB is over the bound of {} MB\n{ctx}",
        run.peak_kb / 1024,
        MEMORY_BOUND_KB / 1024
    );
    let results = run.results();
    assert!(!results.is_empty(), "report.json has no result\n{ctx}");
    // A test fails on the rules it states; a rule the engine judged on its own (an ambient
    // or flow rule) fails in the conformance view.
    let bad = results
        .iter()
        .filter(|r| matches!(r["status"].as_str(), Some("failed" | "error")))
        .count()
        + run.report()["counts"]["rules"]["failed"]
            .as_u64()
            .unwrap_or(0) as usize;
    assert!(
        bad > 0,
        "no test failed or errored, and no rule failed\n{ctx}"
    );
    if exp.runner_error {
        assert!(
            results.iter().any(|r| r["status"] == "error"),
            "expected a runner error (could not check)\n{ctx}"
        );
    }
    let failed = run.failed_rules();
    if !exp.rules.is_empty() {
        assert!(
            failed.iter().any(|(r, _)| exp.rules.contains(&r.as_str())),
            "expected a failed verdict of one of {:?}; failed: {:?}\n{ctx}",
            exp.rules,
            failed
        );
    }
    let reasons = run.reasons().to_ascii_lowercase();
    assert!(
        exp.reason
            .iter()
            .any(|p| reasons.contains(&p.to_ascii_lowercase())),
        "the report does not say why in words: none of {:?} in\n{reasons}\n{ctx}",
        exp.reason
    );
}

/// Start a server in `mode`, run `suite` against it, assert the common verdict.
fn case(label: &str, mode: Mode, suite: &str, extra: &[&str], exp: Expect<'_>) -> (Run, Server) {
    let server = Server::start("127.0.0.1", mode);
    let dir = Scratch::new(label);
    let target = target_yaml(&server.base_url(), "");
    let r = run(&dir, &target, suite, extra);
    assert_failing_verdict(&r, &exp);
    (r, server)
}

/// Nothing listens: the preflight at the start of the run says so once, and no test starts
/// (`tests/doctor.rs` has the checklist itself).
#[test]
fn connection_refused() {
    let dir = Scratch::new("refused");
    let target = target_yaml(&format!("http://127.0.0.1:{}", closed_port()), "");
    let r = run(&dir, &target, SUITE_PUT_POLL, &[]);
    let ctx = r.context();
    for (name, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        assert!(!text.contains("panicked"), "{name} shows a panic\n{ctx}");
    }
    assert_eq!(
        r.code,
        Some(1),
        "an unreachable target fails the run\n{ctx}"
    );
    assert!(r.stderr.contains("connection refused"), "{ctx}");
    assert!(r.stderr.contains("no test was run"), "{ctx}");
    assert!(r.peak_kb < MEMORY_BOUND_KB, "{ctx}");
}

#[test]
fn accept_then_never_answer() {
    let (r, _s) = case(
        "hang",
        Mode::HangPut,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &[],
            reason: &["timed out", "no complete response"],
            runner_error: true,
        },
    );
    assert!(r.elapsed < Duration::from_secs(30), "{}", r.context());
}

#[test]
fn poll_url_never_answers() {
    let (r, _s) = case(
        "hang-poll",
        Mode::HangPoll,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["LOC-08"],
            reason: &["timed out"],
            runner_error: false,
        },
    );
    assert!(r.elapsed < Duration::from_secs(40), "{}", r.context());
}

#[test]
fn body_trickles_forever() {
    case(
        "trickle",
        Mode::TricklePut,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &[],
            reason: &["timed out", "no complete response"],
            runner_error: true,
        },
    );
}

#[test]
fn connection_reset_mid_body() {
    case(
        "reset",
        Mode::ResetPut,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &[],
            reason: &["reset", "failed reading the body"],
            runner_error: true,
        },
    );
}

#[test]
fn announced_one_gib_body_is_not_read() {
    let (r, _s) = case(
        "1gib",
        Mode::Announce1GiB,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &[],
            reason: &["over the cap"],
            runner_error: true,
        },
    );
    assert!(r.elapsed < Duration::from_secs(20), "{}", r.context());
}

#[test]
fn endless_chunked_body_stops_at_the_cap() {
    case(
        "chunked",
        Mode::ChunkedForever,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &[],
            reason: &["over the cap"],
            runner_error: true,
        },
    );
}

#[test]
fn invalid_json() {
    case(
        "badjson",
        Mode::InvalidJson,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["RES-01"],
            reason: &["not valid JSON"],
            runner_error: false,
        },
    );
}

#[test]
fn json_nested_100000_deep() {
    case(
        "deepjson",
        Mode::DeepJson,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["RES-01"],
            reason: &["not valid JSON"],
            runner_error: false,
        },
    );
}

#[test]
fn invalid_utf8_in_header_values() {
    let (r, _s) = case(
        "badutf8",
        Mode::BadUtf8Headers,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["LOC-03"],
            reason: &["Retry-After"],
            runner_error: false,
        },
    );
    // The bytes are kept visibly (as U+FFFD), not dropped and not crashing anything.
    let put = r
        .exchanges()
        .into_iter()
        .find(|x| x["method"] == "PUT")
        .cloned()
        .unwrap_or_default();
    assert!(
        put["response"]["headers"].to_string().contains('\u{FFFD}'),
        "{}",
        r.context()
    );
}

#[test]
fn gzip_bomb_is_not_inflated() {
    // Built (and checksummed) before the server answers with it: that takes seconds in a
    // debug build, which must not count against the request timeout.
    let bomb_len = hostile::gzip_bomb().len();
    let (r, _s) = case(
        "gzip",
        Mode::GzipBomb,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["RES-01"],
            reason: &["not valid JSON"],
            runner_error: false,
        },
    );
    // The body recorded is the compressed bytes, not the ~100 MB they inflate to.
    let put = r
        .exchanges()
        .into_iter()
        .find(|x| x["method"] == "PUT")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        put["response"]["body_bytes"].as_u64(),
        Some(bomb_len as u64),
        "{}",
        r.context()
    );
    assert!(hostile::GZIP_BOMB_INFLATED > 100 * bomb_len);
}

#[test]
fn endless_202_loop() {
    let (r, _s) = case(
        "loop202",
        Mode::Loop202,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["LOC-08"],
            reason: &["timed out"],
            runner_error: false,
        },
    );
    assert!(r.elapsed < Duration::from_secs(30), "{}", r.context());
}

fn retry_after_case(label: &str, value: &'static str, rule: &'static str) {
    let (r, _s) = case(
        label,
        Mode::RetryAfter(value),
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &[rule],
            reason: &["Retry-After"],
            runner_error: false,
        },
    );
    assert!(r.elapsed < Duration::from_secs(30), "{}", r.context());
}

#[test]
fn retry_after_zero() {
    retry_after_case("ra-zero", "0", "LOC-04");
}

#[test]
fn retry_after_negative() {
    retry_after_case("ra-neg", "-1", "LOC-03");
}

#[test]
fn retry_after_absurd() {
    retry_after_case("ra-huge", "99999999999", "LOC-04");
}

#[test]
fn retry_after_http_date() {
    retry_after_case("ra-date", "Wed, 21 Oct 2015 07:28:00 GMT", "LOC-03");
}

#[test]
fn redirect_loop_is_not_followed() {
    let (r, s) = case(
        "redirect",
        Mode::RedirectLoop,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["PUT-01"],
            reason: &["302"],
            runner_error: false,
        },
    );
    let puts = s.seen().iter().filter(|x| x.method == "PUT").count();
    assert_eq!(puts, 1, "a 302 must not be followed\n{}", r.context());
}

#[test]
fn duplicate_conflicting_headers() {
    let (r, _s) = case(
        "dupheaders",
        Mode::DuplicateHeaders,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["LOC-03"],
            reason: &["Retry-After: -1"],
            runner_error: false,
        },
    );
    // Both values of each duplicated header are kept, and the reused request id is caught.
    let put = r
        .exchanges()
        .into_iter()
        .find(|x| x["method"] == "PUT")
        .cloned()
        .unwrap_or_default();
    let headers = put["response"]["headers"].to_string();
    assert!(
        headers.matches("x-ms-request-id").count() == 2
            && headers.matches("retry-after").count() == 2,
        "{headers}"
    );
    assert!(
        r.failed_rules()
            .iter()
            .any(|(rule, t)| rule == "HDR-01" && t.contains("hostile-duplicate-id")),
        "{}",
        r.context()
    );
}

#[test]
fn ftp_location_is_not_fetched() {
    case(
        "ftp-loc",
        Mode::FtpLocation,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["PUT-04"],
            reason: &["`ftp:`"],
            runner_error: false,
        },
    );
}

#[test]
fn ftp_operation_url_is_not_fetched() {
    case(
        "ftp-aao",
        Mode::FtpOperation,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["PUT-04"],
            reason: &["`ftp:`"],
            runner_error: false,
        },
    );
}

/// A target with credentials (a bearer token and a secret header) for the foreign cases.
fn target_with_credentials(base: &str) -> String {
    target_yaml(
        base,
        &format!(
            "auth: {{bearer_env: RPCONFORM_TEST_TOKEN}}\nsecret_headers: [x-api-key]\nheaders: {{x-api-key: {API_KEY}}}\n"
        ),
    )
}

/// Run a foreign-origin case: the target on 127.0.0.1, its poll URLs on 127.0.0.2.
fn foreign_case(
    label: &str,
    operation: bool,
    extra: &[&str],
    exp: Expect<'_>,
) -> (Run, Server, Server) {
    let sink = Server::start("127.0.0.2", Mode::ForeignSink);
    let foreign = sink.base_url();
    let mode = if operation {
        Mode::ForeignOperation { foreign }
    } else {
        Mode::ForeignLocation { foreign }
    };
    let server = Server::start("127.0.0.1", mode);
    let dir = Scratch::new(label);
    let r = run(
        &dir,
        &target_with_credentials(&server.base_url()),
        SUITE_PUT_POLL,
        extra,
    );
    assert_failing_verdict(&r, &exp);
    // The target itself got the credentials...
    let own = server.seen();
    assert!(
        own.iter()
            .any(|s| s.header("authorization") == Some(&format!("Bearer {TOKEN}"))),
        "the target never got the token: {own:?}"
    );
    // ...the other origin never did.
    for s in sink.seen() {
        assert!(
            s.header("authorization").is_none()
                && s.header("x-api-key").is_none()
                && !format!("{s:?}").contains(TOKEN)
                && !format!("{s:?}").contains(API_KEY),
            "a credential was sent to another origin: {s:?}\n{}",
            r.context()
        );
    }
    (r, server, sink)
}

/// The report flags the fetches from `origin`: each exchange is marked `foreign` and sent no
/// credentials, and the same-host rule (LOC-09 / AAO-03) failed naming the URL.
fn assert_foreign_flagged(r: &Run, rule: &str, origin: &str) {
    let ctx = r.context();
    let foreign: Vec<&Value> = r
        .exchanges()
        .into_iter()
        .filter(|x| x["url"].as_str().unwrap_or("").starts_with(origin))
        .collect();
    assert!(
        !foreign.is_empty(),
        "no exchange with the other origin\n{ctx}"
    );
    for x in &foreign {
        assert_eq!(x["foreign"], true, "not flagged foreign: {x}\n{ctx}");
        let sent = x["request_headers"].to_string().to_ascii_lowercase();
        assert!(
            !sent.contains("authorization") && !sent.contains("x-api-key"),
            "credentials recorded as sent off-origin: {sent}"
        );
    }
    assert!(
        r.failed_rules()
            .iter()
            .any(|(x, t)| x == rule && t.contains(origin)),
        "{rule} did not flag the other host\n{ctx}"
    );
}

#[test]
fn foreign_location_gets_no_credentials() {
    let (r, _s, sink) = foreign_case(
        "foreign-loc",
        false,
        &[],
        Expect {
            rules: &["PUT-04"],
            reason: &["another origin", "Failed"],
            runner_error: false,
        },
    );
    assert!(!sink.seen().is_empty(), "the Location was never fetched");
    assert_foreign_flagged(&r, "LOC-09", "http://127.0.0.2");
}

#[test]
fn foreign_operation_gets_no_credentials() {
    let (r, _s, sink) = foreign_case(
        "foreign-aao",
        true,
        &[],
        Expect {
            rules: &["OPRES-03", "OPRES-01"],
            reason: &["another origin", "timed out"],
            runner_error: false,
        },
    );
    assert!(
        !sink.seen().is_empty(),
        "the operation URL was never fetched"
    );
    assert_foreign_flagged(&r, "AAO-03", "http://127.0.0.2");
    // The JUnit transcript of the failed operation reads says where they went, and how.
    assert!(
        r.junit
            .contains("another origin than the target: sent without credentials"),
        "{}",
        r.context()
    );
}

#[test]
fn no_foreign_refuses_the_other_origin() {
    for operation in [false, true] {
        let (r, _s, sink) = foreign_case(
            if operation {
                "noforeign-aao"
            } else {
                "noforeign-loc"
            },
            operation,
            &["--no-foreign"],
            Expect {
                rules: &["PUT-04"],
                reason: &["another origin"],
                runner_error: false,
            },
        );
        assert!(
            sink.seen().is_empty(),
            "--no-foreign still fetched the other origin: {:?}",
            sink.seen()
        );
        assert!(r.elapsed < Duration::from_secs(30), "{}", r.context());
    }
}

#[test]
fn huge_json_array_under_the_cap_stays_bounded() {
    case(
        "hugearray",
        Mode::HugeJsonArray,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["RES-01"],
            reason: &["not parsed", "not valid JSON"],
            runner_error: false,
        },
    );
}

#[test]
fn a_list_of_endless_big_pages_stays_bounded() {
    case(
        "bigpages",
        Mode::BigPages,
        SUITE_ALL_PAGES,
        &[],
        Expect {
            rules: &[],
            reason: &["memory bound"],
            runner_error: true,
        },
    );
}

/// Pages of many small values (900 000 zeros, under 2 MB each) cost many times their bytes
/// once parsed: the list is bounded by what it costs in memory, not by its bytes.
#[test]
fn a_list_of_endless_pages_of_small_values_stays_bounded() {
    case(
        "smallpages",
        Mode::ManySmallPages,
        SUITE_ALL_PAGES,
        &[],
        Expect {
            rules: &[],
            reason: &["memory bound"],
            runner_error: true,
        },
    );
}

#[test]
fn many_big_poll_answers_stay_bounded() {
    case(
        "bigpolls",
        Mode::BigPolls,
        SUITE_PUT_POLL,
        &[],
        Expect {
            rules: &["LOC-08"],
            reason: &["timed out"],
            runner_error: false,
        },
    );
}

#[test]
fn create_step_against_a_hanging_target() {
    case(
        "create-hang",
        Mode::HangPoll,
        SUITE_CREATE,
        &[],
        Expect {
            rules: &["LOC-08", "PUT-04"],
            reason: &["timed out"],
            runner_error: false,
        },
    );
}

/// A target whose DELETE answers 202 and whose resource never goes away: the end-of-run
/// cleanup is bounded by the operation deadline, and the resource is reported as left behind.
#[test]
fn undeletable_resource_cleanup_is_bounded() {
    let server = Server::start("127.0.0.1", Mode::UndeletableResource);
    let dir = Scratch::new("undeletable");
    let r = run(
        &dir,
        &target_yaml(&server.base_url(), ""),
        SUITE_CREATE,
        &[],
    );
    let ctx = r.context();
    assert_eq!(r.code, Some(1), "left-behind resources fail the run\n{ctx}");
    assert!(
        r.report()["run"]["left_behind"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "the undeletable resource is not listed as left behind\n{ctx}"
    );
    assert!(r.elapsed < Duration::from_secs(30), "{ctx}");
}

#[test]
fn a_localhost_link_from_a_127_0_0_1_target_is_foreign() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = Server::start_on(
        "127.0.0.1",
        port,
        Mode::ForeignLocation {
            foreign: format!("http://localhost:{port}"),
        },
    );
    let dir = Scratch::new("foreign-localhost");
    let r = run(
        &dir,
        &target_with_credentials(&server.base_url()),
        SUITE_PUT_POLL,
        &[],
    );
    let ctx = r.context();
    // The poll went to "localhost" (the same server): without credentials...
    let via_localhost: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.header("host").is_some_and(|h| h.starts_with("localhost")))
        .collect();
    assert!(
        !via_localhost.is_empty(),
        "the Location was never read\n{ctx}"
    );
    for s in &via_localhost {
        assert!(
            s.header("authorization").is_none() && s.header("x-api-key").is_none(),
            "credentials sent to localhost: {s:?}"
        );
    }
    // ...and the report says so, as for any other origin.
    assert_foreign_flagged(&r, "LOC-09", "http://localhost:");
}

/// A target file with a mistake on a line that holds a secret (a header value listed in
/// `secret_headers`, a long header value, a token in `auth.command`; the mistake a wrong type,
/// a misspelt key beside the secret, or YAML that does not parse) and every command that
/// reads a target file: each says where the mistake is (file and line) and no output shows
/// the secret.
#[test]
fn errors_about_a_target_file_never_show_its_secrets() {
    const KEY: &str = "hk-77aa55cc33ee-inline-secret";
    const SHORT: &str = "q9z";
    const CMD_TOKEN: &str = "cmdtok9f8e7d6c5b4a3";
    let base = format!("http://127.0.0.1:{}", closed_port());
    let head = format!(
        "base_url: {base}\nsubscription: {}\nresource_group: {{name: rg}}\nnamespace: {}\napi_version: \"{}\"\ntypes:\n  things: {{kind: tracked, create_body: {{location: eastus}}}}\nsecret_headers: [x-api-key, x-pin]\n",
        hostile::SUBSCRIPTION,
        hostile::NAMESPACE,
        hostile::API_VERSION
    );
    let cases: Vec<(&str, String, usize)> = vec![
        // (what, the rest of the file, the line of the mistake)
        (
            "a secret header value of the wrong type",
            format!("headers:\n  x-api-key: [{KEY}]\n"),
            10,
        ),
        (
            "a short secret beside a misspelt key",
            format!("headers: {{x-pin: {SHORT}, x-other: {{a: 1}}}}\n"),
            9,
        ),
        (
            "a token in the command beside a misspelt key",
            format!("auth: {{command: \"fetch-token --secret {CMD_TOKEN}\", timout: 5}}\n"),
            9,
        ),
        (
            "a command given as a list",
            format!("auth:\n  command: [fetch-token, --secret, {CMD_TOKEN}]\n"),
            10,
        ),
        (
            "YAML that does not parse on the secret's line",
            format!("headers:\n  x-api-key: \"{KEY}\n  x-pin: {SHORT}\n"),
            10,
        ),
        // The reader finds the flow unclosed at the end of the file.
        (
            "an unclosed flow on the command's line",
            format!("auth: {{command: \"fetch-token {CMD_TOKEN}\"\n"),
            10,
        ),
    ];
    let dir = Scratch::new("target-secrets");
    for (i, (what, rest, line)) in cases.iter().enumerate() {
        let target = dir.write(&format!("t{i}.yaml"), &format!("{head}{rest}"));
        let t = target.display().to_string();
        let reports = dir.str(format!("reports{i}"));
        let commands: Vec<Vec<&str>> = vec![
            vec!["check", "--target", &t],
            vec!["doctor", "--target", &t],
            vec!["plan", "--target", &t],
            vec!["run", "--target", &t, "--report-dir", &reports],
        ];
        for args in commands {
            let out = common::rpconform(&args, common::QUICK_TIMEOUT);
            let shown = format!("{what}: {}", args.join(" "));
            let all = format!("{}{}", out.stdout, out.stderr);
            assert!(!all.contains("panicked"), "{shown}: {}", out.tail(3000));
            assert_eq!(out.code(), 2, "{shown}: {}", out.tail(3000));
            assert!(
                all.contains(&format!("t{i}.yaml:{line}:")),
                "{shown}: the mistake's line is not named\n{}",
                out.tail(3000)
            );
            for secret in [KEY, CMD_TOKEN] {
                assert!(!all.contains(secret), "{shown}: shows {secret}\n{all}");
            }
            // The short secret, where it stands as a value.
            for bad in [
                format!(" {SHORT},"),
                format!(" {SHORT}\n"),
                format!(": {SHORT}"),
            ] {
                assert!(!all.contains(&bad), "{shown}: shows {SHORT}\n{all}");
            }
        }
    }
}

/// The failures of `rule` in a report.json, as text.
fn failures_of(report: &Value, rule: &str) -> Vec<String> {
    common::failures(report)
        .filter(|(v, _)| v["rule"] == rule)
        .map(|(_, f)| f.to_string())
        .collect()
}

/// A resource whose body nests deeper than rpconform reads (a recursive schema's, 300
/// levels): `run` (through `proxy`), `replay` of the run's HAR, and the proxy each fail RES-01
/// on it, saying the body could not be read, with the limit and the exchange.
#[test]
fn a_body_deeper_than_the_reader_allows_is_judged_alike_everywhere() {
    use std::io::BufRead;
    let server = Server::start("127.0.0.1", Mode::DeepResource(300));
    let dir = Scratch::new("deep-everywhere");
    let proxy_target = dir.write("proxy-target.yaml", &target_yaml(&server.base_url(), ""));
    let preports = dir.join("proxy-reports");
    let mut proxy = std::process::Command::new(env!("CARGO_BIN_EXE_rpconform"))
        .args(["proxy", "--target", &proxy_target.display().to_string()])
        .args([
            "--report-dir",
            &preports.display().to_string(),
            "--settle",
            "1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(proxy.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    let har = dir.join("run.har");
    let r = run(
        &dir,
        &target_yaml(&format!("http://{addr}"), ""),
        SUITE_CREATE,
        &["--har", &har.display().to_string()],
    );
    let replayed = dir.join("replay-reports");
    let out = common::rpconform(
        &[
            "replay",
            &har.display().to_string(),
            "--report-dir",
            &replayed.display().to_string(),
        ],
        common::QUICK_TIMEOUT,
    );
    common::signal(&proxy, "TERM");
    let _ = proxy.wait();
    let reports = [
        ("run", r.report().clone()),
        ("replay", common::read_report(&replayed)),
        ("proxy", common::read_report(&preports)),
    ];
    for (front, report) in &reports {
        let failed = failures_of(report, "RES-01");
        let ctx = format!("{front}: {failed:?}\n{}\n{}", r.context(), out.tail(2000));
        assert!(!failed.is_empty(), "RES-01 did not fail: {ctx}");
        assert!(
            failed.iter().all(|f| f.contains("could not be read")
                && f.contains("100 levels")
                && f.contains("exchange #")),
            "{ctx}"
        );
    }
    assert_eq!(r.code, Some(1), "{}", r.context());
}

/// Every read of the operation's status (and of its Location) is cut off mid-body: the
/// operation is never seen to end because no read could be read. That is an error of the test,
/// naming the exchange, and the run fails: never a pass or a warning.
#[test]
fn an_operation_whose_every_read_is_cut_off_is_an_error_of_its_test() {
    for suite in [SUITE_PUT_POLL, SUITE_CREATE] {
        let (r, _s) = case(
            "cut-off",
            Mode::CutOffPolls,
            suite,
            &[],
            Expect {
                rules: &[],
                reason: &["never seen to end"],
                runner_error: true,
            },
        );
        let ctx = r.context();
        let errors: Vec<&Value> = r
            .results()
            .iter()
            .filter(|x| x["status"] == "error")
            .collect();
        assert!(
            errors.iter().any(|x| x.to_string().contains("exchange #")),
            "the error does not name the exchange\n{ctx}"
        );
        assert!(
            r.results()
                .iter()
                .all(|x| !matches!(x["status"].as_str(), Some("passed" | "warned"))),
            "{ctx}"
        );
    }
}
