//! The run's one verdict: [`RunStatus`], computed once from the run's settings ([`RunInfo`]),
//! its counts and its conformance view, and only rendered by every output — the console's last
//! line and libtest line, the exit code, conformance.md, summary.md, report.html, JUnit,
//! report.json, results.jsonl, `report merge` and `report diff`.
//!
//! - **interrupted**: a signal stopped the run (exit 130), whatever else is true;
//! - **failed**: a rule failed (a MUST rule, or any under `--strict`), a test could not check,
//!   a resource the run created is left behind, or part of the reports could not be written;
//! - **incomplete**: nothing failed, but a MUST rule of the declared profiles got no verdict, a
//!   selection (name filter, `--skip`, `--rule`, `--rerun-failed`, a partition) left tests out,
//!   or `--fail-fast` left tests not run (such a run has a failed test, so it is failed too and
//!   says both). It exits 0 — a
//!   gate on a selection is legitimate — unless the run asked to `--certify`;
//! - **passed**: none of the above.
//!
//! Under `--certify` the status also says whether the run **certifies** the RP: time scale 1,
//! no fault knob, nothing selected out (or a complete merged set), not interrupted, nothing left
//! behind, every MUST rule of the declared profiles judged and passed. Any other run is **not
//! certified**, with every reason, and exits 1.

use serde::{Deserialize, Serialize};

use super::conformance::{Conformance, RuleVerdict};
use super::{Counts, RunInfo};

/// At most `max` IDs, comma-separated, then "and N more".
pub(super) fn list(ids: &[String], max: usize) -> String {
    let mut s = ids.iter().take(max).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > max {
        s.push_str(&format!(" and {} more", ids.len() - max));
    }
    s
}

/// Exit codes: the run passed (or is incomplete without `--certify`).
pub const EXIT_OK: u8 = 0;
/// The run failed (or did not certify under `--certify`).
pub const EXIT_FAILED: u8 = 1;
/// Bad input: arguments, a suite, a target file. No report is written.
pub const EXIT_USAGE: u8 = 2;
/// The run was interrupted (128 + SIGINT, as shells report Ctrl-C).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The run's state, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunState {
    Interrupted,
    Failed,
    Incomplete,
    Passed,
}

impl RunState {
    pub fn label(self) -> &'static str {
        match self {
            RunState::Interrupted => "interrupted",
            RunState::Failed => "failed",
            RunState::Incomplete => "incomplete",
            RunState::Passed => "passed",
        }
    }

    /// An emoji for Markdown headlines.
    pub fn icon(self) -> &'static str {
        match self {
            RunState::Interrupted => "⛔",
            RunState::Failed => "❌",
            RunState::Incomplete => "⚠️",
            RunState::Passed => "✅",
        }
    }

    /// A mark any font has (HTML, console).
    pub fn mark(self) -> &'static str {
        match self {
            RunState::Interrupted => "⛔",
            RunState::Failed => "✗",
            RunState::Incomplete => "!",
            RunState::Passed => "✓",
        }
    }
}

/// Whether a `--certify` run certifies the RP, and why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Certification {
    pub certified: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why_not: Vec<String>,
    /// A shard of a certification run (`--partition`), judged on its part: the partition.
    /// `report merge --certify` gives the run's one verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
}

/// The run's verdict, with its reasons, worst first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStatus {
    pub state: RunState,
    /// Why the run failed or was interrupted (empty when it passed or is only incomplete).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// Why the run is incomplete (said even when it also failed): MUST rules not judged,
    /// tests selected out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
    /// The MUST rules of the declared profiles that got no verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unjudged_must: Vec<String>,
    /// Present when the run was asked to certify (`--certify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certification: Option<Certification>,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl RunStatus {
    /// The one computation of a run's verdict.
    pub fn compute(info: &RunInfo, counts: &Counts, conf: &Conformance) -> RunStatus {
        let mut reasons = Vec::new();
        if info.interrupted {
            let cut = counts.interrupted;
            reasons.push(if cut > 0 {
                format!(
                    "interrupted (Ctrl-C, SIGTERM or SIGHUP): {} did not finish",
                    plural(cut, "test", "tests")
                )
            } else {
                "interrupted (Ctrl-C, SIGTERM or SIGHUP) during cleanup".to_string()
            });
        }
        let r = &counts.rules;
        if r.failed > 0 {
            reasons.push(format!(
                "{} broken ({})",
                plural(r.failed, "rule", "rules"),
                list(&r.failing, 5)
            ));
        }
        if counts.failed > 0 && r.failed == 0 {
            reasons.push(format!("{} failed", plural(counts.failed, "test", "tests")));
        }
        if counts.errors > 0 {
            reasons.push(format!(
                "{} could not check (runner errors)",
                plural(counts.errors, "test", "tests")
            ));
        }
        if !info.left_behind.is_empty() {
            reasons.push(format!(
                "{} the run created left behind (not confirmed deleted)",
                plural(info.left_behind.len(), "resource", "resources")
            ));
        }
        for p in &info.problems {
            reasons.push(p.clone());
        }

        let unjudged_must: Vec<String> = conf
            .rules
            .iter()
            .filter(|x| x.level == "MUST" && x.verdict == RuleVerdict::NotJudged)
            .map(|x| x.id.clone())
            .collect();
        // Each reason the run is incomplete, and whether a shard is excused it (its own
        // partition, and the rules the other shards judge).
        let mut incomplete: Vec<(bool, String)> = Vec::new();
        let shard = info.partition.is_some()
            && info.merged_from.is_empty()
            && info.filters.is_empty()
            && info.skip.is_empty()
            && info.select.is_empty();
        if info.filtered() {
            let how = selection(info);
            incomplete.push((
                shard,
                if info.selected_out > 0 {
                    format!(
                        "{} selected out ({how})",
                        plural(info.selected_out, "test", "tests")
                    )
                } else {
                    format!("tests selected out ({how})")
                },
            ));
        }
        if info.not_run > 0 {
            incomplete.push((
                false,
                format!(
                    "{} not run: --fail-fast stopped the run after {} failed",
                    plural(info.not_run, "test", "tests"),
                    info.stopped_after.as_deref().unwrap_or("a test")
                ),
            ));
        }
        for m in &info.missing_partitions {
            incomplete.push((
                false,
                format!("partition {m} is missing from the merged set"),
            ));
        }
        if !unjudged_must.is_empty() {
            incomplete.push((
                shard,
                format!(
                    "{} of the declared profiles not judged ({})",
                    plural(unjudged_must.len(), "MUST rule", "MUST rules"),
                    list(&unjudged_must, 8)
                ),
            ));
        }

        let state = if info.interrupted {
            RunState::Interrupted
        } else if !reasons.is_empty() {
            RunState::Failed
        } else if !incomplete.is_empty() {
            RunState::Incomplete
        } else {
            RunState::Passed
        };

        let certification = info.certify.then(|| {
            let mut why_not = Vec::new();
            if info.time_scale != 1.0 {
                why_not.push(format!(
                    "accelerated (time scale {}): certification runs at time scale 1",
                    info.time_scale
                ));
            }
            if !info.faults.is_empty() {
                why_not.push(format!(
                    "reference RP fault knobs on: {}",
                    info.faults.join(", ")
                ));
            }
            if info.suite_set != crate::suiteset::ID {
                why_not.push(format!(
                    "the suites that ran (set {}) are not rpconform's own (set {}, as `--version` names it): a certificate is for the built-in suites, unmodified",
                    if info.suite_set.is_empty() { "unnamed" } else { &info.suite_set },
                    crate::suiteset::ID
                ));
            }
            why_not.extend(reasons.iter().cloned());
            why_not.extend(
                incomplete
                    .iter()
                    .filter(|(excused, _)| !excused)
                    .map(|(_, why)| why.clone()),
            );
            Certification {
                certified: why_not.is_empty(),
                why_not,
                shard: shard.then(|| info.partition.clone().unwrap_or_default()),
            }
        });
        let incomplete: Vec<String> = incomplete.into_iter().map(|(_, why)| why).collect();
        RunStatus {
            state,
            reasons,
            incomplete,
            unjudged_must,
            certification,
        }
    }

    /// The process exit code: 130 interrupted; 1 failed, or not certified under `--certify`;
    /// else 0 (an incomplete run included).
    pub fn exit_code(&self) -> u8 {
        match self.state {
            RunState::Interrupted => EXIT_INTERRUPTED,
            RunState::Failed => EXIT_FAILED,
            _ if self.certification.as_ref().is_some_and(|c| !c.certified) => EXIT_FAILED,
            _ => EXIT_OK,
        }
    }

    /// Does the run count as green for a gate (exit 0)?
    pub fn green(&self) -> bool {
        self.exit_code() == EXIT_OK
    }

    /// `passed`, `FAILED`, `INCOMPLETE`, `INTERRUPTED` (the console's first word).
    pub fn word(&self) -> String {
        match self.state {
            RunState::Passed => "passed".into(),
            s => s.label().to_uppercase(),
        }
    }

    /// The headline after the word: every reason, then completeness, then certification.
    /// `failed — 1 rule broken (LOC-02) · incomplete: 3 tests selected out (--rule LOC-02)`.
    pub fn detail(&self) -> String {
        let mut parts = Vec::new();
        if !self.reasons.is_empty() {
            parts.push(self.reasons.join("; "));
        }
        if !self.incomplete.is_empty() {
            parts.push(format!("incomplete: {}", self.incomplete.join("; ")));
        }
        if let Some(c) = &self.certification {
            parts.push(match (&c.shard, c.certified) {
                (Some(p), true) => format!(
                    "shard {p} certified on its part (`report merge --certify` gives the run's certificate)"
                ),
                (None, true) => "certified".into(),
                (_, false) => "not certified".into(),
            });
        }
        parts.join(" · ")
    }

    /// `passed`, or `FAILED — …`: one line for any headline.
    pub fn headline(&self) -> String {
        let d = self.detail();
        if d.is_empty() {
            self.word()
        } else {
            format!("{} — {d}", self.word())
        }
    }
}

/// How the run's selection was made, as the user typed it.
pub fn selection(info: &RunInfo) -> String {
    let mut parts: Vec<String> = info.filters.clone();
    parts.extend(info.skip.iter().map(|s| format!("--skip {s}")));
    parts.extend(info.select.iter().cloned());
    if let Some(p) = &info.partition {
        parts.push(format!("--partition {p}"));
    }
    if parts.is_empty() {
        "a selection".into()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::conformance::conformance;
    use crate::report::fixtures::{faulty_run, info};

    fn status_of(info: &RunInfo, results: &[crate::report::ScenarioResult]) -> RunStatus {
        let conf = conformance(info, results);
        let mut c = Counts::default();
        for r in results {
            c.add(r);
        }
        c.set_rules(&conf);
        RunStatus::compute(info, &c, &conf)
    }

    fn clean() -> Vec<crate::report::ScenarioResult> {
        faulty_run()
            .into_iter()
            .filter(|r| r.verdicts.iter().all(|v| !v.failed_outcome()))
            .collect()
    }

    #[test]
    fn a_broken_rule_fails_the_run_and_exits_1() {
        let s = status_of(&info(), &faulty_run());
        assert_eq!(s.state, RunState::Failed);
        assert_eq!(s.exit_code(), EXIT_FAILED);
        assert!(s.headline().starts_with("FAILED — "), "{}", s.headline());
        assert!(s.headline().contains("LOC-02"), "{}", s.headline());
    }

    #[test]
    fn leftovers_fail_an_otherwise_clean_run() {
        let mut i = info();
        i.profiles = vec!["task-api".into()];
        let base = status_of(&i, &[]);
        assert_ne!(base.state, RunState::Failed, "{base:?}");
        i.left_behind = vec!["https://x/a (created by t): 500".into()];
        let s = status_of(&i, &[]);
        assert_eq!(s.state, RunState::Failed);
        assert!(
            s.headline()
                .contains("1 resource the run created left behind")
        );
        assert_eq!(s.exit_code(), EXIT_FAILED);
    }

    #[test]
    fn an_interrupted_run_is_never_passed_and_exits_130() {
        let mut i = info();
        i.interrupted = true;
        let s = status_of(&i, &clean());
        assert_eq!(s.state, RunState::Interrupted);
        assert_eq!(s.exit_code(), EXIT_INTERRUPTED);
        assert!(s.headline().starts_with("INTERRUPTED"), "{}", s.headline());
    }

    #[test]
    fn unjudged_must_rules_and_selections_make_a_run_incomplete_not_passed() {
        // The fixture judges a handful of rules: the other MUST rules of the profile are not
        // judged, so the run is incomplete, exit 0 — and not certified under --certify.
        let i = info();
        let s = status_of(&i, &clean());
        assert_eq!(s.state, RunState::Incomplete, "{s:?}");
        assert!(!s.unjudged_must.is_empty());
        assert_eq!(s.exit_code(), EXIT_OK);
        assert!(
            s.headline().starts_with("INCOMPLETE — incomplete: "),
            "{}",
            s.headline()
        );
        let mut i = info();
        i.select = vec!["--rule LOC-02".into()];
        i.selected_out = 7;
        let s = status_of(&i, &clean());
        assert!(
            s.incomplete[0].contains("7 tests selected out (--rule LOC-02)"),
            "{s:?}"
        );
        let mut i = info();
        i.certify = true;
        let s = status_of(&i, &clean());
        let c = s.certification.clone().unwrap();
        assert!(!c.certified);
        assert_eq!(s.exit_code(), EXIT_FAILED);
        assert!(s.headline().ends_with("not certified"), "{}", s.headline());
    }

    #[test]
    fn tests_fail_fast_did_not_start_make_the_run_incomplete_and_it_is_failed() {
        let mut i = info();
        i.not_run = 5;
        i.stopped_after = Some("etag::if-match".into());
        let s = status_of(&i, &faulty_run());
        assert_eq!(s.state, RunState::Failed);
        assert!(
            s.incomplete
                .iter()
                .any(|x| x
                    == "5 tests not run: --fail-fast stopped the run after etag::if-match failed"),
            "{s:?}"
        );
        assert!(
            s.headline().contains("incomplete: 5 tests not run"),
            "{}",
            s.headline()
        );
        // Even with nothing else failing, tests not run are never "passed".
        let s = status_of(&i, &clean());
        assert_ne!(s.state, RunState::Passed, "{s:?}");
    }

    #[test]
    fn certification_needs_time_scale_1_and_no_fault() {
        let mut i = info();
        i.certify = true;
        i.profiles = vec!["task-api".into()];
        i.time_scale = 0.05;
        i.faults = vec!["relative-location".into()];
        let s = status_of(&i, &[]);
        let why = s.certification.unwrap().why_not;
        assert!(why[0].contains("time scale 0.05"), "{why:?}");
        assert!(why[1].contains("relative-location"), "{why:?}");
    }

    /// A view in which every rule passed.
    fn all_passed(i: &RunInfo) -> (Conformance, Counts) {
        let mut conf = conformance(i, &clean());
        for r in &mut conf.rules {
            r.verdict = RuleVerdict::Passed;
        }
        let mut c = Counts::default();
        c.set_rules(&conf);
        (conf, c)
    }

    #[test]
    fn a_replaced_suite_set_is_not_certified() {
        let mut i = info();
        i.certify = true;
        i.suite_set = "0123456789ab".into();
        let (conf, c) = all_passed(&i);
        let s = RunStatus::compute(&i, &c, &conf);
        let why = s.certification.unwrap().why_not;
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(
            why[0].contains("set 0123456789ab") && why[0].contains(crate::suiteset::ID),
            "{why:?}"
        );
    }

    #[test]
    fn a_shard_of_a_certification_run_is_judged_on_its_part() {
        let mut i = info();
        i.certify = true;
        i.partition = Some("hash:2/3".into());
        i.selected_out = 400;
        // What other shards judge is not judged here: not held against this one.
        let mut conf = conformance(&i, &clean());
        for r in &mut conf.rules {
            r.verdict = RuleVerdict::Passed;
        }
        conf.rules[0].verdict = RuleVerdict::NotJudged;
        let mut c = Counts::default();
        c.set_rules(&conf);
        let s = RunStatus::compute(&i, &c, &conf);
        let cert = s.certification.clone().unwrap();
        assert!(cert.certified, "{cert:?}");
        assert_eq!(cert.shard.as_deref(), Some("hash:2/3"));
        assert!(
            s.headline()
                .contains("shard hash:2/3 certified on its part"),
            "{}",
            s.headline()
        );
        assert_eq!(s.exit_code(), EXIT_OK);
        // A name filter on top of the partition is a selection a certificate cannot have.
        i.filters = vec!["etag::".into()];
        let s = RunStatus::compute(&i, &c, &conf);
        assert!(!s.certification.unwrap().certified);
        // Nor a test --fail-fast left out.
        i.filters.clear();
        i.not_run = 2;
        let s = RunStatus::compute(&i, &c, &conf);
        assert!(!s.certification.unwrap().certified);
    }

    #[test]
    fn a_run_that_judged_and_passed_every_must_rule_certifies() {
        // A hand-made view: every rule passed.
        let mut i = info();
        i.certify = true;
        let mut conf = conformance(&i, &clean());
        for r in &mut conf.rules {
            r.verdict = RuleVerdict::Passed;
        }
        let mut c = Counts::default();
        c.set_rules(&conf);
        let s = RunStatus::compute(&i, &c, &conf);
        assert_eq!(s.state, RunState::Passed);
        assert_eq!(
            s.certification,
            Some(Certification {
                certified: true,
                why_not: vec![],
                shard: None,
            })
        );
        assert_eq!(s.headline(), "passed — certified");
        assert_eq!(s.exit_code(), EXIT_OK);
    }
}
