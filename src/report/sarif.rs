//! `results.sarif`: the run as SARIF 2.1.0, for code-scanning views (GitHub code scanning,
//! Azure DevOps' SARIF viewer). `tool.driver.rules` is the whole rule catalogue (statement,
//! source citation, MUST → `error`, SHOULD → `warning`, MAY → `note`).
//!
//! **One result per defect**: a rule broken at one place of the RP — its provider namespace,
//! resource type and operation ([`super::stable::Place`]: `DELETE widgets/{name}`) — however
//! many tests and checks met it; `occurrenceCount` and the properties count them, the first
//! [`OCCURRENCES_LISTED`] are listed (their exchanges, with the run's names, in `properties`
//! only). Its primary location is in the user's files: a SPEC finding's spec operation (file and
//! line), else the spec operation of the target's `openapi:` that describes the exchange, else
//! the target file's line for that type (the embedded target: [`EMBEDDED_TARGET`]);
//! rpconform's suite lines are `relatedLocations`. `partialFingerprints` hash rule, namespace,
//! type and operation, so a defect keeps its alert from run to run; `message.text` holds no
//! run-random name ([`super::stable::stable_text`]). URIs are RFC 3986 references.
//!
//! `invocations[0]` carries the run's one status: `executionSuccessful` is false when the run
//! could not do its work (interrupted, a test that could not check, a report not written) —
//! broken rules are results, not a failure of the tool —, `exitCode` is the run's; the run's
//! `properties` its status, subject and counts (flaky tests included).
//!
//! Fed like the other reports, a test at a time; the defects (one entry each, bounded by
//! rules × places) are written at the end.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use serde_json::{Value, json};

use super::render::exchange_line;
use super::stable::{Place, Site, site_for, split_exchange_line, stable_text};
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

/// At most this many occurrences of a defect are listed (suite lines in `relatedLocations`,
/// examples in its properties); the count says how many there were.
pub const OCCURRENCES_LISTED: usize = 10;

/// Characters of expected / seen text in a result's message.
const MESSAGE_PART: usize = 300;

/// The artifact of the embedded target: the text `rpconform serve --write-target FILE` writes
/// for the same settings (its lines are the ones given), never a file of the user's.
pub const EMBEDDED_TARGET: &str = "embedded-target.yaml";

/// What is left unescaped in a path of a URI reference: RFC 3986's unreserved characters and
/// the separator; everything else (spaces, brackets, `%`, `#`, `?`, `:`, non-ASCII letters as
/// UTF-8) is percent-encoded.
const PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// A file path as an RFC 3986 URI reference: a relative path stays relative (code scanning
/// reads it from the repository's root), an absolute one is a `file:` URI.
pub fn uri_of(path: &str) -> String {
    let p = path.replace('\\', "/");
    if p.is_empty() {
        return "unknown".into();
    }
    let enc = |s: &str| percent_encoding::utf8_percent_encode(s, PATH).to_string();
    let b = p.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        // A Windows drive: `C:/x` → `file:///C:/x`.
        return format!("file:///{}:{}", &p[..1], enc(&p[2..]));
    }
    if p.starts_with('/') {
        return format!("file://{}", enc(&p));
    }
    enc(&p)
}

/// A physical location: the file's URI and a region from its line (and column).
fn physical(file: &str, line: usize, col: Option<u64>) -> Value {
    let mut region = json!({"startLine": line.max(1)});
    if let Some(c) = col {
        region["startColumn"] = json!(c);
    }
    let mut artifact = json!({"uri": uri_of(file)});
    if file == EMBEDDED_TARGET {
        artifact["description"] = json!({"text": "the embedded reference RP's target file, as `rpconform serve --write-target FILE` writes it"});
    }
    json!({"artifactLocation": artifact, "region": region})
}

/// `file:line[:col]` → (file, line, column).
fn split_at(at: &str) -> Option<(String, usize, Option<u64>)> {
    let (line, col) = line_col(at)?;
    let n = if col.is_some() { 2 } else { 1 };
    let file = at.rsplitn(n + 1, ':').nth(n)?.to_string();
    Some((file, line as usize, col))
}

/// Is this a position in one of rpconform's suite files?
fn in_suites(file: &str) -> bool {
    file.starts_with("suites/") || file.starts_with("suites\\")
}

/// One defect: a rule broken at one place of the RP, with its occurrences.
struct Defect {
    rule: String,
    level: String,
    place: Place,
    /// The user's file and line: a SPEC finding's own spec position, else the site.
    primary: (String, usize, Option<u64>),
    /// The primary location's declaration (a type's key, a spec operation's id).
    declared: Option<String>,
    expected: String,
    seen: String,
    occurrences: u64,
    tests: u64,
    last_test: String,
    /// Suite lines of the first occurrences (file, line, column, test).
    suite_lines: Vec<(String, usize, Option<u64>, String)>,
    /// The first occurrences as they were (run-random names included): properties only.
    examples: Vec<Value>,
}

/// One failure of a rule in a test, before grouping.
struct Occurrence<'a> {
    expected: &'a str,
    seen: &'a str,
    count: u64,
    at: Option<&'a str>,
    step: Option<&'a str>,
    exchange: Option<String>,
}

/// Writes results.sarif: the head (driver, invocation, run properties), then one result per
/// defect (rule × namespace × type × operation), grouped over the whole run.
pub struct SarifWriter<W: Write> {
    out: W,
    head: String,
    index: HashMap<&'static str, usize>,
    /// The run's id (every shard's, merged): names holding one are the run's own.
    run_ids: Vec<String>,
    sites: Vec<Site>,
    /// The target's own file (or the embedded target's, or the label), for places no site
    /// declares.
    target_artifact: String,
    /// By rule and place, case folded (ARM matches paths without case): the first spelling
    /// seen is shown.
    defects: BTreeMap<(String, String), Defect>,
}

/// The file a defect falls back to when no declaration matches it.
fn target_artifact(info: &RunInfo) -> String {
    match &info.target_file {
        Some(f) => f.clone(),
        None if info.target == "embedded" || info.target.is_empty() => EMBEDDED_TARGET.into(),
        None => info.target.clone(),
    }
}

impl<W: Write> SarifWriter<W> {
    pub fn begin(out: W, info: &RunInfo, counts: &Counts, status: &RunStatus) -> io::Result<Self> {
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
        let mut props = json!({
            "runStatus": status.state.label(),
            "headline": status.headline(),
            "runId": info.run_id,
            "tests": counts.tests(),
            "failedTests": counts.failed,
            "flakyTests": counts.flaky,
            "failedRules": counts.rules.failing,
            "occurrencesListed": OCCURRENCES_LISTED,
        });
        if let Some(s) = &info.subject {
            props["subject"] = json!(s);
        }
        let head = json!({
            "tool": {"driver": {
                "name": "rpconform",
                "version": version,
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/rpconform/rpconform",
                "rules": driver_rules(),
            }},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "properties": props,
        });
        let head = serde_json::to_string_pretty(&head).map_err(io::Error::other)?;
        let index = crate::rules::all()
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id, i))
            .collect();
        Ok(SarifWriter {
            out,
            head,
            index,
            run_ids: info.run_ids(),
            sites: info.sites.clone(),
            target_artifact: target_artifact(info),
            defects: BTreeMap::new(),
        })
    }

    /// Where a failure lives in the RP, and the user's file and line that declares it.
    fn locate(
        &self,
        rule: &str,
        r: &ScenarioResult,
        o: &Occurrence<'_>,
    ) -> (Place, (String, usize, Option<u64>), Option<String>) {
        let ty = r.type_name.as_deref().unwrap_or("");
        let (method, url) = o
            .exchange
            .as_deref()
            .and_then(split_exchange_line)
            .unwrap_or(("", ""));
        let place = if url.is_empty() {
            Place {
                namespace: String::new(),
                resource_type: ty.to_string(),
                operation: o.step.map(|s| format!("step {s}")).unwrap_or_default(),
            }
        } else {
            super::stable::place(method, url, &self.run_ids, ty)
        };
        // A SPEC finding names its spec operation's file and line itself.
        if crate::rules::family_of(rule) == "SPEC"
            && let Some(p) = o.at.and_then(split_at).filter(|p| !in_suites(&p.0))
        {
            return (place, p, None);
        }
        let site = (!url.is_empty())
            .then(|| site_for(&self.sites, method, url))
            .flatten()
            .or_else(|| {
                self.sites
                    .iter()
                    .find(|s| s.method.is_none() && s.label == ty)
            });
        match site {
            Some(s) => (place, (s.file.clone(), s.line, None), Some(s.label.clone())),
            None => (place, (self.target_artifact.clone(), 1, None), None),
        }
    }

    /// The failures of one test, each into its defect.
    pub fn add(&mut self, r: &ScenarioResult) -> io::Result<()> {
        for v in r.verdicts.iter().filter(|v| v.failed_outcome()) {
            let occurrences: Vec<Occurrence<'_>> = if v.failures.is_empty() {
                vec![Occurrence {
                    expected: "",
                    seen: "",
                    count: u64::from(v.failed.max(1)),
                    at: None,
                    step: None,
                    exchange: None,
                }]
            } else {
                v.failures
                    .iter()
                    .map(|f| Occurrence {
                        expected: &f.expected,
                        seen: &f.seen,
                        count: u64::from(f.count.max(1)),
                        at: f.at.as_deref(),
                        step: f.step.as_deref(),
                        exchange: f.request.clone().or_else(|| {
                            f.exchange.and_then(|seq| {
                                r.exchanges.iter().find(|x| x.seq == seq).map(exchange_line)
                            })
                        }),
                    })
                    .collect()
            };
            for o in occurrences {
                self.record(v, r, &o);
            }
        }
        Ok(())
    }

    fn record(&mut self, v: &super::Verdict, r: &ScenarioResult, o: &Occurrence<'_>) {
        let (place, primary, declared) = self.locate(&v.rule, r, o);
        let run_ids = self.run_ids.clone();
        let d = self
            .defects
            .entry((
                v.rule.clone(),
                format!(
                    "{}|{}|{}",
                    place.namespace, place.resource_type, place.operation
                )
                .to_ascii_lowercase(),
            ))
            .or_insert_with(|| Defect {
                rule: v.rule.clone(),
                level: v.level.clone(),
                place,
                primary,
                declared,
                expected: stable_text(o.expected, &run_ids),
                seen: stable_text(o.seen, &run_ids),
                occurrences: 0,
                tests: 0,
                last_test: String::new(),
                suite_lines: Vec::new(),
                examples: Vec::new(),
            });
        d.occurrences += o.count;
        if d.last_test != r.name {
            d.tests += 1;
            d.last_test = r.name.clone();
        }
        if d.examples.len() < OCCURRENCES_LISTED {
            let mut ex =
                json!({"test": r.name, "expected": o.expected, "seen": o.seen, "count": o.count});
            if let Some(x) = &o.exchange {
                ex["exchange"] = json!(x);
            }
            if let Some(s) = o.step {
                ex["step"] = json!(s);
            }
            d.examples.push(ex);
        }
        // rpconform's own check: the suite line that states it, else the test's scenario.
        let (file, line, col) =
            o.at.and_then(split_at)
                .filter(|p| p.0 == r.suite_file)
                .or_else(|| split_at(&r.at))
                .unwrap_or((r.suite_file.clone(), 1, None));
        if d.suite_lines.len() < OCCURRENCES_LISTED
            && !d.suite_lines.iter().any(|s| s.0 == file && s.1 == line)
        {
            d.suite_lines.push((file, line, col, r.name.clone()));
        }
    }

    /// A defect as a SARIF result.
    fn result(&self, d: &Defect) -> Value {
        let p = &d.place;
        let mut text = format!("{} ({})", d.rule, d.level);
        if !p.operation.is_empty() {
            text.push_str(&format!(" on {}", p.operation));
        }
        if !p.resource_type.is_empty() {
            text.push_str(&format!(" ({})", p.resource_type));
        }
        if d.expected.is_empty() {
            text.push_str(": failed");
        } else {
            text.push_str(&format!(
                ": expected {}; seen {}",
                crate::http::cut(&d.expected, MESSAGE_PART),
                crate::http::cut(&d.seen, MESSAGE_PART)
            ));
        }
        text.push_str(&format!(
            " — {} occurrence(s) in {} test(s)",
            d.occurrences, d.tests
        ));
        let name = format!("{} {}", p.resource_type, p.operation);
        let related: Vec<Value> = d
            .suite_lines
            .iter()
            .enumerate()
            .map(|(i, (file, line, col, test))| {
                json!({
                    "id": i + 1,
                    "physicalLocation": physical(file, *line, *col),
                    "message": {"text": format!("rpconform's check, in test {test}")},
                })
            })
            .collect();
        let mut x = json!({
            "ruleId": d.rule,
            "level": sarif_level(&d.level),
            "kind": "fail",
            "message": {"text": text},
            "locations": [{
                "physicalLocation": physical(&d.primary.0, d.primary.1, d.primary.2),
                "logicalLocations": [{"fullyQualifiedName": name.trim(), "kind": "member"}],
            }],
            "relatedLocations": related,
            "partialFingerprints": {"rpconformDefect/v1": fingerprint(&d.rule, p)},
            "occurrenceCount": d.occurrences,
            "properties": {
                "namespace": p.namespace,
                "resourceType": p.resource_type,
                "operation": p.operation,
                "occurrences": d.occurrences,
                "tests": d.tests,
                "examples": d.examples,
                "examplesLeftOut": d.occurrences.saturating_sub(d.examples.len() as u64),
            },
        });
        if let Some(l) = &d.declared {
            x["properties"]["declaredAs"] = json!(l);
        }
        if let Some(i) = self.index.get(d.rule.as_str()) {
            x["ruleIndex"] = json!(i);
        }
        x
    }

    /// The results, in a stable order (rule, then place).
    pub fn results(&self) -> Vec<Value> {
        self.defects.values().map(|d| self.result(d)).collect()
    }

    pub fn end(mut self) -> io::Result<W> {
        let mut run: Value = serde_json::from_str(&self.head).map_err(io::Error::other)?;
        run["results"] = Value::Array(self.results());
        let doc = json!({
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [run],
        });
        serde_json::to_writer_pretty(&mut self.out, &doc).map_err(io::Error::other)?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The same defect's fingerprint in every run: rule, namespace, type and operation (case
/// folded, as ARM matches them).
pub fn fingerprint(rule: &str, p: &Place) -> String {
    let key =
        format!("{rule}|{}|{}|{}", p.namespace, p.resource_type, p.operation).to_ascii_lowercase();
    format!("{:016x}", crate::fingerprint::fnv1a(key.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::conformance::conformance;
    use crate::report::fixtures::{fail, faulty_run, info};

    fn sarif_of(results: &[ScenarioResult]) -> Value {
        sarif_of_with(&info(), results)
    }

    fn sarif_of_with(i: &RunInfo, results: &[ScenarioResult]) -> Value {
        let i = i.clone();
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
    fn one_result_per_defect_located_in_the_users_files() {
        let mut i = info();
        i.target = "contoso".into();
        i.target_file = Some("ci/my target [rp].yaml".into());
        i.subject = Some("contoso-rp@1.4.2".into());
        i.sites = vec![Site {
            method: None,
            namespace: "Microsoft.Contoso".into(),
            shape: "widgets".into(),
            label: "widgets".into(),
            file: "ci/my target [rp].yaml".into(),
            line: 21,
        }];
        let v = sarif_of_with(&i, &faulty_run());
        assert_eq!(v["version"], "2.1.0");
        assert_eq!(v["$schema"], SARIF_SCHEMA);
        let run = &v["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "rpconform");
        assert_eq!(run["properties"]["subject"], "contoso-rp@1.4.2");
        assert_eq!(run["properties"]["flakyTests"], 0);
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), crate::rules::all().len());
        let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
        let results = run["results"].as_array().unwrap();
        // LOC-02 on the PUT in two tests is one defect; ETAG-07 and HDR-02 one each.
        let by_rule: Vec<&str> = results
            .iter()
            .map(|x| x["ruleId"].as_str().unwrap())
            .collect();
        assert_eq!(by_rule, ["ETAG-07", "HDR-02", "LOC-02"]);
        for x in results {
            let id = x["ruleId"].as_str().unwrap();
            let i = x["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(ids[i], id);
            let loc = &x["locations"][0]["physicalLocation"];
            assert_eq!(
                loc["artifactLocation"]["uri"],
                "ci/my%20target%20%5Brp%5D.yaml"
            );
            assert_eq!(loc["region"]["startLine"], 21);
            assert!(
                x["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .starts_with("suites/")
            );
            assert!(x["partialFingerprints"]["rpconformDefect/v1"].is_string());
            let text = x["message"]["text"].as_str().unwrap();
            assert!(text.contains("PUT widgets/{name}"), "{text}");
            assert!(!text.contains("w1") && !text.contains("#1"), "{text}");
        }
        let loc = &results[2];
        assert_eq!(loc["occurrenceCount"], 4);
        assert_eq!(loc["properties"]["tests"], 2);
        assert_eq!(loc["relatedLocations"].as_array().unwrap().len(), 2);
        assert_eq!(
            loc["properties"]["examples"][0]["exchange"]
                .as_str()
                .unwrap()
                .split(' ')
                .nth(2),
            Some("PUT")
        );
        assert_eq!(run["invocations"][0]["executionSuccessful"], true);
        assert_eq!(run["invocations"][0]["exitCode"], 1);
    }

    #[test]
    fn fingerprints_depend_on_the_defect_not_the_run() {
        let mut a = faulty_run();
        let v1 = sarif_of(&a);
        // Another run: other names, other exchange numbers.
        for r in &mut a {
            for x in &mut r.exchanges {
                x.url = x.url.replace("/w1", "/w2");
                x.seq += 100;
            }
            for v in &mut r.verdicts {
                for f in &mut v.failures {
                    f.exchange = f.exchange.map(|s| s + 100);
                }
            }
        }
        let v2 = sarif_of(&a);
        let prints = |v: &Value| -> Vec<String> {
            v["runs"][0]["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["partialFingerprints"]["rpconformDefect/v1"].to_string())
                .collect()
        };
        assert_eq!(prints(&v1), prints(&v2));
        // The embedded target has no file of the user's: its own target text is named.
        assert_eq!(
            v1["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            EMBEDDED_TARGET
        );
    }

    #[test]
    fn a_spec_finding_points_at_its_spec_operation() {
        let mut run = faulty_run();
        run[0].verdicts[0] = fail("SPEC-01", "MUST", 1, Some("specs/widgets.json:120:5"));
        let v = sarif_of(&run);
        let spec = v["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["ruleId"] == "SPEC-01")
            .unwrap()
            .clone();
        let loc = &spec["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "specs/widgets.json");
        assert_eq!(loc["region"]["startLine"], 120);
        assert_eq!(
            spec["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "suites/async-put.yaml"
        );
    }

    #[test]
    fn uris_are_rfc3986_references() {
        assert_eq!(
            uri_of("Prüfungen [ci]/widgets.yaml"),
            "Pr%C3%BCfungen%20%5Bci%5D/widgets.yaml"
        );
        assert_eq!(uri_of("a\\b c.yaml"), "a/b%20c.yaml");
        assert_eq!(uri_of("/tmp/x#1/t.yaml"), "file:///tmp/x%231/t.yaml");
        assert_eq!(uri_of("C:\\ci\\t.yaml"), "file:///C:/ci/t.yaml");
        assert_eq!(uri_of("we:ird.yaml"), "we%3Aird.yaml");
        for u in [uri_of("100% sure?.yaml"), uri_of("ok-._~.yaml")] {
            assert!(
                url::Url::parse("http://h/").unwrap().join(&u).is_ok(),
                "{u}"
            );
            assert!(u.chars().all(|c| c.is_ascii_graphic()), "{u}");
        }
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
