//! Reader, redaction, pairing and writer tests on small hand-made recordings.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::http::{MASK, Role};

const JWT: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBsYXktdGVzdCJ9.c2lnbmF0dXJlLXJlcGxheQ";
const SUB: &str = "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000";

fn read(name: &str, text: &str) -> Recording {
    read_with(name, text, &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn read_with(name: &str, text: &str, opts: &ReadOptions) -> Result<Recording, ReplayError> {
    read_recording_from(Path::new(name), text.as_bytes(), opts)
}

fn har(entries: serde_json::Value) -> String {
    json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}})
        .to_string()
}

fn har_entry(
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

fn proxy_file(vars: serde_json::Value, agent: &str) -> String {
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

const CASSETTE: &str = r#"interactions:
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

/// method, URL, status, response headers, response body.
type Step<'a> = (
    &'a str,
    String,
    u16,
    Vec<(&'a str, String)>,
    serde_json::Value,
);

fn flows_of(entries: Vec<Step<'_>>) -> (Recording, Vec<FlowSketch>) {
    let list: Vec<serde_json::Value> = entries
        .into_iter()
        .map(|(m, url, status, headers, body)| {
            let h: serde_json::Map<String, serde_json::Value> = headers
                .into_iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect();
            json!({"RequestUri": url, "RequestMethod": m, "RequestHeaders": {}, "RequestBody": null,
                   "StatusCode": status, "ResponseHeaders": h, "ResponseBody": body})
        })
        .collect();
    let r = read(
        "f.json",
        &json!({"Entries": list, "Variables": {}}).to_string(),
    );
    let flows = r.flows.clone();
    (r, flows)
}

#[test]
fn location_chains_relative_locations_and_raw_spaces() {
    let rg = format!("{SUB}/resourcegroups/rg?api-version=2021-04-01");
    let op = format!("{SUB}/operationresults/abc?api-version=2021-04-01");
    let op2 = format!("{SUB}/operationresults/abc2?api-version=2021-04-01");
    let app = format!(
        "{SUB}/resourceGroups/rg/providers/Microsoft.Solutions/applications/a?api-version=2019-07-01"
    );
    let aao_raw = format!(
        "{SUB}/providers/Microsoft.Solutions/locations/East US/operationStatuses/x?api-version=2019-07-01"
    );
    let aao_enc = aao_raw.replace("East US", "East%20US");
    let (r, flows) = flows_of(vec![
        ("DELETE", rg.clone(), 202, vec![("Location", op.clone())], json!(null)),
        ("GET", op.clone(), 202, vec![("Location", op2.clone())], json!(null)),
        ("GET", op2.clone(), 200, vec![], json!(null)),
        ("PUT", app.clone(), 201, vec![("Azure-AsyncOperation", aao_raw)], json!({"properties": {"provisioningState": "Accepted"}})),
        ("GET", aao_enc, 200, vec![], json!({"status": "failed"})),
        ("GET", app.clone(), 200, vec![], json!({"properties": {"provisioningState": "Failed"}})),
        ("PUT", format!("{SUB}/resourcegroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u?api-version=2018-11-30"),
            201, vec![("Location", "/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u".into())],
            json!({"properties": {}})),
        ("GET", op, 200, vec![], json!(null)),
    ]);
    assert_eq!(flows.len(), 2, "{flows:#?}");
    // A re-read of a Location URL after its flow ended (#7) is still a read of that operation.
    assert_eq!(
        flows[0].polls,
        vec![
            (1, PollChannel::Location),
            (2, PollChannel::Location),
            (7, PollChannel::Location)
        ]
    );
    assert_eq!(flows[0].terminal.as_deref(), Some("200"));
    assert_eq!(flows[0].resource_url.as_deref(), Some(rg.as_str()));
    assert_eq!(flows[1].polls, vec![(4, PollChannel::AzureAsyncOperation)]);
    assert_eq!(flows[1].terminal.as_deref(), Some("failed"));
    assert_eq!(flows[1].finals, vec![(5, PollChannel::Resource)]);
    assert_eq!(r.entries[7].role, Role::LocationPoll);
    assert_eq!(r.meta[4].provider.as_deref(), Some("Microsoft.Solutions"));
}

#[test]
fn operation_location_polls_are_status_monitor_reads() {
    let res = format!(
        "{SUB}/resourceGroups/rg/providers/Contoso.Widgets/widgets/w?api-version=2024-01-01"
    );
    let op = "https://management.azure.com/providers/Contoso.Widgets/operations/o1?api-version=2024-01-01".to_string();
    let (r, flows) = flows_of(vec![
        (
            "PUT",
            res.clone(),
            201,
            vec![("Operation-Location", op.clone())],
            json!({}),
        ),
        ("GET", op.clone(), 200, vec![], json!({"status": "Running"})),
        ("GET", op, 200, vec![], json!({"status": "Succeeded"})),
        ("GET", res, 200, vec![], json!({})),
    ]);
    assert_eq!(
        flows[0].polls,
        vec![
            (1, PollChannel::OperationLocation),
            (2, PollChannel::OperationLocation)
        ]
    );
    assert_eq!(flows[0].finals, vec![(3, PollChannel::Resource)]);
    assert_eq!(r.entries[1].role, Role::MonitorPoll);
}

#[test]
fn malformed_files_give_positioned_errors() {
    let e = read_with(
        "bad.json",
        "{\"Entries\": [\n  {\"RequestUri\": 5}\n]}",
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert_eq!((e.line, e.column), (2, 18), "{e}");
    assert!(
        e.to_string()
            .starts_with("bad.json:2:18: invalid type: integer `5`, expected a string"),
        "{e}"
    );
    let e = read_with(
        "m.json",
        "{\"Entries\": [{\"RequestMethod\": \"GET\", \"StatusCode\": 200}]}",
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("missing field `RequestUri`"), "{e}");
    let e = read_with(
        "t.har",
        "{\"log\": {\"entries\": [",
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("ends too early"), "{e}");
    let e = read_with("x.json", "{\"other\": 1}", &ReadOptions::default()).unwrap_err();
    assert!(e.message.contains("not a recording"), "{e}");
    let e = read_with(
        "c.yaml",
        "interactions:\n- request:\n    method: GET\n  response: {}\n",
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert_eq!((e.line, e.column), (3, 5), "{e}");
    assert!(e.message.contains("has no `uri`"), "{e}");
    let e = read_with(
        "c.yaml",
        "interactions:\n- request: [unclosed\n",
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert!(e.message.starts_with("invalid YAML") && e.line >= 2, "{e}");
    let bad_code = CASSETTE.replace("code: 201", "code: abc");
    let e = read_with("c.yaml", &bad_code, &ReadOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("c.yaml:21:13: expected an HTTP status code"),
        "{e}"
    );
    let forced = ReadOptions {
        format: Some(Format::TestProxy),
        ..Default::default()
    };
    let e = read_with("h.json", &har(json!([])), &forced).unwrap_err();
    assert!(e.message.contains("given as test-proxy"), "{e}");
    let e = read_with("c.yaml", CASSETTE, &forced).unwrap_err();
    assert!(e.message.contains("not JSON"), "{e}");
    assert!(
        read_with("e.json", " \n", &ReadOptions::default())
            .unwrap_err()
            .message
            .contains("empty")
    );
    let deep = format!("interactions:\n- {}x\n", "- ".repeat(100_000));
    assert!(read_with("d.yaml", &deep, &ReadOptions::default()).is_err());
    let deep_json = format!(
        "{{\"Entries\": [{{\"RequestBody\": {}1{}}}]}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(read_with("d.json", &deep_json, &ReadOptions::default()).is_err());
    assert!(
        read_with(
            "b.yaml",
            "interactions:\n- \u{0}\u{1}",
            &ReadOptions::default()
        )
        .is_err()
    );
    let not_utf8 = read_recording_from(
        Path::new("n.yaml"),
        &b"interactions:\n- \xff\xfe"[..],
        &ReadOptions::default(),
    );
    assert!(not_utf8.unwrap_err().message.contains("UTF-8"));
}

#[test]
fn bodies_over_the_cap_are_dropped_with_a_note() {
    let opts = ReadOptions {
        body_cap: 10,
        ..Default::default()
    };
    let url = format!("{SUB}/resourceGroups/rg?api-version=2021-04-01");
    let r = read_with(
        "cap.har",
        &har(json!([har_entry(
            "GET",
            &url,
            200,
            json!([]),
            Some("{\"name\": \"0123456789\"}")
        )])),
        &opts,
    )
    .unwrap();
    // 22 bytes, 26 as escaped in the file: the file's length is what the stream measured.
    assert_eq!(r.meta[0].response_body, BodyState::OverCap { bytes: 26 });
    assert!(
        r.notes.iter().any(|n| n.contains("over the body cap")),
        "{:?}",
        r.notes
    );
}

#[test]
fn written_har_reads_back_the_same() {
    let src = read(
        "p.json",
        &proxy_file(json!({}), "azsdk-python-azure-mgmt-compute/28.0.0"),
    );
    let mut exchanges = src.entries.clone();
    exchanges[0].started_at = "2024-05-01T10:00:00.123Z".into();
    exchanges[0].elapsed_ms = 42;
    exchanges[1].role = Role::Setup;
    exchanges[3].foreign = true;
    exchanges.push(crate::http::Exchange {
        seq: 99,
        role: Role::Cleanup,
        method: "DELETE".into(),
        url: format!("{SUB}/resourceGroups/rg?api-version=2021-04-01"),
        request_headers: vec![("x-ms-client-request-id".into(), "c1".into())],
        request_body: Some(String::new()),
        response: None,
        error: Some("timed out".into()),
        started_at: "2024-05-01T10:00:01.000Z".into(),
        elapsed_ms: 60_000,
        foreign: false,
    });
    let mut out = Vec::new();
    write_har(&exchanges, &mut out).unwrap();
    let back = read("run.har", std::str::from_utf8(&out).unwrap());
    assert_eq!(back.format, Format::Har);
    assert_eq!(back.stripped, Stripped::default());
    let a = serde_json::to_value(&exchanges).unwrap();
    let b = serde_json::to_value(&back.entries).unwrap();
    assert_eq!(a, b);
    for (x, y) in exchanges.iter().zip(&back.entries) {
        assert_eq!(
            x.response.as_ref().map(|r| &r.json),
            y.response.as_ref().map(|r| &r.json)
        );
    }
    assert!(!back.meta[3].arm, "a foreign exchange is not judged");
    assert!(back.meta[0].arm);
}

#[test]
fn arm_urls_and_namespaces() {
    assert!(is_arm_url(&format!("{SUB}/resourceGroups/rg"), &[]));
    assert!(is_arm_url(
        "https://eastus.management.azure.com/providers/Microsoft.Compute/operations",
        &[]
    ));
    assert!(is_arm_url(
        "https://management.usgovcloudapi.net/subscriptions/s",
        &[]
    ));
    assert!(is_arm_url("http://127.0.0.1:8080/subscriptions/s", &[]));
    assert!(!is_arm_url(
        "https://login.microsoftonline.com/t/oauth2/token",
        &[]
    ));
    assert!(!is_arm_url(
        "https://management.azure.com/batch?api-version=1",
        &[]
    ));
    assert!(!is_arm_url("https://myrp.example.com/subscriptions/s", &[]));
    assert!(is_arm_url(
        "https://myrp.example.com/subscriptions/s",
        &["myrp.example.com".into()]
    ));
    assert_eq!(
        provider_namespace(&format!("{SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/providers/Microsoft.Insights/diagnosticSettings/d?api-version=1")).as_deref(),
        Some("Microsoft.Insights")
    );
    assert_eq!(
        provider_namespace(&format!("{SUB}/resourcegroups/rg?api-version=1")),
        None
    );
    assert_eq!(
        provider_namespace(&format!("{SUB}/providers?api-version=1")),
        None
    );
}

#[test]
fn provider_spelling_is_the_first_seen() {
    let a = format!(
        "{SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v?api-version=1"
    );
    let b = format!(
        "{SUB}/resourceGroups/rg/providers/microsoft.network/virtualNetworks/v2?api-version=1"
    );
    let (r, _) = flows_of(vec![
        ("GET", a, 200, vec![], json!({})),
        ("GET", b, 200, vec![], json!({})),
    ]);
    assert_eq!(r.meta[1].provider.as_deref(), Some("Microsoft.Network"));
}
