//! Steps: one action each (request, poll, create, fresh, settle, sleep, sweep, inspect, start,
//! task, during, not_applicable), with `if`/`unless`, expectations, captures and exemptions.

use marked_yaml::Node;

use super::{Defined, SuiteParser, valid_name};
use crate::diag::did_you_mean;
use crate::scenario::ast::*;
use crate::template::Template;
use crate::yaml::Map;

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
        let kw = self.one_action(node, &m)?;
        let name = m.get("name").and_then(|n| self.r.string(n, "name"));
        let condition = self.step_condition(m.get("if"), m.get("unless"), def);
        let an = m.get(kw)?;
        let action = self.action(kw, an, def)?;
        let mut expect = Vec::new();
        if let Some(n) = m.get("expect") {
            for item in self.r.one_or_many(n) {
                if let Some(e) = self.expectation(item, def, &action) {
                    expect.push(e);
                }
            }
        }
        let capture = m
            .get("capture")
            .map(|n| self.captures(n))
            .unwrap_or_default();
        let exempt = m
            .get("exempt")
            .map(|n| self.exemptions(n))
            .unwrap_or_default();
        if let Some(n) = &name {
            self.define_step(n, m.get("name").unwrap_or(node), def);
        }
        def.roots.extend(capture.iter().map(|c| c.var.clone()));
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

    /// The step's one action keyword, or an error when it has none or several.
    fn one_action(&mut self, node: &Node, m: &Map) -> Option<&'static str> {
        let present: Vec<&'static str> = ACTIONS.iter().copied().filter(|a| m.has(a)).collect();
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
        Some(present[0])
    }

    /// `if` / `unless`: templates that must (not) be truthy for the step to run.
    fn step_condition(
        &mut self,
        when: Option<&Node>,
        unless: Option<&Node>,
        def: &Defined,
    ) -> Option<Condition> {
        match (when, unless) {
            (Some(n), None) => Some(self.condition(n, false, def)),
            (None, Some(n)) => Some(self.condition(n, true, def)),
            (Some(n), Some(_)) => {
                self.r
                    .error(n, "a step has `if` or `unless`, not both", None);
                None
            }
            (None, None) => None,
        }
    }

    fn condition(&mut self, n: &Node, negate: bool, def: &Defined) -> Condition {
        let mut templates = Vec::new();
        for item in self.r.one_or_many(n) {
            if let Some(t) = self.template(item) {
                self.check_vars(&t.vars().collect::<Vec<_>>(), item, def);
                templates.push(t);
            }
        }
        Condition { templates, negate }
    }

    /// The action under keyword `kw`, one reader per action.
    fn action(&mut self, kw: &str, an: &Node, def: &mut Defined) -> Option<Action> {
        Some(match kw {
            "request" => Action::Request(self.request(an, def)?),
            "poll" => Action::Poll(self.poll(an, def)?),
            "create" => Action::Create(self.created(an, def)?),
            "fresh" => Action::Fresh(self.created(an, def)?),
            "settle" => Action::Settle(self.checked_template(an, def)?),
            "sleep" => Action::Sleep(self.sleep(an)?),
            "sweep" => Action::Sweep(self.sweep(an, def)?),
            "start" => Action::Start(self.start(an, def)?),
            "task" => Action::Task(self.task(an, def)?),
            "not_applicable" => Action::NotApplicable(self.not_applicable(an, def)?),
            "inspect" => Action::Inspect(self.inspect(an, def)?),
            "during" => Action::During(self.during(an, def)?),
            _ => return None,
        })
    }

    /// A template whose variables must be defined.
    pub(super) fn checked_template(&mut self, n: &Node, def: &Defined) -> Option<Template> {
        let t = self.template(n)?;
        self.check_vars(&t.vars().collect::<Vec<_>>(), n, def);
        Some(t)
    }

    /// `create` / `fresh`: the resource, whose name becomes a variable with resource fields.
    fn created(&mut self, an: &Node, def: &mut Defined) -> Option<CreateSpec> {
        let spec = self.create(an, def)?;
        def.roots.insert(spec.bind.clone());
        def.shaped.push((spec.bind.clone(), RESOURCE_FIELDS));
        Some(spec)
    }

    /// `sleep`: seconds, at most a day.
    fn sleep(&mut self, an: &Node) -> Option<f64> {
        let secs = self.r.f64(an, "sleep (seconds)")?;
        if !(0.0..=86_400.0).contains(&secs) {
            self.r.error(
                an,
                format!("sleep must be from 0 to 86400 seconds (a day), not {secs}"),
                None,
            );
            return None;
        }
        Some(secs)
    }

    /// `start`: an operation on the monitor of `for_each_monitor`.
    fn start(&mut self, an: &Node, def: &Defined) -> Option<StartSpec> {
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
            Some(n) => Some(self.checked_template(n, def)?),
            None => None,
        };
        Some(StartSpec {
            failing,
            operation_id,
            repeat,
        })
    }

    /// `task`: create, update or delete a task of the task API.
    fn task(&mut self, an: &Node, def: &Defined) -> Option<TaskSpec> {
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
        if !["default", "failing_processing", "failing_provisioning"].contains(&body.as_str()) {
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
        Some(TaskSpec { op, body, of })
    }

    /// `not_applicable`: the reason, for the reports.
    fn not_applicable(&mut self, an: &Node, def: &Defined) -> Option<Template> {
        let t = self.checked_template(an, def)?;
        if t.as_literal().is_some_and(|l| l.trim().is_empty()) {
            self.r.error(
                an,
                "`not_applicable` needs the reason, for the reports",
                None,
            );
        }
        Some(t)
    }

    /// `inspect`: an earlier step's name.
    fn inspect(&mut self, an: &Node, def: &Defined) -> Option<String> {
        let name = self.r.string(an, "inspect")?;
        self.check_step_ref(&name, an, def);
        Some(name)
    }

    /// `during`: reads made while the operation an earlier step started runs.
    fn during(&mut self, an: &Node, def: &mut Defined) -> Option<DuringSpec> {
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
        Some(DuringSpec { follow, steps })
    }

    /// `capture`: variable name → where its value comes from.
    fn captures(&mut self, n: &Node) -> Vec<Capture> {
        let mut capture = Vec::new();
        let Some(cm) = self.r.free_map(n, "capture") else {
            return capture;
        };
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
                capture.push(Capture {
                    var,
                    from,
                    pos: self.r.pos(&k),
                });
            }
        }
        capture
    }

    /// `exempt`: rule ID → the reason the step is exempt from it.
    fn exemptions(&mut self, n: &Node) -> Vec<(&'static str, String)> {
        let mut exempt = Vec::new();
        let Some(em) = self.r.free_map(n, "exempt") else {
            return exempt;
        };
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
        exempt
    }

    /// A named step: its name is checked and becomes a variable with the step fields.
    fn define_step(&mut self, n: &str, at: &Node, def: &mut Defined) {
        if !valid_name(n) {
            self.r.error(
                at,
                format!("step name `{n}` may only use letters, digits, `-` and `_`"),
                None,
            );
        }
        def.roots.insert(n.to_string());
        def.steps.insert(n.to_string());
        def.shaped.push((n.to_string(), STEP_FIELDS));
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
