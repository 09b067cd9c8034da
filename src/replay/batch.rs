//! The Azure portal's `POST https://management.azure.com/batch` calls: one request carrying up
//! to 500 ARM requests, one answer carrying their responses. Unpacked so each inner request is
//! judged as if sent on its own.
//!
//! Supported shape (undocumented by Microsoft; as the portal sends it): request
//! `{"requests": [{"httpMethod", "url" | "relativeUrl", "name"?, "requestHeaderDetails"?,
//! "content"?}]}`; answer `{"responses": [{"httpStatusCode", "headers"?, "content"?, "name"?,
//! "contentLength"?}]}`. Responses pair with requests by `name` when every response has one
//! that a request has, else by position. A batch answered 202 + Location is unpacked when a
//! later GET of that Location answers with the `responses`.

use std::collections::HashMap;

use serde_json::Value;

use super::body::RawBody;
use super::raw::{RawEntry, RawResponse, header_pairs};

/// Is this a portal batch call (`POST /batch` on a management host)?
pub(crate) fn is_batch_call(method: &str, url: &str) -> bool {
    method.eq_ignore_ascii_case("POST")
        && crate::http::parse_url(url).is_ok_and(|u| {
            u.path().eq_ignore_ascii_case("/batch")
                && u.host_str()
                    .is_some_and(|h| h.to_ascii_lowercase().starts_with("management."))
        })
}

#[derive(Debug, Clone)]
struct InnerRequest {
    name: Option<String>,
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<RawBody>,
}

/// Batches answered 202, by the Location URL that will hold their responses.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    by_location: HashMap<String, Vec<InnerRequest>>,
}

fn norm(url: &str) -> String {
    crate::http::parse_url(url).map_or_else(|_| url.to_string(), |u| u.to_string())
}

impl Pending {
    /// Is `url` the Location of a batch still waiting for its responses?
    pub(crate) fn awaits(&self, url: &str) -> bool {
        self.by_location.contains_key(&norm(url))
    }

    /// The inner exchanges of a batch call (`request_text` is its request body) or of the GET
    /// of a pending batch's Location. Nothing when the answer holds no `responses` yet.
    pub(crate) fn unpack(
        &mut self,
        url: &str,
        request_text: Option<&str>,
        status: Option<u16>,
        headers: &[(String, String)],
        answer: Option<&Value>,
    ) -> Vec<RawEntry> {
        let requests = match self.by_location.remove(&norm(url)) {
            Some(r) => r,
            None => request_text.map_or_else(Vec::new, |t| parse_requests(url, t)),
        };
        if requests.is_empty() {
            return Vec::new();
        }
        let Some(responses) = answer
            .and_then(|a| a.get("responses"))
            .and_then(Value::as_array)
        else {
            let location = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                .and_then(|(_, v)| crate::http::parse_url(url).ok()?.join(v).ok());
            if let (Some(202), Some(loc)) = (status, location) {
                self.by_location.insert(loc.to_string(), requests);
            }
            return Vec::new();
        };
        let by_name = responses.iter().all(|r| {
            r.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| requests.iter().any(|q| q.name.as_deref() == Some(n)))
        });
        requests
            .into_iter()
            .enumerate()
            .map(|(i, q)| {
                let answer = if by_name {
                    responses
                        .iter()
                        .find(|r| r.get("name").and_then(Value::as_str) == q.name.as_deref())
                } else {
                    responses.get(i)
                };
                inner_entry(q, answer)
            })
            .collect()
    }
}

fn parse_requests(batch_url: &str, text: &str) -> Vec<InnerRequest> {
    let Ok(body) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let Some(list) = body.get("requests").and_then(Value::as_array) else {
        return Vec::new();
    };
    let base = crate::http::parse_url(batch_url).ok();
    list.iter()
        .filter_map(|r| {
            let s = |k: &str| r.get(k).and_then(Value::as_str).filter(|v| !v.is_empty());
            let url = match (s("url"), s("relativeUrl")) {
                (Some(u), _) => u.to_string(),
                (None, Some(rel)) => base.as_ref()?.join(rel).ok()?.to_string(),
                (None, None) => return None,
            };
            Some(InnerRequest {
                name: s("name").map(str::to_string),
                method: s("httpMethod").unwrap_or("GET").to_ascii_uppercase(),
                url,
                headers: r
                    .get("requestHeaderDetails")
                    .map_or_else(Vec::new, header_pairs),
                body: r.get("content").and_then(content_body),
            })
        })
        .collect()
}

fn content_body(v: &Value) -> Option<RawBody> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(RawBody::text(s.clone())),
        Value::Object(m) if m.is_empty() => None,
        other => Some(RawBody::Json(other.clone())),
    }
}

fn inner_entry(q: InnerRequest, answer: Option<&Value>) -> RawEntry {
    let mut e = RawEntry::new(q.method, q.url);
    e.request_headers = q.headers;
    e.request_body = q.body;
    match answer.and_then(|a| Some((a, a.get("httpStatusCode")?.as_u64()?))) {
        Some((a, status)) => {
            e.response = Some(RawResponse {
                status: u16::try_from(status).unwrap_or(0),
                headers: a.get("headers").map_or_else(Vec::new, header_pairs),
                body: a
                    .get("content")
                    .and_then(content_body)
                    .unwrap_or(RawBody::Empty),
                size: a.get("contentLength").and_then(Value::as_u64),
            })
        }
        None => e.error = Some("the /batch answer holds no response for this request".into()),
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BATCH: &str = "https://management.azure.com/batch?api-version=2020-06-01";

    #[test]
    fn batch_calls_are_recognised() {
        assert!(is_batch_call("POST", BATCH));
        assert!(!is_batch_call("GET", BATCH));
        assert!(!is_batch_call("POST", "https://portal.azure.com/batch"));
    }

    #[test]
    fn responses_pair_by_name_then_position() {
        let req = json!({"requests": [
            {"httpMethod": "GET", "name": "a", "relativeUrl": "/subscriptions/s/resourceGroups/r?api-version=1"},
            {"httpMethod": "put", "name": "b", "url": "https://management.azure.com/subscriptions/s/x", "content": {"k": 1}}
        ]})
        .to_string();
        let answer = json!({"responses": [
            {"name": "b", "httpStatusCode": 201, "headers": {"Azure-AsyncOperation": "https://management.azure.com/op"}, "content": {"id": "x"}},
            {"name": "a", "httpStatusCode": 200, "content": {"name": "r"}}
        ]});
        let mut p = Pending::default();
        let inner = p.unpack(BATCH, Some(&req), Some(200), &[], Some(&answer));
        assert_eq!(inner.len(), 2);
        assert_eq!(
            inner[0].url,
            "https://management.azure.com/subscriptions/s/resourceGroups/r?api-version=1"
        );
        assert_eq!(inner[0].response.as_ref().unwrap().status, 200);
        assert_eq!(inner[1].method, "PUT");
        let r = inner[1].response.as_ref().unwrap();
        assert_eq!(r.status, 201);
        assert_eq!(r.headers[0].0, "Azure-AsyncOperation");
        assert_eq!(inner[1].request_body, Some(RawBody::Json(json!({"k": 1}))));
    }

    #[test]
    fn a_202_batch_is_unpacked_from_its_location() {
        let req = json!({"requests": [{"httpMethod": "GET", "url": "https://management.azure.com/subscriptions/s"}]})
            .to_string();
        let loc = "https://management.azure.com/batch/abc?api-version=2020-06-01";
        let headers = vec![("Location".to_string(), loc.to_string())];
        let mut p = Pending::default();
        assert!(
            p.unpack(BATCH, Some(&req), Some(202), &headers, None)
                .is_empty()
        );
        assert!(p.awaits(loc));
        let answer = json!({"responses": [{"httpStatusCode": 404}]});
        let inner = p.unpack(loc, None, Some(200), &[], Some(&answer));
        assert_eq!(inner[0].response.as_ref().unwrap().status, 404);
        assert!(!p.awaits(loc));
    }
}
