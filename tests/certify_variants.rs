//! A conforming RP can be certified whatever legal choices it makes (issue 34): a plain target
//! (the ARM profile only, one tracked type without ETags, no proxy type, no spec — what many
//! real RPs are), run with `--certify` under the hold-open gate, has no reason against it but
//! the acceleration the test needs. (Every legal variant of the reference RP is held to the
//! same in `tests/matrices.rs`: the variant matrix's run of each leaves nothing incomplete.) A rule
//! whose subject the RP never offers (a synchronous PATCH, no Retry-After, no ETag, no proxy
//! type, a spec with no secret, an operation too fast to be seen running...) is not
//! applicable, with the reason, never "not judged": only a subject the RP offered and the run
//! failed to see makes a run incomplete.

use crate::common;

use std::path::Path;

use common::{Scratch, rpconform};
use serde_json::Value;

/// Every wait scaled by 0.01 (so "not certified: accelerated" is the one reason expected).
const RUN: &[&str] = &["--time-scale", "0.01", "--certify", "-q"];

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
