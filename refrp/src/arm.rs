//! The single entry point of the RP: one fallback handler that reads the body and hands
//! `/dataplane` and `/v1` requests to their surfaces; an ARM request has its path parsed into
//! a [`Route`], its method and `api-version` checked, its handler run under the store lock,
//! and the ARM tracing headers added to the response.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::context::{Req, base_url, parse_query};
use crate::errors::ApiError;
use crate::faults::Fault;
use crate::path::{self, Kind, Route};
use crate::reply::Reply;
use crate::settings::Settings;
use crate::store::Store;
use crate::variants::Variant;
use crate::{
    API_VERSIONS, DEFAULT_API_VERSION, FABRIKAM_API_VERSION, FABRIKAM_NAMESPACE, dataplane, groups,
    ids, lro, operations, resources, tasks,
};

/// Largest request body accepted.
const MAX_BODY: usize = 1 << 20;

/// Resource groups also accept the Microsoft.Resources api-version clients commonly use.
const GROUP_API_VERSION: &str = "2021-04-01";

/// Shared state of one RP instance: the ARM store and those of the other two surfaces.
pub struct App {
    pub settings: Settings,
    pub store: Mutex<Store>,
    pub dataplane: Mutex<dataplane::Store>,
    pub tasks: Mutex<tasks::Store>,
    /// Operation ids already sent as a request id (the `operation-id-is-request-id` fault
    /// uses each once: its answers' request ids stay unique, HDR-01 holds).
    pub ids_as_request_ids: Mutex<std::collections::HashSet<String>>,
}

impl App {
    pub fn new(settings: Settings) -> Self {
        let store = Mutex::new(Store::new(&settings));
        let dataplane = Mutex::new(dataplane::Store::new(
            settings.op_duration,
            settings.complete_after_reads,
        ));
        let tasks = Mutex::new(tasks::Store::new(&settings));
        App {
            ids_as_request_ids: Default::default(),
            settings,
            store,
            dataplane,
            tasks,
        }
    }
}

/// The axum fallback handler: every request comes through here. Paths under `/dataplane`
/// and `/v1` go to their own surfaces; everything else is the ARM surface.
pub async fn handle(State(app): State<Arc<App>>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, MAX_BODY).await.ok();
    let path = parts.uri.path();
    if dataplane::is_dataplane(path) {
        return dataplane::handle(&app.dataplane, &app.settings, &parts, body);
    }
    if tasks::is_tasks(path) {
        return tasks::handle(&app.tasks, &app.settings, &parts, body);
    }
    // The fault: a SKU list the RP takes longer than ARM waits for (60 s) to answer.
    if app.settings.has(Fault::SlowSkus)
        && parts.method == Method::GET
        && path
            .trim_end_matches('/')
            .to_ascii_lowercase()
            .ends_with("/skus")
    {
        tokio::time::sleep(std::time::Duration::from_secs(61)).await;
    }
    let (reply, location_based) = match body {
        Some(bytes) => dispatch(&app, &parts, bytes),
        None => (
            Reply::error(
                &app.settings,
                &ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "RequestBodyTooLarge",
                    format!("The request body could not be read or exceeds {MAX_BODY} bytes."),
                ),
            ),
            false,
        ),
    };
    let write = parts.method != Method::GET;
    let mut reply = reply;
    if app.settings.has(Fault::AcceptedWithBody)
        && reply.status == StatusCode::ACCEPTED
        && reply.body.is_none()
    {
        reply.body = Some(serde_json::json!({"status": "Accepted"}));
    }
    finish(&app, &parts.headers, reply, location_based, write)
}

fn dispatch(app: &App, parts: &Parts, body: Bytes) -> (Reply, bool) {
    let settings = &app.settings;
    let fail = |e: ApiError| Reply::error(settings, &e);
    let raw_path = parts.uri.path();
    let Some(route) = path::parse(raw_path, settings.has(Fault::NestedCaseSensitive)) else {
        let e = ApiError::not_found("NotFound", "No route matches the request path.");
        return (fail(e), false);
    };
    let location_based = route.location_based();
    (
        handle_route(app, parts, body, route).unwrap_or_else(fail),
        location_based,
    )
}

fn handle_route(app: &App, parts: &Parts, body: Bytes, route: Route) -> Result<Reply, ApiError> {
    let settings = &app.settings;
    // HEAD is answered like GET; hyper drops the body.
    let method = if parts.method == Method::HEAD {
        Method::GET
    } else {
        parts.method.clone()
    };
    if !method_allowed(&route, &method) {
        return Err(ApiError::method_not_allowed(route.allowed()));
    }
    let query = parse_query(parts.uri.query());
    let api_version = api_version(&route, &query, settings)?;
    let raw_path = parts.uri.path();
    let mut store = app.store.lock().unwrap_or_else(PoisonError::into_inner);
    // Take the time under the lock so that operations start and end in request order.
    let now = Instant::now();
    store.advance(now);
    let req = Req {
        headers: &parts.headers,
        path: raw_path,
        params: query,
        api_version,
        body,
        base: base_url(&parts.headers, &parts.uri),
        host: crate::context::host_base(&parts.headers, &parts.uri),
        settings,
        now,
    };
    let store = &mut *store;
    if matches!(
        method,
        Method::PUT | Method::PATCH | Method::POST | Method::DELETE
    ) {
        let sub = match &route {
            Route::Resource(r) | Route::Restart(r) => r.sub(),
            Route::Move(g) => Some(g.sub.as_str()),
            _ => None,
        };
        crate::subscriptions::writable(&req, store, sub, method == Method::DELETE)?;
    }
    match (&route, method) {
        (Route::Group(g), Method::GET) => groups::get(store, g),
        (Route::Group(g), Method::PUT) => groups::put(&req, store, g),
        (Route::Group(g), Method::DELETE) => Ok(groups::delete(store, g)),
        (Route::Resource(r), Method::GET) => resources::get(&req, store, r),
        (Route::Resource(r), Method::PUT) => resources::put(&req, store, r),
        (Route::Resource(r), Method::PATCH) => resources::patch(&req, store, r),
        (Route::Resource(r), Method::DELETE) => resources::delete(&req, store, r),
        (Route::Collection(c), _) => resources::list(&req, store, c),
        (Route::Across { sub, kind }, _) => resources::list_across(&req, store, sub, *kind),
        (Route::ProviderOperations(ns), _) => Ok(crate::render::provider_operations(ns, settings)),
        (Route::Subscription(sub), _) => crate::subscriptions::notify(&req, store, sub),
        (Route::Move(g), _) => crate::moves::move_resources(&req, store, g),
        (Route::Skus(r), _) => resources::skus(&req, store, r),
        (Route::Restart(r), _) => resources::restart(&req, store, r),
        (Route::Operation(o), _) => {
            let monitor = req
                .query("monitor")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"));
            let endpoint = lro::endpoint(o.shape, o.endpoint, monitor);
            operations::read(&req, store, o, endpoint)
        }
        _ => Err(ApiError::method_not_allowed(route.allowed())),
    }
}

fn method_allowed(route: &Route, method: &Method) -> bool {
    match route {
        Route::Group(_) => [Method::GET, Method::PUT, Method::DELETE].contains(method),
        Route::Resource(r) => {
            let mut allowed = vec![Method::GET, Method::PUT, Method::PATCH];
            if r.kind() != Kind::Configuration {
                allowed.push(Method::DELETE);
            }
            allowed.contains(method)
        }
        Route::Restart(_) => method == Method::POST,
        Route::Collection(_)
        | Route::Skus(_)
        | Route::Operation(_)
        | Route::Across { .. }
        | Route::ProviderOperations(_) => method == Method::GET,
        Route::Subscription(_) => method == Method::PUT,
        Route::Move(_) => method == Method::POST,
    }
}

/// The checked `api-version`: 400 `MissingApiVersionParameter` / `InvalidApiVersionParameter`.
/// Each namespace has its own versions; resource groups also take the Resources one.
fn api_version(
    route: &Route,
    query: &[(String, String)],
    settings: &Settings,
) -> Result<String, ApiError> {
    let given = query
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("api-version"))
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty());
    let Some(given) = given else {
        if settings.has(Fault::MissingApiVersionAccepted) {
            let default = match route.namespace() {
                Some(FABRIKAM_NAMESPACE) => FABRIKAM_API_VERSION,
                _ => DEFAULT_API_VERSION,
            };
            return Ok(default.to_string());
        }
        return Err(ApiError::bad_request(
            "MissingApiVersionParameter",
            "The api-version query parameter (?api-version=) is required for all requests.",
        ));
    };
    let supported: Vec<&str> = match route.namespace() {
        None if matches!(route, Route::Subscription(_)) => {
            vec![crate::subscriptions::LIFECYCLE_API_VERSION]
        }
        None => API_VERSIONS
            .iter()
            .copied()
            .chain([GROUP_API_VERSION])
            .collect(),
        Some(FABRIKAM_NAMESPACE) if settings.has(Fault::NamespaceApiVersionMixup) => {
            [FABRIKAM_API_VERSION]
                .into_iter()
                .chain(API_VERSIONS.iter().copied())
                .collect()
        }
        Some(FABRIKAM_NAMESPACE) => vec![FABRIKAM_API_VERSION],
        Some(_) => API_VERSIONS.to_vec(),
    };
    supported
        .iter()
        .find(|v| v.eq_ignore_ascii_case(given))
        .map(|v| v.to_string())
        .ok_or_else(|| {
            let shown: String = given.chars().take(64).collect();
            let listed = match route.namespace() {
                Some(FABRIKAM_NAMESPACE) => FABRIKAM_API_VERSION.to_string(),
                _ => API_VERSIONS.join(","),
            };
            ApiError::bad_request(
                "InvalidApiVersionParameter",
                format!(
                    "The api-version '{shown}' is invalid. The supported versions are '{listed}'."
                ),
            )
        })
}

/// The operation id of an `operationResults`/`operationStatuses` URL (its last segment).
fn operation_id_of(url: &str) -> Option<String> {
    let path = url.split('?').next()?.trim_end_matches('/');
    let mut segs = path.rsplit('/');
    let id = segs.next()?;
    let kind = segs.next()?.to_ascii_lowercase();
    matches!(kind.as_str(), "operationresults" | "operationstatuses").then(|| id.to_string())
}

/// Turns a [`Reply`] into a response with the request-id and echoed correlation headers.
/// `location_based`: the route is one of the location-based type (a fault knob acts there);
/// `write`: the request was not a GET (a knob acts on the answer that hands an operation out).
fn finish(
    app: &App,
    request_headers: &HeaderMap,
    reply: Reply,
    location_based: bool,
    write: bool,
) -> Response {
    let settings = &app.settings;
    let mut response = reply.into_response();
    let client_error = response.status().is_client_error();
    let headers = response.headers_mut();
    let mut request_id = if settings.is(Variant::RequestIdFormat) {
        ids::suffixed_request_id()
    } else {
        ids::uuid()
    };
    // The fault: the operation id handed out doubles as the answer's request id.
    if settings.has(Fault::OperationIdIsRequestId)
        && write
        && let Some(op) = ["azure-asyncoperation", "location"]
            .iter()
            .filter_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
            .find_map(operation_id_of)
        && app
            .ids_as_request_ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(op.clone())
    {
        request_id = op;
    }
    if settings.has(Fault::EndpointInHeader)
        && let Ok(v) = HeaderValue::from_str(&crate::context::host_base(
            request_headers,
            &Default::default(),
        ))
    {
        headers.insert(HeaderName::from_static("x-ms-served-by"), v);
    }
    // Who is at fault, on every refused request (the 2023 RPC's x-ms-failurecause: `client`,
    // with a category); the fault spells it as no client can read it.
    if client_error {
        headers.insert(
            HeaderName::from_static("x-ms-failurecause"),
            HeaderValue::from_static(if settings.has(Fault::FailureCauseMalformed) {
                "user"
            } else {
                "client:RequestValidation"
            }),
        );
    }
    let no_request_id = settings.has(Fault::NoRequestId)
        || (location_based && settings.has(Fault::LocationTypeNoRequestId));
    if !no_request_id && let Ok(v) = HeaderValue::from_str(&request_id) {
        headers.insert(HeaderName::from_static("x-ms-request-id"), v);
    }
    if settings.has(Fault::ContentTypeText) && headers.contains_key(header::CONTENT_TYPE) {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    }
    if settings.has(Fault::DateIso8601) {
        let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
        if let Ok(v) = HeaderValue::from_str(&now) {
            headers.insert(header::DATE, v);
        }
    }
    if !settings.has(Fault::NoCorrelationEcho) {
        for name in ["x-ms-client-request-id", "x-ms-correlation-request-id"] {
            if let Some(v) = request_headers.get(name) {
                headers.insert(HeaderName::from_static(name), v.clone());
            }
        }
    }
    response
}
