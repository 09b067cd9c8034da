//! Secrets never leave in any form a target can reflect them back in.
//!
//! A local echo server (127.0.0.1) sends the credentials it receives back in every way a
//! careless or hostile target might: in a response header *name*, with their case changed,
//! percent-encoded (all characters in upper-case hex, or a few in lower-case), JSON-escaped
//! (`\uXXXX` for every character, or for some, and `\/`), as hex, as base64 (standard and
//! URL-safe, padded or not, of the token alone and of `Bearer <token>`). A secret header
//! shorter than six characters is echoed as a whole header value, a whole JSON string and a
//! whole query value. A `base_url` with a password (`http://user:password@host`) is used for
//! a second run, whose Basic credential is echoed the same ways.
//!
//! Every file of the report directory and both output streams are then decoded (percent, JSON
//! and XML escapes, repeatedly) and searched, case-insensitively, for each secret, and
//! exactly for each base64 form the server sent. A benchmark measures redacting 64 KiB.

use crate::common;
use crate::hostile;
use crate::local;

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};

use common::Scratch;
use hostile::{Run, run_bounded, target_yaml};
use local::{LocalServer, Req, assert_absent, outputs, response};

/// The bearer token: opaque, with the characters encoders treat specially (`/ + = ~ .`).
const TOKEN: &str = "Op4que/T0ken+Value=sig.7Hq9-zW_x2~LmN0pQrS";
/// A secret header value made of header-name characters, so it can be echoed in a name.
const KEY: &str = "k3y.Secret-Header_Value.9f8e7d6c5b4a";
/// A secret header value shorter than six characters.
const SHORT: &str = "k9Z";
const TOKEN_ENV: &str = "RPCONFORM_REDACTION_TOKEN";
const USER: &str = "rpuser";
const PASSWORD: &str = "S3cr3t-Pa55word";

fn pct_all(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

fn pct_some(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '/' | '+' | '=' | '.' => format!("%{:02x}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

fn json_all(s: &str) -> String {
    s.chars().map(|c| format!("\\u{:04x}", c as u32)).collect()
}

/// Every third character `\u`-escaped (upper-case hex), `/` as `\/`.
fn json_some(s: &str) -> String {
    s.chars()
        .enumerate()
        .map(|(i, c)| match c {
            '/' => "\\/".to_string(),
            c if i % 3 == 0 => format!("\\u{:04X}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The forms of `secret` the echo server sends, as JSON members (raw JSON text).
fn members(label: &str, secret: &str) -> Vec<String> {
    vec![
        format!(
            r#""{label}_pct_all":"https://cb.example/x?t={}""#,
            pct_all(secret)
        ),
        format!(r#""{label}_pct_some":"/x?t={}&n=1""#, pct_some(secret)),
        format!(r#""{label}_json_all":"{}""#, json_all(secret)),
        format!(r#""{label}_json_some":"a {} b""#, json_some(secret)),
        format!(r#""{label}_upper":"{}""#, secret.to_ascii_uppercase()),
        format!(r#""{label}_lower":"x{}x""#, secret.to_ascii_lowercase()),
        format!(r#""{label}_hex":"{}""#, hex(secret)),
        format!(r#""{label}_b64":"{}""#, STANDARD.encode(secret)),
        format!(r#""{label}_b64url":"{}""#, URL_SAFE_NO_PAD.encode(secret)),
        format!(
            r#""{label}_b64_bearer":"{}""#,
            STANDARD_NO_PAD.encode(format!("Bearer {secret}"))
        ),
    ]
}

/// Base64 forms the server sends (searched for exactly: case is meaning in base64).
fn base64_forms(secret: &str) -> Vec<String> {
    vec![
        STANDARD.encode(secret),
        URL_SAFE_NO_PAD.encode(secret),
        STANDARD_NO_PAD.encode(format!("Bearer {secret}")),
    ]
}

/// Echo the credentials of a request every way (see the module docs).
fn echo(req: &Req) -> Vec<u8> {
    let auth = req.header("authorization").unwrap_or("").to_string();
    let key = req.header("x-api-key").unwrap_or("").to_string();
    let short = req.header("x-short").unwrap_or("").to_string();
    let mut headers: Vec<(String, String)> = vec![
        ("x-echo-upper".into(), auth.to_ascii_uppercase()),
        ("x-echo-b64".into(), STANDARD.encode(&auth)),
        ("x-echo-short".into(), short.clone()),
    ];
    let mut secret = auth.strip_prefix("Bearer ").unwrap_or("").to_string();
    if let Some(basic) = auth.strip_prefix("Basic ") {
        // The decoded `user:password`, and the password alone.
        let plain =
            String::from_utf8(STANDARD.decode(basic).unwrap_or_default()).unwrap_or_default();
        secret = plain
            .split_once(':')
            .map(|(_, p)| p.to_string())
            .unwrap_or_default();
        headers.push(("x-echo-basic".into(), auth.clone()));
        headers.push(("x-echo-userinfo".into(), plain));
    }
    if !key.is_empty() {
        headers.push((format!("x-echo-{}", key.to_ascii_lowercase()), "1".into()));
        headers.push(("x-echo-key-b64".into(), URL_SAFE_NO_PAD.encode(&key)));
    }
    let mut m = members("token", &secret);
    if !key.is_empty() {
        m.extend(members("key", &key));
    }
    m.push(format!(r#""short":"{short}""#));
    m.push(format!(r#""short_query":"/x?k={short}&n=1""#));
    m.push(format!(r#""short_json_escaped":"{}""#, json_all(&short)));
    m.push(r#""prose":"notk9Zsecret stays""#.to_string());
    m.push(format!(
        r#""other_url":"https://{USER}:{}@elsewhere.example/x""#,
        pct_some(&secret)
    ));
    response(200, &headers, &format!("{{{}}}", m.join(",")))
}

/// Expectations that fail on the echoed values, so failure texts render them too; a replay
/// that sends captured values back.
const SUITE: &str = r#"suite: redaction
scenarios:
  - name: echo
    for_each_type: [any]
    steps:
      - name: get
        request: {method: GET, url: "${target.base_url}/echo"}
        expect:
          - {status: 418, rule: RES-01}
          - {header: x-echo-upper, equals: "nope", rule: HDR-01}
          - {header: x-echo-b64, equals: "nope", rule: HDR-01}
          - {header: x-echo-short, equals: "nope", rule: HDR-01}
          - {pointer: /token_json_all, equals: "nope", rule: RES-01}
          - {pointer: /token_b64_bearer, equals: "nope", rule: RES-01}
          - {pointer: /short, equals: "nope", rule: RES-01}
          - {pointer: /short_query, equals: "nope", rule: RES-01}
          - {pointer: /prose, equals: "nope", rule: RES-01}
      - name: replay
        request:
          method: PUT
          url: "${target.base_url}/echo?again=1"
          body: {"...": "${get.body}", h: "${get.headers.x-echo-b64}"}
        expect:
          - {status: 418, rule: PUT-01}
"#;

fn run(dir: &Scratch, target: &Path, env: &[(&str, &str)]) -> Run {
    run_suite(dir, target, SUITE, env)
}

/// `suite` run against `target`, bounded in time and memory.
fn run_suite(dir: &Scratch, target: &Path, suite: &str, env: &[(&str, &str)]) -> Run {
    let reports = dir.join("reports");
    let suite = dir.write("suite.yaml", suite);
    let args: Vec<String> = [
        "run",
        &suite.display().to_string(),
        "--target",
        &target.display().to_string(),
        "--request-timeout",
        "5",
        "--time-scale",
        "0.01",
        "--report-dir",
        &reports.display().to_string(),
        "--schemas",
        &common::schemas_dir().display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    run_bounded("redaction", &args, env, &reports)
}

fn assert_ran(run: &Run) {
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
}

#[test]
fn echoed_credentials_are_masked_in_every_form() {
    let server = LocalServer::start(echo);
    let dir = Scratch::new("redaction-forms");
    let target = dir.write(
        "target.yaml",
        &target_yaml(
            &server.base_url(),
            &format!(
                "auth: {{bearer_env: {TOKEN_ENV}}}\nsecret_headers: [x-api-key, x-short]\n\
                 headers: {{x-api-key: \"{KEY}\", x-short: \"{SHORT}\"}}\n"
            ),
        ),
    );
    let r = run(&dir, &target, &[(TOKEN_ENV, TOKEN)]);
    assert_ran(&r);
    let seen = server.seen();
    assert!(
        seen.iter().any(
            |s| s.header("authorization") == Some(&format!("Bearer {TOKEN}"))
                && s.header("x-api-key") == Some(KEY)
                && s.header("x-short") == Some(SHORT)
        ),
        "the server never got the credentials: {seen:?}"
    );
    let places = outputs(&dir.join("reports"), &r.stdout, &r.stderr);
    for (what, s) in [("the token", TOKEN), ("the secret header value", KEY)] {
        assert_absent(&places, what, s, true);
        assert_absent(&places, &format!("hex of {what}"), &hex(s), true);
        for f in base64_forms(s) {
            assert_absent(&places, &format!("base64 of {what}"), &f, false);
        }
    }
    // The short secret, wherever it stands as a whole value.
    for form in [
        format!("\"{SHORT}\""),
        format!("={SHORT}&"),
        format!("x-echo-short: {SHORT}"),
        format!("{SHORT}\n"),
    ] {
        assert_absent(&places, "the short secret header value", &form, true);
    }
    // ...but not inside ordinary words.
    let json = std::fs::read_to_string(dir.join("reports/report.json")).unwrap_or_default();
    assert!(
        json.contains("notk9Zsecret stays"),
        "over-masked: prose lost"
    );
    assert!(
        json.matches("[REDACTED]").count() > 20,
        "too few masks: did the echoes reach the report?"
    );
}

#[test]
fn a_password_in_the_base_url_is_masked_everywhere() {
    let server = LocalServer::start(echo);
    let dir = Scratch::new("redaction-userinfo");
    let base = server
        .base_url()
        .replace("http://", &format!("http://{USER}:{PASSWORD}@"));
    let target = dir.write("target.yaml", &target_yaml(&base, "auth: none\n"));
    let r = run(&dir, &target, &[]);
    assert_ran(&r);
    let seen = server.seen();
    assert!(
        seen.iter().any(|s| s
            .header("authorization")
            .is_some_and(|a| a.starts_with("Basic "))),
        "the userinfo was never sent as a Basic credential: {seen:?}"
    );
    let places = outputs(&dir.join("reports"), &r.stdout, &r.stderr);
    assert_absent(&places, "the base_url password", PASSWORD, true);
    assert_absent(&places, "the base_url userinfo", &format!("{USER}:"), true);
    for f in base64_forms(PASSWORD) {
        assert_absent(&places, "base64 of the password", &f, false);
    }
    let basic = STANDARD.encode(format!("{USER}:{PASSWORD}"));
    assert_absent(&places, "the Basic credential", &basic, false);
    assert_absent(
        &places,
        "base64 of the Basic header",
        &STANDARD.encode(format!("Basic {basic}"))[..40],
        false,
    );
    let report = r.report();
    let shown = report.to_string();
    assert!(
        shown.contains("127.0.0.1"),
        "the base URL (without its userinfo) is still shown"
    );
}

/// A realistic ARM list page of about `size` bytes: ids, nextLink with percent-encoding,
/// a few JSON escapes, a token echoed twice.
fn arm_page(size: usize, token: &str) -> String {
    let mut items = Vec::new();
    let mut len = 0;
    let mut i = 0;
    while len < size {
        let item = format!(
            r#"{{"id":"\/subscriptions\/00000000-0000-0000-0000-000000000000\/resourceGroups\/rg\/providers\/Microsoft.Contoso\/widgets\/w{i}","name":"w{i}","type":"Microsoft.Contoso/widgets","location":"eastus","tags":{{"env":"ci","note":"caf\u00e9 50%"}},"properties":{{"provisioningState":"Succeeded","size":{i},"endpoint":"https://w{i}.contoso.example/api?x=1&y=%2Fz"}}}}"#
        );
        len += item.len() + 1;
        items.push(item);
        i += 1;
    }
    items[3] = items[3].replace("\"ci\"", &format!("\"{token}\""));
    let n = items.len();
    items[n - 2] = items[n - 2].replace("\"ci\"", &format!("\"{}\"", json_some(token)));
    format!(
        r#"{{"value":[{}],"nextLink":"https://management.example/x?%24skiptoken=abc%3D%3D"}}"#,
        items.join(",")
    )
}

#[test]
fn redacting_a_64_kib_body_is_cheap() {
    use rpconform::http::Redactor;
    const SIZE: usize = 64 * 1024;
    let r = Redactor::new(&["x-api-key".into()]);
    let jwt = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJiZW5jaCIsImF1ZCI6Imh0dHBzOi8vbWFuYWdlbWVudC5henVyZS5jb20vIn0.c2lnbmF0dXJlLW9mLXRoZS1iZW5jaC10b2tlbg";
    for s in [jwt, TOKEN, KEY, SHORT] {
        r.register(s);
    }
    let page = arm_page(SIZE, TOKEN);
    let dense: String = "\\u0041%41&#65;x".repeat(SIZE / 15);
    let plain: String = "lorem ipsum dolor sit amet ".repeat(SIZE / 27);
    let mut figures = Vec::new();
    for (label, text) in [
        ("ARM list page", &page),
        ("escape-dense text", &dense),
        ("plain text", &plain),
    ] {
        let out = r.text(text);
        if label == "ARM list page" {
            assert_eq!(out.matches("[REDACTED]").count(), 2, "both echoes masked");
            assert!(!out.contains(TOKEN));
        }
        // The median of 41 timed calls: the machine may be shared.
        let mut times: Vec<Duration> = (0..41)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(r.text(std::hint::black_box(text)));
                started.elapsed()
            })
            .collect();
        times.sort();
        let (per, best) = (times[times.len() / 2], times[0]);
        figures.push(format!(
            "{label} ({} KiB): median {:.3} ms, best {:.3} ms",
            text.len() / 1024,
            per.as_secs_f64() * 1e3,
            best.as_secs_f64() * 1e3
        ));
        // Generous for an unoptimised build on a shared machine; an optimised one is ~10x
        // faster.
        assert!(
            per < Duration::from_millis(150),
            "redacting {label} took {per:?}"
        );
    }
    eprintln!("redaction cost per call: {}", figures.join("; "));
}

/// A target that hands out links holding the token (as a SAS-signed URL holds its signature).
fn links(req: &Req, base: &str) -> Vec<u8> {
    if req.target.starts_with("/links") {
        let link = format!("{base}/w{TOKEN}?sig={TOKEN}");
        response(
            200,
            &[("x-link".into(), link.clone())],
            &format!(r#"{{"next":"{link}&n=1"}}"#),
        )
    } else {
        response(200, &[], "{}")
    }
}

const CAPTURE_SUITE: &str = r#"suite: redaction
scenarios:
  - name: captured
    for_each_type: [any]
    steps:
      - name: get
        request: {method: GET, url: "${target.base_url}/links"}
        capture: {link: {header: x-link}, next: {pointer: /next}}
      - request: {method: GET, url: "${link}"}
        expect: [{status: 418, rule: RES-01}]
      - request: {method: GET, url: "${next}"}
      - request: {method: GET, url: "${get.headers.x-link}&again=1"}
"#;

#[test]
fn captured_values_are_sent_as_captured_and_reported_masked() {
    let base = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let b = base.clone();
    let server = LocalServer::start(move |r| links(r, b.get().map_or("", String::as_str)));
    base.set(server.base_url()).unwrap();
    let dir = Scratch::new("redaction-captured");
    let target = dir.write(
        "target.yaml",
        &target_yaml(
            &server.base_url(),
            &format!("auth: {{bearer_env: {TOKEN_ENV}}}\n"),
        ),
    );
    let reports = dir.join("reports");
    let r = run_suite(&dir, &target, CAPTURE_SUITE, &[(TOKEN_ENV, TOKEN)]);
    assert_ran(&r);
    // On the wire: each captured link exactly as the target wrote it.
    let sent: Vec<String> = server.seen().iter().map(|s| s.target.clone()).collect();
    for want in [
        format!("/w{TOKEN}?sig={TOKEN}"),
        format!("/w{TOKEN}?sig={TOKEN}&n=1"),
        format!("/w{TOKEN}?sig={TOKEN}&again=1"),
    ] {
        // (with the target's api-version appended, as on any URL of its origin)
        assert!(
            sent.iter()
                .any(|s| s.starts_with(&format!("{want}&api-version="))),
            "not sent as captured: {want}\nsent: {sent:?}\n{}",
            r.context()
        );
    }
    assert!(!sent.iter().any(|s| s.contains("REDACTED")), "{sent:?}");
    // In every output: masked (the failing expectation renders the link too).
    let places = outputs(&reports, &r.stdout, &r.stderr);
    assert_absent(&places, "the token", TOKEN, true);
}
