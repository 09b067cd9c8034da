use serde_json::{Value, json};

use super::{Found, Specs};

const W: &str = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Contoso/widgets/{widgetName}";

fn spec() -> Value {
    json!({
        "swagger": "2.0",
        "info": {"title": "t", "version": "2024-05-01"},
        "paths": {
            W: {
                "get": {"operationId": "Widgets_Get", "responses": {
                    "200": {"description": "ok", "schema": {"$ref": "#/definitions/Widget"}, "headers": {"ETag": {"type": "string"}}},
                    "default": {"description": "e", "schema": {"$ref": "#/definitions/Error"}}}},
                "delete": {"operationId": "Widgets_Delete", "x-ms-long-running-operation": true,
                    "x-ms-long-running-operation-options": {"final-state-via": "location"},
                    "responses": {"202": {"description": "a", "headers": {"Location": {"type": "string"}}}, "204": {"description": "n"}}}
            },
            "/{resourceUri}/providers/Microsoft.Contoso/notes/{name}": {
                "parameters": [{"name": "resourceUri", "in": "path", "required": true, "type": "string", "x-ms-skip-url-encoding": true}],
                "get": {"operationId": "Notes_Get", "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"}}}}
            },
            "/subscriptions/{subscriptionId}/providers/Microsoft.Contoso/locations/{l}/operations/{id}": {
                "get": {"operationId": "Status", "responses": {"200": {"description": "ok", "schema": {"type": "object"}}}}
            }
        },
        "x-ms-paths": {
            "/subscriptions/{subscriptionId}/providers/Microsoft.Contoso/locations/{l}/operations/{id}?monitor=true": {
                "get": {"operationId": "Result", "responses": {"200": {"description": "ok"}}}
            }
        },
        "definitions": {
            "Widget": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string"},
                "kind": {"type": "string", "enum": ["a", "b"], "x-ms-enum": {"name": "K", "modelAsString": true}},
                "tier": {"type": "string", "enum": ["Basic", "Premium"]},
                "properties": {"$ref": "#/definitions/WidgetProperties"}}},
            "WidgetProperties": {"type": "object", "properties": {
                "size": {"type": "integer", "minimum": 1, "exclusiveMaximum": true, "maximum": 100},
                "password": {"type": "string", "x-ms-secret": true},
                "child": {"$ref": "#/definitions/WidgetProperties"}}},
            "Error": {"type": "object", "properties": {"error": {"type": "object"}}},
            "Pet": {"type": "object", "discriminator": "petType", "required": ["petType"],
                "properties": {"petType": {"type": "string"}, "name": {"type": "string"},
                    "owner": {"$ref": "#/definitions/Owner"}}},
            "Dog": {"x-ms-discriminator-value": "dog", "allOf": [{"$ref": "#/definitions/Pet"}],
                "properties": {"bark": {"type": "boolean"}, "licence": {"type": "string", "x-ms-secret": true}},
                "required": ["bark"]},
            "Owner": {"type": "object", "discriminator": "kind", "properties": {"kind": {"type": "string"}}},
            "Person": {"allOf": [{"$ref": "#/definitions/Owner"}], "properties": {
                "properties": {"type": "object", "properties": {"pin": {"type": "string", "x-ms-secret": true}}}}}
        }
    })
}

fn specs() -> Specs {
    let text = serde_json::to_string_pretty(&spec()).unwrap();
    Specs::from_documents(&[("spec/t.json".into(), text, spec())]).expect("loads")
}

const URL: &str = "https://h/subscriptions/S1/resourceGroups/Rg/providers/microsoft.contoso/widgets/W1?api-version=2024-05-01";

fn op<'a>(s: &'a Specs, method: &str, url: &str) -> &'a super::Operation {
    match s.find(method, url) {
        Found::Operation(o) => o,
        Found::OtherVersion(v) => panic!("{method} {url}: other versions {v:?}"),
        Found::None => panic!("{method} {url}: no operation"),
    }
}

#[test]
fn exchanges_map_to_their_operation_without_case_and_by_api_version() {
    let s = specs();
    let get = op(&s, "GET", URL);
    assert_eq!(get.id, "Widgets_Get");
    assert!(get.place().starts_with("spec/t.json:"), "{}", get.place());
    assert!(get.line > 1);
    assert_eq!(
        op(&s, "delete", URL).final_state_via.as_deref(),
        Some("location")
    );
    assert!(matches!(s.find("PATCH", URL), Found::None));
    let other = URL.replace("2024-05-01", "2023-01-01");
    assert!(matches!(s.find("GET", &other), Found::OtherVersion(v) if v == ["2024-05-01"]));
    // An exchange that names no api-version is held to no versioned file.
    let none = URL.split('?').next().unwrap();
    assert!(matches!(s.find("GET", none), Found::OtherVersion(v) if v == ["2024-05-01"]));
    let other_query = format!("{none}?$expand=x");
    assert!(matches!(
        s.find("GET", &other_query),
        Found::OtherVersion(_)
    ));
}

#[test]
fn a_path_parameter_spans_segments_and_a_fixed_query_wins() {
    let s = specs();
    let note = "https://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w/providers/Microsoft.Contoso/notes/n1?api-version=2024-05-01";
    assert_eq!(op(&s, "GET", note).id, "Notes_Get");
    let status = "https://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operations/op1?api-version=2024-05-01";
    assert_eq!(op(&s, "GET", status).id, "Status");
    assert_eq!(
        op(&s, "GET", &format!("{status}&monitor=true")).id,
        "Result"
    );
}

#[test]
fn declared_responses_default_only_for_errors() {
    let s = specs();
    let get = op(&s, "GET", URL);
    assert!(get.response(200).is_some());
    assert!(get.response(404).is_some(), "default covers errors");
    assert!(
        get.response(201).is_none(),
        "default never covers a success"
    );
    assert_eq!(get.response(200).unwrap().headers, ["etag"]);
}

fn errors(body: Value) -> Vec<String> {
    let s = specs();
    let get = op(&s, "GET", URL);
    get.response(200)
        .and_then(|r| r.schema.as_ref())
        .expect("schema")
        .errors(&body)
}

#[test]
fn bodies_validate_as_the_sdks_read_the_spec() {
    assert!(errors(json!({"id": "x", "properties": {"size": 3}})).is_empty());
    // Extensible enums take any string; a sealed one does not.
    assert!(errors(json!({"id": "x", "kind": "c"})).is_empty());
    let e = errors(json!({"id": "x", "tier": "Gold"}));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("/tier"), "{e:?}");
    // A member sent as null is absent; a required one is not.
    assert!(errors(json!({"id": "x", "properties": {"size": null}})).is_empty());
    assert!(!errors(json!({"id": null})).is_empty());
    // exclusiveMaximum: true makes maximum exclusive; recursion stays finite.
    let e = errors(json!({"id": "x", "properties": {"child": {"child": {"size": 100}}}}));
    assert!(
        e.iter().any(|m| m.contains("/properties/child/child/size")),
        "{e:?}"
    );
    let e = errors(json!({"id": 3, "properties": {"size": "three"}}));
    assert_eq!(e.len(), 2, "{e:?}");
}

#[test]
fn a_discriminator_holds_the_body_to_the_subtype_it_names() {
    let s = specs();
    let note = "https://h/x/providers/Microsoft.Contoso/notes/n1?api-version=2024-05-01";
    let c = op(&s, "GET", note)
        .response(200)
        .and_then(|r| r.schema.clone())
        .expect("schema");
    assert!(
        c.errors(&json!({"petType": "dog", "bark": true}))
            .is_empty()
    );
    assert!(
        !c.errors(&json!({"petType": "dog"})).is_empty(),
        "a dog barks"
    );
    assert!(
        c.errors(&json!({"petType": "cat"})).is_empty(),
        "an unknown kind is the base"
    );
    assert!(
        !c.errors(&json!({"name": "x"})).is_empty(),
        "petType is required"
    );
}

#[test]
fn secrets_are_found_through_refs() {
    let s = specs();
    let get = op(&s, "GET", URL);
    assert!(
        get.secrets
            .iter()
            .any(|s| s.pointer == "/properties/password" && s.when.is_empty()),
        "{:?}",
        get.secrets
    );
}

#[test]
fn secrets_of_a_discriminated_subtype_count_under_its_value() {
    let s = specs();
    let note = "https://h/x/providers/Microsoft.Contoso/notes/n1?api-version=2024-05-01";
    let secrets = &op(&s, "GET", note).secrets;
    let key = secrets
        .iter()
        .find(|s| s.pointer == "/licence")
        .unwrap_or_else(|| panic!("{secrets:?}"));
    assert_eq!(key.when, vec![("/petType".to_string(), "dog".to_string())]);
    let deep = secrets
        .iter()
        .find(|s| s.pointer == "/owner/properties/pin")
        .unwrap_or_else(|| panic!("{secrets:?}"));
    assert_eq!(
        deep.when,
        vec![("/owner/kind".to_string(), "Person".to_string())]
    );
    assert!(key.shown_in(&json!({"petType": "dog", "licence": "k"})));
    assert!(!key.shown_in(&json!({"petType": "cat", "licence": "k"})));
    assert!(!key.shown_in(&json!({"petType": "dog", "licence": null})));
}

#[test]
fn a_document_that_is_not_openapi_is_refused_by_name() {
    let e = Specs::from_documents(&[("x.json".into(), "{}".into(), json!({"a": 1}))]).unwrap_err();
    assert!(e.contains("x.json") && e.contains("not an OpenAPI"), "{e}");
}

#[test]
fn the_read_only_probe_sets_free_text_read_only_members_only() {
    let doc = json!({
        "swagger": "2.0",
        "info": {"title": "t", "version": "2024-05-01"},
        "paths": {W: {"put": {"operationId": "Widgets_Put",
            "parameters": [{"name": "body", "in": "body", "schema": {"$ref": "#/definitions/Widget"}}],
            "responses": {"200": {"description": "ok"}}}}},
        "definitions": {
            "Resource": {"type": "object", "properties": {
                "id": {"type": "string", "readOnly": true},
                "name": {"type": "string", "readOnly": true},
                "systemData": {"$ref": "#/definitions/SystemData", "readOnly": true}}},
            "SystemData": {"type": "object", "properties": {
                "createdBy": {"type": "string"},
                "createdAt": {"type": "string", "format": "date-time"},
                "createdByType": {"type": "string", "enum": ["User", "Application"]}}},
            "Text": {"type": "string"},
            "Widget": {"type": "object", "allOf": [{"$ref": "#/definitions/Resource"}],
              "discriminator": "kind", "properties": {
                "etag": {"type": "string", "readOnly": true},
                "kind": {"type": "string", "readOnly": true},
                "code": {"type": "string", "readOnly": true, "maxLength": 4},
                "stamp": {"$ref": "#/definitions/Text", "format": "date-time", "readOnly": true},
                "note": {"$ref": "#/definitions/Text", "readOnly": true},
                "identity": {"type": "object", "properties": {
                    "principalId": {"type": "string", "readOnly": true},
                    "type": {"type": "string"}}},
                "properties": {"type": "object", "properties": {
                    "provisioningState": {"type": "string", "readOnly": true, "enum": ["Succeeded"]},
                    "host": {"type": "string", "readOnly": true},
                    "count": {"type": "integer", "readOnly": true},
                    "description": {"type": "string"}}}}}
        }
    });
    let specs = Specs::from_documents(&[("w.json".into(), doc.to_string(), doc)]).unwrap();
    let url = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";
    let p = super::schema::READ_ONLY_PROBE;
    // Where the body sent has room: never a writable object made up around a probe.
    assert_eq!(
        specs.read_only_probe("PUT", url, &json!({"properties": {"description": "d"}})),
        Some(json!({"note": p, "systemData": {"createdBy": p}, "properties": {"host": p}}))
    );
    assert_eq!(
        specs.read_only_probe("PUT", url, &json!({})),
        Some(json!({"note": p, "systemData": {"createdBy": p}}))
    );
    assert_eq!(
        specs
            .read_only_probe("PUT", url, &json!({"identity": {"type": "SystemAssigned"}}))
            .and_then(|b| b.pointer("/identity/principalId").cloned()),
        Some(json!(p))
    );
    assert_eq!(specs.read_only_probe("PATCH", url, &json!({})), None);
}

#[test]
fn the_embedded_spec_probes_the_envelope_members_it_marks_read_only() {
    let specs = crate::target::embedded_specs(&rpconform_refrp::Settings::default()).unwrap();
    let url = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";
    let p = super::schema::READ_ONLY_PROBE;
    assert_eq!(
        specs.read_only_probe("PUT", url, &json!({"location": "eastus", "properties": {}})),
        Some(json!({"systemData": {"createdBy": p, "lastModifiedBy": p}}))
    );
}

#[test]
fn a_published_spec_probes_its_free_text_read_only_members() {
    // As azure-rest-api-specs published them. Event Hubs 2017-04-01 PUTs the resource model:
    // its free-text readOnly members (the endpoint, the metric id) are probed, never its enums,
    // date-times or the envelope. Redis 2019-07-01 PUTs a create model with none: nothing.
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/specs/specification");
    let eh =
        Specs::load(&[dir.join(
            "eventhub/resource-manager/Microsoft.EventHub/stable/2017-04-01/namespaces.json",
        )])
        .unwrap();
    let url = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.EventHub/namespaces/n?api-version=2017-04-01";
    let base = json!({"location": "westus", "properties": {}});
    let probe = eh
        .read_only_probe("PUT", url, &base)
        .expect("Event Hubs marks members readOnly");
    // Without `properties` in the body, there is nowhere to put them.
    assert_eq!(
        eh.read_only_probe("PUT", url, &json!({"location": "westus"})),
        None
    );
    let p = super::schema::READ_ONLY_PROBE;
    assert_eq!(probe["properties"]["serviceBusEndpoint"], p, "{probe}");
    assert_eq!(probe["properties"]["metricId"], p, "{probe}");
    for absent in [
        "/properties/provisioningState",
        "/properties/createdAt",
        "/id",
        "/name",
        "/type",
    ] {
        assert!(probe.pointer(absent).is_none(), "{absent} in {probe}");
    }
    let redis = Specs::load(&[
        dir.join("redis/resource-manager/Microsoft.Cache/preview/2019-07-01/redis.json")
    ])
    .unwrap();
    let url = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Cache/Redis/r?api-version=2019-07-01";
    assert_eq!(redis.read_only_probe("PUT", url, &base), None);
}
