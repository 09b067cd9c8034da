//! Findings of one test (or one recording), tallied per rule.
//!
//! Every judgment goes through a [`Ledger`]: a pass, a failure (expected, seen, the exchange
//! and, for stated expectations, the suite line), or "not judged" with the reason (the
//! operation ended before a read could see it, a recorder stripped the header...). A failure
//! repeated with the same expectation in the same step (every poll of one operation, say) is
//! kept once, with a count and its first and last exchange. Rules of profiles the target does
//! not declare are not applicable: the ledger ignores them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::catalogue::{self, Level, Profile};
use crate::diag::Pos;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Passed,
    Failed,
    /// Not checked here on purpose, with a reason (a scenario's `exempt:`).
    Exempt,
    /// The rule applied, but what it needs to be decided was not seen (with the reason).
    NotJudged,
}

/// One failed check: what was expected, what was seen, where; repeated `count` times.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub expected: String,
    pub seen: String,
    /// The exchange (`seq`) that shows it first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange: Option<u64>,
    /// The last exchange that showed it again (when `count` > 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_exchange: Option<u64>,
    pub count: u32,
    /// The suite line that stated the expectation (none for ambient and flow rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
}

/// All checks of one rule in one test.
#[derive(Debug, Clone, Serialize)]
pub struct RuleTally {
    pub rule: &'static str,
    pub level: Level,
    pub outcome: Outcome,
    pub passed: u32,
    pub failed: u32,
    /// The first few distinct failures, in order.
    pub failures: Vec<Finding>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exempt_reason: Option<String>,
    /// Why the rule could not be decided (only while nothing passed or failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
}

/// Keep this many distinct failures per rule; counts go on.
const KEEP: usize = 5;

#[derive(Debug, Clone)]
pub struct Ledger {
    tallies: BTreeMap<&'static str, RuleTally>,
    /// Rules exempted for the step now running.
    exempt: Vec<(&'static str, String)>,
    /// The step now running (findings name it).
    pub step: Option<String>,
    profiles: Vec<Profile>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::new(Profile::ALL.to_vec())
    }
}

impl Ledger {
    /// A ledger that judges only rules of these profiles.
    pub fn new(profiles: Vec<Profile>) -> Self {
        Ledger {
            tallies: BTreeMap::new(),
            exempt: Vec::new(),
            step: None,
            profiles,
        }
    }

    /// Does this rule apply here (a rule of a declared profile)?
    pub fn applies(&self, rule: &str) -> bool {
        catalogue::lookup(rule).is_some_and(|r| self.profiles.contains(&r.profile))
    }

    fn tally(&mut self, rule: &'static str) -> &mut RuleTally {
        self.tallies.entry(rule).or_insert_with(|| RuleTally {
            rule,
            level: catalogue::get(rule).level,
            outcome: Outcome::NotJudged,
            passed: 0,
            failed: 0,
            failures: Vec::new(),
            exempt_reason: None,
            not_judged: None,
        })
    }

    /// Exempt these rules for the current step's checks.
    pub fn set_exempt(&mut self, exempt: Vec<(&'static str, String)>) {
        self.exempt = exempt;
    }

    /// True when the rule is exempted now (and note the exemption).
    fn exempted(&mut self, rule: &'static str) -> bool {
        let Some((_, reason)) = self.exempt.iter().find(|(r, _)| *r == rule).cloned() else {
            return false;
        };
        let t = self.tally(rule);
        if t.passed == 0 && t.failed == 0 {
            t.outcome = Outcome::Exempt;
        }
        t.exempt_reason = Some(reason);
        true
    }

    pub fn pass(&mut self, rule: &'static str) {
        if !self.applies(rule) || self.exempted(rule) {
            return;
        }
        let t = self.tally(rule);
        t.passed += 1;
        if t.outcome != Outcome::Failed {
            t.outcome = Outcome::Passed;
            t.not_judged = None;
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
        if !self.applies(rule) || self.exempted(rule) {
            return;
        }
        let step = self.step.clone();
        let expected = expected.into();
        let at = at.map(Pos::shown);
        let t = self.tally(rule);
        t.failed += 1;
        t.outcome = Outcome::Failed;
        t.not_judged = None;
        if let Some(f) = t
            .failures
            .iter_mut()
            .find(|f| f.expected == expected && f.step == step && f.at == at)
        {
            f.count += 1;
            if exchange.is_some() {
                f.last_exchange = exchange;
            }
            return;
        }
        if t.failures.len() < KEEP {
            t.failures.push(Finding {
                rule,
                expected,
                seen: seen.into(),
                exchange,
                last_exchange: None,
                count: 1,
                at,
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

    /// The rule applied but could not be decided; kept only while nothing else was recorded.
    pub fn not_judged(&mut self, rule: &'static str, reason: impl Into<String>) {
        if !self.applies(rule) {
            return;
        }
        let t = self.tally(rule);
        if t.passed == 0 && t.failed == 0 && t.outcome == Outcome::NotJudged {
            t.not_judged.get_or_insert_with(|| reason.into());
        }
    }

    /// Add what another ledger of the same test recorded (steps that ran concurrently, each
    /// with a ledger of its own): counts add up, a failure anywhere is a failure, distinct
    /// failures are kept up to the same bound.
    pub fn absorb(&mut self, other: Ledger) {
        for (rule, t) in other.tallies {
            let Some(mine) = self.tallies.get_mut(rule) else {
                self.tallies.insert(rule, t);
                continue;
            };
            mine.passed += t.passed;
            mine.failed += t.failed;
            let rank = |o: Outcome| match o {
                Outcome::Failed => 3,
                Outcome::Passed => 2,
                Outcome::Exempt => 1,
                Outcome::NotJudged => 0,
            };
            if rank(t.outcome) > rank(mine.outcome) {
                mine.outcome = t.outcome;
            }
            for f in t.failures {
                let same = mine
                    .failures
                    .iter()
                    .position(|x| x.expected == f.expected && x.step == f.step && x.at == f.at);
                match same {
                    Some(i) => {
                        let x = &mut mine.failures[i];
                        x.count += f.count;
                        x.last_exchange = f.last_exchange.or(f.exchange).or(x.last_exchange);
                    }
                    None if mine.failures.len() < KEEP => mine.failures.push(f),
                    None => {}
                }
            }
            if mine.exempt_reason.is_none() {
                mine.exempt_reason = t.exempt_reason;
            }
            if mine.outcome == Outcome::NotJudged {
                if mine.not_judged.is_none() {
                    mine.not_judged = t.not_judged;
                }
            } else {
                mine.not_judged = None;
            }
        }
    }

    pub fn tallies(&self) -> Vec<RuleTally> {
        self.tallies.values().cloned().collect()
    }

    /// Was any rule judged (passed, failed or exempted) in this test?
    pub fn judged_any(&self) -> bool {
        self.tallies
            .values()
            .any(|t| t.outcome != Outcome::NotJudged)
    }

    /// Did any rule at or above this bar fail?
    pub fn failed_at(&self, strict: bool) -> bool {
        self.tallies
            .values()
            .any(|t| t.outcome == Outcome::Failed && (t.level == Level::Must || strict))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_repeated_in_one_step_is_kept_once_with_a_count() {
        let mut l = Ledger {
            step: Some("poll".into()),
            ..Default::default()
        };
        for seq in 1..=190 {
            l.fail(
                "LOC-04",
                "10..600",
                format!("Retry-After: {seq}"),
                Some(seq),
                None,
            );
        }
        l.fail("LOC-04", "something else", "x", Some(200), None);
        let t = &l.tallies()[0];
        assert_eq!(t.failed, 191);
        assert_eq!(t.failures.len(), 2);
        assert_eq!(t.failures[0].count, 190);
        assert_eq!(t.failures[0].exchange, Some(1));
        assert_eq!(t.failures[0].last_exchange, Some(190));
    }

    #[test]
    fn absorbing_a_ledger_adds_its_verdicts() {
        let mut a = Ledger::default();
        a.pass("PUT-04");
        a.not_judged("PUT-03", "timing");
        let mut b = Ledger::default();
        b.fail("PUT-04", "Succeeded", "Failed", Some(7), None);
        b.pass("PUT-03");
        b.pass("LOC-02");
        a.absorb(b);
        let t = a.tallies();
        let get = |r: &str| t.iter().find(|x| x.rule == r).unwrap();
        assert_eq!(get("PUT-04").outcome, Outcome::Failed);
        assert_eq!((get("PUT-04").passed, get("PUT-04").failed), (1, 1));
        assert_eq!(get("PUT-03").outcome, Outcome::Passed);
        assert!(get("PUT-03").not_judged.is_none());
        assert_eq!(get("LOC-02").passed, 1);
    }

    #[test]
    fn rules_of_undeclared_profiles_are_ignored() {
        let mut l = Ledger::new(vec![Profile::Arm]);
        l.fail("OPS-01", "409", "200", None, None);
        l.pass("OPS-07");
        let t = l.tallies();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].rule, "OPS-07");
        assert!(!l.failed_at(true));
    }

    #[test]
    fn not_judged_gives_way_to_a_verdict() {
        let mut l = Ledger::default();
        l.not_judged("PUT-03", "timing");
        assert!(!l.judged_any());
        assert_eq!(l.tallies()[0].outcome, Outcome::NotJudged);
        l.pass("PUT-03");
        l.not_judged("PUT-03", "later");
        let t = &l.tallies()[0];
        assert_eq!(t.outcome, Outcome::Passed);
        assert!(t.not_judged.is_none());
    }
}
