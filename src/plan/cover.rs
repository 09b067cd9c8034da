//! `--coverage min`: the fewest tests (cheapest first) that give every rule the selection can
//! judge the same chance of a verdict as the whole selection. What a test covers is what it is
//! written to judge ([`aims`]): the rules its expectations and actions aim at, and the
//! engine's rules on operations its type may run long. A rule some test states is covered
//! only by a test that states it (a stated expectation will judge; the engine's reach only
//! may); a rule is covered once per part of a type it reads ([`shape`]: the LRO patterns for
//! an operation's rules, the scope for ids, the namespace for api-versions...) and, where each
//! scenario stating it exercises a case of its own, per scenario. Greedy weighted set cover:
//! each round keeps the test with the most uncovered pairs per PUT; then picks that later ones
//! made redundant are dropped, costliest first.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{known_before, skipped_before};
use crate::scenario::{Instance, aims, stated_rules};
use crate::target::Target;

/// One (rule, shape) pair to cover: the shape is what [`shape`] says the rule reads.
type Pair = (&'static str, String);

/// The part of a type's declaration a rule's verdict depends on.
fn shape(rule: &str, inst: &Instance, target: &Target) -> String {
    let ty = inst.type_name.as_deref().and_then(|n| target.type_named(n));
    let lro = |t: &crate::target::ResourceType| {
        format!(
            "{}/{}/{}",
            t.lro.put.pattern.name(),
            t.lro.patch.pattern.name(),
            t.lro.delete.pattern.name()
        )
    };
    match (crate::rules::family_of(rule), ty) {
        // A status monitor's rules read its own declaration (final link, result field, names).
        ("MON", _) => inst.monitor.clone().unwrap_or_default(),
        // A task API's rules read what the write asked for (a failing body shows what a
        // succeeding one cannot).
        ("TASK", _) => inst.name.clone(),
        // Conditional requests read the type's ETag support and where it lives (a nested
        // resource's writes go through its parent).
        ("ETAG", Some(t)) => format!("etag={} nested={}", t.etag, t.parent.is_some()),
        // An operation's rules read how the type's writes run.
        (
            "LOC" | "AAO" | "OPRES" | "PUT" | "PATCH" | "DEL" | "PSTATE" | "RETRY" | "ACT",
            Some(t),
        ) => lro(t),
        // Ids and the operations API read where the type lives: its scope, nested or not.
        ("RES" | "OPS", Some(t)) => format!("{:?} nested={}", t.scope, t.parent.is_some()),
        // Nesting rules are about nested types only; each scenario exercises a case of its own
        // (a list per parent, a parent's delete).
        // A singleton child (fixed names) lives and goes with its parent unlike a named one.
        ("NEST", Some(t)) => format!("{} fixed={}", inst.scenario().name, t.names.is_some()),
        // The optional profiles' behaviour is the RP front end's (its subscriptions, its
        // groups), whatever the type; the operations API is the namespace's.
        ("SUB" | "MOVE", _) => inst.scenario().name.clone(),
        ("PROV", Some(t)) => t.namespace.clone(),
        // An api-version is the namespace's; each scenario sends a different wrong one.
        ("API", Some(t)) => format!("{}/{}", t.namespace, inst.scenario().name),
        // Propagation reads what the scenario changes (an update, a failed one, a delete)
        // and how far up it must reach (a grandparent's state is PROP-03's and PROP-05's).
        ("PROP", Some(t)) => format!("{} depth={}", inst.scenario().name, depth(t, target)),
        // The readOnly probe reads the members the type's PUT marks readOnly in its spec:
        // types whose request models mark the same ones (most share systemData and etag) are
        // one shape; a type without a spec operation is its own.
        ("SPEC", Some(t)) if rule == "SPEC-07" => match t.read_only_probe(target) {
            serde_json::Value::Null => t.name.clone(),
            probe => probe.to_string(),
        },
        // SKU lists read the type's SKU declaration.
        ("SKU", Some(t)) => format!("skus={} empty={}", t.skus, t.skus_empty),
        // Headers, errors and throttling are the RP front end's, whatever the type.
        ("HDR" | "ERR", _) => String::new(),
        // The rest (sweeps, and any family not named above) read the type itself.
        _ => inst.type_name.clone().unwrap_or_default(),
    }
}

/// How many parents a type has.
fn depth(t: &crate::target::ResourceType, target: &Target) -> usize {
    let mut n = 0;
    let mut cur = t;
    while let Some(p) = cur.parent.as_deref().and_then(|p| target.type_named(p)) {
        n += 1;
        cur = p;
        if n > 8 {
            break;
        }
    }
    n
}

/// What `--coverage min` kept, and which tests each kept one stands in for.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct Coverage {
    /// Tests kept (not-applicable ones included: they run nothing and say why).
    pub kept: usize,
    /// Tests the selection held before.
    pub of: usize,
    /// (rule, shape) pairs covered, as in the full selection.
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
/// (non-empty) limits the pairs to the rules selected. `cost` is each test's weight (its PUTs),
/// `None` for a test known before the run to end not applicable (it judges nothing).
pub fn minimal(
    instances: Vec<Instance>,
    target: &Target,
    rules: &[&'static str],
    cost: impl Fn(&Instance) -> Option<u64>,
) -> (Vec<Instance>, Coverage) {
    let of = instances.len();
    let wanted = |r: &str| rules.is_empty() || rules.contains(&r);
    // Per test: the pairs it covers, split by strength.
    let mut strong: Vec<BTreeSet<Pair>> = Vec::new();
    let mut weak: Vec<BTreeSet<Pair>> = Vec::new();
    let costs: Vec<Option<u64>> = instances.iter().map(&cost).collect();
    for (inst, c) in instances.iter().zip(&costs) {
        let me = inst.type_name.as_deref().and_then(|n| target.type_named(n));
        let mon = inst
            .monitor
            .as_deref()
            .and_then(|m| target.monitor_named(m));
        let scope = known_before(inst, target, me, mon);
        let aimed: BTreeSet<&'static str> = aims(inst, target, &|s| skipped_before(s, &scope))
            .into_iter()
            .filter(|r| wanted(r) && c.is_some())
            .collect();
        let stated: BTreeSet<&'static str> = stated_rules(inst).into_iter().collect();
        let pair = |r: &&'static str| (*r, shape(r, inst, target));
        strong.push(
            aimed
                .iter()
                .filter(|r| stated.contains(*r))
                .map(pair)
                .collect(),
        );
        weak.push(aimed.iter().map(pair).collect());
    }
    // A rule some test states at a shape is covered only by a test that states it there (a
    // stated expectation will judge it; the engine's reach only may).
    let stated_anywhere: BTreeSet<Pair> = strong.iter().flatten().cloned().collect();
    let covers: Vec<BTreeSet<Pair>> = (0..instances.len())
        .map(|i| {
            weak[i]
                .iter()
                .filter(|p| !stated_anywhere.contains(*p) || strong[i].contains(*p))
                .cloned()
                .collect()
        })
        .collect();
    // Pairs as bits (a run plans ~800 tests over ~2,000 pairs: set operations on strings
    // were a fifth of a `--coverage min` run's CPU).
    let universe: BTreeSet<Pair> = covers.iter().flatten().cloned().collect();
    let index: BTreeMap<&Pair, usize> = universe.iter().enumerate().map(|(n, p)| (p, n)).collect();
    let covers: Vec<Bits> = covers
        .iter()
        .map(|c| Bits::of(universe.len(), c.iter().map(|p| index[p])))
        .collect();
    let weights: Vec<u64> = costs.iter().map(|c| c.unwrap_or(0).max(1)).collect();
    let mut left = Bits::of(universe.len(), 0..universe.len());
    let mut keep: BTreeSet<usize> = instances
        .iter()
        .enumerate()
        .filter(|(_, i)| i.not_applicable.is_some())
        .map(|(n, _)| n)
        .collect();
    while !left.is_empty() {
        let best = (0..instances.len())
            .filter(|i| !keep.contains(i))
            .map(|i| (i, covers[i].common(&left)))
            .filter(|(_, n)| *n > 0)
            // Most new pairs per unit of cost; ties to the earlier test (a stable choice).
            .max_by(|(a, na), (b, nb)| {
                let x = *na as u128 * weights[*b] as u128;
                let y = *nb as u128 * weights[*a] as u128;
                x.cmp(&y).then(b.cmp(a))
            });
        let Some((i, _)) = best else { break };
        left.remove_all(&covers[i]);
        keep.insert(i);
    }
    // Greedy keeps some tests whose pairs later picks cover too: drop them, costliest first.
    let mut held = vec![0u32; universe.len()];
    for k in &keep {
        covers[*k].ones().for_each(|p| held[p] += 1);
    }
    let mut picked: Vec<usize> = keep
        .iter()
        .copied()
        .filter(|i| instances[*i].not_applicable.is_none())
        .collect();
    picked.sort_by_key(|i| (std::cmp::Reverse(weights[*i]), *i));
    for i in picked {
        if covers[i].ones().all(|p| held[p] >= 2) {
            covers[i].ones().for_each(|p| held[p] -= 1);
            keep.remove(&i);
        }
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
        if let Some(k) = stand
            .keys()
            .copied()
            .max_by_key(|k| (covers[*k].common(&covers[i]), std::cmp::Reverse(*k)))
        {
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

/// A set of pair indices, one bit each.
struct Bits(Vec<u64>);

impl Bits {
    fn of(len: usize, ones: impl Iterator<Item = usize>) -> Bits {
        let mut words = vec![0u64; len.div_ceil(64)];
        for n in ones {
            words[n / 64] |= 1 << (n % 64);
        }
        Bits(words)
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// How many indices both hold.
    fn common(&self, other: &Bits) -> usize {
        self.0
            .iter()
            .zip(&other.0)
            .map(|(a, b)| (a & b).count_ones() as usize)
            .sum()
    }

    fn remove_all(&mut self, other: &Bits) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a &= !b);
    }

    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(n, w)| {
            (0..64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| n * 64 + b)
        })
    }
}
