//! Expansion: one [`Instance`] (one test) per scenario × matching target type × table row,
//! named `suite::scenario[::type][::row]`. A scenario the target cannot run becomes one
//! instance marked not applicable, with the reason, so it shows in reports as skipped rather
//! than silently vanishing.

use std::sync::Arc;

use super::{Requirement, Row, Scenario, Suite};
use crate::target::Target;

#[derive(Debug, Clone)]
pub struct Instance {
    pub name: String,
    pub suite: Arc<Suite>,
    pub scenario: usize,
    pub type_name: Option<String>,
    pub monitor: Option<String>,
    pub row: Option<Row>,
    pub not_applicable: Option<String>,
}

impl Instance {
    pub fn scenario(&self) -> &Scenario {
        &self.suite.scenarios[self.scenario]
    }
}

/// Every test of these suites against this target, in a stable order.
pub fn expand(suites: &[Arc<Suite>], target: &Target) -> Vec<Instance> {
    let mut out = Vec::new();
    for suite in suites {
        for (i, sc) in suite.scenarios.iter().enumerate() {
            let base = format!("{}::{}", suite.name, sc.name);
            let na = |reason: String| Instance {
                name: base.clone(),
                suite: suite.clone(),
                scenario: i,
                type_name: None,
                monitor: None,
                row: None,
                not_applicable: Some(reason),
            };
            // A scenario that states only rules of profiles the target does not implement has
            // nothing to judge here.
            let stated = sc.rules();
            if !stated.is_empty()
                && stated
                    .iter()
                    .all(|r| crate::rules::lookup(r).is_some_and(|r| !target.declares(r.profile)))
            {
                let mut ps: Vec<&str> = stated
                    .iter()
                    .filter_map(|r| crate::rules::lookup(r))
                    .map(|r| r.profile.name())
                    .collect();
                ps.sort_unstable();
                ps.dedup();
                out.push(na(format!(
                    "its rules belong to profile(s) the target does not declare: {} (`profiles:` in the target file)",
                    ps.join(", ")
                )));
                continue;
            }
            if sc.requires.contains(&Requirement::Destructive) && !target.destructive_allowed() {
                out.push(na("destructive: needs a resource group the run creates (`create: true`) or one marked `disposable: true`".into()));
                continue;
            }
            if sc.requires.contains(&Requirement::Identity) && target.identity.is_none() {
                out.push(na(
                    "needs `identity` (ARM identity headers) in the target file".into(),
                ));
                continue;
            }
            if sc.needs_tasks && target.tasks.is_none() {
                out.push(na("needs a task API (`tasks:` in the target file)".into()));
                continue;
            }
            if let Some(feats) = &sc.for_each_monitor {
                let matching: Vec<&crate::target::Monitor> = target
                    .monitors
                    .iter()
                    .filter(|m| feats.iter().all(|f| m.has(f)))
                    .collect();
                if matching.is_empty() {
                    out.push(na(format!(
                        "no monitor in the target has: {}",
                        feats.join(", ")
                    )));
                    continue;
                }
                for mon in matching {
                    let mname = format!("{base}::{}", mon.name);
                    let rows: Vec<Option<Row>> = if sc.table.is_empty() {
                        vec![None]
                    } else {
                        sc.table.iter().cloned().map(Some).collect()
                    };
                    for row in rows {
                        out.push(Instance {
                            name: match &row {
                                Some(r) => format!("{mname}::{}", r.name),
                                None => mname.clone(),
                            },
                            suite: suite.clone(),
                            scenario: i,
                            type_name: None,
                            monitor: Some(mon.name.clone()),
                            row,
                            not_applicable: None,
                        });
                    }
                }
                continue;
            }
            let types: Vec<Option<String>> = match &sc.for_each_type {
                None => vec![None],
                Some(feats) => {
                    let matching: Vec<Option<String>> = target
                        .types
                        .iter()
                        .filter(|t| feats.iter().all(|f| t.has(f, target)))
                        .map(|t| Some(t.name.clone()))
                        .collect();
                    if matching.is_empty() {
                        out.push(na(format!(
                            "no type in the target has: {}",
                            feats.join(", ")
                        )));
                        continue;
                    }
                    matching
                }
            };
            let multi_type = sc.for_each_type.is_some();
            for t in &types {
                let tname = match (t, multi_type) {
                    (Some(t), true) => format!("{base}::{t}"),
                    _ => base.clone(),
                };
                if sc.table.is_empty() {
                    out.push(Instance {
                        name: tname,
                        suite: suite.clone(),
                        scenario: i,
                        type_name: t.clone(),
                        monitor: None,
                        row: None,
                        not_applicable: None,
                    });
                } else {
                    for row in &sc.table {
                        out.push(Instance {
                            name: format!("{tname}::{}", row.name),
                            suite: suite.clone(),
                            scenario: i,
                            type_name: t.clone(),
                            monitor: None,
                            row: Some(row.clone()),
                            not_applicable: None,
                        });
                    }
                }
            }
        }
    }
    out
}
