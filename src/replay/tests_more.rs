//! Pairing, error, cap and writer tests on small hand-made recordings.

use std::path::Path;

use serde_json::json;

use super::tests::{CASSETTE, SUB, har, har_entry, proxy_file, read, read_with};
use super::*;
use crate::http::Role;

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
    // The ManagedIdentity 201 (no operation header, no provisioningState, a bare-path
    // Location naming itself) is a synchronous create: no operation, none left "not seen to
    // end".
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
fn an_aao_url_keeps_its_role_when_its_202_reads_name_it_as_location() {
    let ws = format!(
        "{SUB}/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/w?api-version=1"
    );
    let op = format!(
        "{SUB}/providers/Microsoft.MachineLearningServices/locations/eastus/workspaceOperationsStatus/o?api-version=1"
    );
    let accepted = || {
        (
            "GET",
            op.clone(),
            202,
            vec![("Location", op.clone())],
            json!({"status": "Accepted"}),
        )
    };
    let (r, flows) = flows_of(vec![
        (
            "PUT",
            ws.clone(),
            201,
            vec![("Azure-AsyncOperation", op.clone())],
            json!({"properties": {"provisioningState": "Creating"}}),
        ),
        accepted(),
        accepted(),
        accepted(),
        (
            "GET",
            op.clone(),
            200,
            vec![],
            json!({"status": "Succeeded"}),
        ),
    ]);
    assert_eq!(flows.len(), 1);
    assert_eq!(
        flows[0].polls,
        (1..=4)
            .map(|i| (i, PollChannel::AzureAsyncOperation))
            .collect::<Vec<_>>()
    );
    assert_eq!(flows[0].terminal.as_deref(), Some("Succeeded"));
    assert!(
        r.entries[1..]
            .iter()
            .all(|x| x.role == Role::OperationStatus)
    );
}

#[test]
fn a_resource_read_while_the_operation_runs_is_a_watch_not_a_poll() {
    let res =
        format!("{SUB}/resourceGroups/rg/providers/Microsoft.Network/natGateways/n?api-version=1");
    let op =
        format!("{SUB}/providers/Microsoft.Network/locations/eastus/operations/o?api-version=1");
    let running = json!({"properties": {"provisioningState": "Updating"}});
    let (r, flows) = flows_of(vec![
        (
            "PUT",
            res.clone(),
            201,
            vec![("Azure-AsyncOperation", op.clone())],
            running.clone(),
        ),
        ("GET", res.clone(), 200, vec![], running),
        ("GET", op, 200, vec![], json!({"status": "Succeeded"})),
        (
            "GET",
            res,
            200,
            vec![],
            json!({"properties": {"provisioningState": "Succeeded"}}),
        ),
    ]);
    assert_eq!(flows[0].polls, vec![(2, PollChannel::AzureAsyncOperation)]);
    assert_eq!(flows[0].finals, vec![(3, PollChannel::Resource)]);
    assert_eq!(flows[0].watches, vec![1]);
    assert_eq!(r.entries[1].role, Role::Step);
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
        throttled: Vec::new(),
        throttled_times: 0,
        retried: Vec::new(),
        front_door: None,
        role: Role::Cleanup,
        surface: crate::http::Surface::Other,
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

#[test]
fn bare_path_request_urls_of_older_session_records_are_judged_as_arm() {
    let vnet = format!(
        "/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v?api-version=2023-01-01"
    );
    let (r, _) = flows_of(vec![(
        "GET",
        vnet.clone(),
        200,
        vec![("x-ms-request-id", "r-1".into())],
        json!({"id": vnet.split('?').next().unwrap(), "name": "v", "type": "Microsoft.Network/virtualNetworks"}),
    )]);
    assert_eq!(
        r.entries[0].url,
        format!("https://management.azure.com{vnet}")
    );
    assert!(r.meta[0].arm, "judged as ARM traffic");
    assert!(
        r.notes.iter().any(|n| n.contains("bare paths")),
        "{:?}",
        r.notes
    );
}
