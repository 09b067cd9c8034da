//! The TypeSpec Azure.Core data-plane surface (`/dataplane`, rules MON-01..08) over real
//! HTTP: widgets with the standard monitor, the five action patterns, Operation-Id handling,
//! errors, and each `mon-*` fault knob (on: the deviation shows; the conforming behaviour it
//! replaces is checked by the tests above it).

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use reqwest::Method;
use rpconform_refrp::Fault;
use serde_json::{Value, json};

const STANDARD_TERMINAL: &[&str] = &["Succeeded", "Failed", "Canceled"];
const EXPORT_TERMINAL: &[&str] = &["Completed", "Faulted", "Aborted"];

fn dp(rest: &str) -> String {
    format!("/dataplane/{rest}")
}

fn with_op_id(id: &str) -> [(&str, &str); 1] {
    [("operation-id", id)]
}

/// The last path segment of a URL, without the query.
fn last_segment(url: &str) -> String {
    url.split('?')
        .next()
        .unwrap_or("")
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_string()
}

/// Asserts an absolute link to `/dataplane/{segment}/...` carrying the api-version.
fn assert_link(rp: &Rp, url: &str, segment: &str) {
    assert!(
        url.starts_with(&format!("{}/dataplane/{segment}/", rp.base)),
        "{url}"
    );
    assert!(url.ends_with("?api-version=2024-05-01"), "{url}");
}

impl Rp {
    async fn dp_put(&self, name: &str, body: &Value, headers: &[(&str, &str)]) -> Resp {
        self.send(
            Method::PUT,
            &dp(&format!("widgets/{name}")),
            Some(body),
            headers,
        )
        .await
    }

    async fn dp_post(&self, name: &str, action: &str, body: Option<&Value>) -> Resp {
        self.send(
            Method::POST,
            &dp(&format!("widgets/{name}:{action}")),
            body,
            &[],
        )
        .await
    }

    /// Polls a monitor until its status is in `terminal`; every read must be 200 with a
    /// string status. Returns the last body and every status seen.
    async fn poll(&self, url: &str, terminal: &[&str]) -> (Value, Vec<String>) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        loop {
            let r = self.get(url).await;
            assert_eq!(r.status, 200, "monitor read: {}", r.body);
            let s = r.body["status"]
                .as_str()
                .expect("status string")
                .to_string();
            seen.push(s.clone());
            if terminal.contains(&s.as_str()) {
                return (r.body, seen);
            }
            assert!(Instant::now() < deadline, "never ended: {}", r.body);
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    }

    /// A settled widget `name` of size 3.
    async fn dp_widget(&self, name: &str) {
        let r = self.dp_put(name, &json!({"size": 3}), &[]).await;
        assert!(r.status == 201 || r.status == 200, "{}", r.body);
        let (done, _) = self
            .poll(r.h("operation-location").expect("OL"), STANDARD_TERMINAL)
            .await;
        assert_eq!(done["status"], "Succeeded");
    }
}

#[tokio::test]
async fn widget_put_get_replace_delete() {
    // Held open until its monitor was read twice: the running states are seen on any machine.
    let rp = rp_with(gated(2)).await;
    let r = rp.dp_put("w1", &json!({"size": 3}), &[]).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"name": "w1", "size": 3, "provisioningState": "Running"})
    );
    let ol = r.h("operation-location").expect("Operation-Location");
    assert_link(&rp, ol, "operations");
    let op_id = r.h("operation-id").expect("Operation-Id");
    assert_eq!(last_segment(ol), op_id);
    assert!(r.h("x-ms-request-id").is_some());
    let g = rp.get(&dp("widgets/w1")).await;
    assert_eq!(
        (g.status, g.body["provisioningState"].as_str()),
        (200, Some("Running"))
    );
    let first = rp.get(ol).await.body;
    assert!(["NotStarted", "Running"].contains(&first["status"].as_str().unwrap_or("")));
    assert_eq!(first["id"], op_id);
    assert!(first.get("result").is_none() && first.get("error").is_none());
    let (done, seen) = rp.poll(ol, STANDARD_TERMINAL).await;
    assert!(seen.iter().any(|s| s == "Running"), "{seen:?}");
    assert_eq!(done["status"], "Succeeded");
    assert_eq!(
        done["result"],
        json!({"name": "w1", "size": 3, "provisioningState": "Succeeded"})
    );
    assert!(done.get("error").is_none());
    assert_eq!(rp.get(ol).await.body, done, "terminal reads are stable");
    let g = rp.get(&dp("widgets/w1")).await;
    assert_eq!(g.body["provisioningState"], "Succeeded");

    let r = rp.dp_put("w1", &json!({"size": 5}), &[]).await;
    assert_eq!((r.status, r.body["size"].as_u64()), (200, Some(5)));
    let (done, _) = rp
        .poll(r.h("operation-location").unwrap_or(""), STANDARD_TERMINAL)
        .await;
    assert_eq!(done["result"]["size"], 5);
    let list = rp.get(&dp("widgets")).await;
    assert_eq!(list.body["value"].as_array().map(Vec::len), Some(1));

    let d = rp.delete(&dp("widgets/w1")).await;
    assert_eq!(d.status, 202);
    let ol = d.h("operation-location").expect("OL").to_string();
    assert_link(&rp, &ol, "operations");
    assert_eq!(
        d.h("operation-id").map(str::to_string),
        Some(last_segment(&ol))
    );
    assert!(["NotStarted", "Running"].contains(&d.body["status"].as_str().unwrap_or("")));
    assert_eq!(
        rp.get(&dp("widgets/w1")).await.body["provisioningState"],
        "Deleting"
    );
    let (done, _) = rp.poll(&ol, STANDARD_TERMINAL).await;
    assert_eq!(done["status"], "Succeeded");
    assert!(done.get("result").is_none());
    rp.get(&dp("widgets/w1"))
        .await
        .assert_error(404, "ResourceNotFound");
    assert_eq!(rp.delete(&dp("widgets/w1")).await.status, 204);
}

#[tokio::test]
async fn standard_monitor_says_not_started_first() {
    // Held open by the read gate (three reads): the first read of the monitor says
    // NotStarted, the next ones Running, then it ends, whatever the machine load.
    let rp = rp().await;
    let r = rp.dp_put("w1", &json!({"size": 1}), &[]).await;
    let ol = r.h("operation-location").unwrap_or("").to_string();
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(rp.get(&ol).await.body["status"].clone());
    }
    assert_eq!(seen, ["NotStarted", "Running", "Running", "Succeeded"]);
    // Other monitors have no NotStarted phase.
    let a = rp.dp_post("w1", "export", None).await;
    let ol = a.h("operation-location").expect("OL").to_string();
    assert_eq!(rp.get(&ol).await.body["status"], "Running", "{ol}");
}

#[tokio::test]
async fn failing_put_ends_failed_with_error() {
    let rp = rp().await;
    let r = rp
        .dp_put("w1", &json!({"size": 2, "fail": true}), &[])
        .await;
    assert_eq!(r.status, 201);
    let (done, _) = rp
        .poll(r.h("operation-location").unwrap_or(""), STANDARD_TERMINAL)
        .await;
    assert_eq!(done["status"], "Failed");
    assert_eq!(done["error"]["code"], "ProvisioningFailed");
    assert!(!done["error"]["message"].as_str().unwrap_or("").is_empty());
    assert!(done.get("result").is_none());
    assert_eq!(
        rp.get(&dp("widgets/w1")).await.body["provisioningState"],
        "Failed"
    );
}

#[tokio::test]
async fn delete_cancels_running_put_and_blocks_writes() {
    let rp = rp().await;
    let r = rp.dp_put("w1", &json!({"size": 2}), &[]).await;
    let ol = r.h("operation-location").unwrap_or("").to_string();
    let d = rp.delete(&dp("widgets/w1")).await;
    assert_eq!(d.status, 202);
    let put = rp.get(&ol).await.body;
    assert_eq!(put["status"], "Canceled");
    assert_eq!(put["error"]["code"], "OperationCanceled");
    assert!(put.get("result").is_none());
    rp.dp_put("w1", &json!({"size": 2}), &[])
        .await
        .assert_error(409, "ResourceBeingDeleted");
    rp.dp_post("w1", "export", None)
        .await
        .assert_error(409, "ResourceBeingDeleted");
    rp.poll(d.h("operation-location").unwrap_or(""), STANDARD_TERMINAL)
        .await;
    assert_eq!(rp.get(&dp("widgets/w1")).await.status, 404);
}

#[tokio::test]
async fn operation_id_is_echoed_and_repeats_are_idempotent() {
    let rp = rp().await;
    let body = json!({"size": 4});
    let a = rp.dp_put("w1", &body, &with_op_id("op-Client.1")).await;
    assert_eq!(a.status, 201);
    assert_eq!(a.h("operation-id"), Some("op-Client.1"));
    let ol = a.h("operation-location").expect("OL").to_string();
    assert!(ol.contains("/dataplane/operations/op-Client.1?"), "{ol}");
    let b = rp.dp_put("w1", &body, &with_op_id("op-Client.1")).await;
    assert_eq!(b.status, 201, "a repeat replays the first answer");
    assert_eq!(b.h("operation-location"), Some(ol.as_str()));
    assert_eq!(b.h("operation-id"), Some("op-Client.1"));
    // A different request under the same id is refused and starts nothing.
    rp.dp_put("w1", &json!({"size": 9}), &with_op_id("op-Client.1"))
        .await
        .assert_error(409, "OperationIdConflict");
    rp.send(
        Method::DELETE,
        &dp("widgets/w1"),
        None,
        &with_op_id("op-Client.1"),
    )
    .await
    .assert_error(409, "OperationIdConflict");
    let (done, _) = rp.poll(&ol, STANDARD_TERMINAL).await;
    assert_eq!(done["result"]["size"], 4);
    let again = rp.dp_put("w1", &body, &with_op_id("op-Client.1")).await;
    assert_eq!(again.h("operation-location"), Some(ol.as_str()));
    assert_eq!(again.body["provisioningState"], "Succeeded");
    assert_eq!(rp.get(&ol).await.body, done);
    // Without the header the server makes a fresh id; a bad id is refused.
    let c = rp.dp_put("w1", &body, &[]).await;
    let made = c.h("operation-id").unwrap_or("").to_string();
    assert!(!made.is_empty() && made != "op-Client.1");
    assert_eq!(last_segment(c.h("operation-location").unwrap_or("")), made);
    rp.dp_put("w1", &body, &with_op_id("no spaces allowed"))
        .await
        .assert_error(400, "InvalidOperationId");
    // Actions honour the header as well.
    let x = rp
        .send(
            Method::POST,
            &dp("widgets/w1:analyze"),
            None,
            &with_op_id("an-1"),
        )
        .await;
    assert_eq!((x.status, x.h("operation-id")), (202, Some("an-1")));
    let y = rp
        .send(
            Method::POST,
            &dp("widgets/w1:analyze"),
            None,
            &with_op_id("an-1"),
        )
        .await;
    assert_eq!(y.h("operation-location"), x.h("operation-location"));
}

#[tokio::test]
async fn export_uses_custom_terminal_names() {
    let rp = rp().await;
    rp.dp_widget("w1").await;
    let r = rp.dp_post("w1", "export", None).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let ol = r.h("operation-location").expect("OL").to_string();
    assert_link(&rp, &ol, "exports");
    assert_eq!(
        r.h("operation-id").map(str::to_string),
        Some(last_segment(&ol))
    );
    assert_eq!(r.body["status"], "Running");
    let (done, seen) = rp.poll(&ol, EXPORT_TERMINAL).await;
    assert!(!seen.iter().any(|s| s == "Succeeded"), "{seen:?}");
    assert_eq!(done["status"], "Completed");
    let url = done["result"]["exportUrl"].as_str().expect("exportUrl");
    assert!(url.starts_with(&rp.base), "{url}");
    let content = rp.get(url).await;
    assert_eq!(
        (content.status, content.body.clone()),
        (200, json!({"name": "w1", "size": 3}))
    );

    let f = rp
        .dp_post("w1", "export", Some(&json!({"fail": true})))
        .await;
    let (done, _) = rp
        .poll(f.h("operation-location").unwrap_or(""), EXPORT_TERMINAL)
        .await;
    assert_eq!(done["status"], "Faulted");
    assert_eq!(done["error"]["code"], "ExportFailed");
    assert!(done.get("result").is_none());

    let a = rp.dp_post("w1", "export", None).await;
    rp.delete(&dp("widgets/w1")).await;
    let aborted = rp.get(a.h("operation-location").unwrap_or("")).await.body;
    assert_eq!(aborted["status"], "Aborted");
    assert!(aborted.get("result").is_none());
}

#[tokio::test]
async fn analyze_uses_custom_result_fields() {
    let rp = rp().await;
    rp.dp_widget("w1").await;
    let r = rp.dp_post("w1", "analyze", Some(&json!({}))).await;
    assert_eq!(r.status, 202);
    let ol = r.h("operation-location").expect("OL").to_string();
    assert_link(&rp, &ol, "analyses");
    let (done, seen) = rp.poll(&ol, STANDARD_TERMINAL).await;
    assert_eq!(seen[0], "Running");
    assert_eq!(done["status"], "Succeeded");
    assert_eq!(done["success"]["widget"], "w1");
    assert!(done.get("result").is_none() && done.get("failure").is_none());

    let f = rp
        .dp_post("w1", "analyze", Some(&json!({"fail": true})))
        .await;
    let (done, _) = rp
        .poll(f.h("operation-location").unwrap_or(""), STANDARD_TERMINAL)
        .await;
    assert_eq!(done["status"], "Failed");
    assert_eq!(done["failure"]["code"], "AnalysisFailed");
    assert!(!done["failure"]["message"].as_str().unwrap_or("").is_empty());
    assert!(done.get("error").is_none() && done.get("success").is_none());
}

#[tokio::test]
async fn restart_links_its_monitor_through_location() {
    let rp = rp().await;
    rp.dp_widget("w1").await;
    for n in 1..=2 {
        let r = rp.dp_post("w1", "restart", None).await;
        assert_eq!(r.status, 202);
        assert!(r.h("operation-location").is_none());
        let loc = r.location();
        assert_link(&rp, &loc, "restarts");
        let (done, _) = rp.poll(&loc, STANDARD_TERMINAL).await;
        assert_eq!(done["status"], "Succeeded");
        assert_eq!(done["result"], json!({"widget": "w1", "restartCount": n}));
    }
}

#[tokio::test]
async fn rebuild_links_its_monitor_through_azure_async_operation() {
    let rp = rp().await;
    rp.dp_widget("w1").await;
    let r = rp.dp_post("w1", "rebuild", None).await;
    assert_eq!(r.status, 202);
    assert!(r.h("operation-location").is_none() && r.h("location").is_none());
    let aao = r.aao();
    assert_link(&rp, &aao, "rebuilds");
    let (done, _) = rp.poll(&aao, STANDARD_TERMINAL).await;
    assert_eq!(done["result"], json!({"widget": "w1", "generation": 1}));
    let f = rp
        .dp_post("w1", "rebuild", Some(&json!({"fail": true})))
        .await;
    let (done, _) = rp.poll(&f.aao(), STANDARD_TERMINAL).await;
    assert_eq!(
        (done["status"].as_str(), done["error"]["code"].as_str()),
        (Some("Failed"), Some("RebuildFailed"))
    );
}

#[tokio::test]
async fn snapshot_final_location_answers_after_success() {
    let rp = rp().await;
    rp.dp_widget("w1").await;
    let r = rp.dp_post("w1", "snapshot", None).await;
    assert_eq!(r.status, 202);
    let ol = r.h("operation-location").expect("OL").to_string();
    assert_link(&rp, &ol, "operations");
    let loc = r.location();
    assert_link(&rp, &loc, "snapshots");
    rp.get(&loc).await.assert_error(404, "ResourceNotFound");
    let (done, _) = rp.poll(&ol, STANDARD_TERMINAL).await;
    assert_eq!(done["status"], "Succeeded");
    let snap = rp.get(&loc).await;
    assert_eq!(snap.status, 200, "{}", snap.body);
    assert_eq!(snap.body, json!({"id": last_segment(&loc), "widget": "w1"}));
    assert_eq!(done["result"], snap.body);

    let f = rp
        .dp_post("w1", "snapshot", Some(&json!({"fail": true})))
        .await;
    let (done, _) = rp
        .poll(f.h("operation-location").unwrap_or(""), STANDARD_TERMINAL)
        .await;
    assert_eq!(done["status"], "Failed");
    assert_eq!(rp.get(&f.location()).await.status, 404);
}

#[tokio::test]
async fn actions_on_missing_widgets_and_bad_requests() {
    let rp = rp().await;
    for action in ["export", "analyze", "restart", "rebuild", "snapshot"] {
        rp.dp_post("nope", action, None)
            .await
            .assert_error(404, "ResourceNotFound");
    }
    rp.dp_post("nope", "fly", None)
        .await
        .assert_error(404, "NotFound");
    rp.get(&dp("things")).await.assert_error(404, "NotFound");
    rp.get(&dp("operations/unknown"))
        .await
        .assert_error(404, "OperationNotFound");
    rp.get(&dp("widgets/nope"))
        .await
        .assert_error(404, "ResourceNotFound");
    let m = rp
        .send(Method::PATCH, &dp("widgets/w1"), Some(&json!({})), &[])
        .await;
    m.assert_error(405, "MethodNotAllowed");
    assert_eq!(m.h("allow"), Some("GET, HEAD, PUT, DELETE"));
    rp.post(&dp("widgets/w1"))
        .await
        .assert_error(405, "MethodNotAllowed");
    rp.send(Method::DELETE, &dp("operations/x"), None, &[])
        .await
        .assert_error(405, "MethodNotAllowed");
    let put_url = format!("{}?api-version=2024-05-01", dp("widgets/w1"));
    for body in [
        "{",
        "",
        "[1]",
        r#"{"size": "big"}"#,
        r#"{"size": 0}"#,
        r#"{"size": 2, "fail": "yes"}"#,
    ] {
        rp.send_raw(Method::PUT, &put_url, Some(body), &[])
            .await
            .assert_error(400, "InvalidRequestContent");
    }
    rp.get(&dp("widgets/w1"))
        .await
        .assert_error(404, "ResourceNotFound");
    rp.dp_put("bad.", &json!({"size": 1}), &[])
        .await
        .assert_error(400, "InvalidResourceName");
    rp.dp_widget("w1").await;
    rp.send_raw(
        Method::POST,
        &format!("{}?api-version=2024-05-01", dp("widgets/w1:export")),
        Some("{nope"),
        &[],
    )
    .await
    .assert_error(400, "InvalidRequestContent");
    let unknown_action_op = rp.dp_post("w1", "restart", None).await.location();
    let id = last_segment(&unknown_action_op);
    rp.get(&dp(&format!("exports/{id}")))
        .await
        .assert_error(404, "OperationNotFound");
}

#[tokio::test]
async fn api_version_is_required_everywhere() {
    let rp = rp().await;
    for path in [
        "/dataplane/widgets/w1",
        "/dataplane/operations/x",
        "/dataplane/snapshots/x",
    ] {
        rp.send_raw(Method::GET, path, None, &[])
            .await
            .assert_error(400, "MissingApiVersionParameter");
        rp.get(&format!("{path}?api-version=2024-09-01-preview"))
            .await
            .assert_error(400, "InvalidApiVersionParameter");
    }
    rp.send_raw(
        Method::PUT,
        "/dataplane/widgets/w1",
        Some(r#"{"size": 1}"#),
        &[],
    )
    .await
    .assert_error(400, "MissingApiVersionParameter");
    assert_eq!(rp.get(&dp("widgets/w1")).await.status, 404, "nothing made");
}

#[tokio::test]
async fn links_follow_the_host_header() {
    let rp = rp().await;
    let r = rp
        .send(
            Method::PUT,
            &dp("widgets/w1"),
            Some(&json!({"size": 1})),
            &[
                ("host", "widgets.example.test:8443"),
                ("x-ms-client-request-id", "c-1"),
            ],
        )
        .await;
    let ol = r.h("operation-location").unwrap_or("");
    assert!(
        ol.starts_with("http://widgets.example.test:8443/dataplane/operations/"),
        "{ol}"
    );
    assert_eq!(r.h("x-ms-client-request-id"), Some("c-1"));
}

// ---- fault knobs ----

#[tokio::test]
async fn mon_no_operation_location() {
    let rp = rp_fault(Fault::MonNoOperationLocation).await;
    let r = rp.dp_put("w1", &json!({"size": 1}), &[]).await;
    assert_eq!(r.status, 201);
    assert!(r.h("operation-location").is_none());
    let id = r.h("operation-id").expect("Operation-Id").to_string();
    assert_eq!(rp.get(&dp(&format!("operations/{id}"))).await.status, 200);
    let d = rp.delete(&dp("widgets/w1")).await;
    assert!(d.h("operation-location").is_some(), "DELETE is untouched");
}

#[tokio::test]
async fn mon_result_while_running() {
    let rp = rp_fault(Fault::MonResultWhileRunning).await;
    let r = rp.dp_put("w1", &json!({"size": 1}), &[]).await;
    let ol = r.h("operation-location").unwrap_or("").to_string();
    let early = rp.get(&ol).await.body;
    assert!(["NotStarted", "Running"].contains(&early["status"].as_str().unwrap_or("")));
    assert_eq!(early["result"]["name"], "w1");
    rp.poll(&ol, STANDARD_TERMINAL).await;
    let a = rp.dp_post("w1", "analyze", None).await;
    let running = a.body;
    assert_eq!(running["status"], "Running");
    assert!(running.get("success").is_some());
}

#[tokio::test]
async fn mon_terminal_flips() {
    let rp = rp_fault(Fault::MonTerminalFlips).await;
    let r = rp.dp_put("w1", &json!({"size": 1}), &[]).await;
    let ol = r.h("operation-location").unwrap_or("").to_string();
    let (done, _) = rp.poll(&ol, STANDARD_TERMINAL).await;
    assert_eq!(done["status"], "Succeeded");
    // The read that confirms the end says Failed, then Succeeded again.
    let again = rp.get(&ol).await.body;
    assert_eq!(again["status"], "Failed");
    assert!(again.get("error").is_some());
    assert_eq!(rp.get(&ol).await.body["status"], "Succeeded");
}

#[tokio::test]
async fn mon_link_no_api_version() {
    let rp = rp_fault(Fault::MonLinkNoApiVersion).await;
    let r = rp.dp_put("w1", &json!({"size": 1}), &[]).await;
    let ol = r.h("operation-location").unwrap_or("").to_string();
    assert!(!ol.is_empty() && !ol.contains("api-version"), "{ol}");
    // Read with the api-version a client adds, the monitor works as ever.
    let (done, _) = rp
        .poll(&format!("{ol}?api-version=2024-05-01"), STANDARD_TERMINAL)
        .await;
    assert_eq!(done["status"], "Succeeded");
}

#[tokio::test]
async fn mon_failed_without_error() {
    let rp = rp_fault(Fault::MonFailedWithoutError).await;
    let r = rp
        .dp_put("w1", &json!({"size": 1, "fail": true}), &[])
        .await;
    let (done, _) = rp
        .poll(r.h("operation-location").unwrap_or(""), STANDARD_TERMINAL)
        .await;
    assert_eq!(done["status"], "Failed");
    assert!(done.get("error").is_none());
    let a = rp
        .dp_post("w1", "analyze", Some(&json!({"fail": true})))
        .await;
    let (done, _) = rp
        .poll(a.h("operation-location").unwrap_or(""), STANDARD_TERMINAL)
        .await;
    assert_eq!(done["status"], "Failed");
    assert!(done.get("failure").is_none());
}

#[tokio::test]
async fn mon_default_names_on_custom() {
    let rp = rp_fault(Fault::MonDefaultNamesOnCustom).await;
    rp.dp_widget("w1").await;
    let r = rp.dp_post("w1", "export", None).await;
    let ol = r.h("operation-location").unwrap_or("").to_string();
    let (done, _) = rp.poll(&ol, &["Succeeded", "Completed"]).await;
    assert_eq!(done["status"], "Succeeded");
    assert!(done["result"]["exportUrl"].is_string());
    let f = rp
        .dp_post("w1", "export", Some(&json!({"fail": true})))
        .await;
    let (done, _) = rp
        .poll(f.h("operation-location").unwrap_or(""), EXPORT_TERMINAL)
        .await;
    assert_eq!(done["status"], "Faulted", "only the success name changes");
}

#[tokio::test]
async fn mon_operation_id_ignored() {
    let rp = rp_fault(Fault::MonOperationIdIgnored).await;
    let body = json!({"size": 1});
    let a = rp.dp_put("w1", &body, &with_op_id("mine-1")).await;
    let echoed = a.h("operation-id").unwrap_or("").to_string();
    assert!(!echoed.is_empty() && echoed != "mine-1");
    let ol = a.h("operation-location").unwrap_or("").to_string();
    assert_eq!(last_segment(&ol), echoed);
    let b = rp.dp_put("w1", &body, &with_op_id("mine-1")).await;
    assert_eq!(
        b.h("operation-location"),
        Some(ol.as_str()),
        "still idempotent"
    );
}

#[tokio::test]
async fn mon_final_location_404() {
    let rp = rp_fault(Fault::MonFinalLocation404).await;
    rp.dp_widget("w1").await;
    let r = rp.dp_post("w1", "snapshot", None).await;
    let (done, _) = rp
        .poll(r.h("operation-location").unwrap_or(""), STANDARD_TERMINAL)
        .await;
    assert_eq!(done["status"], "Succeeded");
    rp.get(&r.location())
        .await
        .assert_error(404, "ResourceNotFound");
}

#[tokio::test]
async fn mon_repeat_starts_new() {
    let rp = rp_fault(Fault::MonRepeatStartsNew).await;
    let body = json!({"size": 1});
    let a = rp.dp_put("w1", &body, &with_op_id("rep-1")).await;
    let b = rp.dp_put("w1", &body, &with_op_id("rep-1")).await;
    assert_eq!(a.h("operation-id"), Some("rep-1"));
    assert_eq!(b.h("operation-id"), Some("rep-1"), "the id is still echoed");
    let (la, lb) = (
        a.h("operation-location").unwrap_or(""),
        b.h("operation-location").unwrap_or(""),
    );
    assert!(la.contains("/operations/rep-1?"), "{la}");
    assert_ne!(la, lb);
    assert_eq!(
        b.status, 200,
        "the repeat replaced the widget a second time"
    );
    assert_eq!(rp.get(lb).await.status, 200);
}
