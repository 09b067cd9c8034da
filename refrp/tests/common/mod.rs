//! Shared helpers of the HTTP integration tests: a real RP on an ephemeral port, a small
//! request wrapper, paths of the test resources, and polling.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use reqwest::Method;
use reqwest::header::HeaderMap;
use rpconform_refrp::{Fault, RunningServer, Settings, start};
use serde_json::{Value, json};

pub const API: &str = "2024-05-01";
/// Operation duration of the ungated tests: too short for any read to see an operation still
/// running, so no test can pass by winning a race against the clock. A test that must see an
/// operation running holds it open with [`gated`] (it ends only once read N times).
pub const DUR: Duration = Duration::from_millis(2);
pub const SUB: &str = "00000000-0000-0000-0000-000000000001";

pub struct Rp {
    pub server: RunningServer,
    pub base: String,
    pub client: reqwest::Client,
}

pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Resp {
    pub fn h(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
    pub fn state(&self) -> &str {
        self.body["properties"]["provisioningState"]
            .as_str()
            .unwrap_or("")
    }
    pub fn aao(&self) -> String {
        self.h("azure-asyncoperation")
            .expect("Azure-AsyncOperation")
            .to_string()
    }
    pub fn location(&self) -> String {
        self.h("location").expect("Location").to_string()
    }
    pub fn etag(&self) -> String {
        self.h("etag").expect("ETag").to_string()
    }
    /// Asserts the ARM error envelope with this status and code.
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(self.code(), code, "body: {}", self.body);
        assert!(
            !self.body["error"]["message"]
                .as_str()
                .unwrap_or("")
                .is_empty()
        );
    }
}

pub async fn rp_with(settings: Settings) -> Rp {
    let server = start(settings, 0).await.expect("start");
    let base = server.base_url();
    Rp {
        server,
        base,
        client: reqwest::Client::new(),
    }
}

/// The conforming RP as most tests drive it: operations held open until read once through
/// their own channels, so a later request sees them running whatever the machine load.
pub fn settings() -> Settings {
    gated(3)
}

pub async fn rp() -> Rp {
    rp_with(settings()).await
}

pub async fn rp_fault(f: Fault) -> Rp {
    rp_with(settings().with_fault(f)).await
}

pub fn rg(name: &str) -> String {
    format!("/subscriptions/{SUB}/resourceGroups/{name}")
}
pub fn widget(rg_name: &str, w: &str) -> String {
    format!("{}/providers/Microsoft.Contoso/widgets/{w}", rg(rg_name))
}
pub fn widgets(rg_name: &str) -> String {
    format!("{}/providers/Microsoft.Contoso/widgets", rg(rg_name))
}
pub fn gadget(rg_name: &str, w: &str, g: &str) -> String {
    format!("{}/gadgets/{g}", widget(rg_name, w))
}
pub fn sprocket(rg_name: &str, w: &str, g: &str, s: &str) -> String {
    format!("{}/sprockets/{s}", gadget(rg_name, w, g))
}
pub fn link(rg_name: &str, l: &str) -> String {
    format!("{}/providers/Microsoft.Contoso/links/{l}", rg(rg_name))
}

pub fn widget_body() -> Value {
    json!({"location": "eastus", "tags": {"env": "test"},
           "properties": {"size": 3, "minCount": 1, "maxCount": 5, "description": "d", "simulateFailure": false}})
}
pub fn proxy_body() -> Value {
    json!({"properties": {"size": 1}})
}

impl Rp {
    /// `path` gets `?api-version=API` unless it already has a query or is absolute.
    pub fn url(&self, path: &str) -> String {
        let full = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        };
        if full.contains('?') {
            full
        } else {
            format!("{full}?api-version={API}")
        }
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let mut rb = self.client.request(method, self.url(path));
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        if let Some(b) = body {
            rb = rb
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let resp = rb.send().await.expect("send");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Resp {
            status,
            headers,
            body,
        }
    }

    /// Sends to `path` (absolute, or appended to the base) exactly as given: no api-version is
    /// added, and `body` goes out as raw text.
    pub async fn send_raw(
        &self,
        method: Method,
        path: &str,
        body: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        };
        let mut rb = self.client.request(method, url);
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        if let Some(b) = body {
            rb = rb
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let resp = rb.send().await.expect("send");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Resp {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.send(Method::GET, path, None, &[]).await
    }
    pub async fn put(&self, path: &str, body: &Value) -> Resp {
        self.send(Method::PUT, path, Some(body), &[]).await
    }
    pub async fn patch(&self, path: &str, body: &Value) -> Resp {
        self.send(Method::PATCH, path, Some(body), &[]).await
    }
    pub async fn delete(&self, path: &str) -> Resp {
        self.send(Method::DELETE, path, None, &[]).await
    }
    pub async fn post(&self, path: &str) -> Resp {
        self.send(Method::POST, path, None, &[]).await
    }

    pub async fn make_rg(&self, name: &str) {
        let r = self.put(&rg(name), &json!({"location": "eastus"})).await;
        assert!(r.status == 201 || r.status == 200, "rg: {}", r.status);
    }

    /// Polls an Azure-AsyncOperation URL until its status is terminal; returns the last body.
    pub async fn wait(&self, aao: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let r = self.get(aao).await;
            assert_eq!(r.status, 200, "status read: {}", r.body);
            let s = r.body["status"].as_str().unwrap_or("").to_string();
            if ["Succeeded", "Failed", "Canceled"].contains(&s.as_str()) {
                return r.body;
            }
            assert!(
                Instant::now() < deadline,
                "operation never ended: {}",
                r.body
            );
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
    }

    /// Reads `url` until `done` holds of an answer (at most 20 reads: the hold-open gate ends
    /// an operation after a set number of reads, never after a time); returns that answer.
    pub async fn read_until(&self, url: &str, done: impl Fn(&Resp) -> bool) -> Resp {
        for _ in 0..20 {
            let r = self.get(url).await;
            if done(&r) {
                return r;
            }
        }
        panic!("{url}: 20 reads and still not there");
    }

    /// PUT and wait until the operation ends; asserts it succeeded.
    pub async fn create(&self, path: &str, body: &Value) -> Resp {
        let r = self.put(path, body).await;
        assert!(
            r.status == 201 || r.status == 200,
            "PUT {path}: {} {}",
            r.status,
            r.body
        );
        let done = self.wait(&r.aao()).await;
        assert_eq!(done["status"], "Succeeded", "{done}");
        r
    }

    pub async fn remove(&self, path: &str) {
        let r = self.delete(path).await;
        assert_eq!(r.status, 202, "DELETE {path}: {}", r.body);
        let done = self.wait(&r.aao()).await;
        assert_eq!(done["status"], "Succeeded");
    }

    /// Group `rg1` with widget `w1`, settled.
    pub async fn with_widget(&self) -> String {
        self.make_rg("rg1").await;
        let w = widget("rg1", "w1");
        self.create(&w, &widget_body()).await;
        w
    }
}

/// Settings with op_duration 0 and the hold-open gate at `reads`: operations end exactly
/// after `reads` observations through their own channels, whatever the machine load.
pub fn gated(reads: u32) -> Settings {
    Settings {
        op_duration: Duration::ZERO,
        complete_after_reads: reads,
        ..Settings::default()
    }
}

pub async fn rp_variant(v: rpconform_refrp::Variant) -> Rp {
    rp_with(gated(2).with_variant(v)).await
}

pub async fn rp_gated_fault(f: Fault) -> Rp {
    rp_with(gated(2).with_fault(f)).await
}

pub fn config(rg_name: &str, w: &str) -> String {
    format!("{}/configurations/default", widget(rg_name, w))
}
pub fn sub_widget(name: &str) -> String {
    format!("/subscriptions/{SUB}/providers/Microsoft.Contoso/subscriptionWidgets/{name}")
}
pub fn sub_widgets() -> String {
    format!("/subscriptions/{SUB}/providers/Microsoft.Contoso/subscriptionWidgets")
}
pub fn regional(location: &str, name: &str) -> String {
    format!(
        "/subscriptions/{SUB}/providers/Microsoft.Contoso/locations/{location}/regionalWidgets/{name}"
    )
}
pub fn tenant_widget(name: &str) -> String {
    format!("/providers/Microsoft.Contoso/tenantWidgets/{name}")
}
pub fn annotation(widget_path: &str, name: &str) -> String {
    format!("{widget_path}/providers/Microsoft.Contoso/annotations/{name}")
}
pub fn gizmo(rg_name: &str, name: &str) -> String {
    format!("{}/providers/Microsoft.Fabrikam/gizmos/{name}", rg(rg_name))
}
pub const FABRIKAM_API: &str = "2023-07-01";

/// `path` with `?api-version=` the given version.
pub fn with_version(path: &str, version: &str) -> String {
    format!("{path}?api-version={version}")
}

impl Rp {
    /// Reads `url` until it stops answering 202 (a Location poll); returns the final answer.
    pub async fn poll_location(&self, url: &str) -> Resp {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut url = url.to_string();
        loop {
            let r = self.get(&url).await;
            if r.status != 202 {
                return r;
            }
            if let Some(next) = r.h("location") {
                url = next.to_string();
            }
            assert!(Instant::now() < deadline, "Location never ended: {url}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// GETs `path` until its provisioningState is terminal; returns the last answer.
    pub async fn poll_resource(&self, path: &str) -> Resp {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let r = self.get(path).await;
            if r.status != 200 || ["Succeeded", "Failed", "Canceled"].contains(&r.state()) {
                return r;
            }
            assert!(
                Instant::now() < deadline,
                "{path} never settled: {}",
                r.body
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Rp {
    /// Polls an Azure-AsyncOperation URL until its status is terminal in any letter case.
    pub async fn wait_any_case(&self, aao: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let r = self.get(aao).await;
            assert_eq!(r.status, 200, "status read: {}", r.body);
            let s = r.body["status"].as_str().unwrap_or("").to_ascii_lowercase();
            if ["succeeded", "failed", "canceled"].contains(&s.as_str()) {
                return r.body;
            }
            assert!(
                Instant::now() < deadline,
                "operation never ended: {}",
                r.body
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
