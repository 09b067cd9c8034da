//! The SPEC rules on real traffic: recordings of shipping RPs (tests/fixtures/recordings)
//! replayed with the spec those RPs published for the recorded api-version
//! (tests/fixtures/specs, azure-rest-api-specs as published). A recording that matches its
//! spec gives no SPEC failure while the rules are judged; the same recording against a copy of
//! the spec that drifted (a property's type changed, a status code left out) fails the SPEC
//! rule that drift breaks, naming the JSON pointer and the spec file and line.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Scratch, read_report, rpconform};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const REDIS_REC: &str =
    "tests/fixtures/recordings/redis-12.0.0__test_cli_mgmt_redis.test_redis.yaml";
const REDIS_SPEC: &str = "tests/fixtures/specs/specification/redis/resource-manager/Microsoft.Cache/preview/2019-07-01/redis.json";
const EVENTHUB: &str = "tests/fixtures/specs/specification/eventhub/resource-manager/Microsoft.EventHub/stable/2017-04-01";

/// The conformance row of `rule` in a report.
fn row<'a>(report: &'a Value, rule: &str) -> &'a Value {
    report["conformance"]["rules"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == rule))
        .unwrap_or_else(|| panic!("no conformance row for {rule}"))
}

fn replay(s: &Scratch, name: &str, recordings: &[String], specs: &[String]) -> Value {
    let dir = s.str(name);
    let mut args: Vec<String> = vec!["replay".into()];
    args.extend(recordings.iter().cloned());
    args.extend(["--report-dir".into(), dir.clone()]);
    for spec in specs {
        args.extend(["--openapi".into(), spec.clone()]);
    }
    let out = rpconform(&args, Duration::from_secs(120));
    assert!(matches!(out.code(), 0 | 1), "{}", out.tail(3000));
    read_report(Path::new(&dir))
}

fn abs(rel: &str) -> String {
    root().join(rel).display().to_string()
}

fn eventhub_specs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join(EVENTHUB))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path().display().to_string()))
        .filter(|p| p.ends_with(".json"))
        .collect();
    v.sort();
    v
}

#[test]
fn recordings_that_match_their_published_spec_pass_every_spec_rule_judged() {
    let s = Scratch::new("spec-real");
    let eventhub: Vec<String> = std::fs::read_dir(root().join("tests/fixtures/recordings"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path().display().to_string()))
        .filter(|p| p.contains("eventhub-8.0.0__"))
        .collect();
    assert_eq!(eventhub.len(), 2);
    for (name, recs, specs) in [
        ("redis", vec![abs(REDIS_REC)], vec![abs(REDIS_SPEC)]),
        ("eventhub", eventhub, eventhub_specs()),
    ] {
        let report = replay(&s, name, &recs, &specs);
        let results = report["results"].as_array().expect("results");
        assert_eq!(
            results.len(),
            recs.len(),
            "{name}: every recording is a result"
        );
        assert!(
            results.iter().all(|r| r["status"] != "error"),
            "{name}: a runner error"
        );
        for rule in ["SPEC-01", "SPEC-04"] {
            let r = row(&report, rule);
            assert_eq!(r["verdict"], "passed", "{name} {rule}: {r}");
            assert!(r["checks_passed"].as_u64() > Some(5), "{name} {rule}: {r}");
        }
        for rule in ["SPEC-02", "SPEC-03", "SPEC-05", "SPEC-06"] {
            assert_ne!(row(&report, rule)["verdict"], "failed", "{name} {rule}");
        }
    }
}

#[test]
fn a_drifted_copy_of_the_spec_fails_the_rule_its_drift_breaks_with_pointer_and_line() {
    let s = Scratch::new("spec-real-drift");
    let mut spec: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(REDIS_SPEC)).unwrap()).unwrap();
    // The drift: the cache's `properties.port` declared a string, and the GET's 200 dropped.
    let props = &mut spec["definitions"]["RedisProperties"]["properties"];
    assert!(
        props.get("port").is_some(),
        "the published spec has RedisProperties.port"
    );
    props["port"]["type"] = "string".into();
    let get = spec["paths"]
        .as_object_mut()
        .unwrap()
        .iter_mut()
        .find(|(k, _)| k.ends_with("/Redis/{name}"))
        .map(|(_, v)| v)
        .expect("the Redis path");
    let ok = get["get"]["responses"]["200"].clone();
    get["get"]["responses"]
        .as_object_mut()
        .unwrap()
        .remove("200");
    get["get"]["responses"]["203"] = ok;
    let drifted = s.write("redis.json", &serde_json::to_string_pretty(&spec).unwrap());
    let report = replay(
        &s,
        "rep",
        &[abs(REDIS_REC)],
        &[drifted.display().to_string()],
    );
    for (rule, needle) in [("SPEC-04", "/properties/port"), ("SPEC-01", "200")] {
        let r = row(&report, rule);
        assert_eq!(r["verdict"], "failed", "{rule}: {r}");
        let ev = &r["evidence"];
        assert!(
            ev["seen"].as_str().is_some_and(|t| t.contains(needle)),
            "{rule}: {ev}"
        );
        assert!(
            ev["at"].as_str().is_some_and(|a| a.contains("redis.json:")),
            "{rule} names the spec file and line: {ev}"
        );
    }
    let md = std::fs::read_to_string(Path::new(&s.str("rep")).join("conformance.md")).unwrap();
    assert!(
        md.contains("## Spec drift"),
        "spec drift is its own section"
    );
}
