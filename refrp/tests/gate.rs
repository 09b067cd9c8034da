//! The hold-open gate (`Settings::complete_after_reads`): with op_duration 0, an operation
//! still runs until it has been observed N times through its own channels; reads of other
//! resources do not count. Every async flow is covered: PUT, PATCH, DELETE, the restart
//! action, parent/child propagation, dependencies, provisioningState-only PUTs, data-plane
//! monitors and task API tasks.

use crate::common;

use common::*;
use reqwest::Method;
use rpconform_refrp::Variant;
use serde_json::json;

#[tokio::test]
async fn status_reads_hold_the_operation_and_other_reads_do_not_count() {
    let rp = rp_with(gated(3)).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (201, "Creating"));
    let aao = r.aao();
    // Read 1 of its status URL.
    assert_eq!(rp.get(&aao).await.body["status"], "InProgress");
    // Reads of other things (the group, the list, the resource itself) do not count.
    for _ in 0..5 {
        assert_eq!(rp.get(&rg("rg1")).await.status, 200);
        assert_eq!(rp.get(&widgets("rg1")).await.status, 200);
        assert_eq!(rp.get(&w).await.state(), "Creating");
    }
    // Reads 2 and 3 still see it running; the 4th may see the end.
    assert_eq!(rp.get(&aao).await.body["status"], "InProgress");
    assert_eq!(rp.get(&r.location()).await.status, 202);
    assert_eq!(rp.get(&aao).await.body["status"], "Succeeded");
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
    let done = rp.get(&aao).await.body;
    assert!(done["endTime"].as_str() >= done["startTime"].as_str());
}

#[tokio::test]
async fn location_polls_count_too() {
    let rp = rp_with(gated(2)).await;
    let w = rp.with_widget().await;
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert_eq!(rp.get(&d.location()).await.status, 202);
    assert_eq!(rp.get(&w).await.state(), "Deleting");
    assert_eq!(rp.get(&d.location()).await.status, 202);
    assert_eq!(rp.get(&d.location()).await.status, 204);
    assert_eq!(rp.get(&w).await.status, 404);
}

#[tokio::test]
async fn patch_restart_and_propagation_are_held() {
    let rp = rp_with(gated(2)).await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    let s = sprocket("rg1", "w1", "g1", "s1");
    rp.create(&g, &proxy_body()).await;
    rp.create(&s, &proxy_body()).await;
    // A child update: the parent and the grandchild show Updating until the child's status
    // was read twice, however often they are read themselves.
    let p = rp.patch(&g, &json!({"properties": {"size": 2}})).await;
    for _ in 0..4 {
        assert_eq!(rp.get(&w).await.state(), "Updating");
        assert_eq!(rp.get(&s).await.state(), "Updating");
    }
    rp.get(&p.aao()).await;
    rp.get(&p.aao()).await;
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
    assert_eq!(rp.get(&s).await.state(), "Succeeded");
    // The restart action.
    let a = rp.post(&format!("{w}/restart")).await;
    assert_eq!(a.status, 202);
    assert_eq!(rp.get(&a.location()).await.status, 202);
    assert_eq!(rp.get(&a.location()).await.status, 202);
    let done = rp.get(&a.location()).await;
    assert_eq!(
        (done.status, done.body["restartCount"].clone()),
        (200, json!(1))
    );
}

#[tokio::test]
async fn dependency_updates_are_held() {
    let rp = rp_with(gated(2)).await;
    let w = rp.with_widget().await;
    let l = link("rg1", "l1");
    let full_id = rp.get(&w).await.body["id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    rp.create(
        &l,
        &json!({"location": "eastus", "properties": {"widgetId": full_id}}),
    )
    .await;
    let p = rp.patch(&w, &json!({"properties": {"size": 5}})).await;
    for _ in 0..3 {
        assert_eq!(rp.get(&w).await.state(), "Updating");
        assert_eq!(rp.get(&l).await.state(), "Succeeded");
    }
    rp.wait(&p.aao()).await;
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
}

#[tokio::test]
async fn provisioning_state_only_puts_count_resource_gets() {
    let rp = rp_with(gated(2).with_variant(Variant::PutProvisioningStateOnly)).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (201, "Creating"));
    assert!(r.h("azure-asyncoperation").is_none() && r.h("location").is_none());
    // Reads of another resource do not count; GETs of the resource do.
    for _ in 0..3 {
        rp.get(&widgets("rg1")).await;
    }
    assert_eq!(rp.get(&w).await.state(), "Creating");
    assert_eq!(rp.get(&w).await.state(), "Creating");
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
}

#[tokio::test]
async fn dataplane_monitors_are_held() {
    let rp = rp_with(gated(2)).await;
    let url = |p: &str| format!("{p}?api-version=2024-05-01");
    let r = rp
        .send(
            Method::PUT,
            &url("/dataplane/widgets/d1"),
            Some(&json!({"size": 1})),
            &[],
        )
        .await;
    let monitor = r
        .h("operation-location")
        .expect("Operation-Location")
        .to_string();
    for _ in 0..4 {
        let w = rp.get(&url("/dataplane/widgets/d1")).await;
        assert_eq!(w.body["provisioningState"], "Running");
    }
    // Its phases follow the reads too: NotStarted on the first, Running on the next.
    assert_eq!(rp.get(&monitor).await.body["status"], "NotStarted");
    assert_eq!(rp.get(&monitor).await.body["status"], "Running");
    assert_eq!(rp.get(&monitor).await.body["status"], "Succeeded");
    let w = rp.get(&url("/dataplane/widgets/d1")).await;
    assert_eq!(w.body["provisioningState"], "Succeeded");
}

#[tokio::test]
async fn tasks_are_held_by_task_reads() {
    let rp = rp_with(gated(2)).await;
    let r = rp
        .send_raw(
            Method::POST,
            "/v1/subscriptions",
            Some(r#"{"name": "s1"}"#),
            &[],
        )
        .await;
    assert_eq!(r.status, 202);
    let task = format!("/v1/tasks/{}", r.body["taskId"].as_str().unwrap_or(""));
    for _ in 0..3 {
        rp.send_raw(Method::GET, "/v1/tasks", None, &[]).await;
    }
    let read = |t: &str| {
        let t = t.to_string();
        let rp = &rp;
        async move { rp.send_raw(Method::GET, &t, None, &[]).await.body }
    };
    // Its phases follow the reads too: received on the first, processing on the next.
    assert_eq!(read(&task).await["status"], "received");
    assert_eq!(read(&task).await["status"], "processing-in-progress");
    let done = read(&task).await;
    assert_eq!(done["status"], "processing-completed");
    let sub = format!("/v1/subscriptions/{}", done["response"]["resourceId"]);
    // The subscription's provisioning is held by reads of the subscription.
    assert_eq!(read(&sub).await["status"], "pending");
    assert_eq!(read(&sub).await["status"], "pending");
    assert_eq!(read(&sub).await["status"], "active");
}

#[tokio::test]
async fn the_gate_is_off_by_default() {
    let rp = rp_with(gated(0)).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    assert_eq!(rp.get(&r.aao()).await.body["status"], "Succeeded");
}
