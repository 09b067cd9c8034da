//! Findings of one test (or one recording), tallied per rule.
//!
//! Every judgment goes through a [`Ledger`]: a pass, a failure (expected, seen, the exchange
//! and, for stated expectations, the suite line), or "not judged" with the reason (the
//! operation ended before a read could see it, a recorder stripped the header...). A failure
//! repeated with the same expectation in the same step (every poll of one operation, say) is
//! kept once, with a count and its first and last exchange. Rules of profiles the target does
//! not declare are not applicable: the ledger ignores them.
//!
//! The ledger also remembers which rules failed on which exchange, so a later check that reads
//! that exchange can tell when an earlier failure made it impossible: it is then not judged,
//! naming that failure ([`Cause`], [`Ledger::cause_among`], [`Ledger::blocked`]), never a
//! failure of its own.

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

/// How a not-judged reason says the rule's subject is absent (the RP never offered it here).
pub const NOT_APPLICABLE: &str = "not applicable: ";

/// Does this not-judged reason say the rule's subject is absent, rather than unseen?
pub fn inapplicable(reason: &str) -> bool {
    reason.starts_with(NOT_APPLICABLE.trim_end())
}

/// An earlier failure that made a later check impossible: the rule that failed, the exchange
/// it failed on and the step that exchange belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    pub rule: &'static str,
    pub seq: u64,
    pub step: Option<String>,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed at exchange #{}", self.rule, self.seq)?;
        if let Some(s) = &self.step {
            write!(f, " (step `{s}`)")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct Ledger {
    tallies: BTreeMap<&'static str, RuleTally>,
    /// Rules exempted for the step now running.
    exempt: Vec<(&'static str, String)>,
    /// The step now running (findings name it).
    pub step: Option<String>,
    profiles: Vec<Profile>,
    /// The rules that failed on each exchange (by `seq`), with the step then running.
    failed_on: BTreeMap<u64, Vec<(&'static str, Option<String>)>>,
    /// The first exchange each rule failed on, kept when `failed_on` forgets it.
    first_on: BTreeMap<&'static str, (u64, Option<String>)>,
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
            failed_on: BTreeMap::new(),
            first_on: BTreeMap::new(),
        }
    }

    /// No rule will ask again what failed on exchange `seq` (a stream judged it and holds it
    /// no more): forget it, so a long stream keeps no record per exchange. Which exchange each
    /// rule first failed on is kept.
    pub fn forget(&mut self, seq: u64) {
        self.failed_on.remove(&seq);
    }

    fn first(&mut self, rule: &'static str, seq: u64, step: &Option<String>) {
        match self.first_on.get(rule) {
            Some((at, _)) if *at <= seq => {}
            _ => {
                self.first_on.insert(rule, (seq, step.clone()));
            }
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
        // One defect, one failed rule: a rule that only restates one that already failed on
        // this exchange (the catalogue says which) is not judged, naming that failure.
        if let Some(cause) = exchange.and_then(|seq| self.restated(rule, seq)) {
            self.blocked(
                rule,
                &cause,
                "this rule only restates that failure on the same exchange",
            );
            return;
        }
        let step = self.step.clone();
        if let Some(seq) = exchange {
            let on = self.failed_on.entry(seq).or_default();
            if !on.iter().any(|(r, _)| *r == rule) {
                on.push((rule, step.clone()));
            }
            self.first(rule, seq, &step);
        }
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
    /// A reason that starts "not applicable" says the RP did not offer the rule's subject
    /// here (a synchronous PATCH, no Retry-After...); one that does not says the subject was
    /// offered and not seen, and takes its place: one missed subject keeps the rule "not
    /// judged", however many answers had none.
    pub fn not_judged(&mut self, rule: &'static str, reason: impl Into<String>) {
        if !self.applies(rule) {
            return;
        }
        let t = self.tally(rule);
        if t.passed == 0 && t.failed == 0 && t.outcome == Outcome::NotJudged {
            let reason = reason.into();
            match &t.not_judged {
                // Keep the first, unless it said "absent" and this one says "missed".
                Some(old) if !inapplicable(old) || inapplicable(&reason) => {}
                _ => t.not_judged = Some(reason),
            }
        }
    }

    /// `not_judged` with the reason that the rule's subject is absent here: "not applicable:
    /// {why}" (the conformance view reports a rule not applicable when every reason any test
    /// gave is such).
    pub fn not_applicable(&mut self, rule: &'static str, why: impl std::fmt::Display) {
        self.not_judged(rule, format!("{NOT_APPLICABLE}{why}"));
    }

    /// The first of these exchanges (by `seq`) on which one of `rules` failed: the earlier
    /// failure a check that reads them cannot be judged past.
    pub fn cause_among(
        &self,
        seqs: impl IntoIterator<Item = u64>,
        rules: &[&str],
    ) -> Option<Cause> {
        let mut seqs: Vec<u64> = seqs.into_iter().collect();
        seqs.sort_unstable();
        seqs.dedup();
        seqs.into_iter().find_map(|seq| {
            self.failed_on.get(&seq).and_then(|on| {
                on.iter()
                    .find(|(r, _)| rules.contains(r))
                    .map(|(rule, step)| Cause {
                        rule,
                        seq,
                        step: step.clone(),
                    })
            })
        })
    }

    /// The failure on exchange `seq` of a rule that `rule` only restates (the catalogue's
    /// `restates`), if there is one.
    pub fn restated(&self, rule: &str, seq: u64) -> Option<Cause> {
        let roots = &catalogue::lookup(rule)?.restates;
        if roots.is_empty() {
            return None;
        }
        self.failed_here(seq, |r| roots.contains(&r))
    }

    /// A rule `related` picks that already failed on exchange `seq`.
    pub fn failed_here(&self, seq: u64, related: impl Fn(&str) -> bool) -> Option<Cause> {
        self.failed_on.get(&seq).and_then(|on| {
            on.iter()
                .find(|(r, _)| related(r))
                .map(|(rule, step)| Cause {
                    rule,
                    seq,
                    step: step.clone(),
                })
        })
    }

    /// The first exchange of this test on which one of `rules` failed.
    pub fn first_failure(&self, rules: &[&str]) -> Option<Cause> {
        self.first_on
            .iter()
            .filter(|(r, _)| rules.contains(r))
            .min_by_key(|(r, (seq, _))| (*seq, rules.iter().position(|x| x == *r)))
            .map(|(rule, (seq, step))| Cause {
                rule,
                seq: *seq,
                step: step.clone(),
            })
    }

    /// `rule` could not be judged because of an earlier failure: not judged, naming the
    /// failure and what it took away (`why`).
    pub fn blocked(&mut self, rule: &'static str, cause: &Cause, why: &str) {
        self.not_judged(rule, format!("{cause}: {why}"));
    }

    /// Add what another ledger of the same test recorded (steps that ran concurrently, each
    /// with a ledger of its own): counts add up, a failure anywhere is a failure, distinct
    /// failures are kept up to the same bound.
    pub fn absorb(&mut self, other: Ledger) {
        for (rule, (seq, step)) in &other.first_on {
            self.first(rule, *seq, step);
        }
        for (seq, on) in other.failed_on {
            let mine = self.failed_on.entry(seq).or_default();
            for (rule, step) in on {
                if !mine.iter().any(|(r, _)| *r == rule) {
                    mine.push((rule, step));
                }
            }
        }
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
                let theirs_missed = t.not_judged.as_deref().is_some_and(|w| !inapplicable(w));
                let mine_absent = mine.not_judged.as_deref().is_none_or(inapplicable);
                if mine.not_judged.is_none() || (mine_absent && theirs_missed) {
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
    fn a_failure_is_found_again_as_the_cause_of_a_later_check() {
        let mut l = Ledger {
            step: Some("act".into()),
            ..Default::default()
        };
        l.fail("LOC-02", "absolute", "/ops/1", Some(12), None);
        l.step = Some("done".into());
        l.pass("OPRES-01");
        assert_eq!(l.cause_among([13, 14], &["LOC-02"]), None);
        assert_eq!(l.cause_among([14, 12], &["OPRES-03"]), None);
        let c = l.cause_among([14, 12], &["OPRES-03", "LOC-02"]).unwrap();
        assert_eq!(c.to_string(), "LOC-02 failed at exchange #12 (step `act`)");
        l.blocked("ACT-02", &c, "its Location was not followed");
        let t = l.tallies();
        let act = t.iter().find(|t| t.rule == "ACT-02").unwrap();
        assert_eq!(act.outcome, Outcome::NotJudged);
        assert_eq!(
            act.not_judged.as_deref(),
            Some("LOC-02 failed at exchange #12 (step `act`): its Location was not followed")
        );
        // An exempted failure is no cause; a failure in an absorbed ledger is.
        let mut e = Ledger::default();
        e.set_exempt(vec![("OPRES-01", "deliberate".into())]);
        e.fail("OPRES-01", "200", "404", Some(20), None);
        e.fail("OPRES-03", "terminal", "Completed", Some(21), None);
        l.absorb(e);
        assert_eq!(l.cause_among([20], &["OPRES-01"]), None);
        assert_eq!(l.cause_among([20, 21], &["OPRES-03"]).unwrap().seq, 21);
    }

    #[test]
    fn a_rule_that_only_restates_a_failure_on_the_same_exchange_is_not_judged() {
        let mut l = Ledger::default();
        l.fail("DEL-01", "200 or 202", "204", Some(6), None);
        // ETAG-18 restates DEL-01: on #6 it is not judged, naming DEL-01's failure.
        l.fail("ETAG-18", "200 or 202", "204", Some(6), None);
        let t = l.tallies();
        let etag = t.iter().find(|t| t.rule == "ETAG-18").unwrap();
        assert_eq!(etag.outcome, Outcome::NotJudged);
        assert_eq!(
            etag.not_judged.as_deref(),
            Some(
                "DEL-01 failed at exchange #6: this rule only restates that failure on the same exchange"
            )
        );
        assert_eq!(l.cause_among([6], &["ETAG-18"]), None);
        // On another exchange it is judged as ever; a rule that restates nothing always is.
        l.fail("ETAG-18", "200 or 202", "204", Some(7), None);
        l.fail("LOC-04", "10..600", "1", Some(6), None);
        let t = l.tallies();
        assert_eq!(t.iter().find(|t| t.rule == "ETAG-18").unwrap().failed, 1);
        assert_eq!(t.iter().find(|t| t.rule == "LOC-04").unwrap().failed, 1);
    }

    #[test]
    fn a_subject_missed_outweighs_subjects_absent() {
        // In one ledger: a missed subject replaces "not applicable", never the reverse.
        let mut l = Ledger::default();
        l.not_applicable("PATCH-02", "the PATCH completed synchronously");
        l.not_judged("PATCH-02", "timing: ended within 3 ms");
        l.not_applicable("PATCH-02", "the PATCH was answered 202");
        let t = &l.tallies()[0];
        assert_eq!(t.not_judged.as_deref(), Some("timing: ended within 3 ms"));
        // Only absent subjects: the first reason stays.
        let mut a = Ledger::default();
        a.not_applicable("LOC-03", "no Retry-After");
        a.not_applicable("LOC-03", "something else");
        assert_eq!(
            a.tallies()[0].not_judged.as_deref(),
            Some("not applicable: no Retry-After")
        );
        assert!(inapplicable(a.tallies()[0].not_judged.as_deref().unwrap()));
        // Across ledgers of one test (steps that ran concurrently), the same.
        let mut b = Ledger::default();
        b.not_judged("LOC-03", "the recording format strips Retry-After");
        a.absorb(b);
        assert_eq!(
            a.tallies()[0].not_judged.as_deref(),
            Some("the recording format strips Retry-After")
        );
        let mut c = Ledger::default();
        c.not_applicable("LOC-03", "no Retry-After");
        a.absorb(c);
        assert_eq!(
            a.tallies()[0].not_judged.as_deref(),
            Some("the recording format strips Retry-After")
        );
        // A verdict outweighs both.
        a.pass("LOC-03");
        assert_eq!(a.tallies()[0].outcome, Outcome::Passed);
        assert!(a.tallies()[0].not_judged.is_none());
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
