//! Collection lists (paged, absolute `nextLink`), at subscription scope too for the types that
//! live in resource groups, and `/skus`.

use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use super::checks::{not_found, parent_not_found, require_parent, require_scope};
use crate::context::Req;
use crate::errors::ApiError;
use crate::faults::Fault;
use crate::path::{CollRef, Kind, ResRef};
use crate::render;
use crate::reply::Reply;
use crate::store::{Resource, Store};

/// GET of a collection, paged with an absolute `nextLink`. Hidden resources are left out.
pub fn list(req: &Req, store: &Store, c: &CollRef) -> Result<Reply, ApiError> {
    let fold = req.fold();
    require_scope(store, &c.scope, fold)?;
    if let Some(parent) = &c.parent
        && !store.visible(&parent.key(fold))
    {
        return Err(parent_not_found(parent));
    }
    let prefix = c.key_prefix(fold);
    page(req, store, &prefix, store.children(&prefix))
}

/// GET `/subscriptions/{sub}/providers/{ns}/{type}` of a type that lives in resource groups:
/// the subscription's resources of that type across all its groups, paged like [`list`].
pub fn list_across(req: &Req, store: &Store, sub: &str, kind: Kind) -> Result<Reply, ApiError> {
    let prefix = format!(
        "/subscriptions/{}/resourcegroups/",
        sub.to_ascii_lowercase()
    );
    let tail = format!(
        "providers/{}/{}/",
        kind.namespace().to_ascii_lowercase(),
        kind.segment().to_ascii_lowercase()
    );
    let omitted = req.has(Fault::ListOmitsSubscriptionScope);
    // `{group}/providers/{ns}/{type}/{name}` after the prefix.
    let of_kind = |rest: &str| {
        rest.split_once('/').is_some_and(|(_group, r)| {
            r.strip_prefix(tail.as_str())
                .is_some_and(|name| !name.is_empty() && !name.contains('/'))
        })
    };
    let items = store
        .resources
        .range(prefix.clone()..)
        .take_while(|(k, _)| k.starts_with(prefix.as_str()))
        .filter(|(k, _)| !omitted && of_kind(&k[prefix.len()..]));
    page(req, store, &prefix, items)
}

/// One page of `items` (keys in order, each starting with `prefix`): hidden resources left
/// out, an absolute `nextLink` with a `$skipToken` when more remain.
fn page<'a>(
    req: &Req,
    store: &'a Store,
    prefix: &str,
    items: impl Iterator<Item = (&'a String, &'a Resource)>,
) -> Result<Reply, ApiError> {
    let after = match req.query("$skipToken") {
        None => None,
        Some(t) => Some(decode_token(t).ok_or_else(|| {
            ApiError::bad_request("InvalidSkipToken", "The $skipToken is not valid.")
        })?),
    };
    let page_size = req.settings.effective_page_size();
    let mut items: Vec<(&String, &Resource)> = items
        .filter(|(k, _)| after.as_deref().is_none_or(|a| &k[prefix.len()..] > a))
        .filter(|(k, _)| !store.hidden(k))
        .take(page_size + 1)
        .collect();
    let more = items.len() > page_size;
    items.truncate(page_size);
    let value: Vec<Value> = items
        .iter()
        .map(|(k, r)| render::resource(r, Some(store.shown_state(k)), req.settings))
        .collect();
    let mut body = Map::new();
    body.insert("value".into(), Value::Array(value));
    if more && let Some((k, _)) = items.last() {
        let pq = format!(
            "{}?api-version={}&$skipToken={}",
            req.path,
            req.api_version,
            encode_token(&k[prefix.len()..])
        );
        let link = if req.has(Fault::RelativeNextLink) {
            pq
        } else {
            req.link(Fault::NextLinkFromHost, &pq)
        };
        body.insert("nextLink".into(), json!(link));
    }
    Ok(Reply::json(StatusCode::OK, Value::Object(body)))
}

/// GET `{resource}/skus`.
pub fn skus(req: &Req, store: &Store, r: &ResRef) -> Result<Reply, ApiError> {
    let fold = req.fold();
    require_scope(store, &r.scope, fold)?;
    require_parent(store, r, fold)?;
    if !store.visible(&r.key(fold)) {
        return Err(not_found(r));
    }
    match r.kind() {
        Kind::Widget if req.has(Fault::OversizedSkus) => {
            let mut body = render::widget_skus();
            body["padding"] = json!("x".repeat(9 * 1024 * 1024));
            Ok(Reply::json(StatusCode::OK, body))
        }
        Kind::Widget => Ok(Reply::json(StatusCode::OK, render::widget_skus())),
        _ if req.has(Fault::EmptySkus404) => Err(ApiError::not_found(
            "NotFound",
            "No SKUs are available for this resource.",
        )),
        _ => Ok(Reply::json(StatusCode::OK, json!({"value": []}))),
    }
}

fn encode_token(name: &str) -> String {
    name.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_token(token: &str) -> Option<String> {
    if !token.len().is_multiple_of(2) || !token.is_ascii() {
        return None;
    }
    let bytes = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&token[i..i + 2], 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_tokens_round_trip() {
        assert_eq!(decode_token(&encode_token("w-1")).as_deref(), Some("w-1"));
        assert_eq!(decode_token("zz"), None);
        assert_eq!(decode_token("abc"), None);
        assert_eq!(decode_token("é1"), None);
    }
}
