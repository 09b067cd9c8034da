//! Recorded traffic (`replay`, `proxy`) by provider namespace: each RP's broken rules apart,
//! so another namespace's failures are labelled with it and never mixed into this one's, ranked
//! by severity (MUST before SHOULD), then by root cause (the rules whose failure left other
//! checks unjudged in the same recordings), then by how many recordings show it — never by how
//! many checks failed, which is only how much traffic there was.
//!
//! The namespace of a finding is the one the engine judged it under (a replay or proxy
//! finding's `step`). Built one result at a time, like the rest of the conformance view.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ScenarioResult;
use super::kinds::RuleVerdict;
use crate::rules::{self, Level};

/// The label of findings that name no namespace (resource groups, subscriptions).
const NO_NAMESPACE: &str = crate::replay::NO_NAMESPACE;

/// One broken rule of one namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamespaceRule {
    pub rule: String,
    pub level: String,
    pub verdict: RuleVerdict,
    /// Recordings (or proxied sessions) in which the namespace broke it.
    pub recordings: usize,
    pub checks_failed: u64,
    /// Other rules' checks its failure left unjudged in those recordings.
    pub root_of: usize,
    /// The first failure: the recording, what was expected and seen, the exchange.
    pub test: String,
    pub expected: String,
    pub seen: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

/// One provider namespace's broken rules, ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamespaceRow {
    pub namespace: String,
    /// Recordings in which it broke at least one rule.
    pub recordings: usize,
    pub rules: Vec<NamespaceRule>,
}

#[derive(Debug, Default)]
pub struct Builder {
    strict: bool,
    /// namespace (lower case: ARM namespaces match without case) → rule → what the results
    /// showed.
    acc: BTreeMap<String, BTreeMap<&'static str, NamespaceRule>>,
    recordings: BTreeMap<String, usize>,
    /// The first spelling seen of each namespace, for showing.
    spelled: BTreeMap<String, String>,
}

/// Is this result one of recorded traffic, whose findings name their namespace?
fn recorded(r: &ScenarioResult) -> bool {
    matches!(r.suite.as_str(), "replay" | "proxy")
}

impl Builder {
    pub fn new(strict: bool) -> Self {
        Builder {
            strict,
            ..Default::default()
        }
    }

    pub fn add(&mut self, r: &ScenarioResult) {
        if !recorded(r) {
            return;
        }
        // (namespace, rule) broken in this result.
        let mut broken: BTreeMap<(String, &'static str), ()> = BTreeMap::new();
        for v in r.verdicts.iter().filter(|v| v.failed > 0) {
            let Some(rule) = rules::lookup(&v.rule) else {
                continue;
            };
            let verdict = if rule.level == Level::Must || self.strict {
                RuleVerdict::Failed
            } else {
                RuleVerdict::Warned
            };
            for f in &v.failures {
                let shown = f.step.clone().unwrap_or_else(|| NO_NAMESPACE.to_string());
                let ns = shown.to_ascii_lowercase();
                self.spelled.entry(ns.clone()).or_insert(shown);
                let e = self
                    .acc
                    .entry(ns.clone())
                    .or_default()
                    .entry(rule.id)
                    .or_insert_with(|| NamespaceRule {
                        rule: rule.id.to_string(),
                        level: rule.level.as_str().to_string(),
                        verdict,
                        recordings: 0,
                        checks_failed: 0,
                        root_of: 0,
                        test: r.name.clone(),
                        expected: f.expected.clone(),
                        seen: f.seen.clone(),
                        request: f.request.clone(),
                    });
                e.checks_failed += u64::from(f.count);
                if broken.insert((ns, rule.id), ()).is_none() {
                    e.recordings += 1;
                }
            }
        }
        // A rule left unjudged "because X failed" makes X a root cause wherever X broke here.
        for v in r.verdicts.iter().filter(|v| v.outcome == "not-judged") {
            let Some(why) = v.not_judged.as_deref() else {
                continue;
            };
            for (ns, rule) in broken.keys() {
                if why.contains(&format!("{rule} failed"))
                    && let Some(e) = self.acc.get_mut(ns).and_then(|m| m.get_mut(rule))
                {
                    e.root_of += 1;
                }
            }
        }
        let mut namespaces: Vec<&String> = broken.keys().map(|(ns, _)| ns).collect();
        namespaces.dedup();
        for ns in namespaces {
            *self.recordings.entry(ns.clone()).or_default() += 1;
        }
    }

    /// Namespaces with a broken MUST rule first, then by name; in each, its rules ranked.
    pub fn finish(self) -> Vec<NamespaceRow> {
        let mut rows: Vec<NamespaceRow> = self
            .acc
            .into_iter()
            .map(|(namespace, rules)| {
                let mut rules: Vec<NamespaceRule> = rules.into_values().collect();
                rules.sort_by(|a, b| {
                    (a.verdict, usize::MAX - a.root_of, usize::MAX - a.recordings)
                        .cmp(&(b.verdict, usize::MAX - b.root_of, usize::MAX - b.recordings))
                        .then_with(|| catalogue_order(&a.rule).cmp(&catalogue_order(&b.rule)))
                });
                NamespaceRow {
                    recordings: self.recordings.get(&namespace).copied().unwrap_or(0),
                    namespace: self.spelled.get(&namespace).cloned().unwrap_or(namespace),
                    rules,
                }
            })
            .collect();
        let worst = |r: &NamespaceRow| r.rules.iter().map(|x| x.verdict).min();
        rows.sort_by(|a, b| {
            worst(a).cmp(&worst(b)).then_with(|| {
                a.namespace
                    .to_ascii_lowercase()
                    .cmp(&b.namespace.to_ascii_lowercase())
            })
        });
        rows
    }
}

/// A rule's place in the catalogue (unknown ones last).
fn catalogue_order(id: &str) -> usize {
    rules::all()
        .iter()
        .position(|r| r.id == id)
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{FindingOut, Status, Verdict};

    fn finding(ns: &str, count: u32) -> FindingOut {
        FindingOut {
            expected: "e".into(),
            seen: "s".into(),
            exchange: Some(1),
            count,
            last_exchange: None,
            at: None,
            step: Some(ns.into()),
            request: Some("#1 202 PUT https://management.azure.com/x".into()),
        }
    }

    fn verdict(rule: &str, failures: Vec<FindingOut>) -> Verdict {
        Verdict {
            rule: rule.into(),
            level: String::new(),
            outcome: "failed".into(),
            passed: 0,
            failed: failures.iter().map(|f| f.count).sum(),
            failures,
            exempt_reason: None,
            not_judged: None,
        }
    }

    fn recording(name: &str, verdicts: Vec<Verdict>) -> ScenarioResult {
        let mut r = crate::report::fixtures::result("replay", name, 1, Status::Failed);
        r.verdicts = verdicts;
        r
    }

    #[test]
    fn namespaces_apart_and_ranked_by_severity_and_root_cause_not_volume() {
        let mut b = Builder::new(false);
        // Microsoft.Network: a SHOULD rule broken 500 times, a MUST once, and LOC-01 whose
        // failure left LOC-05 unjudged.
        let mut unjudged = verdict("LOC-05", vec![]);
        unjudged.outcome = "not-judged".into();
        unjudged.failed = 0;
        unjudged.not_judged = Some("LOC-01 failed at #3: nothing to poll".into());
        b.add(&recording(
            "net.json",
            vec![
                verdict("LOC-09", vec![finding("Microsoft.Network", 500)]),
                verdict("RES-02", vec![finding("Microsoft.Network", 1)]),
                verdict("LOC-01", vec![finding("Microsoft.Network", 1)]),
                verdict("ERR-01", vec![finding("Microsoft.Storage", 2)]),
                unjudged,
            ],
        ));
        b.add(&recording(
            "net2.json",
            vec![verdict("RES-02", vec![finding("Microsoft.Network", 1)])],
        ));
        let rows = b.finish();
        let names: Vec<&str> = rows.iter().map(|r| r.namespace.as_str()).collect();
        assert_eq!(names, ["Microsoft.Network", "Microsoft.Storage"]);
        let net: Vec<&str> = rows[0].rules.iter().map(|r| r.rule.as_str()).collect();
        // MUST first (LOC-01 is a root cause; RES-02 in two recordings), the SHOULD last
        // despite its 500 checks.
        assert_eq!(net, ["LOC-01", "RES-02", "LOC-09"]);
        assert_eq!(rows[0].recordings, 2);
        assert_eq!(rows[0].rules[0].root_of, 1);
        assert_eq!(rows[0].rules[1].recordings, 2);
        // Storage's failure is its own, never Network's.
        assert_eq!(rows[1].rules.len(), 1);
        assert_eq!(rows[1].rules[0].rule, "ERR-01");
    }

    #[test]
    fn a_scenario_runs_results_have_no_namespace_view() {
        let mut b = Builder::new(false);
        let mut r = crate::report::fixtures::result("shapes", "x", 1, Status::Failed);
        r.verdicts = vec![verdict("RES-02", vec![finding("put", 1)])];
        b.add(&r);
        assert!(b.finish().is_empty());
    }
}
