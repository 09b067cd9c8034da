//! Safe to point at a real subscription (issue 33), end to end against `rpconform serve`:
//! - a target that declares only `arm` runs no test of another profile, and no request of one
//!   leaves, whatever a suite says (the guard below the scenario language);
//! - a base URL with a path prefix (the RP behind a gateway) keeps it in every URL, journals
//!   every PUT before it is sent, and deletes everything it created;
//! - `cleanup --journal` deletes only what matches the target, naming the line it refuses;
//! - an endpoint that does not serve the target's namespace is said by `doctor` and blocks the
//!   run before any rule is judged.

use crate::common;

use std::path::Path;

use common::{QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, rpconform};
use serde_json::Value;

const SUB: &str = "00000000-0000-0000-0000-00000000c0de";

/// The written target of `serve`, changed line by line.
fn edit_target(path: &Path, edit: impl Fn(&str) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    let out: Vec<String> = text.lines().map(edit).collect();
    std::fs::write(path, out.join("\n") + "\n").unwrap();
}

fn arm_only(l: &str) -> String {
    if l.starts_with("profiles:") {
        "profiles: [arm]".into()
    } else {
        l.to_string()
    }
}

/// The requests a HAR file holds, `METHOD url`.
fn har_requests(har: &Path) -> Vec<String> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(har).unwrap()).unwrap();
    v["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["request"]["method"].as_str().unwrap(),
                e["request"]["url"].as_str().unwrap()
            )
        })
        .collect()
}

fn run_args<'a>(target: &'a str, reports: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "suites",
        "--target",
        target,
        "--time-scale",
        "0.01",
        "--report-dir",
        reports,
    ]
}

#[test]
fn an_arm_only_target_runs_and_sends_nothing_of_another_profile() {
    let dir = Scratch::new("safety-arm-only");
    let target = dir.join("t.yaml");
    let _rp = common::serve(&target, &["--hold-reads", "3"]);
    edit_target(&target, arm_only);
    let t = target.display().to_string();
    let out = rpconform(
        &[
            "run", "suites", "--list", "--format", "json", "--target", &t,
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    let list: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    for t in &list {
        let name = t["name"].as_str().unwrap();
        if name.starts_with("subscription-lifecycle::") || name.starts_with("resource-move::") {
            assert_eq!(t["status"], "not-applicable", "{t}");
            let why = t["reason"].as_str().unwrap();
            assert!(
                why.contains("subscription-lifecycle") || why.contains("resource-move"),
                "{why}"
            );
            assert!(why.contains("`profiles:`"), "{why}");
        }
    }
    // The whole run, every suite: not one request of the two profiles leaves.
    let reports = dir.str("reports");
    let har = dir.str("run.har");
    let mut args = run_args(&t, &reports);
    args.extend(["--har", &har]);
    let run = rpconform(&args, RUN_TIMEOUT);
    assert!(matches!(run.code(), 0 | 1), "{}", run.tail(3000));
    let sent = har_requests(Path::new(&har));
    assert!(sent.len() > 100, "{}", sent.len());
    for r in &sent {
        let lower = r.to_ascii_lowercase();
        assert!(!lower.contains("api-version=2.0"), "{r}");
        assert!(!lower.contains("moveresources"), "{r}");
        // Reads of a subscription the run made up (OPRES-11) change nothing; writes stay home.
        assert!(
            r.starts_with("GET ")
                || lower.contains(&SUB.to_ascii_lowercase())
                || !lower.contains("/subscriptions/"),
            "{r}"
        );
    }
    let report = common::read_report(Path::new(&reports));
    assert!(
        common::failed_rules(&report).is_empty(),
        "{}",
        common::excerpt(&report)
    );
}

/// A custom suite that states only `arm` rules and tries, every way it can, to send what an
/// `arm`-only target did not ask for.
const SNEAKY: &str = r#"suite: sneaky
scenarios:
  - name: notify
    steps:
      - request: {method: PUT, url: "${target.base_url}/subscriptions/${target.subscription}", api_version: "2.0", body: {state: Suspended}}
        expect: [{status: 200, rule: HDR-01}]
  - name: notify-dots
    steps:
      - request: {method: PUT, url: "${target.rg_url}/%2e%2e/%2E%2E", api_version: "2.0", body: {state: Deleted}}
        expect: [{status: 200, rule: HDR-01}]
  - name: notify-encoded-slashes
    steps:
      - request: {method: PUT, url: "${target.rg_url}/..%2F..%2F..%2Fsubscriptions%2F${target.subscription}", api_version: "2.0", body: {state: Deleted}}
        expect: [{status: 200, rule: HDR-01}]
  - name: other-subscription
    steps:
      - request: {method: PUT, url: "${target.base_url}/SUBSCRIPTIONS/${uuid}/resourceGroups/stolen", body: {location: eastus}}
        expect: [{status: 201, rule: HDR-01}]
  - name: move
    steps:
      - request: {method: POST, url: "${target.rg_url}/MoveResources", body: {targetResourceGroup: x, resources: []}}
        expect: [{status: 202, rule: HDR-01}]
  - name: other-group
    steps:
      - request: {method: PUT, url: "${target.base_url}/subscriptions/${target.subscription}/resourceGroups/someone-elses", body: {location: eastus}}
        expect: [{status: 201, rule: HDR-01}]
"#;

#[test]
fn a_custom_suite_cannot_send_what_the_target_does_not_declare() {
    let dir = Scratch::new("safety-sneaky");
    let target = dir.join("t.yaml");
    let _rp = common::serve(&target, &[]);
    edit_target(&target, arm_only);
    std::fs::create_dir_all(dir.join("suites")).unwrap();
    dir.write("suites/sneaky.yaml", SNEAKY);
    let (t, suites, reports, har) = (
        target.display().to_string(),
        dir.str("suites"),
        dir.str("reports"),
        dir.str("run.har"),
    );
    let run = rpconform(
        &[
            "run",
            &suites,
            "--target",
            &t,
            "--time-scale",
            "0.01",
            "--report-dir",
            &reports,
            "--har",
            &har,
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(run.code(), 1, "{}", run.tail(3000));
    let report = common::read_report(Path::new(&reports));
    let results = common::results(&report);
    assert_eq!(results.len(), 6, "{}", common::excerpt(&report));
    for r in results {
        assert_eq!(r["status"], "error", "{r}");
        let why = r["detail"].as_str().unwrap_or_default();
        assert!(why.contains("not sent:"), "{why}");
        assert!(
            why.contains("`subscription-lifecycle`") || why.contains("`resource-move`"),
            "{why}"
        );
    }
    // Nothing of it left the machine; no rule was judged on it.
    // The run's own group (made and deleted by the run) and preflight reads; nothing else.
    let sent = har_requests(Path::new(&har));
    for r in &sent {
        let lower = r.to_ascii_lowercase();
        assert!(
            r.starts_with("GET ")
                || (lower.contains("/resourcegroups/rpconform-") && !lower.contains("/providers/")),
            "{r}"
        );
        for never in [
            "api-version=2.0",
            "moveresources",
            "stolen",
            "someone-elses",
        ] {
            assert!(!lower.contains(never), "{r}");
        }
    }
    assert!(common::failed_rules(&report).is_empty());
}

/// Put the run's group on the RP, as a team's gateway setup would have it.
fn make_group(base: &str, group: &str) {
    let url = format!("{base}/subscriptions/{SUB}/resourceGroups/{group}?api-version=2021-04-01");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let status = rt.block_on(async {
        reqwest::Client::new()
            .put(&url)
            .header("content-type", "application/json")
            .body(r#"{"location":"eastus"}"#)
            .send()
            .await
            .unwrap()
            .status()
    });
    assert!(status.is_success(), "{url}: {status}");
}

/// The widgets (and their children) the RP still holds in a group.
fn widgets_in(base: &str, group: &str) -> Vec<String> {
    let url = format!(
        "{base}/subscriptions/{SUB}/resourceGroups/{group}/providers/Microsoft.Contoso/widgets?api-version=2024-05-01"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let text = rt.block_on(async { reqwest::get(&url).await.unwrap().text().await.unwrap() });
    let v: Value = serde_json::from_str(&text).unwrap();
    v["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap().to_string())
        .collect()
}

const ENCODED: &str = r#"suite: prefixed
scenarios:
  - name: encoded-name
    for_each_type: [top_level, tracked]
    steps:
      - fresh: {as: r}
      - name: put
        request: {method: PUT, url: "${r.collection}/enc%2D${unique}%5Fx", body: "${type.create_body}"}
        expect: [{status: [200, 201, 202], rule: PUT-01}]
      - poll: put
"#;

/// The journal's `put` URLs (lower case, no query).
fn journaled_puts(reports: &Path) -> Vec<String> {
    let j = std::fs::read_dir(reports)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("journal-")
        })
        .expect("a journal");
    std::fs::read_to_string(j)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "put")
        .map(|l| l["url"].as_str().unwrap().to_ascii_lowercase())
        .collect()
}

#[test]
fn a_base_url_with_a_path_prefix_keeps_it_and_loses_nothing() {
    for (case, base) in [
        ("slash", "http://127.0.0.1:{P}/rp/v1/"),
        ("bare", "http://127.0.0.1:{P}/rp/v1"),
        ("upper", "HTTP://LOCALHOST:{P}/RP/V1"),
        // Without ARM's front door played (as through ARM itself): the Referer is the full URL.
        ("no-front-door", "http://127.0.0.1:{P}/rp/v1/"),
    ] {
        let dir = Scratch::new(&format!("safety-prefix-{case}"));
        let target = dir.join("t.yaml");
        let rp = common::serve(&target, &["--hold-reads", "2"]);
        let gw = common::gateway::start(&rp.base_url, "/rp/v1");
        let base = base.replace("{P}", &gw.port.to_string());
        let group = format!("given-{case}");
        make_group(&rp.base_url, &group);
        edit_target(&target, |l| {
            if l.starts_with("base_url:") {
                let door = if case == "no-front-door" {
                    "\nfront_door: none"
                } else {
                    ""
                };
                format!("base_url: {base}{door}")
            } else if l.trim_start().starts_with("name: rpconform") {
                format!("  name: {group}")
            } else if l.trim_start().starts_with("create: true") {
                "  create: false".into()
            } else {
                l.to_string()
            }
        });
        std::fs::create_dir_all(dir.join("suites")).unwrap();
        dir.write("suites/prefixed.yaml", ENCODED);
        let (t, reports) = (target.display().to_string(), dir.str("reports"));
        let run = rpconform(
            &[
                "run",
                &common::suites_dir().display().to_string(),
                "--suites",
                &format!("+{}", dir.str("suites")),
                "--target",
                &t,
                "--time-scale",
                "0.01",
                "--report-dir",
                &reports,
                "async-put::",
                "prefixed::encoded-name::widgets",
            ],
            RUN_TIMEOUT,
        );
        let report = common::read_report(Path::new(&reports));
        assert_eq!(
            run.code(),
            0,
            "{case}: {}\n{}",
            run.tail(3000),
            common::excerpt(&report)
        );
        assert!(common::count(&report, "passed") > 5, "{case}");
        // Every PUT of a resource the gateway passed on is in the journal, prefix and all.
        let puts = journaled_puts(Path::new(&reports));
        let log = gw.log();
        let resource_puts: Vec<&String> = log
            .iter()
            .filter(|l| l.starts_with("PUT ") && l.contains("/providers/"))
            .collect();
        assert!(resource_puts.len() >= 5, "{case}: {log:?}");
        for p in &resource_puts {
            let path = p["PUT ".len()..]
                .split(['?', ' '])
                .next()
                .unwrap()
                .to_ascii_lowercase();
            assert!(path.starts_with("/rp/v1/"), "{case}: {p}");
            // A fixed-name child its parent made is put back, never deleted: not journaled.
            if path.ends_with("/configurations/default") {
                continue;
            }
            assert!(
                puts.iter().any(|j| j.ends_with(&path)),
                "{case}: {p} was sent but not journaled: {puts:?}"
            );
        }
        // Every request kept the prefix; a test's ARM request names its full URL in the
        // Referer (preflight's reads send none).
        let mut referred = 0;
        for l in &log {
            let (req, referer) = l.split_once(" referer=").unwrap();
            let pq = req.split_once(' ').unwrap().1;
            assert!(pq.to_ascii_lowercase().starts_with("/rp/v1"), "{case}: {l}");
            if referer != "-" {
                referred += 1;
                // ARM's public URL (no gateway prefix there) when the front door is played,
                // else the full URL the request went to.
                let full = if case == "no-front-door" {
                    format!("http://127.0.0.1:{}{pq}", gw.port)
                } else {
                    format!(
                        "https://management.rpconform.invalid{}",
                        &pq["/rp/v1".len()..]
                    )
                };
                assert_eq!(referer, full, "{case}: {l}");
            }
        }
        assert!(referred > 20, "{case}: {referred}");
        // Nothing left behind: the run deleted all it created, the encoded name too.
        assert!(widgets_in(&rp.base_url, &group).is_empty(), "{case}");
        assert!(
            report["run"]["left_behind"]
                .as_array()
                .is_none_or(|l| l.is_empty()),
            "{case}"
        );
    }
}

#[test]
fn a_base_url_with_a_query_is_refused() {
    let dir = Scratch::new("safety-query");
    let target = dir.join("t.yaml");
    let _rp = common::serve(&target, &[]);
    edit_target(&target, |l| {
        if l.starts_with("base_url:") {
            format!("{l}/?code=abc")
        } else {
            l.to_string()
        }
    });
    let out = rpconform(
        &["check", "--target", &target.display().to_string()],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 2, "{}", out.tail(2000));
    assert!(out.stderr.contains("t.yaml:2:"), "{}", out.stderr);
    assert!(out.stderr.contains("has a query"), "{}", out.stderr);
}

/// A journal as a run against the served target writes one, with `edit` applied to its text.
fn journal(dir: &Scratch, served: &Path, run: &str, lines: &[String]) -> std::path::PathBuf {
    let base = std::fs::read_to_string(served)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("base_url: ").map(str::to_string))
        .unwrap();
    let header = serde_json::json!({
        "event": "run", "version": 1, "run_id": run, "target": "t.yaml",
        "target_file": served.display().to_string(), "base_url": base,
        "subscription": SUB, "resource_group": format!("rpconform-{run}"), "rg_created": true,
        "started_at": "2026-12-01T00:00:00Z", "pid": u32::MAX,
    });
    let mut text = format!("{header}\n");
    for l in lines {
        text.push_str(&l.replace("{BASE}", &base));
        text.push('\n');
    }
    let d = dir.join(format!("j-{run}"));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join(format!("journal-{run}.jsonl")), text).unwrap();
    d
}

fn put_line(url: &str) -> String {
    serde_json::json!({"event": "put", "url": url, "api_version": "2024-05-01", "by": "t", "at": "2026-12-01T00:00:00Z"}).to_string()
}

#[test]
fn cleanup_deletes_only_what_the_journal_shows_the_run_created() {
    let dir = Scratch::new("safety-cleanup");
    let target = dir.join("t.yaml");
    let _rp = common::serve(&target, &[]);
    edit_target(&target, arm_only);
    let t = target.display().to_string();
    let widget = |sub: &str, group: &str| {
        format!(
            "{{BASE}}/subscriptions/{sub}/resourceGroups/{group}/providers/Microsoft.Contoso/widgets/w1"
        )
    };
    let cases: Vec<(&str, Vec<String>, String, &str)> = vec![
        // another subscription in the header
        ("sub", vec![put_line(&widget("11111111-1111-1111-1111-111111111111", "rpconform-sub"))], "11111111-1111-1111-1111-111111111111".into(), ":1: the run was in subscription"),
        // a resource in a group the run did not have
        ("grp", vec![put_line(&widget(SUB, "production"))], SUB.into(), ":2: "),
        // a resource in another subscription
        ("res", vec![put_line(&widget("22222222-2222-2222-2222-222222222222", "rpconform-res"))], SUB.into(), ":2: "),
        // a group the run did not create
        ("gl", vec![serde_json::json!({"event": "group", "url": "{BASE}/subscriptions/".to_string() + SUB + "/resourceGroups/production", "api_version": "2021-04-01", "at": "x"}).to_string()], SUB.into(), ":2: resource group"),
    ];
    for (run, lines, sub, said) in cases {
        let d = journal(&dir, &target, run, &lines);
        let file = d.join(format!("journal-{run}.jsonl"));
        let text = std::fs::read_to_string(&file).unwrap().replace(SUB, &sub);
        // Only the header's subscription changes in the first case.
        let text = if run == "sub" {
            text
        } else {
            std::fs::read_to_string(&file).unwrap()
        };
        std::fs::write(&file, text).unwrap();
        let out = rpconform(
            &[
                "cleanup",
                "--journal",
                &d.display().to_string(),
                "--target",
                &t,
            ],
            QUICK_TIMEOUT,
        );
        assert_eq!(out.code(), 2, "{run}: {}", out.tail(2000));
        assert!(out.stderr.contains(said), "{run}: {}", out.stderr);
        assert!(
            out.stderr.contains("nothing of it is deleted"),
            "{run}: {}",
            out.stderr
        );
    }
}

#[test]
fn an_endpoint_that_does_not_serve_the_namespace_is_named_and_judged_on_nothing() {
    let dir = Scratch::new("safety-wrong-endpoint");
    let target = dir.join("t.yaml");
    let _rp = common::serve(&target, &[]);
    // Every type of the target in a namespace the endpoint does not serve.
    edit_target(&target, |l| {
        l.replace("Microsoft.Contoso", "Microsoft.Nowhere")
            .replace("Microsoft.Fabrikam", "Microsoft.Elsewhere")
    });
    let t = target.display().to_string();
    let doctor = rpconform(&["doctor", "--target", &t], QUICK_TIMEOUT);
    assert_eq!(doctor.code(), 1, "{}", doctor.tail(3000));
    assert!(doctor.stdout.contains("not ready"), "{}", doctor.stdout);
    assert!(
        doctor.stdout.contains("Microsoft.Nowhere"),
        "{}",
        doctor.stdout
    );
    let reports = dir.str("reports");
    let run = rpconform(&run_args(&t, &reports), RUN_TIMEOUT);
    assert_eq!(run.code(), 1, "{}", run.tail(3000));
    assert!(
        run.stderr.contains("Microsoft.Nowhere"),
        "{}",
        run.tail(3000)
    );
    let summary = std::fs::read_to_string(dir.join("reports/summary.md")).unwrap();
    assert!(summary.contains("not ready"), "{summary}");
    // No rule judged: the RP never had a chance to answer as itself.
    assert!(
        !dir.join("reports/report.json").exists() || {
            let r = common::read_report(Path::new(&reports));
            common::judged_rules(&r).is_empty()
        }
    );
}

#[test]
fn probe_sends_nothing_the_target_does_not_declare() {
    let dir = Scratch::new("safety-probe");
    let target = dir.join("t.yaml");
    let rp = common::serve(&target, &[]);
    let gw = common::gateway::start(&rp.base_url, "/");
    edit_target(&target, |l| {
        if l.starts_with("base_url:") {
            format!("base_url: http://127.0.0.1:{}", gw.port)
        } else {
            arm_only(l)
        }
    });
    let t = target.display().to_string();
    for (url, profile) in [
        (
            format!("/subscriptions/{SUB}?api-version=2.0"),
            "subscription-lifecycle",
        ),
        (
            format!("/subscriptions/{SUB}/resourceGroups/rpconform/%2e%2e/%2e%2e?api-version=2.0"),
            "subscription-lifecycle",
        ),
        (
            format!(
                "/subscriptions/{SUB}/resourceGroups/rpconform/moveResources?api-version=2021-04-01"
            ),
            "resource-move",
        ),
    ] {
        let method = if url.contains("moveResources") {
            "POST"
        } else {
            "PUT"
        };
        let out = rpconform(&["probe", method, &url, "--target", &t], QUICK_TIMEOUT);
        assert_ne!(out.code(), 0, "{url}: {}", out.tail(2000));
        assert!(
            out.stdout.contains("not sent:") || out.stderr.contains("not sent:"),
            "{}",
            out.tail(2000)
        );
        assert!(
            out.stdout.contains(&format!("`{profile}`"))
                || out.stderr.contains(&format!("`{profile}`")),
            "{}",
            out.tail(2000)
        );
    }
    // The gateway saw none of them (nor anything but reads).
    assert!(
        gw.log().iter().all(|l| l.starts_with("GET ")),
        "{:?}",
        gw.log()
    );
}
