//! The replay readers on real recordings (tests/fixtures/recordings, from the Azure SDK for
//! Python sdists): every file reads, fast; what the reader and its poll pairing find matches the
//! independent counter (`count.py` → `expected-counts.json`); secrets in them are masked; bad
//! bytes give errors, never panics. (The large-HAR memory test is in `replay_large_har.rs`.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rpconform::http::{Exchange, MASK, Role};
use rpconform::replay::{Format, PollChannel, ReadOptions, Recording, read_recording, write_har};
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
        // The counter also counts what `replay_real.rs` compares with verdicts.
        let mine = counts(r);
        for (k, v) in mine.as_object().unwrap() {
            assert_eq!(v, &expected[&name][k], "{name}: {k}");
        }
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
    assert!(!disks.flows.is_empty());
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
    // ManagedIdentity's relative Location on 201 is the resource, not an operation: the 201
    // without provisioningState is followed through the resource, as the SDK does.
    let scripts = by_name(
        &all,
        "resource-15.0.0__test_mgmt_resource_deployment_scripts",
    );
    let uai = scripts
        .entries
        .iter()
        .position(|e| e.method == "PUT" && e.url.contains("userAssignedIdentities"))
        .unwrap();
    assert!(
        scripts
            .flows
            .iter()
            .filter(|f| f.initial == uai)
            .all(|f| f.polls.iter().all(|(_, c)| *c == PollChannel::Resource))
    );
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
            let json = e
                .response
                .as_ref()
                .and_then(|r| r.json.as_ref())
                .map(|j| j.to_string())
                .unwrap_or_default();
            assert!(!json.contains("Un53cuRE!"));
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

#[test]
fn damaged_recordings_give_errors_not_panics() {
    let files = fixture_files();
    let picks = files
        .iter()
        .filter(|p| {
            let n = p.to_string_lossy();
            n.contains("compute_disks") || n.contains("test_container") || n.contains("redis")
        })
        .collect::<Vec<_>>();
    assert!(picks.len() >= 4);
    let mut errors = 0;
    for p in picks {
        let bytes = std::fs::read(p).unwrap();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for round in 0..40 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed % bytes.len() as u64) as usize;
            let mut damaged = bytes.clone();
            match round % 4 {
                0 => damaged.truncate(at),
                1 => damaged[at] = b"{}[]\",:\n-'\xff"[(seed >> 8) as usize % 11],
                2 => {
                    damaged.insert(at, b'"');
                }
                _ => {
                    damaged.remove(at);
                }
            }
            let name = p.file_name().unwrap();
            match rpconform::replay::read_recording_from(
                Path::new(name),
                &damaged[..],
                &ReadOptions::default(),
            ) {
                Ok(_) => {}
                Err(e) => {
                    errors += 1;
                    let text = e.to_string();
                    assert!(text.starts_with(&*name.to_string_lossy()), "{text}");
                    assert!(
                        e.line > 0 || text.contains("empty") || text.contains("cannot read"),
                        "{text}"
                    );
                }
            }
        }
    }
    assert!(errors > 20, "{errors}");
}
