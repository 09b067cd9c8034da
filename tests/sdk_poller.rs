//! A real SDK client against the reference RP.
//!
//! 1. The Azure Python SDK's `ARMPolling` drives PUT, POST and DELETE to completion, honouring
//!    what the RP advertises (`tests/sdk/arm_polling.py`).
//! 2. Agreement: for every long-running flow the reference RP can produce (PUT create and
//!    replace, PATCH, DELETE, a POST action, a failing create, under each variant that changes
//!    the flow), the SDK's poller (`tests/third_party/sdk_poll.py`, azure-mgmt-core's
//!    ARMPolling exactly as a generated client uses it) and rpconform (a tiny generated suite:
//!    the request and a `poll`) reach the same terminal state and the same final body. The
//!    SDK's answer becomes the expectations of rpconform's poll step, so any disagreement is a
//!    failed verdict, printed with expected and seen. DELETE results are compared by terminal
//!    state only: generated clients discard them (the SDK hands back the last status body).
//!
//! Both need python3 with azure-mgmt-core (`.ci/run` installs it); without it the tests say so
//! and pass. Only legal flows are included: where the SDK is laxer than the contract
//! (tests/third_party/FINDINGS.md §2.10) rpconform is right to disagree.

mod common;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use rpconform_refrp::{Settings, Variant};
use serde_json::{Value, json};

/// The Python that has azure-mgmt-core: `RPCONFORM_PYTHON` (the virtual environment `.ci/run`
/// makes), else `python3`.
fn python() -> String {
    std::env::var("RPCONFORM_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn has_sdk() -> bool {
    let ok = Command::new(python())
        .args(["-c", "import azure.mgmt.core"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        common::require_tool(
            "Python with azure-mgmt-core (the Azure SDK poller)",
            "python3 -m venv v && v/bin/pip install azure-mgmt-core, then RPCONFORM_PYTHON=v/bin/python; .ci/run does this",
        );
    }
    ok
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn azure_sdk_arm_polling_completes_every_operation() {
    if !has_sdk() {
        return;
    }
    let rt = runtime();
    let settings = Settings {
        op_duration: Duration::from_millis(800),
        ..Default::default()
    };
    let server = rt.block_on(rpconform_refrp::start(settings, 0)).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk/arm_polling.py");
    let out = Command::new("timeout")
        .args(["120", &python(), script, &server.base_url()])
        .output()
        .unwrap();
    rt.block_on(server.shutdown());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "ARMPolling did not complete:\n{text}");
    assert!(
        text.contains("ARMPolling drove PUT, POST and DELETE to completion"),
        "{text}"
    );
}

const SUB: &str = "00000000-0000-0000-0000-00000000c0de";
const API: &str = "2024-05-01";

/// One flow: what is sent, on what, and whether the create fails.
#[derive(Clone, Copy)]
enum Op {
    Create,
    FailingCreate,
    Replace,
    Patch,
    Delete,
    Restart,
}

impl Op {
    fn all() -> [Op; 6] {
        [
            Op::Create,
            Op::FailingCreate,
            Op::Replace,
            Op::Patch,
            Op::Delete,
            Op::Restart,
        ]
    }

    fn name(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::FailingCreate => "failing-create",
            Op::Replace => "replace",
            Op::Patch => "patch",
            Op::Delete => "delete",
            Op::Restart => "restart",
        }
    }

    fn needs_existing(self) -> bool {
        matches!(self, Op::Replace | Op::Patch | Op::Delete | Op::Restart)
    }

    /// Method, URL suffix after the widget URL, body.
    fn request(self) -> (&'static str, &'static str, Option<Value>) {
        match self {
            Op::Create | Op::Replace => ("PUT", "", Some(widget_body())),
            Op::FailingCreate => (
                "PUT",
                "",
                Some(
                    json!({"location": "eastus", "properties": {"size": 3, "simulateFailure": true}}),
                ),
            ),
            Op::Patch => ("PATCH", "", Some(json!({"properties": {"size": 4}}))),
            Op::Delete => ("DELETE", "", None),
            Op::Restart => ("POST", "/restart", Some(json!({}))),
        }
    }
}

fn widget_body() -> Value {
    json!({"location": "eastus", "tags": {"env": "test"}, "properties": {"size": 3, "minCount": 1, "maxCount": 5}})
}

/// Each variant set whose flows differ from the default one (and the default, and every
/// compatible variant at once), with the operations whose flow it changes.
fn cases() -> Vec<(Vec<Variant>, Vec<Op>)> {
    use Op::*;
    use Variant::*;
    let all = Op::all().to_vec();
    let puts = vec![Create, FailingCreate, Replace];
    vec![
        (vec![], all.clone()),
        (vec![SyncPatch], vec![Patch]),
        (vec![PutProvisioningStateOnly], puts.clone()),
        (vec![Put202Location], puts.clone()),
        (vec![DeleteLocationOnly], vec![Delete]),
        (vec![DeleteLocationOnly, NewLocationPerPoll], vec![Delete]),
        (vec![NewLocationPerPoll, Put202Location], vec![Create]),
        (vec![AaoOnlyPut], vec![Create, Replace]),
        (vec![FastOperations], vec![Create, Patch, Delete, Restart]),
        (
            vec![LowercaseTerminalStatus],
            vec![Create, FailingCreate, Delete],
        ),
        (vec![AaoAsyncOperations], vec![Create, Delete]),
        (vec![OperationsMonitorTrue], vec![Create, Delete, Restart]),
        (
            vec![LocationUnderResource, DeleteLocationOnly],
            vec![Delete, Restart],
        ),
        (vec![NoRetryAfter], vec![Create, Delete]),
        (vec![Patch202], vec![Patch]),
        (vec![DeleteSync200], vec![Delete]),
        (vec![DeleteFinal200], vec![Delete]),
        (vec![CustomRunningStates], vec![Create, FailingCreate]),
        (vec![OpStatusStatusOnly], vec![Create, FailingCreate]),
        (vec![ShortRetryAfterOn2xx], vec![Create, Patch]),
        (Variant::compatible_set(), all),
    ]
}

/// What the SDK's poller concluded for one flow.
struct SdkResult {
    terminal: Option<String>,
    body: Value,
    error: Option<String>,
}

fn sdk_poll(script: &str, url: &str, method: &str, body: Option<&Value>) -> SdkResult {
    let mut args: Vec<String> = vec![
        script.into(),
        url.into(),
        method.into(),
        "--polling-interval".into(),
        "0.6".into(),
        "--max-sleep".into(),
        "0.1".into(),
        "--timeout".into(),
        "60".into(),
        "--retry-total".into(),
        "0".into(),
    ];
    if let Some(b) = body {
        args.extend(["--body".into(), b.to_string()]);
    }
    let out = Command::new("timeout")
        .arg("90")
        .arg(python())
        .args(&args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "sdk_poll.py gave no JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    SdkResult {
        terminal: v["terminal_state"].as_str().map(str::to_string),
        body: v["final_body"].clone(),
        error: v["error"].as_str().map(str::to_string),
    }
}

/// The SDK's final body as a JSON template for rpconform's resource: the SDK's resource path
/// and name become `${r.path}` / `${r.name}`, and the fields every write changes go.
fn as_template(v: &Value, sdk_path: &str, sdk_name: &str) -> Value {
    match v {
        Value::String(s) if s == sdk_path => json!("${r.path}"),
        Value::String(s) if s == sdk_name => json!("${r.name}"),
        Value::String(s) => json!(s.replace("${", "$${")),
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "etag")
                .map(|(k, x)| (k.clone(), as_template(x, sdk_path, sdk_name)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| as_template(x, sdk_path, sdk_name))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `Succeeded` for `succeeded`: rpconform's outcome names.
fn outcome_name(s: &str) -> String {
    match s.to_ascii_lowercase().as_str() {
        "succeeded" => "Succeeded".into(),
        "failed" => "Failed".into(),
        "canceled" => "Canceled".into(),
        other => other.into(),
    }
}

/// Sets compared at once (each its own RP, SDK processes and rpconform run).
const PARALLEL: usize = 4;

fn rpconform_and_the_sdk_poller_agree_on_every_legal_flow() {
    if !has_sdk() {
        return;
    }
    let dir = common::Scratch::new("sdk-agree");
    let all = cases();
    let queue = std::sync::Mutex::new((0..all.len()).rev().collect::<Vec<_>>());
    let found = std::sync::Mutex::new((0usize, Vec::<String>::new()));
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL {
            scope.spawn(|| {
                loop {
                    let Some(i) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop() else {
                        break;
                    };
                    let (set, ops) = &all[i];
                    let (n, problems) = compare_set(&dir, i, set, ops);
                    let mut f = found.lock().unwrap_or_else(|e| e.into_inner());
                    f.0 += n;
                    f.1.extend(problems);
                }
            });
        }
    });
    let (compared, problems) = found.into_inner().unwrap_or_else(|e| e.into_inner());
    println!(
        "{compared} flows compared over {} variant sets in {:.0} s",
        all.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(compared >= 40, "only {compared} flows compared");
    assert!(
        problems.is_empty(),
        "rpconform and the SDK disagree:\n  {}\nreports kept in {}",
        problems.join("\n  "),
        dir.path.display()
    );
}

/// Run every flow of one variant set through the SDK, then through rpconform with the SDK's
/// results as expectations; the number of flows compared and the disagreements.
fn compare_set(
    dir: &common::Scratch,
    si: usize,
    set: &[Variant],
    ops: &[Op],
) -> (usize, Vec<String>) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/third_party/sdk_poll.py");
    let rt = runtime();
    let mut problems = Vec::new();
    let mut cases = 0;
    {
        let variants: BTreeSet<Variant> = set.iter().copied().collect();
        let settings = Settings {
            op_duration: Duration::from_millis(100),
            complete_after_reads: 2,
            variants: variants.clone(),
            ..Default::default()
        };
        let server = rt
            .block_on(rpconform_refrp::start(settings.clone(), 0))
            .unwrap();
        let base = server.base_url();
        let rg = format!("sdk{si}");
        let rg_url = format!("{base}/subscriptions/{SUB}/resourceGroups/{rg}");
        let made = sdk_poll(
            script,
            &format!("{rg_url}?api-version=2021-04-01"),
            "PUT",
            Some(&json!({"location": "eastus"})),
        );
        assert!(made.error.is_none(), "resource group: {:?}", made.error);
        let mut suite = String::from("suite: sdk-agreement\nscenarios:\n");
        let label = if set.is_empty() {
            "default".to_string()
        } else {
            set.iter().map(|v| v.name()).collect::<Vec<_>>().join("+")
        };
        for &op in ops {
            let name = format!("w{si}{}", op.name().replace('-', ""));
            let path = format!(
                "/subscriptions/{SUB}/resourceGroups/{rg}/providers/Microsoft.Contoso/widgets/{name}"
            );
            let url = format!("{base}{path}");
            if op.needs_existing() {
                let c = sdk_poll(
                    script,
                    &format!("{url}?api-version={API}"),
                    "PUT",
                    Some(&widget_body()),
                );
                assert_eq!(
                    c.terminal.as_deref().map(outcome_name).as_deref(),
                    Some("Succeeded"),
                    "{label}: setup create: {:?}",
                    c.error
                );
            }
            let (method, suffix, body) = op.request();
            let sdk = sdk_poll(
                script,
                &format!("{url}{suffix}?api-version={API}"),
                method,
                body.as_ref(),
            );
            let Some(terminal) = sdk.terminal.as_deref().map(outcome_name) else {
                problems.push(format!(
                    "{label} {}: the SDK reached no terminal state ({:?})",
                    op.name(),
                    sdk.error
                ));
                continue;
            };
            cases += 1;
            let mut expect = vec![json!({"outcome": terminal, "rule": "AAO-04"})];
            let compare_body = terminal == "Succeeded" && !matches!(op, Op::Delete);
            if compare_body {
                if sdk.body.is_object() {
                    let want = as_template(&sdk.body, &path, &name);
                    expect.push(json!({"pointer": "", "contains": want, "rule": "AAO-04"}));
                } else if sdk.body.is_null() {
                    expect.push(json!({"pointer": "", "absent": true, "rule": "AAO-04"}));
                }
            }
            let setup = if op.needs_existing() {
                "create: {as: r, type: widgets}"
            } else {
                "fresh: {as: r, type: widgets}"
            };
            let body_line = match &body {
                Some(b) => format!(", body: {b}"),
                None => String::new(),
            };
            suite.push_str(&format!(
                "  - name: {}\n    steps:\n      - {setup}\n      - name: op\n        request: {{method: {method}, url: \"${{r.url}}{suffix}\"{body_line}}}\n      - name: done\n        poll: op\n        expect: {}\n",
                op.name(),
                Value::Array(expect)
            ));
        }
        let case_dir = dir.join(format!("set{si}"));
        std::fs::create_dir_all(case_dir.join("suites")).unwrap();
        std::fs::write(case_dir.join("suites").join("sdk.yaml"), &suite).unwrap();
        std::fs::write(
            case_dir.join("target.yaml"),
            rpconform::target::embedded_target_yaml_for(&base, &settings),
        )
        .unwrap();
        let out = common::rpconform(
            &[
                "run",
                &case_dir.join("suites").display().to_string(),
                "--target",
                &case_dir.join("target.yaml").display().to_string(),
                "--time-scale",
                "0.01",
                "--deadline",
                "30",
                "-q",
                "--schemas",
                &common::schemas_dir().display().to_string(),
                "--report-dir",
                &case_dir.join("reports").display().to_string(),
            ],
            common::RUN_TIMEOUT,
        );
        rt.block_on(server.shutdown());
        let report_path = case_dir.join("reports");
        if !report_path.join("report.json").exists() {
            problems.push(format!(
                "{label}: rpconform wrote no report\n{}",
                out.tail(2000)
            ));
            return (cases, problems);
        }
        let report = common::read_report(&report_path);
        for r in common::results(&report) {
            let name = r["name"].as_str().unwrap_or("?");
            if r["status"] == "skipped" {
                problems.push(format!("{label} {name}: skipped ({})", r["detail"]));
                continue;
            }
            if r["status"] == "error" {
                problems.push(format!("{label} {name}: runner error {}", r["detail"]));
            }
            for v in r["verdicts"].as_array().into_iter().flatten() {
                if common::is_failed(v) && v["level"] == "MUST" {
                    for f in v["failures"].as_array().into_iter().flatten() {
                        problems.push(format!(
                            "{label} {name}: {} expected {} / seen {} ({})",
                            v["rule"].as_str().unwrap_or("?"),
                            common::cut(f["expected"].as_str().unwrap_or(""), 300),
                            common::cut(f["seen"].as_str().unwrap_or(""), 300),
                            f["at"].as_str().unwrap_or("-")
                        ));
                    }
                }
            }
        }
    }
    (cases, problems)
}

/// Tests that need an installed tool: a missing one is *ignored*, with why (a failure under CI).
fn main() -> std::process::ExitCode {
    common::tool_tests(&[
        (
            "azure_sdk_arm_polling_completes_every_operation",
            azure_sdk_arm_polling_completes_every_operation,
        ),
        (
            "rpconform_and_the_sdk_poller_agree_on_every_legal_flow",
            rpconform_and_the_sdk_poller_agree_on_every_legal_flow,
        ),
    ])
}
