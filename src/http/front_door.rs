//! ARM's part, played in front of an RP's own endpoint (`front_door: emulate`, the default for
//! a `base_url` that is not an ARM host): what ARM adds to each request it proxies, where it
//! routes a link on its public host, and what it answers itself (public RPC,
//! common-api-details.md: Proxy Request Header Modifications, Client Request Timeout, Max
//! Request Body Size, Request Query Parameters).
//!
//! - Every request to the RP on the ARM surface carries a `Referer` holding the full *public*
//!   URL (`https://management.rpconform.invalid/subscriptions/...`, a host the RP never sees
//!   otherwise), the caller's identity headers (`x-ms-client-tenant-id`,
//!   `x-ms-home-tenant-id`, `x-ms-client-object-id`, `x-ms-client-principal-name`,
//!   `x-ms-client-principal-id`, `x-ms-client-app-id`, `x-ms-client-ip-address`) and, on
//!   writes and actions, `x-ms-arm-resource-system-data`.
//! - A URL on the public host (a Location, an Azure-AsyncOperation, a `nextLink` the RP built
//!   from the Referer) is routed to the RP's endpoint, as ARM routes it.
//! - ARM answers some requests itself, and the RP never sees them: a body over 4 MB (413), a
//!   query parameter ARM reserves (`sub`, `subId`, `subscription`, `subscriptionId`: 400), and
//!   an RP that does not answer within 60 s (504, the RP's answer never reaches the client).
//!
//! The rules of the `front-door` profile judge the RP as ARM calls it (`rules/fd.rs`): a link
//! on the RP's own host is a failure there, not a pass.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// The public host ARM's part is played under unless the target names one: a reserved name
/// (RFC 6761 `.invalid`) that resolves nowhere, so a link built on it that is not routed
/// cannot reach anything.
pub const DEFAULT_PUBLIC_HOST: &str = "management.rpconform.invalid";

/// ARM's client timeout for a proxied request: no answer by then, and the client gets 504.
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(60);

/// The largest request body ARM passes on (4 MB; a larger one is answered 413).
pub const MAX_REQUEST_BODY: usize = 4 * 1024 * 1024;

/// Query parameters ARM answers 400 itself (RPC 2023, Request Query Parameters).
pub const DENIED_QUERY: &[&str] = &["sub", "subId", "subscription", "subscriptionId"];

/// Who calls, as ARM tells the RP.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    /// `x-ms-client-tenant-id` and `x-ms-home-tenant-id` (the same: no cross-tenant call).
    pub tenant: String,
    /// `x-ms-client-object-id` and `x-ms-client-principal-id`.
    pub object_id: String,
    /// `x-ms-client-principal-name`, the `createdBy`/`lastModifiedBy` of system data.
    pub principal_name: String,
    /// `x-ms-client-app-id`.
    pub app_id: String,
}

impl Caller {
    /// The caller a run plays when the target names no `identity:` (test GUIDs).
    pub fn default_with(tenant: Option<&str>, object_id: Option<&str>) -> Caller {
        Caller {
            tenant: tenant
                .unwrap_or("7e1a0c0d-0000-4000-8000-00000000a1a1")
                .to_string(),
            object_id: object_id
                .unwrap_or("0b1ec7d0-0000-4000-8000-00000000b2b2")
                .to_string(),
            principal_name: "rpconform@contoso.invalid".into(),
            app_id: "a9900000-0000-4000-8000-00000000c3c3".into(),
        }
    }
}

/// ARM's front door for one target.
#[derive(Debug)]
pub struct FrontDoor {
    /// `https://{public host}`.
    public: url::Url,
    /// The RP's endpoint: the target's base URL (its path prefix included), no userinfo.
    endpoint: url::Url,
    pub caller: Caller,
    /// The last system-data time handed out (ms since the epoch): each write's is later.
    last_ms: AtomicI64,
}

/// What ARM answered itself, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnAnswer {
    pub status: u16,
    pub code: &'static str,
    pub why: String,
}

impl OwnAnswer {
    /// ARM's error envelope for it.
    pub fn body(&self) -> String {
        serde_json::json!({"error": {"code": self.code, "message": self.why}}).to_string()
    }
}

impl FrontDoor {
    /// The front door on `public_host` for the RP at `endpoint`.
    pub fn new(
        public_host: &str,
        endpoint: &url::Url,
        caller: Caller,
    ) -> Result<FrontDoor, String> {
        let public = crate::http::parse_url(&format!("https://{public_host}/"))
            .ok()
            .filter(|u| u.host_str().is_some() && u.path() == "/")
            .ok_or_else(|| format!("front_door: `{public_host}` is not a host name"))?;
        let mut endpoint = endpoint.clone();
        let _ = endpoint.set_username("");
        let _ = endpoint.set_password(None);
        endpoint.set_query(None);
        endpoint.set_fragment(None);
        Ok(FrontDoor {
            public,
            endpoint,
            caller,
            last_ms: AtomicI64::new(0),
        })
    }

    /// The public host (`management.rpconform.invalid`).
    pub fn public_host(&self) -> &str {
        self.public.host_str().unwrap_or(DEFAULT_PUBLIC_HOST)
    }

    fn prefix(&self) -> &str {
        self.endpoint.path().trim_end_matches('/')
    }

    /// Is `url` on the public host (any port, either scheme)?
    pub fn is_public(&self, url: &url::Url) -> bool {
        url.host_str()
            .is_some_and(|h| h.eq_ignore_ascii_case(self.public_host()))
    }

    /// A URL on the public host, routed to the RP's endpoint (its path under the endpoint's
    /// prefix, the query kept); `None` for any other URL.
    pub fn route(&self, url: &str) -> Option<String> {
        let u = crate::http::parse_url(url).ok()?;
        if !self.is_public(&u) {
            return None;
        }
        let mut out = self.endpoint.clone();
        out.set_path(&format!("{}{}", self.prefix(), u.path()));
        out.set_query(u.query());
        Some(out.to_string())
    }

    /// The public URL a client called for the request the RP gets at `url` (the endpoint's
    /// prefix taken off the path, the query kept).
    pub fn public_url(&self, url: &url::Url) -> String {
        let path = url.path();
        let rel = path
            .get(..self.prefix().len())
            .filter(|h| !self.prefix().is_empty() && h.eq_ignore_ascii_case(self.prefix()))
            .map_or(path, |_| &path[self.prefix().len()..]);
        let mut out = self.public.clone();
        out.set_path(if rel.is_empty() { "/" } else { rel });
        out.set_query(url.query());
        out.to_string()
    }

    /// The headers ARM adds to `method url` (a request on the RP's ARM surface).
    pub fn headers(&self, method: &str, url: &url::Url) -> Vec<(String, String)> {
        let c = &self.caller;
        let mut h = vec![
            ("Referer".to_string(), self.public_url(url)),
            ("x-ms-client-ip-address".into(), "192.0.2.10".into()),
            ("x-ms-client-tenant-id".into(), c.tenant.clone()),
            ("x-ms-client-object-id".into(), c.object_id.clone()),
            ("x-ms-client-principal-id".into(), c.object_id.clone()),
            (
                "x-ms-client-principal-name".into(),
                c.principal_name.clone(),
            ),
            ("x-ms-client-app-id".into(), c.app_id.clone()),
        ];
        // Only at or below a subscription.
        if url
            .path_segments()
            .is_some_and(|mut s| s.any(|x| x.eq_ignore_ascii_case("subscriptions")))
        {
            h.push(("x-ms-home-tenant-id".into(), c.tenant.clone()));
        }
        if matches!(
            method.to_ascii_uppercase().as_str(),
            "PUT" | "PATCH" | "POST"
        ) {
            h.push(("x-ms-arm-resource-system-data".into(), self.system_data()));
        }
        h
    }

    /// `x-ms-arm-resource-system-data` for a write now: ARM passes the caller and the time of
    /// this request in both halves; the RP keeps `created*` from the first write. Each write's
    /// time is later than the last's, so a `created*` taken from a later write shows.
    fn system_data(&self) -> String {
        let now = chrono::Utc::now().timestamp_millis();
        let ms = self
            .last_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
                Some(now.max(last + 1))
            })
            .map_or(now, |last| now.max(last + 1));
        let at = chrono::DateTime::from_timestamp_millis(ms)
            .unwrap_or_default()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let by = &self.caller.principal_name;
        serde_json::json!({
            "createdBy": by, "createdByType": "User", "createdAt": at,
            "lastModifiedBy": by, "lastModifiedByType": "User", "lastModifiedAt": at,
        })
        .to_string()
    }

    /// ARM's own answer to `method url` with a body of `body_len` bytes, when ARM answers it
    /// without calling the RP.
    pub fn own_answer(&self, url: &url::Url, body_len: usize) -> Option<OwnAnswer> {
        if body_len > MAX_REQUEST_BODY {
            return Some(OwnAnswer {
                status: 413,
                code: "RequestEntityTooLarge",
                why: format!(
                    "the request body is {body_len} bytes; ARM passes at most {MAX_REQUEST_BODY} to a resource provider"
                ),
            });
        }
        let denied = url
            .query_pairs()
            .find(|(k, _)| DENIED_QUERY.iter().any(|d| d.eq_ignore_ascii_case(k)));
        denied.map(|(k, _)| OwnAnswer {
            status: 400,
            code: "InvalidQueryParameter",
            why: format!("the query parameter `{k}` is reserved by ARM and is not passed on"),
        })
    }

    /// ARM's answer when the RP did not answer within [`ANSWER_DEADLINE`].
    pub fn timeout_answer(&self) -> OwnAnswer {
        OwnAnswer {
            status: 504,
            code: "GatewayTimeout",
            why: format!(
                "the resource provider did not answer within {} s; ARM answers 504 and the client never sees its answer",
                ANSWER_DEADLINE.as_secs()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn door(base: &str) -> FrontDoor {
        FrontDoor::new(
            DEFAULT_PUBLIC_HOST,
            &url::Url::parse(base).unwrap(),
            Caller::default_with(None, None),
        )
        .unwrap()
    }

    #[test]
    fn public_urls_route_to_the_endpoint_and_back() {
        let d = door("http://u:p@127.0.0.1:8080/rp/v1/");
        let rp = url::Url::parse(
            "http://127.0.0.1:8080/rp/v1/subscriptions/s/resourceGroups/g/providers/N/w/a?api-version=1",
        )
        .unwrap();
        let public = d.public_url(&rp);
        assert_eq!(
            public,
            "https://management.rpconform.invalid/subscriptions/s/resourceGroups/g/providers/N/w/a?api-version=1"
        );
        assert_eq!(d.route(&public).as_deref(), Some(rp.as_str()));
        // A link on any other host is not ARM's to route.
        assert_eq!(d.route("http://127.0.0.1:8080/x"), None);
        assert_eq!(d.route("https://management.azure.com/x"), None);
        // The RP's own host never appears in what ARM sends.
        let h = d.headers("PUT", &rp);
        assert!(h.iter().all(|(_, v)| !v.contains("127.0.0.1")), "{h:?}");
        assert!(h.iter().any(|(k, _)| k == "x-ms-arm-resource-system-data"));
        assert!(h.iter().any(|(k, _)| k == "x-ms-home-tenant-id"));
        assert!(
            !d.headers("GET", &rp)
                .iter()
                .any(|(k, _)| k == "x-ms-arm-resource-system-data")
        );
    }

    #[test]
    fn each_write_carries_a_later_time() {
        let d = door("http://127.0.0.1:1");
        let t = |s: String| {
            serde_json::from_str::<serde_json::Value>(&s).unwrap()["createdAt"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let (a, b) = (t(d.system_data()), t(d.system_data()));
        assert!(b > a, "{a} {b}");
    }

    #[test]
    fn arm_answers_what_it_never_passes_on() {
        let d = door("http://127.0.0.1:1");
        let u =
            url::Url::parse("http://127.0.0.1:1/subscriptions/s?api-version=1&SubscriptionId=x")
                .unwrap();
        assert_eq!(d.own_answer(&u, 10).unwrap().status, 400);
        let ok = url::Url::parse("http://127.0.0.1:1/subscriptions/s?api-version=1").unwrap();
        assert_eq!(d.own_answer(&ok, 10), None);
        assert_eq!(d.own_answer(&ok, MAX_REQUEST_BODY + 1).unwrap().status, 413);
        assert!(d.timeout_answer().body().contains("GatewayTimeout"));
    }
}
