//! Findings of one scenario, tallied per rule.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::diag::Pos;
use crate::rules::{self, Level};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Passed,
    Failed,
    /// Not checked here on purpose, with a reason (a scenario's `exempt:`).
    Exempt,
}

/// One failed check: what was expected, what was seen, where.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub expected: String,
    pub seen: String,
    /// The exchange (`seq`) that shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<u64>,
    /// The suite line that stated the expectation (none for ambient rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
}

/// All checks of one rule in one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct RuleTally {
    pub rule: &'static str,
    pub level: Level,
    pub outcome: Outcome,
    pub passed: u32,
    pub failed: u32,
    /// The first few failures, in order.
    pub failures: Vec<Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exempt_reason: Option<String>,
}

/// Keep this many failure details per rule; counts go on.
const KEEP: usize = 5;

#[derive(Debug, Default, Clone)]
pub struct Ledger {
    tallies: BTreeMap<&'static str, RuleTally>,
    /// Rules exempted for the step now running.
    exempt: Vec<(&'static str, String)>,
    pub step: Option<String>,
}

impl Ledger {
    fn tally(&mut self, rule: &'static str) -> &mut RuleTally {
        self.tallies.entry(rule).or_insert_with(|| RuleTally {
            rule,
            level: rules::get(rule).level,
            outcome: Outcome::Passed,
            passed: 0,
            failed: 0,
            failures: Vec::new(),
            exempt_reason: None,
        })
    }

    /// Exempt these rules for the current step's ambient checks.
    pub fn set_exempt(&mut self, exempt: Vec<(&'static str, String)>) {
        self.exempt = exempt;
    }

    fn exempted(&mut self, rule: &'static str) -> bool {
        if let Some((_, reason)) = self.exempt.iter().find(|(r, _)| *r == rule).cloned() {
            let t = self.tally(rule);
            if t.passed == 0 && t.failed == 0 {
                t.outcome = Outcome::Exempt;
            }
            t.exempt_reason = Some(reason);
            return true;
        }
        false
    }

    pub fn pass(&mut self, rule: &'static str) {
        if self.exempted(rule) {
            return;
        }
        let t = self.tally(rule);
        t.passed += 1;
        if t.outcome == Outcome::Exempt {
            t.outcome = Outcome::Passed;
        }
    }

    pub fn fail(
        &mut self,
        rule: &'static str,
        expected: impl Into<String>,
        seen: impl Into<String>,
        exchange: Option<u64>,
        at: Option<&Pos>,
    ) {
        if self.exempted(rule) {
            return;
        }
        let step = self.step.clone();
        let t = self.tally(rule);
        t.failed += 1;
        t.outcome = Outcome::Failed;
        if t.failures.len() < KEEP {
            t.failures.push(Finding {
                rule,
                expected: expected.into(),
                seen: seen.into(),
                exchange,
                at: at.map(|p| p.to_string()),
                step,
            });
        }
    }

    /// Record a check: pass when `ok`, else a failure built lazily.
    pub fn check(
        &mut self,
        rule: &'static str,
        ok: bool,
        exchange: Option<u64>,
        fail: impl FnOnce() -> (String, String),
    ) {
        if ok {
            self.pass(rule);
        } else {
            let (e, s) = fail();
            self.fail(rule, e, s, exchange, None);
        }
    }

    pub fn tallies(&self) -> Vec<RuleTally> {
        self.tallies.values().cloned().collect()
    }

    /// Did any rule at or above this bar fail?
    pub fn failed_at(&self, strict: bool) -> bool {
        self.tallies
            .values()
            .any(|t| t.outcome == Outcome::Failed && (t.level == Level::Must || strict))
    }

    pub fn merge(&mut self, other: Ledger) {
        for (_, t) in other.tallies {
            let mine = self.tally(t.rule);
            mine.passed += t.passed;
            mine.failed += t.failed;
            if t.outcome == Outcome::Failed {
                mine.outcome = Outcome::Failed;
            }
            for f in t.failures {
                if mine.failures.len() < KEEP {
                    mine.failures.push(f);
                }
            }
        }
    }
}
