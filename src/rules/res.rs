//! RES: the resource envelope and lists, on every ARM answer that carries a resource (RES-01..04)
//! or a collection (RES-05).

use serde_json::Value;

use super::Judge;
use crate::http::{Exchange, Role, cut};
use crate::target::{Addressed, Kind};

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
    match j.target.address(&ex.url) {
        Addressed::Resource(ty)
            if matches!(ex.method.as_str(), "GET" | "PUT" | "PATCH")
                && matches!(resp.status, 200 | 201) =>
        {
            let Some(body) = resp.json.as_ref() else {
                j.ledger.fail(
                    "RES-01",
                    "the resource as a JSON object",
                    format!("{} with body {}", resp.status, cut(&resp.body, 120)),
                    seq,
                    None,
                );
                return;
            };
            envelope(j, ex, body, ty.kind);
            let path = url::Url::parse(&ex.url)
                .map(|u| u.path().trim_end_matches('/').to_string())
                .unwrap_or_default();
            let id = body.get("id").and_then(Value::as_str);
            let ty_s = body.get("type").and_then(Value::as_str);
            let want_type = j.target.arm_type_of(&ex.url).unwrap_or_default();
            j.ledger.check(
                "RES-02",
                id.is_some_and(|i| i.trim_end_matches('/').eq_ignore_ascii_case(&path))
                    && ty_s.is_some_and(|t| t.eq_ignore_ascii_case(&want_type)),
                seq,
                || {
                    (
                        format!("id = {path}, type = {want_type} (any case)"),
                        format!("id = {id:?}, type = {ty_s:?}"),
                    )
                },
            );
        }
        Addressed::Collection(ty)
            if ex.method == "GET" && resp.status == 200 || ex.role == Role::NextPage =>
        {
            if resp.status != 200 {
                return;
            }
            let Some(body) = resp.json.as_ref() else {
                j.ledger.fail(
                    "RES-05",
                    "a JSON object with a `value` array",
                    cut(&resp.body, 120),
                    seq,
                    None,
                );
                return;
            };
            let value = body.get("value").and_then(Value::as_array);
            let next = body.get("nextLink").filter(|n| !n.is_null());
            let next_ok = next.is_none_or(|n| n.as_str().is_some_and(crate::lro::is_absolute_uri));
            j.ledger
                .check("RES-05", value.is_some() && next_ok, seq, || {
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
                envelope(j, ex, item, ty.kind);
            }
        }
        _ => {}
    }
}

/// RES-01, RES-03, RES-04 on one resource body.
fn envelope(j: &mut Judge<'_>, ex: &Exchange, body: &Value, kind: Kind) {
    let seq = Some(ex.seq);
    let s = |k: &str| body.get(k).and_then(Value::as_str);
    let (id, name, ty) = (s("id"), s("name"), s("type"));
    let last = id.map(|i| i.trim_end_matches('/').rsplit('/').next().unwrap_or(""));
    let props_ok = body
        .get("properties")
        .is_none_or(|p| p.is_object() || p.is_null());
    j.ledger.check(
        "RES-01",
        id.is_some() && ty.is_some() && name.is_some() && name == last && props_ok,
        seq,
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
            j.ledger.check("RES-03", loc_ok && tags_ok, seq, || {
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
            j.ledger.check("RES-04", ok, seq, || {
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
