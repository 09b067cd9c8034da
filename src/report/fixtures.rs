//! Hand-built results for the renderers' unit tests (no server).

use crate::http::{Exchange, Response, Role, Surface};
use crate::report::{FindingOut, RunInfo, ScenarioResult, Status, Verdict};

pub fn info() -> RunInfo {
    RunInfo {
        rpconform_version: "0.1.0".into(),
        run_id: "r1".into(),
        target: "embedded".into(),
        base_url: "http://127.0.0.1:1".into(),
        time_scale: 1.0,
        started_at: "2026-01-01T00:00:00Z".into(),
        duration_ms: 1500,
        profiles: vec!["arm".into()],
        transcripts: "failures".into(),
        suite_set: crate::suiteset::ID.into(),
        ..Default::default()
    }
}

pub fn exchange(seq: u64, method: &str, url: &str, status: u16) -> Exchange {
    Exchange {
        seq,
        throttled: Vec::new(),
        throttled_times: 0,
        retried: Vec::new(),
        front_door: None,
        role: Role::Step,
        surface: Surface::Arm,
        method: method.into(),
        url: url.into(),
        request_headers: vec![("x-ms-client-request-id".into(), "c-1".into())],
        request_body: (method == "PUT").then(|| "{\"location\":\"eastus\"}".into()),
        response: Some(Response {
            status,
            headers: vec![("location".into(), "/subscriptions/s/op/1".into())],
            body: "{\"id\":\"x\"}".into(),
            body_bytes: 10,
            json: None,
            json_error: None,
            set_cookies: Vec::new(),
            sent: None,
        }),
        error: None,
        started_at: "2026-01-01T00:00:00Z".into(),
        elapsed_ms: 3,
        foreign: false,
    }
}

pub fn pass(rule: &str, level: &str, n: u32) -> Verdict {
    Verdict {
        rule: rule.into(),
        level: level.into(),
        outcome: "passed".into(),
        passed: n,
        failed: 0,
        failures: Vec::new(),
        exempt_reason: None,
        not_judged: None,
    }
}

pub fn fail(rule: &str, level: &str, exchange: u64, at: Option<&str>) -> Verdict {
    Verdict {
        rule: rule.into(),
        level: level.into(),
        outcome: "failed".into(),
        passed: 1,
        failed: 2,
        failures: vec![FindingOut {
            expected: format!("what {rule} wants"),
            seen: "something else".into(),
            exchange: Some(exchange),
            count: 2,
            last_exchange: Some(exchange + 1),
            at: at.map(str::to_string),
            step: Some("put".into()),
            request: None,
        }],
        exempt_reason: None,
        not_judged: None,
    }
}

pub fn not_judged(rule: &str, why: &str) -> Verdict {
    Verdict {
        rule: rule.into(),
        level: "MUST".into(),
        outcome: "not-judged".into(),
        passed: 0,
        failed: 0,
        failures: Vec::new(),
        exempt_reason: None,
        not_judged: Some(why.into()),
    }
}

/// A test of suite `suite` named `suite::name`, at line `line`.
pub fn result(suite: &str, name: &str, line: usize, status: Status) -> ScenarioResult {
    ScenarioResult {
        name: format!("{suite}::{name}"),
        suite: suite.into(),
        suite_file: format!("suites/{suite}.yaml"),
        scenario: name.into(),
        type_name: Some("widgets".into()),
        row: None,
        at: format!("suites/{suite}.yaml:{line}:5"),
        status,
        duration_ms: 40,
        cleanup_ms: None,
        verdicts: Vec::new(),
        polls: Vec::new(),
        notes: Vec::new(),
        exchanges: Vec::new(),
        stated: Vec::new(),
        transcript: None,
    }
}

/// A run where LOC-02 (ambient) fails in two tests that state other rules, ETAG-07 (stated)
/// fails in one, PUT-03 is not judged (timing), one test is not applicable, one passes.
pub fn faulty_run() -> Vec<ScenarioResult> {
    let url = "http://127.0.0.1:1/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w1?api-version=2024-05-01";
    // It fails on LOC-02, which it does not state (an ambient rule): a test fails on every
    // rule its exchanges broke.
    let mut a = result("async-put", "create", 3, Status::Failed);
    a.stated = vec!["PUT-04".into()];
    a.verdicts = vec![
        fail("LOC-02", "MUST", 1, None),
        pass("PUT-04", "MUST", 1),
        not_judged(
            "PUT-03",
            "timing: the operation ended within 812 ms, before a read",
        ),
        pass("HDR-01", "MUST", 4),
    ];
    a.exchanges = vec![exchange(1, "PUT", url, 202), exchange(2, "GET", url, 200)];
    let mut b = result("etag", "if-match", 10, Status::Failed);
    b.stated = vec!["ETAG-07".into()];
    b.verdicts = vec![
        fail("LOC-02", "MUST", 11, None),
        fail("ETAG-07", "MUST", 12, Some("suites/etag.yaml:14:11")),
        not_judged(
            "PUT-03",
            "timing: the operation ended within 1327 ms, before a read",
        ),
        fail("HDR-02", "SHOULD", 12, None),
    ];
    b.exchanges = vec![exchange(11, "PUT", url, 202), exchange(12, "PUT", url, 200)];
    let mut c = result(
        "etag",
        "skus",
        30,
        Status::Skipped("not applicable: no type in the target has: skus".into()),
    );
    c.stated = vec!["SKU-01".into()];
    let mut d = result("headers", "ids", 5, Status::Passed);
    d.stated = vec!["HDR-01".into()];
    d.verdicts = vec![pass("HDR-01", "MUST", 2)];
    d.exchanges = vec![exchange(20, "GET", url, 200), exchange(21, "GET", url, 404)];
    vec![a, b, c, d]
}
