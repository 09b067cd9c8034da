//! End to end: `ci/rpconform-ci.sh`, the one script the GitHub Action (action.yml) and the
//! Azure Pipelines template (docs/ci/rpconform-steps.yml) call, run as CI runs it against the
//! embedded reference RP: it writes the reports, appends summary.md to the step summary,
//! writes its outputs (GitHub) or pipeline variables and summary upload (Azure Pipelines), and
//! exits as the run's status says — 0 for an incomplete run, 1 for a broken rule or a
//! certification refused, 2 for bad usage.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{RUN_TIMEOUT, Scratch};

/// Run the script with `args`, `env` set, rpconform being this build.
fn script(dir: &Scratch, args: &[&str], env: &[(&str, String)]) -> common::Output {
    let mut cmd = Command::new("bash");
    cmd.arg(common::root().join("ci/rpconform-ci.sh"))
        .args(args)
        .current_dir(&dir.path)
        .env("RPCONFORM", env!("CARGO_BIN_EXE_rpconform"))
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("TF_BUILD");
    for (k, v) in env {
        cmd.env(k, v);
    }
    common::run_command(cmd, "ci/rpconform-ci.sh", RUN_TIMEOUT)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A few tests of the embedded RP, accelerated, every operation held open for three reads.
const RUN: &[&str] = &[
    "--time-scale",
    "0.01",
    "--hold-reads",
    "3",
    "-q",
    "-f",
    "async-put::",
];

/// A few tests whose DELETEs answer 202 with a Location (what `relative-location` breaks).
const DELETES: &[&str] = &[
    "--time-scale",
    "0.01",
    "--hold-reads",
    "3",
    "-q",
    "-f",
    "etag::delete-table::widgets::",
];

#[test]
fn on_github_it_writes_the_reports_the_summary_and_outputs_and_exits_as_the_run() {
    let dir = Scratch::new("ci-script-github");
    let summary = dir.join("step-summary.md");
    let output = dir.join("github-output");
    let env = [
        ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
        ("GITHUB_OUTPUT", output.display().to_string()),
    ];
    // A selection: the run is incomplete, which is exit 0 without --certify.
    let mut args = vec!["--target", "embedded", "--report-dir", "clean", "--"];
    args.extend_from_slice(RUN);
    let out = script(&dir, &args, &env);
    assert_eq!(out.code(), 0, "{}", out.tail(3000));
    for f in [
        "junit.xml",
        "results.sarif",
        "summary.md",
        "report.json",
        "report.html",
    ] {
        assert!(
            dir.join("clean").join(f).is_file(),
            "no {f}\n{}",
            out.tail(2000)
        );
    }
    let report = common::read_report(&dir.join("clean"));
    assert_eq!(report["status"]["state"], "incomplete");
    assert_eq!(read(&summary), read(&dir.join("clean/summary.md")));
    let outputs = read(&output);
    for line in [
        "status=incomplete",
        "exit-code=0",
        "junit=clean/junit.xml",
        "sarif=clean/results.sarif",
    ] {
        assert!(
            outputs.lines().any(|l| l == line),
            "no `{line}` in\n{outputs}"
        );
    }

    // A broken rule: the run fails, and so does the script, after writing everything.
    let mut args = vec!["--target", "embedded", "--report-dir", "faulty", "--"];
    args.extend_from_slice(DELETES);
    args.extend(["--fault", "relative-location"]);
    let out = script(&dir, &args, &env);
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let report = common::read_report(&dir.join("faulty"));
    assert_eq!(report["status"]["state"], "failed");
    assert!(read(&output).lines().any(|l| l == "status=failed"));
    assert!(
        read(&summary).contains("LOC-02"),
        "the failed run's summary is appended"
    );
}

#[test]
fn on_azure_pipelines_a_certification_names_its_subject_and_fails_when_not_certified() {
    let dir = Scratch::new("ci-script-azure");
    let mut args = vec![
        "--target",
        "embedded",
        "--report-dir",
        "cert",
        "--certify",
        "--subject",
        "contoso-rp@1.2.3",
        "--",
    ];
    args.extend_from_slice(RUN);
    let out = script(&dir, &args, &[("TF_BUILD", "True".into())]);
    // Accelerated and a selection: not certified, exit 1.
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let report = common::read_report(&dir.join("cert"));
    assert_eq!(report["run"]["subject"], "contoso-rp@1.2.3");
    let summary = dir.join("cert/summary.md").canonicalize().unwrap();
    assert!(
        out.stdout
            .contains(&format!("##vso[task.uploadsummary]{}", summary.display())),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("##vso[task.setvariable variable=RPCONFORM_EXIT_CODE]1")
    );
    let sarif: serde_json::Value =
        serde_json::from_str(&read(&dir.join("cert/results.sarif"))).unwrap();
    assert_eq!(
        sarif["runs"][0]["properties"]["subject"],
        "contoso-rp@1.2.3"
    );
}

#[test]
fn bad_usage_exits_2_naming_the_option() {
    let dir = Scratch::new("ci-script-usage");
    let out = script(&dir, &["--bogus"], &[]);
    assert_eq!(out.code(), 2);
    assert!(
        out.stderr.contains("unknown option --bogus"),
        "{}",
        out.stderr
    );
    let out = script(&dir, &[], &[]);
    assert_eq!(out.code(), 2);
    assert!(
        out.stderr.contains("--target is required"),
        "{}",
        out.stderr
    );
}
