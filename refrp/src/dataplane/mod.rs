//! The TypeSpec Azure.Core data-plane surface under `/dataplane` (contract rules MON-01..08).
//!
//! Widgets are created and replaced with a long-running PUT answered with `Operation-Location`
//! and `Operation-Id`; DELETE and five actions (`:export`, `:analyze`, `:restart`, `:rebuild`,
//! `:snapshot`) show the status-monitor patterns of seed 002: the standard monitor, custom
//! terminal names, custom result fields, a monitor linked through `Location` or
//! `Azure-AsyncOperation`, and a separate final-result link.
//!
//! [`handle`] answers every request of the surface: route, method, `api-version` (only
//! `2024-05-01`), then the handler under the store lock. Errors use the Azure error envelope
//! `{"error": {"code", "message"}}`; responses carry a fresh `x-ms-request-id` and echo
//! `x-ms-client-request-id`. The ARM fault knobs do not act here; the `mon-*` knobs do.

mod handlers;
mod monitor;
mod route;
mod store;

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use axum::body::Bytes;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::context::{host_base, parse_query};
use crate::errors::ApiError;
use crate::ids;
use crate::reply::Reply;
use crate::settings::Settings;

pub use route::is_dataplane;
pub use store::Store;

use handlers::DpReq;
use route::Route;

/// The only api-version of the data-plane surface.
pub const API_VERSION: &str = "2024-05-01";

/// Answers one request of the surface. `body` is `None` when it could not be read.
pub fn handle(
    store: &Mutex<Store>,
    settings: &Settings,
    parts: &Parts,
    body: Option<Bytes>,
) -> Response {
    let reply = match body {
        Some(body) => dispatch(store, settings, parts, body).unwrap_or_else(|e| error(&e)),
        None => error(&ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestBodyTooLarge",
            "The request body could not be read or is too large.",
        )),
    };
    let mut response = reply.into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&ids::uuid()) {
        headers.insert(HeaderName::from_static("x-ms-request-id"), v);
    }
    let client_request_id = HeaderName::from_static("x-ms-client-request-id");
    if let Some(v) = parts.headers.get(&client_request_id) {
        headers.insert(client_request_id, v.clone());
    }
    response
}

/// The error answer: always the envelope, with `Allow` on a 405.
fn error(err: &ApiError) -> Reply {
    let reply = Reply::json(err.status, err.body(false, false));
    match err.allow {
        Some(allow) => reply.header(axum::http::header::ALLOW, allow),
        None => reply,
    }
}

fn dispatch(
    store: &Mutex<Store>,
    settings: &Settings,
    parts: &Parts,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let route = route::parse(parts.uri.path())
        .ok_or_else(|| ApiError::not_found("NotFound", "No route matches the request path."))?;
    let method = if parts.method == Method::HEAD {
        Method::GET
    } else {
        parts.method.clone()
    };
    let allowed = match &route {
        Route::Widget(_) => [Method::GET, Method::PUT, Method::DELETE].contains(&method),
        Route::Action(..) => method == Method::POST,
        _ => method == Method::GET,
    };
    if !allowed {
        return Err(ApiError::method_not_allowed(route.allowed()));
    }
    let api_version = api_version(&parse_query(parts.uri.query()))?;
    let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
    // Take the time under the lock so that operations start and end in request order.
    let now = Instant::now();
    store.advance(now);
    let req = DpReq {
        headers: &parts.headers,
        body,
        base: host_base(&parts.headers, &parts.uri),
        api_version,
        settings,
        now,
    };
    let store = &mut *store;
    match (route, method) {
        (Route::Widgets, _) => Ok(handlers::list(store)),
        (Route::Widget(name), Method::GET) => handlers::get(store, &name),
        (Route::Widget(name), Method::PUT) => handlers::put(&req, store, &name),
        (Route::Widget(name), _) => handlers::delete(&req, store, &name),
        (Route::Action(name, action), _) => handlers::action(&req, store, &name, action),
        (Route::Monitor(monitor, id), _) => handlers::read_monitor(&req, store, monitor, &id),
        (Route::Snapshot(id), _) => handlers::read_snapshot(&req, store, &id),
        (Route::ExportContent(id), _) => handlers::read_export(store, &id),
    }
}

/// The checked `api-version`: 400 `MissingApiVersionParameter` / `InvalidApiVersionParameter`.
fn api_version(query: &[(String, String)]) -> Result<String, ApiError> {
    let given = query
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("api-version"))
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            ApiError::bad_request(
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests.",
            )
        })?;
    if given.eq_ignore_ascii_case(API_VERSION) {
        return Ok(API_VERSION.to_string());
    }
    let shown: String = given.chars().take(64).collect();
    Err(ApiError::bad_request(
        "InvalidApiVersionParameter",
        format!(
            "The api-version '{shown}' is invalid. The supported versions are '{API_VERSION}'."
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions() {
        let q = |v: &str| vec![("API-VERSION".to_string(), v.to_string())];
        assert_eq!(
            api_version(&q("2024-05-01")).ok().as_deref(),
            Some(API_VERSION)
        );
        let code = |r: Result<String, ApiError>| r.err().map(|e| e.code);
        assert_eq!(
            code(api_version(&q("2024-09-01-preview"))).as_deref(),
            Some("InvalidApiVersionParameter")
        );
        assert_eq!(
            code(api_version(&q(" "))).as_deref(),
            Some("MissingApiVersionParameter")
        );
        assert_eq!(
            code(api_version(&[])).as_deref(),
            Some("MissingApiVersionParameter")
        );
    }
}
