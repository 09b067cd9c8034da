//! `results.sarif`: the run as SARIF 2.1.0, for code-scanning views (GitHub code scanning,
//! Azure DevOps' SARIF viewer). `tool.driver.rules` is the whole rule catalogue (statement,
//! source citation, MUST → `error`, SHOULD → `warning`, MAY → `note`); each failed check of a
//! rule in a test is one `result` at the suite line that stated it (or the scenario's line),
//! its message saying what was expected, what was seen and the exchange that showed it.
//! `invocations[0]` carries the run's one status: `executionSuccessful` is false when the run
//! could not do its work (interrupted, a test that could not check, a report not written) —
//! broken rules are results, not a failure of the tool —, `exitCode` is the run's.
//!
//! Written as a stream like the other reports: the head, then each test's results as the test
//! comes, then the end.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::{Value, json};

use super::render::exchange_line;
use super::status::{RunState, RunStatus};
use super::{Counts, RunInfo, ScenarioResult};

/// The file name in the report directory.
pub const SARIF_FILE: &str = "results.sarif";

/// The schema the file names in `$schema`.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// SARIF's level of a rule level.
pub fn sarif_level(level: &str) -> &'static str {
    match level {
        "MUST" => "error",
        "SHOULD" => "warning",
        _ => "note",
    }
}

/// The first sentence of a rule's statement (SARIF's short description).
fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    }
}

/// The catalogue as `tool.driver.rules`.
fn driver_rules() -> Vec<Value> {
    crate::rules::all()
        .iter()
        .map(|r| {
            let level = r.level.as_str();
            let help = if r.source.is_empty() {
                format!("{} {level}", r.id)
            } else {
                format!("Source: {}", r.source)
            };
            json!({
                "id": r.id,
                "shortDescription": {"text": first_sentence(r.rule)},
                "fullDescription": {"text": r.rule},
                "help": {"text": help},
                "defaultConfiguration": {"level": sarif_level(level)},
                "properties": {
                    "level": level,
                    "profile": r.profile.name(),
                    "family": r.family(),
                    "tags": [r.family(), r.profile.name()],
                },
            })
        })
        .collect()
}

/// `file:line:col` → (line, column), both from 1.
pub fn line_col(at: &str) -> Option<(u64, Option<u64>)> {
    let mut parts = at.rsplitn(3, ':');
    let last = parts.next()?;
    let before = parts.next()?;
    match (before.parse::<u64>(), last.parse::<u64>()) {
        // file:line:col
        (Ok(line), Ok(col)) if parts.next().is_some() => {
            (line >= 1).then_some((line, (col >= 1).then_some(col)))
        }
        // file:line
        (_, Ok(line)) => (line >= 1).then_some((line, None)),
        _ => None,
    }
}

/// Where a finding is: the suite file, at the finding's position or the scenario's.
fn location(r: &ScenarioResult, at: Option<&str>) -> Value {
    let pos = at.and_then(line_col).or_else(|| line_col(&r.at));
    let (line, col) = pos.unwrap_or((1, None));
    let mut region = json!({"startLine": line});
    if let Some(c) = col {
        region["startColumn"] = json!(c);
    }
    json!({
        "physicalLocation": {
            "artifactLocation": {"uri": uri_of(&r.suite_file)},
            "region": region,
        },
        "logicalLocations": [{"fullyQualifiedName": r.name, "kind": "function"}],
    })
}

/// A relative path as a URI reference: forward slashes, spaces and `%` escaped.
fn uri_of(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '\\' => s.push('/'),
            ' ' => s.push_str("%20"),
            '%' => s.push_str("%25"),
            '#' => s.push_str("%23"),
            '?' => s.push_str("%3F"),
            c => s.push(c),
        }
    }
    if s.is_empty() { "unknown".into() } else { s }
}

/// Writes results.sarif: the head (driver, invocation), each test's results, the end.
pub struct SarifWriter<W: Write> {
    out: W,
    first: bool,
    index: HashMap<&'static str, usize>,
}

impl<W: Write> SarifWriter<W> {
    pub fn begin(
        mut out: W,
        info: &RunInfo,
        counts: &Counts,
        status: &RunStatus,
    ) -> io::Result<Self> {
        let version = if info.rpconform_version.is_empty() {
            env!("CARGO_PKG_VERSION").to_string()
        } else {
            info.rpconform_version.clone()
        };
        let successful =
            status.state != RunState::Interrupted && counts.errors == 0 && info.problems.is_empty();
        let mut invocation = json!({
            "executionSuccessful": successful,
            "exitCode": status.exit_code(),
            "exitCodeDescription": status.headline(),
            "properties": {
                "runStatus": status.state.label(),
                "runId": info.run_id,
                "target": info.target,
                "timeScale": info.time_scale,
                "provenance": info.provenance(),
            },
        });
        if let Some(c) = &status.certification {
            invocation["properties"]["certified"] = json!(c.certified);
        }
        let head = json!({
            "tool": {"driver": {
                "name": "rpconform",
                "version": version,
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": driver_rules(),
            }},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
        });
        let head = serde_json::to_string_pretty(&head).map_err(io::Error::other)?;
        // The run object without its closing brace: results follow.
        let head = head
            .trim_end()
            .strip_suffix('}')
            .unwrap_or(&head)
            .trim_end();
        write!(
            out,
            "{{\n\"$schema\": \"{SARIF_SCHEMA}\",\n\"version\": \"2.1.0\",\n\"runs\": [\n{head},\n  \"results\": ["
        )?;
        let index = crate::rules::all()
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id, i))
            .collect();
        Ok(SarifWriter {
            out,
            first: true,
            index,
        })
    }

    /// The SARIF results of one test: one per failed check of a rule.
    pub fn results(&self, r: &ScenarioResult) -> Vec<Value> {
        let mut out = Vec::new();
        for v in r.verdicts.iter().filter(|v| v.failed_outcome()) {
            let level = sarif_level(&v.level);
            let mut base = json!({
                "ruleId": v.rule,
                "level": level,
                "kind": "fail",
            });
            if let Some(i) = self.index.get(v.rule.as_str()) {
                base["ruleIndex"] = json!(i);
            }
            if v.failures.is_empty() {
                let mut x = base.clone();
                x["message"] = json!({"text": format!(
                    "{} ({}) failed in {} ({} of {} checks)",
                    v.rule, v.level, r.name, v.failed, v.failed + v.passed
                )});
                x["locations"] = json!([location(r, None)]);
                x["properties"] = json!({"test": r.name});
                out.push(x);
                continue;
            }
            for f in &v.failures {
                let exchange = f.request.clone().or_else(|| {
                    f.exchange.and_then(|seq| {
                        r.exchanges.iter().find(|x| x.seq == seq).map(exchange_line)
                    })
                });
                let mut text = format!(
                    "{} ({}) in {}: expected {}; seen {}",
                    v.rule, v.level, r.name, f.expected, f.seen
                );
                if f.count > 1 {
                    text.push_str(&format!(" ({} times)", f.count));
                }
                if let Some(x) = &exchange {
                    text.push_str(&format!(" — {x}"));
                }
                let mut x = base.clone();
                x["message"] = json!({"text": text});
                x["locations"] = json!([location(r, f.at.as_deref())]);
                let mut props = json!({
                    "test": r.name,
                    "expected": f.expected,
                    "seen": f.seen,
                });
                if let Some(e) = &exchange {
                    props["exchange"] = json!(e);
                }
                if let Some(s) = &f.step {
                    props["step"] = json!(s);
                }
                x["properties"] = props;
                out.push(x);
            }
        }
        out
    }

    pub fn add(&mut self, r: &ScenarioResult) -> io::Result<()> {
        for x in self.results(r) {
            self.out
                .write_all(if self.first { b"\n" } else { b",\n" })?;
            self.first = false;
            serde_json::to_writer(&mut self.out, &x).map_err(io::Error::other)?;
        }
        Ok(())
    }

    pub fn end(mut self) -> io::Result<W> {
        self.out.write_all(b"\n]\n}\n]\n}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::conformance::conformance;
    use crate::report::fixtures::{faulty_run, info};

    fn sarif_of(results: &[ScenarioResult]) -> Value {
        let i = info();
        let conf = conformance(&i, results);
        let mut c = Counts::default();
        for r in results {
            c.add(r);
        }
        c.set_rules(&conf);
        let status = RunStatus::compute(&i, &c, &conf);
        let mut w = SarifWriter::begin(Vec::new(), &i, &c, &status).unwrap();
        for r in results {
            w.add(r).unwrap();
        }
        let bytes = w.end().unwrap();
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("not JSON: {e}\n{}", String::from_utf8_lossy(&bytes)))
    }

    #[test]
    fn positions_parse_from_file_line_col() {
        assert_eq!(line_col("suites/etag.yaml:12:5"), Some((12, Some(5))));
        assert_eq!(line_col("suites/etag.yaml:12"), Some((12, None)));
        assert_eq!(line_col("C:/x/etag.yaml:3:1"), Some((3, Some(1))));
        assert_eq!(line_col("nowhere"), None);
        assert_eq!(line_col("f:0:0"), None);
    }

    #[test]
    fn every_failed_check_is_a_result_on_a_catalogue_rule_at_a_suite_line() {
        let v = sarif_of(&faulty_run());
        assert_eq!(v["version"], "2.1.0");
        assert_eq!(v["$schema"], SARIF_SCHEMA);
        let run = &v["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "rpconform");
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), crate::rules::all().len());
        let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
        let results = run["results"].as_array().unwrap();
        assert!(!results.is_empty());
        for x in results {
            let id = x["ruleId"].as_str().unwrap();
            let i = x["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(ids[i], id);
            assert!(matches!(
                x["level"].as_str(),
                Some("error" | "warning" | "note")
            ));
            let loc = &x["locations"][0]["physicalLocation"];
            assert!(
                loc["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .ends_with(".yaml")
            );
            assert!(loc["region"]["startLine"].as_u64().unwrap() >= 1);
            let text = x["message"]["text"].as_str().unwrap();
            assert!(text.contains("expected") && text.contains("seen"), "{text}");
        }
        let failing: std::collections::BTreeSet<&str> = results
            .iter()
            .map(|x| x["ruleId"].as_str().unwrap())
            .collect();
        assert!(failing.contains("LOC-02"), "{failing:?}");
        assert_eq!(run["invocations"][0]["executionSuccessful"], true);
        assert_eq!(run["invocations"][0]["exitCode"], 1);
    }

    #[test]
    fn rule_levels_map_to_sarif_levels() {
        assert_eq!(sarif_level("MUST"), "error");
        assert_eq!(sarif_level("SHOULD"), "warning");
        assert_eq!(sarif_level("MAY"), "note");
        let v = sarif_of(&[]);
        for r in v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap() {
            let want = sarif_level(r["properties"]["level"].as_str().unwrap());
            assert_eq!(r["defaultConfiguration"]["level"], want, "{r}");
            assert!(!r["fullDescription"]["text"].as_str().unwrap().is_empty());
        }
        assert_eq!(v["runs"][0]["results"], json!([]));
    }
}
