//! The command line's contract: bad usage exits 2 with a message saying what is wrong (unknown
//! flag, bad `--partition`, unknown `--fault`, a missing or broken target file, with the
//! broken file's mistakes positioned); `rpconform rules` prints the whole catalogue, also as
//! JSON; `serve --list-faults` lists the fault knobs, each naming rules that exist.

use crate::common;

use std::collections::BTreeSet;

use common::{FAST, QUICK_TIMEOUT, Scratch, rpconform};
use serde_json::Value;

/// Run `args`, expect exit 2 and every fragment in stderr.
fn expect_usage_error(args: &[&str], fragments: &[&str]) {
    let out = rpconform(args, QUICK_TIMEOUT);
    assert_eq!(out.code(), 2, "bad usage must exit 2\n{}", out.tail(2000));
    for f in fragments {
        assert!(
            out.stderr.contains(f),
            "stderr lacks `{f}`\n{}",
            out.tail(2000)
        );
    }
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    expect_usage_error(&["run", "suites", "--no-such-flag"], &["--no-such-flag"]);
    expect_usage_error(&["frobnicate"], &["frobnicate"]);
}

#[test]
fn a_bad_partition_is_a_usage_error() {
    for p in [
        "count:3/2",
        "hash:0/2",
        "thirds:1/3",
        "count:1",
        "count:a/b",
    ] {
        expect_usage_error(
            &["run", "suites", "--partition", p],
            &["invalid partition", p],
        );
    }
}

#[test]
fn an_unknown_fault_is_a_usage_error_with_a_suggestion() {
    expect_usage_error(
        &["run", "suites", "--fault", "relative-locaton"],
        &[
            "unknown fault `relative-locaton`",
            "did you mean `relative-location`?",
        ],
    );
    // `serve` refuses it before it listens (or writes its target file).
    let dir = Scratch::new("cli-serve-fault");
    let t = dir.str("target.yaml");
    expect_usage_error(
        &["serve", "--fault", "no-such-fault", "--write-target", &t],
        &["unknown fault `no-such-fault`"],
    );
}

#[test]
fn a_bad_time_scale_is_a_usage_error() {
    for f in ["0", "-1", "1000"] {
        expect_usage_error(
            &["run", "suites", &format!("--time-scale={f}")],
            &["--time-scale"],
        );
    }
}

#[test]
fn a_missing_target_file_is_a_usage_error() {
    let dir = Scratch::new("cli-missing-target");
    let t = dir.str("no-such-target.yaml");
    expect_usage_error(
        &["run", "suites", "--target", &t],
        &[&t, "cannot read target file"],
    );
    expect_usage_error(&["check", "suites", "--target", &t], &[&t]);
}

#[test]
fn a_target_file_with_errors_is_reported_with_positions() {
    let dir = Scratch::new("cli-bad-target");
    let text = "base_url: not-a-url
auth: none
subscription: 00000000-0000-0000-0000-000000000000
resource_group: {name: rg}
namespace: Microsoft.Contoso
api_version: \"2024-05-01\"
location: eastus
types:
  widgets:
    kind: trackd
    create_body: {location: eastus}
";
    let t = dir.write("target.yaml", text);
    let t = t.display().to_string();
    let base_url = format!("{t}:1:11");
    let kind = format!("{t}:10:11");
    for cmd in ["run", "check"] {
        expect_usage_error(
            &[cmd, "suites", "--target", &t],
            &[
                &base_url,
                "not-a-url",
                "not an absolute http(s) URL",
                &kind,
                "unknown kind `trackd`",
                "tracked or proxy",
            ],
        );
    }
}

/// A path that does not exist is taken as a test-name filter, so a typo in a suite path runs
/// nothing and exits 0: a green CI job that tested nothing.
#[test]
fn a_mistyped_suite_path_is_a_usage_error() {
    let dir = Scratch::new("cli-typo-path");
    let rd = dir.str("reports");
    let mut args = vec!["run", "suites/etga.yaml", "--report-dir", &rd];
    args.extend_from_slice(FAST);
    expect_usage_error(&args, &["suites/etga.yaml"]);
}

fn rules_json() -> Vec<Value> {
    let out = rpconform(&["rules", "--format", "json"], QUICK_TIMEOUT);
    assert_eq!(
        out.code(),
        0,
        "rules --format json failed\n{}",
        out.tail(2000)
    );
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "rules --format json is not a JSON array: {e}\n{}",
            common::cut(&out.stdout, 2000)
        )
    })
}

#[test]
fn rules_lists_the_whole_catalogue_in_text_and_json() {
    let out = rpconform(&["rules"], QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "rules failed\n{}", out.tail(2000));
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert!(
        lines.len() >= 132,
        "rules printed {} lines, expected at least 132\n{}",
        lines.len(),
        out.tail(1500)
    );

    let rules = rules_json();
    assert!(
        rules.len() >= 132,
        "rules --format json has {} entries, expected at least 132",
        rules.len()
    );
    let mut ids = BTreeSet::new();
    for r in &rules {
        let id = r["id"]
            .as_str()
            .unwrap_or_else(|| panic!("a rule without an id: {r}"));
        assert!(ids.insert(id.to_string()), "rule {id} is listed twice");
        assert!(
            matches!(r["level"].as_str(), Some("MUST" | "SHOULD" | "MAY")),
            "rule {id} has level {}, expected MUST, SHOULD or MAY",
            r["level"]
        );
        assert!(
            r["rule"].as_str().is_some_and(|s| !s.is_empty()),
            "rule {id} has no text: {r}"
        );
        assert!(
            r["judged_by"].is_array() && r["profile"].is_string(),
            "rule {id} lacks `judged_by` or `profile`: {r}"
        );
    }
    // Text and JSON list the same rules.
    for id in &ids {
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().next() == Some(id)),
            "rules (text) does not list {id}"
        );
    }
}

#[test]
fn list_faults_names_only_existing_rules() {
    let out = rpconform(&["serve", "--list-faults"], QUICK_TIMEOUT);
    assert_eq!(
        out.code(),
        0,
        "serve --list-faults failed\n{}",
        out.tail(2000)
    );
    let ids: BTreeSet<String> = rules_json()
        .iter()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect();
    let mut faults = BTreeSet::new();
    let mut unknown = Vec::new();
    for line in out.stdout.lines().filter(|l| !l.trim().is_empty()) {
        let mut cols = line.split_whitespace();
        let (Some(name), Some(rules), Some(_description)) = (cols.next(), cols.next(), cols.next())
        else {
            panic!("a --list-faults line is not `name  RULE-01,RULE-02  description`: {line:?}");
        };
        assert!(
            faults.insert(name.to_string()),
            "fault {name} is listed twice"
        );
        for rule in rules.split(',') {
            if !ids.contains(rule) {
                unknown.push(format!("{name}: {rule}"));
            }
        }
    }
    assert!(
        faults.len() >= 20,
        "serve --list-faults lists {} faults, expected at least 20\n{}",
        faults.len(),
        out.tail(2000)
    );
    assert!(
        unknown.is_empty(),
        "faults name rules that `rpconform rules` does not know: {unknown:?}"
    );
}

/// The entries of one section (`Options:`, `Arguments:`, `Commands:`) of a `--help` text, each
/// with its description (empty when it has none): on the entry's line after two spaces, or on
/// the lines below it, indented deeper.
fn help_entries(help: &str, section: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            inside = line == section;
            continue;
        }
        if !inside || line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 2 {
            let body = line.trim_start();
            let (entry, desc) = match body.find("  ") {
                Some(i) => (&body[..i], body[i..].trim()),
                None => (body, ""),
            };
            out.push((entry.to_string(), desc.to_string()));
        } else if let Some(last) = out.last_mut() {
            // A description on the lines below the entry.
            if !last.1.is_empty() {
                last.1.push(' ');
            }
            last.1.push_str(line.trim());
        }
    }
    out
}

/// Every option and argument of every subcommand (`report merge` and `report diff` too) says
/// in its `--help` line what it does.
#[test]
fn every_option_of_every_subcommand_has_a_help_line() {
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    let mut walked = Vec::new();
    let mut bare = Vec::new();
    while let Some(path) = todo.pop() {
        let mut args: Vec<String> = path.clone();
        args.push("--help".into());
        let out = rpconform(&args, QUICK_TIMEOUT);
        assert_eq!(out.code(), 0, "{}", out.tail(2000));
        for (cmd, desc) in help_entries(&out.stdout, "Commands:") {
            if cmd == "help" {
                continue;
            }
            assert!(
                !desc.is_empty(),
                "`rpconform {} {cmd}` has no description",
                path.join(" ")
            );
            let mut sub = path.clone();
            sub.push(cmd);
            todo.push(sub);
        }
        let mut entries = help_entries(&out.stdout, "Options:");
        entries.extend(help_entries(&out.stdout, "Arguments:"));
        if !path.is_empty() {
            assert!(
                !entries.is_empty(),
                "no option found in `rpconform {} --help`:\n{}",
                path.join(" "),
                out.stdout
            );
        }
        for (entry, desc) in entries {
            // `[default: 60]` or `[possible values: ...]` alone is not a description.
            let said = desc.split('[').next().unwrap_or("").trim();
            if said.is_empty() {
                bare.push(format!("rpconform {} {entry}", path.join(" ")));
            }
        }
        walked.push(path.join(" "));
    }
    for must in [
        "run",
        "rules",
        "probe",
        "serve",
        "init",
        "cleanup",
        "report merge",
        "report diff",
    ] {
        assert!(
            walked.iter().any(|w| w == must),
            "`rpconform {must} --help` was not walked: {walked:?}"
        );
    }
    assert!(bare.is_empty(), "options without a help line: {bare:#?}");
}

/// The README's `--version` line says what the binary says (the suite set's hash aside, which
/// changes with every suite edit): the suite and schema counts cannot drift.
#[test]
fn the_readme_version_line_is_the_binarys() {
    let out = rpconform(&["--version"], QUICK_TIMEOUT);
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    let line = out.stdout.trim();
    let (head, rest) = line
        .split_once("(suite set ")
        .expect("a suite set in --version");
    let counts = rest.split_once(": ").map(|x| x.1).unwrap_or_default();
    let want = format!("# {head}(suite set <its hash>: {counts}");
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    assert!(
        readme.contains(&want),
        "README.md should show `{want}` (from `rpconform --version`: {line})"
    );
}

/// `rpconform COMMAND | head -1`: the reader closes the pipe after one line. The command must
/// not panic (exit 101) and must still write its reports.
#[test]
fn a_reader_that_closes_stdout_early_stops_the_output_not_the_command() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = Scratch::new("closed-stdout");
    let fixtures = common::root().join("tests/fixtures/recordings");
    let cases: Vec<(&str, Vec<String>, Option<String>)> = vec![
        ("rules", vec!["rules".into()], None),
        (
            "replay",
            vec![
                "replay".into(),
                fixtures.display().to_string(),
                "--report-dir".into(),
                dir.str("replay"),
            ],
            Some(dir.str("replay/report.json")),
        ),
    ];
    for (label, args, report) in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rpconform"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader goes away here (stdout dropped with the BufReader).
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!first.is_empty(), "{label}: no first line");
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{label}: exit {:?}\n{stderr}",
            out.status.code()
        );
        assert!(!stderr.contains("panicked"), "{label}: {stderr}");
        // `rules` writes no report; `replay` must have written its own.
        assert!(
            report.is_none_or(|r| std::path::Path::new(&r).exists()),
            "{label}: no report written"
        );
    }
}
