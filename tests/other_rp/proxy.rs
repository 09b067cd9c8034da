//! A rewriting reverse proxy that makes the reference RP look like another provider.
//!
//! [`FABRIKAM`] says how: the client sees `Microsoft.Fabrikam` with `engines` / `pistons` /
//! `valves` / `mounts`, the action `reboot`, api-version `2023-07-01`, body fields `capacity`
//! and `engineId`, a data plane under `/engineplane` and task resources under `/v1/databases`;
//! the reference RP behind it serves `Microsoft.Contoso` with `widgets` / `gadgets` /
//! `sprockets` / `links`, `restart`, `2024-05-01`, `size`, `widgetId`, `/dataplane` and
//! `/v1/subscriptions`.
//!
//! Requests are rewritten on the way in (path, `api-version`, JSON body keys and the ids, types
//! and URLs in JSON string values, header values that are URLs or paths) and responses on the
//! way out (JSON bodies, `Location`, `Azure-AsyncOperation`, `Operation-Location` and any other
//! header holding a URL, where the upstream origin also becomes the proxy's; types and
//! api-versions quoted in error messages too). Renames are positional (only type and action
//! segments of an ARM path, never resource names), match case-insensitively, and keep the
//! casing pattern the client used (`ENGINES` ↔ `WIDGETS`, `mICROSOFT.fABRIKAM` ↔
//! `mICROSOFT.cONTOSO`).
//!
//! Requests swap names rather than only translate them: one that uses the upstream's own names
//! (`Microsoft.Contoso`, `widgets`, a `size` field, api-version `2024-05-01`...) reaches the RP
//! under the client's names and fails there, as it would at a real Fabrikam; so a suite or
//! runner that leaked the reference RP's names could not pass through this proxy. Any other
//! api-version passes as sent and meets the RP's 400. Answers only rename keys (a SKU's
//! `capacity` object must stay what it is). Status codes and every other header
//! (`x-ms-request-id`, `Retry-After`, `ETag`, `Operation-Id`...) pass unchanged; bodies that are
//! not JSON pass byte for byte. Listens on 127.0.0.1 only.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Pairs of names, client side first, upstream side second.
type Pairs = &'static [(&'static str, &'static str)];

/// How one provider is dressed up as another.
pub struct Disguise {
    /// ARM namespace.
    pub namespace: (&'static str, &'static str),
    /// ARM resource type segments and action names (the segments at type positions).
    pub arm_segments: Pairs,
    /// The swapped api-versions.
    pub api_version: (&'static str, &'static str),
    /// JSON object keys, anywhere in a body.
    pub keys: Pairs,
    /// First path segment of the data plane.
    pub dataplane_root: (&'static str, &'static str),
    /// Second segment of a data-plane path (collections and monitor kinds).
    pub dataplane_segments: Pairs,
    /// Data-plane actions, `{name}:{action}`.
    pub dataplane_actions: Pairs,
    /// Second segment of a task-API path (`/v1/{collection}`).
    pub task_segments: Pairs,
}

/// The "Fabrikam" provider in front of the reference RP.
pub const FABRIKAM: Disguise = Disguise {
    namespace: ("Microsoft.Fabrikam", "Microsoft.Contoso"),
    arm_segments: &[
        ("engines", "widgets"),
        ("pistons", "gadgets"),
        ("valves", "sprockets"),
        ("mounts", "links"),
        ("reboot", "restart"),
    ],
    api_version: ("2023-07-01", "2024-05-01"),
    keys: &[
        ("capacity", "size"),
        ("engineId", "widgetId"),
        ("rebootCount", "restartCount"),
        ("engine", "widget"),
    ],
    dataplane_root: ("engineplane", "dataplane"),
    dataplane_segments: &[("engines", "widgets"), ("reboots", "restarts")],
    dataplane_actions: &[("reboot", "restart")],
    task_segments: &[("databases", "subscriptions")],
};

/// Which way a rewrite goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Client → upstream.
    In,
    /// Upstream → client.
    Out,
}

impl Disguise {
    /// `pair` read in direction `dir`: (from, to).
    fn orient(pair: (&'static str, &'static str), dir: Dir) -> (&'static str, &'static str) {
        match dir {
            Dir::In => pair,
            Dir::Out => (pair.1, pair.0),
        }
    }

    /// `seg` renamed by `pairs`, matched case-insensitively, in the client's casing. With
    /// `swap`, a name of the other side is renamed back: the upstream's own names mean nothing
    /// to the client's provider, as they would at a real one.
    fn rename(
        pairs: &[(&'static str, &'static str)],
        seg: &str,
        dir: Dir,
        swap: bool,
    ) -> Option<String> {
        pairs.iter().find_map(|&p| {
            let (from, to) = Self::orient(p, dir);
            if seg.eq_ignore_ascii_case(from) {
                Some(same_casing(seg, from, to))
            } else if swap && seg.eq_ignore_ascii_case(to) {
                Some(same_casing(seg, to, from))
            } else {
                None
            }
        })
    }

    /// `seg` swapped by `pairs`, or kept.
    fn swap(pairs: &[(&'static str, &'static str)], seg: &str, dir: Dir) -> String {
        Self::rename(pairs, seg, dir, true).unwrap_or_else(|| seg.to_string())
    }

    /// A path (no query): ARM, data plane or task API; anything else is left alone.
    pub fn path(&self, path: &str, dir: Dir) -> String {
        let mut segs: Vec<String> = path.split('/').map(str::to_string).collect();
        if segs.len() < 3 || !segs[0].is_empty() {
            return path.to_string();
        }
        let namespace = std::slice::from_ref(&self.namespace);
        let dataplane = std::slice::from_ref(&self.dataplane_root);
        if segs[1].eq_ignore_ascii_case("subscriptions") {
            if let Some(pi) = segs
                .iter()
                .position(|s| s.eq_ignore_ascii_case("providers"))
                && let Some(ns) = segs
                    .get(pi + 1)
                    .and_then(|ns| Self::rename(namespace, ns, dir, true))
            {
                segs[pi + 1] = ns;
                // Type (and action) segments sit at even offsets after the namespace.
                for seg in segs.iter_mut().skip(pi + 2).step_by(2) {
                    *seg = Self::swap(self.arm_segments, seg, dir);
                }
            }
        } else if segs[1].eq_ignore_ascii_case("providers") {
            // Tenant level: `/providers/{ns}/operations`, `/providers/{ns}/{type}/...`.
            if let Some(ns) = Self::rename(namespace, &segs[2], dir, true) {
                segs[2] = ns;
                for seg in segs.iter_mut().skip(3).step_by(2) {
                    *seg = Self::swap(self.arm_segments, seg, dir);
                }
            }
        } else if let Some(root) = Self::rename(dataplane, &segs[1], dir, true) {
            segs[1] = root;
            segs[2] = Self::swap(self.dataplane_segments, &segs[2], dir);
            if let Some(seg) = segs.get_mut(3)
                && let Some((name, action)) = seg.rsplit_once(':')
            {
                *seg = format!("{name}:{}", Self::swap(self.dataplane_actions, action, dir));
            }
        } else if segs[1].eq_ignore_ascii_case("v1") {
            segs[2] = Self::swap(self.task_segments, &segs[2], dir);
        }
        segs.join("/")
    }

    /// A raw query string: the two api-versions are swapped, everything else kept as sent.
    pub fn query(&self, query: &str, dir: Dir) -> String {
        let (from, to) = Self::orient(self.api_version, dir);
        query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) if k.eq_ignore_ascii_case("api-version") && v == from => {
                    format!("{k}={to}")
                }
                Some((k, v)) if k.eq_ignore_ascii_case("api-version") && v == to => {
                    format!("{k}={from}")
                }
                _ => kv.to_string(),
            })
            .collect::<Vec<_>>()
            .join("&")
    }

    /// `path?query#fragment`.
    pub fn path_and_query(&self, pq: &str, dir: Dir) -> String {
        let (rest, fragment) = match pq.split_once('#') {
            Some((r, f)) => (r, Some(f)),
            None => (pq, None),
        };
        let mut out = match rest.split_once('?') {
            Some((p, q)) => format!("{}?{}", self.path(p, dir), self.query(q, dir)),
            None => self.path(rest, dir),
        };
        if let Some(f) = fragment {
            out.push('#');
            out.push_str(f);
        }
        out
    }

    /// An ARM type `Namespace/t1/t2`, if `s` is one of this provider's (or the upstream's).
    fn arm_type(&self, s: &str, dir: Dir) -> Option<String> {
        let (ns, rest) = s.split_once('/')?;
        if rest.is_empty() || rest.contains(' ') {
            return None;
        }
        let ns = Self::rename(std::slice::from_ref(&self.namespace), ns, dir, true)?;
        let types: Vec<String> = rest
            .split('/')
            .map(|t| Self::swap(self.arm_segments, t, dir))
            .collect();
        Some(format!("{ns}/{}", types.join("/")))
    }

    /// A string that is a URL on `origins.0`, a path, or an ARM type; None for anything else.
    pub fn string(&self, s: &str, dir: Dir, origins: (&str, &str)) -> Option<String> {
        let (from, to) = origins;
        if s.len() >= from.len() && s.is_char_boundary(from.len()) {
            let (head, rest) = s.split_at(from.len());
            if head.eq_ignore_ascii_case(from) && (rest.is_empty() || rest.starts_with('/')) {
                return Some(format!("{to}{}", self.path_and_query(rest, dir)));
            }
        }
        if s.starts_with('/') && !s.starts_with("//") {
            return Some(self.path_and_query(s, dir));
        }
        self.arm_type(s, dir)
    }

    /// Free text (an error message): each item of what it quotes in `'…'` (a comma-separated
    /// list) that is a URL, path, type or api-version. None when nothing changes.
    pub fn quoted(&self, s: &str, dir: Dir, origins: (&str, &str)) -> Option<String> {
        let (from, to) = Self::orient(self.api_version, dir);
        let out: Vec<String> = s
            .split('\'')
            .enumerate()
            .map(|(i, piece)| {
                if i % 2 == 0 {
                    return piece.to_string();
                }
                piece
                    .split(',')
                    .map(|raw| {
                        let item = raw.trim_start();
                        let lead = &raw[..raw.len() - item.len()];
                        let new = match item {
                            _ if item == from => to.to_string(),
                            _ if item == to => from.to_string(),
                            _ => self
                                .string(item, dir, origins)
                                .unwrap_or_else(|| item.to_string()),
                        };
                        format!("{lead}{new}")
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect();
        let out = out.join("'");
        (out != s).then_some(out)
    }

    /// Every key and string of a JSON value, in place.
    pub fn json(&self, v: &mut Value, dir: Dir, origins: (&str, &str)) {
        match v {
            Value::Object(m) => {
                let old = std::mem::take(m);
                let mut out = Map::new();
                for (k, mut val) in old.iter().map(|(k, v)| (k.clone(), v.clone())) {
                    // A bare type segment (the `resourceType` of a SKU list).
                    if k == "resourceType"
                        && let Value::String(s) = &val
                        && let Some(t) = Self::rename(self.arm_segments, s, dir, true)
                    {
                        val = Value::String(t);
                    }
                    self.json(&mut val, dir, origins);
                    // Client bodies swap keys; upstream answers only rename theirs, as they also
                    // hold keys of the same name with another meaning (a SKU's `capacity`),
                    // and that rename never takes a key the object already has.
                    let key = match Self::rename(self.keys, &k, dir, dir == Dir::In) {
                        Some(new) if dir == Dir::In || !old.contains_key(&new) => new,
                        _ => k,
                    };
                    out.insert(key, val);
                }
                *m = out;
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.json(x, dir, origins)),
            Value::String(s) => {
                if let Some(new) = self
                    .string(s, dir, origins)
                    .or_else(|| self.quoted(s, dir, origins))
                {
                    *s = new;
                }
            }
            _ => {}
        }
    }

    /// A body: JSON is rewritten, anything else (empty, malformed JSON) passes byte for byte.
    pub fn body(&self, bytes: &[u8], dir: Dir, origins: (&str, &str)) -> Vec<u8> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(mut v) if !bytes.is_empty() => {
                self.json(&mut v, dir, origins);
                serde_json::to_vec(&v).unwrap_or_else(|_| bytes.to_vec())
            }
            _ => bytes.to_vec(),
        }
    }

    /// Header values that are URLs, paths or types are rewritten; hop-by-hop and length
    /// headers are dropped (the body may change size); everything else is kept as it is.
    pub fn headers(&self, h: &HeaderMap, dir: Dir, origins: (&str, &str)) -> HeaderMap {
        let mut out = HeaderMap::new();
        for (name, value) in h {
            if HOP_BY_HOP.contains(&name.as_str()) {
                continue;
            }
            let rewritten = value
                .to_str()
                .ok()
                .and_then(|s| self.string(s, dir, origins))
                .and_then(|s| HeaderValue::from_str(&s).ok());
            out.append(name.clone(), rewritten.unwrap_or_else(|| value.clone()));
        }
        out
    }
}

const HOP_BY_HOP: &[&str] = &[
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
];

/// `to`, cased like `seg` is cased relative to `from`: all lower, all upper, `from` with every
/// letter's case swapped, or else `to` as written.
fn same_casing(seg: &str, from: &str, to: &str) -> String {
    if seg == from {
        to.to_string()
    } else if !seg.chars().any(|c| c.is_ascii_uppercase()) {
        to.to_ascii_lowercase()
    } else if !seg.chars().any(|c| c.is_ascii_lowercase()) {
        to.to_ascii_uppercase()
    } else if seg == swapcase(from) {
        swapcase(to)
    } else {
        to.to_string()
    }
}

fn swapcase(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_uppercase() {
                c.to_ascii_lowercase()
            } else {
                c.to_ascii_uppercase()
            }
        })
        .collect()
}

struct Shared {
    disguise: &'static Disguise,
    upstream: String,
    own: String,
    client: reqwest::Client,
}

/// A running proxy; dropping it stops the server.
pub struct Proxy {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl Proxy {
    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Start a proxy on 127.0.0.1 (ephemeral port) in front of `upstream` (`http://127.0.0.1:N`).
/// Must run inside a tokio runtime.
pub async fn start(disguise: &'static Disguise, upstream: &str) -> std::io::Result<Proxy> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let addr = listener.local_addr()?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(std::io::Error::other)?;
    let shared = Arc::new(Shared {
        disguise,
        upstream: upstream.trim_end_matches('/').to_string(),
        own: format!("http://{addr}"),
        client,
    });
    let app = axum::Router::new().fallback(forward).with_state(shared);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    Ok(Proxy { addr, _stop: stop })
}

async fn forward(State(s): State<Arc<Shared>>, req: Request) -> Response {
    let d = s.disguise;
    let inward = (s.own.as_str(), s.upstream.as_str());
    let outward = (s.upstream.as_str(), s.own.as_str());
    let (parts, body) = req.into_parts();
    let pq = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let url = format!("{}{}", s.upstream, d.path_and_query(pq, Dir::In));
    let body = match to_bytes(body, 64 << 20).await {
        Ok(b) => d.body(&b, Dir::In, inward),
        Err(e) => return bad_gateway(format!("reading the request body: {e}")),
    };
    let sent = s
        .client
        .request(parts.method, &url)
        .headers(d.headers(&parts.headers, Dir::In, inward))
        .body(body)
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => return bad_gateway(format!("forwarding to {url}: {e}")),
    };
    let status = resp.status();
    let headers = d.headers(resp.headers(), Dir::Out, outward);
    let bytes = match resp.bytes().await {
        Ok(b) => b,
        Err(e) => return bad_gateway(format!("reading the answer of {url}: {e}")),
    };
    let mut out = Response::new(Body::from(d.body(&bytes, Dir::Out, outward)));
    *out.status_mut() = status;
    *out.headers_mut() = headers;
    out
}

fn bad_gateway(message: String) -> Response {
    let body = serde_json::json!({"error": {"code": "BadGateway", "message": message}});
    let mut out = Response::new(Body::from(body.to_string()));
    *out.status_mut() = StatusCode::BAD_GATEWAY;
    out.headers_mut().insert(
        HeaderName::from_static("content-type"),
        HeaderValue::from_static("application/json"),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const O: (&str, &str) = ("http://127.0.0.1:1", "http://127.0.0.1:2");

    #[test]
    fn paths_are_renamed_by_position_and_keep_casing() {
        let p = "/subscriptions/S/resourceGroups/engines/providers/Microsoft.Fabrikam/engines/engines/pistons/p1/reboot";
        assert_eq!(
            FABRIKAM.path(p, Dir::In),
            "/subscriptions/S/resourceGroups/engines/providers/Microsoft.Contoso/widgets/engines/gadgets/p1/restart"
        );
        assert_eq!(
            FABRIKAM.path(
                "/subscriptions/s/resourcegroups/g/providers/mICROSOFT.fABRIKAM/ENGINES/x",
                Dir::In
            ),
            "/subscriptions/s/resourcegroups/g/providers/mICROSOFT.cONTOSO/WIDGETS/x"
        );
        assert_eq!(
            FABRIKAM.path("/dataplane/restarts/op1", Dir::Out),
            "/engineplane/reboots/op1"
        );
        assert_eq!(
            FABRIKAM.path("/engineplane/engines/e1:reboot", Dir::In),
            "/dataplane/widgets/e1:restart"
        );
        // The upstream's own names are swapped as well, so that they fail upstream.
        assert_eq!(
            FABRIKAM.path(
                "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w",
                Dir::In
            ),
            "/subscriptions/s/resourceGroups/g/providers/Microsoft.Fabrikam/engines/w"
        );
        assert_eq!(
            FABRIKAM.path("/dataplane/widgets/w:restart", Dir::In),
            "/engineplane/engines/w:reboot"
        );
        assert_eq!(
            FABRIKAM.path("/v1/databases/7", Dir::In),
            "/v1/subscriptions/7"
        );
    }

    #[test]
    fn api_versions_swap_and_others_pass() {
        assert_eq!(
            FABRIKAM.query("api-version=2023-07-01&$skipToken=3", Dir::In),
            "api-version=2024-05-01&$skipToken=3"
        );
        assert_eq!(
            FABRIKAM.query("api-version=2024-05-01", Dir::In),
            "api-version=2023-07-01"
        );
        assert_eq!(
            FABRIKAM.query("api-version=1999-01-01", Dir::In),
            "api-version=1999-01-01"
        );
    }

    #[test]
    fn json_keys_strings_and_origins() {
        let mut v = serde_json::json!({
            "id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/links/l",
            "type": "Microsoft.Contoso/widgets/gadgets",
            "nextLink": "http://127.0.0.1:1/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets?api-version=2024-05-01&$skipToken=3",
            "properties": {"size": 3, "widgetId": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w"},
            "value": [{"resourceType": "widgets", "capacity": {"minimum": 1}}],
            "message": "a widget is busy",
            "error": {"message": "The resource 'w' of type 'Microsoft.Contoso/widgets/gadgets' could not be found; supported: '2024-05-01,2024-09-01-preview'."}
        });
        FABRIKAM.json(&mut v, Dir::Out, O);
        assert_eq!(
            v,
            serde_json::json!({
                "id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Fabrikam/mounts/l",
                "type": "Microsoft.Fabrikam/engines/pistons",
                "nextLink": "http://127.0.0.1:2/subscriptions/s/resourceGroups/g/providers/Microsoft.Fabrikam/engines?api-version=2023-07-01&$skipToken=3",
                "properties": {"capacity": 3, "engineId": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Fabrikam/engines/w"},
                "value": [{"resourceType": "engines", "capacity": {"minimum": 1}}],
                "message": "a widget is busy",
                "error": {"message": "The resource 'w' of type 'Microsoft.Fabrikam/engines/pistons' could not be found; supported: '2023-07-01,2024-09-01-preview'."}
            })
        );
        assert_eq!(FABRIKAM.body(b"{\"a\": ", Dir::In, O), b"{\"a\": ");
        // Client bodies swap keys both ways.
        let mut sent =
            serde_json::json!({"properties": {"capacity": 1, "size": 2, "widgetId": "x"}});
        FABRIKAM.json(&mut sent, Dir::In, O);
        assert_eq!(
            sent,
            serde_json::json!({"properties": {"size": 1, "capacity": 2, "engineId": "x"}})
        );
    }
}
