//! Ambient rules: checked on every exchange of every scenario that falls in their scope, not
//! only in scenarios written for them (DESIGN §2.5). Scope comes from the exchange itself (its
//! status, headers, URL shape) and the runner's [`Role`] for it (an operation-status read, a
//! Location poll...).

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use super::Ledger;
use super::arm_path::{PathKind, arm_type_of, classify, is_arm};
use crate::http::{Exchange, Response, Role};
use crate::target::{Kind, Target};

/// `x-ms-request-id` values seen in the run (HDR-01 uniqueness), with the first exchange.
#[derive(Debug, Default)]
pub struct RequestIds(Mutex<HashMap<String, u64>>);

impl RequestIds {
    /// The exchange that used this id first, if another one did (and remember this one).
    pub fn first_use_of(&self, id: &str, seq: u64) -> Option<u64> {
        self.first_use(id, seq)
    }

    /// The exchange that used this id first, if another one did.
    fn first_use(&self, id: &str, seq: u64) -> Option<u64> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match m.get(id) {
            Some(first) if *first != seq => Some(*first),
            Some(_) => None,
            None => {
                m.insert(id.to_string(), seq);
                None
            }
        }
    }
}

/// What reads of one operation have shown so far (OPS-07, OPS-08).
#[derive(Debug, Default, Clone)]
pub struct OpHistory {
    ops: HashMap<String, OpSeen>,
}

#[derive(Debug, Default, Clone)]
struct OpSeen {
    start: Option<String>,
    end: Option<chrono::DateTime<chrono::FixedOffset>>,
    terminal: Option<(String, Value)>,
}

pub struct Ctx<'a> {
    pub target: &'a Target,
    pub request_ids: &'a RequestIds,
}

pub const TERMINAL: &[&str] = &["succeeded", "failed", "canceled"];

pub fn is_terminal(status: &str) -> bool {
    TERMINAL.contains(&status.to_ascii_lowercase().as_str())
}

fn path_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_default()
}

fn is_absolute(v: &str) -> bool {
    url::Url::parse(v).is_ok_and(|u| u.has_host() && !u.scheme().is_empty())
}

fn digits(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

/// Check every ambient rule that applies to this exchange.
pub fn check(ex: &Exchange, ctx: &Ctx<'_>, ledger: &mut Ledger, ops: &mut OpHistory) {
    let Some(resp) = &ex.response else { return };
    let path = path_of(&ex.url);
    let arm = is_arm(&path) && !ex.foreign;
    if arm {
        headers(ex, resp, ctx, ledger);
        if resp.status >= 400 && ex.method != "HEAD" {
            error_envelope(ex, resp, ledger);
        }
    }
    if matches!(resp.status, 408 | 429) || resp.status >= 500 {
        let ra = resp.header("retry-after");
        ledger.check("RETRY-01", ra.is_some_and(digits), Some(ex.seq), || {
            (
                "Retry-After in whole seconds on a 408/429/5xx".into(),
                format!("{} with Retry-After {:?}", resp.status, ra),
            )
        });
    }
    location_headers(ex, resp, arm, ledger);
    if ex.role == Role::OperationStatus {
        operation_read(ex, resp, &path, ledger, ops);
    }
    if arm && !ex.foreign {
        resource_shapes(ex, resp, &path, ctx, ledger);
    }
}

fn headers(ex: &Exchange, resp: &Response, ctx: &Ctx<'_>, ledger: &mut Ledger) {
    let rid = resp
        .header("x-ms-request-id")
        .map(str::trim)
        .filter(|s| !s.is_empty());
    match rid {
        None => ledger.fail(
            "HDR-01",
            "a non-empty x-ms-request-id header",
            "no x-ms-request-id",
            Some(ex.seq),
            None,
        ),
        Some(id) => match ctx.request_ids.first_use(id, ex.seq) {
            Some(first) => ledger.fail(
                "HDR-01",
                "an x-ms-request-id no other response carried",
                format!("`{id}` was already returned by exchange #{first}"),
                Some(ex.seq),
                None,
            ),
            None => ledger.pass("HDR-01"),
        },
    }
    if let (Some(id), Some(routing)) = (rid, ex.request_header("x-ms-routing-request-id")) {
        ledger.check("HDR-02", id != routing, Some(ex.seq), || {
            (
                "x-ms-request-id different from the request's x-ms-routing-request-id".into(),
                format!("both are `{id}`"),
            )
        });
    }
    for h in ["x-ms-client-request-id", "x-ms-correlation-request-id"] {
        if let Some(sent) = ex.request_header(h) {
            let got = resp.header(h);
            ledger.check("HDR-03", got == Some(sent), Some(ex.seq), || {
                (
                    format!("{h}: {sent} echoed"),
                    match got {
                        Some(g) => format!("{h}: {g}"),
                        None => format!("no {h} header"),
                    },
                )
            });
        }
    }
}

fn error_envelope(ex: &Exchange, resp: &Response, ledger: &mut Ledger) {
    let err = resp
        .json
        .as_ref()
        .and_then(|j| j.get("error"))
        .filter(|e| e.is_object());
    let Some(err) = err else {
        let seen = match (&resp.json, &resp.json_error) {
            (Some(j), _) => format!(
                "{} body without a top-level `error` object: {}",
                resp.status,
                crate::http::cut(&j.to_string(), 200)
            ),
            (None, Some(e)) => format!("{} with a body that is not JSON ({e})", resp.status),
            (None, None) => format!("{} with an empty body", resp.status),
        };
        ledger.fail(
            "ERR-01",
            r#"a JSON body {"error": {...}}"#,
            seen,
            Some(ex.seq),
            None,
        );
        return;
    };
    ledger.pass("ERR-01");
    let nonempty = |k: &str| {
        err.get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    };
    ledger.check(
        "ERR-02",
        nonempty("code") && nonempty("message"),
        Some(ex.seq),
        || {
            (
                "error.code and error.message as non-empty strings".into(),
                format!("error = {}", crate::http::cut(&err.to_string(), 200)),
            )
        },
    );
    if let Some(details) = err.get("details") {
        let ok = details.as_array().is_some_and(|a| {
            a.iter().all(|d| {
                d.get("code").is_some_and(Value::is_string)
                    && d.get("message").is_some_and(Value::is_string)
            })
        });
        ledger.check("ERR-03", ok, Some(ex.seq), || {
            (
                "error.details: an array of {code, message} objects".into(),
                crate::http::cut(&details.to_string(), 200),
            )
        });
    }
    if let Some(t) = err.get("target") {
        ledger.check("ERR-03", t.is_string(), Some(ex.seq), || {
            ("error.target as a string".into(), t.to_string())
        });
    }
}

fn location_headers(ex: &Exchange, resp: &Response, arm: bool, ledger: &mut Ledger) {
    let loc = resp.header("location");
    if arm && resp.status == 202 && ex.method == "DELETE" {
        let ra = resp.header("retry-after");
        ledger.check("DEL-02", ra.is_some(), Some(ex.seq), || {
            (
                "Retry-After on a DELETE answered 202".into(),
                "no Retry-After".into(),
            )
        });
    }
    if arm && resp.status == 202 {
        ledger.check("LOC-01", loc.is_some(), Some(ex.seq), || {
            ("a Location header on a 202".into(), "no Location".into())
        });
    }
    if let Some(l) = loc {
        ledger.check("LOC-02", is_absolute(l), Some(ex.seq), || {
            ("an absolute Location URI".into(), format!("Location: {l}"))
        });
    }
    for ra in resp.header_all("retry-after") {
        let ok = digits(ra.trim());
        ledger.check("LOC-03", ok, Some(ex.seq), || {
            (
                "Retry-After as whole seconds (digits only)".into(),
                format!("Retry-After: {ra}"),
            )
        });
        if ok && resp.status == 202 {
            let v: u64 = ra.trim().parse().unwrap_or(u64::MAX);
            ledger.check("LOC-04", (10..=600).contains(&v), Some(ex.seq), || {
                (
                    "Retry-After between 10 and 600 on a 202".into(),
                    format!("Retry-After: {ra}"),
                )
            });
        }
    }
    if arm
        && resp.status == 202
        && let Some(l) = loc
        && let Ok(lu) = url::Url::parse(l)
    {
        let req = url::Url::parse(&ex.url).ok();
        let want_host = ex
            .request_header("referer")
            .and_then(|r| url::Url::parse(r).ok())
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
            .or_else(|| {
                req.as_ref()
                    .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
            });
        let host_ok = lu.host_str().map(str::to_ascii_lowercase) == want_host;
        let lp = lu.path().to_ascii_lowercase();
        let rp = req
            .as_ref()
            .map(|u| u.path().to_ascii_lowercase())
            .unwrap_or_default();
        let under_request =
            lp.starts_with(&format!("{}/operationresults/", rp.trim_end_matches('/')));
        let segs: Vec<&str> = lp.trim_matches('/').split('/').collect();
        let regional = segs.len() == 8
            && segs[0] == "subscriptions"
            && segs[2] == "providers"
            && segs[4] == "locations"
            && segs[6] == "operationresults";
        let has_version = lu.query_pairs().any(|(k, _)| k == "api-version");
        ledger.check("LOC-09", host_ok && (under_request || regional) && has_version, Some(ex.seq), || {
            (
                "Location on the request's (or Referer's) host, an operationresults path, with api-version".into(),
                format!("Location: {l}"),
            )
        });
    }
    if let Some(a) = resp.header("azure-asyncoperation") {
        ledger.check("AAO-01", is_absolute(a), Some(ex.seq), || {
            (
                "an absolute Azure-AsyncOperation URI".into(),
                format!("Azure-AsyncOperation: {a}"),
            )
        });
        if let Ok(au) = url::Url::parse(a) {
            let want = ex
                .request_header("referer")
                .and_then(|r| url::Url::parse(r).ok())
                .or_else(|| url::Url::parse(&ex.url).ok())
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
            let same_host = au.host_str().map(str::to_ascii_lowercase) == want;
            let last = |u: &url::Url| {
                u.path()
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase()
            };
            let ids_ok = match loc.and_then(|l| url::Url::parse(l).ok()) {
                Some(lu) => last(&lu) == last(&au),
                None => true,
            };
            ledger.check("AAO-03", same_host && ids_ok, Some(ex.seq), || {
                (
                    "Azure-AsyncOperation on the request's host, ending in the same operation id as Location".into(),
                    format!("Azure-AsyncOperation: {a}; Location: {}", loc.unwrap_or("(none)")),
                )
            });
        }
    }
}

fn operation_read(
    ex: &Exchange,
    resp: &Response,
    path: &str,
    ledger: &mut Ledger,
    ops: &mut OpHistory,
) {
    ledger.check("OPRES-01", resp.status == 200, Some(ex.seq), || {
        (
            "200 on every read of an operation resource".into(),
            format!("{}", resp.status),
        )
    });
    let body = resp.json.as_ref().filter(|j| j.is_object());
    let status = body.and_then(|b| b.get("status")).and_then(Value::as_str);
    // Non-2xx reads are OPRES-01's finding; AAO-02 judges what a successful read returns.
    if resp.status >= 300 {
        return;
    }
    ledger.check(
        "AAO-02",
        resp.status != 202 && body.is_some() && status.is_some(),
        Some(ex.seq),
        || {
            (
                "an operation resource: a JSON object with a string `status`, not a 202".into(),
                format!("{} {}", resp.status, crate::http::cut(&resp.body, 200)),
            )
        },
    );
    if resp.status != 200 {
        return;
    }
    let Some(b) = body else { return };
    ledger.check("OPRES-02", status.is_some(), Some(ex.seq), || {
        (
            "a string `status`".into(),
            format!("status = {:?}", b.get("status")),
        )
    });
    let id = b.get("id").and_then(Value::as_str);
    let name = b.get("name").and_then(Value::as_str);
    let id_path = id.map(|i| {
        url::Url::parse(i)
            .map(|u| u.path().to_string())
            .unwrap_or_else(|_| i.split('?').next().unwrap_or(i).to_string())
    });
    ledger.check(
        "OPRES-04",
        id.is_some()
            && name.is_some()
            && id_path
                .as_deref()
                .is_some_and(|p| p.eq_ignore_ascii_case(path)),
        Some(ex.seq),
        || {
            (
                "`id` and `name` present, the path of `id` equal to the URL path read".into(),
                format!("id = {id:?}, name = {name:?}, URL path {path}"),
            )
        },
    );
    if let (Some(n), Some(i)) = (name, id) {
        let last = i.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        ledger.check("OPRES-05", n == last, Some(ex.seq), || {
            (
                "`name` equal to the last segment of `id`".into(),
                format!("name = {n}, id = {i}"),
            )
        });
    }
    let mut times_ok = true;
    let mut seen = Vec::new();
    let parse_time = |k: &str| {
        b.get(k).map(|v| {
            v.as_str()
                .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        })
    };
    for k in ["startTime", "endTime"] {
        if let Some(t) = parse_time(k)
            && t.is_none()
        {
            times_ok = false;
            seen.push(format!(
                "{k} = {}",
                b.get(k).map(|v| v.to_string()).unwrap_or_default()
            ));
        }
    }
    if let Some(p) = b.get("percentComplete") {
        let ok = p.as_f64().is_some_and(|v| (0.0..=100.0).contains(&v));
        if !ok {
            times_ok = false;
            seen.push(format!("percentComplete = {p}"));
        }
    }
    if b.get("startTime").is_some()
        || b.get("endTime").is_some()
        || b.get("percentComplete").is_some()
    {
        ledger.check("OPRES-06", times_ok, Some(ex.seq), || {
            (
                "ISO 8601 startTime/endTime, percentComplete from 0 to 100".into(),
                seen.join(", "),
            )
        });
    }
    let Some(st) = status else { return };
    let lower = st.to_ascii_lowercase();
    if b.get("properties").is_some_and(|p| !p.is_null()) {
        ledger.check("OPRES-07", lower == "succeeded", Some(ex.seq), || {
            (
                "`properties` only when status is Succeeded".into(),
                format!("status {st} with properties"),
            )
        });
    }
    let err = b.get("error");
    let nonempty = |k: &str| {
        err.and_then(|e| e.get(k))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    };
    if lower == "failed" {
        ledger.check(
            "OPRES-08",
            nonempty("code") && nonempty("message"),
            Some(ex.seq),
            || {
                (
                    "status Failed with error.code and error.message".into(),
                    format!(
                        "error = {}",
                        err.map(|e| e.to_string()).unwrap_or("(none)".into())
                    ),
                )
            },
        );
    } else if lower == "canceled" {
        ledger.check("OPRES-08", nonempty("code"), Some(ex.seq), || {
            (
                "status Canceled with error.code".into(),
                format!(
                    "error = {}",
                    err.map(|e| e.to_string()).unwrap_or("(none)".into())
                ),
            )
        });
    }
    // History across reads of this operation.
    let key = path.to_ascii_lowercase();
    let h = ops.ops.entry(key).or_default();
    if let Some((prev, prev_err)) = &h.terminal {
        let same = prev.eq_ignore_ascii_case(st) && prev_err == err.unwrap_or(&Value::Null);
        ledger.check("OPS-07", same, Some(ex.seq), || {
            (
                format!("status to stay {prev} once terminal, with the same error"),
                format!(
                    "status {st}, error {}",
                    err.map(|e| e.to_string()).unwrap_or("(none)".into())
                ),
            )
        });
    } else if is_terminal(st) {
        h.terminal = Some((st.to_string(), err.cloned().unwrap_or(Value::Null)));
    }
    let start = b.get("startTime").and_then(Value::as_str);
    let end = b
        .get("endTime")
        .and_then(Value::as_str)
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok());
    let mut ok = true;
    let mut why = String::new();
    if let Some(s) = start {
        match &h.start {
            Some(prev) if prev != s => {
                ok = false;
                why = format!("startTime changed from {prev} to {s}");
            }
            _ => h.start = Some(s.to_string()),
        }
        if let (Some(e), Ok(sv)) = (end, chrono::DateTime::parse_from_rfc3339(s))
            && e < sv
        {
            ok = false;
            why = format!("endTime {e} is before startTime {s}");
        }
    }
    if let Some(e) = end {
        if let Some(prev) = h.end
            && e < prev
        {
            ok = false;
            why = format!("endTime moved back from {prev} to {e}");
        }
        h.end = Some(e);
    }
    if start.is_some() || end.is_some() {
        ledger.check("OPS-08", ok, Some(ex.seq), || {
            (
                "startTime fixed; endTime never earlier than before or than startTime".into(),
                why,
            )
        });
    }
}

fn resource_shapes(ex: &Exchange, resp: &Response, path: &str, ctx: &Ctx<'_>, ledger: &mut Ledger) {
    let kind = classify(path, ctx.target);
    match kind {
        PathKind::Resource(ty)
            if matches!(ex.method.as_str(), "GET" | "PUT" | "PATCH")
                && matches!(resp.status, 200 | 201) =>
        {
            if ty.etag {
                let et = resp.header("etag");
                let ok = et.is_some_and(|e| {
                    let e = e.strip_prefix("W/").unwrap_or(e);
                    e.len() >= 2 && e.starts_with('"') && e.ends_with('"')
                });
                ledger.check("ETAG-24", ok, Some(ex.seq), || {
                    ("a quoted ETag header".into(), format!("ETag: {et:?}"))
                });
            }
            let Some(body) = resp.json.as_ref() else {
                ledger.fail(
                    "RES-01",
                    "the resource as a JSON object",
                    format!(
                        "{} with body {}",
                        resp.status,
                        crate::http::cut(&resp.body, 120)
                    ),
                    Some(ex.seq),
                    None,
                );
                return;
            };
            envelope(ex, body, ty.kind, ledger);
            let id = body.get("id").and_then(Value::as_str);
            let ty_s = body.get("type").and_then(Value::as_str);
            let want_type = arm_type_of(path).unwrap_or_default();
            ledger.check(
                "RES-02",
                id.is_some_and(|i| i.eq_ignore_ascii_case(path.trim_end_matches('/')))
                    && ty_s.is_some_and(|t| t.eq_ignore_ascii_case(&want_type)),
                Some(ex.seq),
                || {
                    (
                        format!("id = {path}, type = {want_type} (any case)"),
                        format!("id = {id:?}, type = {ty_s:?}"),
                    )
                },
            );
            let props = body.get("properties");
            if body.get("provisioningState").is_some() {
                ledger.fail(
                    "PSTATE-01",
                    "provisioningState under `properties`",
                    "a top-level provisioningState",
                    Some(ex.seq),
                    None,
                );
            } else if let Some(ps) = props.and_then(|p| p.get("provisioningState")) {
                ledger.check("PSTATE-01", ps.is_string(), Some(ex.seq), || {
                    (
                        "properties.provisioningState as a string".into(),
                        ps.to_string(),
                    )
                });
            }
            if ty.provisioning_state && ex.method == "GET" && resp.status == 200 {
                let has = props.and_then(|p| p.get("provisioningState")).is_some();
                ledger.check("PSTATE-05", has, Some(ex.seq), || {
                    (
                        "properties.provisioningState on every GET".into(),
                        "absent".into(),
                    )
                });
            }
        }
        PathKind::Collection(ty) if ex.method == "GET" && resp.status == 200 => {
            let Some(body) = resp.json.as_ref() else {
                ledger.fail(
                    "RES-05",
                    "a JSON object with a `value` array",
                    crate::http::cut(&resp.body, 120),
                    Some(ex.seq),
                    None,
                );
                return;
            };
            let value = body.get("value").and_then(Value::as_array);
            let next = body.get("nextLink").filter(|n| !n.is_null());
            let next_ok = next.is_none_or(|n| n.as_str().is_some_and(is_absolute));
            ledger.check("RES-05", value.is_some() && next_ok, Some(ex.seq), || {
                (
                    "`value` array; nextLink absent, null or an absolute URI".into(),
                    format!(
                        "value: {}, nextLink: {:?}",
                        value
                            .map(|v| format!("{} items", v.len()))
                            .unwrap_or("missing".into()),
                        next
                    ),
                )
            });
            for item in value.into_iter().flatten() {
                envelope(ex, item, ty.kind, ledger);
            }
        }
        _ => {}
    }
}

/// RES-01, RES-03, RES-04 on one resource body.
fn envelope(ex: &Exchange, body: &Value, kind: Kind, ledger: &mut Ledger) {
    let s = |k: &str| body.get(k).and_then(Value::as_str);
    let (id, name, ty) = (s("id"), s("name"), s("type"));
    let last = id.map(|i| i.trim_end_matches('/').rsplit('/').next().unwrap_or(""));
    let props_ok = body
        .get("properties")
        .is_none_or(|p| p.is_object() || p.is_null());
    ledger.check(
        "RES-01",
        id.is_some() && ty.is_some() && name.is_some() && name == last && props_ok,
        Some(ex.seq),
        || {
            (
                "string id, name and type; name = last segment of id; properties an object".into(),
                format!(
                    "id = {id:?}, name = {name:?}, type = {ty:?}, properties object: {props_ok}"
                ),
            )
        },
    );
    let tags_ok = body.get("tags").is_none_or(|t| {
        t.is_null()
            || t.as_object()
                .is_some_and(|m| m.values().all(Value::is_string))
    });
    match kind {
        Kind::Tracked => {
            let loc_ok = s("location").is_some_and(|l| !l.trim().is_empty());
            ledger.check("RES-03", loc_ok && tags_ok, Some(ex.seq), || {
                (
                    "a non-empty string location; tags an object of strings".into(),
                    format!(
                        "location = {:?}, tags = {:?}",
                        body.get("location"),
                        body.get("tags")
                    ),
                )
            });
        }
        Kind::Proxy => {
            let ok = body.get("tags").is_none() && body.get("location").is_none();
            ledger.check("RES-04", ok, Some(ex.seq), || {
                (
                    "no tags and no location on a proxy resource".into(),
                    format!(
                        "location = {:?}, tags = {:?}",
                        body.get("location"),
                        body.get("tags")
                    ),
                )
            });
        }
    }
}
