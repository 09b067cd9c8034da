//! The task-based surface (`/v1`, rules TASK-01..08) over real HTTP: subscription writes
//! answered with tasks, task status order, provisioning states, synchronous reads, errors,
//! and each task fault knob (on: the deviation shows; the conforming behaviour it replaces is
//! checked by the tests above it).

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use reqwest::Method;
use rpconform_refrp::{Fault, Settings};
use serde_json::{Value, json};

const ORDER: &[&str] = &[
    "received",
    "processing-in-progress",
    "processing-completed",
    "processing-error",
];

fn rank(status: &str) -> usize {
    ORDER
        .iter()
        .position(|s| *s == status)
        .unwrap_or_else(|| panic!("unknown task status {status}"))
        .min(2)
}

impl Rp {
    async fn t_send(&self, method: Method, path: &str, body: Option<&Value>) -> Resp {
        let text = body.map(Value::to_string);
        self.send_raw(method, path, text.as_deref(), &[]).await
    }

    async fn t_get(&self, path: &str) -> Resp {
        self.t_send(Method::GET, path, None).await
    }

    /// Polls a task until it is terminal, checking the order on every read; returns the last
    /// body and the statuses seen.
    async fn t_wait(&self, task_id: &str) -> (Value, Vec<String>) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen: Vec<String> = Vec::new();
        loop {
            let r = self.t_get(&format!("/v1/tasks/{task_id}")).await;
            assert_eq!(r.status, 200, "{}", r.body);
            assert_eq!(r.body["taskId"], task_id);
            assert!(
                chrono::DateTime::parse_from_rfc3339(r.body["timestamp"].as_str().unwrap_or(""))
                    .is_ok()
            );
            let s = r.body["status"].as_str().unwrap_or("").to_string();
            assert!(
                seen.last().is_none_or(|prev| rank(prev) <= rank(&s)),
                "went back: {seen:?} then {s}"
            );
            seen.push(s.clone());
            if rank(&s) == 2 {
                return (r.body, seen);
            }
            assert!(r.body.get("response").is_none(), "{}", r.body);
            assert!(Instant::now() < deadline, "task never ended: {}", r.body);
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Polls a subscription until `done(status)` holds; returns the last body (or `Null` for 404).
    async fn sub_until(&self, id: u64, done: impl Fn(&str) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let r = self.t_get(&format!("/v1/subscriptions/{id}")).await;
            let status = match r.status {
                200 => r.body["status"].as_str().unwrap_or("").to_string(),
                404 => "404".to_string(),
                other => panic!("GET answered {other}: {}", r.body),
            };
            if done(&status) {
                return if r.status == 200 { r.body } else { Value::Null };
            }
            assert!(Instant::now() < deadline, "stuck at {status}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Creates subscription `name` and waits until it is active; returns its id.
    async fn active_sub(&self, name: &str) -> u64 {
        let r = self
            .t_send(
                Method::POST,
                "/v1/subscriptions",
                Some(&json!({"name": name})),
            )
            .await;
        assert_eq!(r.status, 202, "{}", r.body);
        let (done, _) = self.t_wait(r.body["taskId"].as_str().unwrap_or("")).await;
        let id = done["response"]["resourceId"].as_u64().expect("resourceId");
        self.sub_until(id, |s| s == "active").await;
        id
    }
}

#[tokio::test]
async fn create_task_and_provisioning() {
    // Held open by the read gate (three reads): the first read of the task shows `received`,
    // the next ones `processing-in-progress`, and the subscription stays `pending` for three
    // reads of it, whatever the machine load.
    let rp = rp().await;
    let r = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "sub-a", "fail": null})),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let b = &r.body;
    let task_id = b["taskId"].as_str().expect("taskId").to_string();
    assert_eq!(task_id.len(), 36);
    assert_eq!(b["commandType"], "createSubscriptionRequest");
    assert_eq!(b["status"], "received");
    assert!(!b["description"].as_str().unwrap_or("").is_empty());
    assert!(chrono::DateTime::parse_from_rfc3339(b["timestamp"].as_str().unwrap_or("")).is_ok());
    assert_eq!(
        b["links"][0],
        json!({"rel": "task", "href": format!("{}/v1/tasks/{task_id}", rp.base), "type": "GET"})
    );
    // The running task is listed.
    let list = rp.t_get("/v1/tasks").await;
    assert_eq!(list.status, 200);
    let listed = &list.body["tasks"][0];
    assert_eq!(listed["taskId"], task_id.as_str());
    assert!(rank(listed["status"].as_str().unwrap_or("")) < 2);

    let (done, seen) = rp.t_wait(&task_id).await;
    assert!(
        seen.iter().any(|s| s == "processing-in-progress"),
        "{seen:?}"
    );
    assert_eq!(done["status"], "processing-completed");
    let id = done["response"]["resourceId"].as_u64().expect("resourceId");
    assert_eq!(rp.t_get(&format!("/v1/tasks/{task_id}")).await.body, done);

    let first = rp.t_get(&format!("/v1/subscriptions/{id}")).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.body["id"], id);
    assert_eq!(first.body["name"], "sub-a");
    assert_eq!(first.body["status"], "pending");
    let active = rp.sub_until(id, |s| s != "pending").await;
    assert_eq!(active["status"], "active");
    assert!(active.get("error").is_none());
    let all = rp.t_get("/v1/subscriptions").await;
    assert_eq!(all.status, 200);
    assert_eq!(all.body["subscriptions"][0]["id"], id);
    for _ in 0..4 {
        assert_eq!(
            rp.t_get(&format!("/v1/subscriptions/{id}")).await.body["status"],
            "active",
            "never returns to pending"
        );
    }
}

#[tokio::test]
async fn every_write_gets_a_new_task() {
    let rp = rp().await;
    let id = rp.active_sub("s1").await;
    let a = rp
        .t_send(
            Method::PUT,
            &format!("/v1/subscriptions/{id}"),
            Some(&json!({"name": "s1-renamed"})),
        )
        .await;
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body["commandType"], "updateSubscriptionRequest");
    let b = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "s2"})),
        )
        .await;
    let ids = [
        a.body["taskId"].as_str().unwrap_or("a"),
        b.body["taskId"].as_str().unwrap_or("b"),
    ];
    assert_ne!(ids[0], ids[1]);
    let (done, _) = rp.t_wait(ids[0]).await;
    assert_eq!(done["status"], "processing-completed");
    assert_eq!(done["response"]["resourceId"], id);
    let s = rp.t_get(&format!("/v1/subscriptions/{id}")).await.body;
    assert_eq!(
        (s["name"].as_str(), s["status"].as_str()),
        (Some("s1-renamed"), Some("active"))
    );
}

#[tokio::test]
async fn delete_task_then_deleting_then_gone() {
    // Held open until observed twice: `deleting` is seen on any machine.
    let rp = rp_with(gated(2)).await;
    let id = rp.active_sub("doomed").await;
    let d = rp
        .t_send(Method::DELETE, &format!("/v1/subscriptions/{id}"), None)
        .await;
    assert_eq!(d.status, 202, "{}", d.body);
    assert_eq!(d.body["commandType"], "deleteSubscriptionRequest");
    let (done, _) = rp.t_wait(d.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(done["status"], "processing-completed");
    assert_eq!(done["response"]["resourceId"], id);
    let deleting = rp.t_get(&format!("/v1/subscriptions/{id}")).await;
    assert_eq!(
        (deleting.status, deleting.body["status"].as_str()),
        (200, Some("deleting"))
    );
    rp.sub_until(id, |s| s == "404").await;
    let gone = rp.t_get(&format!("/v1/subscriptions/{id}")).await;
    assert_eq!(gone.status, 404);
    assert_eq!(gone.body["error"]["type"], "SUBSCRIPTION_NOT_FOUND");
    assert_eq!(gone.body["error"]["status"], "404 NOT_FOUND");
}

#[tokio::test]
async fn failures_in_processing_and_provisioning() {
    let rp = rp().await;
    let p = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "x", "fail": "processing"})),
        )
        .await;
    let (done, _) = rp.t_wait(p.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(done["status"], "processing-error");
    let err = &done["response"]["error"];
    assert_eq!(err["status"], "400 BAD_REQUEST");
    assert!(!err["type"].as_str().unwrap_or("").is_empty());
    assert!(!err["description"].as_str().unwrap_or("").is_empty());
    assert!(
        rp.t_get("/v1/subscriptions").await.body["subscriptions"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );

    let v = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "y", "fail": "provisioning"})),
        )
        .await;
    let (done, _) = rp.t_wait(v.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(done["status"], "processing-completed");
    let id = done["response"]["resourceId"].as_u64().expect("resourceId");
    let failed = rp.sub_until(id, |s| s != "pending").await;
    assert_eq!(failed["status"], "error");
    assert!(
        !failed["error"]["description"]
            .as_str()
            .unwrap_or("")
            .is_empty()
    );

    // An update of a subscription that is not active fails in processing.
    let u = rp
        .t_send(
            Method::PUT,
            &format!("/v1/subscriptions/{id}"),
            Some(&json!({"name": "z"})),
        )
        .await;
    let (done, _) = rp.t_wait(u.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(done["status"], "processing-error");
    assert_eq!(done["response"]["error"]["type"], "SUBSCRIPTION_NOT_ACTIVE");
}

#[tokio::test]
async fn reads_are_synchronous_and_errors_are_json() {
    let rp = rp().await;
    let id = rp.active_sub("r").await;
    for path in [
        "/v1/subscriptions".to_string(),
        format!("/v1/subscriptions/{id}"),
        "/v1/tasks".to_string(),
    ] {
        let r = rp.t_get(&path).await;
        assert_eq!(r.status, 200, "{path}");
        assert!(r.body.get("taskId").is_none());
    }
    let head = rp
        .send_raw(Method::HEAD, &format!("/v1/subscriptions/{id}"), None, &[])
        .await;
    assert_eq!(head.status, 200);
    let cases: Vec<(Method, String, Option<&str>, u16, &str)> = vec![
        (
            Method::GET,
            "/v1/tasks/nope".into(),
            None,
            404,
            "TASK_NOT_FOUND",
        ),
        (
            Method::GET,
            "/v1/subscriptions/999".into(),
            None,
            404,
            "SUBSCRIPTION_NOT_FOUND",
        ),
        (
            Method::GET,
            "/v1/subscriptions/abc".into(),
            None,
            404,
            "SUBSCRIPTION_NOT_FOUND",
        ),
        (
            Method::PUT,
            "/v1/subscriptions/999".into(),
            Some(r#"{"name":"a"}"#),
            404,
            "SUBSCRIPTION_NOT_FOUND",
        ),
        (
            Method::DELETE,
            "/v1/subscriptions/999".into(),
            None,
            404,
            "SUBSCRIPTION_NOT_FOUND",
        ),
        (Method::GET, "/v1/nothing".into(), None, 404, "NOT_FOUND"),
        (
            Method::DELETE,
            "/v1/tasks".into(),
            None,
            405,
            "METHOD_NOT_ALLOWED",
        ),
        (
            Method::POST,
            format!("/v1/subscriptions/{id}"),
            None,
            405,
            "METHOD_NOT_ALLOWED",
        ),
        (
            Method::POST,
            "/v1/subscriptions".into(),
            Some("{oops"),
            400,
            "INVALID_REQUEST_BODY",
        ),
        (
            Method::POST,
            "/v1/subscriptions".into(),
            Some("[]"),
            400,
            "INVALID_REQUEST_BODY",
        ),
        (
            Method::POST,
            "/v1/subscriptions".into(),
            Some(r#"{"name": 5}"#),
            400,
            "INVALID_REQUEST_BODY",
        ),
        (
            Method::POST,
            "/v1/subscriptions".into(),
            Some(r#"{"name": "a", "fail": "later"}"#),
            400,
            "INVALID_REQUEST_BODY",
        ),
        (
            Method::PUT,
            format!("/v1/subscriptions/{id}"),
            Some(r#"{"name": "a", "fail": "provisioning"}"#),
            400,
            "INVALID_REQUEST_BODY",
        ),
        (
            Method::PUT,
            format!("/v1/subscriptions/{id}"),
            Some(""),
            400,
            "INVALID_REQUEST_BODY",
        ),
    ];
    for (method, path, body, status, kind) in cases {
        let r = rp.send_raw(method.clone(), &path, body, &[]).await;
        assert_eq!(r.status, status, "{method} {path}: {}", r.body);
        assert_eq!(r.body["error"]["type"], kind, "{method} {path}");
        assert!(
            !r.body["error"]["description"]
                .as_str()
                .unwrap_or("")
                .is_empty()
        );
        if status == 405 {
            assert!(r.h("allow").is_some());
        }
    }
    assert_eq!(
        rp.t_get("/v1/tasks").await.body["tasks"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

// ---- fault knobs ----

#[tokio::test]
async fn task_status_regresses() {
    // Held open by the read gate: each read shows the next phase, so the regression is seen
    // whatever the machine load.
    let faulty = rp_fault(Fault::TaskStatusRegresses).await;
    let r = faulty
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "a"})),
        )
        .await;
    assert_eq!(r.body["status"], "received");
    let url = format!("/v1/tasks/{}", r.body["taskId"].as_str().unwrap_or(""));
    let mut seen: Vec<Value> = Vec::new();
    for _ in 0..4 {
        seen.push(faulty.t_get(&url).await.body["status"].clone());
    }
    assert_eq!(
        seen,
        [
            "received",
            "processing-in-progress",
            "received",
            "processing-completed"
        ]
    );
    // The conforming RP never goes back.
    let clean = rp().await;
    let r = clean
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "a"})),
        )
        .await;
    let (_, seen) = clean.t_wait(r.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(
        seen,
        [
            "received",
            "processing-in-progress",
            "processing-in-progress",
            "processing-completed"
        ]
    );
}

#[tokio::test]
async fn task_completed_without_resource_id() {
    let rp = rp_fault(Fault::TaskCompletedWithoutResourceId).await;
    let r = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "a"})),
        )
        .await;
    let (done, _) = rp.t_wait(r.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(done["status"], "processing-completed");
    assert_eq!(done["response"], json!({}));
}

#[tokio::test]
async fn task_error_without_description() {
    let rp = rp_fault(Fault::TaskErrorWithoutDescription).await;
    let r = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "a", "fail": "processing"})),
        )
        .await;
    let (done, _) = rp.t_wait(r.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(done["status"], "processing-error");
    assert!(done["response"]["error"].is_object());
    assert!(done["response"]["error"].get("description").is_none());
}

#[tokio::test]
async fn task_get_async() {
    let rp = rp_fault(Fault::TaskGetAsync).await;
    let r = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "a"})),
        )
        .await;
    let (done, _) = rp.t_wait(r.body["taskId"].as_str().unwrap_or("")).await;
    let id = done["response"]["resourceId"].as_u64().expect("resourceId");
    let g = rp.t_get(&format!("/v1/subscriptions/{id}")).await;
    assert_eq!(g.status, 202);
    assert_eq!(g.body["commandType"], "getSubscriptionRequest");
    let (got, _) = rp.t_wait(g.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(got["response"]["resourceId"], id);
    assert_eq!(
        rp.t_get("/v1/subscriptions").await.status,
        200,
        "the list stays synchronous"
    );
}

#[tokio::test]
async fn resource_stays_pending() {
    let rp = rp_fault(Fault::ResourceStaysPending).await;
    let r = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "a"})),
        )
        .await;
    let (done, _) = rp.t_wait(r.body["taskId"].as_str().unwrap_or("")).await;
    let id = done["response"]["resourceId"].as_u64().expect("resourceId");
    // More reads than the gate holds a conforming RP's provisioning for (op_duration 0): it
    // would be active by the fourth.
    for _ in 0..6 {
        let s = rp.t_get(&format!("/v1/subscriptions/{id}")).await;
        assert_eq!(
            (s.status, s.body["status"].as_str()),
            (200, Some("pending"))
        );
    }
}

#[tokio::test]
async fn task_id_reused() {
    let rp = rp_with(
        Settings {
            op_duration: DUR,
            ..Settings::default()
        }
        .with_fault(Fault::TaskIdReused),
    )
    .await;
    let a = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "a"})),
        )
        .await;
    let b = rp
        .t_send(
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"name": "b"})),
        )
        .await;
    assert_eq!((a.status, b.status), (202, 202));
    assert_eq!(a.body["taskId"], b.body["taskId"]);
    let (done, _) = rp.t_wait(a.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(done["status"], "processing-completed");
    // Both writes were carried out; only the id is shared. The second task can be read only
    // through the id the first one holds, so it ends by time alone (gate off): wait for it.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let subs = rp.t_get("/v1/subscriptions").await.body;
        if subs["subscriptions"].as_array().map(Vec::len) == Some(2) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the second write never ended: {subs}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn deleted_resource_remains() {
    let rp = rp_fault(Fault::DeletedResourceRemains).await;
    let id = rp.active_sub("a").await;
    let d = rp
        .t_send(Method::DELETE, &format!("/v1/subscriptions/{id}"), None)
        .await;
    let (done, _) = rp.t_wait(d.body["taskId"].as_str().unwrap_or("")).await;
    assert_eq!(done["status"], "processing-completed");
    // More reads than the gate holds a conforming RP's removal for (op_duration 0): it would
    // be gone by the fourth.
    for _ in 0..6 {
        let s = rp.t_get(&format!("/v1/subscriptions/{id}")).await;
        assert_eq!(
            (s.status, s.body["status"].as_str()),
            (200, Some("deleting"))
        );
    }
}
