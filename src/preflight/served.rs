//! Does the endpoint serve the declared types at all? A wrong `base_url`, api-version or
//! registration answers every request of a namespace alike (404 `InvalidResourceType`, 400
//! `NoRegisteredProviderFound`, 401/403, a sign-in page or a redirect); a run against it would
//! report dozens of MUST rules broken that the RP never had a chance to break. One `GET` of each
//! top-level type's collection (no fixed names; in the run's resource group once it exists,
//! else at subscription scope for a tracked type, which RES-07 says lists there) tells: a
//! collection whose scope exists answers 200, even empty (RES-05).

use std::time::Duration;

use super::{Check, Level};
use crate::http::{Exchange, Http, OutRequest, Role, Surface};
use crate::target::{Scope, Target};

const NAME: &str = "types served";

/// Error codes with which ARM (or an RP) says the namespace, type or api-version is not
/// served at all.
const NOT_SERVED_CODES: &[&str] = &[
    "InvalidResourceType",
    "NoRegisteredProviderFound",
    "InvalidResourceNamespace",
    "InvalidApiVersionParameter",
    "MissingSubscriptionRegistration",
    "InvalidApiVersionForResourceType",
];

/// One read: which type, where, and whether its scope is known to exist.
struct Read {
    ty: String,
    arm_type: String,
    url: String,
    /// In the run's group, which exists: any 404 means the type is not served there.
    scope_exists: bool,
}

fn reads(target: &Target, group_exists: bool) -> Vec<Read> {
    target
        .types
        .iter()
        .filter(|t| t.parent.is_none() && t.names.is_none())
        .filter_map(|t| {
            let (url, scope_exists) = match t.scope {
                Scope::ResourceGroup if group_exists => {
                    (target.collection_url(t, None).ok()?, true)
                }
                Scope::ResourceGroup if t.kind == crate::target::Kind::Tracked => (
                    format!(
                        "{}/subscriptions/{}/providers/{}/{}",
                        target.base(),
                        target.subscription,
                        t.namespace,
                        t.segment
                    ),
                    false,
                ),
                Scope::Subscription => (target.collection_url(t, None).ok()?, true),
                _ => return None,
            };
            Some(Read {
                ty: t.name.clone(),
                arm_type: t.arm_type(target),
                url: format!("{url}?api-version={}", t.api_version),
                scope_exists,
            })
        })
        .collect()
}

/// How an answer says the type is not served: `Some((strong, what))`, strong when nothing but
/// a wrong endpoint, api-version or registration answers so.
fn not_served(ex: &Exchange, scope_exists: bool) -> Option<(bool, String)> {
    let r = ex.response.as_ref()?;
    let code = r
        .json
        .as_ref()
        .and_then(|j| j.pointer("/error/code"))
        .and_then(|c| c.as_str())
        .map(str::to_string);
    let ctype = r.header("content-type").unwrap_or("").to_ascii_lowercase();
    let html = ctype.contains("html") || r.body.trim_start().starts_with('<');
    let named = |what: &str| match &code {
        Some(c) => format!("{} {c}", r.status),
        None if html => format!("{} with an HTML page", r.status),
        None => format!("{} {what}", r.status),
    };
    match r.status {
        300..=399 => Some((
            true,
            format!(
                "{} (a redirect{})",
                r.status,
                r.header("location")
                    .map(|l| format!(" to {}", crate::http::cut(l, 120)))
                    .unwrap_or_default()
            ),
        )),
        401 | 403 => Some((true, named("without an ARM error body"))),
        404 | 400
            if code
                .as_deref()
                .is_some_and(|c| NOT_SERVED_CODES.iter().any(|k| k.eq_ignore_ascii_case(c))) =>
        {
            Some((true, named("")))
        }
        404 => Some((scope_exists || html, named("without an ARM error body"))),
        200..=299 if html || (r.json.is_none() && !r.body.trim().is_empty()) => Some((
            true,
            format!("{} with a page that is not JSON ({ctype})", r.status),
        )),
        _ => None,
    }
}

/// Read each type's collection and say whether the endpoint serves them. `group_exists`: the
/// run's resource group is there to list in.
pub async fn check(target: &Target, http: &Http, group_exists: bool, limit: Duration) -> Check {
    let reads = reads(target, group_exists);
    if reads.is_empty() {
        return Check::new(
            NAME,
            Level::Skipped,
            "no top-level type to list (fixed names, or scopes without a collection to read)",
        );
    }
    let mut findings: Vec<(bool, String)> = Vec::new();
    for r in &reads {
        let req = OutRequest {
            surface: Surface::Arm,
            method: "GET".into(),
            url: r.url.clone(),
            headers: vec![("Accept".into(), "application/json".into())],
            body: None,
        };
        let Ok(ex) = tokio::time::timeout(limit, http.send(req, Role::Setup)).await else {
            continue;
        };
        if let Some((strong, what)) = not_served(&ex, r.scope_exists) {
            findings.push((
                strong,
                format!("`{}` ({}): GET {} answers {what}", r.ty, r.arm_type, ex.url),
            ));
        }
    }
    verdict(target, &reads, findings)
}

fn verdict(target: &Target, reads: &[Read], findings: Vec<(bool, String)>) -> Check {
    if findings.is_empty() {
        return Check::new(
            NAME,
            Level::Ok,
            format!("{} type(s) answer their collection read", reads.len()),
        );
    }
    // Every type answering as if not served is no RP's choice, whatever the answers say.
    let every = findings.len() == reads.len();
    let strong = every || findings.iter().any(|(s, _)| *s);
    let mut namespaces: Vec<&str> = target
        .types
        .iter()
        .filter(|t| reads.iter().any(|r| r.ty == t.name))
        .map(|t| t.namespace.as_str())
        .collect();
    namespaces.dedup();
    let head = if every {
        format!(
            "{} answers no collection read of its types",
            namespaces.join(", ")
        )
    } else {
        format!(
            "{} of {} type(s) answer as if not served",
            findings.len(),
            reads.len()
        )
    };
    let detail = std::iter::once(head)
        .chain(findings.iter().map(|(_, f)| f.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    let level = if strong {
        Level::Blocker
    } else {
        Level::Warning
    };
    let at_subscription = reads.iter().any(|r| !r.scope_exists);
    Check::new(NAME, level, detail).hint(format!(
        "check base_url (and its path prefix), the api-version of each type, and that the namespace is registered and served there; a run would judge the RP on answers it never gave{}",
        if at_subscription {
            " (read at subscription scope, where RES-07 says a tracked type lists: an RP that does not list there answers so too)"
        } else {
            ""
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(status: u16, ctype: &str, body: &str) -> Exchange {
        let mut e = crate::rules::testing::exchange(
            "GET",
            "http://h/x",
            status,
            &[("content-type", ctype)],
            serde_json::Value::Null,
        );
        if let Some(r) = e.response.as_mut() {
            r.body = body.into();
            r.body_bytes = body.len();
            r.json = serde_json::from_str(body).ok();
        }
        e
    }

    #[test]
    fn answers_of_a_wrong_endpoint_are_told_apart_from_a_served_type() {
        let j = "application/json";
        for (status, ctype, body) in [
            (
                404,
                j,
                r#"{"error":{"code":"InvalidResourceType","message":"m"}}"#,
            ),
            (
                400,
                j,
                r#"{"error":{"code":"NoRegisteredProviderFound","message":"m"}}"#,
            ),
            (
                400,
                j,
                r#"{"error":{"code":"InvalidApiVersionParameter","message":"m"}}"#,
            ),
            (401, j, ""),
            (
                403,
                j,
                r#"{"error":{"code":"AuthorizationFailed","message":"m"}}"#,
            ),
            (302, "text/html", ""),
            (200, "text/html", "<html>sign in</html>"),
            (404, "text/html", "<html>not found</html>"),
        ] {
            let (strong, what) = not_served(&ex(status, ctype, body), false)
                .unwrap_or_else(|| panic!("{status} {body} read as served"));
            assert!(strong, "{status} {body}: {what}");
        }
        // A 404 where the scope exists is a type not served; at subscription scope only a hint.
        let plain = ex(404, j, r#"{"error":{"code":"NotFound","message":"m"}}"#);
        assert_eq!(not_served(&plain, true).map(|x| x.0), Some(true));
        assert_eq!(not_served(&plain, false).map(|x| x.0), Some(false));
        // Served: a list, empty or not; a conforming refusal of something else is not this.
        for (status, body) in [
            (200, r#"{"value":[]}"#),
            (200, r#"{"value":[{"id":"x"}]}"#),
            (409, r#"{"error":{"code":"Conflict","message":"m"}}"#),
        ] {
            assert!(
                not_served(&ex(status, j, body), true).is_none(),
                "{status} {body}"
            );
        }
    }
}
