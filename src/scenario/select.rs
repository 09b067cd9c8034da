//! Which tests a run selects, like nextest and pytest do: name filters (`-f`, several: any
//! matches; `--exact` for whole names), `--skip`, and rule selection (`--rule ID`, `--family
//! ETAG`, `--profile P`, several: any matches) of the tests that *judge* those rules. Name
//! filters and rule selection, when both are given, must both match.
//!
//! A test judges:
//! - the rules it **states** ([`stated_rules`]): its expectations' rules (a table row's own rule
//!   for `rule: ${row.x}`) and the rules its actions check by themselves (`start`: MON, `task`:
//!   TASK, `sweep`: RGDEL-03);
//! - the rules the **engine** judges by itself that its steps can make the RP show
//!   ([`judges`]), as each rule's family declares it ([`rules::shows`]: any ARM answer, the
//!   answer to a write of a method, a followed operation of a method, or only where stated).
//!   The mapping is sound (a test that can show a rule is selected) and is read from the
//!   steps, never from a run: any step that sends an ARM request (`request`, `create`, `fresh`
//!   — which creates parents —, `settle`, `poll`, `during`, `sweep`) reaches any answer; a
//!   write — `create`/`fresh` (PUT), `sweep` (DELETE), a `request` whose method is PUT, PATCH,
//!   DELETE or POST, or a method the test only knows at run time — a write's answer;
//!   `create`/`fresh` (PUT, followed to its end), `sweep` (DELETE), and `poll`/`during` of a
//!   step (with that step's method) a followed operation.
//!
//!   Whether the RP then answers with what the rule reads (a 202, a Location) is only known
//!   when the test runs: a selected test may still give no verdict on the rule.
//! - A test not applicable to the target judges nothing; it is selected (and listed with its
//!   reason) when it states a selected rule, so reports say why that rule was not judged.
//!
//! Rules of profiles the target does not declare are judged by no test.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Action, Instance, Step};
use crate::rules::{self, Profile, Shows, shows};
use crate::target::Target;

/// What a run selects.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Name filters: a test whose name contains any of them (equals one, with `exact`).
    pub names: Vec<String>,
    pub exact: bool,
    /// Names containing any of these are left out.
    pub skip: Vec<String>,
    /// Rules selected by `--rule`, `--family` and `--profile` (empty: no rule selection).
    pub rules: Vec<&'static str>,
    /// The rule selection as given, for reports (`--rule LOC-02`).
    pub given: Vec<String>,
    /// `--rerun-failed`: only tests of exactly these names.
    pub only: Option<BTreeSet<String>>,
    /// `--coverage min` (or `--rule-only`): of the tests selected, the fewest that judge
    /// what they all judge ([`crate::plan::minimal`]).
    pub minimal: bool,
}

impl Selection {
    /// A selection from the command line, or why it is wrong (an unknown rule, family or
    /// profile).
    pub fn new(
        names: Vec<String>,
        exact: bool,
        skip: Vec<String>,
        ids: &[String],
        families: &[String],
        profiles: &[String],
    ) -> Result<Selection, String> {
        let mut rules: BTreeSet<&'static str> = BTreeSet::new();
        let mut given = Vec::new();
        for id in ids {
            let r = rules::lookup(&id.trim().to_ascii_uppercase()).ok_or_else(|| {
                let hint = crate::diag::did_you_mean(id, rules::ids())
                    .map(|s| format!(" (did you mean {s}?)"))
                    .unwrap_or_default();
                format!("unknown rule `{id}`{hint}; `rpconform rules` lists them")
            })?;
            rules.insert(r.id);
            given.push(format!("--rule {}", r.id));
        }
        for f in families {
            let fam = rules::families()
                .into_iter()
                .find(|x| x.eq_ignore_ascii_case(f.trim()))
                .ok_or_else(|| {
                    format!(
                        "unknown family `{f}` (one of: {})",
                        rules::families().join(", ")
                    )
                })?;
            rules.extend(
                rules::all()
                    .iter()
                    .filter(|r| r.family() == fam)
                    .map(|r| r.id),
            );
            given.push(format!("--family {fam}"));
        }
        for p in profiles {
            let prof = Profile::from_name(p).ok_or_else(|| {
                let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                format!("unknown profile `{p}` (one of: {})", names.join(", "))
            })?;
            rules.extend(
                rules::all()
                    .iter()
                    .filter(|r| r.profile == prof)
                    .map(|r| r.id),
            );
            given.push(format!("--profile {prof}"));
        }
        Ok(Selection {
            names,
            exact,
            skip,
            rules: rules.into_iter().collect(),
            given,
            only: None,
            minimal: false,
        })
    }

    /// Only tests of these exact names (`--rerun-failed`), said as `how` in reports.
    pub fn only(&mut self, names: BTreeSet<String>, how: String) {
        self.only = Some(names);
        self.given.push(how);
    }

    /// `--coverage min`: keep only the fewest tests that judge what the selection judges.
    pub fn minimal(&mut self, how: &str) {
        self.minimal = true;
        self.given.push(how.to_string());
    }

    fn name_matches(&self, name: &str) -> bool {
        let hit = |f: &String| {
            if self.exact {
                name == f
            } else {
                name.contains(f.as_str())
            }
        };
        (self.names.is_empty() || self.names.iter().any(hit))
            && !self.skip.iter().any(|s| name.contains(s.as_str()))
            && self.only.as_ref().is_none_or(|o| o.contains(name))
    }
}

/// The rules a test states: its expectations' rules (its table row's own rule where the
/// expectation names `rule: ${row.x}`) and its actions' own rules.
pub fn stated_rules(inst: &Instance) -> Vec<&'static str> {
    step_rules(inst, &|_| false, Step::implied_rules)
        .into_iter()
        .collect()
}

/// The rules a test's steps state, the steps `skipped` says are out left out: their
/// expectations' rules (a table row's own rule for `rule: ${row.x}`) and, per step, `own`
/// (what its action checks by itself).
fn step_rules(
    inst: &Instance,
    skipped: &dyn Fn(&Step) -> bool,
    own: fn(&Step) -> Vec<&'static str>,
) -> BTreeSet<&'static str> {
    fn walk(
        inst: &Instance,
        s: &Step,
        skipped: &dyn Fn(&Step) -> bool,
        own: fn(&Step) -> Vec<&'static str>,
        out: &mut BTreeSet<&'static str>,
    ) {
        if skipped(s) {
            return;
        }
        for e in &s.expect {
            match (&e.row_rule, &inst.row) {
                (Some(field), Some(row)) => out.extend(
                    row.values
                        .get(field)
                        .and_then(Value::as_str)
                        .and_then(rules::lookup)
                        .map(|r| r.id),
                ),
                _ => out.extend(e.rules.iter().copied()),
            }
        }
        out.extend(own(s));
        if let Action::During(d) = &s.action {
            for inner in &d.steps {
                walk(inst, inner, skipped, own, out);
            }
        }
    }
    let sc = inst.scenario();
    let mut out = BTreeSet::new();
    for s in sc.setup.iter().chain(&sc.steps).chain(&sc.teardown) {
        walk(inst, s, skipped, own, &mut out);
    }
    out
}

/// The rules a test is written to judge, for `--coverage min` (which must keep a test that
/// will judge each rule, not one that only may): the rules its expectations state, what its
/// actions aim at ([`Step::aimed_rules`]), and the engine's rules its steps show on a type
/// whose declared operations can show them (a write's LRO rules only where the type's
/// operation for that method may run asynchronously).
/// `skipped` says which steps are known before the run not to run (their condition reads only
/// the type, the row, the target): what they state is not aimed at.
pub fn aims(
    inst: &Instance,
    target: &Target,
    skipped: &dyn Fn(&Step) -> bool,
) -> Vec<&'static str> {
    if inst.not_applicable.is_some() {
        return Vec::new();
    }
    let mut out = step_rules(inst, skipped, Step::aimed_rules);
    let declared = |id: &str| rules::lookup(id).is_some_and(|r| target.declares(r.profile));
    out.retain(|id| declared(id));
    let ty = inst.type_name.as_deref().and_then(|n| target.type_named(n));
    let may_run_long = |m: Option<&str>| match (ty, m) {
        (None, _) => true,
        (Some(t), None) => t.lro.any_async(),
        (Some(t), Some(m)) => t.lro.for_method(m).is_some_and(|d| d.pattern.is_async()),
    };
    let r = reach(inst);
    for id in rules::engine_rules().iter().filter(|id| declared(id)) {
        let can = match shows(id) {
            Shows::Any => r.arm,
            Shows::Every => true,
            Shows::Write(m) => Reach::has(&r.writes, m) && may_run_long(m),
            Shows::Follow(m) => Reach::has(&r.follows, m) && may_run_long(m),
            Shows::Stated => false,
        };
        if can {
            out.insert(id);
        }
    }
    out.into_iter().collect()
}

/// What a test's steps can make the RP show. `*` stands for a method known only at run time.
#[derive(Debug, Default)]
struct Reach {
    arm: bool,
    writes: BTreeSet<String>,
    follows: BTreeSet<String>,
}

impl Reach {
    fn has(set: &BTreeSet<String>, method: Option<&str>) -> bool {
        match method {
            None => !set.is_empty(),
            Some(m) => set.contains(m) || set.contains("*"),
        }
    }
}

const WRITES: [&str; 4] = ["PUT", "PATCH", "DELETE", "POST"];

/// The method of the step named `name` (`*` when it is not known before the run).
fn method_of(steps: &[&Step], name: &str) -> String {
    match steps
        .iter()
        .find(|s| s.name.as_deref() == Some(name))
        .map(|s| &s.action)
    {
        Some(Action::Request(r)) => r
            .method
            .as_literal()
            .map(|m| m.to_ascii_uppercase())
            .unwrap_or_else(|| "*".into()),
        Some(Action::Create(_) | Action::Fresh(_)) => "PUT".into(),
        _ => "*".into(),
    }
}

fn reach(inst: &Instance) -> Reach {
    fn all<'s>(s: &'s Step, out: &mut Vec<&'s Step>) {
        out.push(s);
        if let Action::During(d) = &s.action {
            for i in &d.steps {
                all(i, out);
            }
        }
    }
    let sc = inst.scenario();
    let mut steps = Vec::new();
    for s in sc.setup.iter().chain(&sc.steps).chain(&sc.teardown) {
        all(s, &mut steps);
    }
    let mut r = Reach::default();
    for s in &steps {
        match &s.action {
            Action::Request(q) => {
                r.arm = true;
                match q.method.as_literal().map(|m| m.to_ascii_uppercase()) {
                    Some(m) if WRITES.contains(&m.as_str()) => {
                        r.writes.insert(m);
                    }
                    Some(_) => {}
                    None => {
                        r.writes.insert("*".into());
                    }
                }
            }
            Action::Create(_) | Action::Fresh(_) => {
                r.arm = true;
                r.writes.insert("PUT".into());
                r.follows.insert("PUT".into());
            }
            Action::Sweep(_) => {
                r.arm = true;
                r.writes.insert("DELETE".into());
                r.follows.insert("DELETE".into());
            }
            Action::Poll(p) => {
                r.arm = true;
                r.follows.insert(method_of(&steps, &p.follow));
            }
            Action::During(d) => {
                r.arm = true;
                r.follows.insert(method_of(&steps, &d.follow));
            }
            Action::Settle(_) => r.arm = true,
            Action::Start(_)
            | Action::Task(_)
            | Action::Inspect(_)
            | Action::Sleep(_)
            | Action::NotApplicable(_) => {}
        }
    }
    r
}

/// Every rule a test can judge on this target: what it states and what the engine judges on
/// the answers its steps can get (see the module doc), within the declared profiles.
pub fn judges(inst: &Instance, target: &Target) -> Vec<&'static str> {
    let declared = |id: &str| rules::lookup(id).is_some_and(|r| target.declares(r.profile));
    let mut out: BTreeSet<&'static str> = stated_rules(inst)
        .into_iter()
        .filter(|id| declared(id))
        .collect();
    if inst.not_applicable.is_some() {
        return out.into_iter().collect();
    }
    let r = reach(inst);
    for id in rules::engine_rules().iter().filter(|id| declared(id)) {
        let can = match shows(id) {
            Shows::Any => r.arm,
            Shows::Every => true,
            Shows::Write(m) => Reach::has(&r.writes, m),
            Shows::Follow(m) => Reach::has(&r.follows, m),
            Shows::Stated => false,
        };
        if can {
            out.insert(id);
        }
    }
    out.into_iter().collect()
}

/// The tests the selection keeps, in order; an error when filters were given and nothing
/// matched, saying which part matched nothing.
pub fn select(
    instances: Vec<Instance>,
    sel: &Selection,
    target: &Target,
) -> Result<Vec<Instance>, String> {
    let by_name: Vec<Instance> = instances
        .into_iter()
        .filter(|i| sel.name_matches(&i.name))
        .collect();
    if by_name.is_empty() && !sel.names.is_empty() {
        return Err(format!(
            "no test name matches {}; `--list` shows them",
            sel.names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    if by_name.is_empty()
        && let Some(only) = &sel.only
    {
        return Err(format!(
            "none of the {} tests to run again ({}) is among these suites' tests; `--list` shows them",
            only.len(),
            only.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if sel.rules.is_empty() {
        return Ok(by_name);
    }
    let kept: Vec<Instance> = by_name
        .into_iter()
        .filter(|i| judges(i, target).iter().any(|r| sel.rules.contains(r)))
        .collect();
    if kept.is_empty() {
        let undeclared: BTreeSet<&str> = sel
            .rules
            .iter()
            .filter_map(|id| rules::lookup(id))
            .filter(|r| !target.declares(r.profile))
            .map(|r| r.profile.name())
            .collect();
        let why = if undeclared.len() == 1
            && sel
                .rules
                .iter()
                .all(|id| rules::lookup(id).is_some_and(|r| !target.declares(r.profile)))
        {
            format!(
                ": their profile ({}) is not declared by the target (`profiles:` in the target file)",
                undeclared.into_iter().collect::<Vec<_>>().join(", ")
            )
        } else {
            String::new()
        };
        return Err(format!(
            "no selected test judges {}{why}",
            sel.given.join(" ")
        ));
    }
    Ok(kept)
}

#[cfg(test)]
#[path = "select_tests.rs"]
mod tests;
