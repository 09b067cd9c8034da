//! The conformance view: the verdict of every rule in the target's declared profiles, for this
//! RP, over the whole run — the artefact of a certification run. A pure function of the
//! [`RunInfo`] (declared profiles, strictness, filters) and the results.
//!
//! Each rule is **failed** (a MUST rule, or any rule under `--strict`, failed a check),
//! **warned** (a SHOULD/MAY rule failed), **passed**, **not judged** (with why: the operation
//! ended before a read could be placed inside it — with the operation durations the ledger
//! recorded —, another reason the ledger gave, an exemption, a filter that left out the tests
//! that judge it, an interrupted run, or no exchange showed it) or **not applicable** (the RP
//! never offers its subject: the target declares nothing it speaks of — no ETag-capable type,
//! no proxy type —, every test that could show it said the subject was absent — a synchronous
//! PATCH, no Retry-After —, or a test stating it was not applicable here: no declared type has
//! the feature, a requirement is not met). With each: how many tests and checks showed it, and the first evidence of a failure
//! (expected, seen, the exchange in one line, the suite line). Families roll up.
//!
//! **How a defect every test meets is reported.** A rule the engine judges by itself (an
//! ambient rule on every exchange, a flow rule on every followed operation) that an RP breaks
//! shows here as one failed rule with counts, not as hundreds of failed tests: a test passes or
//! fails on the rules it *states* (its expectations, its actions' own rules; see
//! [`super::test_status`]). In JUnit the view is a `conformance` testsuite with one testcase
//! per rule of the declared profiles (failed → `<failure>`, not judged → `<skipped>` with why),
//! beside one testsuite per suite file whose testcases fail only on what they state. A rule a
//! test states and breaks therefore fails twice in JUnit — its test, and its rule — by design:
//! the conformance testsuite mirrors `conformance.md` exactly, the others mirror the tests.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::kinds::{Kind, RuleVerdict};
use super::{RunInfo, ScenarioResult, render};
use crate::rules::{self, Level, Profile};

/// The first failure of a rule: what was expected, what was seen, where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub test: String,
    pub expected: String,
    pub seen: String,
    /// The exchange in one line: `#12 202 PUT https://…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// The suite line: the expectation that states it, else the test's scenario.
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The test states the rule (else the engine judged it on the test's exchanges).
    pub stated: bool,
    /// How often this same failure repeated in that test.
    pub count: u32,
    /// The redacted transcript of that exchange, when the report kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleRow {
    pub id: String,
    pub family: String,
    pub level: String,
    pub profile: String,
    pub statement: String,
    pub verdict: RuleVerdict,
    /// Why a rule is not judged or not applicable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The engine judges it by itself (else only where a suite states it).
    pub engine: bool,
    /// Tests in which a check of the rule was made, and in which one failed.
    pub tests: usize,
    pub tests_failed: usize,
    pub checks_passed: u64,
    pub checks_failed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// The first few tests that failed it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_tests: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyRow {
    pub family: String,
    pub verdict: RuleVerdict,
    pub rules: usize,
    pub passed: usize,
    pub failed: usize,
    pub warned: usize,
    pub not_judged: usize,
    pub not_applicable: usize,
}

/// Rules left out of the view: their profile is not declared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Undeclared {
    pub profile: String,
    pub rules: usize,
    #[serde(default)]
    pub ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conformance {
    /// The worst verdict over the rules.
    pub verdict: RuleVerdict,
    pub profiles: Vec<String>,
    pub strict: bool,
    /// Failed first, then warned, then the rest in catalogue order.
    pub rules: Vec<RuleRow>,
    pub families: Vec<FamilyRow>,
    pub undeclared: Vec<Undeclared>,
    /// Recorded traffic only: each provider namespace's broken rules, ranked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<super::namespaces::NamespaceRow>,
}

impl Conformance {
    pub fn rule(&self, id: &str) -> Option<&RuleRow> {
        self.rules.iter().find(|r| r.id == id)
    }
}

/// Keep this many failing test names per rule.
const KEEP_TESTS: usize = 5;

#[derive(Debug, Default)]
struct Acc {
    tests: usize,
    tests_failed: usize,
    passed: u64,
    failed: u64,
    evidence: Option<((String, usize, String), Evidence)>,
    failing_tests: Vec<String>,
    not_judged: Option<String>,
    not_judged_tests: usize,
    /// A not-judged reason that is not "not applicable: …" (the engine's word that the rule
    /// cannot apply to this target, a monitor without an operation-id header, say).
    not_judged_other: bool,
    timing_ms: Option<(u64, u64)>,
    exempt: Option<String>,
    not_applicable: Option<String>,
    stated_ran: usize,
}

/// Builds the view one result at a time (results are streamed, never all in memory).
#[derive(Debug)]
pub struct Builder {
    strict: bool,
    declared: Vec<Profile>,
    filtered: bool,
    interrupted: bool,
    /// Rules whose subject the target never declares, with why (`RunInfo::not_applicable`).
    undeclared_subjects: BTreeMap<String, String>,
    acc: BTreeMap<&'static str, Acc>,
    namespaces: super::namespaces::Builder,
}

/// The line of a `file:line:col` position (0 when it has none).
pub fn line_of(at: &str) -> usize {
    let mut parts = at.rsplitn(3, ':');
    let _col = parts.next();
    parts.next().and_then(|l| l.parse().ok()).unwrap_or(0)
}

/// Durations `NNN ms` a not-judged reason gives.
fn millis(reason: &str) -> Option<u64> {
    let i = reason.find(" ms")?;
    let digits: String = reason[..i]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

impl Builder {
    pub fn new(info: &RunInfo) -> Self {
        Builder {
            strict: info.strict,
            declared: info.declared(),
            filtered: info.filtered(),
            interrupted: info.interrupted,
            undeclared_subjects: info.not_applicable.clone(),
            acc: BTreeMap::new(),
            namespaces: super::namespaces::Builder::new(info.strict),
        }
    }

    pub fn add(&mut self, r: &ScenarioResult) {
        self.namespaces.add(r);
        let key = (r.suite_file.clone(), line_of(&r.at), r.name.clone());
        for v in &r.verdicts {
            let Some(rule) = rules::lookup(&v.rule) else {
                continue;
            };
            let a = self.acc.entry(rule.id).or_default();
            if v.passed + v.failed > 0 {
                a.tests += 1;
            }
            a.passed += u64::from(v.passed);
            a.failed += u64::from(v.failed);
            if v.failed_outcome() {
                a.tests_failed += 1;
                if a.failing_tests.len() < KEEP_TESTS {
                    a.failing_tests.push(r.name.clone());
                }
                if let Some(f) = v.failures.first()
                    && a.evidence.as_ref().is_none_or(|(k, _)| key < *k)
                {
                    let x = f
                        .exchange
                        .and_then(|seq| r.exchanges.iter().find(|x| x.seq == seq));
                    let request = f.request.clone().or_else(|| x.map(render::exchange_line));
                    let ev = Evidence {
                        test: r.name.clone(),
                        expected: f.expected.clone(),
                        seen: f.seen.clone(),
                        request,
                        at: f.at.clone().unwrap_or_else(|| r.at.clone()),
                        step: f.step.clone(),
                        stated: r.stated.contains(&v.rule),
                        count: f.count,
                        transcript: x.map(|x| render::transcript(x, 2000)),
                    };
                    a.evidence = Some((key.clone(), ev));
                }
            }
            if v.outcome == "not-judged"
                && let Some(why) = &v.not_judged
            {
                a.not_judged_tests += 1;
                let missed = !rules::inapplicable(why);
                // The reason shown for a rule not judged is one that says what was missed.
                if a.not_judged.is_none() || (missed && !a.not_judged_other) {
                    a.not_judged = Some(why.clone());
                }
                a.not_judged_other |= missed;
                if why.starts_with("timing")
                    && let Some(ms) = millis(why)
                {
                    let (lo, hi) = a.timing_ms.unwrap_or((ms, ms));
                    a.timing_ms = Some((lo.min(ms), hi.max(ms)));
                }
            }
            if v.outcome == "exempt"
                && let Some(why) = &v.exempt_reason
            {
                a.exempt
                    .get_or_insert_with(|| format!("{why} (in {})", r.name));
            }
        }
        let kind = Kind::of(&r.status);
        for s in &r.stated {
            let Some(rule) = rules::lookup(s) else {
                continue;
            };
            let a = self.acc.entry(rule.id).or_default();
            match (kind, &r.status) {
                (Kind::NotApplicable, super::Status::Skipped(why)) => {
                    a.not_applicable.get_or_insert_with(|| {
                        why.trim_start_matches("not applicable: ").to_string()
                    });
                }
                (Kind::Passed | Kind::Warned | Kind::Failed | Kind::Error, _) => a.stated_ran += 1,
                _ => {}
            }
        }
    }

    fn row(&self, rule: &'static rules::Rule) -> RuleRow {
        let empty = Acc::default();
        let a = self.acc.get(rule.id).unwrap_or(&empty);
        let engine = rules::engine_rules().contains(&rule.id);
        let (verdict, why) = if a.failed > 0 {
            if rule.level == Level::Must || self.strict {
                (RuleVerdict::Failed, None)
            } else {
                (RuleVerdict::Warned, None)
            }
        } else if a.passed > 0 {
            (RuleVerdict::Passed, None)
        } else if let Some(why) = self.undeclared_subjects.get(rule.id) {
            // The target declares nothing the rule speaks of (no ETag-capable type...).
            (RuleVerdict::NotApplicable, Some(why.clone()))
        } else if let Some(first) = a.not_judged.as_ref().filter(|_| !a.not_judged_other) {
            // Every test said the rule cannot apply here: not applicable, not "not judged".
            (
                RuleVerdict::NotApplicable,
                Some(first.trim_start_matches("not applicable: ").to_string()),
            )
        } else if let Some(first) = &a.not_judged {
            let why = match a.timing_ms {
                Some((lo, hi)) => format!(
                    "not judged (timing) in {} test(s): operations ended within {lo}–{hi} ms, before a read could be placed inside them; first: {first}",
                    a.not_judged_tests
                ),
                None => format!("not judged in {} test(s): {first}", a.not_judged_tests),
            };
            (RuleVerdict::NotJudged, Some(why))
        } else if let Some(e) = &a.exempt {
            (RuleVerdict::NotJudged, Some(format!("exempted: {e}")))
        } else if let Some(na) = &a.not_applicable {
            (RuleVerdict::NotApplicable, Some(na.clone()))
        } else if self.filtered {
            (
                RuleVerdict::NotJudged,
                Some(
                    "skipped by filter: no test the run selected showed it (a name filter, --skip, a rule selection or a partition)"
                        .into(),
                ),
            )
        } else if self.interrupted {
            (
                RuleVerdict::NotJudged,
                Some("the run was interrupted before a test showed it".into()),
            )
        } else if a.stated_ran > 0 {
            (
                RuleVerdict::NotJudged,
                Some(format!(
                    "no exchange showed it: {} test(s) state it, but none of their checks applied (a condition was false, or the answer was not the kind the check reads)",
                    a.stated_ran
                )),
            )
        } else if engine {
            (
                RuleVerdict::NotJudged,
                Some("no exchange showed it: the engine judges it wherever an answer shows it, and no answer did".into()),
            )
        } else {
            (
                RuleVerdict::NotJudged,
                Some("no test checks it: no suite states it, and the engine does not judge it on its own".into()),
            )
        };
        RuleRow {
            id: rule.id.to_string(),
            family: rule.family().to_string(),
            level: rule.level.as_str().to_string(),
            profile: rule.profile.name().to_string(),
            statement: rule.rule.to_string(),
            verdict,
            why,
            engine,
            tests: a.tests,
            tests_failed: a.tests_failed,
            checks_passed: a.passed,
            checks_failed: a.failed,
            evidence: a.evidence.as_ref().map(|(_, e)| e.clone()),
            failing_tests: a.failing_tests.clone(),
        }
    }

    pub fn finish(self) -> Conformance {
        let mut rows = Vec::new();
        let mut undeclared: Vec<Undeclared> = Vec::new();
        for rule in rules::all() {
            if !self.declared.contains(&rule.profile) {
                match undeclared
                    .iter_mut()
                    .find(|u| u.profile == rule.profile.name())
                {
                    Some(u) => {
                        u.rules += 1;
                        u.ids.push(rule.id.into());
                    }
                    None => undeclared.push(Undeclared {
                        profile: rule.profile.name().into(),
                        rules: 1,
                        ids: vec![rule.id.into()],
                    }),
                }
                continue;
            }
            rows.push(self.row(rule));
        }
        let mut families = Vec::new();
        for fam in rules::families() {
            let rs: Vec<&RuleRow> = rows.iter().filter(|r| r.family == fam).collect();
            if rs.is_empty() {
                continue;
            }
            let n = |v: RuleVerdict| rs.iter().filter(|r| r.verdict == v).count();
            families.push(FamilyRow {
                family: fam.to_string(),
                verdict: rs
                    .iter()
                    .map(|r| r.verdict)
                    .min()
                    .unwrap_or(RuleVerdict::NotJudged),
                rules: rs.len(),
                passed: n(RuleVerdict::Passed),
                failed: n(RuleVerdict::Failed),
                warned: n(RuleVerdict::Warned),
                not_judged: n(RuleVerdict::NotJudged),
                not_applicable: n(RuleVerdict::NotApplicable),
            });
        }
        // Failed first, then warned, then the rest in catalogue order; among failures MUST
        // first, then the rules whose failure left others unjudged ("not judged: LOC-02 failed
        // at …"), the root causes, by how many they left — never by volume.
        let caused = |id: &str| {
            let needle = format!("{id} failed");
            rows.iter()
                .filter(|r| r.verdict == RuleVerdict::NotJudged)
                .filter(|r| r.why.as_deref().is_some_and(|w| w.contains(&needle)))
                .count()
        };
        let rank: Vec<(RuleVerdict, bool, usize)> = rows
            .iter()
            .map(|r| match r.verdict {
                RuleVerdict::Failed | RuleVerdict::Warned => {
                    (r.verdict, r.level != "MUST", usize::MAX - caused(&r.id))
                }
                _ => (RuleVerdict::Passed, false, 0),
            })
            .collect();
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| rank[i]);
        let mut slots: Vec<Option<RuleRow>> = rows.into_iter().map(Some).collect();
        let rows: Vec<RuleRow> = order.into_iter().filter_map(|i| slots[i].take()).collect();
        Conformance {
            verdict: rows
                .iter()
                .map(|r| r.verdict)
                .min()
                .unwrap_or(RuleVerdict::NotJudged),
            profiles: self.declared.iter().map(|p| p.name().to_string()).collect(),
            strict: self.strict,
            rules: rows,
            families,
            undeclared,
            namespaces: self.namespaces.finish(),
        }
    }
}

/// The conformance view of a run: its settings and its results.
pub fn conformance<'a>(
    info: &RunInfo,
    results: impl IntoIterator<Item = &'a ScenarioResult>,
) -> Conformance {
    let mut b = Builder::new(info);
    for r in results {
        b.add(r);
    }
    b.finish()
}

#[cfg(test)]
#[path = "conformance_tests.rs"]
mod tests;
