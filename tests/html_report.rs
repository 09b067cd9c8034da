//! End to end: report.html of a real run (one suite, the `relative-location` fault on) opens in
//! headless Chromium with the conformance table there and its script run (`--dump-dom`), and
//! renders as a page with content (`--screenshot`, compared with a blank page's screenshot:
//! a PNG of text and tables compresses far worse than one of white).
//!
//! Chromium is Debian's `chromium` (`/usr/bin/chromium`, or `RPCONFORM_CHROMIUM`). Without it
//! the test says loudly that it skipped; with `CI=1` (set by `.ci/run`, which installs it) a
//! missing browser fails the test.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{FAST, RUN_TIMEOUT, Scratch, rpconform};

fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("RPCONFORM_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Run Chromium headless on `url` with `extra` flags and a fresh profile; stdout.
fn browse(bin: &Path, profile: &Path, url: &str, extra: &[String]) -> String {
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--window-size=1280,900",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(url);
    common::run_command(cmd, &format!("chromium on {url}"), Duration::from_secs(120)).stdout
}

fn report_html_renders_in_headless_chromium_with_the_conformance_table() {
    let Some(bin) = chromium() else {
        common::require_tool(
            "chromium (for report_html_renders_in_headless_chromium)",
            "apt-get install chromium, or set RPCONFORM_CHROMIUM; .ci/run installs it",
        );
        return;
    };
    let dir = Scratch::new("html");
    let reports = dir.str("reports");
    let mut args = vec![
        "run",
        "suites/location-202.yaml",
        "--report-dir",
        &reports,
        "--fault",
        "relative-location",
        "-q",
    ];
    args.extend_from_slice(FAST);
    let out = rpconform(&args, RUN_TIMEOUT);
    let html = dir.join("reports/report.html");
    assert!(html.exists(), "no report.html\n{}", out.tail(3000));
    let page = std::fs::read_to_string(&html).unwrap();
    for external in ["<link", "<script src", "<img src", "@import", "url("] {
        assert!(
            !page.contains(external),
            "report.html loads something: {external}"
        );
    }
    let url = format!("file://{}", html.display());

    let dom = browse(&bin, &dir.join("profile-dom"), &url, &["--dump-dom".into()]);
    assert!(
        dom.contains("id=\"conformance-table\""),
        "no conformance table in the DOM:\n{}",
        common::tail(&dom, 2000)
    );
    assert!(
        dom.contains("data-rules=\"LOC-02\""),
        "LOC-02 is not in the table"
    );
    // Pictures: a bar per rule family at the top, and the failing tests' flows as inline SVG
    // timelines with the broken rule pinned on the exchange that showed it.
    assert!(
        dom.contains("<svg class=\"families-bar\""),
        "no family bars"
    );
    assert!(
        dom.matches("<svg class=\"timeline\"").count() > 0,
        "no timeline in the DOM"
    );
    assert!(
        dom.contains("failed here: LOC-02"),
        "no LOC-02 pin on a timeline"
    );
    // The script ran: it writes how many rules and tests the filters show.
    let shown = regex::Regex::new(r#"id="shown">(\d+) rules, (\d+) tests shown<"#).unwrap();
    let caps = shown.captures(&dom).unwrap_or_else(|| {
        panic!(
            "the filter script did not run:\n{}",
            common::tail(&dom, 2000)
        )
    });
    assert!(caps[1].parse::<u32>().unwrap() > 10 && caps[2].parse::<u32>().unwrap() > 0);
    // Filtering by rule hides the rest.
    let dom = browse(
        &bin,
        &dir.join("profile-filter"),
        &format!("{url}?rule=LOC-02&status=failed"),
        &["--dump-dom".into()],
    );
    let caps = shown.captures(&dom).expect("filtered page");
    assert_eq!(&caps[1], "1", "only LOC-02 is shown");

    let shot = dir.join("page.png");
    let blank_shot = dir.join("blank.png");
    let blank = dir.write("blank.html", "<!doctype html><html><body></body></html>");
    browse(
        &bin,
        &dir.join("profile-shot"),
        &url,
        &[format!("--screenshot={}", shot.display())],
    );
    browse(
        &bin,
        &dir.join("profile-blank"),
        &format!("file://{}", blank.display()),
        &[format!("--screenshot={}", blank_shot.display())],
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot: {e}"));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let blank_len = std::fs::metadata(&blank_shot)
        .map(|m| m.len())
        .unwrap_or(0)
        .max(1);
    assert!(
        png.len() as u64 > 5 * blank_len,
        "the screenshot looks blank: {} bytes against {blank_len} for an empty page",
        png.len()
    );
}

/// Tests that need an installed tool: a missing one is *ignored*, with why (a failure under CI).
fn main() -> std::process::ExitCode {
    common::tool_tests(&[(
        "report_html_renders_in_headless_chromium_with_the_conformance_table",
        report_html_renders_in_headless_chromium_with_the_conformance_table,
    )])
}
