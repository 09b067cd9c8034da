//! Reader, redaction, pairing and writer tests on small hand-made recordings.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::http::{MASK, Role};

pub(super) const JWT: &str =
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBsYXktdGVzdCJ9.c2lnbmF0dXJlLXJlcGxheQ";
pub(super) const SUB: &str =
    "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000";

pub(super) fn read(name: &str, text: &str) -> Recording {
    read_with(name, text, &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn read_with(
    name: &str,
    text: &str,
    opts: &ReadOptions,
) -> Result<Recording, ReplayError> {
    read_recording_from(Path::new(name), text.as_bytes(), opts)
}

pub(super) fn har(entries: serde_json::Value) -> String {
    json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}})
        .to_string()
}

pub(super) fn har_entry(
    method: &str,
    url: &str,
    status: u16,
    headers: serde_json::Value,
    text: Option<&str>,
) -> serde_json::Value {
    let mut content = json!({"size": text.map_or(0, str::len), "mimeType": "application/json"});
    if let Some(t) = text {
        content["text"] = json!(t);
    }
    json!({
        "startedDateTime": "2024-05-01T10:00:00.000Z", "time": 12.6,
        "request": {"method": method, "url": url, "httpVersion": "HTTP/2", "headers": [], "queryString": []},
        "response": {"status": status, "statusText": "", "headers": headers, "content": content},
    })
}

#[test]
fn har_entries_are_read_redacted_and_classified() {
    let vnet = format!(
        "{SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v?api-version=2023-01-01"
    );
    let mut first = har_entry(
        "put",
        &vnet,
        201,
        json!([
            {"name": ":status", "value": "201"},
            {"name": "Azure-AsyncOperation", "value": format!("{SUB}/providers/Microsoft.Network/locations/eastus/operations/1?api-version=2023-01-01")},
            {"name": "Set-Cookie", "value": "x-ms-gateway-slice=estsfd; path=/"},
        ]),
        Some(&format!(
            r#"{{"properties": {{"provisioningState": "Updating"}}, "token": "{JWT}"}}"#
        )),
    );
    first["request"]["headers"] = json!([
        {"name": ":authority", "value": "management.azure.com"},
        {"name": "Authorization", "value": format!("Bearer {JWT}")},
        {"name": "Cookie", "value": "portalId=abcdef123456"},
    ]);
    first["request"]["postData"] = json!({"mimeType": "application/json", "text": r#"{"location": "eastus", "properties": {"adminPassword": "Secr3t!Secr3t"}}"#});
    let b64 = har_entry(
        "GET",
        &format!(
            "{SUB}/providers/Microsoft.Network/locations/eastus/operations/1?api-version=2023-01-01"
        ),
        200,
        json!([]),
        Some("eyJzdGF0dXMiOiAiU3VjY2VlZGVkIn0="),
    );
    let mut b64 = b64;
    b64["response"]["content"]["encoding"] = json!("base64");
    let missing = har_entry("GET", &vnet, 200, json!([]), None);
    let mut missing = missing;
    missing["response"]["content"]["size"] = json!(120);
    let token = har_entry(
        "POST",
        "https://login.microsoftonline.com/t/oauth2/v2.0/token",
        200,
        json!([]),
        Some(r#"{"access_token": "opaque-access-token-1", "refresh_token": "0.AR-refresh"}"#),
    );
    let mut failed = har_entry("GET", &vnet, 0, json!([]), None);
    failed["response"]["_error"] = json!("net::ERR_CONNECTION_RESET");
    let r = read(
        "portal.har",
        &har(json!([first, b64, missing, token, failed])),
    );
    assert_eq!(r.format, Format::Har);
    assert_eq!(r.entries.len(), 5);
    let e = &r.entries[0];
    assert_eq!((e.seq, e.method.as_str(), e.elapsed_ms), (1, "PUT", 13));
    assert_eq!(e.started_at, "2024-05-01T10:00:00.000Z");
    assert!(!e.request_headers.is_empty());
    assert!(e.request_headers.iter().all(|(k, _)| !k.starts_with(':')));
    assert_eq!(e.request_header("authorization"), Some("Bearer [REDACTED]"));
    assert_eq!(e.request_header("cookie"), Some(MASK));
    assert!(
        e.request_body
            .as_ref()
            .unwrap()
            .contains(r#""adminPassword":"[REDACTED]""#)
    );
    let resp = e.response.as_ref().unwrap();
    assert_eq!(resp.header("set-cookie"), Some(MASK));
    assert!(
        !resp.body.contains("eyJ") && resp.body.contains(MASK),
        "{}",
        resp.body
    );
    assert_eq!(
        resp.pointer("/properties/provisioningState").unwrap(),
        "Updating"
    );
    assert!(r.meta[0].arm);
    assert_eq!(r.meta[0].provider.as_deref(), Some("Microsoft.Network"));
    // base64 content is decoded; the poll is paired with the PUT.
    assert_eq!(
        r.entries[1]
            .response
            .as_ref()
            .unwrap()
            .pointer("/status")
            .unwrap(),
        "Succeeded"
    );
    assert_eq!(r.entries[1].role, Role::OperationStatus);
    // No content.text: not recorded, not an empty body.
    assert_eq!(r.meta[2].response_body, BodyState::NotRecorded);
    assert_eq!(r.entries[2].response.as_ref().unwrap().body_bytes, 120);
    assert_eq!(r.entries[2].role, Role::ResourcePoll);
    // The token endpoint is not ARM; its body is not kept, its secrets are learned anyway.
    assert!(!r.meta[3].arm);
    assert_eq!(r.meta[3].response_body, BodyState::NotRecorded);
    assert!(r.entries[3].response.as_ref().unwrap().body.is_empty());
    // Status 0: no response, the browser's error kept.
    assert!(r.entries[4].response.is_none());
    assert_eq!(
        r.entries[4].error.as_deref(),
        Some("net::ERR_CONNECTION_RESET")
    );
    assert!(
        r.notes.iter().any(|n| n.contains("pseudo-headers")),
        "{:?}",
        r.notes
    );
    // Present in this export, so not stripped by it.
    assert!(!r.stripped.response_strips("Set-Cookie"));
    assert!(!r.stripped.request_strips("authorization"));
    assert_eq!(r.flows.len(), 1);
    assert_eq!(r.flows[0].finals, vec![(2, PollChannel::Resource)]);
}

#[test]
fn har_batch_calls_are_unpacked() {
    let mut batch = har_entry("POST", "https://management.azure.com/batch?api-version=2020-06-01", 200, json!([]),
        Some(&json!({"responses": [
            {"name": "n1", "httpStatusCode": 200, "headers": {"x-ms-request-id": "r1"}, "content": {"name": "rg"}},
            {"name": "n2", "httpStatusCode": 404, "content": {"error": {"code": "ResourceGroupNotFound", "message": "m"}}},
        ]}).to_string()));
    batch["request"]["postData"] = json!({"mimeType": "application/json", "text": json!({"requests": [
        {"httpMethod": "GET", "name": "n1", "requestHeaderDetails": {"commandName": "x"}, "url": format!("{SUB}/resourcegroups/rg?api-version=2021-04-01")},
        {"httpMethod": "GET", "name": "n2", "relativeUrl": "/subscriptions/s/resourcegroups/gone?api-version=2021-04-01"},
    ]}).to_string()});
    let r = read("batch.har", &har(json!([batch])));
    assert_eq!(r.entries.len(), 3);
    assert!(!r.meta[0].arm);
    assert_eq!(r.meta[1].batch, Some(0));
    assert!(r.meta[1].arm && r.meta[2].arm);
    assert_eq!(
        r.entries[1]
            .response
            .as_ref()
            .unwrap()
            .header("x-ms-request-id"),
        Some("r1")
    );
    assert_eq!(
        r.entries[2].url,
        "https://management.azure.com/subscriptions/s/resourcegroups/gone?api-version=2021-04-01"
    );
    assert_eq!(r.entries[2].status(), Some(404));
    assert_eq!(r.entries[2].started_at, r.entries[0].started_at);
    assert_eq!(r.entries[2].seq, 3);
}

pub(super) fn proxy_file(vars: serde_json::Value, agent: &str) -> String {
    let vm = format!(
        "{SUB}/resourceGroups/rg/providers/Microsoft.Compute/disks/d?api-version=2022-07-02"
    );
    let aao = format!(
        "{SUB}/providers/Microsoft.Compute/locations/eastus/DiskOperations/op1?p=1\u{0026}api-version=2022-07-02"
    );
    json!({"Entries": [
        {"RequestUri": vm, "RequestMethod": "PUT",
         "RequestHeaders": {"User-Agent": agent, "Content-Type": "application/json"},
         "RequestBody": {"location": "eastus"},
         "StatusCode": 202,
         "ResponseHeaders": {"Azure-AsyncOperation": aao, "Location": format!("{aao}\u{0026}monitor=true"), "Retry-After": "2",
                             "Server": ["Microsoft-HTTPAPI/2.0", "Microsoft-HTTPAPI/2.0"]},
         "ResponseBody": null},
        {"RequestUri": aao, "RequestMethod": "GET", "RequestHeaders": {}, "RequestBody": null, "StatusCode": 200,
         "ResponseHeaders": {}, "ResponseBody": ["{\r\n", "  \"status\": \"Succeeded\"\r\n", "}"]},
        {"RequestUri": format!("{aao}\u{0026}monitor=true"), "RequestMethod": "GET", "RequestHeaders": {}, "RequestBody": null,
         "StatusCode": 200, "ResponseHeaders": {}, "ResponseBody": "null"},
        {"RequestUri": vm, "RequestMethod": "GET", "RequestHeaders": {}, "RequestBody": null, "StatusCode": 200,
         "ResponseHeaders": {"x-ms-correlation-request-id": "c"}, "ResponseBody": {"properties": {"provisioningState": "Succeeded"}}},
    ], "Variables": vars})
    .to_string()
}

#[test]
fn test_proxy_entries_and_flavours() {
    let r = read(
        "p.json",
        &proxy_file(json!({}), "azsdk-python-azure-mgmt-compute/28.0.0"),
    );
    assert_eq!(r.format, Format::TestProxy);
    let put = &r.entries[0];
    assert_eq!(
        put.request_body.as_deref(),
        Some(r#"{"location":"eastus"}"#)
    );
    let resp = put.response.as_ref().unwrap();
    assert_eq!(resp.header_all("server").len(), 2);
    assert!(
        resp.header("location")
            .unwrap()
            .contains("&api-version=2022-07-02&monitor=true")
    );
    assert_eq!(r.meta[0].response_body, BodyState::Recorded);
    assert!(resp.body.is_empty() && resp.json.is_none());
    assert_eq!(
        r.entries[1]
            .response
            .as_ref()
            .unwrap()
            .pointer("/status")
            .unwrap(),
        "Succeeded"
    );
    // The string "null" is a literal JSON null body.
    let null = r.entries[2].response.as_ref().unwrap();
    assert_eq!(
        (null.body.as_str(), &null.json),
        ("null", &Some(serde_json::Value::Null))
    );
    assert_eq!(
        r.stripped,
        Stripped {
            request: ["authorization", "x-ms-client-request-id"]
                .map(String::from)
                .into(),
            response: ["x-ms-request-id"].map(String::from).into(),
        }
    );
    let f = &r.flows[0];
    assert_eq!(f.polls, vec![(1, PollChannel::AzureAsyncOperation)]);
    assert_eq!(
        f.finals,
        vec![(2, PollChannel::Location), (3, PollChannel::Resource)]
    );
    assert_eq!(f.terminal.as_deref(), Some("Succeeded"));
    assert_eq!(
        r.entries.iter().map(|e| e.role).collect::<Vec<_>>(),
        [
            Role::Step,
            Role::OperationStatus,
            Role::LocationPoll,
            Role::ResourcePoll
        ]
    );
    let net = read(
        "n.json",
        &proxy_file(
            json!({"SUBSCRIPTION_ID": "s", "RandomSeed": "1"}),
            "azsdk-net-ResourceManager/1.0",
        ),
    );
    assert_eq!(net.stripped, Stripped::default());
    assert!(net.notes.iter().any(|n| n.contains(".NET")));
    let unknown = read("u.json", &proxy_file(json!({}), "azsdk-java-core/1.0"));
    assert!(unknown.stripped.response_strips("X-Ms-Request-Id"));
}

pub(super) const CASSETTE: &str = r#"interactions:
- request:
    body: '{"location": "eastus"}'
    headers:
      Accept:
      - application/json
      User-Agent:
      - azsdk-python-azure-mgmt-redis/12.0.0
    method: PUT
    uri: https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Cache/Redis/r?api-version=2020-06-01
  response:
    body:
      string: "{\"properties\": {\"provisioningState\":\
        \ \"Creating\"}}"
    headers:
      location:
      - https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Cache/Redis/r?api-version=2020-06-01
      x-ms-ratelimit-remaining-subscription-writes:
      - '1199'
    status:
      code: 201
      message: Created
- request:
    body: null
    headers: {}
    method: GET
    uri: https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Cache/Redis/r?api-version=2020-06-01
  response:
    body:
      string: !!binary |
        eyJwcm9wZXJ0aWVzIjogeyJwcm92aXNpb25pbmdTdGF0ZSI6ICJTdWNjZWVkZWQifX0=
    headers: {}
    status:
      code: 200
      message: OK
version: 1
"#;

#[test]
fn vcrpy_cassettes_are_read_with_positions_and_binary_bodies() {
    let r = read("c.yaml", CASSETTE);
    assert_eq!(r.format, Format::Vcrpy);
    assert_eq!(r.entries.len(), 2);
    assert_eq!(
        r.entries[0].request_body.as_deref(),
        Some(r#"{"location": "eastus"}"#)
    );
    let created = r.entries[0].response.as_ref().unwrap();
    assert_eq!(
        created.pointer("/properties/provisioningState").unwrap(),
        "Creating"
    );
    assert_eq!(
        r.entries[1]
            .response
            .as_ref()
            .unwrap()
            .pointer("/properties/provisioningState")
            .unwrap(),
        "Succeeded"
    );
    assert_eq!(r.entries[0].started_at, "");
    assert!(
        r.stripped.response_strips("Retry-After")
            && r.stripped.request_strips("x-ms-client-request-id")
    );
    assert!(
        !r.stripped
            .response_strips("x-ms-ratelimit-remaining-subscription-writes")
    );
    // Location = the resource URL (Redis 201): no Location flow, but provisioningState polling.
    assert_eq!(r.flows.len(), 1);
    assert_eq!(r.flows[0].polls, vec![(1, PollChannel::Resource)]);
    assert_eq!(r.flows[0].terminal.as_deref(), Some("Succeeded"));
    assert_eq!(r.entries[1].role, Role::ResourcePoll);
    // The same cassette serialised as JSON reads the same.
    let yaml: serde_yaml::Value = serde_yaml::from_str(&CASSETTE.replace(
        "!!binary |\n        eyJwcm9wZXJ0aWVzIjogeyJwcm92aXNpb25pbmdTdGF0ZSI6ICJTdWNjZWVkZWQifX0=",
        "'{\"properties\": {\"provisioningState\": \"Succeeded\"}}'",
    ))
    .unwrap();
    let j = read("c.json", &serde_json::to_string(&yaml).unwrap());
    assert_eq!(j.format, Format::Vcrpy);
    assert_eq!(j.flows, r.flows);
}

#[test]
fn evidence_beats_the_recorder_list() {
    let kept = CASSETTE.replacen(
        "      x-ms-ratelimit-remaining-subscription-writes:",
        "      x-ms-request-id:\n      - abc\n      x-ms-ratelimit-remaining-subscription-writes:",
        1,
    );
    let r = read("old.yaml", &kept);
    assert!(!r.stripped.response_strips("x-ms-request-id"));
    assert!(r.stripped.response_strips("retry-after"));
}
