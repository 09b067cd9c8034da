//! What ARM's answers say about a target's readiness: the provider read (registration, the
//! declared types, locations and api-versions in the manifest), the caller's permissions
//! (`Microsoft.Authorization/permissions`: actions and notActions per role, with `*`
//! wildcards), error envelopes, resource group names, and bearer-token claims. Pure functions
//! of JSON values, so each is tested on its own.

use base64::Engine;
use serde_json::Value;

/// The API version of ARM's provider read (`GET /subscriptions/{s}/providers/{ns}`).
pub const PROVIDERS_API: &str = "2021-04-01";
/// The API version of the caller's permission list.
pub const PERMISSIONS_API: &str = "2022-04-01";
/// The action that creates (and updates) a resource group.
pub const RG_WRITE: &str = "Microsoft.Resources/subscriptions/resourceGroups/write";
/// The action that deletes a resource group.
pub const RG_DELETE: &str = "Microsoft.Resources/subscriptions/resourceGroups/delete";

/// Hosts of ARM's front door in each cloud.
const ARM_HOSTS: &[&str] = &[
    "management.azure.com",
    "management.usgovcloudapi.net",
    "management.chinacloudapi.cn",
];

/// Is this ARM's front door (the public or a sovereign cloud, or a regional
/// `<region>.management.azure.com`)? Anything else — the embedded RP, an RP's own endpoint —
/// has no provider registrations or permission API to ask.
pub fn is_arm_host(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    ARM_HOSTS
        .iter()
        .any(|a| h == *a || h.ends_with(&format!(".{a}")))
}

/// `code: message` of an ARM error envelope (`{"error": {"code", "message"}}`, or the bare
/// `{"code", "message"}` some services send), cut to a readable length.
pub fn error_text(body: Option<&Value>) -> Option<String> {
    let v = body?;
    let e = v.get("error").unwrap_or(v);
    let code = e.get("code").and_then(Value::as_str);
    let message = e.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(c), Some(m)) => Some(crate::http::cut(&format!("{c}: {m}"), 400)),
        (Some(c), None) => Some(c.to_string()),
        (None, Some(m)) => Some(crate::http::cut(m, 400)),
        (None, None) => None,
    }
}

/// Why ARM would refuse this resource group name, or `None`: 1 to 90 characters, letters,
/// digits, `-`, `_`, `.`, `(` and `)` (Unicode letters and digits too), not ending in `.`.
pub fn rg_name_problem(name: &str) -> Option<String> {
    let n = name.chars().count();
    if n == 0 {
        return Some("the resource group name is empty".into());
    }
    if n > 90 {
        return Some(format!(
            "`{name}` has {n} characters; ARM allows at most 90"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '(' | ')')))
    {
        return Some(format!(
            "`{name}` holds `{c}`; ARM allows letters, digits, '-', '_', '.', '(' and ')'"
        ));
    }
    if name.ends_with('.') {
        return Some(format!("`{name}` ends in '.', which ARM refuses"));
    }
    None
}

/// The state of a provider read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registration {
    Registered,
    /// Registration asked for, not finished.
    Registering,
    /// NotRegistered, Unregistered, Unregistering (or a state ARM adds later).
    Not(String),
}

/// What the provider read says: the registration state, and what in the manifest disagrees
/// with the target file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFacts {
    pub registration: Registration,
    /// `widgets/gadgets: not in the provider's manifest`, `widgets: api-version ... not listed`.
    pub mismatches: Vec<String>,
}

/// A declared type as the manifest names it (without the namespace) and its api-version.
#[derive(Debug, Clone)]
pub struct DeclaredType {
    /// `widgets/gadgets`.
    pub path: String,
    pub api_version: String,
}

/// Lower-case without spaces: `East US` and `eastus` are one location.
fn location_key(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Read a provider (`GET /subscriptions/{s}/providers/{ns}`) against the declared types.
pub fn provider_facts(body: &Value, types: &[DeclaredType], location: &str) -> ProviderFacts {
    let state = body
        .get("registrationState")
        .and_then(Value::as_str)
        .unwrap_or("");
    let registration = if state.eq_ignore_ascii_case("Registered") {
        Registration::Registered
    } else if state.eq_ignore_ascii_case("Registering") {
        Registration::Registering
    } else if state.is_empty() {
        Registration::Not("no registrationState in the answer".into())
    } else {
        Registration::Not(state.to_string())
    };
    let listed: Vec<&Value> = body
        .get("resourceTypes")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut mismatches = Vec::new();
    // Without a list of types there is nothing to compare (a trimmed answer).
    if !listed.is_empty() {
        let want_loc = location_key(location);
        for t in types {
            let entry = listed.iter().find(|e| {
                e.get("resourceType")
                    .and_then(Value::as_str)
                    .is_some_and(|n| n.eq_ignore_ascii_case(&t.path))
            });
            let Some(entry) = entry else {
                mismatches.push(format!("{}: not in the provider's manifest", t.path));
                continue;
            };
            let strings = |key: &str| -> Vec<String> {
                entry
                    .get(key)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let versions = strings("apiVersions");
            if !versions.is_empty()
                && !t.api_version.is_empty()
                && !versions
                    .iter()
                    .any(|v| v.eq_ignore_ascii_case(&t.api_version))
            {
                let newest: Vec<&str> = versions.iter().take(3).map(String::as_str).collect();
                mismatches.push(format!(
                    "{}: api-version {} is not listed (newest listed: {})",
                    t.path,
                    t.api_version,
                    newest.join(", ")
                ));
            }
            let locations = strings("locations");
            // Global types list no location (or "global").
            if !locations.is_empty()
                && !want_loc.is_empty()
                && !locations
                    .iter()
                    .any(|l| location_key(l) == want_loc || location_key(l) == "global")
            {
                mismatches.push(format!(
                    "{}: location {location} is not among the {} it is offered in",
                    t.path,
                    locations.len()
                ));
            }
        }
    }
    ProviderFacts {
        registration,
        mismatches,
    }
}

/// Does an RBAC action pattern (`*`, `Microsoft.Resources/*`, `*/read`) match `action`?
/// Case-insensitive; `*` matches any run of characters, `/` included.
pub fn action_matches(pattern: &str, action: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let a: Vec<char> = action.to_lowercase().chars().collect();
    // Iterative glob with backtracking to the last star.
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while j < a.len() {
        if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && p[i] == a[j] {
            i += 1;
            j += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

/// Is `action` allowed by a permission list (`{"value": [{"actions", "notActions"}, ...]}`,
/// one entry per role the caller holds at the scope)? A role allows an action when one of its
/// actions matches and none of its notActions does; deny assignments are not in this list.
pub fn allows(perms: &Value, action: &str) -> bool {
    let strings = |v: &Value, key: &str| -> Vec<String> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    perms
        .get("value")
        .and_then(Value::as_array)
        .is_some_and(|roles| {
            roles.iter().any(|r| {
                strings(r, "actions")
                    .iter()
                    .any(|p| action_matches(p, action))
                    && !strings(r, "notActions")
                        .iter()
                        .any(|p| action_matches(p, action))
            })
        })
}

/// The claims of a JWT that say whether it fits (audience, expiry, who), never the token.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claims {
    pub audience: Vec<String>,
    /// Seconds since the epoch.
    pub expires: Option<i64>,
    /// The principal's object id (for `az role assignment create --assignee-object-id`).
    pub object_id: Option<String>,
    pub tenant: Option<String>,
}

/// The claims of `token` when it is a JWT (three base64url segments, JSON in the middle).
pub fn jwt_claims(token: &str) -> Option<Claims> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    let audience = match v.get("aud") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    let string = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    Some(Claims {
        audience,
        expires: v.get("exp").and_then(Value::as_i64),
        object_id: string("oid"),
        tenant: string("tid"),
    })
}

/// ARM's application id, an audience ARM accepts besides its URLs.
const ARM_APP_ID: &str = "797f4846-ba00-4fd7-ba43-dac1f8f63013";

/// Is `aud` an audience ARM accepts (`https://management.azure.com/`,
/// `https://management.core.windows.net/`, a sovereign cloud's, or ARM's application id)?
pub fn arm_audience(aud: &str) -> bool {
    if aud.eq_ignore_ascii_case(ARM_APP_ID) {
        return true;
    }
    crate::http::parse_url(aud)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| h.starts_with("management."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arm_hosts_are_the_front_doors_of_each_cloud() {
        assert!(is_arm_host("management.azure.com"));
        assert!(is_arm_host("Management.Azure.com."));
        assert!(is_arm_host("eastus.management.azure.com"));
        assert!(is_arm_host("management.usgovcloudapi.net"));
        assert!(!is_arm_host("127.0.0.1"));
        assert!(!is_arm_host("contoso.azurewebsites.net"));
        assert!(!is_arm_host("notmanagement.azure.com"));
    }

    #[test]
    fn error_text_reads_both_envelopes() {
        let v = json!({"error": {"code": "AuthorizationFailed", "message": "no"}});
        assert_eq!(
            error_text(Some(&v)).as_deref(),
            Some("AuthorizationFailed: no")
        );
        let v = json!({"code": "NotFound"});
        assert_eq!(error_text(Some(&v)).as_deref(), Some("NotFound"));
        assert_eq!(error_text(Some(&json!([1]))), None);
        assert_eq!(error_text(None), None);
    }

    #[test]
    fn resource_group_names_follow_arm_rules() {
        assert_eq!(rg_name_problem("rpconform-ci-k3j9x2"), None);
        assert_eq!(rg_name_problem("a.b_(c)"), None);
        assert!(rg_name_problem("").is_some());
        assert!(rg_name_problem("has space").unwrap().contains("` `"));
        assert!(rg_name_problem("dot.").unwrap().contains("ends in"));
        assert!(rg_name_problem(&"x".repeat(91)).unwrap().contains("91"));
        assert_eq!(rg_name_problem(&"x".repeat(90)), None);
    }

    fn types() -> Vec<DeclaredType> {
        vec![
            DeclaredType {
                path: "widgets".into(),
                api_version: "2024-05-01".into(),
            },
            DeclaredType {
                path: "widgets/gadgets".into(),
                api_version: "2024-05-01".into(),
            },
        ]
    }

    #[test]
    fn a_registered_provider_listing_every_type_has_no_mismatch() {
        let body = json!({
            "namespace": "Microsoft.Contoso",
            "registrationState": "Registered",
            "resourceTypes": [
                {"resourceType": "Widgets", "locations": ["East US", "West Europe"], "apiVersions": ["2024-05-01", "2023-01-01"]},
                {"resourceType": "widgets/gadgets", "locations": [], "apiVersions": ["2024-05-01"]},
            ]
        });
        let f = provider_facts(&body, &types(), "eastus");
        assert_eq!(f.registration, Registration::Registered);
        assert!(f.mismatches.is_empty(), "{:?}", f.mismatches);
    }

    #[test]
    fn the_manifest_disagreeing_with_the_target_is_said_per_type() {
        let body = json!({
            "registrationState": "NotRegistered",
            "resourceTypes": [
                {"resourceType": "widgets", "locations": ["West Europe"], "apiVersions": ["2025-01-01", "2024-01-01"]},
            ]
        });
        let f = provider_facts(&body, &types(), "eastus");
        assert_eq!(f.registration, Registration::Not("NotRegistered".into()));
        let all = f.mismatches.join("\n");
        assert!(
            all.contains("widgets: api-version 2024-05-01 is not listed"),
            "{all}"
        );
        assert!(all.contains("2025-01-01, 2024-01-01"), "{all}");
        assert!(all.contains("location eastus"), "{all}");
        assert!(
            all.contains("widgets/gadgets: not in the provider's manifest"),
            "{all}"
        );
        let r = provider_facts(
            &json!({"registrationState": "Registering"}),
            &types(),
            "eastus",
        );
        assert_eq!(r.registration, Registration::Registering);
        assert!(r.mismatches.is_empty());
    }

    #[test]
    fn action_patterns_are_case_insensitive_globs() {
        assert!(action_matches("*", RG_WRITE));
        assert!(action_matches("Microsoft.Resources/*", RG_WRITE));
        assert!(action_matches(
            "microsoft.resources/subscriptions/resourcegroups/*",
            RG_DELETE
        ));
        assert!(action_matches("*/write", RG_WRITE));
        assert!(action_matches("Microsoft.*/resourceGroups/write", RG_WRITE));
        assert!(!action_matches("*/read", RG_WRITE));
        assert!(!action_matches(
            "Microsoft.Resources/subscriptions/resourceGroups/read",
            RG_WRITE
        ));
        assert!(!action_matches("Microsoft.Contoso/*", RG_WRITE));
        assert!(action_matches("a*b*c", "a--b--c"));
        assert!(!action_matches("a*b*c", "a--b--d"));
    }

    #[test]
    fn permissions_allow_per_role_with_not_actions_subtracting() {
        let contributor = json!({"value": [{
            "actions": ["*"],
            "notActions": ["Microsoft.Authorization/*/Delete", "Microsoft.Authorization/*/Write"],
        }]});
        assert!(allows(&contributor, RG_WRITE));
        assert!(allows(&contributor, "Microsoft.Contoso/widgets/delete"));
        assert!(!allows(
            &contributor,
            "Microsoft.Authorization/roleAssignments/write"
        ));
        let reader = json!({"value": [{"actions": ["*/read"], "notActions": []}]});
        assert!(!allows(&reader, RG_WRITE));
        // A notAction of one role does not take away what another role grants.
        let two = json!({"value": [
            {"actions": ["*"], "notActions": ["Microsoft.Resources/*"]},
            {"actions": ["Microsoft.Resources/subscriptions/resourceGroups/*"], "notActions": []},
        ]});
        assert!(allows(&two, RG_DELETE));
        assert!(!allows(&json!({"value": []}), RG_WRITE));
        assert!(!allows(&json!({}), RG_WRITE));
    }

    #[test]
    fn jwt_claims_are_read_without_the_signature() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
            json!({"aud": "https://management.core.windows.net/", "exp": 1_900_000_000, "oid": "o-1", "tid": "t-1"})
                .to_string(),
        );
        let c = jwt_claims(&format!("eyJhbGciOiJSUzI1NiJ9.{payload}.c2ln")).unwrap();
        assert_eq!(c.audience, vec!["https://management.core.windows.net/"]);
        assert_eq!(c.expires, Some(1_900_000_000));
        assert_eq!(c.object_id.as_deref(), Some("o-1"));
        assert!(arm_audience(&c.audience[0]));
        assert!(arm_audience("https://management.azure.com"));
        assert!(arm_audience(ARM_APP_ID));
        assert!(!arm_audience("https://graph.microsoft.com"));
        assert!(!arm_audience("api://my-rp"));
        assert_eq!(jwt_claims("opaque-token-value"), None);
        assert_eq!(jwt_claims("a.b.c.d"), None);
        assert_eq!(jwt_claims("a.!!!.c"), None);
    }
}
