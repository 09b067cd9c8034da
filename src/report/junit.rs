//! JUnit XML through quick-junit, written one testsuite at a time.
//!
//! - A `conformance` testsuite comes first: one testcase per rule of the declared profiles
//!   (`LOC-02`, classname `rpconform.conformance.LOC`), failed with the first evidence, skipped
//!   with why it was not judged; the run's settings are its properties (once per report).
//! - Then one testsuite per suite file, one testcase per test, failing only on the rules the
//!   test states (see [`super::conformance`] for why): a broken rule is a `<failure>` whose
//!   message starts with the rule IDs; "could not check" is an `<error>`; not applicable and
//!   ignored are `<skipped>` with the reason.
//!
//! Every testcase carries `file` and `line` attributes (the suite file and the scenario's line;
//! for a failed rule, the line of its first evidence; for a test whose first failed rule is a
//! SPEC rule, the spec operation's file and line) for CI annotations, and its failed rules in
//! properties. Failure messages are the same text in every run (no resource name, run id,
//! GUID or exchange number: [`stable_text`]); the details below them keep the exchanges.
//! Exchanges are one line each, the status before the URL.

use std::io::{self, Write};
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::conformance::{Conformance, RuleRow, RuleVerdict, line_of};
use super::counts::{Kind, unstated_failures};
use super::render::{failed_rules, failure_text, message};
use super::stable::stable_text;
use super::{Counts, RunInfo, RunState, RunStatus, ScenarioResult, Status};

/// The longest failure text kept in a testcase (the rest is in report.json and report.html).
const MAX_TEXT: usize = 64 * 1024;

/// The `<testsuite>` elements of a one-suite report, as quick-junit writes them.
fn suite_xml(suite: TestSuite) -> io::Result<Vec<u8>> {
    let mut report = Report::new("rpconform");
    report.add_test_suite(suite);
    let mut buf = Vec::new();
    report.serialize(&mut buf).map_err(io::Error::other)?;
    let text = String::from_utf8_lossy(&buf);
    let open = text
        .find("<testsuites")
        .and_then(|i| text[i..].find('>').map(|j| i + j + 1));
    let close = text.rfind("</testsuites>");
    match (open, close) {
        (Some(a), Some(b)) if a <= b => Ok(text[a..b].trim_matches('\n').as_bytes().to_vec()),
        _ => Err(io::Error::other("quick-junit wrote an unexpected document")),
    }
}

fn file_line(tc: &mut TestCase, at: &str) {
    let line = line_of(at);
    let file = at.rsplitn(3, ':').nth(2).filter(|_| line > 0).unwrap_or(at);
    tc.extra.insert("file".into(), file.into());
    if line > 0 {
        tc.extra.insert("line".into(), line.to_string().into());
    }
}

/// A SPEC failure's position in the RP's own spec (its operation's file and line), when the
/// first rule the test failed is a SPEC rule: CI annotates the spec, where the fix may be.
fn spec_position(r: &ScenarioResult, failed: &[String]) -> Option<String> {
    let first = failed.first()?;
    if crate::rules::family_of(first) != "SPEC" {
        return None;
    }
    let at = r
        .verdicts
        .iter()
        .find(|v| &v.rule == first)?
        .failures
        .first()?
        .at
        .clone()?;
    let file = at.rsplitn(3, ':').nth(2)?;
    (file != r.suite_file).then_some(at)
}

/// The testcase of one test; its failure message is the same text in every run (the run's
/// names and ids out: [`stable_text`]).
pub fn test_case(r: &ScenarioResult, run_ids: &[String]) -> TestCase {
    let status = match Kind::of(&r.status) {
        Kind::Passed | Kind::Warned => TestCaseStatus::success(),
        kind @ (Kind::Failed | Kind::Error) => {
            let failed = kind == Kind::Failed;
            let mut st = TestCaseStatus::non_success(if failed {
                NonSuccessKind::Failure
            } else {
                NonSuccessKind::Error
            });
            st.set_message(stable_text(&message(r), run_ids));
            st.set_type(if failed { "contract" } else { "runner" });
            st.set_description(crate::http::cut(&failure_text(r, true), MAX_TEXT));
            st
        }
        Kind::NotApplicable | Kind::Ignored | Kind::Skipped => {
            let mut st = TestCaseStatus::skipped();
            if let Status::Skipped(reason) = &r.status {
                st.set_message(reason.clone());
            }
            st
        }
        // Cut short by the run's interruption: not checked, so an error (a gate must not read
        // an interrupted test as skipped, let alone passed).
        Kind::Interrupted => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
            if let Status::Interrupted(at) = &r.status {
                st.set_message(at.clone());
            }
            st.set_type("interrupted");
            st
        }
    };
    let mut tc = TestCase::new(r.name.clone(), status);
    tc.set_classname(format!("rpconform.{}", r.suite));
    tc.set_time(Duration::from_millis(r.duration_ms));
    if !r.suite_file.is_empty() {
        tc.extra.insert("file".into(), r.suite_file.clone().into());
    }
    let line = line_of(&r.at);
    if line > 0 {
        tc.extra.insert("line".into(), line.to_string().into());
    }
    if r.flaky() {
        tc.add_property(("flaky", "true"));
    }
    if !r.stated.is_empty() {
        tc.add_property(("rules", r.stated.join(",").as_str()));
    }
    let failed = failed_rules(r);
    if !failed.is_empty() {
        tc.add_property(("failed_rules", failed.join(",").as_str()));
    }
    if let Some(at) = spec_position(r, &failed) {
        file_line(&mut tc, &at);
    }
    let unstated = unstated_failures(r);
    if !unstated.is_empty() {
        tc.add_property(("conformance_failures", unstated.join(",").as_str()));
    }
    let exempt: Vec<String> = r
        .verdicts
        .iter()
        .filter_map(|v| {
            v.exempt_reason
                .as_ref()
                .map(|why| format!("{} ({why})", v.rule))
        })
        .collect();
    if !exempt.is_empty() {
        tc.add_property(("exempt", exempt.join("; ").as_str()));
    }
    if r.status == Status::Warned {
        tc.add_property(("warnings", failed.join(",").as_str()));
    }
    if r.status == Status::Warned || !unstated.is_empty() {
        tc.set_system_out(crate::http::cut(&failure_text(r, false), MAX_TEXT));
    }
    tc
}

/// The run's own testcases: `run status` (the run's one verdict: a failure when it failed or,
/// under `--certify`, did not certify; an error when interrupted; skipped, with why, when it is
/// incomplete) and `cleanup` (a failure listing every resource left behind).
fn run_cases(info: &RunInfo, status: &RunStatus) -> Vec<TestCase> {
    let not_certified = status
        .certification
        .as_ref()
        .filter(|c| !c.certified)
        .map(|c| c.why_not.clone());
    let st = match (status.state, not_certified) {
        (RunState::Interrupted, _) => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
            st.set_message(status.headline());
            st.set_type("interrupted");
            st.set_description(status.reasons.join("\n"));
            st
        }
        (RunState::Failed, _) => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            st.set_message(crate::http::cut(&status.headline(), 400));
            st.set_type("run");
            st.set_description(
                status
                    .reasons
                    .iter()
                    .chain(&status.incomplete)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            st
        }
        (_, Some(why)) => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            st.set_message(crate::http::cut(&status.headline(), 400));
            st.set_type("certification");
            st.set_description(why.join("\n"));
            st
        }
        (RunState::Incomplete, None) => {
            let mut st = TestCaseStatus::skipped();
            st.set_message(crate::http::cut(&status.headline(), 400));
            st.set_description(status.incomplete.join("\n"));
            st
        }
        (RunState::Passed, None) => TestCaseStatus::success(),
    };
    let mut run = TestCase::new("run status", st);
    run.set_classname("rpconform.run");
    run.add_property(("status", status.state.label()));
    let cleanup = if info.left_behind.is_empty() {
        TestCaseStatus::success()
    } else {
        let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
        st.set_message(format!(
            "{} resource(s) the run created left behind (not confirmed deleted); `rpconform cleanup --journal` deletes them",
            info.left_behind.len()
        ));
        st.set_type("cleanup");
        st.set_description(crate::http::cut(&info.left_behind.join("\n"), MAX_TEXT));
        st
    };
    let mut cleanup = TestCase::new("cleanup", cleanup);
    cleanup.set_classname("rpconform.run");
    vec![run, cleanup]
}

/// The text of a rule's verdict: statement, counts, first evidence, failing tests.
pub fn rule_text(r: &RuleRow) -> String {
    let mut out = format!(
        "{} ({}, profile {}): {}\nfailed {} of {} checks in {} of {} tests\n",
        r.id,
        r.level,
        r.profile,
        r.statement,
        r.checks_failed,
        r.checks_failed + r.checks_passed,
        r.tests_failed,
        r.tests
    );
    if let Some(e) = &r.evidence {
        out.push_str(&format!(
            "first evidence, in {}{}:\n    expected: {}\n    seen:     {}\n    at:       {}\n",
            e.test,
            if e.stated {
                " (stated by the test)"
            } else {
                " (judged by the engine on the test's exchanges)"
            },
            e.expected,
            e.seen,
            e.at
        ));
        if let Some(q) = &e.request {
            out.push_str(&format!("    exchange: {q}\n"));
        }
        if e.count > 1 {
            out.push_str(&format!("    (seen {} times in that test)\n", e.count));
        }
        if let Some(t) = &e.transcript {
            out.push_str(&format!("--- exchange (redacted) ---\n{t}\n"));
        }
    }
    if !r.failing_tests.is_empty() {
        out.push_str(&format!("failing tests: {}", r.failing_tests.join(", ")));
        if r.tests_failed > r.failing_tests.len() {
            out.push_str(&format!(
                " and {} more",
                r.tests_failed - r.failing_tests.len()
            ));
        }
        out.push('\n');
    }
    out
}

/// The testcase of one rule of the conformance view; its failure message is the same text in
/// every run.
pub fn rule_case(r: &RuleRow, run_ids: &[String]) -> TestCase {
    let status = match r.verdict {
        RuleVerdict::Failed => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let first = r
                .evidence
                .as_ref()
                .map(|e| format!(": expected {}; seen {}", e.expected, e.seen))
                .unwrap_or_default();
            st.set_message(crate::http::cut(
                &stable_text(
                    &format!(
                        "{} ({}) failed in {} test(s), {} check(s){first}",
                        r.id, r.level, r.tests_failed, r.checks_failed
                    ),
                    run_ids,
                ),
                400,
            ));
            st.set_type("contract");
            st.set_description(rule_text(r));
            st
        }
        RuleVerdict::Warned | RuleVerdict::Passed => TestCaseStatus::success(),
        RuleVerdict::NotJudged | RuleVerdict::NotApplicable => {
            let mut st = TestCaseStatus::skipped();
            st.set_message(format!(
                "{}: {}",
                r.verdict.label(),
                r.why.clone().unwrap_or_default()
            ));
            st
        }
    };
    let mut tc = TestCase::new(r.id.clone(), status);
    tc.set_classname(format!("rpconform.conformance.{}", r.family));
    if let Some(e) = &r.evidence {
        file_line(&mut tc, &e.at);
    }
    tc.add_property(("level", r.level.as_str()));
    tc.add_property(("profile", r.profile.as_str()));
    tc.add_property(("tests", r.tests.to_string().as_str()));
    tc.add_property(("checks_failed", r.checks_failed.to_string().as_str()));
    tc.add_property(("checks_passed", r.checks_passed.to_string().as_str()));
    if r.verdict == RuleVerdict::Failed {
        tc.add_property(("failed_rules", r.id.as_str()));
    }
    if r.verdict == RuleVerdict::Warned {
        tc.add_property(("warnings", r.id.as_str()));
        tc.set_system_out(rule_text(r));
    }
    tc
}

/// Writes junit.xml a testsuite at a time: the conformance testsuite, then each suite's.
pub struct JunitWriter<W: Write> {
    out: W,
    suite: Option<TestSuite>,
    /// Taken out of failure messages (every shard's, merged).
    run_ids: Vec<String>,
}

impl<W: Write> JunitWriter<W> {
    /// The document head (with totals: tests and rules) and the conformance testsuite.
    pub fn begin(
        mut out: W,
        info: &RunInfo,
        counts: &Counts,
        conformance: &Conformance,
        status: &RunStatus,
    ) -> io::Result<Self> {
        let rules = &counts.rules;
        let run = run_cases(info, status);
        let of = |kind: NonSuccessKind| {
            run.iter()
                .filter(|c| {
                    matches!(&c.status, TestCaseStatus::NonSuccess { kind: k, .. } if *k == kind)
                })
                .count()
        };
        let tests = counts.tests() + conformance.rules.len() + run.len();
        write!(
            out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"rpconform\" tests=\"{tests}\" failures=\"{}\" errors=\"{}\" time=\"{:.3}\">\n",
            counts.failed + rules.failed + of(NonSuccessKind::Failure),
            counts.errors + counts.interrupted + of(NonSuccessKind::Error),
            info.duration_ms as f64 / 1000.0
        )?;
        let mut r = TestSuite::new("run");
        for c in run {
            r.add_test_case(c);
        }
        out.write_all(&suite_xml(r)?)?;
        out.write_all(b"\n")?;
        let mut s = TestSuite::new("conformance");
        let props = [
            ("status", status.state.label().to_string()),
            ("headline", status.headline()),
            (
                "certified",
                status
                    .certification
                    .as_ref()
                    .map(|c| c.certified.to_string())
                    .unwrap_or_default(),
            ),
            ("target", info.target.clone()),
            ("base_url", info.base_url.clone()),
            ("profiles", conformance.profiles.join(",")),
            ("time_scale", info.time_scale.to_string()),
            ("accelerated", info.accelerated.to_string()),
            ("strict", info.strict.to_string()),
            ("filters", info.filters.join(" ")),
            ("select", info.select.join(" ")),
            ("partition", info.partition.clone().unwrap_or_default()),
            ("interrupted", info.interrupted.to_string()),
            ("run_id", info.run_id.clone()),
            ("rpconform_version", info.rpconform_version.clone()),
            ("subject", info.subject.clone().unwrap_or_default()),
            ("suite_set", info.suite_set.clone()),
            ("catalogue", info.catalogue.clone()),
            ("target_file", info.target_file.clone().unwrap_or_default()),
            ("target_hash", info.target_hash.clone().unwrap_or_default()),
            ("started_at", info.started_at.clone()),
            ("ended_at", info.ended_at.clone()),
            ("left_behind", info.left_behind.len().to_string()),
            ("flaky_tests", counts.flaky.to_string()),
        ];
        for (k, v) in props {
            s.add_property((k, v.as_str()));
        }
        for r in &conformance.rules {
            s.add_test_case(rule_case(r, &info.run_ids()));
        }
        out.write_all(&suite_xml(s)?)?;
        out.write_all(b"\n")?;
        Ok(JunitWriter {
            out,
            suite: None,
            run_ids: info.run_ids(),
        })
    }

    fn flush_suite(&mut self) -> io::Result<()> {
        if let Some(s) = self.suite.take() {
            self.out.write_all(&suite_xml(s)?)?;
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }

    /// One test; tests of one suite must come together.
    pub fn add(&mut self, r: &ScenarioResult) -> io::Result<()> {
        if self
            .suite
            .as_ref()
            .is_some_and(|s| s.name.as_str() != r.suite)
        {
            self.flush_suite()?;
        }
        let suite = self.suite.get_or_insert_with(|| {
            let mut s = TestSuite::new(r.suite.clone());
            s.extra.insert("file".into(), r.suite_file.clone().into());
            s
        });
        suite.add_test_case(test_case(r, &self.run_ids));
        Ok(())
    }

    pub fn end(mut self) -> io::Result<W> {
        self.flush_suite()?;
        self.out.write_all(b"</testsuites>\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
#[path = "junit_tests.rs"]
mod tests;
