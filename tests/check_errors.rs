//! `rpconform check` on suites with planted mistakes: exit code 2, and for every mistake a
//! diagnostic at its exact `file:line:col` with a message saying what is wrong and, where it
//! helps, what was expected (a did-you-mean, the allowed values, the schema files...).
//!
//! Each planted mistake's expected position is computed from the test's own YAML text (the
//! line holding a marker, the column of a token in it), so the cases read as plain YAML.
//! One file with several mistakes must report all of them; a valid file checks clean.

use crate::common;

use common::{QUICK_TIMEOUT, Scratch, rpconform, schemas_dir};

/// One planted mistake: where it is and what its diagnostic must say.
struct Planted {
    /// A substring of exactly one line of the file: the line of the mistake.
    line_has: &'static str,
    /// The text the diagnostic's column points at (its first occurrence in that line).
    at: &'static str,
    /// Fragments the diagnostic's message must contain.
    message: &'static [&'static str],
    /// Fragments the diagnostic's `= expected:` hint must contain (empty: no hint needed).
    hint: &'static [&'static str],
}

/// One diagnostic as `check` prints it: `error: MSG`, `--> file:line:col`, source lines, hint.
#[derive(Debug)]
struct Diag {
    message: String,
    pos: String,
    hint: String,
    text: String,
}

fn parse_diags(stderr: &str) -> Vec<Diag> {
    let mut out: Vec<Diag> = Vec::new();
    for line in stderr.lines() {
        if let Some(msg) = line.strip_prefix("error: ") {
            out.push(Diag {
                message: msg.to_string(),
                pos: String::new(),
                hint: String::new(),
                text: String::new(),
            });
        }
        let Some(d) = out.last_mut() else { continue };
        d.text.push_str(line);
        d.text.push('\n');
        if let Some(p) = line.trim_start().strip_prefix("--> ") {
            d.pos = p.trim().to_string();
        } else if let Some(h) = line.trim_start().strip_prefix("= expected: ") {
            d.hint = h.to_string();
        }
    }
    // The closing "N problem(s)" line has no position.
    out.retain(|d| !d.pos.is_empty());
    out
}

/// `file:line:col` of `p` in `text` (1-based, columns in characters).
fn position(file: &std::path::Path, text: &str, p: &Planted) -> String {
    let hits: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(p.line_has))
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "test bug: `{}` must be on exactly one line of the planted file",
        p.line_has
    );
    let (idx, line) = hits[0];
    let byte = line
        .find(p.at)
        .unwrap_or_else(|| panic!("test bug: `{}` is not on the line `{line}`", p.at));
    format!(
        "{}:{}:{}",
        file.display(),
        idx + 1,
        line[..byte].chars().count() + 1
    )
}

/// Check `text` as a suite file and return the problems with `planted` (empty: all reported).
fn check_planted(dir: &Scratch, name: &str, text: &str, planted: &[Planted]) -> Vec<String> {
    let file = dir.write(&format!("{name}.yaml"), text);
    let schemas = schemas_dir().display().to_string();
    let out = rpconform(
        &["check", &file.display().to_string(), "--schemas", &schemas],
        QUICK_TIMEOUT,
    );
    let diags = parse_diags(&out.stderr);
    let mut problems = Vec::new();
    if out.code() != 2 {
        problems.push(format!("exit code {} instead of 2", out.code()));
    }
    for p in planted {
        let pos = position(&file, text, p);
        let Some(d) = diags.iter().find(|d| d.pos == pos) else {
            let near: Vec<&str> = diags.iter().map(|d| d.pos.as_str()).collect();
            problems.push(format!(
                "no diagnostic at {pos} for `{}` (diagnostics at: {near:?})",
                p.line_has.trim()
            ));
            continue;
        };
        for m in p.message {
            if !d.message.contains(m) {
                problems.push(format!("{pos}: message `{}` lacks `{m}`", d.message));
            }
        }
        for h in p.hint {
            if !d.hint.contains(h) {
                problems.push(format!("{pos}: hint `{}` lacks `{h}`", d.hint));
            }
        }
    }
    if problems.is_empty() && diags.len() != planted.len() {
        let extra: Vec<String> = diags
            .iter()
            .map(|d| format!("{} {}", d.pos, d.message))
            .collect();
        problems.push(format!(
            "{} diagnostics for {} planted mistakes: {extra:#?}",
            diags.len(),
            planted.len()
        ));
    }
    if !problems.is_empty() {
        problems.insert(
            0,
            format!("== {name}.yaml:\n{text}\n-- stderr:\n{}", out.stderr),
        );
    }
    problems
}

const VALID: &str = r#"suite: planted-valid
description: A small valid suite, the base of the planted mistakes.
scenarios:
  - name: get-fresh
    for_each_type: [any]
    steps:
      - fresh: {as: r}
      - name: get
        request: {url: "${r.url}"}
        expect:
          - {status: 404, rule: DEL-04}
          - {header: x-ms-request-id, matches: '.+', rule: HDR-01}
          - {pointer: /error/code, exists: true, rule: ERR-01}
          - {schema: error-response.json, rule: ERR-01}
      - create: {as: s, wait: true}
        expect:
          - {outcome: Succeeded, rule: PUT-04}
"#;

#[test]
fn a_valid_file_checks_clean() {
    let dir = Scratch::new("check-valid");
    let file = dir.write("valid.yaml", VALID);
    let schemas = schemas_dir().display().to_string();
    let out = rpconform(
        &["check", &file.display().to_string(), "--schemas", &schemas],
        QUICK_TIMEOUT,
    );
    assert_eq!(
        out.code(),
        0,
        "a valid suite must check with exit 0\n{}",
        out.tail(3000)
    );
    assert!(
        out.stdout.contains("ok"),
        "check should say ok\n{}",
        out.tail(1000)
    );
}

/// Each kind of mistake, planted alone into the valid suite.
#[test]
fn each_mistake_alone_is_reported_at_its_position_with_a_hint() {
    let dir = Scratch::new("check-each");
    let cases: Vec<(&str, String, Planted)> = vec![
        (
            "unknown-key",
            VALID.replace(
                r#"request: {url: "${r.url}"}"#,
                r#"request: {url: "${r.url}", methd: GET}"#,
            ),
            Planted {
                line_has: "methd: GET",
                at: "methd",
                message: &["unknown key `methd`"],
                hint: &["did you mean `method`?"],
            },
        ),
        (
            "wrong-type",
            VALID.replace("wait: true", "wait: maybe"),
            Planted {
                line_has: "wait: maybe",
                at: "maybe",
                message: &["wait", "true or false"],
                hint: &[],
            },
        ),
        (
            "unknown-rule",
            VALID.replace("rule: DEL-04", "rule: DEL-004"),
            Planted {
                line_has: "DEL-004",
                at: "DEL-004",
                message: &["unknown rule ID `DEL-004`"],
                hint: &["did you mean `DEL-04`?"],
            },
        ),
        (
            "undefined-variable",
            VALID.replace(
                r#"request: {url: "${r.url}"}"#,
                r#"request: {url: "${rr.url}"}"#,
            ),
            Planted {
                line_has: "${rr.url}",
                at: "\"${rr.url}\"",
                message: &["undefined variable `rr`"],
                hint: &["`r`"],
            },
        ),
        (
            "unknown-step-in-when-running-at",
            VALID.replace(
                "{outcome: Succeeded, rule: PUT-04}",
                "{outcome: Succeeded, when_running_at: gett, rule: PUT-04}",
            ),
            Planted {
                line_has: "when_running_at: gett",
                at: "gett",
                message: &["no earlier step is named `gett`"],
                hint: &["did you mean `get`?"],
            },
        ),
        (
            "unknown-schema",
            VALID.replace("schema: error-response.json", "schema: error-reponse.json"),
            Planted {
                line_has: "error-reponse.json",
                at: "error-reponse.json",
                message: &["unknown schema file `error-reponse.json`"],
                hint: &["error-response.json"],
            },
        ),
        (
            "bad-regex",
            VALID.replace("matches: '.+'", "matches: '([a-z'"),
            Planted {
                line_has: "([a-z",
                at: "'([a-z'",
                message: &["invalid regex", "([a-z"],
                hint: &[],
            },
        ),
        (
            "bad-json-pointer",
            VALID.replace("pointer: /error/code", "pointer: error/code"),
            Planted {
                line_has: "pointer: error/code",
                at: "error/code",
                message: &["`error/code` is not a JSON Pointer"],
                hint: &["/a/b"],
            },
        ),
        (
            "expectation-without-rule",
            VALID.replace("{status: 404, rule: DEL-04}", "{status: 404}"),
            Planted {
                line_has: "{status: 404}",
                at: "{status: 404}",
                message: &["every expectation cites the rule it checks"],
                hint: &["rule:"],
            },
        ),
        (
            "duplicate-key",
            VALID.replace(
                "      - create: {as: s, wait: true}\n",
                "      - create: {as: s, wait: true}\n        create: {as: t}\n",
            ),
            Planted {
                line_has: "create: {as: t}",
                at: "create",
                message: &["duplicate key `create`"],
                hint: &[],
            },
        ),
        (
            "invalid-yaml",
            VALID.replace("- fresh: {as: r}", "- fresh: {as: r]"),
            Planted {
                line_has: "{as: r]",
                at: "]",
                message: &["invalid YAML", "'}'"],
                hint: &[],
            },
        ),
    ];
    let mut problems = Vec::new();
    for (name, text, planted) in &cases {
        assert_ne!(text, VALID, "test bug: case {name} planted nothing");
        problems.extend(check_planted(
            &dir,
            name,
            text,
            std::slice::from_ref(planted),
        ));
    }
    assert!(
        problems.is_empty(),
        "mistakes not reported as they should be:\n{}",
        problems.join("\n")
    );
}

#[test]
fn one_file_with_several_mistakes_reports_every_one() {
    let dir = Scratch::new("check-many");
    let text = r#"suite: planted-many
scenarios:
  - name: many-mistakes
    for_each_type: [any]
    steps:
      - fresh: {as: r}
      - name: get
        request: {url: "${r.url}", methd: GET}
        expect:
          - {status: 200, rule: ETAG-O7}
          - {status: 200}
          - {header: ETag, matches: '([a-z', rule: ETAG-24}
          - {pointer: "no-leading-slash", exists: true, rule: PUT-04}
          - {schema: no-such-schema.json, rule: OPRES-02}
      - name: again
        request: {url: "${gte.url}"}
      - create: {as: s, wait: maybe}
"#;
    let planted = [
        Planted {
            line_has: "methd: GET",
            at: "methd",
            message: &["unknown key `methd`"],
            hint: &["did you mean `method`?"],
        },
        Planted {
            line_has: "ETAG-O7",
            at: "ETAG-O7",
            message: &["unknown rule ID `ETAG-O7`"],
            hint: &["did you mean `ETAG-07`?"],
        },
        Planted {
            line_has: "{status: 200}",
            at: "{",
            message: &["cites the rule"],
            hint: &["rule:"],
        },
        Planted {
            line_has: "([a-z",
            at: "'([a-z'",
            message: &["invalid regex"],
            hint: &[],
        },
        Planted {
            line_has: "no-leading-slash",
            at: "\"no-leading-slash\"",
            message: &["not a JSON Pointer"],
            hint: &["/a/b"],
        },
        Planted {
            line_has: "no-such-schema",
            at: "no-such-schema",
            message: &["unknown schema file `no-such-schema.json`"],
            hint: &["operation-resource.json"],
        },
        Planted {
            line_has: "${gte.url}",
            at: "\"${gte.url}\"",
            message: &["undefined variable `gte`"],
            hint: &["`get`"],
        },
        Planted {
            line_has: "wait: maybe",
            at: "maybe",
            message: &["true or false"],
            hint: &[],
        },
    ];
    let problems = check_planted(&dir, "many", text, &planted);
    assert!(
        problems.is_empty(),
        "not every mistake was reported as it should be:\n{}",
        problems.join("\n")
    );
}

/// A target against which nothing would run is never "ok": `check` exits 1 and says why; the
/// same monitors without `profiles:` imply their profile (said in a note) and check ok, with
/// no subscription or resource group (a data plane has neither).
#[test]
fn a_target_where_nothing_would_run_is_not_ok() {
    let dir = Scratch::new("check-nothing-runs");
    let monitors = "base_url: http://127.0.0.1:9\nmonitors:\n  m:\n    request: {method: PUT, url: \"/w/x${unique}\", body: {}}\n    link: operation-location\n";
    let implied = dir.write("monitors.yaml", monitors);
    let out = rpconform(
        &[
            "check",
            "suites",
            "--target",
            &implied.display().to_string(),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 0, "{}", out.tail(2000));
    assert!(
        out.stdout
            .contains("implied by what it declares: azure-core-lro (monitors)"),
        "{}",
        out.stdout
    );
    let arm_only = dir.write("arm-only.yaml", &format!("{monitors}profiles: [arm]\n"));
    let out = rpconform(
        &[
            "check",
            "suites",
            "--target",
            &arm_only.display().to_string(),
        ],
        QUICK_TIMEOUT,
    );
    assert_eq!(out.code(), 1, "{}", out.tail(2000));
    assert!(out.stderr.contains("nothing would run"), "{}", out.stderr);
    assert!(!out.stdout.contains(": ok ("), "{}", out.stdout);
}
