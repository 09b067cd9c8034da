//! `rpconform probe` against the embedded reference RP: a route with a fault on fails the rule
//! the fault names (and reports it in report.json), the same route on a clean RP passes, a PUT
//! is followed to its end and what it created is deleted, and bad usage exits 2.

use crate::common;

use common::{
    QUICK_TIMEOUT, RUN_TIMEOUT, Scratch, failed_rules, passed_rules, read_report, rpconform,
};

const SUB: &str = "00000000-0000-0000-0000-00000000c0de";

/// (route, method, body, fault, the rule it names)
fn cases() -> Vec<(
    String,
    &'static str,
    Option<&'static str>,
    &'static str,
    &'static str,
)> {
    let rg = format!("/subscriptions/{SUB}/resourceGroups/rpconform/providers/Microsoft.Contoso");
    vec![
        (
            format!(
                "/subscriptions/{SUB}/providers/Microsoft.Contoso/locations/eastus/regionalWidgets"
            ),
            "GET",
            None,
            "location-type-no-request-id",
            "HDR-01",
        ),
        // The PUT's 201 carries Retry-After (LOC-03 reads every one); its Location names the
        // resource and no LOC rule reads it, so the operation's own reads show the rest.
        (
            format!("{rg}/widgets/probe1"),
            "PUT",
            Some(r#"{"location": "eastus", "properties": {"size": 3}}"#),
            "retry-after-date",
            "LOC-03",
        ),
        (
            format!("{rg}/widgets/probe2"),
            "PUT",
            Some(r#"{"location": "eastus", "properties": {"size": 3}}"#),
            "opstatus-404-while-running",
            "OPRES-01",
        ),
    ]
}

#[test]
fn a_fault_fails_its_rule_and_a_clean_rp_passes() {
    let s = Scratch::new("probe");
    for (i, (route, method, body, fault, rule)) in cases().into_iter().enumerate() {
        for faulty in [true, false] {
            let dir = s.str(format!("r{i}-{faulty}"));
            let mut args: Vec<String> = vec![
                "probe".into(),
                method.into(),
                route.clone(),
                "--time-scale".into(),
                "0.02".into(),
                "--op-duration".into(),
                "400".into(),
                "--report-dir".into(),
                dir.clone(),
            ];
            if let Some(b) = body {
                args.push("--body".into());
                args.push(s.write(&format!("body{i}.json"), b).display().to_string());
            }
            if faulty {
                args.push("--fault".into());
                args.push(fault.into());
            }
            let out = rpconform(&args, RUN_TIMEOUT);
            let report = read_report(std::path::Path::new(&dir));
            let failed = failed_rules(&report);
            if faulty {
                assert_eq!(out.code(), 1, "{fault}: {}", out.tail(3000));
                assert!(
                    failed.contains(rule),
                    "{fault} must fail {rule}; failed: {failed:?}\n{}",
                    out.tail(3000)
                );
                assert!(
                    out.stdout.contains(&format!("FAIL  {rule}")),
                    "{}",
                    out.tail(3000)
                );
            } else {
                assert_eq!(out.code(), 0, "clean {method} {route}: {}", out.tail(3000));
                assert!(failed.is_empty(), "clean: {failed:?}\n{}", out.tail(3000));
                assert!(
                    passed_rules(&report).contains(rule),
                    "clean run judges {rule}\n{}",
                    out.tail(3000)
                );
            }
            // Nothing is left behind: the PUT's widget is deleted with the group.
            assert!(
                report["run"]["left_behind"]
                    .as_array()
                    .is_none_or(|l| l.is_empty()),
                "{}",
                out.tail(2000)
            );
        }
    }
}

#[test]
fn a_put_is_followed_and_its_flow_judged() {
    let s = Scratch::new("probe-flow");
    let body = s.write(
        "w.json",
        r#"{"location": "eastus", "properties": {"size": 3}}"#,
    );
    let route = format!(
        "/subscriptions/{SUB}/resourceGroups/rpconform/providers/Microsoft.Contoso/widgets/flow1"
    );
    let out = rpconform(
        &[
            "probe",
            "put",
            &route,
            "--body",
            &body.display().to_string(),
            "--time-scale",
            "0.02",
            "--op-duration",
            "400",
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    assert!(
        out.stdout
            .contains("followed via azure-asyncoperation: Succeeded"),
        "{}",
        out.tail(3000)
    );
    for rule in ["PUT-04", "OPRES-03", "AAO-02", "HDR-01"] {
        assert!(
            out.stdout.contains(&format!("pass  {rule}")),
            "{rule}\n{}",
            out.tail(3000)
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec![
            "probe",
            "GET",
            "http://127.0.0.1:9/x",
            "--target",
            "embedded",
        ],
        vec!["probe", "G E T", "/x"],
        vec!["probe", "GET", "x"],
        vec!["probe", "GET", "/x", "--header", "novalue"],
        vec!["probe", "GET", "/x", "--fault", "no-such-fault"],
        vec![
            "probe",
            "GET",
            "http://127.0.0.1:9/x",
            "--fault",
            "relative-location",
        ],
        vec!["probe", "GET", "/x", "--body", "/nonexistent/body.json"],
    ] {
        let out = rpconform(&args, QUICK_TIMEOUT);
        assert_eq!(out.code(), 2, "{args:?}\n{}", out.tail(2000));
    }
}
