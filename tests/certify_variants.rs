//! A conforming RP can be certified whatever legal choices it makes (issue 34): every legal
//! variant of the reference RP, and a plain target (the ARM profile only, one tracked type
//! without ETags, no proxy type, no spec — what many real RPs are), run with `--certify` under
//! the hold-open gate, have no reason against them but the acceleration the test needs. A rule
//! whose subject the RP never offers (a synchronous PATCH, no Retry-After, no ETag, no proxy
//! type, a spec with no secret, an operation too fast to be seen running...) is not
//! applicable, with the reason, never "not judged": only a subject the RP offered and the run
//! failed to see makes a run incomplete.
//!
//! The variant runs are child processes, three at a time (they mostly wait).

mod common;

use std::path::Path;
use std::sync::Mutex;

use common::{Scratch, rpconform};
use serde_json::Value;

/// Every wait scaled by 0.01 (so "not certified: accelerated" is the one reason expected).
const RUN: &[&str] = &["--time-scale", "0.01", "--certify", "-q"];

/// The embedded RP's operations held open until read three times through their own channels,
/// so no verdict depends on machine load (a served RP is started with the same gate).
const HELD: &[&str] = &["--op-duration", "300", "--hold-reads", "3"];

/// Variant runs at once.
const AT_ONCE: usize = 3;

/// The reasons report.json gives for not certifying the run.
fn why_not(report: &Value) -> Vec<String> {
    report["status"]["certification"]["why_not"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// The only reason is the acceleration: nothing failed, nothing is left unjudged.
fn only_accelerated(why: &[String]) -> bool {
    why.len() == 1 && why[0].starts_with("accelerated (time scale 0.01)")
}

/// A rule's row in the conformance view: (verdict, why).
fn row(report: &Value, id: &str) -> (String, String) {
    let r = report["conformance"]["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row for {id}"));
    (
        r["verdict"].as_str().unwrap_or_default().to_string(),
        r["why"].as_str().unwrap_or_default().to_string(),
    )
}

/// Run the suites against `target` (embedded, with `extra`) into `dir`; its report.
fn certify(dir: &Path, target: &str, extra: &[&str]) -> (common::Output, Value) {
    let report_dir = dir.display().to_string();
    let mut args = vec!["run", "suites", "--target", target];
    args.extend_from_slice(extra);
    args.extend_from_slice(RUN);
    args.extend(["--report-dir", &report_dir]);
    let out = rpconform(&args, common::RUN_TIMEOUT * 2);
    assert!(
        dir.join("report.json").exists(),
        "no report.json\n{}",
        out.tail(3000)
    );
    let report = common::read_report(dir);
    (out, report)
}

#[test]
fn every_legal_variant_is_certified_but_for_the_acceleration() {
    let listed = rpconform(&["serve", "--list-variants"], common::QUICK_TIMEOUT);
    let variants: Vec<String> = listed
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    assert!(variants.len() >= 30, "{}", listed.tail(2000));
    let dir = Scratch::new("certify-variants");
    let queue = Mutex::new(variants.clone());
    let bad: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..AT_ONCE {
            s.spawn(|| {
                loop {
                    let Some(v) = queue.lock().unwrap().pop() else {
                        return;
                    };
                    let mut extra = vec!["--variant", v.as_str()];
                    extra.extend_from_slice(HELD);
                    let (out, report) = certify(&dir.join(&v), "embedded", &extra);
                    let why = why_not(&report);
                    // Not certified (accelerated): exit 1, and that is the only reason.
                    if !only_accelerated(&why) || out.code() != 1 {
                        bad.lock().unwrap().push(format!(
                            "{v}: exit {}, not certified because: {}",
                            out.code(),
                            why.join("; ")
                        ));
                    }
                }
            });
        }
    });
    let bad = bad.into_inner().unwrap();
    assert!(
        bad.is_empty(),
        "{} of {} variant(s) have a reason not to certify beyond the acceleration:\n{}\nreports kept in {}",
        bad.len(),
        variants.len(),
        bad.join("\n"),
        dir.path.display()
    );
}

/// A target of one tracked type without ETags, the ARM profile only, no proxy type, against
/// `base_url`; with `openapi` files, their profile too.
fn plain_target(base_url: &str, openapi: Option<&str>) -> String {
    let profiles = match openapi {
        Some(f) => format!("profiles: [arm, openapi]\nopenapi: [{f}]\n"),
        None => "profiles: [arm]\n".to_string(),
    };
    format!(
        "base_url: {base_url}\nauth: none\nsubscription: 00000000-0000-0000-0000-00000000c0de\n\
         resource_group: {{name: rpconform, create: true}}\n{profiles}namespace: Microsoft.Contoso\n\
         api_version: \"2024-05-01\"\nlocation: eastus\ndeadline: 30\ntypes:\n  widgets:\n    \
         kind: tracked\n    async: true\n    etag: false\n    create_body:\n      location: eastus\n      \
         tags: {{env: test}}\n      properties: {{size: 3, minCount: 1, maxCount: 5}}\n    \
         update_body:\n      tags: {{env: patched}}\n      properties: {{size: 4}}\n    \
         failing_body:\n      location: eastus\n      properties: {{size: 3, simulateFailure: true}}\n"
    )
}

#[test]
fn a_plain_target_is_certified_but_for_the_acceleration() {
    let dir = Scratch::new("certify-plain");
    let rp = common::serve(&dir.join("served.yaml"), &["--hold-reads", "3"]);
    let target = dir.write("plain.yaml", &plain_target(&rp.base_url, None));
    let (out, report) = certify(&dir.join("plain"), &target.display().to_string(), &[]);
    let why = why_not(&report);
    assert!(only_accelerated(&why), "{why:?}\n{}", out.tail(3000));
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    // What the target declares decides these, with the reason where conformance.md lists them.
    for (id, because) in [
        ("ETAG-24", "no type in the target has: etag"),
        ("RES-04", "no type in the target has: kind proxy"),
    ] {
        let (verdict, reason) = row(&report, id);
        assert_eq!(verdict, "not-applicable", "{id}: {reason}");
        assert!(reason.starts_with(because), "{id}: {reason}");
    }
    let md = std::fs::read_to_string(dir.join("plain").join("conformance.md")).unwrap();
    assert!(
        md.contains("| `ETAG-24` | MUST | ⏭️ not applicable |"),
        "{md}"
    );

    // The same with a spec that marks no property x-ms-secret: SPEC-06 is not applicable.
    let spec_dir = dir.join("spec");
    std::fs::create_dir_all(&spec_dir).unwrap();
    for f in std::fs::read_dir(common::root().join("refrp/spec")).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&f)
                .unwrap()
                .replace("\"x-ms-secret\": true,", "");
            std::fs::write(spec_dir.join(f.file_name().unwrap()), text).unwrap();
        }
    }
    let target = dir.write(
        "plain-spec.yaml",
        &plain_target(&rp.base_url, Some("spec/contoso.json")),
    );
    let (out, report) = certify(&dir.join("plain-spec"), &target.display().to_string(), &[]);
    let why = why_not(&report);
    assert!(only_accelerated(&why), "{why:?}\n{}", out.tail(3000));
    let (verdict, reason) = row(&report, "SPEC-06");
    assert_eq!(verdict, "not-applicable", "{reason}");
    assert!(reason.starts_with("the spec marks no property `x-ms-secret: true`"));
    // The spec's other rules are judged as before.
    assert_eq!(row(&report, "SPEC-04").0, "passed");
}
