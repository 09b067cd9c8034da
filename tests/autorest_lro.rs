//! The autorest test server (`@microsoft.azure/autorest.testserver`, npm): `rpconform probe`
//! on every `/lro` route of `tests/third_party/autorest-lro-routes.json` must reach the
//! judgement the route table gives (FINDINGS.md §3, §5):
//!
//! - a conforming route has no MUST failure outside the failures the mock shows everywhere;
//! - a broken route fails every MUST rule its `fails` names;
//! - no MUST rule fails that the table does not name for the route, among its ambient
//!   findings, or among the rules its extra reads may break (`fails_if_checked`).
//!
//! Failures the mock shows wherever it answers what they read are reported but never mask a
//! flow verdict, and each is allowed on a route only when all its failures there are that
//! deviation: HDR-01 (no `x-ms-request-id`, asserted seen on every route), RES-01/RES-02
//! (bodies say `"id": "100"` without `type`; a Location that ends with such a body fails
//! LOC-06's "id is the resource's id" clause for the same reason). HDR-03 (no echo) is a
//! SHOULD, reported only.
//!
//! The server needs the `scenario` cookie kept within each flow, and the four `customheader`
//! routes a fixed `x-ms-client-request-id` on every request: their target file pins it with
//! `headers:`. `patch/200/succeeded/ignoreheaders` hands out `http://localhost/...`: the secret
//! header the target declares must never go there.

mod common;
#[path = "third_party/server.rs"]
mod server;

use std::collections::BTreeSet;
use std::sync::Mutex;

use common::{
    RUN_TIMEOUT, Scratch, failures, is_failed, read_report, rpconform, rules_where, verdicts,
};
use serde_json::Value;

/// A rule, the deviation of the mock that fails it, and whether a failure's words show it.
type Deviation = (&'static str, &'static str, fn(&str) -> bool);

/// Failures the mock shows wherever it answers what they read (see the module comment): each
/// is allowed on a route only when every one of its failures there is that deviation, read
/// from the failure's own words, never as a blanket pass.
const MOCK_DEVIATIONS: &[Deviation] = &[
    // No x-ms-request-id on any answer.
    ("HDR-01", "no x-ms-request-id", |seen| {
        seen.contains("no x-ms-request-id")
    }),
    // Resource bodies carry no `type`.
    ("RES-01", "body /type absent", |seen| {
        seen.contains("/type present") && seen.contains("absent")
    }),
    // Resource bodies say `"id": "100"`.
    ("RES-02", "id \"100\"", |seen| seen.contains("\"100\"")),
];

/// How many probes run at once (each flow has its own cookie jar, so they do not interfere).
const PARALLEL: usize = 6;

fn target(base: &str, pinned: Option<&Value>) -> String {
    let mut t = format!(
        "base_url: {base}\nfront_door: none\nauth: none\nsubscription: 00000000-0000-0000-0000-000000000000\n\
         resource_group: {{name: autorest}}\narm_paths: [/lro]\ndeadline: 20\n\
         secret_headers: [x-rpconform-secret]\nheaders:\n  x-rpconform-secret: \"do-not-leak-7f3a\"\n"
    );
    if let Some(Value::Object(h)) = pinned {
        for (k, v) in h {
            t.push_str(&format!("  {k}: \"{}\"\n", v.as_str().unwrap_or_default()));
        }
    }
    t
}

struct Judged {
    line: String,
    ok: bool,
    hdr01: bool,
    conforming: bool,
}

fn set(v: &Value) -> BTreeSet<String> {
    match v {
        Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        Value::Object(o) => o.keys().cloned().collect(),
        _ => BTreeSet::new(),
    }
}

fn judge(i: usize, route: &Value, report: &Value) -> Judged {
    // A probe writes one result: the report's verdicts are the route's.
    let res = &report["results"][0];
    let arm = &route["arm"];
    let failed_at = |level: &str| rules_where(report, |v| is_failed(v) && v["level"] == level);
    let must = failed_at("MUST");
    let should = failed_at("SHOULD");
    let named = set(&arm["fails"]);
    let mut allowed: BTreeSet<String> = named.clone();
    allowed.extend(set(&arm["fails_should"]));
    allowed.extend(set(&arm["fails_if_checked"]));
    allowed.extend(set(&arm["ambient"]));
    for (rule, _, shows) in MOCK_DEVIATIONS {
        let only_the_deviation =
            failures(report)
                .filter(|(v, _)| v["rule"] == *rule)
                .all(|(_, f)| {
                    let text = format!("{} {}", f["expected"], f["seen"]);
                    shows(&text)
                });
        if only_the_deviation {
            allowed.insert(rule.to_string());
        }
    }
    // LOC-06 failing only on a success answer (200/201 whose body id is "100") is the RES-02
    // deviation the mock shows everywhere.
    let loc06_id_only = verdicts(report).any(|v| {
        v["rule"] == "LOC-06"
            && is_failed(v)
            && v["failures"].as_array().is_some_and(|f| {
                f.iter().all(|f| {
                    f["seen"]
                        .as_str()
                        .is_some_and(|s| s.starts_with("200") || s.starts_with("201"))
                })
            })
    });
    if loc06_id_only {
        allowed.insert("LOC-06".into());
    }
    let missing: Vec<&String> = named
        .iter()
        .filter(|r| !must.contains(*r) && !should.contains(*r))
        .collect();
    let extra: Vec<&String> = must.iter().filter(|r| !allowed.contains(*r)).collect();
    let conforming = arm["verdict"] == "conforming";
    let ok = missing.is_empty() && extra.is_empty();
    let outcome = res["polls"][0]["outcome"]
        .as_str()
        .unwrap_or("-")
        .to_string();
    let line = format!(
        "{:>2} {} {:6} {:58} {:10} named {:?} missing {:?} unexpected MUST {:?} (SHOULD failed: {:?}; operation: {outcome})",
        i + 1,
        if ok { "ok " } else { "BAD" },
        route["method"].as_str().unwrap_or(""),
        route["path"].as_str().unwrap_or(""),
        arm["verdict"].as_str().unwrap_or(""),
        named,
        missing,
        extra,
        should,
    );
    Judged {
        line,
        ok,
        hdr01: must.contains("HDR-01"),
        conforming,
    }
}

fn every_lro_route_is_judged_as_the_route_table_says() {
    let Some(srv) = server::Server::start("start_autorest.sh", "autorest test server") else {
        return;
    };
    let table: Value = serde_json::from_str(
        &std::fs::read_to_string(server::script("autorest-lro-routes.json"))
            .expect("autorest-lro-routes.json"),
    )
    .expect("route table JSON");
    let routes: Vec<Value> = table["routes"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        routes.len(),
        81,
        "the route table lists the 81 /lro operations"
    );
    let s = Scratch::new("autorest");
    let plain = s.write("autorest.yaml", &target(&srv.base, None));
    let body = s.write("body.json", r#"{"location": "westus", "properties": {}}"#);
    let queue = Mutex::new((0..routes.len()).collect::<Vec<_>>());
    let results: Mutex<Vec<(usize, Judged)>> = Mutex::new(Vec::new());
    let leaks: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL {
            scope.spawn(|| {
                loop {
                    let Some(i) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let route = &routes[i];
                    let pinned = route["flags"].get("required_request_headers");
                    let target_file = match pinned {
                        Some(p) => {
                            s.write(&format!("pinned-{i}.yaml"), &target(&srv.base, Some(p)))
                        }
                        None => plain.clone(),
                    };
                    let method = route["method"].as_str().unwrap_or("GET");
                    let dir = s.str(format!("r{i}"));
                    let url = format!("{}{}", srv.base, route["path"].as_str().unwrap_or(""));
                    let mut args = vec![
                        "probe".to_string(),
                        method.to_string(),
                        url,
                        "--target".into(),
                        target_file.display().to_string(),
                        "--time-scale".into(),
                        "0.01".into(),
                        "--report-dir".into(),
                        dir.clone(),
                    ];
                    if matches!(method, "PUT" | "PATCH" | "POST") {
                        args.push("--body".into());
                        args.push(body.display().to_string());
                    }
                    let out = rpconform(&args, RUN_TIMEOUT);
                    assert!(
                        matches!(out.code(), 0 | 1),
                        "route {}: probe did not run\n{}",
                        i + 1,
                        out.tail(3000)
                    );
                    let report = read_report(std::path::Path::new(&dir));
                    // The secret header goes to the target's origin only.
                    for x in report["results"][0]["exchanges"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        let off_origin = !x["url"].as_str().unwrap_or("").starts_with(&srv.base);
                        let carries =
                            x["request_headers"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .any(|h| {
                                    h[0].as_str().is_some_and(|k| {
                                        k.eq_ignore_ascii_case("x-rpconform-secret")
                                    })
                                });
                        if off_origin && carries {
                            leaks
                                .lock()
                                .unwrap()
                                .push(format!("route {}: {}", i + 1, x["url"]));
                        }
                    }
                    let text = serde_json::to_string(&report).unwrap_or_default();
                    if text.contains("do-not-leak-7f3a") || out.stdout.contains("do-not-leak-7f3a")
                    {
                        leaks
                            .lock()
                            .unwrap()
                            .push(format!("route {}: the secret value is in a report", i + 1));
                    }
                    let j = judge(i, route, &report);
                    results.lock().unwrap().push((i, j));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let lines: Vec<&str> = results.iter().map(|(_, j)| j.line.as_str()).collect();
    let bad: Vec<&str> = results
        .iter()
        .filter(|(_, j)| !j.ok)
        .map(|(_, j)| j.line.as_str())
        .collect();
    let conforming = results.iter().filter(|(_, j)| j.conforming).count();
    let conforming_ok = results.iter().filter(|(_, j)| j.conforming && j.ok).count();
    let broken_ok = results
        .iter()
        .filter(|(_, j)| !j.conforming && j.ok)
        .count();
    let no_hdr01: Vec<usize> = results
        .iter()
        .filter(|(_, j)| !j.hdr01)
        .map(|(i, _)| i + 1)
        .collect();
    eprintln!(
        "autorest /lro: {} routes; conforming {conforming_ok}/{conforming} judged conforming; broken {broken_ok}/{} fail exactly within the table\n{}",
        results.len(),
        results.len() - conforming,
        lines.join("\n")
    );
    let leaks = leaks.into_inner().unwrap();
    assert!(
        leaks.is_empty(),
        "credentials left the target's origin: {leaks:#?}"
    );
    assert!(
        no_hdr01.is_empty(),
        "HDR-01 (no x-ms-request-id) must be reported on every route; not on {no_hdr01:?}"
    );
    assert!(
        bad.is_empty(),
        "{} routes judged otherwise than the table:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Tests that need an installed tool: a missing one is *ignored*, with why (a failure under CI).
fn main() -> std::process::ExitCode {
    common::tool_tests(&[(
        "every_lro_route_is_judged_as_the_route_table_says",
        every_lro_route_is_judged_as_the_route_table_says,
    )])
}
