//! The front-door fault knobs (issue 40, rules FD-01..09): each, switched on alone, shows its
//! deviation over HTTP, next to the conforming RP (`rp()`) answering the same requests as ARM
//! expects. ARM's part is played by the headers it adds: a `Referer` holding the full public URL
//! of the request, the caller's identity headers and `x-ms-arm-resource-system-data`.

use crate::common;

use std::time::Duration;

use common::*;
use reqwest::Method;
use rpconform_refrp::Fault;
use serde_json::json;

/// ARM's public host as the Referer names it. Never called: the tests only read the links.
const PUBLIC: &str = "https://management.example";

/// The Referer ARM sends with a request to `path`: the request's full public URL.
fn referer(path: &str) -> String {
    format!("{PUBLIC}{path}?api-version={API}")
}

/// `x-ms-arm-resource-system-data` as ARM sends it on a write by `who` at `at`: both halves.
fn system_data(who: &str, at: &str) -> String {
    json!({
        "createdBy": who, "createdByType": "User", "createdAt": at,
        "lastModifiedBy": who, "lastModifiedByType": "User", "lastModifiedAt": at,
    })
    .to_string()
}

#[tokio::test]
async fn links_from_host() {
    let clean = rp().await;
    let faulty = rp_fault(Fault::LinksFromHost).await;
    // The conforming RP builds its operation links on the Referer's host; the faulty one on
    // the host it was called on (its own endpoint).
    for (rp, host) in [(&clean, PUBLIC), (&faulty, faulty.base.as_str())] {
        rp.make_rg("rg1").await;
        let w = widget("rg1", "w1");
        let via = referer(&w);
        let put = rp
            .send(Method::PUT, &w, Some(&widget_body()), &[("referer", &via)])
            .await;
        assert_eq!(put.status, 201, "{}", put.body);
        let del = rp
            .send(Method::DELETE, &w, None, &[("referer", &via)])
            .await;
        assert_eq!(del.status, 202, "{}", del.body);
        let ops = format!("{host}/subscriptions/{SUB}/providers/Microsoft.Contoso/locations/");
        for link in [put.aao(), put.location(), del.aao(), del.location()] {
            assert!(link.starts_with(&ops), "{host}: {link}");
        }
    }
}

#[tokio::test]
async fn next_link_from_host() {
    let clean = rp().await;
    let faulty = rp_fault(Fault::NextLinkFromHost).await;
    for (rp, host) in [(&clean, PUBLIC), (&faulty, faulty.base.as_str())] {
        rp.make_rg("rg1").await;
        // One more than a page (3).
        for i in 0..4 {
            let w = widget("rg1", &format!("w{i}"));
            let r = rp
                .send(
                    Method::PUT,
                    &w,
                    Some(&widget_body()),
                    &[("referer", &referer(&w))],
                )
                .await;
            assert_eq!(r.status, 201, "{}", r.body);
            // Only the nextLink: operation links follow the Referer under this knob too.
            assert!(r.aao().starts_with(PUBLIC), "{}", r.aao());
        }
        let list = widgets("rg1");
        let r = rp
            .send(Method::GET, &list, None, &[("referer", &referer(&list))])
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let next = r.body["nextLink"].as_str().expect("nextLink");
        assert!(
            next.starts_with(&format!("{host}{list}?")),
            "{host}: {next}"
        );
    }
}

#[tokio::test]
async fn endpoint_in_header() {
    let clean = rp().await;
    let faulty = rp_fault(Fault::EndpointInHeader).await;
    for rp in [&clean, &faulty] {
        rp.make_rg("rg1").await;
    }
    let group = rg("rg1");
    let via = referer(&group);
    let c = clean
        .send(Method::GET, &group, None, &[("referer", &via)])
        .await;
    assert_eq!(c.status, 200, "{}", c.body);
    // Neither a header nor the body names the endpoint the conforming RP was called on.
    let own = clean.base.trim_start_matches("http://");
    assert!(
        !c.headers
            .iter()
            .any(|(_, v)| v.to_str().unwrap_or("").contains(own)),
        "{:?}",
        c.headers
    );
    assert!(!c.body.to_string().contains(own), "{}", c.body);
    let f = faulty
        .send(Method::GET, &group, None, &[("referer", &via)])
        .await;
    assert_eq!(f.status, 200, "{}", f.body);
    assert_eq!(f.h("x-ms-served-by"), Some(faulty.base.as_str()));
}

#[tokio::test]
async fn system_data_own_values() {
    let clean = rp().await;
    let faulty = rp_fault(Fault::SystemDataOwnValues).await;
    let at = "2026-11-26T18:00:00Z";
    let sd = system_data("alice@contoso.com", at);
    for (rp, conforming) in [(&clean, true), (&faulty, false)] {
        rp.make_rg("rg1").await;
        let w = widget("rg1", "w1");
        let put = rp
            .send(
                Method::PUT,
                &w,
                Some(&widget_body()),
                &[("x-ms-arm-resource-system-data", &sd)],
            )
            .await;
        assert_eq!(put.status, 201, "{}", put.body);
        let got = rp.get(&w).await;
        for body in [&put.body, &got.body] {
            let s = &body["systemData"];
            let seen = (
                s["createdBy"].as_str(),
                s["lastModifiedBy"].as_str(),
                s["createdAt"].as_str() == Some(at),
                s["lastModifiedAt"].as_str() == Some(at),
            );
            if conforming {
                let alice = Some("alice@contoso.com");
                assert_eq!(seen, (alice, alice, true, true), "{s}");
            } else {
                // The RP's own caller and clock instead of ARM's.
                assert_eq!(seen, (Some("refrp"), Some("refrp"), false, false), "{s}");
            }
        }
    }
}

#[tokio::test]
async fn system_data_created_overwritten() {
    let clean = rp().await;
    let faulty = rp_fault(Fault::SystemDataCreatedOverwritten).await;
    let (first, later) = ("2026-11-26T18:00:00Z", "2026-11-27T09:30:00Z");
    for (rp, creator) in [(&clean, "alice"), (&faulty, "bob")] {
        rp.make_rg("rg1").await;
        let w = widget("rg1", "w1");
        let sd = system_data("alice", first);
        let put = rp
            .send(
                Method::PUT,
                &w,
                Some(&widget_body()),
                &[("x-ms-arm-resource-system-data", &sd)],
            )
            .await;
        assert_eq!(put.status, 201, "{}", put.body);
        rp.wait(&put.aao()).await;
        // A later replace by bob: ARM sends both halves again, with bob's values.
        let sd = system_data("bob", later);
        let again = rp
            .send(
                Method::PUT,
                &w,
                Some(&widget_body()),
                &[("x-ms-arm-resource-system-data", &sd)],
            )
            .await;
        assert_eq!(again.status, 200, "{}", again.body);
        let got = rp.get(&w).await;
        let created_at = if creator == "alice" { first } else { later };
        for body in [&again.body, &got.body] {
            let s = &body["systemData"];
            assert_eq!(
                (
                    s["createdBy"].as_str(),
                    s["createdAt"].as_str(),
                    s["lastModifiedBy"].as_str(),
                    s["lastModifiedAt"].as_str()
                ),
                (Some(creator), Some(created_at), Some("bob"), Some(later)),
                "{s}"
            );
        }
    }
}

#[tokio::test]
async fn opstatus_other_tenant() {
    let caller = |tenant: &'static str, object: &'static str| {
        [
            ("x-ms-home-tenant-id", tenant),
            ("x-ms-client-tenant-id", tenant),
            ("x-ms-client-object-id", object),
        ]
    };
    let owner = caller("tenant-a", "client-a");
    // The same object id, as a caller of another tenant.
    let other_tenant = caller("tenant-b", "client-a");
    let other_caller = caller("tenant-a", "client-b");
    let clean = rp().await;
    let faulty = rp_fault(Fault::OpStatusOtherTenant).await;
    // (status read, Location read) by the other tenant: the faulty RP answers both as it
    // answers the owner while the operation runs.
    for (rp, foreign) in [(&clean, (404, 404)), (&faulty, (200, 202))] {
        rp.make_rg("rg1").await;
        let w = widget("rg1", "w1");
        let put = rp.send(Method::PUT, &w, Some(&widget_body()), &owner).await;
        assert_eq!(put.status, 201, "{}", put.body);
        let (aao, loc) = (put.aao(), put.location());
        let status = rp.send(Method::GET, &aao, None, &other_tenant).await;
        let result = rp.send(Method::GET, &loc, None, &other_tenant).await;
        assert_eq!((status.status, result.status), foreign, "{}", status.body);
        if foreign.0 == 404 {
            status.assert_error(404, "OperationNotFound");
        }
        // The object id is still checked, and the owner is answered.
        let r = rp.send(Method::GET, &aao, None, &other_caller).await;
        r.assert_error(404, "OperationNotFound");
        let r = rp.send(Method::GET, &aao, None, &owner).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
}

#[tokio::test]
async fn failure_cause_malformed() {
    let clean = rp().await;
    let faulty = rp_fault(Fault::FailureCauseMalformed).await;
    for rp in [&clean, &faulty] {
        rp.make_rg("rg1").await;
    }
    let missing = widget("rg1", "nope");
    let c = clean.get(&missing).await;
    c.assert_error(404, "ResourceNotFound");
    // The conforming RP names the client, in the grammar (`client` or `service`, `:` category).
    assert_eq!(c.h("x-ms-failurecause"), Some("client:RequestValidation"));
    let f = faulty.get(&missing).await;
    f.assert_error(404, "ResourceNotFound");
    assert_eq!(f.h("x-ms-failurecause"), Some("user"));
    // Error answers only: a success carries no failure cause.
    for rp in [&clean, &faulty] {
        let ok = rp.get(&rg("rg1")).await;
        assert_eq!((ok.status, ok.h("x-ms-failurecause")), (200, None));
    }
}

#[tokio::test]
async fn slow_skus() {
    // The conforming RP answers the SKU list at once (no client timeout involved).
    let clean = rp().await;
    let w = clean.with_widget().await;
    let r = clean.get(&format!("{w}/skus")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["value"].is_array(), "{}", r.body);
    // The faulty one answers other reads at once, and the SKU list after 61 s: a client that
    // waits 2 s has no answer. (A bound, not a race: 61 s is far past it.)
    let faulty = rp_fault(Fault::SlowSkus).await;
    let w = faulty.with_widget().await;
    assert_eq!(faulty.get(&w).await.status, 200);
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .expect("client");
    let err = impatient
        .get(faulty.url(&format!("{w}/skus")))
        .send()
        .await
        .expect_err("the SKU list answered within 2 s");
    assert!(err.is_timeout(), "{err}");
}
