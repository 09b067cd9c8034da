//! Spector's data-plane long-running operations (`azure/core/lro/standard` and `rpc`, npm
//! `@azure-tools/azure-http-specs`): `rpconform probe` and the Azure Python SDK's own data-plane
//! poller (azure-core's `LROBasePolling` as a generated TypeSpec client uses it,
//! `tests/third_party/sdk_dataplane_poll.py`) reach the same end.
//!
//! For each route (PUT, the export POST, DELETE, the rpc POST), one after the other on one
//! Spector (its poll counters are process-global, but every initial request resets its route's
//! counter, so running a route again starts it afresh):
//!
//! 1. the plain SDK: azure-core sends the Operation-Location link as handed out, and Spector's
//!    links carry no api-version. Whatever azure-core does is recorded: while it does not add
//!    one (1.41.0, the newest today, does not) the SDK must fail on exactly that 400, and the
//!    comparison uses step 2; once it does, it must succeed and is compared itself;
//! 2. the SDK with the api-version set on status links (`--add-api-version`, the
//!    `LROBasePolling` subclass typespec-python's own Spector tests poll with);
//! 3. `rpconform probe`, which infers the data-plane operation, appends the URL's api-version to
//!    the link and follows the monitor.
//!
//! Compared: both end Succeeded; both poll the same monitor URL; the SDK's result response is
//! rpconform's last monitor read for the POSTs (whose `result` is what a generated client
//! returns) and DELETE (generated clients discard it); for PUT the SDK reads the resource again
//! (final-state-via original-uri) where rpconform follows only the monitor, so its result is
//! compared with the resource rpconform's PUT was answered with.
//!
//! Needs Node.js (Spector) and a Python with azure-core (`RPCONFORM_PYTHON`, else `python3`);
//! without either the test says so loudly and passes (under CI it fails).

mod common;
#[path = "third_party/server.rs"]
mod server;

use std::path::Path;
use std::process::Command;

use common::{RUN_TIMEOUT, Scratch, read_report, rpconform};
use serde_json::Value;

fn python() -> String {
    std::env::var("RPCONFORM_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn has_azure_core() -> bool {
    let ok = Command::new(python())
        .args(["-c", "import azure.core"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::require_tool(
            "Python with azure-core (the Azure SDK's data-plane poller)",
            "python3 -m venv v && v/bin/pip install azure-mgmt-core, then RPCONFORM_PYTHON=v/bin/python; .ci/run does this",
        );
    }
    ok
}

/// Run `sdk_dataplane_poll.py URL METHOD ...` and parse the JSON it prints.
fn sdk_poll(url: &str, method: &str, body: Option<&str>, fsv: Option<&str>, add: bool) -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/third_party/sdk_dataplane_poll.py"
    );
    let py = python();
    let mut args = vec!["60", &py, script, url, method, "--max-sleep", "0.05"];
    args.extend(["--timeout", "30"]);
    if let Some(b) = body {
        args.extend(["--body", b]);
    }
    if let Some(f) = fsv {
        args.extend(["--final-state-via", f]);
    }
    if add {
        args.push("--add-api-version");
    }
    let out = Command::new("timeout").args(&args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sdk_dataplane_poll.py {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "sdk_dataplane_poll.py printed no JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn succeeded(sdk: &Value) -> bool {
    sdk["error"].is_null()
        && sdk["terminal_state"]
            .as_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("succeeded"))
}

/// One long-running operation: what is sent, and the final-state-via its spec declares.
struct Route {
    label: &'static str,
    method: &'static str,
    url: String,
    body: Option<&'static str>,
    fsv: Option<&'static str>,
}

/// A recorded exchange's answer body, parsed.
fn answer(exchange: &Value) -> Value {
    let text = exchange["response"]["body"].as_str().unwrap_or("");
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn sdk_and_probe_agree_on_spector_data_plane_operations() {
    let Some(srv) = server::Server::start("start_spector.sh", "Spector (azure-http-specs)") else {
        return;
    };
    if !has_azure_core() {
        return;
    }
    let s = Scratch::new("spector-dp-sdk");
    let q = "api-version=2022-12-01-preview";
    let lro = format!("{}/azure/core/lro", srv.base);
    let route = |label, method, path: &str, body, fsv| Route {
        label,
        method,
        url: format!("{lro}/{path}"),
        body,
        fsv,
    };
    let routes = [
        route(
            "put",
            "PUT",
            &format!("standard/users/madge?{q}"),
            Some(r#"{"role":"contributor"}"#),
            Some("original-uri"),
        ),
        route(
            "export",
            "POST",
            &format!("standard/users/madge:export?format=json&{q}"),
            None,
            Some("operation-location"),
        ),
        route(
            "delete",
            "DELETE",
            &format!("standard/users/madge?{q}"),
            None,
            None,
        ),
        route(
            "rpc",
            "POST",
            &format!("rpc/generations:submit?{q}"),
            Some(r#"{"prompt":"text"}"#),
            Some("operation-location"),
        ),
    ];
    for Route {
        label,
        method,
        url,
        body,
        fsv,
    } in routes
    {
        // 1. The SDK as generated code runs it.
        let plain = sdk_poll(&url, method, body, fsv, false);
        let first_poll = plain["polled_urls"][0].as_str().unwrap_or("");
        let sdk = if first_poll.contains("api-version=") {
            eprintln!("{label}: azure-core now sets api-version on the monitor link itself");
            plain
        } else {
            assert!(
                !first_poll.is_empty()
                    && !succeeded(&plain)
                    && plain["final_status_code"] == 400
                    && plain["error"].as_str().is_some_and(
                        |e| e.starts_with("HttpResponseError") && e.contains("api-version")
                    ),
                "{label}: the SDK polled the monitor without api-version and should have failed \
                 on Spector's 400 for it:\n{plain}"
            );
            // 2. With the api-version typespec-python's Spector tests add.
            sdk_poll(&url, method, body, fsv, true)
        };
        assert!(succeeded(&sdk), "{label}: the SDK did not succeed:\n{sdk}");

        // 3. rpconform.
        let dir = s.str(format!("probe-{label}"));
        let mut args = vec![
            "probe".to_string(),
            method.into(),
            url.clone(),
            "--time-scale".into(),
            "0.01".into(),
            "--keep".into(),
            "--report-dir".into(),
            dir.clone(),
        ];
        if let Some(b) = body {
            args.push("--body".into());
            args.push(s.write(&format!("{label}.json"), b).display().to_string());
        }
        let out = rpconform(&args, RUN_TIMEOUT);
        let ctx = format!("SDK: {sdk}\n{}", out.tail(3000));
        assert_eq!(out.code(), 0, "{label}: {ctx}");
        assert!(
            out.stdout
                .contains("followed via monitor (operation-location): Succeeded"),
            "{label}: {ctx}"
        );

        let report = read_report(Path::new(&dir));
        let exchanges = report["results"][0]["exchanges"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let reads: Vec<&Value> = exchanges
            .iter()
            .filter(|e| e["role"] == "monitor-poll")
            .collect();
        let (Some(first_read), Some(last_read)) = (reads.first(), reads.last()) else {
            panic!("{label}: rpconform recorded no monitor read: {ctx}");
        };
        // The same monitor, with the same api-version.
        assert_eq!(
            sdk["polled_urls"][0], first_read["url"],
            "{label}: the SDK and rpconform polled different monitor URLs: {ctx}"
        );
        let last = answer(last_read);
        if method == "PUT" {
            let put = exchanges
                .iter()
                .find(|e| e["role"] == "step")
                .map(answer)
                .unwrap_or(Value::Null);
            assert!(
                sdk["final_body"].is_object() && sdk["final_body"] == put,
                "{label}: the resource the SDK read at the end is not the one rpconform's PUT \
                 was answered with ({put}): {ctx}"
            );
        } else {
            assert_eq!(
                sdk["final_body"], last,
                "{label}: the SDK's result response is not rpconform's last monitor read: {ctx}"
            );
        }
        if method == "POST" {
            assert!(
                !sdk["final_body"]["result"].is_null()
                    && sdk["final_body"]["result"] == last["result"],
                "{label}: the operation's result differs ({}): {ctx}",
                last["result"]
            );
        }
    }
}

/// Tests that need an installed tool: a missing one is *ignored*, with why (a failure under CI).
fn main() -> std::process::ExitCode {
    common::tool_tests(&[(
        "sdk_and_probe_agree_on_spector_data_plane_operations",
        sdk_and_probe_agree_on_spector_data_plane_operations,
    )])
}
