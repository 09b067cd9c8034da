//! Each ARM fault knob, switched on alone, shows its deviation. (The conforming behaviour it
//! replaces is tested in `api.rs` and `lifecycle.rs`; the `mon-*` and task knobs are tested in
//! `dataplane.rs` and `tasks.rs`.)

use crate::common;

use common::*;
use reqwest::Method;
use rpconform_refrp::Fault;
use serde_json::json;

#[tokio::test]
async fn relative_location() {
    let rp = rp_fault(Fault::RelativeLocation).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    assert!(
        r.location().starts_with("/subscriptions/"),
        "{}",
        r.location()
    );
    assert!(r.aao().starts_with("http://"));
    let poll = rp.get(&r.location()).await;
    assert_eq!(poll.status, 202);
    assert!(poll.location().starts_with("/subscriptions/"));
}

#[tokio::test]
async fn retry_after_date() {
    let rp = rp_fault(Fault::RetryAfterDate).await;
    let w = rp.with_widget().await;
    let d = rp.delete(&w).await;
    let ra = d.h("retry-after").expect("Retry-After");
    assert!(
        ra.ends_with("GMT") && !ra.chars().all(|c| c.is_ascii_digit()),
        "{ra}"
    );
}

#[tokio::test]
async fn retry_after_out_of_range() {
    let rp = rp_fault(Fault::RetryAfterOutOfRange).await;
    let w = rp.with_widget().await;
    let d = rp.delete(&w).await;
    assert_eq!((d.status, d.h("retry-after")), (202, Some("5")));
    assert_eq!(rp.get(&d.location()).await.h("retry-after"), Some("5"));
}

#[tokio::test]
async fn delete_no_location() {
    let rp = rp_fault(Fault::DeleteNoLocation).await;
    let w = rp.with_widget().await;
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert!(d.h("location").is_none());
    assert!(d.h("azure-asyncoperation").is_some());
}

#[tokio::test]
async fn opresult_200_while_running() {
    let rp = rp_fault(Fault::OpResult200WhileRunning).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let poll = rp.get(&r.location()).await;
    assert_eq!((poll.status, poll.state()), (200, "Creating"));
    rp.wait(&r.aao()).await;
    let d = rp.delete(&widget("rg1", "w1")).await;
    assert_eq!(rp.get(&d.location()).await.status, 200);
}

#[tokio::test]
async fn opstatus_404_while_running() {
    let rp = rp_fault(Fault::OpStatus404WhileRunning).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    rp.get(&r.aao())
        .await
        .assert_error(404, "OperationNotFound");
    // Once the gate lets it end, the same URL answers.
    let done = rp.read_until(&r.aao(), |s| s.status != 404).await;
    assert_eq!(done.body["status"], "Succeeded");
}

#[tokio::test]
async fn opstatus_500_while_running() {
    let rp = rp_fault(Fault::OpStatus500WhileRunning).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let s = rp.get(&r.aao()).await;
    s.assert_error(500, "InternalServerError");
    assert!(s.h("retry-after").is_none());
    let done = rp.read_until(&r.aao(), |s| s.status != 500).await;
    assert_eq!(done.body["status"], "Succeeded");
}

#[tokio::test]
async fn failed_without_error() {
    let rp = rp_fault(Fault::FailedWithoutError).await;
    rp.make_rg("rg1").await;
    let mut body = widget_body();
    body["properties"]["simulateFailure"] = json!(true);
    let r = rp.put(&widget("rg1", "w1"), &body).await;
    let done = rp.wait(&r.aao()).await;
    assert_eq!(done["status"], "Failed");
    assert!(done.get("error").is_none());
}

#[tokio::test]
async fn canceled_without_error() {
    let rp = rp_fault(Fault::CanceledWithoutError).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    rp.delete(&widget("rg1", "w1")).await;
    let done = rp.get(&r.aao()).await.body;
    assert_eq!(done["status"], "Canceled");
    assert!(done.get("error").is_none());
}

#[tokio::test]
async fn unknown_terminal_status() {
    let rp = rp_fault(Fault::UnknownTerminalStatus).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let done = rp
        .read_until(&r.aao(), |s| s.body["status"] != "InProgress")
        .await;
    assert_eq!(done.body["status"], "Completed");
    assert_eq!(rp.get(&widget("rg1", "w1")).await.state(), "Succeeded");
}

#[tokio::test]
async fn opstatus_name_mismatch() {
    let rp = rp_fault(Fault::OpStatusNameMismatch).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let b = rp.get(&r.aao()).await.body;
    let last = b["id"]
        .as_str()
        .unwrap_or("")
        .rsplit('/')
        .next()
        .unwrap_or("")
        .to_string();
    assert_ne!(b["name"], last.as_str());
    assert_eq!(b["name"], "w1");
}

#[tokio::test]
async fn opstatus_bad_time() {
    let rp = rp_fault(Fault::OpStatusBadTime).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let done = rp.wait(&r.aao()).await;
    for k in ["startTime", "endTime"] {
        let t = done[k].as_str().unwrap_or("");
        assert!(chrono::DateTime::parse_from_rfc3339(t).is_err(), "{t}");
        assert!(t.ends_with(" AM") || t.ends_with(" PM"), "{t}");
        assert_eq!(&t[2..3], "/");
    }
}

#[tokio::test]
async fn percent_out_of_range() {
    let rp = rp_fault(Fault::PercentOutOfRange).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    assert_eq!(rp.get(&r.aao()).await.body["percentComplete"], 150);
}

#[tokio::test]
async fn ignore_if_match() {
    let rp = rp_fault(Fault::IgnoreIfMatch).await;
    let w = rp.with_widget().await;
    let stale = [("if-match", "\"xyz\"")];
    let r = rp
        .send(
            Method::PUT,
            &widget("rg1", "new"),
            Some(&widget_body()),
            &[("if-match", "*")],
        )
        .await;
    assert_eq!(r.status, 201);
    let r = rp.send(Method::PUT, &w, Some(&widget_body()), &stale).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    let r = rp.send(Method::PATCH, &w, Some(&json!({})), &stale).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    assert_eq!(rp.send(Method::DELETE, &w, None, &stale).await.status, 202);
}

#[tokio::test]
async fn ignore_if_none_match() {
    let rp = rp_fault(Fault::IgnoreIfNoneMatch).await;
    let w = rp.with_widget().await;
    let r = rp
        .send(
            Method::PUT,
            &w,
            Some(&widget_body()),
            &[("if-none-match", "*")],
        )
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn etag_unchanged_on_update() {
    let rp = rp_fault(Fault::EtagUnchangedOnUpdate).await;
    let w = rp.with_widget().await;
    let e0 = rp.get(&w).await.etag();
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(r.etag(), e0);
    rp.wait(&r.aao()).await;
    let r = rp.patch(&w, &json!({"properties": {"size": 9}})).await;
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&w).await.etag(), e0);
}

#[tokio::test]
async fn patch_creates() {
    let rp = rp_fault(Fault::PatchCreates).await;
    rp.make_rg("rg1").await;
    let r = rp
        .patch(&widget("rg1", "p1"), &json!({"properties": {"size": 2}}))
        .await;
    assert_eq!((r.status, r.state()), (201, "Creating"));
    assert_eq!(r.body["location"], "eastus");
    let r = rp
        .send(
            Method::PATCH,
            &widget("rg1", "p2"),
            Some(&json!({})),
            &[("if-match", "\"xyz\"")],
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(rp.get(&widget("rg1", "p1")).await.status, 200);
}

#[tokio::test]
async fn delete_missing_404() {
    let rp = rp_fault(Fault::DeleteMissing404).await;
    rp.make_rg("rg1").await;
    rp.delete(&widget("rg1", "nope"))
        .await
        .assert_error(404, "ResourceNotFound");
}

#[tokio::test]
async fn echo_accept_different() {
    let rp = rp_fault(Fault::EchoAcceptDifferent).await;
    let w = rp.with_widget().await;
    let mut body = rp.get(&w).await.body;
    body["properties"]["provisioningState"] = json!("Failed");
    assert_eq!(rp.put(&w, &body).await.status, 200);
}

#[tokio::test]
async fn echo_reject_matching() {
    let rp = rp_fault(Fault::EchoRejectMatching).await;
    let w = rp.with_widget().await;
    let body = rp.get(&w).await.body;
    rp.put(&w, &body)
        .await
        .assert_error(400, "InvalidProvisioningState");
    assert_eq!(rp.put(&w, &widget_body()).await.status, 200);
}

#[tokio::test]
async fn terminal_state_in_put_response() {
    let rp = rp_fault(Fault::TerminalStateInPutResponse).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    assert_eq!((r.status, r.state()), (201, "Succeeded"));
    assert!(r.h("azure-asyncoperation").is_some());
    assert_eq!(rp.get(&widget("rg1", "w1")).await.state(), "Creating");
}

#[tokio::test]
async fn no_state_while_provisioning() {
    let rp = rp_fault(Fault::NoStateWhileProvisioning).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    let g = rp.get(&w).await;
    assert_eq!(g.status, 200);
    assert!(
        g.body["properties"].get("provisioningState").is_none(),
        "{}",
        g.body
    );
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
}

#[tokio::test]
async fn dependency_delete_500() {
    let rp = rp_fault(Fault::DependencyDelete500).await;
    let w = rp.with_widget().await;
    rp.create(
        &link("rg1", "l1"),
        &json!({"location": "eastus", "properties": {"widgetId": w}}),
    )
    .await;
    let d = rp.delete(&w).await;
    d.assert_error(500, "InternalServerError");
    assert!(d.h("retry-after").is_some());
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
}

#[tokio::test]
async fn no_request_id() {
    let rp = rp_fault(Fault::NoRequestId).await;
    assert!(rp.get(&rg("x")).await.h("x-ms-request-id").is_none());
}

#[tokio::test]
async fn no_correlation_echo() {
    let rp = rp_fault(Fault::NoCorrelationEcho).await;
    let hdrs = [
        ("x-ms-client-request-id", "c"),
        ("x-ms-correlation-request-id", "k"),
    ];
    let r = rp.send(Method::GET, &rg("x"), None, &hdrs).await;
    assert!(
        r.h("x-ms-client-request-id").is_none() && r.h("x-ms-correlation-request-id").is_none()
    );
    assert!(r.h("x-ms-request-id").is_some());
}

#[tokio::test]
async fn flat_error() {
    let rp = rp_fault(Fault::FlatError).await;
    let r = rp.get(&rg("x")).await;
    assert_eq!(r.status, 404);
    assert!(r.body.get("error").is_none());
    assert_eq!(r.body["code"], "ResourceGroupNotFound");
}

#[tokio::test]
async fn allow_concurrent_write() {
    let rp = rp_fault(Fault::AllowConcurrentWrite).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let a = rp.put(&w, &widget_body()).await;
    let b = rp.put(&w, &widget_body()).await;
    assert_eq!((a.status, b.status), (201, 200));
    assert_eq!(rp.wait(&a.aao()).await["status"], "Succeeded");
    assert_eq!(rp.wait(&b.aao()).await["status"], "Succeeded");
}

#[tokio::test]
async fn delete_no_cancel() {
    let rp = rp_fault(Fault::DeleteNoCancel).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let a = rp.put(&w, &widget_body()).await;
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert_eq!(rp.get(&w).await.state(), "Deleting");
    assert_eq!(rp.wait(&a.aao()).await["status"], "Succeeded");
    rp.wait(&d.aao()).await;
    assert_eq!(rp.get(&w).await.status, 404);
}

#[tokio::test]
async fn opstatus_any_tenant() {
    let rp = rp_fault(Fault::OpStatusAnyTenant).await;
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
    let other = [
        ("x-ms-home-tenant-id", "tenant-b"),
        ("x-ms-client-object-id", "client-b"),
    ];
    assert_eq!(
        rp.send(Method::GET, &r.aao(), None, &other).await.status,
        200
    );
}

#[tokio::test]
async fn missing_api_version_accepted() {
    let rp = rp_fault(Fault::MissingApiVersionAccepted).await;
    rp.make_rg("rg1").await;
    let base = rp.base.clone();
    let r = rp.get(&format!("{base}{}?x=1", rg("rg1"))).await;
    assert_eq!(r.status, 200);
    let r = rp
        .get(&format!("{base}{}?api-version=1999-01-01", rg("rg1")))
        .await;
    r.assert_error(400, "InvalidApiVersionParameter");
}

#[tokio::test]
async fn relative_next_link() {
    let rp = rp_fault(Fault::RelativeNextLink).await;
    rp.make_rg("rg1").await;
    for i in 0..4 {
        rp.put(&widget("rg1", &format!("w{i}")), &widget_body())
            .await;
    }
    let next = rp.get(&widgets("rg1")).await.body["nextLink"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(next.starts_with("/subscriptions/"), "{next}");
}

#[tokio::test]
async fn case_sensitive_ids() {
    let rp = rp_fault(Fault::CaseSensitiveIds).await;
    rp.make_rg("rg1").await;
    rp.create(&widget("rg1", "MyWidget"), &widget_body()).await;
    assert_eq!(rp.get(&widget("rg1", "mywidget")).await.status, 404);
    assert_eq!(
        rp.put(&widget("rg1", "mywidget"), &widget_body())
            .await
            .status,
        201
    );
    assert_eq!(
        rp.get(&widgets("rg1")).await.body["value"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

#[tokio::test]
async fn empty_skus_404() {
    let rp = rp_fault(Fault::EmptySkus404).await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    rp.create(&g, &proxy_body()).await;
    rp.get(&format!("{g}/skus"))
        .await
        .assert_error(404, "NotFound");
    assert_eq!(rp.get(&format!("{w}/skus")).await.status, 200);
}

#[tokio::test]
async fn tags_dropped() {
    let rp = rp_fault(Fault::TagsDropped).await;
    let w = rp.with_widget().await;
    assert!(rp.get(&w).await.body.get("tags").is_none());
}

#[tokio::test]
async fn patch_merges_tags() {
    let rp = rp_fault(Fault::PatchMergesTags).await;
    let w = rp.with_widget().await;
    for tags in [json!({"a": "1"}), json!({"b": "2"})] {
        rp.poll_resource(&w).await;
        let r = rp.patch(&w, &json!({ "tags": tags })).await;
        assert!([200, 202].contains(&r.status), "{}", r.body);
        // An asynchronous PATCH ends once its operation is read.
        if let Some(aao) = r.h("azure-asyncoperation") {
            rp.wait(aao).await;
        }
    }
    // The contract replaces the map whole ({"b"}); the fault keeps the old tags too.
    let tags = rp.poll_resource(&w).await.body["tags"].clone();
    assert_eq!(
        (tags["a"].as_str(), tags["b"].as_str()),
        (Some("1"), Some("2"))
    );
}

#[tokio::test]
async fn system_data_ignored() {
    let rp = rp_fault(Fault::SystemDataIgnored).await;
    rp.make_rg("rg1").await;
    let sd = [("x-ms-arm-resource-system-data", r#"{"createdBy":"alice"}"#)];
    let r = rp
        .send(Method::PUT, &widget("rg1", "w1"), Some(&widget_body()), &sd)
        .await;
    assert!(r.body.get("systemData").is_none());
}

#[tokio::test]
async fn invalid_body_accepted() {
    let rp = rp_fault(Fault::InvalidBodyAccepted).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp
        .put(
            &w,
            &json!({"location": "eastus", "properties": {"minCount": 6, "maxCount": 5}}),
        )
        .await;
    assert_eq!(r.status, 201);
    let done = rp.wait(&r.aao()).await;
    assert_eq!(
        (done["status"].as_str(), done["error"]["code"].as_str()),
        (Some("Failed"), Some("InvalidRequestContent"))
    );
    assert_eq!(rp.get(&w).await.state(), "Failed");
    let bad_json = rp.send(Method::PUT, &widget("rg1", "w2"), None, &[]).await;
    assert_eq!(bad_json.status, 201);
    assert_eq!(bad_json.body["location"], "eastus");
}

#[tokio::test]
async fn no_propagation() {
    let rp = rp_fault(Fault::NoPropagation).await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    rp.create(&g, &proxy_body()).await;
    let r = rp.patch(&w, &json!({"properties": {"size": 4}})).await;
    assert_eq!(rp.get(&w).await.state(), "Updating");
    assert_eq!(rp.get(&g).await.state(), "Succeeded");
    rp.wait(&r.aao()).await;
}

#[tokio::test]
async fn propagate_to_siblings() {
    let rp = rp_fault(Fault::PropagateToSiblings).await;
    rp.with_widget().await;
    let (g1, g2) = (gadget("rg1", "w1", "g1"), gadget("rg1", "w1", "g2"));
    rp.create(&g1, &proxy_body()).await;
    rp.create(&g2, &proxy_body()).await;
    let r = rp.patch(&g1, &proxy_body()).await;
    assert_eq!(rp.get(&g2).await.state(), "Updating");
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&g2).await.state(), "Succeeded");
}

#[tokio::test]
async fn delete_keeps_ancestors() {
    let rp = rp_fault(Fault::DeleteKeepsAncestors).await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    rp.create(&g, &proxy_body()).await;
    let d = rp.delete(&g).await;
    assert_eq!(rp.get(&g).await.state(), "Deleting");
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
    rp.wait(&d.aao()).await;
}

#[tokio::test]
async fn dependant_follows_dependency() {
    let rp = rp_fault(Fault::DependantFollowsDependency).await;
    let w = rp.with_widget().await;
    let l = link("rg1", "l1");
    rp.create(
        &l,
        &json!({"location": "eastus", "properties": {"widgetId": w}}),
    )
    .await;
    let r = rp.patch(&w, &json!({"properties": {"size": 4}})).await;
    assert_eq!(rp.get(&w).await.state(), "Updating");
    assert_eq!(rp.get(&l).await.state(), "Updating");
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&l).await.state(), "Succeeded");
}

#[tokio::test]
async fn replace_answers_201() {
    let rp = rp_fault(Fault::ReplaceAnswers201).await;
    let w = rp.with_widget().await;
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!((r.status, r.state()), (201, "Updating"));
}

#[test]
fn every_fault_has_a_test_here() {
    // The narrow and the front-door knobs have their own files; the data-plane and task
    // knobs are tested next to their surfaces.
    let src = [
        include_str!("faults.rs"),
        include_str!("narrow_faults.rs"),
        include_str!("front_door_faults.rs"),
        include_str!("dataplane.rs"),
        include_str!("tasks.rs"),
    ]
    .concat();
    for f in Fault::all() {
        let test = format!("async fn {}()", f.name().replace('-', "_"));
        assert!(src.contains(&test), "no test for {f}");
    }
}
