//! The task-based surface under `/v1`, in the style of the Redis Cloud API (contract rules
//! TASK-01..08).
//!
//! Writes on subscriptions (create, update, delete) answer 202 with a task; the task moves
//! `received` → `processing-in-progress` → `processing-completed` | `processing-error`, and the
//! subscription then provisions (`pending` → `active` | `error`) or de-provisions (`deleting`
//! → gone). Reads answer 200 or 404 at once. No api-version is used.
//!
//! [`handle`] answers every request of the surface: route, method, then the handler under the
//! store lock. Errors use the task API's own shape `{"error": {"type", "status",
//! "description"}}`. The ARM fault knobs do not act here; the task knobs do.

mod handlers;
mod render;
mod store;

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::context::host_base;
use crate::path::percent_decode;
use crate::settings::Settings;

pub use store::Store;

use handlers::TaskReq;
use render::HttpError;

/// Everything the task surface serves.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    /// `/v1/subscriptions`
    Subscriptions,
    /// `/v1/subscriptions/{id}`
    Subscription(String),
    /// `/v1/tasks`
    Tasks,
    /// `/v1/tasks/{id}`
    Task(String),
}

impl Route {
    fn allowed(&self) -> &'static str {
        match self {
            Route::Subscriptions => "GET, HEAD, POST",
            Route::Subscription(_) => "GET, HEAD, PUT, DELETE",
            Route::Tasks | Route::Task(_) => "GET, HEAD",
        }
    }

    fn allows(&self, method: &Method) -> bool {
        match self {
            Route::Subscriptions => [Method::GET, Method::POST].contains(method),
            Route::Subscription(_) => [Method::GET, Method::PUT, Method::DELETE].contains(method),
            Route::Tasks | Route::Task(_) => method == Method::GET,
        }
    }
}

/// Whether `path` belongs to this surface (its first segment is `v1`).
pub fn is_tasks(path: &str) -> bool {
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    first.eq_ignore_ascii_case("v1")
}

fn parse(path: &str) -> Option<Route> {
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    let segs: Vec<String> = trimmed
        .strip_prefix('/')?
        .split('/')
        .map(percent_decode)
        .collect::<Option<Vec<_>>>()?;
    if segs.iter().any(String::is_empty) || !segs[0].eq_ignore_ascii_case("v1") {
        return None;
    }
    let s: Vec<&str> = segs[1..].iter().map(String::as_str).collect();
    match s.as_slice() {
        [c] if c.eq_ignore_ascii_case("subscriptions") => Some(Route::Subscriptions),
        [c, id] if c.eq_ignore_ascii_case("subscriptions") => {
            Some(Route::Subscription(id.to_string()))
        }
        [c] if c.eq_ignore_ascii_case("tasks") => Some(Route::Tasks),
        [c, id] if c.eq_ignore_ascii_case("tasks") => Some(Route::Task(id.to_string())),
        _ => None,
    }
}

/// Answers one request of the surface. `body` is `None` when it could not be read.
pub fn handle(
    store: &Mutex<Store>,
    settings: &Settings,
    parts: &Parts,
    body: Option<Bytes>,
) -> Response {
    let result = match body {
        Some(body) => dispatch(store, settings, parts, body),
        None => Err(HttpError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "REQUEST_TOO_LARGE",
            "The request body could not be read or is too large.",
        )),
    };
    match result {
        Ok((status, body)) => (status, Json(body)).into_response(),
        Err(e) => {
            let mut response = (e.status, Json(e.body())).into_response();
            if let Some(allow) = e.allow
                && let Ok(v) = allow.parse()
            {
                response.headers_mut().insert(header::ALLOW, v);
            }
            response
        }
    }
}

fn dispatch(
    store: &Mutex<Store>,
    settings: &Settings,
    parts: &Parts,
    body: Bytes,
) -> Result<(StatusCode, Value), HttpError> {
    let route = parse(parts.uri.path()).ok_or_else(|| {
        HttpError::new(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "No route matches the request path.",
        )
    })?;
    let method = if parts.method == Method::HEAD {
        Method::GET
    } else {
        parts.method.clone()
    };
    if !route.allows(&method) {
        let allow = route.allowed();
        return Err(HttpError {
            allow: Some(allow),
            ..HttpError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "METHOD_NOT_ALLOWED",
                format!("The HTTP method is not supported here; allowed: {allow}."),
            )
        });
    }
    let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
    // Take the time under the lock so that tasks start and end in request order.
    let now = Instant::now();
    store.advance(now);
    let req = TaskReq {
        body,
        base: host_base(&parts.headers, &parts.uri),
        settings,
        now,
    };
    let store = &mut *store;
    match (route, method) {
        (Route::Subscriptions, Method::POST) => handlers::create(&req, store),
        (Route::Subscriptions, _) => Ok(handlers::list(&req, store)),
        (Route::Subscription(id), Method::GET) => handlers::get(&req, store, &id),
        (Route::Subscription(id), Method::PUT) => handlers::update(&req, store, &id),
        (Route::Subscription(id), _) => handlers::delete(&req, store, &id),
        (Route::Tasks, _) => Ok(handlers::tasks(&req, store)),
        (Route::Task(id), _) => handlers::task(&req, store, &id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        assert_eq!(parse("/v1/subscriptions"), Some(Route::Subscriptions));
        assert_eq!(
            parse("/V1/Subscriptions/12/"),
            Some(Route::Subscription("12".into()))
        );
        assert_eq!(parse("/v1/tasks"), Some(Route::Tasks));
        assert_eq!(parse("/v1/tasks/abc"), Some(Route::Task("abc".into())));
        for p in [
            "/v1",
            "/v1/",
            "/v1/x",
            "/v1/tasks/a/b",
            "/v1//tasks",
            "/v1/tasks/%ZZ",
        ] {
            assert_eq!(parse(p), None, "{p}");
        }
        assert!(is_tasks("/v1/x") && !is_tasks("/v10/x") && !is_tasks("/subscriptions"));
    }
}
