//! End to end: reports a person reads stay readable when a run goes badly. A gateway that
//! fails every DELETE in front of a served reference RP leaves hundreds of resources behind:
//! summary.md (which CI appends to a step summary) stays within 64 KiB with the totals in its
//! first lines and the list of leftovers cut with a count and where the rest is. Neither that
//! run nor a run whose operations outlive the deadline shows a Rust debug form (`Some(`,
//! `None`, `Running(`) in conformance.md, summary.md or junit.xml.

use crate::common;

use common::{RUN_TIMEOUT, Scratch, rpconform};

/// Rust's debug forms, which no report a person reads may show.
const DEBUG_FORMS: [&str; 5] = ["Some(", "None", "Running(", "Unreadable(", "Done("];

fn read(dir: &std::path::Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn assert_no_debug_forms(dir: &std::path::Path) {
    for file in ["conformance.md", "summary.md", "junit.xml"] {
        let text = read(dir, file);
        for form in DEBUG_FORMS {
            if let Some(i) = text.find(form) {
                let from = text[..i].rfind('\n').map_or(0, |n| n + 1);
                let to = text[i..].find('\n').map_or(text.len(), |n| i + n);
                panic!("{file} shows `{form}`: {}", &text[from..to]);
            }
        }
    }
}

#[test]
fn a_run_that_cannot_delete_keeps_summary_md_small_with_the_totals_first() {
    let dir = Scratch::new("deletes-refused");
    let served = dir.join("served.yaml");
    let rp = common::serve(&served, &["--hold-reads", "3"]);
    let gw = common::gateway::start_refusing(&rp.base_url, "/", Some("DELETE"));
    let text = std::fs::read_to_string(&served)
        .unwrap()
        .replace(&rp.base_url, &format!("http://127.0.0.1:{}", gw.port));
    let target = dir.write("refusing.yaml", &text);
    let reports = dir.join("reports");
    let out = rpconform(
        &[
            "run",
            "suites",
            "--target",
            &target.display().to_string(),
            "--time-scale",
            "0.01",
            "--report-dir",
            &reports.display().to_string(),
            "-q",
        ],
        RUN_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(3000));
    let report = common::read_report(&reports);
    let left = report["run"]["left_behind"].as_array().unwrap().len();
    assert!(left > 100, "only {left} resources left behind");
    let md = read(&reports, "summary.md");
    assert!(md.len() <= 64 * 1024, "summary.md is {} bytes", md.len());
    let head: Vec<&str> = md.lines().take(5).collect();
    assert!(
        head.iter().any(|l| l.starts_with("**Rules: "))
            && head.iter().any(|l| l.starts_with("**Tests: ")),
        "no totals in the first lines: {head:#?}"
    );
    assert!(md.contains(&format!("**Left behind** ({left})")), "{md}");
    assert!(md.contains(&format!(
        "- …and {} more: every one in the journal",
        left - 20
    )));
    assert_no_debug_forms(&reports);
}

#[test]
fn a_run_whose_operations_outlive_the_deadline_reads_without_debug_forms() {
    let dir = Scratch::new("deadline-text");
    let reports = dir.join("reports");
    // Operations end only after 1000 reads: every poll reaches the one-second deadline.
    let out = rpconform(
        &[
            "run",
            "suites",
            "-f",
            "async-put::",
            "--hold-reads",
            "1000",
            "--deadline",
            "1",
            "--time-scale",
            "0.01",
            "--report-dir",
            &reports.display().to_string(),
            "-q",
        ],
        RUN_TIMEOUT,
    );
    assert_ne!(out.code(), 0, "{}", out.tail(3000));
    let junit = read(&reports, "junit.xml");
    assert!(junit.contains("deadline"), "no test reached the deadline");
    assert_no_debug_forms(&reports);
}
