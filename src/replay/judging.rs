//! Judging recorded or passing traffic with the rule engine: one [`Judge`] per recording (or
//! proxy session), so rules that need earlier state (DEL-01, DEL-05, PUT-01, OPS-07, HDR-01's
//! uniqueness) see everything that came before, with one ledger per provider namespace so
//! findings name the namespace (as their `step`) and the result can say which RP did what.
//!
//! [`judge_recording`] feeds a [`Recording`]: every ARM exchange in file order to
//! [`Judge::exchange`] (non-ARM hosts, such as token endpoints, are skipped), and each
//! operation to [`Judge::flow`] right after its last exchange (as the live follower does
//! once an operation has ended, so the state its end shows is known to the exchanges after
//! it). Headers the format strips are "not judged" ([`Judge::stripped`]).

use std::collections::BTreeMap;

use super::{Recording, Stripped};
use crate::http::{Exchange, Surface};
use crate::report::{ScenarioResult, Status, verdicts};
use crate::rules::flow::{End, Flow};
use crate::rules::{Judge, Ledger, Level, Outcome, Registry, RuleTally};
use crate::target::Target;

/// The label of exchanges whose path names no provider namespace (resource groups,
/// subscription-level operations).
pub const NO_NAMESPACE: &str = "(no provider namespace)";

/// One namespace's share of a stream.
struct Part {
    ledger: Ledger,
    exchanges: usize,
    flows: usize,
    unseen: usize,
    /// The exchanges its findings cite now (first and latest of each), and only those.
    cited: BTreeMap<u64, Exchange>,
}

/// A judge over a stream of exchanges and flows, with a ledger per provider namespace.
pub struct StreamJudge<'t> {
    judge: Judge<'t>,
    parts: BTreeMap<String, Part>,
}

/// The engine's list of stripped headers, from the reader's.
pub fn engine_stripped(s: &Stripped) -> crate::rules::Stripped {
    crate::rules::Stripped {
        request: s.request.iter().cloned().collect(),
        response: s.response.iter().cloned().collect(),
        recorded: true,
    }
}

impl<'t> StreamJudge<'t> {
    pub fn new(target: &'t Target, registry: &'t Registry, stripped: &Stripped) -> Self {
        let mut judge = Judge::new(target, registry);
        judge.stripped = engine_stripped(stripped);
        StreamJudge {
            judge,
            parts: BTreeMap::new(),
        }
    }

    /// Run `f` with the namespace's ledger in the judge; keep what its findings cite.
    fn with(&mut self, ns: Option<&str>, cands: &[&Exchange], f: impl FnOnce(&mut Judge<'t>)) {
        let label = ns.unwrap_or(NO_NAMESPACE).to_string();
        let profiles = self.judge.target.profiles.clone();
        let part = self.parts.entry(label.clone()).or_insert_with(|| {
            let mut ledger = Ledger::new(profiles);
            ledger.step = Some(label);
            Part {
                ledger,
                exchanges: 0,
                flows: 0,
                unseen: 0,
                cited: BTreeMap::new(),
            }
        });
        std::mem::swap(&mut self.judge.ledger, &mut part.ledger);
        f(&mut self.judge);
        std::mem::swap(&mut self.judge.ledger, &mut part.ledger);
        let cited: Vec<u64> = part
            .ledger
            .tallies()
            .iter()
            .flat_map(|t| &t.failures)
            .flat_map(|fd| [fd.exchange, fd.last_exchange])
            .flatten()
            .collect();
        part.cited.retain(|seq, _| cited.contains(seq));
        for seq in cited {
            if !part.cited.contains_key(&seq)
                && let Some(x) = cands.iter().find(|x| x.seq == seq)
            {
                part.cited.insert(seq, (*x).clone());
            }
        }
    }

    /// One exchange, as it happens.
    pub fn exchange(&mut self, ex: &Exchange, ns: Option<&str>) {
        self.with(ns, &[ex], |j| j.exchange(ex));
        if ex.surface == Surface::Arm
            && let Some(p) = self.parts.get_mut(ns.unwrap_or(NO_NAMESPACE))
        {
            p.exchanges += 1;
        }
    }

    /// One operation, once it ended (or once the record stops).
    pub fn flow(&mut self, flow: &Flow, exs: &[Exchange], ns: Option<&str>) {
        let mut cands: Vec<&Exchange> = vec![&exs[flow.initial]];
        cands.extend(flow.events.iter().map(|e| &exs[e.ex()]));
        self.with(ns, &cands, |j| j.flow(flow, exs));
        if flow.surface == Surface::Arm
            && let Some(p) = self.parts.get_mut(ns.unwrap_or(NO_NAMESPACE))
        {
            p.flows += 1;
            p.unseen += usize::from(flow.end == End::Unseen);
        }
    }

    /// No rule will ask again what failed on exchange `seq` (judged, and held no more).
    pub fn forget(&mut self, seq: u64) {
        for p in self.parts.values_mut() {
            p.ledger.forget(seq);
        }
    }

    /// Every rule's tally over all namespaces.
    pub fn tallies(&self) -> Vec<RuleTally> {
        merge(self.parts.values().map(|p| p.ledger.tallies()))
    }

    /// The tallies of one namespace.
    pub fn namespace_tallies(&self) -> Vec<(String, Vec<RuleTally>)> {
        self.parts
            .iter()
            .map(|(k, p)| (k.clone(), p.ledger.tallies()))
            .collect()
    }

    /// One line per namespace: what was judged and which rules failed.
    pub fn breakdown(&self) -> Vec<String> {
        self.parts
            .iter()
            .filter(|(_, p)| p.exchanges + p.flows > 0)
            .map(|(ns, p)| {
                let t = p.ledger.tallies();
                let failed: Vec<String> = t
                    .iter()
                    .filter(|x| x.outcome == Outcome::Failed)
                    .map(|x| format!("{} ×{}", x.rule, x.failed))
                    .collect();
                let passed = t.iter().filter(|x| x.outcome == Outcome::Passed).count();
                let not_judged: Vec<&str> = t
                    .iter()
                    .filter(|x| x.outcome == Outcome::NotJudged)
                    .map(|x| x.rule)
                    .collect();
                format!(
                    "{ns}: {} exchanges, {} operations{}; failed: {}; passed: {passed} rules{}",
                    p.exchanges,
                    p.flows,
                    if p.unseen > 0 {
                        format!(" ({} not seen to end)", p.unseen)
                    } else {
                        String::new()
                    },
                    if failed.is_empty() {
                        "none".into()
                    } else {
                        failed.join(", ")
                    },
                    if not_judged.is_empty() {
                        String::new()
                    } else {
                        format!("; not judged: {}", not_judged.join(", "))
                    }
                )
            })
            .collect()
    }

    /// The exchanges findings cite, in order.
    pub fn cited(&self) -> Vec<Exchange> {
        let mut all: BTreeMap<u64, &Exchange> = BTreeMap::new();
        for p in self.parts.values() {
            all.extend(p.cited.iter().map(|(k, v)| (*k, v)));
        }
        all.into_values().cloned().collect()
    }
}

/// Tallies of several ledgers as one: failed if any failed, else passed if any passed.
pub fn merge(all: impl Iterator<Item = Vec<RuleTally>>) -> Vec<RuleTally> {
    let rank = |o: Outcome| match o {
        Outcome::Failed => 3,
        Outcome::Passed => 2,
        Outcome::Exempt => 1,
        Outcome::NotJudged => 0,
    };
    let mut out: BTreeMap<&'static str, RuleTally> = BTreeMap::new();
    for t in all.flatten() {
        match out.get_mut(t.rule) {
            None => {
                out.insert(t.rule, t);
            }
            Some(m) => {
                m.passed += t.passed;
                m.failed += t.failed;
                m.failures.extend(t.failures);
                if rank(t.outcome) > rank(m.outcome) {
                    m.outcome = t.outcome;
                }
                if m.outcome != Outcome::NotJudged {
                    m.not_judged = None;
                } else if m.not_judged.is_none() {
                    m.not_judged = t.not_judged;
                }
                if m.exempt_reason.is_none() {
                    m.exempt_reason = t.exempt_reason;
                }
            }
        }
    }
    out.into_values().collect()
}

/// A result from tallies, as `run` makes one: failed when a MUST rule failed (any rule with
/// `strict`), warned when only SHOULD rules did, skipped when nothing was judged.
#[allow(clippy::too_many_arguments)]
pub fn result(
    name: String,
    suite: &str,
    file: String,
    tallies: &[RuleTally],
    strict: bool,
    notes: Vec<String>,
    exchanges: Vec<Exchange>,
    duration_ms: u64,
) -> ScenarioResult {
    let failed = |bar: bool| {
        tallies
            .iter()
            .any(|t| t.outcome == Outcome::Failed && (t.level == Level::Must || bar))
    };
    let judged = tallies.iter().any(|t| t.outcome != Outcome::NotJudged);
    let status = if failed(strict) {
        Status::Failed
    } else if failed(true) {
        Status::Warned
    } else if judged {
        Status::Passed
    } else {
        Status::Skipped("nothing judged: no rule could be decided on this traffic".into())
    };
    ScenarioResult {
        scenario: name.rsplit("::").next().unwrap_or(&name).to_string(),
        name,
        suite: suite.into(),
        at: file.clone(),
        suite_file: file,
        type_name: None,
        row: None,
        status,
        duration_ms,
        cleanup_ms: None,
        verdicts: verdicts(tallies),
        polls: Vec::new(),
        notes,
        exchanges,
        // A recording states every rule its traffic shows: it passes or fails on all of them.
        stated: tallies.iter().map(|t| t.rule.to_string()).collect(),
        transcript: None,
    }
}

/// The surface of each exchange by an explicit target (recordings not written by rpconform):
/// its declarations decide, whatever host the recording was made on.
pub fn apply_target_surfaces(rec: &mut Recording, target: &Target) {
    if rec.own {
        return;
    }
    for (ex, meta) in rec.entries.iter_mut().zip(&rec.meta) {
        ex.surface = if meta.arm {
            let rel = crate::http::parse_url(&ex.url).map_or_else(
                |_| ex.url.clone(),
                |u| {
                    format!(
                        "{}{}",
                        u.path(),
                        u.query().map(|q| format!("?{q}")).unwrap_or_default()
                    )
                },
            );
            target.surface_of(&format!("{}{rel}", target.base()))
        } else {
            Surface::Other
        };
    }
}
