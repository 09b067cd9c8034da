//! The shape of asynchronous answers on the ARM surface: which status, body and headers
//! (`Azure-AsyncOperation`, `Location`, `Retry-After`) each kind of request gets ([`plan`]),
//! and the operation URLs themselves. Variants pick other legal shapes; fault knobs act last,
//! so a fault still breaks its rule whatever variants are on.

use axum::http::{HeaderName, StatusCode, header};

use crate::NAMESPACE;
use crate::context::{Req, encode_segment};
use crate::faults::Fault;
use crate::path::{OpEndpoint, OpShape};
use crate::reply::{self, Reply};
use crate::settings::Settings;
use crate::store::Operation;
use crate::variants::Variant;

/// The request an asynchronous answer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    PutCreate,
    PutReplace,
    Patch,
    Delete,
    Action,
}

/// How an asynchronous answer looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub status: StatusCode,
    /// The answer carries the resource body.
    pub body: bool,
    pub aao: bool,
    pub location: bool,
}

/// The answer shape for `answer` under the variants and faults in force.
pub fn plan(settings: &Settings, answer: Answer) -> Plan {
    let v = |x: Variant| settings.is(x);
    let f = |x: Fault| settings.has(x);
    let ok = |status| Plan {
        status,
        body: true,
        aao: true,
        location: true,
    };
    let accepted = Plan {
        status: StatusCode::ACCEPTED,
        body: false,
        aao: true,
        location: true,
    };
    let put = |mut p: Plan| {
        if v(Variant::AaoOnlyPut) {
            p.location = false;
        }
        if v(Variant::PutProvisioningStateOnly) {
            p.aao = false;
            p.location = false;
        }
        p
    };
    match answer {
        Answer::PutCreate if v(Variant::Put202Location) => Plan {
            aao: false,
            ..accepted
        },
        Answer::PutCreate => put(ok(StatusCode::CREATED)),
        Answer::PutReplace if f(Fault::ReplaceAnswers201) => put(ok(StatusCode::CREATED)),
        Answer::PutReplace => put(ok(StatusCode::OK)),
        Answer::Patch if f(Fault::Patch202NoLocation) => Plan {
            location: false,
            ..accepted
        },
        Answer::Patch if v(Variant::Patch202) => accepted,
        Answer::Patch => ok(StatusCode::OK),
        Answer::Delete => Plan {
            aao: !v(Variant::DeleteLocationOnly),
            location: !f(Fault::DeleteNoLocation),
            ..accepted
        },
        Answer::Action => accepted,
    }
}

impl Reply {
    /// Adds the operation headers `plan` asks for, and `Retry-After` when it names a URL.
    pub fn async_headers(self, req: &Req, op: &Operation, plan: Plan) -> Self {
        let mut r = self;
        if plan.aao {
            r = r.header(
                HeaderName::from_static("azure-asyncoperation"),
                &aao_url(req, op),
            );
        }
        if plan.location {
            r = r.header(header::LOCATION, &location_url(req, op, 0));
        }
        if plan.aao || plan.location {
            r = r.retry_after(req.settings);
        }
        r
    }

    /// Adds `Retry-After` as the settings want it for an answer with this reply's status.
    pub fn retry_after(self, settings: &Settings) -> Self {
        match retry_after_value(settings, self.status) {
            Some(v) => self.header(header::RETRY_AFTER, &v),
            None => self,
        }
    }
}

/// `Retry-After` on an asynchronous answer with `status`: the fault forms win, then
/// `no-retry-after` (none), `short-retry-after-on-2xx` (2 on 200/201), else the setting.
fn retry_after_value(settings: &Settings, status: StatusCode) -> Option<String> {
    if settings.has(Fault::RetryAfterDate) || settings.has(Fault::RetryAfterOutOfRange) {
        return Some(reply::retry_after(settings));
    }
    if settings.is(Variant::NoRetryAfter) {
        return None;
    }
    if settings.is(Variant::ShortRetryAfterOn2xx) && status != StatusCode::ACCEPTED {
        return Some("2".to_string());
    }
    Some(reply::retry_after(settings))
}

/// The path word of an operation URL shape under `/locations/{l}/`.
fn word(shape: OpShape) -> &'static str {
    match shape {
        OpShape::Statuses => "operationStatuses",
        OpShape::AsyncOperations => "asyncoperations",
        OpShape::Results | OpShape::UnderRequest => "operationResults",
        OpShape::Operations => "operations",
    }
}

/// The shape the Azure-AsyncOperation URL has under the variants in force.
pub fn status_shape(settings: &Settings) -> OpShape {
    if settings.is(Variant::OperationsMonitorTrue) {
        OpShape::Operations
    } else if settings.is(Variant::AaoAsyncOperations) {
        OpShape::AsyncOperations
    } else {
        OpShape::Statuses
    }
}

/// `/subscriptions/{sub}/providers/Microsoft.Contoso/locations/{loc}/{word}`.
fn op_dir(op: &Operation, shape: OpShape) -> String {
    format!(
        "/subscriptions/{}/providers/{NAMESPACE}/locations/{}/{}",
        encode_segment(&op.sub),
        encode_segment(&op.location),
        word(shape),
    )
}

/// `{op_dir}/{id}`: the path of a subscription-level operation URL (the operation
/// resource's `id`).
pub fn op_path(op: &Operation, shape: OpShape) -> String {
    format!("{}/{}", op_dir(op, shape), op.id)
}

fn with_api_version(req: &Req, path: String) -> String {
    format!("{path}?api-version={}", encode_segment(&req.api_version))
}

/// The absolute Azure-AsyncOperation URL of `op`.
pub fn aao_url(req: &Req, op: &Operation) -> String {
    req.link(
        Fault::LinksFromHost,
        &with_api_version(req, op_path(op, status_shape(req.settings))),
    )
}

/// The Location URL of `op` (generation `n` > 0 adds `.{n}` to the id): absolute, or a bare
/// path under `relative-location`.
pub fn location_url(req: &Req, op: &Operation, generation: u64) -> String {
    let id = if generation > 0 {
        format!("{}.{generation}", op.id)
    } else {
        op.id.clone()
    };
    let s = req.settings;
    let pq = if s.is(Variant::OperationsMonitorTrue) {
        let path = format!("{}/{id}", op_dir(op, OpShape::Operations));
        format!("{}&monitor=true", with_api_version(req, path))
    } else if s.is(Variant::LocationUnderResource) {
        let origin = op.origin.trim_end_matches('/');
        with_api_version(req, format!("{origin}/operationresults/{id}"))
    } else {
        with_api_version(req, format!("{}/{id}", op_dir(op, OpShape::Results)))
    };
    if s.has(Fault::RelativeLocation) {
        pq
    } else {
        req.link(Fault::LinksFromHost, &pq)
    }
}

/// Which endpoint a read of `shape` reaches (`operations/{id}` is a Location with
/// `?monitor=true`).
pub fn endpoint(shape: OpShape, declared: OpEndpoint, monitor: bool) -> OpEndpoint {
    if shape == OpShape::Operations && monitor {
        OpEndpoint::Result
    } else {
        declared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_follow_variants_then_faults() {
        let s = Settings::default();
        let p = plan(&s, Answer::PutCreate);
        assert_eq!(
            (p.status, p.body, p.aao, p.location),
            (StatusCode::CREATED, true, true, true)
        );
        let s = Settings::default().with_variant(Variant::Put202Location);
        let p = plan(&s, Answer::PutCreate);
        assert_eq!(
            (p.status, p.aao, p.location),
            (StatusCode::ACCEPTED, false, true)
        );
        assert_eq!(plan(&s, Answer::PutReplace).status, StatusCode::OK);
        let s = Settings::default()
            .with_variant(Variant::DeleteLocationOnly)
            .with_fault(Fault::DeleteNoLocation);
        let p = plan(&s, Answer::Delete);
        assert!(!p.aao && !p.location);
        let s = Settings::default()
            .with_variant(Variant::SyncPatch)
            .with_fault(Fault::Patch202NoLocation);
        let p = plan(&s, Answer::Patch);
        assert_eq!(
            (p.status, p.aao, p.location),
            (StatusCode::ACCEPTED, true, false)
        );
    }

    #[test]
    fn retry_after_values() {
        let ok = StatusCode::OK;
        let accepted = StatusCode::ACCEPTED;
        let s = Settings::default();
        assert_eq!(retry_after_value(&s, ok).as_deref(), Some("10"));
        let s = Settings::default().with_variant(Variant::ShortRetryAfterOn2xx);
        assert_eq!(retry_after_value(&s, ok).as_deref(), Some("2"));
        assert_eq!(retry_after_value(&s, accepted).as_deref(), Some("10"));
        let s = Settings::default().with_variant(Variant::NoRetryAfter);
        assert_eq!(retry_after_value(&s, accepted), None);
        let s = s.with_fault(Fault::RetryAfterOutOfRange);
        assert_eq!(retry_after_value(&s, accepted).as_deref(), Some("5"));
    }
}
