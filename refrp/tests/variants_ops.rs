//! Variant knobs of operation URLs, operation resources, headers, ETags, errors, lists and the
//! data plane; then every variant of the compatible set at once, and faults on top of it.

use crate::common;

use common::*;
use reqwest::Method;
use rpconform_refrp::{Fault, Variant};
use serde_json::{Value, json};

fn path_of(url: &str) -> String {
    let no_scheme = url.split_once("://").map_or(url, |x| x.1);
    let path = no_scheme.find('/').map_or("", |i| &no_scheme[i..]);
    path.split('?').next().unwrap_or("").to_string()
}

#[tokio::test]
async fn aao_asyncoperations() {
    let rp = rp_variant(Variant::AaoAsyncOperations).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let aao = r.aao();
    assert!(aao.contains("/locations/eastus/asyncoperations/"), "{aao}");
    assert!(r.location().contains("/operationResults/"));
    let s = rp.get(&aao).await;
    assert_eq!(s.body["id"], path_of(&aao));
    assert_eq!(path_of(&aao).rsplit('/').next(), s.body["name"].as_str());
    rp.wait(&aao).await;
}

#[tokio::test]
async fn operations_monitor_true() {
    let rp = rp_variant(Variant::OperationsMonitorTrue).await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let (aao, loc) = (r.aao(), r.location());
    assert!(
        aao.contains("/operations/") && !aao.contains("monitor"),
        "{aao}"
    );
    assert_eq!(path_of(&aao), path_of(&loc));
    assert!(loc.contains("monitor=true"), "{loc}");
    assert_eq!(rp.get(&aao).await.body["status"], "InProgress");
    let poll = rp.get(&loc).await;
    assert_eq!(poll.status, 202);
    assert!(poll.location().contains("monitor=true"));
    let done = rp.poll_location(&loc).await;
    assert_eq!((done.status, done.state()), (200, "Succeeded"));
    assert_eq!(rp.get(&aao).await.body["status"], "Succeeded");
}

#[tokio::test]
async fn location_under_resource() {
    let rp = rp_variant(Variant::LocationUnderResource).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "W1");
    let r = rp.put(&w, &widget_body()).await;
    assert!(path_of(&r.location()).starts_with(&format!("{w}/operationresults/")));
    assert_eq!(rp.poll_location(&r.location()).await.status, 200);
    let a = rp.post(&format!("{w}/restart")).await;
    assert!(path_of(&a.location()).starts_with(&format!("{w}/restart/operationresults/")));
    assert_eq!(
        rp.poll_location(&a.location()).await.body["restartCount"],
        1
    );
    // The Location of a DELETE keeps answering after the resource is gone.
    let d = rp.delete(&widget("rg1", "w1")).await;
    assert_eq!(rp.poll_location(&d.location()).await.status, 204);
    assert_eq!(rp.get(&d.location()).await.status, 204);
    // Another resource's path does not reach the operation.
    let other = d.location().replace("/widgets/w1/", "/widgets/other/");
    assert_ne!(other, d.location());
    rp.get(&other).await.assert_error(404, "OperationNotFound");
}

#[tokio::test]
async fn opstatus_status_only() {
    let rp = rp_variant(Variant::OpStatusStatusOnly).await;
    rp.make_rg("rg1").await;
    let mut body = widget_body();
    body["properties"]["simulateFailure"] = json!(true);
    let r = rp.put(&widget("rg1", "w1"), &body).await;
    assert_eq!(rp.get(&r.aao()).await.body, json!({"status": "InProgress"}));
    let done = rp.wait(&r.aao()).await;
    let keys: Vec<&String> = done
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["status", "error"]);
    assert_eq!(done["error"]["code"], "ProvisioningFailed");
}

#[tokio::test]
async fn fractional_timestamps_and_percent() {
    let rp = rp_with(
        gated(2)
            .with_variant(Variant::FractionalTimestamps)
            .with_variant(Variant::FractionalPercent),
    )
    .await;
    rp.make_rg("rg1").await;
    let r = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    let s = rp.get(&r.aao()).await.body;
    let start = s["startTime"].as_str().unwrap_or("");
    assert_eq!(
        start.len(),
        "2024-05-01T10:00:00.1234567+00:00".len(),
        "{start}"
    );
    assert!(start.ends_with("+00:00") && start.as_bytes()[19] == b'.');
    assert!(s["percentComplete"].is_f64());
    let done = rp.wait(&r.aao()).await;
    assert_eq!(done["percentComplete"], json!(100.0));
    assert!(done["endTime"].as_str().unwrap_or("") >= start);
}

#[tokio::test]
async fn lowercase_terminal_status() {
    let rp = rp_variant(Variant::LowercaseTerminalStatus).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(rp.get(&r.aao()).await.body["status"], "InProgress");
    rp.get(&r.aao()).await;
    assert_eq!(rp.get(&r.aao()).await.body["status"], "succeeded");
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
    let r = rp.put(&w, &widget_body()).await;
    rp.delete(&w).await;
    let canceled = rp.get(&r.aao()).await.body;
    assert_eq!(canceled["status"], "canceled");
    assert_eq!(canceled["error"]["code"], "OperationCanceled");
}

#[tokio::test]
async fn operation_extra_fields() {
    let rp = rp_variant(Variant::OperationExtraFields).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "W1");
    let r = rp.put(&w, &widget_body()).await;
    let s = rp.get(&r.aao()).await.body;
    assert_eq!(s["resourceId"], w);
    assert_eq!(s["lastTransitionTime"], s["startTime"]);
    rp.get(&r.aao()).await;
    let done = rp.get(&r.aao()).await.body;
    assert_eq!(done["status"], "Succeeded");
    assert_eq!(done["lastTransitionTime"], done["endTime"]);
}

#[tokio::test]
async fn retry_after_variants() {
    let rp = rp_variant(Variant::NoRetryAfter).await;
    let w = rp.with_widget().await;
    let r = rp.put(&w, &widget_body()).await;
    assert!(r.h("retry-after").is_none());
    rp.wait(&r.aao()).await;
    let d = rp.delete(&w).await;
    assert!(d.h("retry-after").is_none());
    let poll = rp.get(&d.location()).await;
    assert_eq!(poll.status, 202);
    assert!(poll.h("retry-after").is_none());

    let rp = rp_variant(Variant::ShortRetryAfterOn2xx).await;
    let w = rp.with_widget().await;
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(r.h("retry-after"), Some("2"));
    rp.wait(&r.aao()).await;
    let d = rp.delete(&w).await;
    assert_eq!(d.h("retry-after"), Some("10"));
    assert_eq!(rp.get(&d.location()).await.h("retry-after"), Some("10"));
}

#[tokio::test]
async fn weak_etags_and_etag_in_body() {
    let rp = rp_with(
        gated(2)
            .with_variant(Variant::WeakEtags)
            .with_variant(Variant::EtagInBody),
    )
    .await;
    let w = rp.with_widget().await;
    let g = rp.get(&w).await;
    let tag = g.etag();
    assert!(tag.starts_with("W/\"") && tag.ends_with('"'), "{tag}");
    assert_eq!(g.body["etag"], tag);
    assert_eq!(rp.get(&widgets("rg1")).await.body["value"][0]["etag"], tag);
    let patch = |im: String| {
        let (rp, w) = (&rp, &w);
        async move {
            rp.send(
                Method::PATCH,
                w,
                Some(&json!({"tags": {}})),
                &[("if-match", &im)],
            )
            .await
        }
    };
    // Stale tags, weak or strong, fail and change nothing.
    for stale in ["W/\"xyz\"", "\"xyz\""] {
        assert_eq!(patch(stale.to_string()).await.status, 412, "{stale}");
    }
    assert_eq!(rp.get(&w).await.etag(), tag);
    // The stored value matches in its weak form and as the bare opaque tag.
    let r = patch(tag.trim_start_matches("W/").to_string()).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    let fresh = rp.get(&w).await.etag();
    assert!(fresh != tag && fresh.starts_with("W/"));
    assert_eq!(patch(tag.clone()).await.status, 412);
    let r = patch(fresh.clone()).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    let current = rp.get(&w).await.etag();
    let put = |h: &'static str, v: String| {
        let (rp, w) = (&rp, &w);
        async move {
            rp.send(Method::PUT, w, Some(&widget_body()), &[(h, &v)])
                .await
        }
    };
    assert_eq!(put("if-none-match", "*".into()).await.status, 412);
    let r = put("if-match", current.clone()).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    let stale = rp
        .send(Method::DELETE, &w, None, &[("if-match", &current)])
        .await;
    assert_eq!(stale.status, 412);
}

#[tokio::test]
async fn rich_errors() {
    let rp = rp_variant(Variant::RichErrors).await;
    rp.make_rg("rg1").await;
    let e = rp.get(&widget("rg1", "nope")).await;
    e.assert_error(404, "ResourceNotFound");
    let err = &e.body["error"];
    assert!(err["target"].is_string());
    assert_eq!(err["details"][0]["code"], "ResourceNotFound");
    assert!(err["details"][0]["message"].is_string());
    assert!(err["innererror"].is_object());
    assert_eq!(err["additionalInfo"][0]["type"], "RefrpErrorInfo");
    let bad = rp
        .put(
            &widget("rg1", "w"),
            &json!({"location": "eastus", "properties": {"size": 0}}),
        )
        .await;
    assert_eq!(bad.body["error"]["target"], "properties.size");
    let mut body = widget_body();
    body["properties"]["simulateFailure"] = json!(true);
    let r = rp.put(&widget("rg1", "w"), &body).await;
    let done = rp.wait(&r.aao()).await;
    assert_eq!(done["error"]["details"][0]["code"], "ProvisioningFailed");
    assert!(done["error"]["message"].is_string());
}

#[tokio::test]
async fn page_size_1() {
    let rp = rp_variant(Variant::PageSize1).await;
    rp.make_rg("rg1").await;
    for n in ["a", "b"] {
        rp.create(&widget("rg1", n), &widget_body()).await;
    }
    let p1 = rp.get(&widgets("rg1")).await;
    assert_eq!(p1.body["value"].as_array().map(Vec::len), Some(1));
    let next = p1.body["nextLink"].as_str().unwrap_or("").to_string();
    assert!(next.starts_with("http://"), "{next}");
    let p2 = rp.get(&next).await;
    assert_eq!(p2.body["value"][0]["name"], "b");
    assert!(p2.body.get("nextLink").is_none());
}

#[tokio::test]
async fn request_id_format() {
    let rp = rp_variant(Variant::RequestIdFormat).await;
    let a = rp.get(&rg("nope")).await;
    let b = rp.get(&rg("nope")).await;
    let (ia, ib) = (
        a.h("x-ms-request-id").unwrap_or(""),
        b.h("x-ms-request-id").unwrap_or(""),
    );
    assert!(ia.ends_with("_M5SN1_M5SN1") && ia.len() > 36, "{ia}");
    assert_ne!(ia, ib);
}

#[tokio::test]
async fn dataplane_variants() {
    let rp = rp_with(
        gated(1)
            .with_variant(Variant::MonRetryAfter1)
            .with_variant(Variant::MonNoOperationId)
            .with_variant(Variant::MonPutLocation),
    )
    .await;
    let url = "/dataplane/widgets/d1?api-version=2024-05-01";
    let r = rp
        .send(
            Method::PUT,
            url,
            Some(&json!({"size": 1})),
            &[("operation-id", "op-1")],
        )
        .await;
    assert_eq!(r.status, 201);
    assert!(r.h("operation-id").is_none());
    assert!(r.h("retry-after").is_none());
    let monitor = r.h("operation-location").unwrap_or("").to_string();
    assert!(monitor.contains("/dataplane/operations/op-1?"), "{monitor}");
    let loc = r.location();
    assert!(loc.contains("/dataplane/widgets/d1?api-version="), "{loc}");
    assert_eq!(rp.get(&loc).await.body["name"], "d1");
    // Held for one read, which shows the first phase.
    let m = rp.get(&monitor).await;
    assert_eq!(
        (m.h("retry-after"), m.body["status"].clone()),
        (Some("1"), json!("NotStarted"))
    );
    assert_eq!(rp.get(&monitor).await.body["status"], "Succeeded");
}

/// Every variant of the compatible set at once: a full lifecycle stays conforming.
#[tokio::test]
async fn the_compatible_set_together() {
    let mut settings = gated(2);
    settings.variants = Variant::compatible_set().into_iter().collect();
    let rp = rp_with(settings).await;
    let w = widget("rg1", "w1");
    rp.make_rg("rg1").await;
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(
        (r.status, r.state(), r.h("retry-after")),
        (201, "Accepted", Some("2"))
    );
    assert!(r.h("location").is_none() && r.etag().starts_with("W/"));
    assert!(r.aao().contains("/asyncoperations/"));
    assert!(
        r.h("x-ms-request-id")
            .unwrap_or("")
            .ends_with("_M5SN1_M5SN1")
    );
    let done = rp.wait_any_case(&r.aao()).await;
    assert_eq!(done["status"], "succeeded");
    assert!(done["resourceId"].is_string() && done["percentComplete"].is_f64());
    let g = gadget("rg1", "w1", "g1");
    let r = rp.put(&g, &proxy_body()).await;
    rp.wait_any_case(&r.aao()).await;
    let p = rp.patch(&g, &json!({"properties": {"size": 2}})).await;
    assert_eq!(p.status, 202);
    assert!(p.location().contains("/gadgets/g1/operationresults/"));
    assert_eq!(rp.get(&w).await.state(), "Updating");
    assert_eq!(rp.poll_location(&p.location()).await.status, 200);
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert!(d.h("azure-asyncoperation").is_none());
    rp.get(&w).await.assert_error(404, "ResourceNotFound");
    let e = rp.get(&w).await.body;
    assert!(e["error"]["innererror"].is_object());
    let end = rp.poll_location(&d.location()).await;
    assert_eq!((end.status, end.body.clone()), (200, Value::Null));
}

/// Faults still break their rules with the compatible set on (the fault's answer wins).
#[tokio::test]
async fn faults_still_break_with_the_compatible_set() {
    let mut settings = gated(1)
        .with_fault(Fault::RelativeLocation)
        .with_fault(Fault::RetryAfterOutOfRange)
        .with_fault(Fault::DeleteNoLocation)
        .with_fault(Fault::FlatError)
        .with_fault(Fault::UnknownTerminalStatus)
        .with_fault(Fault::Patch202NoLocation);
    settings.variants = Variant::compatible_set().into_iter().collect();
    let rp = rp_with(settings).await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let r = rp.put(&w, &widget_body()).await;
    assert_eq!(r.h("retry-after"), Some("5"));
    rp.get(&r.aao()).await;
    assert_eq!(rp.get(&r.aao()).await.body["status"], "Completed");
    let p = rp.patch(&w, &json!({"tags": {}})).await;
    assert_eq!(p.status, 202);
    assert!(p.h("location").is_none());
    rp.get(&p.aao()).await;
    rp.get(&p.aao()).await;
    let d = rp.delete(&w).await;
    assert_eq!(d.status, 202);
    assert!(d.h("location").is_none() && d.h("azure-asyncoperation").is_none());
    let flat = rp.get(&widget("rg1", "none")).await;
    assert_eq!(flat.body["code"], "ResourceNotFound");
    let g = widget("rg1", "w2");
    let r = rp.put(&g, &widget_body()).await;
    rp.get(&r.aao()).await;
    let a = rp.post(&format!("{g}/restart")).await;
    assert!(
        a.location().starts_with("/subscriptions/"),
        "{}",
        a.location()
    );
}
