//! The ARM shapes beyond resource-group types: a singleton child, a subscription-level
//! tracked type, a location-based proxy type, a tenant-level proxy type, an extension type,
//! and a second namespace with its own api-version.

use crate::common;

use common::*;
use reqwest::Method;
use serde_json::{Value, json};

fn fab(path: &str) -> String {
    with_version(path, FABRIKAM_API)
}

#[tokio::test]
async fn singleton_configuration() {
    let rp = rp_with(gated(1)).await;
    rp.make_rg("rg1").await;
    rp.get(&config("rg1", "w1"))
        .await
        .assert_error(404, "ParentResourceNotFound");
    let w = rp.with_widget().await;
    let c = config("rg1", "w1");
    let g = rp.get(&c).await;
    assert_eq!(g.status, 200);
    assert_eq!(g.body["id"], c);
    assert_eq!(g.body["name"], "default");
    assert_eq!(g.body["type"], "Microsoft.Contoso/widgets/configurations");
    assert_eq!(
        g.body["properties"],
        json!({"logLevel": "Info", "retentionDays": 7, "provisioningState": "Succeeded"})
    );
    assert!(g.body.get("location").is_none() && g.body.get("tags").is_none());
    let tag = g.etag();
    assert_eq!(rp.get(&c).await.etag(), tag);
    let list = rp.get(&format!("{w}/configurations")).await;
    assert_eq!(list.body["value"].as_array().map(Vec::len), Some(1));
    // PUT replaces (200, never 201), synchronously; re-cased paths reach the same resource.
    let r = rp
        .put(
            &c.replace("default", "Default"),
            &json!({"properties": {"logLevel": "Verbose"}}),
        )
        .await;
    assert_eq!((r.status, r.state()), (200, "Succeeded"));
    assert!(r.h("azure-asyncoperation").is_none() && r.h("location").is_none());
    assert_eq!(r.body["id"], c);
    assert_eq!(r.body["properties"]["retentionDays"], 7);
    assert_ne!(r.etag(), tag);
    let p = rp
        .patch(&c, &json!({"properties": {"retentionDays": 30}}))
        .await;
    assert_eq!(
        (p.status, p.body["properties"]["logLevel"].clone()),
        (200, json!("Verbose"))
    );
    // Other names, DELETE, bad bodies and preconditions.
    rp.put(
        &format!("{w}/configurations/other"),
        &json!({"properties": {}}),
    )
    .await
    .assert_error(400, "InvalidResourceName");
    rp.get(&format!("{w}/configurations/other"))
        .await
        .assert_error(404, "ResourceNotFound");
    rp.patch(&format!("{w}/configurations/other"), &json!({}))
        .await
        .assert_error(404, "ResourceNotFound");
    let d = rp.delete(&c).await;
    d.assert_error(405, "MethodNotAllowed");
    assert_eq!(d.h("allow"), Some("GET, HEAD, PUT, PATCH"));
    rp.put(&c, &json!({"properties": {"logLevel": "Loud"}}))
        .await
        .assert_error(400, "InvalidRequestContent");
    let r = rp
        .send(
            Method::PUT,
            &c,
            Some(&json!({"properties": {}})),
            &[("if-none-match", "*")],
        )
        .await;
    assert_eq!(r.status, 412);
    // It follows its widget: Updating during the widget's update (and busy), gone with it.
    let u = rp.patch(&w, &json!({"properties": {"size": 4}})).await;
    assert_eq!(rp.get(&c).await.state(), "Updating");
    rp.put(&c, &json!({"properties": {}}))
        .await
        .assert_error(409, "AnotherOperationInProgress");
    rp.wait(&u.aao()).await;
    rp.remove(&w).await;
    assert_eq!(rp.get(&c).await.status, 404);
}

#[tokio::test]
async fn subscription_level_tracked_type() {
    let rp = rp_with(gated(1)).await;
    let s = sub_widget("SW1");
    let r = rp.put(&s, &widget_body()).await;
    assert_eq!((r.status, r.state()), (201, "Creating"));
    assert!(r.aao().contains("/locations/eastus/operationStatuses/"));
    assert_eq!(r.body["id"], s);
    assert_eq!(r.body["type"], "Microsoft.Contoso/subscriptionWidgets");
    assert_eq!(rp.wait(&r.aao()).await["status"], "Succeeded");
    let g = rp.get(&s.to_lowercase()).await;
    assert_eq!((g.status, g.body["id"].clone()), (200, json!(s)));
    assert_eq!(g.body["location"], "eastus");
    let list = rp.get(&sub_widgets()).await;
    assert_eq!(list.body["value"][0]["name"], "SW1");
    let r = rp.put(&s, &widget_body()).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    let p = rp.patch(&s, &json!({"tags": {"t": "1"}})).await;
    rp.wait(&p.aao()).await;
    assert_eq!(rp.get(&s).await.body["tags"], json!({"t": "1"}));
    rp.put(&s, &json!({"properties": {}}))
        .await
        .assert_error(400, "InvalidRequestContent");
    // Resource groups do not contain it.
    rp.make_rg("rg1").await;
    assert_eq!(rp.delete(&rg("rg1")).await.status, 200);
    assert_eq!(rp.get(&s).await.status, 200);
    let d = rp.delete(&s).await;
    assert_eq!(d.status, 202);
    assert_eq!(rp.get(&s).await.state(), "Deleting");
    assert_eq!(rp.poll_location(&d.location()).await.status, 204);
    assert_eq!(rp.get(&s).await.status, 404);
    assert_eq!(rp.delete(&s).await.status, 204);
}

#[tokio::test]
async fn location_based_proxy_type() {
    let rp = rp().await;
    let r = regional("EastUS", "rw1");
    let p = rp.put(&r, &json!({"properties": {"size": 2}})).await;
    assert_eq!((p.status, p.state()), (201, "Succeeded"));
    assert!(p.h("azure-asyncoperation").is_none());
    assert_eq!(
        p.body["type"],
        "Microsoft.Contoso/locations/regionalWidgets"
    );
    assert_eq!(p.body["id"], r);
    assert!(p.body.get("location").is_none());
    assert_eq!(rp.get(&regional("eastus", "RW1")).await.body["id"], r);
    let list = rp
        .get(&format!(
            "/subscriptions/{SUB}/providers/Microsoft.Contoso/locations/eastus/regionalWidgets"
        ))
        .await;
    assert_eq!(list.body["value"].as_array().map(Vec::len), Some(1));
    assert_eq!(rp.get(&regional("westus", "rw1")).await.status, 404);
    rp.put(&regional("eastus", "x"), &json!({"location": "eastus"}))
        .await
        .assert_error(400, "InvalidRequestContent");
    assert_eq!(
        rp.put(&r, &json!({"properties": {"size": 3}})).await.status,
        200
    );
    assert_eq!(rp.delete(&r).await.status, 200);
    assert_eq!(rp.get(&r).await.status, 404);
    assert_eq!(rp.delete(&r).await.status, 204);
    // Location-based routes are not operation routes.
    let ops = format!(
        "/subscriptions/{SUB}/providers/Microsoft.Contoso/locations/eastus/operationStatuses/nope"
    );
    rp.get(&ops).await.assert_error(404, "OperationNotFound");
}

#[tokio::test]
async fn tenant_level_proxy_type() {
    let rp = rp().await;
    let t = tenant_widget("t1");
    let p = rp.put(&t, &json!({"properties": {"size": 1}})).await;
    assert_eq!((p.status, p.body["id"].clone()), (201, json!(t)));
    assert_eq!(p.body["type"], "Microsoft.Contoso/tenantWidgets");
    let r = rp
        .send(
            Method::PUT,
            &t,
            Some(&json!({"properties": {"size": 2}})),
            &[("if-match", &p.etag())],
        )
        .await;
    assert_eq!(r.status, 200);
    let r = rp
        .send(
            Method::PATCH,
            &t,
            Some(&json!({})),
            &[("if-match", "\"stale\"")],
        )
        .await;
    assert_eq!(r.status, 412);
    let list = rp.get("/providers/Microsoft.Contoso/tenantWidgets").await;
    assert_eq!(list.body["value"][0]["properties"]["size"], 2);
    assert_eq!(rp.delete(&t).await.status, 200);
    assert_eq!(rp.get(&t).await.status, 404);
    assert_eq!(
        rp.send_raw(Method::GET, &t, None, &[]).await.code(),
        "MissingApiVersionParameter"
    );
}

#[tokio::test]
async fn extension_type_on_widgets() {
    let rp = rp_with(gated(1)).await;
    rp.make_rg("rg1").await;
    let missing = annotation(&widget("rg1", "nope"), "a1");
    rp.put(&missing, &json!({"properties": {"text": "x"}}))
        .await
        .assert_error(404, "ParentResourceNotFound");
    rp.get(&missing)
        .await
        .assert_error(404, "ParentResourceNotFound");
    let w = rp.with_widget().await;
    let a = annotation(&w, "a1");
    let p = rp.put(&a, &json!({"properties": {"text": "hello"}})).await;
    assert_eq!((p.status, p.state()), (201, "Succeeded"));
    assert_eq!(p.body["type"], "Microsoft.Contoso/annotations");
    assert_eq!(p.body["id"], a);
    assert_eq!(
        rp.get(&a.to_uppercase().replace("API-VERSION", "api-version"))
            .await
            .status,
        200
    );
    let list = rp
        .get(&format!("{w}/providers/Microsoft.Contoso/annotations"))
        .await;
    assert_eq!(list.body["value"][0]["name"], "a1");
    rp.put(&annotation(&w, "a2"), &json!({"properties": {}}))
        .await
        .assert_error(400, "InvalidRequestContent");
    // Not a child: the widget's update neither shows on it nor blocks it.
    let u = rp.patch(&w, &json!({"properties": {"size": 4}})).await;
    assert_eq!(rp.get(&a).await.state(), "Succeeded");
    assert_eq!(
        rp.patch(&a, &json!({"properties": {"text": "hi"}}))
            .await
            .status,
        200
    );
    assert!(rp.get(&format!("{w}/gadgets")).await.body["value"] == json!([]));
    rp.wait(&u.aao()).await;
    // Deleted with its widget.
    rp.remove(&w).await;
    rp.get(&a).await.assert_error(404, "ParentResourceNotFound");
    rp.create(&w, &widget_body()).await;
    rp.get(&a).await.assert_error(404, "ResourceNotFound");
}

#[tokio::test]
async fn second_namespace_with_its_own_api_version() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let z = gizmo("rg1", "z1");
    let body = json!({"location": "westus", "tags": {"k": "v"}, "properties": {"color": "red", "count": 3}});
    // The Contoso api-version is not one of Fabrikam's.
    rp.put(&z, &body)
        .await
        .assert_error(400, "InvalidApiVersionParameter");
    let p = rp.send(Method::PUT, &fab(&z), Some(&body), &[]).await;
    assert_eq!((p.status, p.state()), (201, "Succeeded"));
    assert_eq!(p.body["type"], "Microsoft.Fabrikam/gizmos");
    assert_eq!(p.body["tags"], json!({"k": "v"}));
    assert!(p.h("azure-asyncoperation").is_none());
    let g = rp.get(&fab(&z.replace("Fabrikam", "fabrikam"))).await;
    assert_eq!((g.status, g.body["id"].clone()), (200, json!(z)));
    let list = rp
        .get(&fab(&format!(
            "{}/providers/Microsoft.Fabrikam/gizmos",
            rg("rg1")
        )))
        .await;
    assert_eq!(list.body["value"].as_array().map(Vec::len), Some(1));
    let r = rp
        .send(
            Method::PATCH,
            &fab(&z),
            Some(&json!({"properties": {"count": 4}})),
            &[],
        )
        .await;
    assert_eq!(
        (r.status, r.body["properties"]["color"].clone()),
        (200, json!("red"))
    );
    let r = rp
        .send(
            Method::PUT,
            &fab(&gizmo("rg1", "bad")),
            Some(&json!({"properties": {}})),
            &[],
        )
        .await;
    r.assert_error(400, "InvalidRequestContent");
    // Resource-group delete removes resource-group scoped resources only.
    let t = tenant_widget("keep");
    rp.put(&t, &json!({"properties": {}})).await;
    let reg = regional("eastus", "keep");
    rp.put(&reg, &json!({"properties": {}})).await;
    assert_eq!(rp.delete(&rg("rg1")).await.status, 200);
    rp.make_rg("rg1").await;
    assert_eq!(rp.get(&fab(&z)).await.status, 404);
    assert_eq!(rp.get(&t).await.status, 200);
    assert_eq!(rp.get(&reg).await.status, 200);
    let d = rp.send(Method::DELETE, &fab(&z), None, &[]).await;
    assert_eq!((d.status, d.body), (204, Value::Null));
}
