//! One set of counts for every report and the console: tests by how they ended, and rules by
//! their verdict in the conformance view. A test's status comes from [`test_status`] (the
//! rules it states); "not applicable" and "ignored" are counted apart and are never "passed".

use serde::{Deserialize, Serialize};

use super::conformance::Conformance;
pub use super::kinds::{Kind, RuleVerdict};
use super::{ScenarioResult, Status, Verdict};

/// Rules of the conformance view by verdict.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleCounts {
    pub passed: usize,
    pub failed: usize,
    pub warned: usize,
    pub not_judged: usize,
    pub not_applicable: usize,
    /// Rules of profiles the target does not declare (outside the view).
    pub undeclared: usize,
    /// The failed rule IDs, MUST first.
    #[serde(default)]
    pub failing: Vec<String>,
    #[serde(default)]
    pub warning: Vec<String>,
}

/// Counts over a run: tests by status, rules by verdict.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub passed: usize,
    pub warned: usize,
    pub failed: usize,
    pub errors: usize,
    /// Every test not run: not applicable, ignored, or skipped otherwise.
    pub skipped: usize,
    #[serde(default)]
    pub not_applicable: usize,
    #[serde(default)]
    pub ignored: usize,
    /// Tests the run's interruption cut short (not counted in `skipped`).
    #[serde(default)]
    pub interrupted: usize,
    /// Tests that needed `--retries` (a request got no answer of the RP's, then one), whatever
    /// their verdict.
    #[serde(default)]
    pub flaky: usize,
    #[serde(default)]
    pub rules: RuleCounts,
}

impl Counts {
    /// Count one test.
    pub fn add(&mut self, r: &ScenarioResult) {
        if r.flaky() {
            self.flaky += 1;
        }
        match Kind::of(&r.status) {
            Kind::Passed => self.passed += 1,
            Kind::Warned => self.warned += 1,
            Kind::Failed => self.failed += 1,
            Kind::Error => self.errors += 1,
            Kind::NotApplicable => {
                self.skipped += 1;
                self.not_applicable += 1;
            }
            Kind::Ignored => {
                self.skipped += 1;
                self.ignored += 1;
            }
            Kind::Skipped => self.skipped += 1,
            Kind::Interrupted => self.interrupted += 1,
        }
    }

    pub fn tests(&self) -> usize {
        self.passed + self.warned + self.failed + self.errors + self.skipped + self.interrupted
    }

    /// Take the rule counts from a conformance view.
    pub fn set_rules(&mut self, c: &Conformance) {
        let mut rc = RuleCounts {
            undeclared: c.undeclared.iter().map(|u| u.rules).sum(),
            ..Default::default()
        };
        for r in &c.rules {
            match r.verdict {
                RuleVerdict::Passed => rc.passed += 1,
                RuleVerdict::Failed => {
                    rc.failed += 1;
                    rc.failing.push(r.id.clone());
                }
                RuleVerdict::Warned => {
                    rc.warned += 1;
                    rc.warning.push(r.id.clone());
                }
                RuleVerdict::NotJudged => rc.not_judged += 1,
                RuleVerdict::NotApplicable => rc.not_applicable += 1,
            }
        }
        self.rules = rc;
    }

    /// Did the run fail: a test failed or could not be checked, or a rule failed (a MUST rule,
    /// or any rule under `--strict`: the conformance view applies the bar)?
    pub fn failed_run(&self) -> bool {
        self.failed + self.errors + self.rules.failed > 0
    }
}

/// A test's status from every rule judged on its exchanges — the rules it states and those the
/// engine judged by itself (ambient and flow rules) alike, so the libtest line and the rule
/// verdicts agree: a MUST rule failed (or, under `--strict`, any rule) → failed; only SHOULD/MAY
/// rules failed → warned; the runner could not check → error (failed, when rules failed too);
/// nothing judged at all → not applicable; else passed.
pub fn test_status(
    error: Option<String>,
    verdicts: &[Verdict],
    strict: bool,
    judged_any: bool,
) -> Status {
    let failed = |must_only: bool| {
        verdicts
            .iter()
            .any(|v| v.failed_outcome() && (!must_only || v.level == "MUST"))
    };
    let bar = failed(!strict);
    match error {
        Some(_) if bar => Status::Failed,
        Some(e) => Status::Error(e),
        None if bar => Status::Failed,
        None if failed(false) => Status::Warned,
        None if !judged_any => Status::Skipped(
            "not applicable: no rule could be judged on this target (every step's condition was false, or nothing showed what the rules need)"
                .into(),
        ),
        None => Status::Passed,
    }
}

/// The rules that failed in a test's exchanges without the test stating them (reported in the
/// conformance view), MUST first.
pub fn unstated_failures(r: &ScenarioResult) -> Vec<String> {
    let mut v: Vec<&Verdict> = r
        .verdicts
        .iter()
        .filter(|v| v.failed_outcome() && !r.stated.contains(&v.rule))
        .collect();
    v.sort_by_key(|x| (x.level != "MUST", x.rule.clone()));
    v.into_iter().map(|x| x.rule.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunInfo;

    fn v(rule: &str, level: &str, outcome: &str) -> Verdict {
        Verdict {
            rule: rule.into(),
            level: level.into(),
            outcome: outcome.into(),
            passed: u32::from(outcome == "passed"),
            failed: u32::from(outcome == "failed"),
            failures: Vec::new(),
            exempt_reason: None,
            not_judged: None,
        }
    }

    #[test]
    fn a_test_fails_on_any_rule_its_exchanges_broke() {
        // LOC-02 is ambient: the test does not state it, and still fails on it, so the libtest
        // line and the conformance view agree.
        let vs = [
            v("LOC-02", "MUST", "failed"),
            v("ETAG-07", "MUST", "passed"),
        ];
        assert_eq!(test_status(None, &vs, false, true), Status::Failed);
        let vs = [v("ETAG-07", "MUST", "passed")];
        assert_eq!(test_status(None, &vs, false, true), Status::Passed);
        let vs = [v("HDR-02", "SHOULD", "failed")];
        assert_eq!(test_status(None, &vs, false, true), Status::Warned);
        assert_eq!(test_status(None, &vs, true, true), Status::Failed);
        assert_eq!(
            test_status(Some("boom".into()), &vs, false, true),
            Status::Error("boom".into())
        );
        assert_eq!(
            test_status(Some("boom".into()), &vs, true, true),
            Status::Failed
        );
        assert!(matches!(
            test_status(None, &[], false, false),
            Status::Skipped(r) if r.starts_with("not applicable")
        ));
    }

    #[test]
    fn not_applicable_is_never_passed() {
        let mut c = Counts::default();
        let mut r = ScenarioResult {
            name: "s::a".into(),
            suite: "s".into(),
            suite_file: "suites/s.yaml".into(),
            scenario: "a".into(),
            type_name: None,
            row: None,
            at: "suites/s.yaml:3:5".into(),
            status: Status::Skipped("not applicable: no type".into()),
            duration_ms: 0,
            cleanup_ms: None,
            verdicts: Vec::new(),
            polls: Vec::new(),
            notes: Vec::new(),
            exchanges: Vec::new(),
            stated: Vec::new(),
            transcript: None,
        };
        c.add(&r);
        r.status = Status::Skipped("ignored: flaky".into());
        c.add(&r);
        r.status = Status::Passed;
        c.add(&r);
        assert_eq!(
            (c.passed, c.skipped, c.not_applicable, c.ignored),
            (1, 2, 1, 1)
        );
        let status = |c: &Counts| {
            let i = RunInfo {
                profiles: vec!["task-api".into()],
                ..Default::default()
            };
            let conf = crate::report::conformance(&i, &[]);
            let mut c = c.clone();
            let rules = c.rules.clone();
            c.set_rules(&conf);
            c.rules = rules;
            super::super::RunStatus::compute(&i, &c, &conf)
        };
        let line = crate::report::console_summary(
            &c,
            &RunInfo::default(),
            std::path::Path::new("reports"),
            &status(&c),
        );
        assert!(line.contains("1 passed"), "{line}");
        assert!(line.contains("1 not applicable"), "{line}");
        assert!(line.contains("1 ignored"), "{line}");
        assert!(line.contains("(of 3)"), "{line}");
        assert!(!c.failed_run());
        c.rules.failed = 1;
        c.rules.failing = vec!["LOC-02".into()];
        let line = crate::report::console_summary(
            &c,
            &RunInfo::default(),
            std::path::Path::new("reports"),
            &status(&c),
        );
        assert!(c.failed_run());
        assert!(
            line.contains("FAILED") && line.contains("1 failed (LOC-02)"),
            "{line}"
        );
    }
}
