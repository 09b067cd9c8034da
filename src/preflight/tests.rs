//! Tests of the preflight checks.

use super::*;
use serde_json::{Value, json};

const SUB: &str = "00000000-0000-0000-0000-000000000001";

fn target(rg: &str) -> Target {
    let yaml = format!(
        "base_url: https://management.azure.com\nauth: {{bearer_env: RP_TOKEN}}\nsubscription: {SUB}\n\
         resource_group: {rg}\nnamespace: Microsoft.Contoso\napi_version: \"2024-05-01\"\nlocation: eastus\n\
         types:\n  widgets:\n    kind: tracked\n    create_body: {{location: eastus}}\n    \
         actions: [{{name: restart, body: {{}}}}]\n  gadgets: {{parent: widgets, kind: proxy, create_body: {{}}}}\n"
    );
    crate::target::parse_target(std::path::Path::new("t.yaml"), &yaml, "t.yaml")
        .unwrap_or_else(|r| panic!("{}", r.render()))
}

fn ex(status: u16, body: Value, headers: &[(&str, &str)]) -> Option<Exchange> {
    let mut e = crate::rules::testing::exchange(
        "GET",
        "https://management.azure.com/x",
        status,
        headers,
        body,
    );
    e.role = Role::Setup;
    Some(e)
}

fn registered() -> Value {
    json!({"registrationState": "Registered", "resourceTypes": [
        {"resourceType": "widgets", "locations": ["East US"], "apiVersions": ["2024-05-01"]},
        {"resourceType": "widgets/gadgets", "locations": ["East US"], "apiVersions": ["2024-05-01"]},
    ]})
}

fn contributor() -> Value {
    json!({"value": [{"actions": ["*"], "notActions": ["Microsoft.Authorization/*/Write"]}]})
}

fn ctx<'a>(t: &'a Target, answers: &'a Answers) -> Ctx<'a> {
    Ctx {
        target: t,
        arm: true,
        host: "management.azure.com".into(),
        token_ok: true,
        endpoint_ok: true,
        answers,
    }
}

#[test]
fn arm_reads_plan_the_provider_and_the_permissions_at_the_right_scope() {
    let t = target("{name: rg1, create: true}");
    let r = Reads::plan(&t, true);
    assert_eq!(r.providers.len(), 1);
    assert!(r.providers[0].1.ends_with(&format!(
        "/subscriptions/{SUB}/providers/Microsoft.Contoso?api-version=2021-04-01"
    )));
    let p = r.permissions.unwrap();
    assert!(
        p.contains(&format!(
            "/subscriptions/{SUB}/providers/Microsoft.Authorization/permissions"
        )),
        "{p}"
    );
    let t = target("{name: rg1}");
    let p = Reads::plan(&t, true).permissions.unwrap();
    assert!(
        p.contains("/resourceGroups/rg1/providers/Microsoft.Authorization/permissions"),
        "{p}"
    );
    let r = Reads::plan(&t, false);
    assert!(r.providers.is_empty() && r.permissions.is_none());
    assert!(
        r.group
            .as_deref()
            .is_some_and(|g| g.contains("/resourceGroups/rg1?api-version="))
    );
}

#[test]
fn a_ready_subscription_passes_every_arm_check() {
    let t = target("{name: rg1-abc123, create: true}");
    let a = Answers {
        providers: vec![(
            "Microsoft.Contoso".into(),
            ex(
                200,
                registered(),
                &[("x-ms-ratelimit-remaining-subscription-reads", "11999")],
            ),
        )],
        permissions: ex(200, contributor(), &[]),
        group: ex(
            404,
            json!({"error": {"code": "ResourceGroupNotFound", "message": "no"}}),
            &[],
        ),
    };
    let c = ctx(&t, &a);
    let p = c.provider_check();
    assert_eq!(p.level, Level::Ok, "{p:?}");
    assert!(p.detail.contains("Registered"));
    let g = c.group_check(None);
    assert_eq!(g.level, Level::Ok, "{g:?}");
    assert!(g.detail.contains("will create rg1-abc123"));
    let r = c.rate_limit_check();
    assert_eq!(r.level, Level::Ok, "{r:?}");
    assert!(r.detail.contains("subscription-reads: 11999"), "{r:?}");
}

#[test]
fn an_unregistered_namespace_and_missing_roles_are_blockers_with_the_fix() {
    let t = target("{name: rg1-abc123, create: true}");
    let reader = json!({"value": [{"actions": ["*/read"], "notActions": []}]});
    let a = Answers {
        providers: vec![(
            "Microsoft.Contoso".into(),
            ex(200, json!({"registrationState": "NotRegistered"}), &[]),
        )],
        permissions: ex(
            200,
            reader,
            &[("x-ms-ratelimit-remaining-subscription-reads", "12")],
        ),
        group: ex(404, json!({}), &[]),
    };
    let c = ctx(&t, &a);
    let p = c.provider_check();
    assert_eq!(p.level, Level::Blocker);
    assert!(
        p.hint
            .unwrap()
            .contains("az provider register --namespace Microsoft.Contoso")
    );
    let claims = arm::Claims {
        object_id: Some("oid-1".into()),
        ..Default::default()
    };
    let g = c.group_check(Some(&claims));
    assert_eq!(g.level, Level::Blocker, "{g:?}");
    for action in [
        arm::RG_WRITE,
        arm::RG_DELETE,
        "Microsoft.Contoso/widgets/write",
        "Microsoft.Contoso/widgets/gadgets/delete",
        "Microsoft.Contoso/widgets/restart/action",
    ] {
        assert!(g.detail.contains(action), "{action} in {}", g.detail);
    }
    assert!(
        g.hint
            .unwrap()
            .contains("--assignee-object-id oid-1 --role Contributor")
    );
    let r = c.rate_limit_check();
    assert_eq!(r.level, Level::Warning, "{r:?}");
}

#[test]
fn a_missing_group_a_forbidden_read_and_a_refused_token_are_told_apart() {
    let t = target("{name: rg1, disposable: true}");
    let a = Answers {
        providers: vec![(
            "Microsoft.Contoso".into(),
            ex(
                403,
                json!({"error": {"code": "AuthorizationFailed", "message": "no"}}),
                &[],
            ),
        )],
        permissions: ex(200, contributor(), &[]),
        group: ex(
            404,
            json!({"error": {"code": "ResourceGroupNotFound", "message": "gone"}}),
            &[],
        ),
    };
    let c = ctx(&t, &a);
    // No subscription-level read: a warning, not a blocker (the role may be on the group).
    assert_eq!(c.provider_check().level, Level::Warning);
    let g = c.group_check(None);
    assert_eq!(g.level, Level::Blocker);
    assert!(g.detail.contains("ResourceGroupNotFound"), "{g:?}");
    assert!(g.hint.unwrap().contains("az group create -n rg1 -l eastus"));

    let a = Answers {
        providers: vec![(
            "Microsoft.Contoso".into(),
            ex(
                401,
                json!({"error": {"code": "InvalidAuthenticationTokenAudience", "message": "wrong audience"}}),
                &[],
            ),
        )],
        permissions: ex(401, json!({}), &[]),
        group: ex(401, json!({}), &[]),
    };
    let c = ctx(&t, &a);
    let tok = c.token_check(
        &Ok(Ok(Some("opaque-token-1234567".into()))),
        Duration::from_millis(5),
        None,
        Duration::from_secs(1),
    );
    assert_eq!(tok.level, Level::Blocker);
    assert!(
        tok.detail.contains("InvalidAuthenticationTokenAudience"),
        "{tok:?}"
    );
    // The other checks do not repeat it.
    assert_eq!(c.provider_check().level, Level::Skipped);
    assert_eq!(c.group_check(None).level, Level::Skipped);
}

#[test]
fn an_existing_group_needs_the_type_writes_there() {
    let t = target("{name: rg1}");
    let only_widgets = json!({"value": [{"actions": ["Microsoft.Contoso/widgets/*", "*/read"], "notActions": []}]});
    let a = Answers {
        providers: vec![("Microsoft.Contoso".into(), ex(200, registered(), &[]))],
        permissions: ex(200, only_widgets, &[]),
        group: ex(200, json!({"name": "rg1", "location": "eastus"}), &[]),
    };
    let g = ctx(&t, &a).group_check(None);
    // widgets/gadgets/* is under widgets/*: allowed; nothing missing.
    assert_eq!(g.level, Level::Ok, "{g:?}");
    assert!(g.detail.contains("not disposable"), "{g:?}");
    let none = json!({"value": [{"actions": ["*/read"], "notActions": []}]});
    let a = Answers {
        permissions: ex(200, none, &[]),
        ..a
    };
    let g = ctx(&t, &a).group_check(None);
    assert_eq!(g.level, Level::Blocker);
    assert!(
        !g.detail.contains(arm::RG_WRITE),
        "no group write needed: {g:?}"
    );
}

#[test]
fn token_claims_expiry_and_audience() {
    let t = target("{name: rg1}");
    let a = Answers {
        providers: Vec::new(),
        permissions: None,
        group: None,
    };
    let c = ctx(&t, &a);
    let now = chrono::Utc::now().timestamp();
    let ok = Ok(Ok(Some("x.y.z".to_string())));
    let claims = |aud: &str, exp: i64| arm::Claims {
        audience: vec![aud.into()],
        expires: Some(exp),
        ..Default::default()
    };
    let fresh = c.token_check(
        &ok,
        Duration::ZERO,
        Some(&claims("https://management.azure.com/", now + 3600)),
        Duration::from_secs(1),
    );
    assert_eq!(fresh.level, Level::Ok, "{fresh:?}");
    assert!(
        fresh.detail.contains("expires in 59 min") || fresh.detail.contains("expires in 1 h"),
        "{fresh:?}"
    );
    let short = c.token_check(
        &ok,
        Duration::ZERO,
        Some(&claims("https://management.azure.com/", now + 300)),
        Duration::from_secs(1),
    );
    assert_eq!(
        short.level,
        Level::Warning,
        "a variable's token is not renewed: {short:?}"
    );
    let expired = c.token_check(
        &ok,
        Duration::ZERO,
        Some(&claims("https://management.azure.com/", now - 120)),
        Duration::from_secs(1),
    );
    assert_eq!(expired.level, Level::Blocker);
    assert!(expired.detail.contains("expired 2 min ago"), "{expired:?}");
    let graph = c.token_check(
        &ok,
        Duration::ZERO,
        Some(&claims("https://graph.microsoft.com", now + 3600)),
        Duration::from_secs(1),
    );
    assert_eq!(graph.level, Level::Warning);
    let failed = c.token_check(
        &Ok(Err("auth: environment variable RP_TOKEN is not set".into())),
        Duration::ZERO,
        None,
        Duration::from_secs(1),
    );
    assert_eq!(failed.level, Level::Blocker);
    assert!(failed.detail.contains("RP_TOKEN is not set"));
}

#[test]
fn a_plain_answer_with_a_failing_client_is_an_endpoint_blocker() {
    let t = target("{name: rg1}");
    let mut broken = ex(200, json!({}), &[]).unwrap();
    broken.response = None;
    broken.error = Some("invalid peer certificate: UnknownIssuer".into());
    let a = Answers {
        providers: Vec::new(),
        permissions: None,
        group: Some(broken),
    };
    let probe = probe::Endpoint {
        authority: "rp.example:443".into(),
        tcp: Ok("10.0.0.1:443".into()),
        http: Ok(probe::Answer {
            status: 404,
            date: None,
            sent: std::time::SystemTime::now(),
            elapsed: Duration::from_millis(20),
        }),
    };
    let c = ctx(&t, &a);
    let e = c.endpoint_check(&probe);
    assert_eq!(e.level, Level::Blocker, "{e:?}");
    assert!(e.detail.contains("UnknownIssuer"), "{e:?}");
    assert!(e.hint.unwrap().contains("--insecure"));
    let fine = Answers {
        providers: Vec::new(),
        permissions: None,
        group: ex(200, json!({}), &[]),
    };
    assert_eq!(ctx(&t, &fine).endpoint_check(&probe).level, Level::Ok);
}

#[test]
fn the_report_renders_a_checklist_and_counts() {
    let r = Report {
        checks: vec![
            Check::new("token", Level::Ok, "fine"),
            Check::new("endpoint", Level::Blocker, "refused\nsecond line").hint("start it"),
            Check::new("clock", Level::Warning, "off"),
            Check::new("provider", Level::Skipped, "not ARM"),
        ],
        elapsed: Duration::from_millis(1500),
    };
    let text = r.render();
    assert!(text.contains("  ok      token     fine\n"), "{text}");
    assert!(text.contains("  BLOCKER endpoint  refused\n"), "{text}");
    assert!(text.contains("second line\n"), "{text}");
    assert!(text.contains("→ start it"), "{text}");
    assert!(
        text.ends_with("not ready: 1 blocker, 1 warning (1.5 s)\n"),
        "{text}"
    );
    assert!(r.has_blocker());
    assert_eq!(r.check("clock").unwrap().level, Level::Warning);
}
