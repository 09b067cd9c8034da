//! `--coverage min`: the fewest tests (cheapest first) that give every rule the selection can
//! judge the same chance of a verdict as the whole selection, per resource type. A rule a
//! scenario states is covered only by a test that states it (the engine's own reach is a
//! "can show", a stated expectation a "will judge"); an engine rule by any test that can show
//! it. Greedy weighted set cover: each round keeps the test with the most uncovered
//! (rule, type) pairs per PUT.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::scenario::{Instance, judges, stated_rules};
use crate::target::Target;

/// One (rule, type) pair to cover; `stated`: some test of the selection states it.
type Pair = (&'static str, Option<String>);

/// What `--coverage min` kept, and which tests each kept one stands in for.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct Coverage {
    /// Tests kept (not-applicable ones included: they run nothing and say why).
    pub kept: usize,
    /// Tests the selection held before.
    pub of: usize,
    /// (rule, type) pairs covered, as in the full selection.
    pub pairs: usize,
    /// Each kept test, with the left-out tests whose pairs it covers most of.
    pub stand_ins: Vec<StandIn>,
}

#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct StandIn {
    pub test: String,
    pub stands_in_for: Vec<String>,
}

/// Keeps the fewest, cheapest tests that cover every pair the selection covers; `rules`
/// (non-empty) limits the pairs to the rules selected. `cost` is each test's weight (its PUTs).
pub fn minimal(
    instances: Vec<Instance>,
    target: &Target,
    rules: &[&'static str],
    cost: impl Fn(&Instance) -> u64,
) -> (Vec<Instance>, Coverage) {
    let of = instances.len();
    let wanted = |r: &str| rules.is_empty() || rules.contains(&r);
    // Per test: the pairs it covers, split by strength.
    let mut strong: Vec<BTreeSet<Pair>> = Vec::new();
    let mut weak: Vec<BTreeSet<Pair>> = Vec::new();
    for inst in &instances {
        let ty = inst.type_name.clone();
        let stated: BTreeSet<&'static str> = if inst.not_applicable.is_some() {
            BTreeSet::new()
        } else {
            stated_rules(inst).into_iter().collect()
        };
        let can = judges(inst, target);
        let pairs = |f: &dyn Fn(&str) -> bool| -> BTreeSet<Pair> {
            can.iter()
                .copied()
                .filter(|r| wanted(r) && f(r))
                .map(|r| (r, ty.clone()))
                .collect()
        };
        let mut s = pairs(&|r| stated.contains(r));
        if inst.not_applicable.is_some() {
            s.clear();
        }
        strong.push(s);
        weak.push(if inst.not_applicable.is_some() {
            BTreeSet::new()
        } else {
            pairs(&|_| true)
        });
    }
    let stated_anywhere: BTreeSet<Pair> = strong.iter().flatten().cloned().collect();
    // What each test covers: pairs stated anywhere only where it states them.
    let covers: Vec<BTreeSet<Pair>> = (0..instances.len())
        .map(|i| {
            weak[i]
                .iter()
                .filter(|p| !stated_anywhere.contains(*p) || strong[i].contains(*p))
                .cloned()
                .collect()
        })
        .collect();
    let universe: BTreeSet<Pair> = covers.iter().flatten().cloned().collect();
    let weights: Vec<u64> = instances.iter().map(|i| cost(i).max(1)).collect();
    let mut left = universe.clone();
    let mut keep: BTreeSet<usize> = instances
        .iter()
        .enumerate()
        .filter(|(_, i)| i.not_applicable.is_some())
        .map(|(n, _)| n)
        .collect();
    while !left.is_empty() {
        let best = (0..instances.len())
            .filter(|i| !keep.contains(i))
            .map(|i| (i, covers[i].intersection(&left).count()))
            .filter(|(_, n)| *n > 0)
            // Most new pairs per unit of cost; ties to the earlier test (a stable choice).
            .max_by(|(a, na), (b, nb)| {
                let x = *na as u128 * weights[*b] as u128;
                let y = *nb as u128 * weights[*a] as u128;
                x.cmp(&y).then(b.cmp(a))
            });
        let Some((i, _)) = best else { break };
        for p in &covers[i] {
            left.remove(p);
        }
        keep.insert(i);
    }
    // Each left-out test stands with the kept test that covers most of its pairs.
    let mut stand: BTreeMap<usize, Vec<String>> = keep
        .iter()
        .filter(|i| instances[**i].not_applicable.is_none())
        .map(|i| (*i, Vec::new()))
        .collect();
    for (i, inst) in instances.iter().enumerate() {
        if keep.contains(&i) || covers[i].is_empty() {
            continue;
        }
        if let Some(k) = stand.keys().copied().max_by_key(|k| {
            (
                covers[*k].intersection(&covers[i]).count(),
                std::cmp::Reverse(*k),
            )
        }) {
            stand.entry(k).or_default().push(inst.name.clone());
        }
    }
    let stand_ins = stand
        .into_iter()
        .map(|(k, v)| StandIn {
            test: instances[k].name.clone(),
            stands_in_for: v,
        })
        .collect();
    let kept: Vec<Instance> = instances
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, x)| x)
        .collect();
    let coverage = Coverage {
        kept: kept.len(),
        of,
        pairs: universe.len(),
        stand_ins,
    };
    (kept, coverage)
}
