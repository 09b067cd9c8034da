//! Real traffic, round three (issue 36): each class of false failure, false pass and miss the
//! triage of SDK recordings found, shown on recordings of our own (tests/fixtures/issue36,
//! whose README says where each comes from, and two files of tests/fixtures/recordings):
//!
//! - recorder artefacts: a region-prefixed zero request id is a placeholder (HDR-01 not
//!   judged), .NET's DateTime.MaxValue endTime is no time (OPS-08);
//! - a Location on a 201 names the resource: no LOC rule reads it, and a 201/200 with no
//!   operation header and no provisioningState is no operation ("not seen to end" is for
//!   operations);
//! - an Azure-AsyncOperation URL whose 202 reads carry Location = itself stays the operation
//!   resource: every read judged as one, and the operation ends where it says so;
//! - OPRES-04 compares decoded paths without case, once per operation;
//! - one defect, one failed rule: an RPaaS-style 202 status read fails OPRES-01 alone, a
//!   Location poll answered 202 without Location LOC-01 alone, a DELETE 202 without Location
//!   LOC-01 alone; live, a child DELETE answered 204 fails DEL-01 alone (the knob names it
//!   alone);
//! - SPEC-06 looks into discriminated subtypes; an exchange without api-version is held to no
//!   versioned spec file.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{QUICK_TIMEOUT, Scratch, read_report, results, rpconform};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `rpconform replay` on these files (and `extra` arguments): each recording's result, by
/// file name.
fn replay(files: &[&str], extra: &[&str]) -> Vec<(String, Value)> {
    let s = Scratch::new("replay-issue36");
    let mut args: Vec<String> = vec!["replay".into()];
    args.extend(files.iter().map(|f| fixture(f).display().to_string()));
    args.extend(extra.iter().map(|a| a.to_string()));
    args.extend(["--report-dir".into(), s.str("rep")]);
    let out = rpconform(&args, QUICK_TIMEOUT);
    assert!(matches!(out.code(), 0 | 1), "{}", out.tail(3000));
    let report = read_report(&s.join("rep"));
    results(&report)
        .iter()
        .map(|r| {
            let name = r["name"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches("replay::");
            (name.to_string(), r.clone())
        })
        .collect()
}

/// One recording's result.
fn one(files: &[&str], extra: &[&str], name: &str) -> Value {
    replay(files, extra)
        .into_iter()
        .find(|(n, _)| name.ends_with(n.as_str()) || n.ends_with(name))
        .map(|(_, r)| r)
        .unwrap_or_else(|| panic!("no result for {name}"))
}

/// A rule's verdict in a result: (outcome, passed, failed, not-judged reason).
fn verdict(r: &Value, rule: &str) -> (String, u64, u64, String) {
    r["verdicts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["rule"] == rule)
        .map_or(("absent".into(), 0, 0, String::new()), |v| {
            (
                v["outcome"].as_str().unwrap_or("").to_string(),
                v["passed"].as_u64().unwrap_or(0),
                v["failed"].as_u64().unwrap_or(0),
                v["not_judged"].as_str().unwrap_or("").to_string(),
            )
        })
}

/// The recording's operation count note: (operations, seen to end, not).
fn operations(r: &Value) -> (u64, u64, u64) {
    let note = r["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|n| n.contains(" operations ("))
        .unwrap_or_else(|| panic!("no operation note: {}", r["notes"]));
    let nums: Vec<u64> = note
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    // "{format} format, {n} entries, {arm} ARM exchanges judged, {ops} operations ({end} seen
    // to end, {not} not)"
    let k = nums.len();
    (nums[k - 3], nums[k - 2], nums[k - 1])
}

const GO_STYLE: &str = "issue36/go-style-workspace.json";

#[test]
fn recorder_placeholders_are_never_evidence() {
    let r = one(&[GO_STYLE], &[], GO_STYLE);
    // Every answer carries `southeastasia:00000000-…`: the recorder's, not the RP's reuse.
    let (o, _, f, why) = verdict(&r, "HDR-01");
    assert_eq!((o.as_str(), f), ("not-judged", 0), "{why}");
    assert!(
        why.contains("placeholder `southeastasia:00000000-"),
        "{why}"
    );
    // A running operation's endTime 9999-12-31T23:59:59.9999999Z is no time: the real one
    // that follows does not move it back.
    let (o, p, f, _) = verdict(&r, "OPS-08");
    assert_eq!((o.as_str(), f), ("passed", 0));
    assert!(p >= 3, "every read of the operation judged: {p}");
}

#[test]
fn an_aao_url_keeps_its_role_when_its_202_reads_name_it_as_location() {
    let r = one(&[GO_STYLE], &[], GO_STYLE);
    // Three 202 {status: Accepted} reads (Location = the same URL), then 200 Succeeded, and
    // a second operation read three times: seven status reads, each judged as one. The 202s
    // fail OPRES-01 alone (AAO-02 restates it; each carries its Location, so LOC-01 passes).
    assert_eq!(verdict(&r, "OPRES-01").1 + verdict(&r, "OPRES-01").2, 7);
    assert_eq!(verdict(&r, "OPRES-01").2, 3);
    for rule in ["AAO-02", "LOC-01", "LOC-05"] {
        assert_ne!(
            verdict(&r, rule).0,
            "failed",
            "{rule}: {:?}",
            verdict(&r, rule)
        );
    }
    assert_eq!(verdict(&r, "AAO-02").1, 4, "the four 200 reads");
    assert_eq!(verdict(&r, "OPRES-03").0, "passed");
    // Both operations seen to end; the two synchronous creates (201, no provisioningState,
    // one with a bare-path Location) are no operations.
    assert_eq!(operations(&r), (2, 2, 0));
    let failed: BTreeSet<String> = r["verdicts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["outcome"] == "failed")
        .filter_map(|v| v["rule"].as_str().map(str::to_string))
        .collect();
    assert_eq!(failed, BTreeSet::from(["OPRES-01".to_string()]));
}

#[test]
fn a_location_on_a_201_names_the_resource_and_a_synchronous_create_is_no_operation() {
    // ManagedIdentity answers its create 201 with a bare-path Location and no
    // provisioningState: no LOC-02 failure, and no operation left "not seen to end".
    let mi = "recordings/resource-15.0.0__test_mgmt_resource_deployment_scripts.test_deployment_scripts.yaml";
    let r = one(&[mi], &[], mi);
    assert_ne!(
        verdict(&r, "LOC-02").0,
        "failed",
        "{:?}",
        verdict(&r, "LOC-02")
    );
    assert_eq!(operations(&r).2, 0, "{}", r["notes"]);
    // SQL job agents: credentials, target groups, jobs and steps created 201 without
    // provisioningState, a job started 200 with a Location naming the execution it made.
    let sql = "recordings/sql-1.0.0__test_cli_mgmt_sql_job.test_job.yaml";
    let r = one(&[sql], &[], sql);
    assert_eq!(operations(&r), (8, 8, 0), "{}", r["notes"]);
    assert_ne!(
        verdict(&r, "ACT-01").0,
        "failed",
        "{:?}",
        verdict(&r, "ACT-01")
    );
}

#[test]
fn opres_04_reads_paths_decoded_without_case_once_per_operation() {
    // `…/locations/West%20US/operationResults/{id}` read three times, its `id`
    // `…/locations/West US/operationresults/{id}`: one check, passed.
    let r = one(&[GO_STYLE], &[], GO_STYLE);
    assert_eq!(
        verdict(&r, "OPRES-04"),
        ("passed".into(), 2, 0, String::new())
    );
    // Network's operation resources carry no id: one failure per operation, not per read.
    let net =
        "recordings/network-21.0.0__test_cli_mgmt_network_base.pyTestMgmtNetworktest_network.json";
    let r = one(&[net], &[], net);
    let rec = rpconform::replay::read_recording(
        &fixture(net),
        &rpconform::replay::ReadOptions {
            format: None,
            body_cap: 16 << 20,
            json_budget: 1 << 30,
            arm_hosts: Vec::new(),
        },
    )
    .expect("reads");
    let status_urls: BTreeSet<String> = rec
        .entries
        .iter()
        .filter(|x| x.role == rpconform::http::Role::OperationStatus && x.status() == Some(200))
        .map(|x| rpconform::lro::path_key(&x.url))
        .collect();
    let reads = rec
        .entries
        .iter()
        .filter(|x| x.role == rpconform::http::Role::OperationStatus)
        .count();
    assert!(
        reads > status_urls.len(),
        "some operation is read more than once"
    );
    assert_eq!(verdict(&r, "OPRES-04").2, status_urls.len() as u64);
}

#[test]
fn an_rpaas_style_status_read_fails_one_root_rule() {
    // Databricks (azure-mgmt-databricks 1.0.0, cut): the workspace create's status URL
    // answers 202 {status: Accepted} without Location before 200 Succeeded; the DELETE's
    // Location (the same kind of URL) answers the same. Each 202 status read fails OPRES-01
    // alone; each 202 Location poll fails LOC-01 alone (LOC-05 restates it).
    let db = "issue36/databricks-1.0.0__test_cli_mgmt_databricks.test_databricks.cut.yaml";
    let r = one(&[db], &[], db);
    assert_eq!(verdict(&r, "OPRES-01").2, 2);
    assert_eq!(verdict(&r, "AAO-02").2, 0);
    assert_eq!(
        verdict(&r, "LOC-01").2,
        2,
        "the DELETE's two Location polls"
    );
    let (o, _, _, why) = verdict(&r, "LOC-05");
    assert_eq!(o, "not-judged");
    assert!(
        why.starts_with("LOC-01 failed at exchange #") && why.contains("only restates"),
        "{why}"
    );
    assert_eq!(operations(&r), (2, 2, 0));
    // AppConfiguration's DELETE answered 202 with Azure-AsyncOperation and no Location:
    // LOC-01 alone (DEL-01 restates it).
    let ac = "recordings/appconfiguration-1.0.1__test_cli_mgmt_appconfiguration.test_appconfiguration.yaml";
    let r = one(&[ac], &[], ac);
    assert_eq!(verdict(&r, "LOC-01").2, 1);
    assert_ne!(
        verdict(&r, "DEL-01").0,
        "failed",
        "{:?}",
        verdict(&r, "DEL-01")
    );
}

#[test]
fn a_child_delete_answered_204_fails_del_01_alone() {
    let faults = rpconform(&["serve", "--list-faults"], QUICK_TIMEOUT);
    let line = faults
        .stdout
        .lines()
        .find(|l| l.starts_with("child-delete-sync-204 "))
        .unwrap_or_else(|| panic!("{}", faults.tail(2000)));
    let named: Vec<&str> = line
        .split_whitespace()
        .filter(|w| w.contains('-') && w.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        .collect();
    assert_eq!(named, ["DEL-01"], "{line}");
    // Live, on the tests that state ETAG-18, ETAG-20, ETAG-22 and NEST-03 for a child.
    let s = Scratch::new("child-delete-204");
    let mut args = vec![
        "run",
        "suites",
        "--fault",
        "child-delete-sync-204",
        "--strict",
        "--hold-reads",
        "3",
        "--report-dir",
    ];
    let dir = s.str("rep");
    args.push(&dir);
    args.extend(common::FAST);
    for f in [
        "etag::delete-table::gadgets",
        "etag::delete-if-match-current::gadgets",
        "headers-and-errors::nested-patch-and-delete::gadgets",
    ] {
        args.extend(["-f", f]);
    }
    let out = rpconform(&args, common::RUN_TIMEOUT);
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let report = read_report(&s.join("rep"));
    assert_eq!(
        common::failed_rules(&report),
        BTreeSet::from(["DEL-01".to_string()])
    );
    let judged_past: Vec<String> = common::verdicts(&report)
        .filter(|v| v["outcome"] == "not-judged")
        .filter(|v| {
            v["not_judged"]
                .as_str()
                .is_some_and(|w| w.starts_with("DEL-01 failed at exchange #"))
        })
        .filter_map(|v| v["rule"].as_str().map(str::to_string))
        .collect();
    for rule in ["ETAG-18", "ETAG-20", "ETAG-22"] {
        assert!(
            judged_past.iter().any(|r| r == rule),
            "{rule}: {judged_past:?}"
        );
    }
}

#[test]
fn spec_06_looks_into_subtypes_and_an_exchange_without_api_version_is_not_matched() {
    let spec = fixture("issue36/spec/eventgrid-like.json")
        .display()
        .to_string();
    let real = "issue36/eventgrid-9.0.0__test_azure_mgmt_eventgrid.test_user_topics.cut.yaml";
    let drift = "issue36/eventgrid-like-secret-returned.json";
    let rs = replay(&[real, drift], &["--openapi", &spec]);
    let get = |n: &str| {
        rs.iter()
            .find(|(name, _)| n.ends_with(name.as_str()))
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| panic!("no result for {n}"))
    };
    // Event Grid answers its WebHook subscription with `endpointUrl: null`: the secret of the
    // WebHook subtype, judged and kept.
    let r = get(real);
    assert_eq!(
        verdict(&r, "SPEC-06").0,
        "passed",
        "{:?}",
        verdict(&r, "SPEC-06")
    );
    // An RP that returns it fails, once: not where the destination is an Event Hub (whose
    // `endpointUrl` is no secret), not on the GET without api-version (no versioned file
    // describes it).
    let r = get(drift);
    let (o, _, f, _) = verdict(&r, "SPEC-06");
    assert_eq!((o.as_str(), f), ("failed", 1));
    let finding = r["verdicts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["rule"] == "SPEC-06")
        .map(|v| v["failures"][0].clone())
        .unwrap_or_default();
    assert_eq!(finding["exchange"], 1, "{finding}");
    assert!(
        finding["seen"]
            .as_str()
            .is_some_and(|s| s.contains("/properties/destination/properties/endpointUrl")),
        "{finding}"
    );
    let (_, passed, failed, _) = verdict(&r, "SPEC-01");
    assert_eq!(
        (passed, failed),
        (3, 0),
        "the GET without api-version is not matched"
    );
}
