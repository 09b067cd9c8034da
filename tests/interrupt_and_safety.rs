//! Safety of a run against a shared target: Ctrl-C (SIGINT) in the middle of a run still tears
//! down and deletes everything the run created; destructive scenarios are skipped, with the
//! reason, unless the resource group is one the run created or one marked disposable.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{RUN_TIMEOUT, finish, rpconform, signal};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rpconform")
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("rpconform-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn suites() -> String {
    format!("{}/suites", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn sigint_mid_run_leaves_nothing_behind() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let settings = rpconform_refrp::Settings {
        op_duration: Duration::from_millis(1500),
        ..Default::default()
    };
    let server = rt.block_on(rpconform_refrp::start(settings, 0)).unwrap();
    let dir = temp_dir("sigint");
    let target = dir.join("target.yaml");
    std::fs::write(
        &target,
        rpconform::target::embedded_target_yaml(&server.base_url()),
    )
    .unwrap();
    let reports = dir.join("reports");
    let child = Command::new(bin())
        .args(["run", &suites(), "--target"])
        .arg(&target)
        .args(["--time-scale", "0.05", "--report-dir"])
        .arg(&reports)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Let it create resources, then interrupt.
    common::wait_until_journaled(&reports);
    signal(&child, "INT");
    let ended = finish(child, "the run after SIGINT", Duration::from_secs(90));
    let stderr = ended.stderr;
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        ended.status.code(),
        Some(130),
        "an interrupted run exits 130\n{stderr}"
    );
    // The signal stopped the tests (some ended interrupted), and cleanup said what it deleted.
    assert!(stderr.contains("interrupted: tests stopped"), "{stderr}");
    // The reports are written and say what was left (nothing).
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(reports.join("report.json")).expect("report.json after SIGINT"),
    )
    .unwrap();
    let left = report["run"]["left_behind"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
    // No headline says passed; JUnit is not green.
    assert_eq!(
        report["status"]["state"], "interrupted",
        "{}",
        report["status"]
    );
    assert!(
        report["counts"]["interrupted"].as_u64().unwrap_or(0) > 0,
        "the first signal did not stop the tests: {}",
        report["counts"]
    );
    for file in ["conformance.md", "summary.md"] {
        let md = std::fs::read_to_string(reports.join(file)).unwrap();
        let head = md.lines().next().unwrap_or_default();
        assert!(
            head.contains("interrupted") && !head.contains("passed"),
            "{file}: {head}"
        );
    }
    let junit = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&junit).unwrap();
    assert!(junit.errors > 0, "junit.xml is green after SIGINT");
    // And the target agrees: the run's resource group and everything in it are gone.
    let rg = format!("rpconform-{}", report["run"]["run_id"].as_str().unwrap());
    let url = format!(
        "{}/subscriptions/00000000-0000-0000-0000-00000000c0de/resourceGroups/{rg}/providers/Microsoft.Contoso/widgets?api-version=2024-05-01",
        server.base_url()
    );
    let code = rt
        .block_on(async { reqwest::get(&url).await.map(|r| r.status().as_u16()) })
        .unwrap();
    assert_eq!(code, 404, "the run's resource group {rg} should be gone");
    rt.block_on(server.shutdown());
}

#[test]
fn destructive_scenarios_skip_in_a_group_the_run_does_not_own() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(rpconform_refrp::start(
            rpconform_refrp::Settings::default(),
            0,
        ))
        .unwrap();
    let base = server.base_url();
    let dir = temp_dir("destructive");
    // A group someone else owns: exists already, not created by the run, not disposable.
    let rg_url = format!(
        "{base}/subscriptions/00000000-0000-0000-0000-00000000c0de/resourceGroups/shared-rg?api-version=2021-04-01"
    );
    rt.block_on(async {
        reqwest::Client::new()
            .put(&rg_url)
            .header("content-type", "application/json")
            .body(r#"{"location": "eastus"}"#)
            .send()
            .await
    })
    .unwrap();
    let yaml = rpconform::target::embedded_target_yaml(&base).replace(
        "  name: rpconform\n  create: true",
        "  name: shared-rg\n  create: false",
    );
    assert!(yaml.contains("shared-rg"));
    let target = dir.join("target.yaml");
    std::fs::write(&target, yaml).unwrap();
    let out = rpconform(
        &[
            "run",
            &format!("{}/resource-group-delete.yaml", suites()),
            "--target",
            &target.display().to_string(),
            "--time-scale",
            "0.05",
            "--report-dir",
            &dir.join("reports").display().to_string(),
        ],
        RUN_TIMEOUT,
    );
    assert!(out.status.success(), "{}", out.stdout);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reports/report.json")).unwrap())
            .unwrap();
    let results = report["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        assert_eq!(r["status"], "skipped", "{r}");
        assert!(r["detail"].as_str().unwrap().contains("destructive"), "{r}");
        assert!(
            r["exchanges"].as_array().is_none_or(|e| e.is_empty()),
            "a skipped destructive test sent requests: {r}"
        );
    }
    // The shared group is still there.
    let code = rt
        .block_on(async { reqwest::get(&rg_url).await.map(|r| r.status().as_u16()) })
        .unwrap();
    assert_eq!(code, 200);
    rt.block_on(server.shutdown());
}
