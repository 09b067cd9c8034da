//! Passing one request on, unchanged, and recording what passed.
//!
//! What goes on the wire, in the proxy's own HTTP/1.1 on both sides (RFC 9110 §6.2; each
//! connection persists by its own side's rules, RFC 9112 §9.3): the client's method, path and
//! query, end-to-end headers (their order
//! and, with hyper's `preserve_header_case`, their spelling) and body bytes; back, the
//! target's status, end-to-end headers and body bytes. Hop-by-hop headers (`Connection` and
//! the headers it names, `Keep-Alive`, `Proxy-Connection`, `Proxy-Authorization`, `TE`,
//! `Trailer`, `Upgrade`) belong to one connection (RFC 9110 §7.6.1) and are not forwarded.
//! In reverse mode the request goes to the target's base URL and its `Host` names the target
//! (the one header a reverse proxy must set); with `--rewrite-links`, answer headers
//! `Location`, `Azure-AsyncOperation` and `Operation-Location` that point at the target are
//! rewritten to point at the proxy, so clients keep polling through it.
//!
//! Bodies stream both ways: each frame of an upload or an answer goes on as it arrives
//! ([`super::tee`]), and only the first body-cap bytes of each are kept for the record, which is
//! handed to the judging thread once the answer has passed whole (or the client went away):
//! no answer waits for a judgement.
//!
//! What is recorded: the exchange in the target's terms. In reverse mode the request URL is the
//! target's, and the proxy's own origin in `Referer`, `Origin` and the link headers is written
//! as the target's, so the record reads as if the client had called the target directly (and
//! links are recorded as the target sent them, before any rewrite). Compressed answers
//! (`Content-Encoding: gzip` or `deflate`) are decoded for the record only; other encodings are
//! recorded as bodies not kept. Secrets are masked by the replay redaction before anything is
//! held.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::shared::{Job, ProxyBody, Shared, full};
use super::tee::{Kept, Tee};
use crate::replay::body::RawBody;
use crate::replay::raw::{RawEntry, RawResponse};

const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
];

const LINKS: &[&str] = &["location", "azure-asyncoperation", "operation-location"];

/// Drop hop-by-hop headers, and those `Connection` names.
fn strip_hop_by_hop(h: &mut HeaderMap) {
    let named: Vec<String> = h
        .get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|s| s.trim().to_ascii_lowercase()))
        .filter(|s| !s.is_empty())
        .collect();
    for n in HOP_BY_HOP.iter().map(|s| s.to_string()).chain(named) {
        if let Ok(name) = HeaderName::from_bytes(n.as_bytes()) {
            h.remove(name);
        }
    }
}

fn pairs(h: &HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into(),
            )
        })
        .collect()
}

/// `from` as a prefix of `v` replaced by `to`.
fn swap_origin(v: &str, from: &str, to: &str) -> Option<String> {
    let rest = v.strip_prefix(from)?;
    (rest.is_empty() || rest.starts_with(['/', '?', '#'])).then(|| format!("{to}{rest}"))
}

fn body_of(bytes: &[u8], cap: usize) -> RawBody {
    if bytes.is_empty() {
        RawBody::Empty
    } else if bytes.len() > cap {
        RawBody::OverCap(bytes.len() as u64)
    } else {
        RawBody::Bytes(bytes.to_vec())
    }
}

/// What the record keeps of a body that passed: its bytes, or why not.
fn kept_body(k: &Kept, cap: usize) -> RawBody {
    if k.over {
        RawBody::OverCap(k.total)
    } else {
        body_of(&k.bytes, cap)
    }
}

/// The answer body as the record keeps it: decoded when the answer was compressed.
fn decoded(k: &Kept, encoding: Option<&str>, cap: usize) -> RawBody {
    if k.over {
        return RawBody::OverCap(k.total);
    }
    let bytes = &k.bytes;
    let mut out = Vec::new();
    let read = match encoding.map(|e| e.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("identity") => return body_of(bytes, cap),
        Some("gzip") | Some("x-gzip") => flate2::read::GzDecoder::new(&bytes[..])
            .take(cap as u64 + 1)
            .read_to_end(&mut out),
        Some("deflate") => flate2::read::ZlibDecoder::new(&bytes[..])
            .take(cap as u64 + 1)
            .read_to_end(&mut out),
        Some(_) => return RawBody::NotRecorded,
    };
    match read {
        Ok(_) => body_of(&out, cap),
        Err(_) => RawBody::NotRecorded,
    }
}

fn plain(status: StatusCode, text: String) -> Response<ProxyBody> {
    let mut r = Response::new(full(text));
    *r.status_mut() = status;
    r.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Pass one request on and record it.
pub(super) async fn handle(
    req: Request<Incoming>,
    sh: Arc<Shared>,
) -> Result<Response<ProxyBody>, std::convert::Infallible> {
    if req.method() == Method::CONNECT {
        return Ok(super::tunnel::connect(req, &sh));
    }
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let (mut parts, body) = req.into_parts();
    // An absolute-form request for the proxy itself (a client with both its endpoint and
    // HTTP_PROXY set to the proxy) is a reverse-mode request, not a loop.
    let own = sh
        .own_origin
        .strip_prefix("http://")
        .unwrap_or(&sh.own_origin);
    let forward = parts.uri.scheme().is_some()
        && parts
            .uri
            .authority()
            .is_some_and(|a| !a.as_str().eq_ignore_ascii_case(own));
    let pq = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let upstream = if forward {
        parts.uri.to_string()
    } else {
        format!("{}{pq}", sh.target_base)
    };
    let Ok(uri) = upstream.parse::<hyper::Uri>() else {
        return Ok(plain(
            StatusCode::BAD_REQUEST,
            format!("rpconform proxy: cannot address {upstream}\n"),
        ));
    };
    strip_hop_by_hop(&mut parts.headers);
    // The proxy's own version upstream (RFC 9110 §6.2): an HTTP/1.0 request without the
    // client's keep-alive (a hop-by-hop header, not forwarded) would leave the RP free to close
    // after answering, unannounced, and the pool would reuse what the RP closed. Persistence
    // with the client is the server side's, by the client's own version and Connection.
    parts.version = hyper::Version::HTTP_11;
    if !forward
        && let Some(a) = uri.authority()
        && let Ok(v) = HeaderValue::from_str(a.as_str())
    {
        parts.headers.insert("host", v);
    }
    parts.uri = uri;
    let mut recorded_req = pairs(&parts.headers);
    if !forward {
        for (k, v) in recorded_req.iter_mut() {
            if (k.eq_ignore_ascii_case("referer") || k.eq_ignore_ascii_case("origin"))
                && let Some(s) = swap_origin(v, &sh.own_origin, &sh.target_origin)
            {
                *v = s;
            }
        }
    }
    let mut raw = RawEntry::new(parts.method.to_string(), upstream.clone());
    raw.request_headers = recorded_req;
    raw.started_at = started_at;
    let upload = Arc::new(Mutex::new(Kept::default()));
    let cap = sh.body_cap;
    let sent = Request::from_parts(
        parts,
        Tee::new(body, cap, upload.clone(), None).boxed_unsync(),
    );
    let (mut rparts, rbody) = match sh.client.request(sent).await {
        Ok(resp) => resp.into_parts(),
        Err(e) => {
            let e = format!("cannot reach {upstream}: {e}");
            raw.request_body = request_body(&upload, cap);
            raw.elapsed_ms = started.elapsed().as_millis() as u64;
            raw.error = Some(e.clone());
            record(&sh, raw);
            return Ok(plain(
                StatusCode::BAD_GATEWAY,
                format!("rpconform proxy: {e}\n"),
            ));
        }
    };
    strip_hop_by_hop(&mut rparts.headers);
    // Answered in the proxy's own version too; to an HTTP/1.0 client the server side frames
    // it for that client (a close-delimited body rather than chunks).
    rparts.version = hyper::Version::HTTP_11;
    let status = rparts.status.as_u16();
    let mut headers = pairs(&rparts.headers);
    if !forward {
        for (k, v) in headers.iter_mut() {
            if LINKS.iter().any(|l| k.eq_ignore_ascii_case(l))
                && let Some(s) = swap_origin(v, &sh.own_origin, &sh.target_origin)
            {
                *v = s;
            }
        }
    }
    let encoding = rparts
        .headers
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if sh.rewrite_links && !forward {
        for l in LINKS {
            let Some(v) = rparts.headers.get(*l).and_then(|v| v.to_str().ok()) else {
                continue;
            };
            if let Some(s) = swap_origin(v, &sh.target_origin, &sh.own_origin)
                && let Ok(hv) = HeaderValue::from_str(&s)
            {
                rparts.headers.insert(*l, hv);
            }
        }
    }
    // Recorded once the answer has passed (or stopped passing).
    let shared = sh.clone();
    let then = Box::new(move |k: &Kept, whole: bool| {
        raw.request_body = request_body(&upload, cap);
        raw.elapsed_ms = started.elapsed().as_millis() as u64;
        raw.response = Some(RawResponse {
            status,
            headers,
            body: if whole {
                decoded(k, encoding.as_deref(), cap)
            } else {
                RawBody::NotRecorded
            },
            size: Some(k.total),
        });
        if !whole {
            raw.error = Some(format!(
                "the answer's body stopped passing after {} bytes: {}",
                k.total,
                k.error.as_deref().unwrap_or("the client went away")
            ));
        }
        record(&shared, raw);
    });
    let answer = Tee::new(
        rbody,
        cap,
        Arc::new(Mutex::new(Kept::default())),
        Some(then),
    );
    Ok(Response::from_parts(rparts, answer.boxed_unsync()))
}

/// The upload as the record keeps it (what passed of it by now).
fn request_body(upload: &Mutex<Kept>, cap: usize) -> Option<RawBody> {
    let k = upload.lock().unwrap_or_else(|e| e.into_inner());
    Some(kept_body(&k, cap)).filter(|b| *b != RawBody::Empty)
}

/// Hand an exchange to the judging thread (never judged here: the answer's last frame waits
/// on this call). After the proxy stopped there is no one to judge it.
fn record(sh: &Shared, raw: RawEntry) {
    let _ = sh.jobs.send(Job::Record(Box::new(raw), Instant::now()));
}

/// The judging thread: each job in turn, until [`Job::Stop`].
pub(super) fn judge_all(sh: &Shared, jobs: std::sync::mpsc::Receiver<Job>) {
    for job in jobs {
        let mut session = sh.session.lock().unwrap_or_else(|e| e.into_inner());
        match job {
            Job::Record(raw, at) => session.record(*raw, at),
            Job::Expire(at) => session.expire(at),
            Job::Stop => return,
        }
    }
}
