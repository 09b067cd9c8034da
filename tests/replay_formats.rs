//! The replay readers on real recordings (tests/fixtures/recordings, from the Azure SDK for
//! Python sdists): every file reads, fast; what the reader and its poll pairing find matches the
//! independent counter (`count.py` → `expected-counts.json`); secrets in them are masked; and a
//! large generated HAR is read in bounded memory.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rpconform::http::{Exchange, MASK, Role};
use rpconform::replay::{
    BodyState, Format, PollChannel, ReadOptions, Recording, read_recording, write_har,
};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recordings")
}

fn fixture_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            (n.ends_with(".json") || n.ends_with(".yaml")) && n != "expected-counts.json"
        })
        .collect();
    v.sort();
    v
}

fn read_all() -> Vec<Recording> {
    fixture_files()
        .iter()
        .map(|p| read_recording(p, &ReadOptions::default()).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

fn retry_after(ex: &Exchange) -> Vec<&str> {
    ex.response
        .as_ref()
        .map_or_else(Vec::new, |r| r.header_all("retry-after"))
}

fn whole_seconds(v: &str) -> Option<u64> {
    let t = v.trim();
    (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .then(|| t.parse().ok())
        .flatten()
}

/// The counter's numbers, from what the reader read and paired.
fn counts(r: &Recording) -> Value {
    let resp202: Vec<&Exchange> = r
        .entries
        .iter()
        .filter(|e| e.status() == Some(202))
        .collect();
    let aao: Vec<usize> = r
        .flows
        .iter()
        .flat_map(|f| f.polls.iter().chain(&f.finals))
        .filter(|(_, c)| *c == PollChannel::AzureAsyncOperation)
        .map(|(i, _)| *i)
        .collect();
    let mut statuses: BTreeMap<String, u64> = BTreeMap::new();
    for &i in &aao {
        *statuses
            .entry(r.entries[i].status().unwrap().to_string())
            .or_default() += 1;
    }
    json!({
        "entries": r.entries.len(),
        "responses_202": resp202.len(),
        "responses_202_without_location": resp202
            .iter()
            .filter(|e| e.response.as_ref().unwrap().header("location").is_none())
            .count(),
        "retry_after_below_10_on_202": resp202
            .iter()
            .flat_map(|e| retry_after(e))
            .filter(|v| whole_seconds(v).is_some_and(|s| s < 10))
            .count(),
        "non_integer_retry_after": r
            .entries
            .iter()
            .flat_map(retry_after)
            .filter(|v| whole_seconds(v).is_none())
            .count(),
        "aao_reads": aao.len(),
        "aao_read_statuses": statuses,
    })
}

#[test]
fn every_fixture_reads_fast_and_matches_the_independent_counter() {
    let start = Instant::now();
    let recordings = read_all();
    let took = start.elapsed();
    assert!(recordings.len() >= 25, "{} fixtures", recordings.len());
    assert!(
        took < Duration::from_secs(10),
        "reading all fixtures took {took:?}"
    );
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("expected-counts.json")).unwrap(),
    )
    .unwrap();
    let mut formats = BTreeMap::new();
    let mut namespaces = std::collections::BTreeSet::new();
    eprintln!("read {} fixtures in {took:?}", recordings.len());
    eprintln!(
        "| fixture | format | entries | ARM | flows | polls AAO/Loc/Res | finals | stripped (response) | namespaces |"
    );
    eprintln!("|---|---|---|---|---|---|---|---|---|");
    for r in &recordings {
        let name = r.path.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(counts(r), expected[&name], "{name}");
        *formats.entry(r.format.name()).or_insert(0) += 1;
        let ns: std::collections::BTreeSet<&str> = r
            .meta
            .iter()
            .filter(|m| m.arm)
            .filter_map(|m| m.provider.as_deref())
            .collect();
        namespaces.extend(ns.iter().map(|s| s.to_ascii_lowercase()));
        let polls = |c: PollChannel| {
            r.flows
                .iter()
                .flat_map(|f| &f.polls)
                .filter(|(_, x)| *x == c)
                .count()
        };
        eprintln!(
            "| {name} | {} | {} | {} | {} | {}/{}/{} | {} | {} | {} |",
            r.format,
            r.entries.len(),
            r.meta.iter().filter(|m| m.arm).count(),
            r.flows.len(),
            polls(PollChannel::AzureAsyncOperation),
            polls(PollChannel::Location),
            polls(PollChannel::Resource),
            r.flows.iter().map(|f| f.finals.len()).sum::<usize>(),
            r.stripped
                .response
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            ns.into_iter().collect::<Vec<_>>().join(", "),
        );
    }
    assert!(
        formats["vcrpy"] >= 10 && formats["test-proxy"] >= 5,
        "{formats:?}"
    );
    assert!(namespaces.len() >= 10, "{namespaces:?}");
}

fn by_name(recordings: &[Recording], part: &str) -> Recording {
    recordings
        .iter()
        .find(|r| r.path.to_string_lossy().contains(part))
        .unwrap_or_else(|| panic!("no fixture {part}"))
        .clone()
}

#[test]
fn what_the_recorders_stripped_is_known() {
    let all = read_all();
    for r in &all {
        match r.format {
            Format::Vcrpy => assert!(r.stripped.request_strips("authorization")),
            Format::TestProxy => {
                assert!(
                    r.stripped.response_strips("x-ms-request-id"),
                    "{:?}",
                    r.path
                );
                assert!(!r.stripped.response_strips("retry-after"));
                assert!(
                    r.notes.iter().any(|n| n.contains("Python")),
                    "{:?}",
                    r.notes
                );
            }
            Format::Har => unreachable!(),
        }
    }
    // The 2017 AKS cassette predates the filter: its x-ms-request-id headers are evidence.
    let old = by_name(&all, "test_mgmt_containerservice.test_container");
    assert!(!old.stripped.response_strips("x-ms-request-id"));
    assert!(old.stripped.response_strips("retry-after"));
    let aks = by_name(&all, "test_mgmt_aks.test_managed_clusters");
    assert!(aks.stripped.response_strips("x-ms-request-id"));
    assert!(aks.stripped.response_strips("Retry-After"));
}

#[test]
fn real_flows_are_paired_and_attributed() {
    let all = read_all();
    // Token traffic in the test-proxy files is recorded but is not ARM.
    let disks = by_name(
        &all,
        "compute-28.0.0__test_mgmt_compute_disks.pyTestMgmtComputetest_compute_disks",
    );
    let login: Vec<usize> = (0..disks.entries.len())
        .filter(|&i| disks.entries[i].url.contains("login.microsoftonline.com"))
        .collect();
    assert!(!login.is_empty());
    assert!(login.iter().all(|&i| !disks.meta[i].arm));
    // Compute: AAO until terminal, then the `?monitor=true` Location or the resource.
    assert!(
        disks
            .flows
            .iter()
            .any(|f| f.finals.iter().any(|(_, c)| *c == PollChannel::Location))
    );
    assert!(
        disks
            .flows
            .iter()
            .all(|f| f.terminal.as_deref() == Some("Succeeded"))
    );
    // Solutions: a 202 poll without Location still belongs to its operation.
    let app = by_name(
        &all,
        "test_mgmt_resource_managed_application.test_application",
    );
    let bare = app
        .entries
        .iter()
        .position(|e| {
            e.status() == Some(202) && e.response.as_ref().unwrap().header("location").is_none()
        })
        .unwrap();
    assert!(
        app.flows
            .iter()
            .any(|f| f.polls.iter().any(|(i, _)| *i == bare)),
        "{:#?}",
        app.flows
    );
    // ManagedIdentity's relative Location on 201 is the resource, not an operation.
    let scripts = by_name(
        &all,
        "resource-15.0.0__test_mgmt_resource_deployment_scripts",
    );
    let uai = scripts
        .entries
        .iter()
        .position(|e| e.method == "PUT" && e.url.contains("userAssignedIdentities"))
        .unwrap();
    assert!(scripts.flows.iter().all(|f| f.initial != uai));
    // deploymentScripts ends `failed`, in lower case, and is still seen as the end.
    let json = by_name(
        &all,
        "resource-21.2.0__test_mgmt_resource_deployment_scripts",
    );
    assert!(
        json.flows
            .iter()
            .any(|f| f.terminal.as_deref() == Some("failed")),
        "{:#?}",
        json.flows
    );
    // Redis 201 Location = the resource: provisioningState polling instead.
    let redis = by_name(&all, "redis-12.0.0");
    assert!(redis.flows.iter().any(|f| f.method == "PUT"
        && f.polls.iter().all(|(_, c)| *c == PollChannel::Resource)
        && !f.polls.is_empty()));
    // Roles follow the pairing; polls are attributed to the RP that handed out their URL.
    for r in &all {
        for f in &r.flows {
            for &(i, c) in f.polls.iter().chain(&f.finals) {
                let want = match c {
                    PollChannel::AzureAsyncOperation => Role::OperationStatus,
                    PollChannel::Location => Role::LocationPoll,
                    PollChannel::OperationLocation => Role::MonitorPoll,
                    PollChannel::Resource => Role::ResourcePoll,
                };
                assert_eq!(r.entries[i].role, want, "{:?} #{i}", r.path);
                assert!(i > f.initial);
                assert_eq!(
                    r.meta[i].provider, r.meta[f.initial].provider,
                    "{:?} #{i}",
                    r.path
                );
            }
        }
    }
}

#[test]
fn secrets_in_real_recordings_are_masked() {
    let all = read_all();
    let mut masked = 0;
    for r in &all {
        let text = serde_json::to_string(&r.entries).unwrap();
        for secret in [
            "sig=pgG24GHcZS0weh7CO6W",
            "Un53cuRE!",
            "Aa1!zyx_",
            "client_secret=00000000",
        ] {
            assert!(!text.contains(secret), "{secret} in {:?}", r.path);
        }
        masked += text.matches(MASK).count();
        for e in &r.entries {
            if let Some(j) = e.response.as_ref().and_then(|r| r.json.as_ref()) {
                assert!(!j.to_string().contains("Un53cuRE!"));
            }
        }
    }
    assert!(masked > 10, "{masked}");
}

#[test]
fn fixtures_survive_a_har_round_trip() {
    for r in read_all().iter().take(6) {
        let mut out = Vec::new();
        write_har(&r.entries, &mut out).unwrap();
        let back = rpconform::replay::read_recording_from(
            Path::new("back.har"),
            &out[..],
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(back.format, Format::Har);
        assert_eq!(back.entries.len(), r.entries.len());
        for (a, b) in r.entries.iter().zip(&back.entries) {
            assert_eq!(
                serde_json::to_value(a).unwrap(),
                serde_json::to_value(b).unwrap(),
                "{:?} #{}",
                r.path,
                a.seq
            );
            let json = |e: &Exchange| e.response.as_ref().and_then(|r| r.json.clone());
            assert_eq!(json(a), json(b), "{:?} #{}", r.path, a.seq);
        }
        assert_eq!(back.flows, r.flows, "{:?}", r.path);
    }
}

const CHILD_ENV: &str = "RPCONFORM_TEST_LARGE_HAR";

/// Write a HAR of about `target` bytes: portal-like script bodies (non-ARM, base64), ARM list
/// answers over the body cap, and ARM operations with their polls. Large entries are
/// serialised once and written with a new number each time.
fn generate_har(path: &Path, target: u64) -> u64 {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let sub = "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000";
    let mk = |method: &str, url: &str, status: u16, headers: Value, text: &str, b64: bool| {
        let mut content = json!({"size": text.len(), "mimeType": "application/json", "text": text});
        if b64 {
            content["encoding"] = json!("base64");
        }
        json!({"startedDateTime": "2024-05-01T10:00:00.000Z", "time": 5,
               "request": {"method": method, "url": url, "httpVersion": "HTTP/2",
                           "headers": [{"name": ":authority", "value": "management.azure.com"},
                                       {"name": "Authorization", "value": "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln"}],
                           "queryString": []},
               "response": {"status": status, "statusText": "", "headers": headers, "content": content}})
        .to_string()
    };
    // (text before the number, text after it)
    let split = |s: String| -> (String, String) {
        let (a, b) = s.split_once("@N@").unwrap();
        (a.to_string(), b.to_string())
    };
    let script = {
        let line = "function f(a){return a*31;}\n".repeat(28_000);
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, line.as_bytes())
    };
    let script = split(mk(
        "GET",
        "https://portal.azure.com/Content/Dynamic/@N@.js",
        200,
        json!([]),
        &script,
        true,
    ));
    let item =
        r#"{"id": "/subscriptions/s/resourceGroups/rg", "name": "rg", "location": "eastus"}"#;
    let list = format!(r#"{{"value": [{}]}}"#, vec![item; 230_000].join(","));
    let list = split(mk(
        "GET",
        &format!("{sub}/resourcegroups?api-version=2021-04-01&n=@N@"),
        200,
        json!([]),
        &list,
        false,
    ));
    f.write_all(
        br#"{"log": {"version": "1.2", "creator": {"name": "gen", "version": "1"}, "entries": ["#,
    )
    .unwrap();
    let mut written: u64 = 0;
    let mut n: u64 = 0;
    while written < target {
        n += 1;
        let parts: Vec<String> = if n.is_multiple_of(40) {
            vec![format!("{}{n}{}", list.0, list.1)]
        } else if n.is_multiple_of(2) {
            vec![format!("{}{n}{}", script.0, script.1)]
        } else {
            let vnet = format!(
                "{sub}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v{n}?api-version=2023-01-01"
            );
            let op = format!(
                "{sub}/providers/Microsoft.Network/locations/eastus/operations/{n}?api-version=2023-01-01"
            );
            vec![
                mk(
                    "PUT",
                    &vnet,
                    201,
                    json!([{"name": "Azure-AsyncOperation", "value": op}]),
                    r#"{"properties": {"provisioningState": "Updating"}}"#,
                    false,
                ),
                mk(
                    "GET",
                    &op,
                    200,
                    json!([]),
                    r#"{"status": "Succeeded"}"#,
                    false,
                ),
                mk(
                    "GET",
                    &vnet,
                    200,
                    json!([]),
                    r#"{"properties": {"provisioningState": "Succeeded"}}"#,
                    false,
                ),
            ]
        };
        for p in parts {
            if written > 0 {
                f.write_all(b",\n").unwrap();
            }
            f.write_all(p.as_bytes()).unwrap();
            written += p.len() as u64 + 2;
        }
    }
    f.write_all(b"]}}\n").unwrap();
    f.flush().unwrap();
    written
}

/// Runs only in the child process that `a_large_har_is_read_in_bounded_memory` starts.
#[test]
fn large_har_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let start = Instant::now();
    let r = read_recording(Path::new(&path), &ReadOptions::default()).unwrap();
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let hwm = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let over = r
        .meta
        .iter()
        .filter(|m| matches!(m.response_body, BodyState::OverCap { .. }))
        .count();
    println!(
        "CHILD entries={} flows={} over_cap={} secs={:.1} {hwm}",
        r.entries.len(),
        r.flows.len(),
        over,
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn a_large_har_is_read_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("rpconform-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("large.har");
    let size = generate_har(&path, 200 * 1024 * 1024);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "large_har_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("CHILD").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no report from the child: {stdout}"));
    eprintln!("{} MB HAR: {line}", size >> 20);
    let kb: u64 = line
        .split("VmHWM:")
        .nth(1)
        .unwrap()
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    // The file is 200 MB: holding it, or its entries, would take more than this bound.
    assert!(
        kb < 128 * 1024,
        "peak RSS {kb} kB reading a {size}-byte HAR"
    );
    assert!(line.contains(" over_cap="), "{line}");
    assert!(
        !line.contains("over_cap=0 "),
        "the 16 MiB cap was never hit: {line}"
    );
}
