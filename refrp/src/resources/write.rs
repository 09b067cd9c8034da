//! [`write`]: stores the new state of a resource after a PUT or PATCH passed its checks, then
//! either starts its asynchronous operation and answers as [`lro::plan`] says, or (synchronous
//! types, `sync-patch`) answers at once.

use axum::http::StatusCode;
use serde_json::Value;

use super::checks::{op_location, started};
use crate::context::Req;
use crate::errors::{ApiError, Detail};
use crate::faults::Fault;
use crate::lro::{self, Answer};
use crate::path::{Kind, ResRef, SINGLETON_NAME};
use crate::render;
use crate::reply::Reply;
use crate::store::{OpError, OpKind, OpSpec, Resource, State, Store};
use crate::validate::{self, PutBody};
use crate::variants::Variant;

/// What [`write`] is asked to store.
pub struct Write {
    pub key: String,
    pub body: PutBody,
    /// The resource before the write (`None`: a create).
    pub existing: Option<Resource>,
    /// Problems of a body accepted anyway (`invalid-body-accepted`).
    pub invalid: Option<Vec<Detail>>,
    /// The method: [`Answer::PutReplace`] for PUT, [`Answer::Patch`] for PATCH.
    pub method: Answer,
}

/// Whether this write completes synchronously.
fn synchronous(req: &Req, kind: Kind, method: Answer) -> bool {
    !kind.asynchronous()
        || (method == Answer::Patch
            && req.is(Variant::SyncPatch)
            && !req.has(Fault::Patch202NoLocation))
}

/// Stores the new resource state; starts its operation (async) or answers at once (sync).
pub fn write(req: &Req, store: &mut Store, r: &ResRef, w: Write) -> Result<Reply, ApiError> {
    let kind = r.kind();
    let creating = w.existing.is_none();
    let sync = synchronous(req, kind, w.method);
    let fail_with = failure(r, &w);
    if sync && w.invalid.is_none() && fail_with.is_some() {
        // A synchronous write that fails answers the error and changes nothing.
        let e = fail_with.unwrap_or_else(|| OpError::new("ProvisioningFailed", ""));
        return Err(ApiError::bad_request(&e.code, e.message));
    }
    let res = resource(req, store, r, &w);
    store.resources.insert(w.key.clone(), res.clone());
    if creating && kind == Kind::Widget {
        materialize_configuration(req, store, r, &w.key);
    }
    if sync {
        if w.invalid.is_some()
            && let Some(stored) = store.resources.get_mut(&w.key)
        {
            // Only under `invalid-body-accepted`: the invalid body is stored, and fails.
            stored.settled = State::Failed;
        }
        let status = if creating {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        let state = store.shown_state(&w.key);
        let body = render::resource(
            store.resources.get(&w.key).unwrap_or(&res),
            Some(state),
            req.settings,
        );
        return Ok(Reply::json(status, body).etag(&res.etag));
    }
    let answer = if creating {
        Answer::PutCreate
    } else {
        w.method
    };
    let plan = lro::plan(req.settings, answer);
    let op_kind = match (creating, w.method) {
        (true, _) => OpKind::Create,
        (false, Answer::Patch) => OpKind::Patch,
        _ => OpKind::Replace,
    };
    let op_id = store.start(
        OpSpec {
            kind: op_kind,
            target: w.key.clone(),
            target_name: res.name.clone(),
            target_kind: kind,
            target_id: res.id.clone(),
            origin: req.path.to_string(),
            sub: r.sub().unwrap_or_default().to_string(),
            location: res.op_location.clone(),
            fail_with,
            tenant: req.tenant(),
            client: req.client(),
            resource_reads: !plan.aao && !plan.location,
            hidden: creating && plan.status == StatusCode::ACCEPTED,
        },
        req.now,
    );
    let op = started(store, &op_id)?;
    let reply = if plan.body {
        let state = if w.method == Answer::PutReplace && req.has(Fault::TerminalStateInPutResponse)
        {
            State::Succeeded
        } else {
            store.shown_state(&w.key)
        };
        // Under `fast-operations` the stored resource may have settled already.
        let current = store.resources.get(&w.key).unwrap_or(&res);
        Reply::json(
            plan.status,
            render::resource(current, Some(state), req.settings),
        )
        .etag(&res.etag)
    } else {
        Reply::empty(plan.status)
    };
    Ok(reply.async_headers(req, op, plan))
}

/// The error the operation will end with: the invalid body's problems, or
/// `properties.simulateFailure`.
fn failure(r: &ResRef, w: &Write) -> Option<OpError> {
    if let Some(details) = &w.invalid {
        let what = details
            .iter()
            .map(|d| d.message.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        return Some(OpError::new(
            "InvalidRequestContent",
            format!("The request content is invalid: {what}"),
        ));
    }
    (w.body.properties.get("simulateFailure") == Some(&Value::Bool(true))).then(|| {
        OpError::new(
            "ProvisioningFailed",
            format!(
                "Provisioning of '{}' failed because properties.simulateFailure is set.",
                r.name()
            ),
        )
    })
}

/// The resource as the write leaves it (id and name from the creating PUT, unless a fault).
fn resource(req: &Req, store: &Store, r: &ResRef, w: &Write) -> Resource {
    let kind = r.kind();
    let existing = w.existing.as_ref();
    let etag = match existing {
        Some(e) if req.has(Fault::EtagUnchangedOnUpdate) => e.etag.clone(),
        _ => req.new_etag(),
    };
    let mut system_data = existing.map(|e| e.system_data.clone()).unwrap_or_default();
    if !(kind.nested() && req.has(Fault::NestedSystemDataDropped))
        && let Some(sd) = req.system_data()
    {
        // ARM sends both halves on every write; `created*` are the creating write's (the
        // RPC's FAQ: "save the values from the first PUT").
        let keep_created = existing.is_some() && !req.has(Fault::SystemDataCreatedOverwritten);
        system_data.extend(
            sd.into_iter()
                .filter(|(k, _)| !(keep_created && k.starts_with("created"))),
        );
        if req.has(Fault::SystemDataOwnValues) {
            let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            for half in ["created", "lastModified"] {
                system_data.insert(format!("{half}By"), serde_json::json!("refrp"));
                system_data.insert(format!("{half}ByType"), serde_json::json!("Application"));
                system_data.insert(format!("{half}At"), serde_json::json!(now));
            }
        }
    }
    if req.has(Fault::SystemDataFromBody)
        && let Ok(Value::Object(body)) = serde_json::from_slice::<Value>(&req.body)
        && let Some(Value::Object(sd)) = body.get("systemData")
    {
        system_data.extend(sd.clone());
    }
    let recased = req.has(Fault::IdRecased);
    let id = match existing {
        Some(e) if !recased => e.id.clone(),
        _ => new_id(req, r),
    };
    let name = match existing {
        Some(e) if !recased => e.name.clone(),
        _ => r.name().to_string(),
    };
    let location = if kind.tracked() {
        w.body.location.clone()
    } else {
        None
    };
    Resource {
        id,
        name,
        type_name: type_name(req, r),
        kind,
        op_location: op_location(store, r, location.as_deref(), req.fold()),
        location,
        tags: if kind.tracked() && !req.has(Fault::TagsDropped) {
            w.body.tags.clone()
        } else {
            None
        },
        properties: w.body.properties.clone(),
        settled: existing.map_or(State::Succeeded, |e| e.settled),
        etag,
        system_data,
        restart_count: existing.map_or(0, |e| e.restart_count),
    }
}

/// The id a created resource answers (without the subscription under a fault).
fn new_id(req: &Req, r: &ResRef) -> String {
    let id = r.id();
    if r.kind() == Kind::SubscriptionWidget && req.has(Fault::SubscriptionLevelWrongId) {
        let prefix = format!("/subscriptions/{}", r.sub().unwrap_or_default());
        return id.strip_prefix(&prefix).map_or(id.clone(), str::to_string);
    }
    id
}

fn type_name(req: &Req, r: &ResRef) -> String {
    if r.kind() == Kind::Annotation && req.has(Fault::ExtensionWrongType) {
        "Microsoft.Contoso/widgets/annotations".to_string()
    } else {
        r.type_name()
    }
}

/// A new widget has its singleton configuration, with default settings.
fn materialize_configuration(req: &Req, store: &mut Store, widget: &ResRef, key: &str) {
    let mut chain = widget.chain.clone();
    chain.push((Kind::Configuration, SINGLETON_NAME.to_string()));
    let r = ResRef {
        scope: widget.scope.clone(),
        chain,
    };
    let config = Resource {
        id: r.id(),
        name: SINGLETON_NAME.to_string(),
        type_name: r.type_name(),
        kind: Kind::Configuration,
        location: None,
        tags: None,
        properties: validate::configuration_defaults(),
        settled: State::Succeeded,
        etag: req.new_etag(),
        system_data: Default::default(),
        restart_count: 0,
        op_location: "global".to_string(),
    };
    store
        .resources
        .insert(format!("{key}/configurations/{SINGLETON_NAME}"), config);
}
