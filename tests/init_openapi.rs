//! `rpconform::init::target_from_openapi` on real TypeSpec-emitted specs and hand-made
//! azure-rest-api-specs-style specs (tests/fixtures/openapi/README.md says where each came
//! from): the YAML parses, and its types, scopes, nesting, per-operation LRO patterns,
//! actions and bodies are what the spec says. Plus the errors.

use crate::common;
#[path = "init_openapi/errors.rs"]
mod errors;
#[path = "init_openapi/support.rs"]
mod support;

use rpconform::init::{InitOptions, target_from_openapi};
use serde_json::json;
use support::*;

#[test]
fn tsp_resources_autorest() {
    let (out, v) = generate(&[TSP_RESOURCES]);
    assert_eq!(
        out.types,
        [
            "extensionsResources",
            "locationResources",
            "singletonTrackedResources",
            "topLevelTrackedResources",
            "nestedProxyResources"
        ]
    );
    assert_eq!(v["namespace"], "Azure.ResourceManager.Resources");
    assert_eq!(v["api_version"], "2023-12-01-preview");
    let t = &v["types"];
    assert_eq!(t["extensionsResources"]["scope"], "extension");
    // `{resourceUri}` is any resource: the guess is an ordinary resource-group type.
    assert_eq!(
        t["extensionsResources"]["extends"],
        "topLevelTrackedResources"
    );
    assert_eq!(t["locationResources"]["scope"], "location");
    assert_eq!(t["singletonTrackedResources"]["singleton"], "default");
    assert_eq!(t["topLevelTrackedResources"]["scope"], "resource_group");
    assert_eq!(
        t["nestedProxyResources"]["parent"],
        "topLevelTrackedResources"
    );
    assert!(t["nestedProxyResources"].get("scope").is_none());
    assert_eq!(
        kinds(&v),
        [
            ("extensionsResources", "proxy"),
            ("locationResources", "proxy"),
            ("singletonTrackedResources", "tracked"),
            ("topLevelTrackedResources", "tracked"),
            ("nestedProxyResources", "proxy"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );

    let top = &t["topLevelTrackedResources"];
    assert_eq!(
        top["lro"]["put"],
        json!({"pattern": "azure-async-operation", "final_state_via": "azure-async-operation"})
    );
    assert_eq!(
        top["lro"]["patch"],
        json!({"pattern": "location", "final_state_via": "location"})
    );
    assert_eq!(
        top["lro"]["delete"],
        json!({"pattern": "location", "final_state_via": "location"})
    );
    assert_eq!(top["async"], true);
    assert_eq!(top["provisioning_state"], true);
    assert_eq!(top["etag"], false);
    // Bodies from the examples the emitter copied next to the spec.
    assert_eq!(
        top["create_body"],
        json!({"location": "${target.location}", "tags": {"team": "docs"}, "properties": {"description": "valid"}})
    );
    assert_eq!(
        top["update_body"],
        json!({"properties": {"description": "valid2"}})
    );
    assert_eq!(
        top["actions"],
        json!([{"name": "actionSync", "lro": "sync", "body": {"message": "rpconform", "urgent": false}, "result": {"status": 204}}])
    );
    assert_eq!(
        t["nestedProxyResources"]["create_body"],
        json!({"properties": {"description": "valid"}})
    );
    assert_eq!(
        t["locationResources"]["lro"],
        json!({"put": "sync", "patch": "sync", "delete": "sync"})
    );
    assert_eq!(t["locationResources"]["async"], false);
    // A body built from the schema carries a TODO.
    assert!(
        line_of(&out.yaml, "update_body: {}").contains("# TODO: check"),
        "{}",
        out.yaml
    );
    assert!(
        out.warnings.iter().any(|w| w.contains("common types")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn tsp_resources_openapi3_agrees_with_autorest() {
    let (out3, v3) = generate(&[TSP_RESOURCES_OAS3]);
    let (_, v2) = generate(&[TSP_RESOURCES]);
    let mut a = out3.types.clone();
    a.sort();
    let mut b: Vec<String> = v2["types"].as_object().unwrap().keys().cloned().collect();
    b.sort();
    assert_eq!(a, b);
    for (name, t3) in v3["types"].as_object().unwrap() {
        let t2 = &v2["types"][name];
        for key in [
            "scope",
            "parent",
            "kind",
            "singleton",
            "extends",
            "etag",
            "provisioning_state",
            "async",
        ] {
            assert_eq!(t3.get(key), t2.get(key), "{name}.{key}");
        }
        // Same patterns; OpenAPI 3 cannot state final-state-via.
        for op in ["put", "patch", "delete"] {
            let p2 = &t2["lro"][op];
            let p2 = p2.get("pattern").unwrap_or(p2);
            assert_eq!(&t3["lro"][op], p2, "{name}.lro.{op}");
        }
    }
    assert!(
        out3.yaml
            .contains("OpenAPI 3 states no x-ms-long-running-operation")
    );
    // TypeSpec's openapi3 PATCH body is the update model: a tags change is the fallback.
    assert_eq!(
        v3["types"]["topLevelTrackedResources"]["update_body"],
        json!({"tags": {"rpconform": "updated"}})
    );
}

#[test]
fn tsp_operation_templates() {
    let (out, v) = generate(&[TSP_OPERATION_TEMPLATES]);
    assert_eq!(out.types, ["configurations", "orders"]);
    let orders = &v["types"]["orders"];
    assert_eq!(orders["lro"]["put"]["pattern"], "azure-async-operation");
    assert_eq!(
        orders["lro"]["delete"],
        json!({"pattern": "location", "final_state_via": "location"})
    );
    assert!(orders["lro"].get("patch").is_none());
    assert!(orders.get("update_body").is_none());
    let export = &orders["actions"][0];
    assert_eq!(export["name"], "export");
    assert_eq!(export["lro"], "azure-async-operation+location");
    assert_eq!(export["final_state_via"], "location");
    assert_eq!(export["result"]["status"], 200);
    assert_eq!(export["body"], json!({"format": "rpconform"}));
    assert_eq!(
        orders["create_body"],
        json!({"location": "${target.location}", "properties": {"productId": "rpconform", "amount": 1}})
    );
    assert_eq!(v["types"]["configurations"]["lro"]["put"], "sync");
    // Operations on types without a PUT, and provider-level actions, are listed, not lost.
    for needle in [
        "widgets/{widgetName}: the type has no PUT",
        "checkNameAvailability: a provider-level action",
        "postPagingLro: an action on a type with no PUT",
    ] {
        assert!(out.yaml.contains(needle), "{needle}\n{}", out.yaml);
    }
}

#[test]
fn tsp_management_group_extension() {
    let (out, v) = generate(&[TSP_MANAGEMENT_GROUP]);
    assert_eq!(out.types, ["managementGroupChildResources"]);
    let t = &v["types"]["managementGroupChildResources"];
    assert_eq!(v["namespace"], "Microsoft.ManagementGroupChild");
    assert_eq!(t["scope"], "extension");
    let ext = t["extends"].as_str().unwrap();
    assert!(
        ext.starts_with("/providers/Microsoft.Management/managementGroups/"),
        "{ext}"
    );
    assert!(line_of(&out.yaml, "extends:").contains("# TODO:"));
    assert_eq!(t["lro"]["put"]["final_state_via"], "azure-async-operation");
    assert_eq!(t["lro"]["delete"], "sync");
}

#[test]
fn contoso_tracked_nested_actions_skus_examples() {
    let (out, v) = generate(&[CONTOSO]);
    assert_eq!(out.types, ["widgets", "gadgets", "links"]);
    let w = &v["types"]["widgets"];
    assert_eq!(w["scope"], "resource_group");
    assert_eq!(w["kind"], "tracked");
    assert_eq!(w["etag"], true, "If-Match parameter");
    assert_eq!(w["skus"], true);
    assert_eq!(w["provisioning_state"], true);
    assert_eq!(
        w["lro"]["put"],
        json!({"pattern": "azure-async-operation", "final_state_via": "azure-async-operation"})
    );
    assert_eq!(
        w["lro"]["patch"],
        json!({"pattern": "location", "final_state_via": "location"})
    );
    assert_eq!(w["lro"]["delete"], "location");
    // The smaller of the two PUT examples, location templated.
    assert_eq!(
        w["create_body"],
        json!({"location": "${target.location}", "properties": {"size": 3}})
    );
    assert_eq!(
        w["update_body"],
        json!({"tags": {"env": "patched"}, "properties": {"size": 4}})
    );
    assert_eq!(w["tags_body"], json!({"tags": {"rpconform": "tagged"}}));
    assert_eq!(
        w["actions"],
        json!([
            {"name": "restart", "lro": "location", "final_state_via": "location", "body": {"force": true}, "result": {"status": 200}},
            {"name": "listKeys", "lro": "sync", "result": {"status": [200, 204]}}
        ])
    );
    let g = &v["types"]["gadgets"];
    assert_eq!(g["parent"], "widgets");
    assert_eq!(g["kind"], "proxy");
    assert_eq!(
        g["lro"]["put"],
        json!({"pattern": "azure-async-operation+location", "final_state_via": "original-uri"})
    );
    assert_eq!(g["lro"]["delete"], "location");
    assert!(line_of(&out.yaml, "delete: location  #").contains("TODO: no polling header declared"));
    assert_eq!(
        g["create_body"]["properties"]["sourceWidgetId"],
        "${parent.id}"
    );
    let l = &v["types"]["links"];
    assert_eq!(l["depends_on"], "widgets");
    assert_eq!(l["etag"], true);
    assert_eq!(l["provisioning_state"], false);
    assert_eq!(
        l["lro"],
        json!({"put": "sync", "patch": "sync", "delete": "sync"})
    );
    assert_eq!(
        l["create_body"]["properties"]["targetWidgetId"],
        "${dependency.id}"
    );
    assert!(
        l["create_body"]["properties"]["subnetId"]
            .as_str()
            .unwrap()
            .contains("Microsoft.Network")
    );
    assert!(
        line_of(&out.yaml, "subnetId:")
            .contains("TODO: references an existing Microsoft.Network/virtualNetworks/subnets")
    );
    assert!(line_of(&out.yaml, "depends_on:").contains("TODO"));
    // The keys it writes are explained where the file points.
    let types_line = line_of(&out.yaml, "types:");
    assert!(types_line.contains("docs/target-file.md"), "{types_line}");
    let reference = std::fs::read_to_string(common::root().join("docs/target-file.md")).unwrap();
    for key in ["`lro`", "`scope`", "`provisioning_state`", "`tags_body`"] {
        assert!(
            reference.contains(&format!("| {key} |")),
            "{key} is not documented"
        );
    }
    // The example's identity ids are made up: the reviewer is told.
    assert!(
        line_of(&out.yaml, "userAssignedIdentities:").contains("TODO: made-up identity ids"),
        "{}",
        out.yaml
    );
    // The PATCH example file is missing: a TODO and a body from the schema, not a failure.
    assert_eq!(l["update_body"], json!({"tags": {"rpconform": "updated"}}));
    assert!(
        out.todos
            .iter()
            .any(|t| t.starts_with("types.links.update_body") && t.contains("Links_Update.json")),
        "{:?}",
        out.todos
    );
    assert!(
        out.yaml
            .contains("checkNameAvailability: a provider-level action")
    );
    assert_eq!(v["subscription"], "00000000-0000-0000-0000-000000000000");
    assert!(line_of(&out.yaml, "subscription:").contains("# TODO"));
}

#[test]
fn fabrikam_scopes_singletons_names_and_lro_options() {
    let (out, v) = generate(&[FABRIKAM]);
    assert_eq!(
        out.types,
        [
            "accounts",
            "policies",
            "settings",
            "quotas",
            "registrations",
            "assignments"
        ]
    );
    let t = &v["types"];
    let a = &t["accounts"];
    assert_eq!(a["scope"], "subscription");
    assert_eq!(a["kind"], "tracked");
    assert_eq!(
        a["lro"]["put"],
        json!({"pattern": "azure-async-operation+location", "final_state_via": "location"})
    );
    assert_eq!(a["lro"]["patch"], "sync");
    assert_eq!(a["lro"]["delete"], "location");
    assert_eq!(
        a["create_body"],
        json!({"location": "${target.location}", "sku": {"name": "F1"},
               "properties": {"capacity": 2, "endpoint": "https://example.com"}})
    );
    assert!(line_of(&out.yaml, "create_body:  #").contains("TODO: check"));
    assert_eq!(
        a["actions"],
        json!([
            {"name": "regenerateKey", "lro": "azure-async-operation", "final_state_via": "azure-async-operation",
             "body": {"keyName": "primary"}, "result": {"status": 200}},
            {"name": "suspend", "lro": "location"}
        ])
    );
    assert!(
        out.todos
            .iter()
            .any(|t| t.starts_with("types.accounts.actions[1].result"))
    );
    let p = &t["policies"];
    assert_eq!(p["parent"], "accounts");
    assert_eq!(p["names"], json!(["primary", "secondary"]));
    assert_eq!(p["etag"], true);
    assert_eq!(p["provisioning_state"], false);
    assert_eq!(
        p["lro"]["put"],
        json!({"pattern": "azure-async-operation", "final_state_via": "azure-async-operation"})
    );
    assert_eq!(p["lro"]["delete"], "location");
    assert!(
        out.todos
            .iter()
            .any(|t| t.starts_with("types.policies.lro.delete"))
    );
    assert_eq!(p["create_body"], json!({"properties": {"mode": "Audit"}}));
    let s = &t["settings"];
    assert_eq!(
        (s["parent"].as_str(), s["singleton"].as_str()),
        (Some("accounts"), Some("default"))
    );
    assert_eq!(s["lro"], json!({"put": "sync"}));
    let q = &t["quotas"];
    assert_eq!(q["scope"], "location");
    // Long-running with no header and final-state-via original-uri: any pattern, and a TODO.
    assert_eq!(q["async"], true);
    assert_eq!(q["lro"], json!({"delete": "sync"}));
    assert!(
        out.todos
            .iter()
            .any(|t| t.starts_with("types.quotas.lro.put") && t.contains("original-uri"))
    );
    assert_eq!(q["create_body"], json!({"properties": {"limit": 10}}));
    assert_eq!(t["registrations"]["scope"], "tenant");
    let x = &t["assignments"];
    assert_eq!(x["scope"], "extension");
    assert_eq!(x["extends"], "accounts");
    assert_eq!(
        x["create_body"],
        json!({"properties": {"policyId": "rpconform", "enforcement": false}})
    );
    assert!(line_of(&out.yaml, "policyId:").contains("TODO: a resource id"));
    assert!(line_of(&out.yaml, "# names must match").contains("^[a-z0-9]{3,24}$"));
}

#[test]
fn several_specs_several_namespaces() {
    let (out, v) = generate(&[CONTOSO, FABRIKAM]);
    assert_eq!(v["namespace"], "Microsoft.Contoso");
    assert_eq!(v["api_version"], "2024-05-01");
    assert_eq!(
        v["namespaces"],
        json!({"Microsoft.Fabrikam": {"api_version": "2025-01-01-preview"}})
    );
    assert!(v["types"]["widgets"].get("namespace").is_none());
    assert_eq!(v["types"]["accounts"]["namespace"], "Microsoft.Fabrikam");
    assert_eq!(out.types.len(), 9);
    // The extension's guess now has an ordinary resource-group type to attach to.
    assert_eq!(v["types"]["assignments"]["extends"], "widgets");
}

#[test]
fn options_fill_the_placeholders() {
    let opts = InitOptions {
        location: "westeurope".into(),
        resource_group: "my-ci".into(),
        subscription: Some("12345678-1234-1234-1234-123456789abc".into()),
        ..Default::default()
    };
    let out = target_from_openapi(&[fixture(CONTOSO)], &opts).unwrap();
    let v = parse_checked(&out.yaml);
    assert_eq!(v["location"], "westeurope");
    assert_eq!(
        v["resource_group"],
        json!({"name": "my-ci", "create": true})
    );
    assert_eq!(v["subscription"], "12345678-1234-1234-1234-123456789abc");
    assert!(!out.todos.iter().any(|t| t.starts_with("subscription")));
    // Same input, same output.
    assert_eq!(
        out.yaml,
        target_from_openapi(&[fixture(CONTOSO)], &opts)
            .unwrap()
            .yaml
    );
}

#[test]
fn yaml_input_and_name_collisions() {
    let dir = scratch_dir("yaml-input");
    let spec = dir.join("spec.yaml");
    std::fs::write(
        &spec,
        r#"swagger: "2.0"
info: {title: t, version: "2024-02-02"}
paths:
  /subscriptions/{s}/resourceGroups/{rg}/providers/Yes.No/alphas/{a}/items/{i}:
    put:
      parameters:
        - {name: body, in: body, schema: {type: object, required: [yes], properties: {"yes": {type: string, enum: ["on", "1.0"]}}}}
      responses: {200: {description: ok}}
  /subscriptions/{s}/resourceGroups/{rg}/providers/Yes.No/betas/{b}/items/{i}:
    put:
      responses: {200: {description: ok}}
  /subscriptions/{s}/resourceGroups/{rg}/providers/Yes.No/alphas/{a}:
    put:
      responses: {200: {description: ok}}
"#,
    )
    .unwrap();
    let out = target_from_openapi(&[spec], &InitOptions::default()).unwrap();
    let v = parse_checked(&out.yaml);
    assert_eq!(out.types, ["alphas", "items", "betas", "betas-items"]);
    assert_eq!(v["types"]["betas-items"]["path"], "items");
    assert_eq!(v["types"]["betas-items"]["parent"], "betas");
    // Tricky strings survive the round trip.
    assert_eq!(v["types"]["items"]["create_body"], json!({"yes": "on"}));
    // A parent with no PUT is written (rpconform must create it) with a TODO.
    assert!(
        out.todos
            .iter()
            .any(|t| t.starts_with("types.betas:") && t.contains("no PUT")),
        "{:?}",
        out.todos
    );
}

#[test]
fn same_namespace_in_two_api_versions() {
    let dir = scratch_dir("two-versions");
    let spec = dir.join("sprockets.json");
    std::fs::write(
        &spec,
        r#"{"swagger": "2.0", "info": {"version": "2025-03-01-preview"}, "paths": {
            "/subscriptions/{s}/resourceGroups/{rg}/providers/Microsoft.Contoso/sprockets/{n}": {
                "put": {"responses": {"200": {}}}}}}"#,
    )
    .unwrap();
    let out = target_from_openapi(&[fixture(CONTOSO), spec], &InitOptions::default()).unwrap();
    let v = parse_checked(&out.yaml);
    assert_eq!(v["api_version"], "2024-05-01");
    assert!(v.get("namespaces").is_none());
    assert_eq!(v["types"]["sprockets"]["api_version"], "2025-03-01-preview");
    assert!(v["types"]["widgets"].get("api_version").is_none());
    // No body parameter at all: an empty body and a TODO.
    assert_eq!(v["types"]["sprockets"]["create_body"], json!({}));
    assert!(
        out.todos
            .iter()
            .any(|t| t.starts_with("types.sprockets.create_body") && t.contains("no body"))
    );
}

/// The command a new user runs: `init` writes a file that `check` accepts.
#[test]
fn init_then_check_from_the_command_line() {
    let dir = scratch_dir("cli");
    let out = dir.join("target.yaml");
    let spec = fixture("contoso/resource-manager/Microsoft.Contoso/stable/2024-05-01/contoso.json");
    let run = |args: &[&str]| common::rpconform(args, common::QUICK_TIMEOUT);
    let init = run(&[
        "init",
        "--openapi",
        spec.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = &init.stderr;
    assert!(init.status.success(), "{err}");
    assert!(
        err.contains("resource type(s)") && err.contains("TODO"),
        "{err}"
    );
    // A second run does not overwrite without --force.
    let again = run(&[
        "init",
        "--openapi",
        spec.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.code(), 2);
    let check = run(&["check", "suites", "--target", out.to_str().unwrap()]);
    assert!(check.status.success(), "{}{}", check.stdout, check.stderr);
    // The file names its `profiles:`; its `openapi:` adds one, and `check` says so truly.
    assert!(
        !check.stdout.contains("declares no `profiles:`")
            && check
                .stdout
                .contains("besides its `profiles:`, what it declares implies openapi"),
        "{}",
        check.stdout
    );
}

#[test]
fn the_target_names_its_specs_relative_to_itself_and_loads_them() {
    let dir = scratch_dir("openapi-field");
    let opts = InitOptions {
        target_dir: Some(dir.clone()),
        ..Default::default()
    };
    let out = target_from_openapi(&[fixture(CONTOSO)], &opts).unwrap();
    let line = line_of(&out.yaml, "openapi:");
    assert!(line.contains("openapi:"), "{line}");
    let listed: serde_yaml::Value = serde_yaml::from_str(&out.yaml).unwrap();
    let first = listed["openapi"][0].as_str().expect("a spec path");
    assert!(
        !first.starts_with('/'),
        "relative to the target file: {first}"
    );
    let at = dir.join("target.yaml");
    std::fs::write(&at, &out.yaml).unwrap();
    let t = rpconform::target::load_target(&at).unwrap_or_else(|r| panic!("{}", r.render()));
    let specs = t
        .specs
        .as_ref()
        .expect("the spec is loaded with the target");
    assert!(specs.operations().len() > 5);
    assert!(t.profiles.iter().any(|p| p.name() == "openapi"));
}
