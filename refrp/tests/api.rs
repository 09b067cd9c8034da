//! HTTP surface of the conforming RP: routing, api-version, headers, error envelope,
//! resource groups, validation, ETag tables, casing, systemData/tags, paging and SKUs.

use crate::common;

use common::*;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn unknown_routes_methods_and_bad_input_get_the_envelope() {
    let rp = rp().await;
    rp.get("/nope").await.assert_error(404, "NotFound");
    rp.get("/").await.assert_error(404, "NotFound");
    rp.get(&format!("{}/providers/Microsoft.Contoso/things", rg("x")))
        .await
        .assert_error(404, "NotFound");
    let r = rp.send(Method::POST, &widget("rg1", "w"), None, &[]).await;
    r.assert_error(405, "MethodNotAllowed");
    assert!(r.h("allow").is_some_and(|a| a.contains("PATCH")));
    rp.send(Method::PATCH, &rg("rg1"), Some(&json!({})), &[])
        .await
        .assert_error(405, "MethodNotAllowed");
    rp.send(Method::OPTIONS, &widgets("rg1"), None, &[])
        .await
        .assert_error(405, "MethodNotAllowed");
    rp.make_rg("rg1").await;
    // malformed JSON, wrong types, weird headers
    let r = rp
        .send(
            Method::PUT,
            &widget("rg1", "w"),
            None,
            &[("content-type", "application/json")],
        )
        .await;
    r.assert_error(400, "InvalidRequestContent");
    let resp = rp
        .client
        .put(rp.url(&widget("rg1", "w")))
        .header("content-type", "application/json")
        .header(
            "if-match",
            reqwest::header::HeaderValue::from_bytes(b"\xff\"x\"").expect("obs-text"),
        )
        .header("x-ms-arm-resource-system-data", "{not json")
        .body("{\"location\": ")
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), 400);
    let b: serde_json::Value =
        serde_json::from_str(&resp.text().await.expect("text")).expect("json");
    assert_eq!(b["error"]["code"], "InvalidRequestContent");
    assert!(
        b["error"]["details"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
    );
    rp.get(&widget("rg1", "nope"))
        .await
        .assert_error(404, "ResourceNotFound");
    rp.get(&format!("{}/%ZZ", widgets("rg1")))
        .await
        .assert_error(404, "NotFound");
    rp.get(&format!(
        "{}?$skipToken=zz&api-version={API}",
        widgets("rg1")
    ))
    .await
    .assert_error(400, "InvalidSkipToken");
}

#[tokio::test]
async fn api_version_is_required_and_checked() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w");
    let base = rp.base.clone();
    rp.get(&format!("{base}{w}?x=1"))
        .await
        .assert_error(400, "MissingApiVersionParameter");
    rp.get(&format!("{base}{w}?api-version="))
        .await
        .assert_error(400, "MissingApiVersionParameter");
    let put = rp
        .send(
            Method::PUT,
            &format!("{base}{w}?x=1"),
            Some(&widget_body()),
            &[],
        )
        .await;
    put.assert_error(400, "MissingApiVersionParameter");
    for v in ["1999-01-01", "not-a-version", "2021-04-01"] {
        rp.get(&format!("{base}{w}?api-version={v}"))
            .await
            .assert_error(400, "InvalidApiVersionParameter");
    }
    assert_eq!(
        rp.get(&format!("{base}{w}?api-version=2024-09-01-preview"))
            .await
            .status,
        404
    );
    assert_eq!(
        rp.get(&format!("{base}{w}?API-VERSION=2024-05-01"))
            .await
            .status,
        404
    );
    assert_eq!(
        rp.get(&format!("{base}{}?api-version=2021-04-01", rg("rg1")))
            .await
            .status,
        200
    );
    rp.get(&format!("{base}{}?api-version=1999-01-01", rg("rg1")))
        .await
        .assert_error(400, "InvalidApiVersionParameter");
}

#[tokio::test]
async fn request_ids_are_fresh_and_correlation_ids_echoed() {
    let rp = rp().await;
    let hdrs = [
        ("x-ms-client-request-id", "client-1"),
        ("x-ms-correlation-request-id", "corr-1"),
    ];
    let a = rp.send(Method::GET, &rg("nope"), None, &hdrs).await;
    let b = rp.send(Method::GET, "/nope", None, &hdrs).await;
    let ida = a.h("x-ms-request-id").expect("request id");
    let idb = b.h("x-ms-request-id").expect("request id");
    assert!(!ida.is_empty() && ida != idb);
    for r in [&a, &b] {
        assert_eq!(r.h("x-ms-client-request-id"), Some("client-1"));
        assert_eq!(r.h("x-ms-correlation-request-id"), Some("corr-1"));
    }
}

#[tokio::test]
async fn resource_groups() {
    let rp = rp().await;
    let r = rp
        .put(
            &rg("Rg1"),
            &json!({"location": "eastus", "tags": {"a": "b"}}),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.body["name"], "Rg1");
    assert_eq!(r.body["type"], "Microsoft.Resources/resourceGroups");
    assert_eq!(
        rp.put(&rg("rg1"), &json!({"location": "eastus"}))
            .await
            .status,
        200
    );
    let head = rp.send(Method::HEAD, &rg("rg1"), None, &[]).await;
    assert_eq!((head.status, head.body.is_null()), (200, true));
    assert_eq!(
        rp.send(Method::HEAD, &rg("none"), None, &[]).await.status,
        404
    );
    let g = rp.get(&rg("RG1")).await;
    assert_eq!(g.status, 200);
    assert_eq!(g.body["id"], rg("Rg1"));
    rp.put(&rg("rg2"), &json!({"tags": {}}))
        .await
        .assert_error(400, "InvalidRequestContent");
    rp.get(&rg("rg2"))
        .await
        .assert_error(404, "ResourceGroupNotFound");
    rp.put(&widget("rg2", "w"), &widget_body())
        .await
        .assert_error(404, "ResourceGroupNotFound");
    rp.get(&widgets("rg2"))
        .await
        .assert_error(404, "ResourceGroupNotFound");
    // DELETE removes everything in it, cancelling running operations.
    let w = rp.put(&widget("rg1", "w1"), &widget_body()).await;
    assert_eq!(w.status, 201);
    assert_eq!(rp.delete(&rg("rg1")).await.status, 200);
    let op = rp.wait(&w.aao()).await;
    assert_eq!(op["status"], "Canceled");
    assert_eq!(op["error"]["code"], "OperationCanceled");
    assert_eq!(rp.delete(&rg("rg1")).await.status, 204);
    rp.make_rg("rg1").await;
    rp.get(&widget("rg1", "w1"))
        .await
        .assert_error(404, "ResourceNotFound");
}

#[tokio::test]
async fn static_validation_answers_400_and_starts_nothing() {
    let rp = rp().await;
    rp.with_widget().await;
    let bad = [
        (widget("rg1", "b1"), json!({"properties": {"size": 1}})),
        (widget("rg1", "b2"), json!({"location": 5})),
        (
            widget("rg1", "b3"),
            json!({"location": "eastus", "properties": {"size": "3"}}),
        ),
        (
            widget("rg1", "b4"),
            json!({"location": "eastus", "properties": {"size": 0}}),
        ),
        (
            widget("rg1", "b5"),
            json!({"location": "eastus", "properties": {"size": 101}}),
        ),
        (
            widget("rg1", "b6"),
            json!({"location": "eastus", "properties": {"minCount": 6, "maxCount": 5}}),
        ),
        (
            widget("rg1", "b7"),
            json!({"location": "eastus", "tags": {"a": 1}}),
        ),
        (
            widget("rg1", "b8"),
            json!({"location": "eastus", "tags": ["a"]}),
        ),
        (widget("rg1", "b9"), json!([1, 2])),
        (
            gadget("rg1", "w1", "g1"),
            json!({"location": "eastus", "properties": {"size": 1}}),
        ),
        (gadget("rg1", "w1", "g2"), json!({"tags": {"a": "b"}})),
        (
            gadget("rg1", "w1", "g3"),
            json!({"properties": {"size": 1.5}}),
        ),
        (
            link("rg1", "l1"),
            json!({"location": "eastus", "properties": {}}),
        ),
    ];
    for (path, body) in &bad {
        let r = rp.put(path, body).await;
        r.assert_error(400, "InvalidRequestContent");
        assert!(
            r.body["error"]["details"][0]["code"].is_string(),
            "{}",
            r.body
        );
        assert!(r.h("location").is_none() && r.h("azure-asyncoperation").is_none());
        assert_eq!(rp.get(path).await.status, 404, "{path}");
    }
    let names = rp.get(&widgets("rg1")).await.body["value"]
        .as_array()
        .map(Vec::len);
    assert_eq!(names, Some(1));
    rp.put(&widget("rg1", "bad name"), &widget_body())
        .await
        .assert_error(400, "InvalidResourceName");
    // PATCH checks the merged result too
    let w = widget("rg1", "w1");
    rp.patch(&w, &json!({"properties": {"minCount": 9}}))
        .await
        .assert_error(400, "InvalidRequestContent");
    rp.patch(&w, &json!({"tags": "x"}))
        .await
        .assert_error(400, "InvalidRequestContent");
    assert_eq!(rp.get(&w).await.state(), "Succeeded");
}

#[tokio::test]
async fn etag_put_table() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let body = widget_body();
    let hdr = |k: &'static str, v: &'static str| [(k, v)];
    // does not exist
    let p = |n: &str| widget("rg1", n);
    assert_eq!(
        rp.send(Method::PUT, &p("a1"), Some(&body), &[])
            .await
            .status,
        201
    );
    assert_eq!(
        rp.send(Method::PUT, &p("a2"), Some(&body), &hdr("if-match", ""))
            .await
            .status,
        201
    );
    // `""` is an entity-tag that matches nothing (RFC 7232): the "xyz" row.
    rp.send(Method::PUT, &p("a5"), Some(&body), &hdr("if-match", "\"\""))
        .await
        .assert_error(412, "PreconditionFailed");
    rp.send(Method::PUT, &p("a3"), Some(&body), &hdr("if-match", "*"))
        .await
        .assert_error(412, "PreconditionFailed");
    rp.send(
        Method::PUT,
        &p("a4"),
        Some(&body),
        &hdr("if-match", "\"xyz\""),
    )
    .await
    .assert_error(412, "PreconditionFailed");
    assert_eq!(rp.get(&p("a3")).await.status, 404);
    assert_eq!(rp.get(&p("a4")).await.status, 404);
    assert_eq!(
        rp.send(
            Method::PUT,
            &p("a5"),
            Some(&body),
            &hdr("if-none-match", "*")
        )
        .await
        .status,
        201
    );
    // exists (settled)
    let w = p("w");
    let created = rp.create(&w, &body).await;
    let e0 = rp.get(&w).await.etag();
    assert_eq!(e0, created.etag());
    assert_eq!(rp.get(&w).await.etag(), e0, "stable across GETs");
    let before = rp.get(&w).await.body;
    rp.send(Method::PUT, &w, Some(&body), &hdr("if-match", "\"xyz\""))
        .await
        .assert_error(412, "PreconditionFailed");
    rp.send(Method::PUT, &w, Some(&body), &hdr("if-none-match", "*"))
        .await
        .assert_error(412, "PreconditionFailed");
    let after = rp.get(&w).await;
    assert_eq!(after.body, before);
    assert_eq!(after.etag(), e0);
    let r = rp
        .send(Method::PUT, &w, Some(&body), &[("if-match", e0.as_str())])
        .await;
    assert_eq!(r.status, 200);
    let e1 = r.etag();
    assert_ne!(e1, e0);
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&w).await.etag(), e1);
    rp.send(Method::PUT, &w, Some(&body), &[("if-match", e0.as_str())])
        .await
        .assert_error(412, "PreconditionFailed");
    rp.send(Method::PUT, &w, Some(&body), &hdr("if-match", "\"\""))
        .await
        .assert_error(412, "PreconditionFailed");
    for h in [&hdr("if-match", "*")[..], &hdr("if-match", "")[..], &[]] {
        let r = rp.send(Method::PUT, &w, Some(&body), h).await;
        assert_eq!(r.status, 200, "{h:?}");
        assert!(
            r.h("etag")
                .is_some_and(|e| e.starts_with('"') && e.ends_with('"'))
        );
        rp.wait(&r.aao()).await;
    }
}

#[tokio::test]
async fn etag_patch_and_delete_tables() {
    let rp = rp().await;
    let w = rp.with_widget().await;
    let upd = json!({"properties": {"size": 4}});
    for h in ["", "\"\"", "*", "\"xyz\""] {
        let hs = if h.is_empty() {
            vec![]
        } else {
            vec![("if-match", h)]
        };
        rp.send(Method::PATCH, &widget("rg1", "missing"), Some(&upd), &hs)
            .await
            .assert_error(404, "ResourceNotFound");
        assert_eq!(
            rp.send(Method::DELETE, &widget("rg1", "missing"), None, &hs)
                .await
                .status,
            204,
            "{h}"
        );
    }
    assert_eq!(rp.get(&widget("rg1", "missing")).await.status, 404);
    let e0 = rp.get(&w).await.etag();
    for tag in ["\"xyz\"", "\"\""] {
        rp.send(Method::PATCH, &w, Some(&upd), &[("if-match", tag)])
            .await
            .assert_error(412, "PreconditionFailed");
        rp.send(Method::DELETE, &w, None, &[("if-match", tag)])
            .await
            .assert_error(412, "PreconditionFailed");
    }
    let g = rp.get(&w).await;
    assert_eq!((g.status, g.etag()), (200, e0.clone()));
    let mut last = e0.clone();
    for h in ["", "empty", "*", "current"] {
        let cur = rp.get(&w).await.etag();
        let hs = match h {
            "" => vec![],
            "empty" => vec![("if-match", "")],
            "current" => vec![("if-match", cur.as_str())],
            _ => vec![("if-match", h)],
        };
        let r = rp.send(Method::PATCH, &w, Some(&upd), &hs).await;
        assert_eq!(r.status, 200, "{h}");
        assert_eq!(r.state(), "Updating");
        assert_ne!(r.etag(), last);
        last = r.etag();
        rp.wait(&r.aao()).await;
    }
    rp.send(Method::PATCH, &w, Some(&upd), &[("if-match", e0.as_str())])
        .await
        .assert_error(412, "PreconditionFailed");
    // DELETE: absent / empty / * / matching → 202
    for (i, h) in ["", "empty", "*", "current"].into_iter().enumerate() {
        let name = format!("d{i}");
        let p = widget("rg1", &name);
        rp.create(&p, &widget_body()).await;
        let cur = rp.get(&p).await.etag();
        let hs = match h {
            "" => vec![],
            "empty" => vec![("if-match", "")],
            "current" => vec![("if-match", cur.as_str())],
            _ => vec![("if-match", h)],
        };
        let r = rp.send(Method::DELETE, &p, None, &hs).await;
        assert_eq!(r.status, 202, "{h}");
        assert!(r.location().starts_with("http://"));
    }
}

#[tokio::test]
async fn provisioning_state_echo() {
    let rp = rp().await;
    let w = rp.with_widget().await;
    let mut body = rp.get(&w).await.body;
    assert_eq!(body["properties"]["provisioningState"], "Succeeded");
    let r = rp.put(&w, &body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    rp.wait(&r.aao()).await;
    body["properties"]["provisioningState"] = json!("succeeded");
    let r = rp.put(&w, &body).await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    let before = rp.get(&w).await;
    body["properties"]["provisioningState"] = json!("Failed");
    body["properties"]["size"] = json!(9);
    rp.put(&w, &body)
        .await
        .assert_error(400, "InvalidProvisioningState");
    let after = rp.get(&w).await;
    assert_eq!(
        (after.body.clone(), after.etag()),
        (before.body.clone(), before.etag())
    );
}

#[tokio::test]
async fn paths_match_case_insensitively_and_ids_keep_creating_casing() {
    let rp = rp().await;
    rp.make_rg("MyRg").await;
    let w = widget("MyRg", "MyWidget");
    rp.create(&w, &widget_body()).await;
    let recased = format!(
        "/SUBSCRIPTIONS/{SUB}/resourcegroups/MYRG/PROVIDERS/microsoft.contoso/WIDGETS/mywidget"
    );
    let g = rp.get(&recased).await;
    assert_eq!(g.status, 200);
    assert_eq!(g.body["id"], w);
    assert_eq!(g.body["name"], "MyWidget");
    assert_eq!(g.body["type"], "Microsoft.Contoso/widgets");
    let r = rp.put(&recased, &widget_body()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["id"], w);
    rp.wait(&r.aao()).await;
    let r = rp
        .patch(&recased, &json!({"properties": {"size": 7}}))
        .await;
    assert_eq!(r.status, 200);
    rp.wait(&r.aao()).await;
    assert_eq!(rp.get(&w).await.body["properties"]["size"], 7);
    let list = rp.get(&widgets("myrg")).await;
    assert_eq!(list.body["value"].as_array().map(Vec::len), Some(1));
    let d = rp.delete(&recased).await;
    assert_eq!(d.status, 202);
    rp.wait(&d.aao()).await;
    assert_eq!(rp.get(&w).await.status, 404);
}

#[tokio::test]
async fn system_data_and_tags_persist() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let w = widget("rg1", "w1");
    let sd_a = r#"{"createdBy":"alice","createdByType":"User","createdAt":"2024-01-01T00:00:00Z"}"#;
    let r = rp
        .send(
            Method::PUT,
            &w,
            Some(&widget_body()),
            &[("x-ms-arm-resource-system-data", sd_a)],
        )
        .await;
    assert_eq!(r.body["systemData"]["createdBy"], "alice");
    assert_eq!(r.body["tags"], json!({"env": "test"}));
    rp.wait(&r.aao()).await;
    let g = rp.get(&w).await;
    assert_eq!(g.body["systemData"]["createdAt"], "2024-01-01T00:00:00Z");
    assert_eq!(g.body["tags"], json!({"env": "test"}));
    let sd_b = r#"{"lastModifiedBy":"bob","lastModifiedAt":"2024-02-01T00:00:00Z"}"#;
    let r = rp
        .send(
            Method::PATCH,
            &w,
            Some(&json!({"tags": {"new": "x"}, "properties": {"size": 5}})),
            &[("x-ms-arm-resource-system-data", sd_b)],
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["systemData"]["lastModifiedBy"], "bob");
    assert_eq!(r.body["systemData"]["createdBy"], "alice");
    rp.wait(&r.aao()).await;
    let g = rp.get(&w).await;
    assert_eq!(g.body["tags"], json!({"new": "x"}));
    assert_eq!(g.body["properties"]["size"], 5);
    assert_eq!(
        g.body["properties"]["maxCount"], 5,
        "merge-patch keeps other properties"
    );
    assert_eq!(g.body["systemData"]["lastModifiedBy"], "bob");
    let list = rp.get(&widgets("rg1")).await;
    assert_eq!(list.body["value"][0]["systemData"]["createdBy"], "alice");
}

#[tokio::test]
async fn lists_are_paged_with_absolute_next_links() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    for i in 0..7 {
        assert_eq!(
            rp.put(&widget("rg1", &format!("w{i}")), &widget_body())
                .await
                .status,
            201
        );
    }
    rp.make_rg("other").await;
    rp.put(&widget("other", "x"), &widget_body()).await;
    let mut url = widgets("rg1");
    let mut names = Vec::new();
    let mut pages = 0;
    loop {
        let r = rp.get(&url).await;
        assert_eq!(r.status, 200);
        pages += 1;
        for v in r.body["value"].as_array().expect("value") {
            names.push(v["name"].as_str().unwrap_or("").to_string());
            assert!(v["properties"]["provisioningState"].is_string());
        }
        match r.body.get("nextLink").and_then(|n| n.as_str()) {
            Some(next) => {
                assert!(next.starts_with(&rp.base), "{next}");
                url = next.to_string();
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, ["w0", "w1", "w2", "w3", "w4", "w5", "w6"]);
}

#[tokio::test]
async fn nested_types_and_missing_parents() {
    let rp = rp().await;
    let w = rp.with_widget().await;
    let g = gadget("rg1", "w1", "g1");
    rp.put(&gadget("rg1", "nope", "g1"), &proxy_body())
        .await
        .assert_error(404, "ParentResourceNotFound");
    rp.get(&gadget("rg1", "nope", "g1"))
        .await
        .assert_error(404, "ParentResourceNotFound");
    rp.get(&format!("{}/gadgets", widget("rg1", "nope")))
        .await
        .assert_error(404, "ParentResourceNotFound");
    let r = rp.create(&g, &proxy_body()).await;
    assert_eq!(r.status, 201);
    let got = rp.get(&g).await;
    assert_eq!(got.body["id"], g);
    assert_eq!(got.body["type"], "Microsoft.Contoso/widgets/gadgets");
    assert!(got.body.get("location").is_none() && got.body.get("tags").is_none());
    let s = sprocket("rg1", "w1", "g1", "s1");
    rp.create(&s, &proxy_body()).await;
    assert_eq!(
        rp.get(&s).await.body["type"],
        "Microsoft.Contoso/widgets/gadgets/sprockets"
    );
    rp.create(&widget("rg1", "w2"), &widget_body()).await;
    rp.create(&gadget("rg1", "w2", "other"), &proxy_body())
        .await;
    let list = rp.get(&format!("{w}/gadgets")).await;
    let names: Vec<_> = list.body["value"]
        .as_array()
        .expect("value")
        .iter()
        .map(|v| v["name"].clone())
        .collect();
    assert_eq!(names, [json!("g1")]);
    assert_eq!(
        rp.get(&format!("{g}/sprockets")).await.body["value"][0]["name"],
        "s1"
    );
}

#[tokio::test]
async fn skus() {
    let rp = rp().await;
    let w = rp.with_widget().await;
    let r = rp.get(&format!("{w}/skus")).await;
    assert_eq!(r.status, 200);
    let v = r.body["value"].as_array().expect("value");
    assert_eq!(v.len(), 2);
    for item in v {
        assert!(item["resourceType"].as_str().is_some_and(|s| !s.is_empty()));
        assert!(item["sku"]["name"].is_string() && item["sku"]["tier"].is_string());
        assert!(
            ["automatic", "manual"].contains(&item["capacity"]["scaleType"].as_str().unwrap_or(""))
        );
        for k in ["minimum", "maximum", "default"] {
            assert!(item["capacity"][k].is_i64());
        }
    }
    let g = gadget("rg1", "w1", "g1");
    rp.create(&g, &proxy_body()).await;
    let r = rp.get(&format!("{g}/skus")).await;
    assert_eq!((r.status, r.body.clone()), (200, json!({"value": []})));
    rp.get(&format!("{}/skus", widget("rg1", "nope")))
        .await
        .assert_error(404, "ResourceNotFound");
    rp.get(&format!("{}/skus", gadget("rg1", "w1", "nope")))
        .await
        .assert_error(404, "ResourceNotFound");
}

#[tokio::test]
async fn links_use_the_referer_host() {
    let rp = rp().await;
    rp.make_rg("rg1").await;
    let r = rp
        .send(
            Method::PUT,
            &widget("rg1", "w1"),
            Some(&widget_body()),
            &[("referer", "https://management.example.com/foo")],
        )
        .await;
    assert!(
        r.location()
            .starts_with("https://management.example.com/subscriptions/")
    );
    assert!(
        r.aao()
            .starts_with("https://management.example.com/subscriptions/")
    );
    let r = rp.put(&widget("rg1", "w2"), &widget_body()).await;
    assert!(r.location().starts_with(&rp.base), "{}", r.location());
    assert!(
        r.location().contains("/operationResults/")
            && r.location().contains("api-version=2024-05-01")
    );
    assert!(r.aao().contains("/operationStatuses/"));
    let id = |u: &str| {
        u.split('?')
            .next()
            .unwrap_or("")
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(id(&r.location()), id(&r.aao()));
}
