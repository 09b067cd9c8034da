//! Sending one request and recording it as an [`Exchange`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderName, HeaderValue};

use super::{Exchange, Redactor, Response, Role, TokenSource};

/// Limits and policies of the client.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub body_cap: usize,
    pub insecure: bool,
    /// Fetch URLs on other origins (without credentials); false refuses them.
    pub follow_foreign: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            body_cap: 16 * 1024 * 1024,
            insecure: false,
            follow_foreign: true,
        }
    }
}

/// A request to send.
#[derive(Debug, Clone)]
pub struct OutRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// The run's HTTP client.
pub struct Http {
    client: reqwest::Client,
    origin: url::Url,
    tokens: TokenSource,
    pub redactor: Arc<Redactor>,
    options: HttpOptions,
    seq: AtomicU64,
    /// Extra headers sent to the target origin on every request (from the target file).
    fixed_headers: Vec<(String, String)>,
}

/// Most of a response body kept in reports.
const REPORT_BODY_CHARS: usize = 64 * 1024;

impl Http {
    pub fn new(
        origin: url::Url,
        tokens: TokenSource,
        redactor: Arc<Redactor>,
        options: HttpOptions,
        fixed_headers: Vec<(String, String)>,
    ) -> Result<Http, String> {
        for (_, v) in &fixed_headers {
            redactor.register(v);
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(options.connect_timeout)
            .timeout(options.request_timeout)
            .danger_accept_invalid_certs(options.insecure)
            .pool_max_idle_per_host(64)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Http {
            client,
            origin,
            tokens,
            redactor,
            options,
            seq: AtomicU64::new(0),
            fixed_headers,
        })
    }

    fn same_origin(&self, url: &url::Url) -> bool {
        url.scheme() == self.origin.scheme()
            && url.host_str().map(str::to_ascii_lowercase)
                == self.origin.host_str().map(str::to_ascii_lowercase)
            && url.port_or_known_default() == self.origin.port_or_known_default()
    }

    /// Send and record. Never fails: transport problems are recorded in `Exchange::error`.
    pub async fn send(&self, req: OutRequest, role: Role) -> Exchange {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let start = Instant::now();
        let mut ex = Exchange {
            seq,
            role,
            method: req.method.clone(),
            url: self.redactor.text(&req.url),
            request_headers: Vec::new(),
            request_body: req
                .body
                .as_ref()
                .map(|b| self.redactor.text(&super::cut(b, REPORT_BODY_CHARS))),
            response: None,
            error: None,
            started_at,
            elapsed_ms: 0,
            foreign: false,
        };
        let result = self.send_inner(&req, &mut ex).await;
        if let Err(e) = result {
            ex.error = Some(self.redactor.text(&e));
        }
        ex.elapsed_ms = start.elapsed().as_millis() as u64;
        ex
    }

    async fn send_inner(&self, req: &OutRequest, ex: &mut Exchange) -> Result<(), String> {
        let url = url::Url::parse(&req.url)
            .map_err(|e| format!("invalid URL `{}`: {e}", self.redactor.text(&req.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("refusing to send to a `{}:` URL", url.scheme()));
        }
        let own = self.same_origin(&url);
        let mut headers: Vec<(String, String)> = Vec::new();
        if own {
            headers.extend(self.fixed_headers.iter().cloned());
            if let Some(tok) = self.tokens.token().await? {
                headers.push(("Authorization".into(), format!("Bearer {tok}")));
            }
        } else {
            ex.foreign = true;
            if !self.options.follow_foreign {
                return Err(format!(
                    "not sent: {} is on another origin than the target ({}); --no-foreign is set",
                    self.redactor.text(url.as_str()),
                    self.origin.origin().ascii_serialization()
                ));
            }
        }
        headers.extend(req.headers.iter().cloned());
        let method = reqwest::Method::from_bytes(req.method.as_bytes())
            .map_err(|_| format!("invalid method `{}`", req.method))?;
        let mut hm = reqwest::header::HeaderMap::new();
        for (k, v) in &headers {
            // Never forward credentials off-origin, whatever a scenario wrote.
            if !own && self.redactor.is_secret_header(k) {
                continue;
            }
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| format!("invalid header name `{k}`"))?;
            let value =
                HeaderValue::from_str(v).map_err(|_| format!("invalid value for header `{k}`"))?;
            hm.append(name, value);
            ex.request_headers
                .push((k.clone(), self.redactor.header(k, v)));
        }
        let mut builder = self.client.request(method, url).headers(hm);
        if let Some(body) = &req.body {
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                builder = builder.header("Content-Type", "application/json");
                ex.request_headers
                    .push(("Content-Type".into(), "application/json".into()));
            }
            builder = builder.body(body.clone());
        }
        // Belt and braces: reqwest's timeout covers the body too, this also bounds our reads.
        let overall = self.options.request_timeout + Duration::from_secs(1);
        let fut = async {
            let mut resp = builder.send().await.map_err(describe)?;
            let status = resp.status().as_u16();
            let headers: Vec<(String, String)> = resp
                .headers()
                .iter()
                .map(|(k, v)| {
                    let name = k.as_str().to_string();
                    let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                    let value = self.redactor.header(&name, &value);
                    (name, value)
                })
                .collect();
            if let Some(len) = resp.content_length()
                && len as usize > self.options.body_cap
            {
                return Err(format!(
                    "response body announced as {len} bytes, over the cap of {} bytes; not read",
                    self.options.body_cap
                ));
            }
            let mut body: Vec<u8> = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(describe)? {
                if body.len() + chunk.len() > self.options.body_cap {
                    return Err(format!(
                        "response body exceeds the cap of {} bytes; reading stopped",
                        self.options.body_cap
                    ));
                }
                body.extend_from_slice(&chunk);
            }
            Ok((status, headers, body))
        };
        let (status, headers, body) = tokio::time::timeout(overall, fut)
            .await
            .map_err(|_| format!("no complete response within {} s", overall.as_secs()))??;
        let text = String::from_utf8_lossy(&body).into_owned();
        let (json, json_error) = if body.iter().all(|b| b.is_ascii_whitespace()) {
            (None, None)
        } else {
            match serde_json::from_slice::<serde_json::Value>(&body) {
                Ok(v) => (Some(scrub_json(v, &self.redactor)), None),
                Err(e) => (None, Some(format!("body is not valid JSON: {e}"))),
            }
        };
        ex.response = Some(Response {
            status,
            headers,
            body: self.redactor.text(&super::cut(&text, REPORT_BODY_CHARS)),
            body_bytes: body.len(),
            json,
            json_error,
        });
        Ok(())
    }
}

fn describe(e: reqwest::Error) -> String {
    use std::error::Error;
    let mut msg = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "connection failed".to_string()
    } else if e.is_body() || e.is_decode() {
        "failed reading the body".to_string()
    } else {
        "request failed".to_string()
    };
    let mut src = e.source();
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}

/// Redact secrets inside parsed JSON strings too (rules read the parsed form).
fn scrub_json(v: serde_json::Value, r: &Redactor) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) => Value::String(r.text(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|x| scrub_json(x, r)).collect()),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, x)| (r.text(&k), scrub_json(x, r)))
                .collect(),
        ),
        other => other,
    }
}
