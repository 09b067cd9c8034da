//! Collection lists (paged, absolute `nextLink`) and `/skus`.

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
    let after = match req.query("$skipToken") {
        None => None,
        Some(t) => Some(decode_token(t).ok_or_else(|| {
            ApiError::bad_request("InvalidSkipToken", "The $skipToken is not valid.")
        })?),
    };
    let page_size = req.settings.effective_page_size();
    let mut items: Vec<(&String, &Resource)> = store
        .children(&prefix)
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
            req.absolute(&pq)
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
