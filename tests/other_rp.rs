//! The suites are not tied to the reference RP's names: they run unchanged against a provider
//! with other resource types, body fields and api-version.
//!
//! A rewriting reverse proxy (tests/other_rp/proxy.rs) in front of an in-process reference RP
//! makes it look like `Microsoft.Fabrikam`: `engines` / `pistons` / `valves` / `mounts`, the
//! action `reboot`, api-version `2023-07-01`, body fields `capacity` and `engineId`, a data plane
//! under `/engineplane` and task resources under `/v1/databases`. Its target file
//! (tests/other_rp/fabrikam.yaml) is written by hand for that provider, with its own
//! subscription, resource group, location (`westeurope`) and bodies.
//!
//! - A clean run of every suite through the proxy exits 0 with no failure and no error. Its
//!   tests carry the Fabrikam names and include every test of the embedded target (renamed);
//!   it judges every rule that a run against the embedded RP, beside it, judges; and no
//!   exchange the runner recorded names the provider behind the proxy. The proxy swaps names
//!   rather than only translating them, so a suite or runner that used the reference RP's
//!   names would fail here, not pass unnoticed.
//! - With a fault on the RP behind the proxy (`ignore-if-match`, `no-request-id`; one strict run
//!   each), exactly the rules the fault names (`Fault::rules()`) fail.
//!
//! Everything listens on 127.0.0.1; every run of the binary is killed after a generous bound.
//! The three runs of the suites take about 30 s side by side.

use crate::common;
#[path = "other_rp/proxy.rs"]
mod proxy;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use common::{
    Scratch, count, excerpt, failed_rules, judged_rules, read_report, result_names, results,
    rpconform,
};
use rpconform_refrp::{Fault, RunningServer, Settings};
use serde_json::Value;

/// The hand-written target file; `{BASE_URL}` is the proxy.
const TARGET: &str = include_str!("other_rp/fabrikam.yaml");

/// A whole run of the suites that takes longer is killed (and the test fails).
const RUN_BOUND: Duration = Duration::from_secs(240);
/// Bound for commands that send nothing.
const QUICK_BOUND: Duration = Duration::from_secs(60);

/// How the embedded target's names read at Fabrikam, for comparing test lists.
const RENAMES: &[(&str, &str)] = &[
    ("widget-restart", "engine-reboot"),
    ("widget-", "engine-"),
    ("::widgets", "::engines"),
    ("::gadgets", "::pistons"),
    ("::sprockets", "::valves"),
    ("::links", "::mounts"),
];

/// Types the embedded target declares for the resource shapes (fixed names, scopes, a second
/// namespace) that Fabrikam does not: their tests are left out of the comparison.
const SHAPE_TYPES: &[&str] = &[
    "::annotations",
    "::configurations",
    "::gizmos",
    "::regionalWidgets",
    "::subscriptionWidgets",
    "::tenantWidgets",
];

fn shape_type_test(name: &str) -> bool {
    SHAPE_TYPES
        .iter()
        .any(|t| name.ends_with(t) || name.contains(&format!("{t}::")))
}

/// Upstream names that no exchange of a run through the proxy may show.
const UPSTREAM_NAMES: &[&str] = &[
    "microsoft.contoso",
    "/widgets",
    "/gadgets",
    "/sprockets",
    "/links",
    "/restart",
    "/dataplane",
    "/v1/subscriptions",
    "2024-05-01",
    "widgetid",
    "\"size\":",
];

/// The reference RP (with `faults`) behind the Fabrikam proxy, on a runtime of their own.
struct Rig {
    proxy: proxy::Proxy,
    upstream: RunningServer,
    // Dropped last: the servers above stop first.
    rt: tokio::runtime::Runtime,
}

impl Rig {
    fn start(faults: &[Fault]) -> Rig {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let settings = Settings {
            op_duration: Duration::from_millis(600),
            // Operations stay open until read three times (as in the matrices), so a check
            // that needs a running operation never depends on machine load.
            complete_after_reads: 3,
            faults: faults.iter().copied().collect(),
            ..Default::default()
        };
        let upstream = rt
            .block_on(rpconform_refrp::start(settings, 0))
            .expect("start the reference RP");
        let proxy = rt
            .block_on(proxy::start(&proxy::FABRIKAM, &upstream.base_url()))
            .expect("start the proxy");
        Rig {
            proxy,
            upstream,
            rt,
        }
    }

    /// Write the Fabrikam target file, pointing at the proxy, as `dir/name`.
    fn target_file(&self, dir: &Scratch, name: &str) -> String {
        let text = TARGET.replace("{BASE_URL}", &self.proxy.base_url());
        dir.write(name, &text).display().to_string()
    }

    fn stop(self) {
        let Rig {
            proxy,
            upstream,
            rt,
        } = self;
        drop(proxy);
        rt.block_on(upstream.shutdown());
    }
}

/// Run the suites against `target`; returns the process output and the report.json.
fn run_suites(target: &str, report_dir: &Path, extra: &[&str]) -> (common::Output, Option<Value>) {
    let report_dir_s = report_dir.display().to_string();
    let mut args = vec![
        "run",
        "suites",
        "--target",
        target,
        "--time-scale",
        "0.01",
        "-q",
        "--report-dir",
        &report_dir_s,
    ];
    args.extend_from_slice(extra);
    let out = rpconform(&args, RUN_BOUND);
    let report = report_dir
        .join("report.json")
        .exists()
        .then(|| read_report(report_dir));
    (out, report)
}

/// `--list` of a target: one test name a line.
fn list(target: &str) -> BTreeSet<String> {
    let out = rpconform(
        &["run", "suites", "--target", target, "--list"],
        QUICK_BOUND,
    );
    assert_eq!(out.code(), 0, "--list failed\n{}", out.tail(3000));
    out.stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("::"))
        .map(|l| l.split(": ").next().unwrap_or(l).to_string())
        .collect()
}

/// Every text of an exchange that names what it addresses: URL, headers, bodies.
fn exchange_texts(ex: &Value) -> Vec<String> {
    let mut out = vec![ex["url"].as_str().unwrap_or_default().to_string()];
    let pairs = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                format!(
                    "{}: {}",
                    p[0].as_str().unwrap_or(""),
                    p[1].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    out.extend(pairs(&ex["request_headers"]));
    out.extend(ex["request_body"].as_str().map(str::to_string));
    let resp = &ex["response"];
    out.extend(pairs(&resp["headers"]));
    out.extend(resp["body"].as_str().map(str::to_string));
    out
}

#[test]
fn suites_pass_unchanged_against_a_differently_named_rp() {
    let dir = Scratch::new("other-rp");
    let rig = Rig::start(&[]);
    let target = rig.target_file(&dir, "fabrikam.yaml");

    let check = rpconform(&["check", "suites", "--target", &target], QUICK_BOUND);
    assert_eq!(check.code(), 0, "check failed\n{}", check.tail(3000));

    // Every test of the embedded target, under Fabrikam's names; the only extra ones are for
    // what Fabrikam declares beyond it (invalid bodies of pistons).
    let ours = list(&target);
    let embedded = list("embedded");
    // The spec suite needs a spec: the embedded RP has one, Fabrikam's rig names none. The
    // front-door suite is ARM's part, played only in front of an RP's own endpoint: Fabrikam's
    // rewriting proxy stands where ARM would (`front_door: none`).
    let theirs: BTreeSet<String> = embedded
        .iter()
        .filter(|n| {
            !shape_type_test(n) && !n.starts_with("spec::") && !n.starts_with("front-door::")
        })
        .cloned()
        .map(|n| RENAMES.iter().fold(n, |n, (a, b)| n.replace(a, b)))
        .collect();
    let missing: Vec<&String> = theirs.difference(&ours).collect();
    assert!(
        missing.is_empty(),
        "tests of the embedded target with no Fabrikam counterpart: {missing:?}"
    );
    let extra: Vec<&String> = ours
        .difference(&theirs)
        .filter(|n| !n.starts_with("operations-lifecycle::static-validation::pistons::"))
        // A shape scenario no Fabrikam type matches is one not-applicable test without a type.
        .filter(|n| !embedded.iter().any(|e| e.starts_with(&format!("{n}::"))))
        .collect();
    assert!(extra.is_empty(), "unexpected extra tests: {extra:?}");

    // The run through the proxy, and beside it the same run against the embedded RP (same
    // operation duration) as the yardstick of which rules the suites can judge.
    let report_dir = dir.join("reports");
    let embedded_dir = dir.join("embedded");
    let ((out, report), (emb_out, emb_report)) = std::thread::scope(|s| {
        // Held open as the proxied RP is, so the yardstick judges what it can on any machine.
        let mut args = vec!["--op-duration", "600", "--hold-reads", "3"];
        for t in SHAPE_TYPES {
            args.extend(["--skip", t]);
        }
        let embedded = s.spawn(move || run_suites("embedded", &embedded_dir, &args));
        let ours = run_suites(&target, &report_dir, &[]);
        (ours, embedded.join().expect("embedded run panicked"))
    });
    let report = report.unwrap_or_else(|| panic!("no report.json\n{}", out.tail(4000)));
    let digest = excerpt(&report);
    assert_eq!(
        out.code(),
        0,
        "the run must exit 0\n{digest}\n{}",
        out.tail(3000)
    );
    assert_eq!(count(&report, "failed"), 0, "failures\n{digest}");
    assert_eq!(count(&report, "errors"), 0, "errors\n{digest}");
    assert!(
        report["run"]["left_behind"]
            .as_array()
            .is_some_and(Vec::is_empty),
        "the run left resources behind: {}",
        report["run"]["left_behind"]
    );

    // Every rule the suites judge against the reference RP itself, they judge through the proxy.
    let emb_report = emb_report
        .unwrap_or_else(|| panic!("no report.json of the embedded run\n{}", emb_out.tail(4000)));
    // The SPEC rules judge an RP against its own spec: the embedded RP has one, Fabrikam's
    // target names none. The FD rules judge what the played front door passed: Fabrikam's
    // proxy stands where ARM would (`front_door: none`).
    let unjudged: Vec<String> = judged_rules(&emb_report)
        .difference(&judged_rules(&report))
        .filter(|r| !r.starts_with("SPEC-") && !r.starts_with("FD-"))
        .cloned()
        .collect();
    assert!(
        unjudged.is_empty(),
        "rules judged against the embedded RP but never through the proxy: {unjudged:?}\n{digest}"
    );

    // Test names carry the Fabrikam names, and every type, monitor and task test ran.
    let names = result_names(&report);
    assert_eq!(names.iter().cloned().collect::<BTreeSet<_>>(), ours);
    for want in [
        "etag::put-table::engines::if-match-stale-existing",
        "etag::put-table::valves::if-none-match-star-existing",
        "location-202::action-flow::engines::action-1",
        "headers-and-errors::skus-none-valid::pistons",
        "resource-group-delete::refused-then-accepted::mounts",
        "propagation::parent-update::engines::patch",
        "lro-patterns::succeeds::engine-reboot",
        "tasks::lifecycle",
    ] {
        let r = results(&report)
            .iter()
            .find(|r| r["name"] == want)
            .unwrap_or_else(|| panic!("no test {want} among\n{}", names.join("\n")));
        assert_eq!(r["status"], "passed", "{want}: {r}");
    }
    for ty in ["engines", "pistons", "valves", "mounts"] {
        let passed = results(&report)
            .iter()
            .filter(|r| r["type_name"] == ty && r["status"] == "passed")
            .count();
        assert!(passed >= 5, "only {passed} tests of {ty} passed\n{digest}");
    }
    let upstreamish: Vec<&String> = names
        .iter()
        .filter(|n| {
            let n = n.to_ascii_lowercase();
            ["widget", "gadget", "sprocket", "::links", "contoso"]
                .iter()
                .any(|w| n.contains(w))
        })
        .collect();
    assert!(
        upstreamish.is_empty(),
        "upstream names in test names: {upstreamish:?}"
    );

    // Nothing the runner sent or saw names the provider behind the proxy.
    let mut leaks = Vec::new();
    let (mut exchanges, mut in_westeurope) = (0, 0);
    for r in results(&report) {
        for ex in r["exchanges"].as_array().into_iter().flatten() {
            exchanges += 1;
            if ex["url"]
                .as_str()
                .is_some_and(|u| u.contains("/locations/westeurope/operation"))
            {
                in_westeurope += 1;
            }
            for text in exchange_texts(ex) {
                let lower = text.to_ascii_lowercase();
                if let Some(w) = UPSTREAM_NAMES.iter().find(|w| lower.contains(*w)) {
                    leaks.push(format!(
                        "{} #{}: `{w}` in {}",
                        r["name"],
                        ex["seq"],
                        common::cut(&text, 300)
                    ));
                }
            }
        }
    }
    assert!(exchanges > 0, "report.json recorded no exchange");
    assert!(
        in_westeurope > 0,
        "no operation was polled under the target's location (westeurope)"
    );
    assert!(
        leaks.is_empty(),
        "{} of {exchanges} exchange texts name the upstream RP:\n{}",
        leaks.len(),
        leaks
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!(
        "fabrikam run: {} in {:.1} s",
        report["counts"],
        out.elapsed.as_secs_f64()
    );
    rig.stop();
}

#[test]
fn faults_behind_the_proxy_break_the_rules_they_name() {
    let faults = [Fault::IgnoreIfMatch, Fault::NoRequestId];
    let dir = Scratch::new("other-rp-faults");
    let outcomes: Vec<(Fault, Result<(), String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = faults
            .iter()
            .map(|&fault| {
                let dir = &dir;
                s.spawn(move || (fault, run_fault(dir, fault)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("fault run panicked"))
            .collect()
    });
    let problems: Vec<String> = outcomes
        .into_iter()
        .filter_map(|(f, r)| r.err().map(|e| format!("--- {f}: {e}")))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A strict run with `fault` on the RP behind the proxy; Err says what was not caught.
fn run_fault(dir: &Scratch, fault: Fault) -> Result<(), String> {
    let rig = Rig::start(&[fault]);
    let target = rig.target_file(dir, &format!("fabrikam-{fault}.yaml"));
    let report_dir = dir.join(fault.name());
    // The target file's own deadline: the runs of every fault go side by side on a busy machine.
    let (out, report) = run_suites(&target, &report_dir, &["--strict"]);
    rig.stop();
    let report = report.ok_or_else(|| format!("no report.json\n{}", out.tail(3000)))?;
    let failed = failed_rules(&report);
    let named: BTreeSet<String> = fault.rules().iter().map(|r| r.to_string()).collect();
    eprintln!(
        "{fault}: exit {}, {:.1} s, failed rules {failed:?}, counts {}",
        out.code(),
        out.elapsed.as_secs_f64(),
        report["counts"]
    );
    // Exactly the named rules: the disguise adds no failure of its own.
    if out.code() != 1 || failed != named {
        return Err(format!(
            "exit {} (want 1); rules named but not failed: {:?}; failed but not named: {:?}\n{}",
            out.code(),
            named.difference(&failed).collect::<Vec<_>>(),
            failed.difference(&named).collect::<Vec<_>>(),
            excerpt(&report)
        ));
    }
    Ok(())
}
