//! Steps: one action each (request, poll, create, fresh, settle, sleep, sweep, inspect, start,
//! task, during, not_applicable), with `if`/`unless`, expectations, captures and exemptions.

use marked_yaml::Node;

use super::{Defined, SuiteParser, valid_name};
use crate::diag::did_you_mean;
use crate::scenario::ast::*;

const STEP_KEYS: &[&str] = &[
    "name",
    "request",
    "poll",
    "create",
    "fresh",
    "settle",
    "sleep",
    "sweep",
    "inspect",
    "start",
    "task",
    "during",
    "not_applicable",
    "if",
    "unless",
    "expect",
    "capture",
    "exempt",
];
const ACTIONS: &[&str] = &[
    "request",
    "poll",
    "create",
    "fresh",
    "settle",
    "sleep",
    "sweep",
    "inspect",
    "start",
    "task",
    "during",
    "not_applicable",
];
/// Fields a named step or a created resource exposes.
const STEP_FIELDS: &[&str] = &[
    "status",
    "headers",
    "body",
    "items",
    "url",
    "outcome",
    "location",
    "operation",
    "running",
    "ended",
    "monitor",
    "task_id",
    "resource_id",
    "resource_url",
    "etag",
    "cancel_url",
    "cancel_method",
];
const RESOURCE_FIELDS: &[&str] = &[
    "url",
    "path",
    "id",
    "name",
    "arm_type",
    "collection",
    "parent",
    "dependency",
    "body",
    "sent",
    "replace",
    "type",
    "read_only_probe",
];

impl<'o> SuiteParser<'o> {
    pub(super) fn steps(&mut self, node: &Node, def: &mut Defined) -> Vec<Step> {
        let mut out = Vec::new();
        let Some(list) = self.r.seq(node, "steps") else {
            return out;
        };
        for s in list {
            if let Some(step) = self.step(s, def) {
                out.push(step);
            }
        }
        out
    }

    pub(super) fn step(&mut self, node: &Node, def: &mut Defined) -> Option<Step> {
        let m = self.r.map(node, "a step", STEP_KEYS)?;
        let pos = self.r.pos(node);
        let present: Vec<&str> = ACTIONS.iter().copied().filter(|a| m.has(a)).collect();
        if present.len() != 1 {
            let msg = if present.is_empty() {
                "a step needs one action".to_string()
            } else {
                format!(
                    "a step has one action, this one has {}",
                    present.join(" and ")
                )
            };
            self.r.error(node, msg, Some(ACTIONS.join(", ")));
            return None;
        }
        let name = m.get("name").and_then(|n| self.r.string(n, "name"));
        let cond = |n: &Node, negate: bool, this: &mut Self| {
            let mut templates = Vec::new();
            for item in this.r.one_or_many(n) {
                if let Some(t) = this.template(item) {
                    this.check_vars(&t.vars().collect::<Vec<_>>(), item, def);
                    templates.push(t);
                }
            }
            Some(Condition { templates, negate })
        };
        let condition = match (m.get("if"), m.get("unless")) {
            (Some(n), None) => cond(n, false, self),
            (None, Some(n)) => cond(n, true, self),
            (Some(n), Some(_)) => {
                self.r
                    .error(n, "a step has `if` or `unless`, not both", None);
                None
            }
            (None, None) => None,
        };
        let kw = present[0];
        let an = m.get(kw)?;
        let action = match kw {
            "request" => Action::Request(self.request(an, def)?),
            "poll" => Action::Poll(self.poll(an, def)?),
            "create" | "fresh" => {
                let spec = self.create(an, def)?;
                def.roots.insert(spec.bind.clone());
                def.shaped.push((spec.bind.clone(), RESOURCE_FIELDS));
                if kw == "create" {
                    Action::Create(spec)
                } else {
                    Action::Fresh(spec)
                }
            }
            "settle" => {
                let t = self.template(an)?;
                self.check_vars(&t.vars().collect::<Vec<_>>(), an, def);
                Action::Settle(t)
            }
            "sleep" => {
                let secs = self.r.f64(an, "sleep (seconds)")?;
                if !(0.0..=86_400.0).contains(&secs) {
                    self.r.error(
                        an,
                        format!("sleep must be from 0 to 86400 seconds (a day), not {secs}"),
                        None,
                    );
                    return None;
                }
                Action::Sleep(secs)
            }
            "sweep" => Action::Sweep(self.sweep(an, def)?),
            "start" => {
                if !def.roots.contains("monitor") {
                    self.r
                        .error(an, "`start` needs `for_each_monitor` on the scenario", None);
                }
                let sm = self
                    .r
                    .map(an, "start", &["failing", "operation_id", "repeat"])?;
                let repeat = sm.get("repeat").and_then(|n| self.r.string(n, "repeat"));
                if let Some(rp) = &repeat {
                    self.check_step_ref(rp, sm.get("repeat").unwrap_or(an), def);
                }
                let failing = sm
                    .get("failing")
                    .and_then(|n| self.r.bool(n, "failing"))
                    .unwrap_or(false);
                let operation_id = match sm.get("operation_id") {
                    Some(n) => {
                        let t = self.template(n)?;
                        self.check_vars(&t.vars().collect::<Vec<_>>(), n, def);
                        Some(t)
                    }
                    None => None,
                };
                Action::Start(StartSpec {
                    failing,
                    operation_id,
                    repeat,
                })
            }
            "task" => {
                let tm = self.r.map(an, "task", &["op", "body", "of"])?;
                let op = match tm.get("op").and_then(|n| self.r.string(n, "op")).as_deref() {
                    Some("create") | None => TaskOp::Create,
                    Some("update") => TaskOp::Update,
                    Some("delete") => TaskOp::Delete,
                    Some(other) => {
                        self.r.error(
                            tm.get("op").unwrap_or(an),
                            format!("unknown task op `{other}`"),
                            Some("create, update or delete".into()),
                        );
                        TaskOp::Create
                    }
                };
                let body = tm
                    .get("body")
                    .and_then(|n| self.r.string(n, "body"))
                    .unwrap_or_else(|| "default".into());
                if !["default", "failing_processing", "failing_provisioning"]
                    .contains(&body.as_str())
                {
                    self.r.error(
                        tm.get("body").unwrap_or(an),
                        format!("unknown task body `{body}`"),
                        Some("default, failing_processing or failing_provisioning".into()),
                    );
                }
                let of = tm.get("of").and_then(|n| self.r.string(n, "of"));
                if let Some(o) = &of {
                    self.check_step_ref(o, tm.get("of").unwrap_or(an), def);
                } else if op != TaskOp::Create {
                    self.r.error(
                        an,
                        "update and delete tasks need `of: <the create task step>`",
                        None,
                    );
                }
                Action::Task(TaskSpec { op, body, of })
            }
            "not_applicable" => {
                let t = self.template(an)?;
                self.check_vars(&t.vars().collect::<Vec<_>>(), an, def);
                if t.as_literal().is_some_and(|l| l.trim().is_empty()) {
                    self.r.error(
                        an,
                        "`not_applicable` needs the reason, for the reports",
                        None,
                    );
                }
                Action::NotApplicable(t)
            }
            "inspect" => {
                let name = self.r.string(an, "inspect")?;
                self.check_step_ref(&name, an, def);
                Action::Inspect(name)
            }
            "during" => {
                let dm = self.r.map(an, "during", &["of", "steps"])?;
                let follow = match dm.get("of") {
                    Some(n) => self.r.string(n, "of")?,
                    None => {
                        self.r.error(
                            an,
                            "`during` needs `of: <the step that started the operation>`",
                            None,
                        );
                        return None;
                    }
                };
                self.check_step_ref(&follow, dm.get("of").unwrap_or(an), def);
                let steps = match dm.get("steps") {
                    Some(n) => self.steps(n, def),
                    None => {
                        self.r.error(
                            an,
                            "`during` needs `steps:` (the reads made while the operation runs)",
                            None,
                        );
                        return None;
                    }
                };
                for st in &steps {
                    if matches!(st.action, Action::During(_) | Action::Poll(_)) {
                        self.r.error(
                            an,
                            "a `during` block holds reads: no `during` or `poll` inside it",
                            None,
                        );
                    }
                }
                Action::During(DuringSpec { follow, steps })
            }
            _ => return None,
        };
        let mut expect = Vec::new();
        if let Some(n) = m.get("expect") {
            for item in self.r.one_or_many(n) {
                if let Some(e) = self.expectation(item, def, &action) {
                    expect.push(e);
                }
            }
        }
        let mut capture = Vec::new();
        let mut new_names = Vec::new();
        if let Some(n) = m.get("capture")
            && let Some(cm) = self.r.free_map(n, "capture")
        {
            for (k, v) in cm.entries() {
                let var = k
                    .as_scalar()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                if !valid_name(&var) {
                    self.r
                        .error(&k, format!("`{var}` is not a valid variable name"), None);
                    continue;
                }
                if let Some(from) = self.capture_from(v) {
                    new_names.push(var.clone());
                    capture.push(Capture {
                        var,
                        from,
                        pos: self.r.pos(&k),
                    });
                }
            }
        }
        let mut exempt = Vec::new();
        if let Some(n) = m.get("exempt")
            && let Some(em) = self.r.free_map(n, "exempt")
        {
            for (k, v) in em.entries() {
                let id = k
                    .as_scalar()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                if let Some(rule) = self.rule_id(&id, &k)
                    && let Some(reason) = self.r.string(v, "the reason for the exemption")
                {
                    if reason.trim().is_empty() {
                        self.r.error(v, "an exemption needs a reason", None);
                    }
                    exempt.push((rule, reason));
                }
            }
        }
        if let Some(n) = &name {
            if !valid_name(n) {
                self.r.error(
                    m.get("name").unwrap_or(node),
                    format!("step name `{n}` may only use letters, digits, `-` and `_`"),
                    None,
                );
            }
            def.roots.insert(n.clone());
            def.steps.insert(n.clone());
            def.shaped.push((n.clone(), STEP_FIELDS));
        }
        def.roots.extend(new_names);
        Some(Step {
            name,
            pos,
            action,
            condition,
            expect,
            capture,
            exempt,
        })
    }

    pub(super) fn check_step_ref(&mut self, name: &str, node: &Node, def: &Defined) {
        if !def.steps.contains(name) {
            let steps: Vec<&str> = def.steps.iter().map(|n| n.as_str()).collect();
            let hint = did_you_mean(name, steps.iter().copied())
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| {
                    format!(
                        "a named step before this one ({})",
                        if steps.is_empty() {
                            "none".to_string()
                        } else {
                            steps.join(", ")
                        }
                    )
                });
            self.r.error(
                node,
                format!("no earlier step is named `{name}`"),
                Some(hint),
            );
        }
    }
}
