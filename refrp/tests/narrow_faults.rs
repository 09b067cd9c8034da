//! The narrow fault knobs: each breaks its rule only in one place a lazy tester would not
//! look, and the test shows both the break and that the same rule still holds elsewhere.

use crate::common;

use common::*;
use reqwest::Method;
use rpconform_refrp::Fault;
use serde_json::json;

/// Group `rg1`, widget `w1`, gadget `g1`, sprocket `s1`, all settled.
async fn tree(rp: &Rp) -> (String, String, String) {
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    let s = sprocket("rg1", "w1", "g1", "s1");
    rp.create(&g, &proxy_body()).await;
    rp.create(&s, &proxy_body()).await;
    (w, g, s)
}

#[tokio::test]
async fn grandparent_not_updating() {
    let rp = rp_gated_fault(Fault::GrandparentNotUpdating).await;
    let (w, g, s) = tree(&rp).await;
    // Unchanged: a gadget update shows on its widget.
    let p = rp.patch(&g, &json!({"properties": {"size": 2}})).await;
    assert_eq!(rp.get(&w).await.state(), "Updating");
    rp.wait(&p.aao()).await;
    // Broken: a sprocket update or delete shows on its gadget only.
    let p = rp.patch(&s, &json!({"properties": {"size": 2}})).await;
    assert_eq!(rp.get(&g).await.state(), "Updating");
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
    rp.wait(&p.aao()).await;
    let d = rp.delete(&s).await;
    assert_eq!(rp.get(&s).await.state(), "Deleting");
    assert_eq!(rp.get(&g).await.state(), "Updating");
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
    rp.wait(&d.aao()).await;
}

#[tokio::test]
async fn put_during_operation_accepted() {
    let rp = rp_gated_fault(Fault::PutDuringOperationAccepted).await;
    let w = rp.with_widget().await;
    let first = rp.put(&w, &widget_body()).await;
    rp.patch(&w, &json!({"tags": {}}))
        .await
        .assert_error(409, "AnotherOperationInProgress");
    let second = rp.put(&w, &widget_body()).await;
    assert_eq!((second.status, second.state()), (200, "Updating"));
    assert_ne!(second.aao(), first.aao());
    rp.wait(&first.aao()).await;
    rp.wait(&second.aao()).await;
}

#[tokio::test]
async fn nested_status_any_tenant() {
    let rp = rp_gated_fault(Fault::NestedStatusAnyTenant).await;
    let w = rp.with_widget().await;
    let me = [
        ("x-ms-home-tenant-id", "t1"),
        ("x-ms-client-object-id", "c1"),
    ];
    let other = [
        ("x-ms-home-tenant-id", "t2"),
        ("x-ms-client-object-id", "c1"),
    ];
    let r = rp
        .send(Method::PATCH, &w, Some(&json!({"tags": {}})), &me)
        .await;
    let status = |h: &'static [(&'static str, &'static str)], url: String| {
        let rp = &rp;
        async move { rp.send(Method::GET, &url, None, h).await }
    };
    status(
        &[
            ("x-ms-home-tenant-id", "t2"),
            ("x-ms-client-object-id", "c1"),
        ],
        r.aao(),
    )
    .await
    .assert_error(404, "OperationNotFound");
    assert_eq!(rp.send(Method::GET, &r.aao(), None, &me).await.status, 200);
    rp.wait(&r.aao()).await;
    let g = rp
        .send(
            Method::PUT,
            &gadget("rg1", "w1", "g1"),
            Some(&proxy_body()),
            &me,
        )
        .await;
    let read = rp.send(Method::GET, &g.aao(), None, &other).await;
    assert_eq!(
        (read.status, read.body["status"].clone()),
        (200, json!("InProgress"))
    );
}

#[tokio::test]
async fn nested_systemdata_dropped() {
    let rp = rp_gated_fault(Fault::NestedSystemDataDropped).await;
    rp.make_rg("rg1").await;
    let sd = [("x-ms-arm-resource-system-data", r#"{"createdBy": "alice"}"#)];
    let w = widget("rg1", "w1");
    let r = rp.send(Method::PUT, &w, Some(&widget_body()), &sd).await;
    assert_eq!(r.body["systemData"]["createdBy"], "alice");
    rp.wait(&r.aao()).await;
    let g = gadget("rg1", "w1", "g1");
    let r = rp.send(Method::PUT, &g, Some(&proxy_body()), &sd).await;
    assert!(r.body.get("systemData").is_none(), "{}", r.body);
    rp.wait(&r.aao()).await;
    assert!(rp.get(&g).await.body.get("systemData").is_none());
    assert_eq!(rp.get(&w).await.body["systemData"]["createdBy"], "alice");
}

#[tokio::test]
async fn nested_case_sensitive() {
    let rp = rp_gated_fault(Fault::NestedCaseSensitive).await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    rp.create(&g, &proxy_body()).await;
    // Unchanged at the top level.
    assert_eq!(rp.get(&widget("RG1", "W1")).await.status, 200);
    assert_eq!(rp.get(&gadget("RG1", "W1", "g1")).await.status, 200);
    // Broken for nested segments and names.
    rp.get(&g.replace("/gadgets/", "/GADGETS/"))
        .await
        .assert_error(404, "NotFound");
    rp.get(&gadget("rg1", "w1", "G1"))
        .await
        .assert_error(404, "ResourceNotFound");
    let r = rp.put(&gadget("rg1", "w1", "G1"), &proxy_body()).await;
    assert_eq!(r.status, 201);
    rp.wait(&r.aao()).await;
    let list = rp.get(&format!("{w}/gadgets")).await;
    assert_eq!(list.body["value"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn id_recased() {
    let rp = rp_gated_fault(Fault::IdRecased).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "MyWidget");
    rp.create(&w, &widget_body()).await;
    assert_eq!(rp.get(&w).await.body["id"], w);
    // The id keeps canonical fixed segments but takes the names' casing of this request.
    let g = rp.get(&w.to_lowercase()).await;
    let recased = widget("rg1", "mywidget");
    assert_eq!((g.status, g.body["id"].clone()), (200, json!(recased)));
    assert_eq!(g.body["name"], "mywidget");
    let list = rp.get(&widgets("rg1")).await;
    assert_eq!(list.body["value"].as_array().map(Vec::len), Some(1));
    assert_eq!(list.body["value"][0]["id"], recased);
}

#[tokio::test]
async fn failed_update_children_stale() {
    let rp = rp_gated_fault(Fault::FailedUpdateChildrenStale).await;
    let (w, g, s) = tree(&rp).await;
    // Unchanged: a failed child update ends Failed on the child and its ancestors.
    let p = rp
        .patch(&s, &json!({"properties": {"simulateFailure": true}}))
        .await;
    assert_eq!(rp.wait(&p.aao()).await["status"], "Failed");
    for x in [&w, &g, &s] {
        assert_eq!(rp.get(x).await.state(), "Failed", "{x}");
    }
    let p = rp
        .patch(&w, &json!({"properties": {"simulateFailure": false}}))
        .await;
    assert_eq!(rp.get(&g).await.state(), "Updating");
    rp.wait(&p.aao()).await;
    assert_eq!(rp.get(&s).await.state(), "Succeeded");
    // Broken: a failed parent update leaves its descendants as they were.
    let p = rp
        .patch(&w, &json!({"properties": {"simulateFailure": true}}))
        .await;
    assert_eq!(rp.get(&s).await.state(), "Updating");
    assert_eq!(rp.wait(&p.aao()).await["status"], "Failed");
    assert_eq!(rp.get(&w).await.state(), "Failed");
    assert_eq!(rp.get(&g).await.state(), "Succeeded");
    assert_eq!(rp.get(&s).await.state(), "Succeeded");
}

#[tokio::test]
async fn patch_202_no_location() {
    let rp = rp_gated_fault(Fault::Patch202NoLocation).await;
    let w = rp.with_widget().await;
    let p = rp.patch(&w, &json!({"properties": {"size": 6}})).await;
    assert_eq!(p.status, 202);
    assert!(p.h("location").is_none() && p.h("azure-asyncoperation").is_some());
    rp.wait(&p.aao()).await;
    assert_eq!(rp.get(&w).await.body["properties"]["size"], 6);
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(r.status, 200);
    assert!(r.h("location").is_some());
    rp.wait(&r.aao()).await;
    let d = rp.delete(&w).await;
    assert!(d.h("location").is_some());
}

#[tokio::test]
async fn child_delete_sync_204() {
    let rp = rp_gated_fault(Fault::ChildDeleteSync204).await;
    let (w, g, s) = tree(&rp).await;
    let d = rp.delete(&g).await;
    assert_eq!((d.status, d.h("location")), (204, None));
    assert_eq!(rp.get(&g).await.status, 404);
    assert_eq!(rp.get(&s).await.status, 404);
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert!(d.h("location").is_some());
}

#[tokio::test]
async fn parent_delete_orphans() {
    let rp = rp_gated_fault(Fault::ParentDeleteOrphans).await;
    let (w, g, s) = tree(&rp).await;
    let d = rp.delete(&w).await;
    assert_eq!(rp.get(&g).await.state(), "Deleting");
    assert_eq!(rp.poll_location(&d.location()).await.status, 204);
    rp.get(&w).await.assert_error(404, "ResourceNotFound");
    rp.get(&format!("{w}/gadgets"))
        .await
        .assert_error(404, "ParentResourceNotFound");
    rp.get(&config("rg1", "w1"))
        .await
        .assert_error(404, "ParentResourceNotFound");
    // Broken: the children are still readable.
    assert_eq!(rp.get(&g).await.status, 200);
    assert_eq!(rp.get(&s).await.status, 200);
}

#[tokio::test]
async fn subscription_level_wrong_id() {
    let rp = rp_gated_fault(Fault::SubscriptionLevelWrongId).await;
    let s = sub_widget("s1");
    let r = rp.create(&s, &widget_body()).await;
    assert_eq!(
        r.body["id"],
        "/providers/Microsoft.Contoso/subscriptionWidgets/s1"
    );
    assert_eq!(rp.get(&s).await.body["name"], "s1");
    let w = rp.with_widget().await;
    assert_eq!(rp.get(&w).await.body["id"], w);
}

#[tokio::test]
async fn extension_wrong_type() {
    let rp = rp_gated_fault(Fault::ExtensionWrongType).await;
    let w = rp.with_widget().await;
    let a = annotation(&w, "a1");
    let r = rp.put(&a, &json!({"properties": {"text": "t"}})).await;
    assert_eq!(r.body["type"], "Microsoft.Contoso/widgets/annotations");
    assert_eq!(r.body["id"], a);
    assert_eq!(rp.get(&w).await.body["type"], "Microsoft.Contoso/widgets");
}

#[tokio::test]
async fn location_type_no_request_id() {
    let rp = rp_gated_fault(Fault::LocationTypeNoRequestId).await;
    let r = regional("eastus", "r1");
    let p = rp.put(&r, &json!({"properties": {}})).await;
    assert_eq!(p.status, 201);
    assert!(p.h("x-ms-request-id").is_none());
    assert!(rp.get(&r).await.h("x-ms-request-id").is_none());
    let t = rp
        .put(&tenant_widget("t1"), &json!({"properties": {}}))
        .await;
    assert!(t.h("x-ms-request-id").is_some());
    assert!(rp.get(&rg("x")).await.h("x-ms-request-id").is_some());
}

#[tokio::test]
async fn namespace_api_version_mixup() {
    let rp = rp_gated_fault(Fault::NamespaceApiVersionMixup).await;
    rp.make_rg("rg1").await;
    let body = json!({"location": "eastus", "properties": {}});
    let z = gizmo("rg1", "z1");
    assert_eq!(rp.put(&z, &body).await.status, 201);
    rp.send(Method::GET, &with_version(&z, "1999-01-01"), None, &[])
        .await
        .assert_error(400, "InvalidApiVersionParameter");
    rp.send(
        Method::GET,
        &with_version(&widgets("rg1"), FABRIKAM_API),
        None,
        &[],
    )
    .await
    .assert_error(400, "InvalidApiVersionParameter");
}

#[tokio::test]
async fn content_type_text() {
    let clean = rp().await;
    clean.make_rg("rg1").await;
    let good = clean.get(&rg("rg1")).await;
    assert!(
        good.h("content-type")
            .is_some_and(|v| v.starts_with("application/json"))
    );
    let rp = rp_gated_fault(Fault::ContentTypeText).await;
    rp.make_rg("rg1").await;
    let r = rp.get(&rg("rg1")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.h("content-type"), Some("text/plain"));
    assert_eq!(r.body["name"], "rg1", "the body is still the JSON resource");
}

#[tokio::test]
async fn date_iso8601() {
    let clean = rp().await;
    let good = clean.get(&rg("nope")).await;
    assert!(
        good.h("date").is_some_and(|d| d.ends_with("GMT")),
        "{:?}",
        good.h("date")
    );
    let rp = rp_gated_fault(Fault::DateIso8601).await;
    let d = rp.get(&rg("nope")).await;
    let date = d.h("date").unwrap_or_default().to_string();
    assert!(
        date.ends_with('Z') && date.contains('T'),
        "an ISO 8601 Date: {date}"
    );
}

#[tokio::test]
async fn error_code_snake_case() {
    let rp = rp_gated_fault(Fault::ErrorCodeSnakeCase).await;
    rp.make_rg("rg1").await;
    rp.get(&widget("rg1", "missing"))
        .await
        .assert_error(404, "resource_not_found");
    // The api-version codes API-03 reads are left alone.
    rp.send(
        Method::GET,
        &format!("{}?api-version=1999-01-01", widget("rg1", "missing")),
        None,
        &[],
    )
    .await
    .assert_error(400, "InvalidApiVersionParameter");
}

#[tokio::test]
async fn error_additional_info_object() {
    let rp = rp_gated_fault(Fault::ErrorAdditionalInfoObject).await;
    rp.make_rg("rg1").await;
    let r = rp.get(&widget("rg1", "missing")).await;
    r.assert_error(404, "ResourceNotFound");
    assert!(r.body["error"]["additionalInfo"].is_object(), "{}", r.body);
}

#[tokio::test]
async fn operation_id_is_request_id() {
    let rp = rp_gated_fault(Fault::OperationIdIsRequestId).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let aao = r.aao();
    let op = aao
        .split('?')
        .next()
        .and_then(|p| p.rsplit('/').next())
        .unwrap_or_default()
        .to_string();
    assert_eq!(r.h("x-ms-request-id"), Some(op.as_str()));
    // Other answers keep ids of their own.
    let g = rp.get(&aao).await;
    assert_ne!(g.h("x-ms-request-id"), Some(op.as_str()));
}

#[tokio::test]
async fn system_data_bad_time() {
    let faulty = rp_gated_fault(Fault::SystemDataBadTime).await;
    let w = faulty.with_widget().await;
    let g = faulty.get(&w).await;
    assert_eq!(g.body["systemData"]["createdAt"], "11/26/2026 6:00:00 PM");
    let clean = rp().await;
    let w = clean.with_widget().await;
    assert!(clean.get(&w).await.body.get("systemData").is_none());
}

#[tokio::test]
async fn accepted_with_body() {
    let faulty = rp_gated_fault(Fault::AcceptedWithBody).await;
    let w = faulty.with_widget().await;
    let d = faulty.delete(&w).await;
    assert_eq!((d.status, &d.body), (202, &json!({"status": "Accepted"})));
    let clean = rp().await;
    let w = clean.with_widget().await;
    let d = clean.delete(&w).await;
    assert_eq!((d.status, &d.body), (202, &serde_json::Value::Null));
}

/// Another region for the widget than the one it was created in.
fn moved() -> serde_json::Value {
    let mut b = widget_body();
    b["location"] = json!("westus");
    b
}

#[tokio::test]
async fn a_location_never_changes_unless_a_fault_moves_it() {
    let clean = rp().await;
    let w = clean.with_widget().await;
    clean
        .put(&w, &moved())
        .await
        .assert_error(400, "InvalidResourceLocation");
    clean
        .patch(&w, &json!({"location": "westus"}))
        .await
        .assert_error(400, "InvalidResourceLocation");
    // The same region spelled otherwise is no change.
    let mut same = widget_body();
    same["location"] = json!("East US");
    let r = clean.put(&w, &same).await;
    assert_eq!(r.status, 200, "{}", r.body);
    clean.wait(&r.aao()).await;
}

/// Under `fault`, `method` with another location moves the widget; the other method still
/// refuses.
async fn moved_by(fault: Fault, method: Method) {
    let rp = rp_gated_fault(fault).await;
    let w = rp.with_widget().await;
    let body = if method == Method::PUT {
        moved()
    } else {
        json!({"location": "westus"})
    };
    let r = rp.send(method.clone(), &w, Some(&body), &[]).await;
    assert_eq!(r.status, 200, "{method}: {}", r.body);
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&w).await.body["location"], "westus");
    let other = if method == Method::PUT {
        rp.patch(&w, &json!({"location": "eastus"})).await
    } else {
        let mut b = widget_body();
        b["location"] = json!("eastus");
        rp.put(&w, &b).await
    };
    other.assert_error(400, "InvalidResourceLocation");
}

#[tokio::test]
async fn put_moves_location() {
    moved_by(Fault::PutMovesLocation, Method::PUT).await;
}

#[tokio::test]
async fn patch_moves_location() {
    moved_by(Fault::PatchMovesLocation, Method::PATCH).await;
}

#[tokio::test]
async fn location_case_sensitive() {
    let faulty = rp_gated_fault(Fault::LocationCaseSensitive).await;
    faulty.make_rg("rg1").await;
    let mut b = widget_body();
    b["location"] = json!("EastUS");
    faulty
        .put(&widget("rg1", "w1"), &b)
        .await
        .assert_error(400, "LocationNotAvailableForResourceType");
    faulty.create(&widget("rg1", "w2"), &widget_body()).await;
    let clean = rp().await;
    clean.make_rg("rg1").await;
    clean.create(&widget("rg1", "w1"), &b).await;
}

#[tokio::test]
async fn list_omits_subscription_scope() {
    let across = format!("/subscriptions/{SUB}/providers/Microsoft.Contoso/widgets");
    let clean = rp().await;
    clean.with_widget().await;
    clean.make_rg("rg2").await;
    clean.create(&widget("rg2", "w2"), &widget_body()).await;
    clean
        .create(&gadget("rg2", "w2", "g1"), &proxy_body())
        .await;
    let l = clean.get(&across).await;
    let ids: Vec<&str> = l.body["value"]
        .as_array()
        .expect("value")
        .iter()
        .filter_map(|v| v["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [widget("rg1", "w1"), widget("rg2", "w2")],
        "{}",
        l.body
    );
    let faulty = rp_gated_fault(Fault::ListOmitsSubscriptionScope).await;
    faulty.with_widget().await;
    assert_eq!(faulty.get(&across).await.body, json!({"value": []}));
    assert_eq!(
        faulty.get(&widgets("rg1")).await.body["value"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn operation_any_subscription() {
    let other = "00000000-1111-2222-3333-444444444444";
    for (settings, expect) in [
        (gated(2), 404),
        (gated(2).with_fault(Fault::OperationAnySubscription), 200),
    ] {
        let rp = rp_with(settings).await;
        let w = rp.with_widget().await;
        let p = rp.patch(&w, &json!({"tags": {}})).await;
        let foreign = p.aao().replace(SUB, other);
        assert_ne!(foreign, p.aao());
        assert_eq!(rp.get(&foreign).await.status, expect);
        assert_eq!(rp.get(&p.aao()).await.status, 200);
        rp.wait(&p.aao()).await;
    }
}

#[tokio::test]
async fn operation_id_reused() {
    let faulty = rp_gated_fault(Fault::OperationIdReused).await;
    let w = faulty.with_widget().await;
    let first = faulty.patch(&w, &json!({"tags": {}})).await;
    faulty.wait(&first.aao()).await;
    let second = faulty.patch(&w, &json!({"tags": {}})).await;
    assert_eq!(first.aao(), second.aao());
    faulty.wait(&second.aao()).await;
    let clean = rp().await;
    let w = clean.with_widget().await;
    let first = clean.patch(&w, &json!({"tags": {}})).await;
    clean.wait(&first.aao()).await;
    let second = clean.patch(&w, &json!({"tags": {}})).await;
    assert_ne!(first.aao(), second.aao());
}

#[tokio::test]
async fn name_capitalized() {
    let faulty = rp_with(
        gated(2)
            .with_fault(Fault::NameUppercased)
            .with_fault(Fault::PropertiesRepeatLocation),
    )
    .await;
    let w = faulty.with_widget().await;
    let g = faulty.get(&w).await;
    assert_eq!(g.body["name"], "W1");
    assert_eq!(g.body["id"], widget("rg1", "W1"));
    // A name a request used keeps its casing: only the first letter changes.
    assert_eq!(g.body["properties"]["location"], "eastus");
    let clean = rp().await;
    let w = clean.with_widget().await;
    let g = clean.get(&w).await;
    assert_eq!(g.body["name"], "w1");
    assert!(g.body["properties"].get("location").is_none());
}

#[tokio::test]
async fn oversized_skus() {
    let faulty = rp_gated_fault(Fault::OversizedSkus).await;
    let w = faulty.with_widget().await;
    let r = faulty.get(&format!("{w}/skus")).await;
    assert!(r.body["padding"].as_str().map(str::len) > Some(8 * 1024 * 1024));
    assert!(r.body["value"].is_array());
    let clean = rp().await;
    let w = clean.with_widget().await;
    assert!(
        clean
            .get(&format!("{w}/skus"))
            .await
            .body
            .get("padding")
            .is_none()
    );
}

#[tokio::test]
async fn operations_api_no_register() {
    let ops = "/providers/Microsoft.Contoso/operations";
    let names = |b: &serde_json::Value| -> Vec<String> {
        b["value"]
            .as_array()
            .expect("value")
            .iter()
            .filter_map(|o| o["name"].as_str().map(str::to_string))
            .collect()
    };
    let clean = rp().await;
    let r = clean.get(ops).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(names(&r.body).contains(&"Microsoft.Contoso/register/action".to_string()));
    assert!(names(&r.body).contains(&"Microsoft.Contoso/widgets/restart/action".to_string()));
    assert!(
        r.body["value"].as_array().is_some_and(
            |v| !v.is_empty() && v.iter().all(|o| o["display"]["operation"].is_string())
        )
    );
    let fab = clean
        .get(&format!(
            "/providers/Microsoft.Fabrikam/operations?api-version={FABRIKAM_API}"
        ))
        .await;
    assert_eq!(fab.status, 200, "{}", fab.body);
    let no_register = rp_fault(Fault::OperationsApiNoRegister).await;
    let b = no_register.get(ops).await.body;
    assert!(!names(&b).iter().any(|n| n.ends_with("/register/action")));
    let no_display = rp_fault(Fault::OperationsApiNoDisplay).await;
    let b = no_display.get(ops).await.body;
    assert!(b["value"][0].get("display").is_none(), "{b}");
}

#[tokio::test]
async fn name_from_body() {
    let faulty = rp_gated_fault(Fault::NameFromBody).await;
    let w = faulty.with_widget().await;
    let mut b = widget_body();
    b["name"] = json!("other");
    let r = faulty.put(&w, &b).await;
    assert_eq!(r.body["name"], "other");
    faulty.wait(&r.aao()).await;
    assert_eq!(faulty.get(&w).await.body["id"], widget("rg1", "other"));
    let clean = rp().await;
    let w = clean.with_widget().await;
    let r = clean.put(&w, &b).await;
    assert_eq!(r.body["name"], "w1");
}

#[tokio::test]
async fn tags_limit_15() {
    let tags: serde_json::Map<String, serde_json::Value> =
        (0..16).map(|i| (format!("t{i}"), json!("v"))).collect();
    let mut b = widget_body();
    b["tags"] = serde_json::Value::Object(tags.clone());
    let faulty = rp_gated_fault(Fault::TagsLimit15).await;
    let w = faulty.with_widget().await;
    faulty
        .put(&w, &b)
        .await
        .assert_error(400, "InvalidTagCount");
    faulty
        .patch(&w, &json!({"tags": tags}))
        .await
        .assert_error(400, "InvalidTagCount");
    let clean = rp().await;
    let w = clean.with_widget().await;
    let r = clean.put(&w, &b).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn properties_repeat_location() {
    let faulty = rp_gated_fault(Fault::PropertiesRepeatLocation).await;
    let w = faulty.with_widget().await;
    assert_eq!(
        faulty.get(&w).await.body["properties"]["location"],
        "eastus"
    );
}

#[tokio::test]
async fn operations_api_no_display() {
    let faulty = rp_fault(Fault::OperationsApiNoDisplay).await;
    let b = faulty
        .get("/providers/Microsoft.Contoso/operations")
        .await
        .body;
    let ops = b["value"].as_array().expect("value");
    assert!(
        !ops.is_empty() && ops.iter().all(|o| o.get("display").is_none()),
        "{b}"
    );
}

/// A lifecycle notification of `state` for subscription `sub`.
async fn notify(rp: &Rp, sub: &str, state: &str) -> Resp {
    rp.send(
        Method::PUT,
        &format!("/subscriptions/{sub}?api-version=2.0"),
        Some(&json!({"state": state, "properties": {"tenantId": "t", "extra": {"a": [1]}}})),
        &[],
    )
    .await
}

#[tokio::test]
async fn lifecycle_unknown_404() {
    let never = "99999999-0000-4000-8000-000000000001";
    let clean = rp().await;
    let r = notify(&clean, never, "Unregistered").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["properties"]["extra"], json!({"a": [1]}));
    assert_eq!(notify(&clean, never, "unregistered").await.status, 200);
    let faulty = rp_fault(Fault::LifecycleUnknown404).await;
    assert_eq!(notify(&faulty, never, "Unregistered").await.status, 404);
    faulty.make_rg("rg1").await;
    assert_eq!(notify(&faulty, SUB, "Registered").await.status, 200);
}

#[tokio::test]
async fn suspended_allows_writes() {
    for (settings, refused) in [
        (gated(2), true),
        (gated(2).with_fault(Fault::SuspendedAllowsWrites), false),
    ] {
        let rp = rp_with(settings).await;
        let w = rp.with_widget().await;
        for state in ["Warned", "Suspended"] {
            assert_eq!(notify(&rp, SUB, state).await.status, 200);
            assert_eq!(rp.get(&w).await.status, 200);
            let p = rp.patch(&w, &json!({"tags": {}})).await;
            if refused {
                p.assert_error(409, "ReadOnlyDisabledSubscription");
            } else {
                assert_eq!(p.status, 200, "{}", p.body);
                rp.wait(&p.aao()).await;
            }
        }
        let d = rp.delete(&w).await;
        assert_eq!(d.status, 202, "{}", d.body);
        rp.wait(&d.aao()).await;
        assert_eq!(notify(&rp, SUB, "Registered").await.status, 200);
        rp.create(&w, &widget_body()).await;
        assert_eq!(notify(&rp, SUB, "Deleted").await.status, 200);
        assert_eq!(rp.get(&w).await.status, 404);
    }
}

#[tokio::test]
async fn unregistered_allows_writes() {
    for (settings, refused) in [
        (gated(2), true),
        (gated(2).with_fault(Fault::UnregisteredAllowsWrites), false),
    ] {
        let rp = rp_with(settings).await;
        let w = rp.with_widget().await;
        assert_eq!(notify(&rp, SUB, "Unregistered").await.status, 200);
        // Reads are served either way.
        assert_eq!(rp.get(&w).await.status, 200);
        let patch = rp.patch(&w, &json!({"tags": {"k": "v"}})).await;
        if refused {
            patch.assert_error(409, "SubscriptionNotRegistered");
            rp.put(&w, &widget_body())
                .await
                .assert_error(409, "SubscriptionNotRegistered");
            rp.post(&format!("{w}/restart"))
                .await
                .assert_error(409, "SubscriptionNotRegistered");
            rp.delete(&w)
                .await
                .assert_error(409, "SubscriptionNotRegistered");
            let g = rp.get(&w).await;
            assert_eq!((g.status, &g.body["tags"]), (200, &json!({"env": "test"})));
        } else {
            assert_eq!(patch.status, 200, "{}", patch.body);
            rp.wait(&patch.aao()).await;
            let put = rp.put(&w, &widget_body()).await;
            assert_eq!(put.status, 200, "{}", put.body);
            rp.wait(&put.aao()).await;
            let post = rp.post(&format!("{w}/restart")).await;
            assert_eq!(post.status, 202, "{}", post.body);
            rp.wait(&post.aao()).await;
            rp.remove(&w).await;
            assert_eq!(rp.get(&w).await.status, 404);
        }
    }
}

#[tokio::test]
async fn deleted_keeps_resources() {
    for (settings, kept) in [
        (gated(2), false),
        (gated(2).with_fault(Fault::DeletedKeepsResources), true),
    ] {
        let rp = rp_with(settings).await;
        let w = rp.with_widget().await;
        let a = annotation(&w, "a1");
        let r = rp.put(&a, &json!({"properties": {"text": "t"}})).await;
        assert_eq!(r.status, 201, "{}", r.body);
        let s = sub_widget("s1");
        rp.create(&s, &widget_body()).await;
        assert_eq!(notify(&rp, SUB, "Deleted").await.status, 200);
        // ARM serves no reads of a deleted subscription: read once it is registered again.
        assert_eq!(notify(&rp, SUB, "Registered").await.status, 200);
        let want = if kept { 200 } else { 404 };
        for path in [&w, &a, &s] {
            assert_eq!(rp.get(path).await.status, want, "{path}");
        }
        let listed = rp.get(&sub_widgets()).await;
        assert_eq!(listed.status, 200, "{}", listed.body);
        assert_eq!(
            listed.body["value"].as_array().map(Vec::len),
            Some(usize::from(kept)),
            "{}",
            listed.body
        );
    }
}

/// POST `{rg1}/moveResources` of `ids` to `rg2`.
async fn move_to_rg2(rp: &Rp, ids: &[String]) -> Resp {
    let body = json!({"targetResourceGroup": rg("rg2"), "resources": ids});
    rp.send(
        Method::POST,
        &format!("{}/moveResources", rg("rg1")),
        Some(&body),
        &[],
    )
    .await
}

#[tokio::test]
async fn move_leaves_source() {
    for (settings, left) in [
        (gated(2), false),
        (gated(2).with_fault(Fault::MoveLeavesSource), true),
    ] {
        let rp = rp_with(settings).await;
        let w = rp.with_widget().await;
        rp.create(&gadget("rg1", "w1", "g1"), &proxy_body()).await;
        rp.make_rg("rg2").await;
        let r = move_to_rg2(&rp, std::slice::from_ref(&w)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let moved = rp.get(&widget("rg2", "w1")).await;
        assert_eq!(moved.status, 200);
        assert_eq!(moved.body["id"], widget("rg2", "w1"));
        assert_eq!(rp.get(&gadget("rg2", "w1", "g1")).await.status, 200);
        assert_eq!(rp.get(&w).await.status == 200, left);
    }
}

#[tokio::test]
async fn move_missing_200() {
    for (settings, status) in [
        (gated(2), 404),
        (gated(2).with_fault(Fault::MoveMissing200), 200),
    ] {
        let rp = rp_with(settings).await;
        rp.make_rg("rg1").await;
        rp.make_rg("rg2").await;
        let r = move_to_rg2(&rp, &[widget("rg1", "never")]).await;
        assert_eq!(r.status, status, "{}", r.body);
    }
}

/// The widget path of the embedded spec and its operation `method` under these faults.
fn spec_widget_op(faults: &[Fault], method: &str) -> serde_json::Value {
    let mut s = rpconform_refrp::Settings::default();
    for f in faults {
        s = s.with_fault(*f);
    }
    let files = rpconform_refrp::spec_files(&s);
    let w = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Contoso/widgets/{widgetName}";
    files[0].doc["paths"][w][method].clone()
}

fn spec_size(faults: &[Fault]) -> serde_json::Value {
    let mut s = rpconform_refrp::Settings::default();
    for f in faults {
        s = s.with_fault(*f);
    }
    rpconform_refrp::spec_files(&s)[0].doc["definitions"]["WidgetProperties"]["properties"]["size"]
        .clone()
}

#[tokio::test]
async fn spec_drops_202() {
    assert!(
        spec_widget_op(&[], "delete")["responses"]
            .get("202")
            .is_some()
    );
    assert!(
        spec_widget_op(&[Fault::SpecDrops202], "delete")["responses"]
            .get("202")
            .is_none()
    );
    // The RP itself is unchanged: its DELETE still answers 202.
    let rp = rp_gated_fault(Fault::SpecDrops202).await;
    let w = rp.with_widget().await;
    assert_eq!(rp.delete(&w).await.status, 202);
}

#[tokio::test]
async fn spec_not_long_running() {
    assert_eq!(
        spec_widget_op(&[], "patch")["x-ms-long-running-operation"],
        true
    );
    let op = spec_widget_op(&[Fault::SpecNotLongRunning], "patch");
    assert!(op.get("x-ms-long-running-operation").is_none());
}

#[tokio::test]
async fn spec_final_state_operation_location() {
    let op = spec_widget_op(&[Fault::SpecFinalStateOperationLocation], "patch");
    assert_eq!(
        op["x-ms-long-running-operation-options"]["final-state-via"],
        "operation-location"
    );
}

#[tokio::test]
async fn spec_size_is_string() {
    assert_eq!(spec_size(&[])["type"], "integer");
    assert_eq!(spec_size(&[Fault::SpecSizeIsString])["type"], "string");
}

#[tokio::test]
async fn spec_declares_operation_location() {
    let op = spec_widget_op(&[Fault::SpecDeclaresOperationLocation], "get");
    assert!(
        op["responses"]["200"]["headers"]
            .get("Operation-Location")
            .is_some()
    );
    assert!(
        spec_widget_op(&[], "get")["responses"]["200"]["headers"]
            .get("Operation-Location")
            .is_none()
    );
}

#[tokio::test]
async fn spec_secret_size() {
    assert_eq!(spec_size(&[Fault::SpecSecretSize])["x-ms-secret"], true);
    assert!(spec_size(&[]).get("x-ms-secret").is_none());
}

#[tokio::test]
async fn spec_read_only_description() {
    let description = |faults: &[Fault]| {
        let mut s = rpconform_refrp::Settings::default();
        for f in faults {
            s = s.with_fault(*f);
        }
        rpconform_refrp::spec_files(&s)[0].doc["definitions"]["WidgetProperties"]["properties"]
            ["description"]
            .clone()
    };
    assert_eq!(
        description(&[Fault::SpecReadOnlyDescription])["readOnly"],
        true
    );
    assert!(description(&[]).get("readOnly").is_none());
}

#[tokio::test]
async fn system_data_from_body() {
    // ARM's header is the only source of systemData; under the fault the body's wins.
    let sd = [("x-ms-arm-resource-system-data", r#"{"createdBy": "alice"}"#)];
    let mut b = widget_body();
    b["systemData"] = json!({"createdBy": "mallory", "lastModifiedBy": "mallory"});
    for (fault, want) in [
        (None, "alice"),
        (Some(Fault::SystemDataFromBody), "mallory"),
    ] {
        let rp = match fault {
            Some(f) => rp_fault(f).await,
            None => rp().await,
        };
        rp.make_rg("rg1").await;
        let w = widget("rg1", "w1");
        let r = rp.send(Method::PUT, &w, Some(&b), &sd).await;
        rp.wait(&r.aao()).await;
        let got = rp.get(&w).await.body;
        assert_eq!(got["systemData"]["createdBy"], want, "{got}");
        assert_eq!(
            got["systemData"].get("lastModifiedBy").is_some(),
            fault.is_some()
        );
    }
}

#[tokio::test]
async fn a_widget_keeps_its_admin_password_to_itself() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let mut b = widget_body();
    b["properties"]["adminPassword"] = json!("s3cret");
    let r = rp.create(&widget("rg1", "w1"), &b).await;
    assert!(
        r.body["properties"].get("adminPassword").is_none(),
        "{}",
        r.body
    );
    let g = rp.get(&widget("rg1", "w1")).await;
    assert!(
        g.body["properties"].get("adminPassword").is_none(),
        "{}",
        g.body
    );
}
