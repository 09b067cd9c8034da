//! Asynchronous behaviour of the conforming RP: operations and their two read channels,
//! one active operation per resource, cancel on DELETE, propagation on three levels,
//! dependencies, the restart action and identity-scoped status reads.

use crate::common;

use common::*;
use reqwest::Method;
use serde_json::{Value, json};

fn is_iso(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| chrono::DateTime::parse_from_rfc3339(s).is_ok())
}

#[tokio::test]
async fn create_runs_then_succeeds_on_every_channel() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(r.status, 201);
    assert_eq!(r.state(), "Creating");
    assert_eq!(r.h("retry-after"), Some("10"));
    assert_eq!(r.body["location"], "eastus");
    assert!(r.etag().starts_with('"'));
    let (aao, loc) = (r.aao(), r.location());
    assert!(aao.starts_with("http://127.0.0.1:"));
    let g = rp.get(&w).await;
    assert_eq!((g.status, g.state()), (200, "Creating"));
    let st = rp.get(&aao).await;
    assert_eq!(st.status, 200);
    assert_eq!(st.body["status"], "InProgress");
    let op_id = aao
        .split('?')
        .next()
        .unwrap_or("")
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_string();
    assert_eq!(st.body["name"], op_id.as_str());
    assert!(aao.starts_with(&format!(
        "{}{}",
        rp.base,
        st.body["id"].as_str().unwrap_or("-")
    )));
    assert!(is_iso(&st.body["startTime"]));
    assert!(st.body.get("endTime").is_none() && st.body.get("error").is_none());
    assert!(st.body["percentComplete"].as_u64().is_some_and(|p| p < 100));
    let lr = rp.get(&loc).await;
    assert_eq!(lr.status, 202);
    assert_eq!(lr.location(), loc);
    assert_eq!(lr.h("retry-after"), Some("10"));
    let done = rp.wait(&aao).await;
    assert_eq!(done["status"], "Succeeded");
    assert!(is_iso(&done["endTime"]));
    assert_eq!(done["percentComplete"], 100);
    assert_eq!(done["startTime"], st.body["startTime"]);
    let lr = rp.get(&loc).await;
    assert_eq!(lr.status, 200);
    assert_eq!(lr.body["id"], w);
    assert_eq!(lr.state(), "Succeeded");
    let g = rp.get(&w).await;
    assert_eq!(g.state(), "Succeeded");
    assert_eq!(g.etag(), r.etag());
    // replace and patch answer 200 with Updating
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (200, "Updating"));
    assert_eq!(rp.get(&w).await.state(), "Updating");
    rp.wait(&r.aao()).await;
    let r = rp
        .patch(&w, &json!({"properties": {"description": "new"}}))
        .await;
    assert_eq!((r.status, r.state()), (200, "Updating"));
    assert!(r.h("location").is_some() && r.h("retry-after").is_some());
    rp.wait(&r.aao()).await;
    let g = rp.get(&w).await;
    assert_eq!(
        (g.state(), g.body["properties"]["description"].clone()),
        ("Succeeded", json!("new"))
    );
}

#[tokio::test]
async fn simulated_failure_ends_failed_everywhere() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let mut body = widget_body();
    body["properties"]["simulateFailure"] = json!(true);
    let r = rp.put(&w, &body).await;
    assert_eq!(r.status, 201);
    let done = rp.wait(&r.aao()).await;
    assert_eq!(done["status"], "Failed");
    assert_eq!(done["error"]["code"], "ProvisioningFailed");
    assert!(
        done["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    rp.get(&r.location())
        .await
        .assert_error(400, "ProvisioningFailed");
    assert_eq!(rp.get(&w).await.state(), "Failed");
    // a later good PUT recovers
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
}

#[tokio::test]
async fn delete_runs_then_resource_is_gone() {
    let rp = rp().await;
    let w = rp.with_widget().await;
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert!(d.body.is_null());
    assert_eq!(d.h("retry-after"), Some("10"));
    let (aao, loc) = (d.aao(), d.location());
    assert_eq!(rp.get(&w).await.state(), "Deleting");
    assert_eq!(
        rp.get(&widgets("rg1")).await.body["value"][0]["properties"]["provisioningState"],
        "Deleting"
    );
    let again = rp.delete(&w).await;
    assert_eq!(again.status, 202);
    assert_eq!(again.aao(), aao, "a repeated DELETE joins the running one");
    assert_eq!(rp.get(&loc).await.status, 202);
    assert_eq!(rp.wait(&aao).await["status"], "Succeeded");
    assert_eq!(rp.get(&loc).await.status, 204);
    rp.get(&w).await.assert_error(404, "ResourceNotFound");
    assert_eq!(rp.get(&widgets("rg1")).await.body["value"], json!([]));
    assert_eq!(rp.delete(&w).await.status, 204);
}

#[tokio::test]
async fn one_active_operation_and_delete_cancels() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    rp.put(&w, &widget_body())
        .await
        .assert_error(409, "AnotherOperationInProgress");
    rp.patch(&w, &json!({"tags": {}}))
        .await
        .assert_error(409, "AnotherOperationInProgress");
    rp.post(&format!("{w}/restart"))
        .await
        .assert_error(409, "AnotherOperationInProgress");
    let g = rp.put(&gadget("rg1", "w1", "g1"), &proxy_body()).await;
    g.assert_error(409, "AnotherOperationInProgress");
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    let first = rp.get(&r.aao()).await.body;
    assert_eq!(first["status"], "Canceled");
    assert_eq!(first["error"]["code"], "OperationCanceled");
    assert!(is_iso(&first["endTime"]));
    rp.get(&r.location())
        .await
        .assert_error(409, "OperationCanceled");
    assert_eq!(rp.get(&w).await.state(), "Deleting");
    assert_eq!(rp.wait(&d.aao()).await["status"], "Succeeded");
    // terminal statuses never change
    assert_eq!(rp.get(&r.aao()).await.body, first);
    assert_eq!(rp.get(&w).await.status, 404);
}

#[tokio::test]
async fn restart_action() {
    let rp = rp().await;
    let w = rp.with_widget().await;
    rp.post(&format!("{}/restart", widget("rg1", "nope")))
        .await
        .assert_error(404, "ResourceNotFound");
    let r = rp.post(&format!("{w}/restart")).await;
    assert_eq!(r.status, 202);
    assert_eq!(r.h("retry-after"), Some("10"));
    assert_eq!(rp.get(&r.location()).await.status, 202);
    rp.post(&format!("{w}/restart"))
        .await
        .assert_error(409, "AnotherOperationInProgress");
    assert_eq!(
        rp.get(&w).await.state(),
        "Succeeded",
        "an action does not change provisioningState"
    );
    let done = rp.wait(&r.aao()).await;
    assert_eq!(done["status"], "Succeeded");
    let res = rp.get(&r.location()).await;
    assert_eq!(
        (res.status, res.body),
        (200, json!({"restartCount": 1, "status": "Restarted"}))
    );
    let r = rp.post(&format!("{w}/restart")).await;
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&r.location()).await.body["restartCount"], 2);
}

struct Tree {
    w: String,
    g1: String,
    g2: String,
    s1: String,
    s2: String,
}

async fn tree(rp: &Rp) -> Tree {
    let w = rp.with_widget().await;
    let t = Tree {
        w,
        g1: gadget("rg1", "w1", "g1"),
        g2: gadget("rg1", "w1", "g2"),
        s1: sprocket("rg1", "w1", "g1", "s1"),
        s2: sprocket("rg1", "w1", "g2", "s2"),
    };
    // siblings can be created concurrently
    let a = rp.put(&t.g1, &proxy_body()).await;
    let b = rp.put(&t.g2, &proxy_body()).await;
    assert_eq!((a.status, b.status), (201, 201));
    rp.wait(&a.aao()).await;
    rp.wait(&b.aao()).await;
    rp.create(&t.s1, &proxy_body()).await;
    rp.create(&t.s2, &proxy_body()).await;
    t
}

async fn states(rp: &Rp, paths: &[&String]) -> Vec<String> {
    let mut out = Vec::new();
    for p in paths {
        let r = rp.get(p).await;
        out.push(if r.status == 404 {
            "404".into()
        } else {
            r.state().to_string()
        });
    }
    out
}

#[tokio::test]
async fn propagation_on_three_levels() {
    let rp = rp().await;
    let t = tree(&rp).await;
    let all = [&t.w, &t.g1, &t.g2, &t.s1, &t.s2];
    // Case 1: parent update → every descendant shows the same state.
    let r = rp.patch(&t.w, &json!({"properties": {"size": 4}})).await;
    assert_eq!(states(&rp, &all).await, ["Updating"; 5]);
    rp.patch(&t.s2, &proxy_body())
        .await
        .assert_error(409, "AnotherOperationInProgress");
    rp.wait(&r.aao()).await;
    assert_eq!(states(&rp, &all).await, ["Succeeded"; 5]);
    // Case 2: mid-level child update → ancestors, itself, descendants; not siblings.
    let mut body = proxy_body();
    body["properties"]["simulateFailure"] = json!(true);
    let r = rp.put(&t.g1, &body).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        states(&rp, &all).await,
        ["Updating", "Updating", "Succeeded", "Updating", "Succeeded"]
    );
    assert_eq!(rp.wait(&r.aao()).await["status"], "Failed");
    assert_eq!(
        states(&rp, &all).await,
        ["Failed", "Failed", "Succeeded", "Failed", "Succeeded"]
    );
    // A sibling subtree stays free while a child update runs.
    let r = rp
        .patch(&t.g1, &json!({"properties": {"simulateFailure": false}}))
        .await;
    let ok = rp.patch(&t.s2, &proxy_body()).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    rp.wait(&ok.aao()).await;
    rp.wait(&r.aao()).await;
    assert_eq!(states(&rp, &all).await, ["Succeeded"; 5]);
    // Deleting a child: child and its subtree Deleting, ancestors Updating.
    let d = rp.delete(&t.g1).await;
    assert_eq!(
        states(&rp, &all).await,
        ["Updating", "Deleting", "Succeeded", "Deleting", "Succeeded"]
    );
    rp.wait(&d.aao()).await;
    assert_eq!(
        states(&rp, &all).await,
        ["Succeeded", "404", "Succeeded", "404", "Succeeded"]
    );
}

#[tokio::test]
async fn parent_delete_cancels_child_operations_and_removes_children() {
    let rp = rp().await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    let c = rp.put(&g, &proxy_body()).await;
    assert_eq!(c.status, 201);
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert_eq!(rp.get(&g).await.state(), "Deleting");
    let child = rp.wait(&c.aao()).await;
    assert_eq!(child["status"], "Canceled");
    assert_eq!(child["error"]["code"], "OperationCanceled");
    rp.wait(&d.aao()).await;
    assert_eq!(rp.get(&g).await.status, 404);
    assert_eq!(rp.get(&format!("{w}/gadgets")).await.status, 404);
}

#[tokio::test]
async fn dependency_refusal_then_success() {
    let rp = rp().await;
    let w = rp.with_widget().await;
    let l = link("rg1", "l1");
    let missing = json!({"location": "eastus", "properties": {"widgetId": widget("rg1", "nope")}});
    rp.put(&l, &missing)
        .await
        .assert_error(400, "InvalidReference");
    let body = json!({"location": "eastus", "properties": {"widgetId": w.to_uppercase()}});
    rp.create(&l, &body).await;
    // the link's state never follows its widget
    let u = rp.patch(&w, &json!({"properties": {"size": 2}})).await;
    assert_eq!(rp.get(&l).await.state(), "Succeeded");
    rp.wait(&u.aao()).await;
    let before = rp.get(&w).await;
    rp.delete(&w).await.assert_error(409, "ResourceInUse");
    let after = rp.get(&w).await;
    assert_eq!(
        (after.status, after.state(), after.etag()),
        (200, "Succeeded", before.etag())
    );
    assert_eq!(rp.get(&l).await.state(), "Succeeded");
    // A link already being deleted no longer blocks its widget.
    let dl = rp.delete(&l).await;
    assert_eq!(dl.status, 202);
    let dw = rp.delete(&w).await;
    assert_eq!(dw.status, 202, "{}", dw.body);
    rp.wait(&dl.aao()).await;
    rp.wait(&dw.aao()).await;
    assert_eq!(
        (rp.get(&w).await.status, rp.get(&l).await.status),
        (404, 404)
    );
}

#[tokio::test]
async fn status_reads_are_scoped_to_the_starting_identity() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let who = [
        ("x-ms-home-tenant-id", "tenant-a"),
        ("x-ms-client-object-id", "client-a"),
    ];
    let r = rp
        .send(
            Method::PUT,
            &widget("rg1", "w1"),
            Some(&widget_body()),
            &who,
        )
        .await;
    for url in [r.aao(), r.location()] {
        let ok = rp.send(Method::GET, &url, None, &who).await;
        assert!(ok.status == 200 || ok.status == 202);
        assert!(
            rp.get(&url).await.status < 300,
            "no identity headers: allowed"
        );
        let other_tenant = [
            ("x-ms-home-tenant-id", "tenant-b"),
            ("x-ms-client-object-id", "client-a"),
        ];
        rp.send(Method::GET, &url, None, &other_tenant)
            .await
            .assert_error(404, "OperationNotFound");
        let other_client = [
            ("x-ms-home-tenant-id", "tenant-a"),
            ("x-ms-client-object-id", "client-b"),
        ];
        rp.send(Method::GET, &url, None, &other_client)
            .await
            .assert_error(404, "OperationNotFound");
    }
    let unknown = r.aao().replace(
        &r.aao()
            .split('?')
            .next()
            .unwrap_or("")
            .rsplit('/')
            .next()
            .unwrap_or("x")
            .to_string(),
        "11111111-2222-4333-8444-555555555555",
    );
    rp.get(&unknown)
        .await
        .assert_error(404, "OperationNotFound");
}

#[tokio::test]
async fn operations_complete_under_concurrent_load() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let mut handles = Vec::new();
    for i in 0..8 {
        let client = rp.client.clone();
        let url = rp.url(&widget("rg1", &format!("c{i}")));
        handles.push(tokio::spawn(async move {
            client
                .put(url)
                .header("content-type", "application/json")
                .body(widget_body().to_string())
                .send()
                .await
                .map(|r| {
                    let aao = r
                        .headers()
                        .get("azure-asyncoperation")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    (r.status().as_u16(), aao)
                })
        }));
    }
    for h in handles {
        let (status, aao) = h.await.ok().and_then(Result::ok).expect("an answer");
        assert_eq!(status, 201);
        assert_eq!(
            rp.wait(&aao.expect("Azure-AsyncOperation")).await["status"],
            "Succeeded"
        );
    }
    let list = rp
        .get(&format!("{}?api-version={API}&x=1", widgets("rg1")))
        .await;
    assert!(
        list.body["value"]
            .as_array()
            .expect("value")
            .iter()
            .all(|v| v["properties"]["provisioningState"] == "Succeeded")
    );
}
