//! Expansion: one [`Instance`] (one test) per scenario × matching target type × table row,
//! named `suite::scenario[::type][::row]`. A scenario the target cannot run becomes one
//! instance marked not applicable, with the reason, so it shows in reports as skipped rather
//! than silently vanishing.

use std::sync::Arc;

use std::collections::HashMap;

use serde_json::{Value, json};

use super::{Action, Check, Requirement, Row, Scenario, Step, Suite, TypeRef};
use crate::target::{Extends, ResourceType, Scope, Target};
use crate::template::{JsonTemplate, Template, truthy};

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

/// The profiles of the rules a scenario states that the target does not declare, by name.
pub fn undeclared_profiles(sc: &Scenario, target: &Target) -> Vec<&'static str> {
    let mut ps: Vec<&'static str> = sc
        .rules()
        .iter()
        .filter_map(|r| crate::rules::lookup(r))
        .filter(|r| !target.declares(r.profile))
        .map(|r| r.profile.name())
        .collect();
    ps.sort_unstable();
    ps.dedup();
    ps
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
            // A test belongs to the profiles of the rules its scenario states (not the ambient
            // rules every exchange is judged by): one of an undeclared profile sends nothing.
            let undeclared = undeclared_profiles(sc, target);
            if !undeclared.is_empty() {
                out.push(na(format!(
                    "it tests the {} profile{}, which the target does not declare (add {} to `profiles:` in the target file to run it)",
                    undeclared.join(", "),
                    if undeclared.len() == 1 { "" } else { "s" },
                    undeclared.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(" and ")
                )));
                continue;
            }
            if sc.requires.contains(&Requirement::Destructive) && !target.destructive_allowed() {
                out.push(na("destructive: needs a resource group the run creates (`create: true`) or one marked `disposable: true`".into()));
                continue;
            }
            // The front door plays a caller of its own when the target names none.
            if sc.requires.contains(&Requirement::Identity)
                && target.identity.is_none()
                && target.front_door.is_none()
            {
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
                let ty = t.as_deref().and_then(|n| target.type_named(n));
                let reason =
                    |row: Option<&Row>| ty.and_then(|ty| shape_reason(sc, ty, row, target));
                if sc.table.is_empty() {
                    out.push(Instance {
                        name: tname,
                        suite: suite.clone(),
                        scenario: i,
                        type_name: t.clone(),
                        monitor: None,
                        row: None,
                        not_applicable: reason(None),
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
                            not_applicable: reason(Some(row)),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Why a scenario cannot run on this type (and row), from what its steps do with the type's
/// shape: a fresh name of a type that has only fixed names, two resources where one name
/// exists, a DELETE of a type that cannot be deleted, a resource-group sweep of a type that
/// lives outside a resource group. Steps whose condition is false for the row are left out;
/// a condition only known at run time counts as true.
pub fn shape_reason(
    sc: &Scenario,
    ty: &ResourceType,
    row: Option<&Row>,
    target: &Target,
) -> Option<String> {
    if sc.requires.contains(&Requirement::Destructive) {
        let home = home_scope(ty, target);
        if home != Scope::ResourceGroup {
            return Some(format!(
                "resource-group deletes apply only to resource-group-scoped types; type {} lives at {} scope",
                ty.name,
                home.name()
            ));
        }
    }
    let mut w = Walk::new(ty, row, target);
    for step in sc.setup.iter().chain(&sc.steps).chain(&sc.teardown) {
        if let Some(reason) = w.step(step) {
            return Some(reason);
        }
    }
    None
}

/// The scope a type finally lives in: its top-level ancestor's, through the resource an
/// extension type extends.
fn home_scope(ty: &ResourceType, target: &Target) -> Scope {
    let mut cur = target.top_of(ty);
    for _ in 0..32 {
        match &cur.scope {
            Scope::Extension(Extends::Type(t)) => match target.type_named(t) {
                Some(h) => cur = target.top_of(h),
                None => return Scope::ResourceGroup,
            },
            Scope::Extension(Extends::Id(id)) => {
                let rg = id.to_ascii_lowercase().contains("/resourcegroups/");
                return if rg {
                    Scope::ResourceGroup
                } else {
                    Scope::Subscription
                };
            }
            s => return s.clone(),
        }
    }
    Scope::ResourceGroup
}

/// A resource a scenario makes, as far as the plan can tell: its type and an identity that is
/// the same for two resources exactly when they must share a URL (fixed names all the way up).
#[derive(Clone)]
struct Made<'t> {
    ty: &'t ResourceType,
    identity: String,
    parent: Option<Box<Made<'t>>>,
}

/// A walk over a scenario's steps for one type and row.
struct Walk<'t> {
    me: &'t ResourceType,
    target: &'t Target,
    /// What the plan knows of the scope: target, type, row (others are unknown).
    scope: crate::template::Scope,
    bound: HashMap<String, Made<'t>>,
    /// Resources made so far, by identity.
    made: HashMap<String, usize>,
    fresh_ids: usize,
}

const MARK: &str = "\u{1}";

impl<'t> Walk<'t> {
    fn new(me: &'t ResourceType, row: Option<&Row>, target: &'t Target) -> Self {
        let mut scope = crate::template::Scope::new();
        scope.insert("target".into(), target.scope_value());
        scope.insert("type".into(), me.scope_value(target));
        if let Some(r) = row {
            let raw = Value::Object(r.values.clone());
            let values = JsonTemplate::parse(&raw)
                .and_then(|t| t.render(&scope))
                .unwrap_or(raw);
            scope.insert("row".into(), values);
        }
        Walk {
            me,
            target,
            scope,
            bound: HashMap::new(),
            made: HashMap::new(),
            fresh_ids: 0,
        }
    }

    /// Does the step run? `None` when only the run can tell.
    fn runs(&self, step: &Step) -> Option<bool> {
        let Some(c) = &step.condition else {
            return Some(true);
        };
        let mut all = true;
        for t in &c.templates {
            match t.render_value(&self.scope) {
                Ok(v) => all &= truthy(&v),
                Err(_) => return None,
            }
        }
        Some(all != c.negate)
    }

    fn step(&mut self, step: &Step) -> Option<String> {
        if self.runs(step) == Some(false) {
            return None;
        }
        match &step.action {
            Action::Create(spec) | Action::Fresh(spec) => {
                let fresh = matches!(step.action, Action::Fresh(_));
                let ty = self.resolve(&spec.type_ref)?;
                if fresh && ty.names.is_some() {
                    return ty.lacks_reason("fresh_names");
                }
                // A create stated to answer as a create (201, not 200) needs a name that does
                // not exist yet; a fixed name may exist already (a singleton always does).
                let creates_new = step
                    .expect
                    .iter()
                    .any(|e| matches!(&e.check, Check::Status(codes) if !codes.contains(&200)));
                if !fresh && creates_new && ty.names.is_some() {
                    return Some(format!(
                        "type {} accepts only {}, which may exist already; the scenario needs a create of a new resource",
                        ty.name,
                        ty.fixed_names_text()
                    ));
                }
                let parent = match &spec.parent {
                    Some(t) => Some(self.made_from(t).unwrap_or_else(|| self.unknown(ty))),
                    None => self.host_of(ty, true),
                };
                if let Some(reason) = self.collisions() {
                    return Some(reason);
                }
                if spec.dependency.is_none()
                    && let Some(d) = ty
                        .depends_on
                        .as_deref()
                        .and_then(|d| self.target.type_named(d))
                {
                    let host = self.host_of(d, true);
                    self.make(d, host, true);
                }
                let m = self.make(ty, parent, !fresh);
                if let Some(reason) = self.collisions() {
                    return Some(reason);
                }
                self.bind(&spec.bind, m);
            }
            Action::Request(r) => {
                let method = r.method.as_literal().unwrap_or_default();
                if method.eq_ignore_ascii_case("DELETE")
                    && let Some(m) = self.addressed(&r.url)
                    && !m.ty.deletable
                {
                    return m.ty.lacks_reason("deletable");
                }
            }
            Action::Sweep(s) => {
                for t in &s.resources {
                    if let Some(m) = self.made_from(t)
                        && !m.ty.deletable
                    {
                        return m.ty.lacks_reason("deletable");
                    }
                }
            }
            Action::During(d) => {
                for s in &d.steps {
                    if let Some(reason) = self.step(s) {
                        return Some(reason);
                    }
                }
            }
            _ => {}
        }
        None
    }

    fn resolve(&self, r: &TypeRef) -> Option<&'t ResourceType> {
        let named = |n: &str| self.target.type_named(n);
        let child_of = |m: &ResourceType| {
            self.target
                .types
                .iter()
                .find(|x| x.parent.as_deref() == Some(&m.name))
        };
        match r {
            TypeRef::SelfType => Some(self.me),
            TypeRef::Parent => self.me.parent.as_deref().and_then(named),
            TypeRef::Child => child_of(self.me),
            TypeRef::Grandchild => child_of(self.me).and_then(child_of),
            TypeRef::Dependency => self.me.depends_on.as_deref().and_then(named),
            TypeRef::Named(n) => named(n),
        }
    }

    /// The resource a new `ty` lives under when the step names none: made for it (the
    /// runner's `ensure`), or the fixed id an extension type extends.
    fn host_of(&mut self, ty: &'t ResourceType, count: bool) -> Option<Made<'t>> {
        let host = match (&ty.parent, &ty.scope) {
            (Some(p), _) => self.target.type_named(p)?,
            (None, Scope::Extension(Extends::Type(t))) => self.target.type_named(t)?,
            (None, Scope::Extension(Extends::Id(id))) => {
                return Some(Made {
                    ty,
                    identity: format!("id:{}", id.to_ascii_lowercase().replace('/', "|")),
                    parent: None,
                });
            }
            _ => return None,
        };
        let up = self.host_of(host, count);
        Some(self.make(host, up, count))
    }

    /// A resource of `ty` under `parent`: its identity, counted when it is created.
    fn make(&mut self, ty: &'t ResourceType, parent: Option<Made<'t>>, count: bool) -> Made<'t> {
        let own = match &ty.names {
            Some(n) => format!("{}={}", ty.name, n[0].to_ascii_lowercase()),
            None => {
                self.fresh_ids += 1;
                format!("{}#{}", ty.name, self.fresh_ids)
            }
        };
        let identity = match &parent {
            Some(p) => format!("{}/{own}", p.identity),
            None => own,
        };
        if count {
            *self.made.entry(identity.clone()).or_default() += 1;
        }
        Made {
            ty,
            identity,
            parent: parent.map(Box::new),
        }
    }

    /// A resource the plan cannot follow (a parent given by a value it does not know).
    fn unknown(&mut self, ty: &'t ResourceType) -> Made<'t> {
        self.fresh_ids += 1;
        Made {
            ty,
            identity: format!("?{}", self.fresh_ids),
            parent: None,
        }
    }

    /// A fixed-named resource made twice: the scenario needs two where one name exists.
    fn collisions(&self) -> Option<String> {
        let (identity, _) = self.made.iter().find(|(_, n)| **n > 1)?;
        let name = identity.rsplit('/').next().unwrap_or(identity);
        let ty = name
            .split('=')
            .next()
            .and_then(|t| self.target.type_named(t))?;
        Some(format!(
            "type {} accepts only {}; the scenario needs two resources of it where only one name exists",
            ty.name,
            ty.fixed_names_text()
        ))
    }

    fn bind(&mut self, name: &str, m: Made<'t>) {
        self.scope.insert(name.to_string(), marked(&m));
        self.bound.insert(name.to_string(), m);
    }

    /// The made resource a value template (`${x}`, `${x.parent}`) stands for.
    fn made_from(&self, t: &Template) -> Option<Made<'t>> {
        let v = t.render_value(&self.scope).ok()?;
        let url = v.get("url").and_then(Value::as_str)?;
        self.by_mark(url.strip_prefix(MARK)?.strip_suffix(MARK)?)
    }

    /// The made resource a URL template addresses itself (`${x.url}`, `...${x.path|recase}`).
    fn addressed(&self, t: &Template) -> Option<Made<'t>> {
        let text = t.render(&self.scope).ok()?;
        let end = text.strip_suffix(MARK)?;
        let start = end.rfind(MARK)?;
        self.by_mark(&end[start + MARK.len()..])
    }

    fn by_mark(&self, identity: &str) -> Option<Made<'t>> {
        // Case-insensitive: a URL written `${r.path|recase}` addresses the same resource.
        fn find<'a, 't>(m: &'a Made<'t>, id: &str) -> Option<&'a Made<'t>> {
            if m.identity.eq_ignore_ascii_case(id) {
                return Some(m);
            }
            m.parent.as_deref().and_then(|p| find(p, id))
        }
        self.bound.values().find_map(|m| find(m, identity)).cloned()
    }
}

/// What a bound resource renders to at plan time: its identity, marked, wherever a URL or
/// path would be, with its parents the same way.
fn marked(m: &Made<'_>) -> Value {
    let at = format!("{MARK}{}{MARK}", m.identity);
    json!({
        "url": at, "path": at, "id": at, "collection": format!("{at}/.."),
        "name": m.ty.names.as_ref().map(|n| n[0].clone()).unwrap_or_default(),
        "parent": m.parent.as_deref().map(marked).unwrap_or(Value::Null),
        "type": m.ty.name,
    })
}
