//! Variant knobs of the request flows (PUT, PATCH, DELETE shapes): each switched on alone
//! shows its legal behaviour and the rest of the flow stays conforming. Operations are held
//! open by the gate (`gated(2)`), so "during the operation" is deterministic.

use crate::common;

use common::*;
use rpconform_refrp::Variant;
use serde_json::json;

#[tokio::test]
async fn sync_patch() {
    let rp = rp_variant(Variant::SyncPatch).await;
    let w = rp.with_widget().await;
    let before = rp.get(&w).await.etag();
    let p = rp.patch(&w, &json!({"properties": {"size": 7}})).await;
    assert_eq!((p.status, p.state()), (200, "Succeeded"));
    assert!(p.h("azure-asyncoperation").is_none() && p.h("location").is_none());
    assert!(p.h("retry-after").is_none());
    assert_ne!(p.etag(), before);
    let g = rp.get(&w).await;
    assert_eq!(
        (g.body["properties"]["size"].clone(), g.state()),
        (json!(7), "Succeeded")
    );
    // A failing synchronous PATCH answers the error and changes nothing.
    let f = rp
        .patch(&w, &json!({"properties": {"simulateFailure": true}}))
        .await;
    f.assert_error(400, "ProvisioningFailed");
    assert_eq!(rp.get(&w).await.etag(), p.etag());
    // PUT and DELETE stay asynchronous; PATCH during a running PUT is still refused.
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (200, "Updating"));
    rp.patch(&w, &json!({"properties": {"size": 2}}))
        .await
        .assert_error(409, "AnotherOperationInProgress");
    rp.wait(&r.aao()).await;
    assert_eq!(rp.delete(&w).await.status, 202);
}

#[tokio::test]
async fn put_provisioning_state_only() {
    let rp = rp_variant(Variant::PutProvisioningStateOnly).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (201, "Creating"));
    for h in ["azure-asyncoperation", "location", "retry-after"] {
        assert!(r.h(h).is_none(), "{h}");
    }
    assert_eq!(rp.poll_resource(&w).await.state(), "Succeeded");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (200, "Updating"));
    assert!(r.h("azure-asyncoperation").is_none());
    assert_eq!(rp.poll_resource(&w).await.state(), "Succeeded");
    // PATCH and DELETE keep their operation URLs.
    let p = rp.patch(&w, &json!({"tags": {"a": "b"}})).await;
    assert_eq!(rp.wait(&p.aao()).await["status"], "Succeeded");
    let d = rp.delete(&w).await;
    assert_eq!(rp.poll_location(&d.location()).await.status, 204);
}

#[tokio::test]
async fn delete_location_only() {
    let rp = rp_variant(Variant::DeleteLocationOnly).await;
    let w = rp.with_widget().await;
    let d = rp.delete(&w).await;
    assert_eq!((d.status, d.h("retry-after")), (202, Some("10")));
    assert!(d.h("azure-asyncoperation").is_none());
    assert_eq!(rp.get(&w).await.state(), "Deleting");
    assert_eq!(rp.poll_location(&d.location()).await.status, 204);
    assert_eq!(rp.get(&w).await.status, 404);
}

#[tokio::test]
async fn put_202_location() {
    let rp = rp_variant(Variant::Put202Location).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.body.clone()), (202, serde_json::Value::Null));
    assert!(r.h("azure-asyncoperation").is_none() && r.h("etag").is_none());
    assert_eq!(r.h("retry-after"), Some("10"));
    // Invisible until done: GET, list, children, another PUT, PATCH.
    rp.get(&w).await.assert_error(404, "ResourceNotFound");
    assert_eq!(rp.get(&widgets("rg1")).await.body["value"], json!([]));
    rp.put(&gadget("rg1", "w1", "g1"), &proxy_body())
        .await
        .assert_error(404, "ParentResourceNotFound");
    rp.put(&w, &widget_body())
        .await
        .assert_error(409, "AnotherOperationInProgress");
    // One operation at a time (OPS-01): a PATCH is refused like the PUT.
    rp.patch(&w, &json!({"tags": {}}))
        .await
        .assert_error(409, "AnotherOperationInProgress");
    let done = rp.poll_location(&r.location()).await;
    assert_eq!(done.status, 201);
    assert!(
        done.body["id"]
            .as_str()
            .unwrap_or("")
            .ends_with("/widgets/w1")
    );
    assert_eq!(done.state(), "Succeeded");
    assert_eq!(rp.get(&w).await.status, 200);
    // A replace keeps the 200 + Azure-AsyncOperation + Location answer.
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (200, "Updating"));
    rp.wait(&r.aao()).await;
    // A failing create ends with the error on Location; the resource then shows Failed.
    let f = widget("rg1", "bad");
    let mut body = widget_body();
    body["properties"]["simulateFailure"] = json!(true);
    let r = rp.put(&f, &body).await;
    rp.poll_location(&r.location())
        .await
        .assert_error(400, "ProvisioningFailed");
    assert_eq!(rp.get(&f).await.state(), "Failed");
    // A DELETE during an invisible create supersedes it: 204, nothing left.
    let x = widget("rg1", "x");
    let r = rp.put(&x, &widget_body()).await;
    assert_eq!(rp.delete(&x).await.status, 204);
    rp.poll_location(&r.location())
        .await
        .assert_error(409, "OperationCanceled");
    assert_eq!(rp.get(&x).await.status, 404);
}

#[tokio::test]
async fn aao_only_put() {
    let rp = rp_variant(Variant::AaoOnlyPut).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(
        (r.status, r.state(), r.h("retry-after")),
        (201, "Creating", Some("10"))
    );
    assert!(r.h("location").is_none());
    assert_eq!(rp.wait(&r.aao()).await["status"], "Succeeded");
    let p = rp.patch(&w, &json!({"tags": {}})).await;
    assert!(p.h("location").is_some());
    rp.wait(&p.aao()).await;
}

#[tokio::test]
async fn patch_202() {
    let rp = rp_variant(Variant::Patch202).await;
    let w = rp.with_widget().await;
    let p = rp.patch(&w, &json!({"properties": {"size": 9}})).await;
    assert_eq!((p.status, p.body.clone()), (202, serde_json::Value::Null));
    assert!(p.h("azure-asyncoperation").is_some());
    assert_eq!(p.h("retry-after"), Some("10"));
    assert_eq!(rp.get(&w).await.state(), "Updating");
    let done = rp.poll_location(&p.location()).await;
    assert_eq!((done.status, done.state()), (200, "Succeeded"));
    assert_eq!(done.body["properties"]["size"], 9);
}

#[tokio::test]
async fn delete_sync_200() {
    let rp = rp_variant(Variant::DeleteSync200).await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    rp.create(&g, &proxy_body()).await;
    let r = rp.put(&g, &proxy_body()).await;
    let d = rp.delete(&g).await;
    assert_eq!((d.status, d.body.clone()), (200, serde_json::Value::Null));
    assert!(d.h("location").is_none());
    let canceled = rp.wait(&r.aao()).await;
    assert_eq!(canceled["status"], "Canceled");
    assert_eq!(canceled["error"]["code"], "OperationCanceled");
    assert_eq!(rp.get(&g).await.status, 404);
    assert_eq!(rp.delete(&g).await.status, 204);
    // A refused delete is still refused.
    let id = rp.get(&w).await.body["id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    rp.create(
        &link("rg1", "l"),
        &json!({"location": "eastus", "properties": {"widgetId": id}}),
    )
    .await;
    rp.delete(&w).await.assert_error(409, "ResourceInUse");
    assert_eq!(rp.delete(&link("rg1", "l")).await.status, 200);
    assert_eq!(rp.delete(&w).await.status, 200);
    assert_eq!(rp.get(&widgets("rg1")).await.body["value"], json!([]));
}

#[tokio::test]
async fn delete_final_200() {
    let rp = rp_variant(Variant::DeleteFinal200).await;
    let w = rp.with_widget().await;
    let d = rp.delete(&w).await;
    let done = rp.poll_location(&d.location()).await;
    assert_eq!(
        (done.status, done.body.clone()),
        (200, serde_json::Value::Null)
    );
    assert_eq!(rp.get(&w).await.status, 404);
}

#[tokio::test]
async fn delete_hides_at_once() {
    let rp = rp_variant(Variant::DeleteHidesAtOnce).await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    let g2 = gadget("rg1", "w1", "g2");
    rp.create(&g, &proxy_body()).await;
    rp.create(&g2, &proxy_body()).await;
    // A nested delete still shows Deleting, its parent Updating (PROP-05).
    let dg = rp.delete(&g2).await;
    assert_eq!(rp.get(&g2).await.state(), "Deleting");
    assert_eq!(rp.get(&w).await.state(), "Updating");
    rp.wait(&dg.aao()).await;
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    rp.get(&w).await.assert_error(404, "ResourceNotFound");
    assert_eq!(rp.get(&widgets("rg1")).await.body["value"], json!([]));
    rp.get(&g).await.assert_error(404, "ParentResourceNotFound");
    rp.put(&w, &widget_body())
        .await
        .assert_error(409, "AnotherOperationInProgress");
    let again = rp.delete(&w).await;
    assert_eq!((again.status, again.aao()), (202, d.aao()));
    assert_eq!(rp.poll_location(&d.location()).await.status, 204);
}

#[tokio::test]
async fn fast_operations() {
    let rp = rp_with(gated(3).with_variant(Variant::FastOperations)).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (201, "Succeeded"));
    assert_eq!(rp.get(&r.aao()).await.body["status"], "Succeeded");
    assert_eq!(rp.get(&r.location()).await.status, 200);
    let p = rp.patch(&w, &json!({"properties": {"size": 4}})).await;
    assert_eq!((p.status, p.state()), (200, "Succeeded"));
    let a = rp.post(&format!("{w}/restart")).await;
    assert_eq!(rp.get(&a.location()).await.body["restartCount"], 1);
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert_eq!(rp.get(&w).await.status, 404);
    assert_eq!(rp.get(&d.location()).await.status, 204);
}

#[tokio::test]
async fn custom_running_states() {
    let rp = rp_variant(Variant::CustomRunningStates).await;
    let w = widget("rg1", "w1");
    rp.make_rg("rg1").await;
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(r.state(), "Accepted");
    assert_eq!(rp.get(&w).await.state(), "Accepted");
    let s = rp.get(&r.aao()).await.body["status"].clone();
    assert!(
        ["NotStarted", "Dequeued", "provisioningResources"].contains(&s.as_str().unwrap_or("")),
        "{s}"
    );
    rp.wait(&r.aao()).await;
    let g = gadget("rg1", "w1", "g1");
    let s1 = sprocket("rg1", "w1", "g1", "s1");
    let r = rp.put(&g, &proxy_body()).await;
    assert_eq!(r.state(), "Created");
    assert_eq!(rp.get(&w).await.state(), "Updating");
    rp.wait(&r.aao()).await;
    let r = rp.put(&s1, &proxy_body()).await;
    assert_eq!(r.state(), "InProgress");
    rp.wait(&r.aao()).await;
    // Updates and deletes keep the state-diagram names.
    let p = rp.patch(&g, &json!({"properties": {"size": 3}})).await;
    assert_eq!(p.state(), "Updating");
    rp.wait(&p.aao()).await;
    // The echo rule compares with the value shown.
    let mut echo = rp.get(&w).await.body;
    echo["properties"]["provisioningState"] = json!("Succeeded");
    let r = rp.put(&w, &echo).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    // Operation status values go NotStarted → Dequeued → provisioningResources (with time;
    // held open by the read gate, one read each).
    let rp = rp_with(gated(3).with_variant(Variant::CustomRunningStates)).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&w, &widget_body()).await;
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(rp.get(&r.aao()).await.body["status"].clone());
    }
    assert_eq!(
        seen,
        [
            "NotStarted",
            "Dequeued",
            "provisioningResources",
            "Succeeded"
        ]
    );
}

#[tokio::test]
async fn new_location_per_poll() {
    let rp = rp_with(gated(3).with_variant(Variant::NewLocationPerPoll)).await;
    let w = rp.with_widget().await;
    let d = rp.delete(&w).await;
    let first = d.location();
    let p1 = rp.get(&first).await;
    assert_eq!(p1.status, 202);
    let second = p1.location();
    assert_ne!(second, first);
    assert!(second.contains("/operationResults/") && second.contains("api-version="));
    let p2 = rp.get(&second).await;
    assert_eq!(p2.status, 202);
    assert_ne!(p2.location(), second);
    // An old URL keeps answering 202 while the operation runs.
    assert_eq!(rp.get(&first).await.status, 202);
    assert_eq!(rp.get(&p2.location()).await.status, 204);
    assert_eq!(rp.get(&first).await.status, 204);
    assert_eq!(rp.get(&second).await.status, 204);
    // A generation never handed out is unknown.
    let unknown = format!(
        "{}.99?api-version={API}",
        first.split('?').next().unwrap_or("")
    );
    rp.get(&unknown)
        .await
        .assert_error(404, "OperationNotFound");
}

#[tokio::test]
async fn location_change_ignored() {
    let rp = rp_variant(Variant::LocationChangeIgnored).await;
    let w = rp.with_widget().await;
    let mut b = widget_body();
    b["location"] = json!("westus");
    let r = rp.put(&w, &b).await;
    assert_eq!(r.status, 200, "{}", r.body);
    rp.wait(&r.aao()).await;
    let p = rp.patch(&w, &json!({"location": "westus"})).await;
    assert_eq!(p.status, 200, "{}", p.body);
    rp.wait(&p.aao()).await;
    assert_eq!(rp.get(&w).await.body["location"], "eastus");
}
