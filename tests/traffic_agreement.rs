//! The same verdicts three ways: the suites run against the embedded reference RP and judged
//! live (`run --har`), the HAR of that run replayed (`replay --target`), and the suites run
//! again with the proxy in front of the same RP (reverse mode: the target file's base URL is
//! the proxy) give the same outcome for every rule the engine judges on its own, once on a
//! conforming RP and once with fault knobs that break engine-judged rules.
//!
//! Compared per rule: failed if any result failed it, else passed if any passed, else no
//! verdict (absent and not-judged are the same). Rules outside the comparison, and why:
//! - rules only the suites state (ETAG tables, NEST, SKU, PROP, OPS-01..06...): an
//!   expectation needs the scenario that states it, which recorded or proxied traffic lacks;
//! - MON, TASK and RGDEL: judged from records the runner makes with scenario knowledge (which
//!   monitor an operation belongs to, which request is a task write, which deletes form a
//!   resource-group sweep), which traffic alone does not carry.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use common::{Scratch, read_report, results, rpconform};
use rpconform::proxy::{Proxy, ProxyOptions, Timing};
use rpconform_refrp::{Fault, Settings};
use serde_json::Value;

const SCALE: &[&str] = &["--time-scale", "0.01", "--test-threads", "16"];

fn rank(o: &str) -> u8 {
    match o {
        "failed" => 3,
        "passed" => 2,
        _ => 0,
    }
}

/// Per rule: the strongest outcome over the results (failed > passed > no verdict).
fn outcomes<'a>(results: impl Iterator<Item = &'a Value>) -> BTreeMap<String, &'static str> {
    let mut out: BTreeMap<String, &'static str> = BTreeMap::new();
    for r in results {
        for v in r["verdicts"].as_array().into_iter().flatten() {
            let o = match v["outcome"].as_str().unwrap_or("") {
                "failed" => "failed",
                "passed" => "passed",
                _ => "no verdict",
            };
            let rule = v["rule"].as_str().unwrap_or("").to_string();
            let e = out.entry(rule).or_insert("no verdict");
            if rank(o) > rank(e) {
                *e = o;
            }
        }
    }
    out
}

/// The embedded target file at `base`, without ARM's front door played: the three front ends
/// judge the same traffic, as ARM would have passed it (a recording or a proxy sees no
/// emulated front door), so the live run sends it as they see it.
fn without_front_door(base: &str) -> String {
    rpconform::target::embedded_target_yaml(base).replacen(
        "\nauth: none\n",
        "\nfront_door: none\nauth: none\n",
        1,
    )
}

fn compared() -> BTreeSet<String> {
    rpconform::rules::engine_rules()
        .iter()
        // FD rules judge what the run's own front door passed: no recording or proxy has one.
        .filter(|r| {
            !["MON-", "TASK-", "RGDEL-", "FD-"]
                .iter()
                .any(|f| r.starts_with(f))
        })
        .map(|r| r.to_string())
        .collect()
}

fn run(s: &Scratch, target: &Path, dir: &str, har: Option<&str>) {
    let mut args = vec![
        "run".to_string(),
        "suites".into(),
        "--target".into(),
        target.display().to_string(),
        "--report-dir".into(),
        s.str(dir),
        "-q".into(),
    ];
    args.extend(SCALE.iter().map(|a| a.to_string()));
    // Subscription notifications remove or freeze resources behind the traffic's back: only
    // the runner, which sent them knowing the scenario, can tell a DELETE answered 204 there
    // from one of a resource that still exists (recordings and the proxy read DEL-01 alone).
    args.extend(["--skip".to_string(), "subscription-lifecycle::".to_string()]);
    if let Some(h) = har {
        args.extend(["--har".to_string(), s.str(h)]);
    }
    let out = rpconform(&args, Duration::from_secs(600));
    assert!(
        matches!(out.code(), 0 | 1),
        "run failed to run: {}",
        out.tail(3000)
    );
}

/// The three front ends' verdicts compared, rule by rule: the differences, and the live
/// outcomes (which every front end agreed on when there is no difference).
fn three_ways(label: &str, faults: &[Fault]) -> (Vec<String>, BTreeMap<String, &'static str>) {
    let s = Scratch::new(label);
    let rt = tokio::runtime::Runtime::new().unwrap();
    // Operations end after three reads through their own channels, never by the clock: the
    // live run and the proxied one see the same flows however busy the machine is.
    let settings = Settings {
        op_duration: Duration::ZERO,
        complete_after_reads: 3,
        faults: faults.iter().copied().collect(),
        ..Default::default()
    };
    let server = rt.block_on(rpconform_refrp::start(settings, 0)).unwrap();
    let base = server.base_url();
    let direct = s.write("direct.yaml", &without_front_door(&base));
    // 1. Live, with the HAR of the run.
    run(&s, &direct, "live", Some("run.har"));
    // 2. That HAR replayed against the same target file.
    let out = rpconform(
        &[
            "replay",
            &s.str("run.har"),
            "--target",
            &direct.display().to_string(),
            "--report-dir",
            &s.str("replay"),
        ],
        Duration::from_secs(300),
    );
    assert!(matches!(out.code(), 0 | 1), "{}", out.tail(3000));
    // 3. The suites again, through the proxy in reverse mode.
    let target = rpconform::target::load_target(&direct).unwrap();
    let proxy = rt
        .block_on(Proxy::start(ProxyOptions {
            target,
            listen: "127.0.0.1:0".parse().unwrap(),
            rewrite_links: false,
            strict: false,
            body_cap: 16 * 1024 * 1024,
            timing: Timing {
                settle: Duration::from_secs(2),
                idle: Duration::from_secs(600),
            },
            every: None,
        }))
        .unwrap();
    let via = s.write(
        "via-proxy.yaml",
        &without_front_door(&format!("http://{}", proxy.addr)),
    );
    run(&s, &via, "through-proxy", None);
    let proxied: Vec<Value> = proxy
        .stop()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    rt.block_on(server.shutdown());

    let live = read_report(&s.join("live"));
    let replay = read_report(&s.join("replay"));
    assert_eq!(results(&replay).len(), 1, "one result for the one HAR file");
    let (l, r, p) = (
        outcomes(results(&live).iter()),
        outcomes(results(&replay).iter()),
        outcomes(proxied.iter()),
    );
    let mut diffs = Vec::new();
    eprintln!("{label}: | rule | live | replay | proxy |");
    for rule in compared() {
        let get = |m: &BTreeMap<String, &'static str>| *m.get(&rule).unwrap_or(&"no verdict");
        let (a, b, c) = (get(&l), get(&r), get(&p));
        if a != "no verdict" || b != "no verdict" || c != "no verdict" {
            eprintln!("{label}: | {rule} | {a} | {b} | {c} |");
        }
        if !(a == b && b == c) {
            diffs.push(format!("{label}: {rule}: live {a}, replay {b}, proxy {c}"));
        }
    }
    let judged = compared()
        .iter()
        .filter(|x| l.get(*x).is_some_and(|o| *o != "no verdict"))
        .count();
    assert!(
        judged >= 30,
        "{label}: only {judged} engine rules judged live"
    );
    if !diffs.is_empty() {
        eprintln!("kept for inspection: {}", s.path.display());
        std::mem::forget(s);
    }
    (diffs, l)
}

#[test]
fn live_replayed_and_proxied_traffic_get_the_same_verdicts() {
    let (mut diffs, clean) = three_ways("agree-clean", &[]);
    // Agreement alone could hide three front ends equally blind: the clean run fails no
    // compared rule, and the faulted run fails every compared rule its knobs name.
    let failed_clean: Vec<&String> = clean
        .iter()
        .filter(|(_, o)| **o == "failed")
        .map(|(r, _)| r)
        .collect();
    assert!(failed_clean.is_empty(), "clean run failed {failed_clean:?}");
    let faulted = [
        "retry-after-out-of-range",
        "replace-answers-201",
        "delete-missing-404",
        "opresult-200-while-running",
        "terminal-state-in-put-response",
        "no-request-id",
    ]
    .map(|n| Fault::from_name(n).unwrap_or_else(|| panic!("no fault {n}")));
    let (d, broken) = three_ways("agree-faults", &faulted);
    diffs.extend(d);
    let named: BTreeSet<String> = faulted
        .iter()
        .flat_map(|f| f.rules().iter().map(|r| r.to_string()))
        .filter(|r| compared().contains(r))
        .collect();
    assert!(!named.is_empty(), "the knobs name no compared rule");
    for rule in &named {
        assert_eq!(
            broken.get(rule).copied(),
            Some("failed"),
            "{rule}, named by a knob, did not fail live"
        );
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
