//! Suite files (YAML) → [`Suite`]s, checking everything that can be checked without a target:
//! keys, types, rule IDs, variables, regexes, JSON Pointers and schema files. Every problem of
//! a file is reported, each with file, line and column.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use marked_yaml::Node;
use regex::Regex;
use serde_json::Value;

use super::ast::*;
use crate::diag::{Diagnostic, Pos, Report, did_you_mean};
use crate::target::{TARGET_SCOPE_KEYS, TYPE_FEATURES, TYPE_SCOPE_KEYS};
use crate::template::{JsonTemplate, Template, VarRef};
use crate::yaml::{Reader, parse, to_json};

const SUITE_KEYS: &[&str] = &["suite", "description", "scenarios"];
const SCENARIO_KEYS: &[&str] = &[
    "name",
    "description",
    "for_each_type",
    "for_each_monitor",
    "requires",
    "ignore",
    "table",
    "vars",
    "setup",
    "steps",
    "teardown",
];
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
const REQUEST_KEYS: &[&str] = &[
    "method",
    "url",
    "headers",
    "body",
    "raw_body",
    "body_file",
    "api_version",
    "pages",
];
const EXPECT_KEYS: &[&str] = &[
    "rule",
    "rules",
    "status",
    "header",
    "pointer",
    "value",
    "schema",
    "outcome",
    "list_contains",
    "list_omits",
    "ignore_case",
    "when_status",
];
/// The tests a header, pointer or value expectation can make (one per expectation).
const PREDICATES: &[&str] = &[
    "present",
    "absent",
    "exists",
    "equals",
    "not_equals",
    "matches",
    "one_of",
    "not_one_of",
    "contains",
];
const SUBJECTS: &[&str] = &[
    "status",
    "header",
    "pointer",
    "value",
    "schema",
    "outcome",
    "list_contains",
    "list_omits",
];
/// Variables every scenario sees.
const ALWAYS: &[&str] = &["target", "run", "unique"];
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
];

/// Where the suites and schemas are.
pub struct LoadOptions {
    pub schema_dir: PathBuf,
}

/// Every `*.yaml` under the given paths (files or directories), sorted.
pub fn suite_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.clone()];
            while let Some(dir) = stack.pop() {
                let rd = std::fs::read_dir(&dir)
                    .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
                for entry in rd.flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                        out.push(path);
                    }
                }
            }
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: no such file or directory", p.display()));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Load and check suites; all diagnostics of all files, or the suites.
pub fn load_suites(paths: &[PathBuf], opts: &LoadOptions) -> Result<Vec<Suite>, Report> {
    let mut report = Report::default();
    let files = match suite_files(paths) {
        Ok(f) => f,
        Err(e) => {
            let file: Arc<Path> =
                Arc::from(paths.first().map(|p| p.as_path()).unwrap_or(Path::new(".")));
            report.push(Diagnostic::new(Pos::new(&file, 1, 1), e));
            return Err(report);
        }
    };
    if files.is_empty() {
        let file: Arc<Path> =
            Arc::from(paths.first().map(|p| p.as_path()).unwrap_or(Path::new(".")));
        report.push(Diagnostic::new(
            Pos::new(&file, 1, 1),
            "no *.yaml suite files found here",
        ));
        return Err(report);
    }
    let mut suites = Vec::new();
    let mut names = BTreeSet::new();
    for f in files {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                let file: Arc<Path> = Arc::from(f.as_path());
                report.push(Diagnostic::new(
                    Pos::new(&file, 1, 1),
                    format!("cannot read suite: {e}"),
                ));
                continue;
            }
        };
        report.add_source(&f, Arc::from(text.as_str()));
        match parse_suite(&f, &text, opts) {
            Ok(s) => {
                if !names.insert(s.name.clone()) {
                    let file: Arc<Path> = Arc::from(f.as_path());
                    report.push(Diagnostic::new(
                        Pos::new(&file, 1, 1),
                        format!("suite name `{}` is used by another file", s.name),
                    ));
                }
                suites.push(s)
            }
            Err(ds) => report.extend(ds),
        }
    }
    if report.is_empty() {
        Ok(suites)
    } else {
        Err(report)
    }
}

/// Parse one suite file.
pub fn parse_suite(path: &Path, text: &str, opts: &LoadOptions) -> Result<Suite, Vec<Diagnostic>> {
    let file: Arc<Path> = Arc::from(path);
    let root = parse(&file, text).map_err(|d| vec![d])?;
    let mut p = SuiteParser {
        r: Reader::new(file),
        opts,
    };
    let suite = p.suite(&root, path);
    if p.r.diags.is_empty() {
        suite.ok_or_else(Vec::new)
    } else {
        Err(p.r.diags)
    }
}

struct SuiteParser<'o> {
    r: Reader,
    opts: &'o LoadOptions,
}

/// Names defined so far in a scenario, for undefined-variable checks.
#[derive(Clone, Default)]
struct Defined {
    roots: BTreeSet<String>,
    /// Names whose fields are fixed (resources and steps), with the fields allowed.
    shaped: Vec<(String, &'static [&'static str])>,
    has_type: bool,
    steps: BTreeSet<String>,
    rows: Vec<serde_json::Map<String, Value>>,
    row_fields: Option<BTreeSet<String>>,
}

impl<'o> SuiteParser<'o> {
    fn suite(&mut self, root: &Node, path: &Path) -> Option<Suite> {
        let m = self.r.map(root, "a suite file", SUITE_KEYS)?;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("suite")
            .to_string();
        let name = m
            .get("suite")
            .and_then(|n| self.r.string(n, "suite"))
            .unwrap_or(stem);
        let description = m
            .get("description")
            .and_then(|n| self.r.string(n, "description"));
        let mut scenarios = Vec::new();
        match m.get("scenarios") {
            Some(n) => {
                if let Some(list) = self.r.seq(n, "scenarios") {
                    let mut seen = BTreeSet::new();
                    for s in list {
                        if let Some(sc) = self.scenario(s) {
                            if !seen.insert(sc.name.clone()) {
                                self.r.error(
                                    s,
                                    format!(
                                        "scenario name `{}` is used twice in this suite",
                                        sc.name
                                    ),
                                    None,
                                );
                            }
                            scenarios.push(sc);
                        }
                    }
                }
            }
            None => self.r.error(
                root,
                "a suite needs `scenarios:`",
                Some("scenarios: [ ... ]".into()),
            ),
        }
        Some(Suite {
            name,
            path: path.to_path_buf(),
            description,
            scenarios,
        })
    }

    fn scenario(&mut self, node: &Node) -> Option<Scenario> {
        let m = self.r.map(node, "a scenario", SCENARIO_KEYS)?;
        let pos = self.r.pos(node);
        let name = match m.get("name") {
            Some(n) => {
                let s = self.r.string(n, "name")?;
                if !valid_name(&s) {
                    self.r.error(
                        n,
                        format!("scenario name `{s}` may only use letters, digits, `-` and `_`"),
                        None,
                    );
                }
                s
            }
            None => {
                self.r.error(node, "a scenario needs a `name`", None);
                return None;
            }
        };
        let description = m
            .get("description")
            .and_then(|n| self.r.string(n, "description"));
        let for_each_type = m.get("for_each_type").map(|n| {
            let feats = self.r.strings(n, "a type feature");
            for (f, fpos) in &feats {
                if !TYPE_FEATURES.contains(&f.as_str()) {
                    let hint = did_you_mean(f, TYPE_FEATURES.iter().copied())
                        .map(|s| format!("did you mean `{s}`?"))
                        .unwrap_or_else(|| TYPE_FEATURES.join(", "));
                    self.r.diags.push(
                        Diagnostic::new(fpos.clone(), format!("unknown type feature `{f}`"))
                            .expected(hint),
                    );
                }
            }
            feats.into_iter().map(|(f, _)| f).collect::<Vec<_>>()
        });
        let for_each_monitor = m.get("for_each_monitor").map(|n| {
            let feats = self.r.strings(n, "a monitor feature");
            for (f, fpos) in &feats {
                if !crate::target::MONITOR_FEATURES.contains(&f.as_str()) {
                    self.r.diags.push(
                        Diagnostic::new(fpos.clone(), format!("unknown monitor feature `{f}`"))
                            .expected(crate::target::MONITOR_FEATURES.join(", ")),
                    );
                }
            }
            feats.into_iter().map(|(f, _)| f).collect::<Vec<_>>()
        });
        if for_each_type.is_some() && for_each_monitor.is_some() {
            self.r.error(
                node,
                "a scenario runs per type or per monitor, not both",
                None,
            );
        }
        let mut requires = Vec::new();
        if let Some(n) = m.get("requires") {
            for (s, rpos) in self.r.strings(n, "a requirement") {
                match s.as_str() {
                    "destructive" => requires.push(Requirement::Destructive),
                    "identity" => requires.push(Requirement::Identity),
                    _ => self.r.diags.push(
                        Diagnostic::new(rpos, format!("unknown requirement `{s}`"))
                            .expected("destructive or identity"),
                    ),
                }
            }
        }
        let ignore = m
            .get("ignore")
            .and_then(|n| match n.as_scalar().and_then(|s| s.as_bool()) {
                Some(true) => Some("ignored by the suite".to_string()),
                Some(false) => None,
                None => self.r.string(n, "ignore"),
            });
        let table = m.get("table").map(|n| self.table(n)).unwrap_or_default();
        let mut def = Defined {
            has_type: for_each_type.is_some(),
            ..Default::default()
        };
        def.roots.extend(ALWAYS.iter().map(|s| s.to_string()));
        if for_each_type.is_some() {
            def.roots.insert("type".into());
        }
        if for_each_monitor.is_some() {
            def.roots.insert("monitor".into());
        }
        // Row values may use target, type, run and unique (rendered when the test starts).
        if let Some(tn) = m.get("table") {
            for row in &table {
                if let Ok(jt) = JsonTemplate::parse(&Value::Object(row.values.clone())) {
                    self.check_vars(&jt.vars(), tn, &def);
                }
            }
        }
        if !table.is_empty() {
            def.roots.insert("row".into());
            let mut fields: Option<BTreeSet<String>> = None;
            for row in &table {
                let keys: BTreeSet<String> = row.values.keys().cloned().collect();
                fields = Some(match fields {
                    None => keys,
                    Some(f) => f.intersection(&keys).cloned().collect(),
                });
            }
            def.row_fields = fields;
            def.rows = table.iter().map(|r| r.values.clone()).collect();
        }
        let mut vars = Vec::new();
        if let Some(n) = m.get("vars")
            && let Some(vm) = self.r.free_map(n, "vars")
        {
            for (k, v) in vm.entries() {
                let key = k
                    .as_scalar()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                if let Some(jt) = self.json_template(v) {
                    self.check_vars(&jt.vars(), v, &def);
                    def.roots.insert(key.clone());
                    vars.push((key, jt, self.r.pos(&k)));
                }
            }
        }
        let setup = m
            .get("setup")
            .map(|n| self.steps(n, &mut def))
            .unwrap_or_default();
        let steps = match m.get("steps") {
            Some(n) => self.steps(n, &mut def),
            None => {
                self.r
                    .error(node, format!("scenario `{name}` needs `steps:`"), None);
                Vec::new()
            }
        };
        let teardown = m
            .get("teardown")
            .map(|n| self.steps(n, &mut def))
            .unwrap_or_default();
        let needs_tasks = scenario_uses_tasks(&setup, &steps, &teardown);
        Some(Scenario {
            name,
            pos,
            description,
            for_each_type,
            for_each_monitor,
            needs_tasks,
            requires,
            ignore,
            table,
            vars,
            setup,
            steps,
            teardown,
        })
    }

    fn table(&mut self, node: &Node) -> Vec<Row> {
        let mut rows = Vec::new();
        let Some(list) = self.r.seq(node, "table") else {
            return rows;
        };
        let mut names = BTreeSet::new();
        for item in list {
            let Some(_) = self.r.free_map(item, "a table row") else {
                continue;
            };
            let Value::Object(values) = to_json(item) else {
                continue;
            };
            let name = match values.get("name") {
                Some(Value::String(s)) if valid_name(s) => s.clone(),
                Some(_) => {
                    self.r.error(
                        item,
                        "a row's `name` may only use letters, digits, `-` and `_`",
                        None,
                    );
                    continue;
                }
                None => {
                    self.r
                        .error(item, "a table row needs a `name` (it names the test)", None);
                    continue;
                }
            };
            if !names.insert(name.clone()) {
                self.r
                    .error(item, format!("row name `{name}` is used twice"), None);
            }
            rows.push(Row {
                name,
                values,
                pos: self.r.pos(item),
            });
        }
        rows
    }

    fn steps(&mut self, node: &Node, def: &mut Defined) -> Vec<Step> {
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

    fn step(&mut self, node: &Node, def: &mut Defined) -> Option<Step> {
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
            "sleep" => Action::Sleep(self.r.f64(an, "sleep (seconds)")?),
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
                    self.r
                        .error(an, "`not_applicable` needs the reason, for the reports", None);
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

    fn request(&mut self, node: &Node, def: &Defined) -> Option<RequestSpec> {
        let m = self.r.map(node, "request", REQUEST_KEYS)?;
        let method = match m.get("method") {
            Some(n) => self.template(n)?,
            None => Template::literal("GET"),
        };
        if let Some(lit) = method.as_literal()
            && !["GET", "PUT", "PATCH", "DELETE", "POST", "HEAD", "OPTIONS"].contains(&lit.as_str())
        {
            self.r.error(
                m.get("method").unwrap_or(node),
                format!("unknown method `{lit}`"),
                Some("GET, PUT, PATCH, DELETE, POST, HEAD or OPTIONS".into()),
            );
        }
        let url = match m.get("url") {
            Some(n) => {
                let t = self.template(n)?;
                self.check_vars(&t.vars().collect::<Vec<_>>(), n, def);
                t
            }
            None => {
                self.r.error(node, "a request needs a `url`", None);
                return None;
            }
        };
        let mut headers = Vec::new();
        if let Some(n) = m.get("headers")
            && let Some(hm) = self.r.free_map(n, "headers")
        {
            for (k, v) in hm.entries() {
                let key = k
                    .as_scalar()
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_default();
                if let Some(t) = self.template(v) {
                    self.check_vars(&t.vars().collect::<Vec<_>>(), v, def);
                    headers.push((key, t));
                }
            }
        }
        let bodies: Vec<&str> = ["body", "raw_body", "body_file"]
            .into_iter()
            .filter(|k| m.has(k))
            .collect();
        if bodies.len() > 1 {
            self.r.error(
                node,
                format!(
                    "a request has one body, this one has {}",
                    bodies.join(" and ")
                ),
                None,
            );
        }
        let body = if let Some(n) = m.get("body") {
            let jt = self.json_template(n)?;
            self.check_vars(&jt.vars(), n, def);
            Some(Body::Json(jt))
        } else if let Some(n) = m.get("raw_body") {
            let t = self.template(n)?;
            self.check_vars(&t.vars().collect::<Vec<_>>(), n, def);
            Some(Body::Raw(t))
        } else if let Some(n) = m.get("body_file") {
            let rel = self.r.string(n, "body_file")?;
            let base = self.r.file.parent().unwrap_or(Path::new("."));
            let path = base.join(&rel);
            match std::fs::read_to_string(&path) {
                Ok(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(v) => match JsonTemplate::parse(&v) {
                        Ok(jt) => {
                            self.check_vars(&jt.vars(), n, def);
                            Some(Body::Json(jt))
                        }
                        Err(e) => {
                            self.r.error(n, format!("{}: {e}", path.display()), None);
                            None
                        }
                    },
                    Err(e) => {
                        self.r.error(
                            n,
                            format!("{} is not valid JSON: {e}", path.display()),
                            None,
                        );
                        None
                    }
                },
                Err(e) => {
                    self.r.error(
                        n,
                        format!("cannot read body file {}: {e}", path.display()),
                        None,
                    );
                    None
                }
            }
        } else {
            None
        };
        let api_version = match m.get("api_version") {
            None => ApiVersion::Default,
            Some(n) if n.as_scalar().is_some_and(|s| s.as_str() == "omit") => ApiVersion::Omit,
            // A URL the server handed out is sent exactly as given (nothing added).
            Some(n) if n.as_scalar().is_some_and(|s| s.as_str() == "as_given") => {
                ApiVersion::AsGiven
            }
            Some(n) => ApiVersion::Value(self.template(n)?),
        };
        let all_pages = match m.get("pages") {
            None => false,
            Some(n) => match n.as_scalar().map(|s| s.as_str()) {
                Some("all") => true,
                Some("first") => false,
                _ => {
                    self.r.error(n, "pages must be `all` or `first`", None);
                    false
                }
            },
        };
        Some(RequestSpec {
            method,
            url,
            headers,
            body,
            api_version,
            all_pages,
        })
    }

    fn poll(&mut self, node: &Node, def: &Defined) -> Option<PollSpec> {
        // `poll: step-name` or `poll: {follow: step-name, deadline: 60, watch: [url]}`.
        if let Some(s) = node.as_scalar() {
            let follow = s.as_str().to_string();
            self.check_step_ref(&follow, node, def);
            return Some(PollSpec {
                follow,
                deadline: None,
                watch: Vec::new(),
            });
        }
        let m = self.r.map(node, "poll", &["follow", "deadline", "watch"])?;
        let follow = match m.get("follow") {
            Some(n) => {
                let f = self.r.string(n, "follow")?;
                self.check_step_ref(&f, n, def);
                f
            }
            None => {
                self.r.error(node, "poll needs `follow: <step name>`", None);
                return None;
            }
        };
        let deadline = m
            .get("deadline")
            .and_then(|n| self.r.u64(n, "deadline (seconds)"))
            .map(Duration::from_secs);
        let mut watch = Vec::new();
        if let Some(n) = m.get("watch") {
            for w in self.r.one_or_many(n) {
                if let Some(t) = self.template(w) {
                    self.check_vars(&t.vars().collect::<Vec<_>>(), w, def);
                    watch.push(t);
                }
            }
        }
        Some(PollSpec {
            follow,
            deadline,
            watch,
        })
    }

    fn check_step_ref(&mut self, name: &str, node: &Node, def: &Defined) {
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

    fn create(&mut self, node: &Node, def: &Defined) -> Option<CreateSpec> {
        let m = self.r.map(
            node,
            "create",
            &["as", "type", "parent", "dependency", "body", "wait"],
        )?;
        let bind = match m.get("as") {
            Some(n) => {
                let b = self.r.string(n, "as")?;
                if !valid_name(&b) || ALWAYS.contains(&b.as_str()) || b == "type" || b == "row" {
                    self.r
                        .error(n, format!("`{b}` cannot name a resource"), None);
                }
                b
            }
            None => {
                self.r.error(
                    node,
                    "create needs `as: <variable>` to name the resource",
                    None,
                );
                return None;
            }
        };
        let type_ref = match m
            .get("type")
            .and_then(|n| self.r.string(n, "type"))
            .as_deref()
        {
            None | Some("self") => TypeRef::SelfType,
            Some("parent") => TypeRef::Parent,
            Some("child") => TypeRef::Child,
            Some("grandchild") => TypeRef::Grandchild,
            Some("dependency") => TypeRef::Dependency,
            Some(other) => TypeRef::Named(other.to_string()),
        };
        if type_ref != TypeRef::SelfType && !matches!(type_ref, TypeRef::Named(_)) && !def.has_type
        {
            self.r.error(
                node,
                "relative types (parent, child, dependency) need `for_each_type` on the scenario",
                None,
            );
        }
        if matches!(type_ref, TypeRef::SelfType) && !def.has_type && !m.has("type") {
            self.r.error(
                node,
                "create needs `type:` when the scenario has no `for_each_type`",
                None,
            );
        }
        let tmpl = |key: &str, r: &mut Self| -> Option<Template> {
            let n = m.get(key)?;
            let t = r.template(n)?;
            r.check_vars(&t.vars().collect::<Vec<_>>(), n, def);
            Some(t)
        };
        let parent = tmpl("parent", self);
        let dependency = tmpl("dependency", self);
        let body = match m.get("body") {
            Some(n) => {
                let jt = self.json_template(n)?;
                self.check_vars(&jt.vars(), n, def);
                Some(jt)
            }
            None => None,
        };
        let wait = m
            .get("wait")
            .and_then(|n| self.r.bool(n, "wait"))
            .unwrap_or(true);
        Some(CreateSpec {
            bind,
            type_ref,
            parent,
            dependency,
            body,
            wait,
        })
    }

    fn sweep(&mut self, node: &Node, def: &Defined) -> Option<SweepSpec> {
        let m = self.r.map(node, "sweep", &["resources", "seed"])?;
        let mut resources = Vec::new();
        match m.get("resources") {
            Some(n) => {
                for item in self.r.one_or_many(n) {
                    if let Some(t) = self.template(item) {
                        self.check_vars(&t.vars().collect::<Vec<_>>(), item, def);
                        resources.push(t);
                    }
                }
            }
            None => self
                .r
                .error(node, "sweep needs `resources:` (resource URLs)", None),
        }
        let seed = m
            .get("seed")
            .and_then(|n| self.r.u64(n, "seed"))
            .unwrap_or(1);
        Some(SweepSpec { resources, seed })
    }

    fn expectation(&mut self, node: &Node, def: &Defined, action: &Action) -> Option<Expectation> {
        let allowed: Vec<&str> = EXPECT_KEYS.iter().chain(PREDICATES).copied().collect();
        let m = self.r.map(node, "an expectation", &allowed)?;
        let pos = self.r.pos(node);
        let mut rules = Vec::new();
        let mut row_rule = None;
        for key in ["rule", "rules"] {
            if let Some(n) = m.get(key) {
                for item in self.r.one_or_many(n) {
                    let Some(id) = self.r.string(item, "a rule ID") else {
                        continue;
                    };
                    if let Some(field) = id.strip_prefix("${row.").and_then(|s| s.strip_suffix('}'))
                    {
                        // Each row names its rule: check them all now.
                        if def.rows.is_empty() {
                            self.r
                                .error(item, "`${row.…}` needs a `table` on the scenario", None);
                            continue;
                        }
                        for row in def.rows.clone() {
                            match row.get(field).and_then(Value::as_str) {
                                Some(rid) => {
                                    if let Some(rule) = self.rule_id(rid, item) {
                                        rules.push(rule);
                                    }
                                }
                                None => self.r.error(
                                    item,
                                    format!("a row has no rule ID in `{field}`"),
                                    None,
                                ),
                            }
                        }
                        row_rule = Some(field.to_string());
                    } else if let Some(rule) = self.rule_id(&id, item) {
                        rules.push(rule);
                    }
                }
            }
        }
        if !m.has("rule") && !m.has("rules") {
            self.r.error(
                node,
                "every expectation cites the rule it checks",
                Some("rule: ETAG-07 (see `rpconform rules`)".into()),
            );
        }
        let subjects: Vec<&str> = SUBJECTS.iter().copied().filter(|s| m.has(s)).collect();
        if subjects.len() != 1 {
            self.r.error(
                node,
                "an expectation checks exactly one thing",
                Some(SUBJECTS.join(", ")),
            );
            return None;
        }
        let subject = subjects[0];
        let sn = m.get(subject)?;
        let ignore_case = m
            .get("ignore_case")
            .and_then(|n| self.r.bool(n, "ignore_case"))
            .unwrap_or(false);
        let check = match subject {
            "status" if sn.as_scalar().is_some_and(|s| s.as_str().contains("${")) => {
                let t = self.template(sn)?;
                self.check_vars(&t.vars().collect::<Vec<_>>(), sn, def);
                Check::StatusFrom(t)
            }
            "status" => Check::Status(self.status_list(sn)),
            "header" => {
                let name = self.r.string(sn, "header")?;
                Check::Header {
                    name,
                    predicate: self.predicate(&m, node, def, false)?,
                    ignore_case,
                }
            }
            "pointer" => {
                let pointer = self.r.string(sn, "pointer")?;
                if pointer.contains("${") {
                    let t = self.template(sn)?;
                    self.check_vars(&t.vars().collect::<Vec<_>>(), sn, def);
                } else if !valid_pointer(&pointer) {
                    self.r.error(
                        sn,
                        format!("`{pointer}` is not a JSON Pointer"),
                        Some("\"\" or /a/b (with ~0 for ~ and ~1 for /)".into()),
                    );
                }
                Check::Pointer {
                    pointer,
                    predicate: self.predicate(&m, node, def, true)?,
                    ignore_case,
                }
            }
            "value" => {
                let t = self.template(sn)?;
                self.check_vars(&t.vars().collect::<Vec<_>>(), sn, def);
                Check::Value {
                    template: t,
                    predicate: self.predicate(&m, node, def, false)?,
                    ignore_case,
                }
            }
            "schema" => {
                let file = self.r.string(sn, "schema")?;
                let validator = self.schema(&file, sn)?;
                Check::Schema { file, validator }
            }
            "outcome" => {
                if !matches!(
                    action,
                    Action::Poll(_)
                        | Action::Create(_)
                        | Action::Settle(_)
                        | Action::Task(_)
                        | Action::Sweep(_)
                        | Action::Inspect(_)
                ) {
                    self.r.error(
                        sn,
                        "`outcome` is only for poll, create, settle, task, sweep and inspect steps",
                        None,
                    );
                }
                let vals: Vec<String> = self
                    .r
                    .strings(sn, "an outcome")
                    .into_iter()
                    .map(|(s, _)| s)
                    .collect();
                for v in &vals {
                    if !["Succeeded", "Failed", "Canceled"].contains(&v.as_str()) {
                        self.r.error(
                            sn,
                            format!("unknown outcome `{v}`"),
                            Some("Succeeded, Failed or Canceled".into()),
                        );
                    }
                }
                Check::Outcome(vals)
            }
            "list_contains" | "list_omits" => {
                let t = self.template(sn)?;
                self.check_vars(&t.vars().collect::<Vec<_>>(), sn, def);
                if subject == "list_contains" {
                    Check::ListContains(t)
                } else {
                    Check::ListOmits(t)
                }
            }
            _ => return None,
        };
        if matches!(
            check,
            Check::Status(_)
                | Check::StatusFrom(_)
                | Check::Schema { .. }
                | Check::Outcome(_)
                | Check::ListContains(_)
                | Check::ListOmits(_)
        ) {
            for k in PREDICATES {
                if let Some(n) = m.get(k) {
                    self.r.error(
                        n,
                        format!("`{k}` does not go with `{subject}`"),
                        Some("header or pointer".into()),
                    );
                }
            }
        }
        let when_status = m.get("when_status").map(|n| self.status_list(n));
        Some(Expectation {
            rules,
            row_rule,
            when_status,
            check,
            pos,
        })
    }

    fn predicate(
        &mut self,
        m: &crate::yaml::Map<'_>,
        node: &Node,
        def: &Defined,
        is_pointer: bool,
    ) -> Option<Predicate> {
        let keys: Vec<&str> = PREDICATES.iter().copied().filter(|k| m.has(k)).collect();
        if keys.len() > 1 {
            self.r.error(
                node,
                format!(
                    "one test per expectation, this one has {}",
                    keys.join(" and ")
                ),
                None,
            );
            return None;
        }
        let Some(k) = keys.first().copied() else {
            return Some(Predicate::Present);
        };
        let n = m.get(k)?;
        let _ = is_pointer;
        Some(match k {
            "present" | "exists" => {
                if self.r.bool(n, k)? {
                    Predicate::Present
                } else {
                    Predicate::Absent
                }
            }
            "absent" => {
                if self.r.bool(n, k)? {
                    Predicate::Absent
                } else {
                    Predicate::Present
                }
            }
            "equals" | "not_equals" => {
                let jt = self.json_template(n)?;
                self.check_vars(&jt.vars(), n, def);
                if k == "equals" {
                    Predicate::Equals(jt)
                } else {
                    Predicate::NotEquals(jt)
                }
            }
            "contains" => {
                let jt = self.json_template(n)?;
                self.check_vars(&jt.vars(), n, def);
                Predicate::Contains(jt)
            }
            "matches" => {
                let s = self.r.string(n, "matches")?;
                match Regex::new(&s) {
                    Ok(re) => Predicate::Matches(Arc::new(re)),
                    Err(e) => {
                        let msg = e
                            .to_string()
                            .lines()
                            .last()
                            .unwrap_or("invalid")
                            .trim()
                            .to_string();
                        self.r.error(n, format!("invalid regex `{s}`: {msg}"), None);
                        return None;
                    }
                }
            }
            "one_of" | "not_one_of" => {
                let list = self.r.seq(n, k)?;
                let mut out = Vec::new();
                for item in list {
                    let jt = self.json_template(item)?;
                    self.check_vars(&jt.vars(), item, def);
                    out.push(jt);
                }
                if k == "one_of" {
                    Predicate::OneOf(out)
                } else {
                    Predicate::NotOneOf(out)
                }
            }
            _ => return None,
        })
    }

    fn capture_from(&mut self, node: &Node) -> Option<CaptureFrom> {
        let m = self
            .r
            .map(node, "a capture", &["header", "pointer", "status"])?;
        let keys = m.keys();
        if keys.len() != 1 {
            self.r.error(
                node,
                "a capture takes one of header, pointer or status",
                None,
            );
            return None;
        }
        if let Some(n) = m.get("header") {
            return self.r.string(n, "header").map(CaptureFrom::Header);
        }
        if let Some(n) = m.get("pointer") {
            let p = self.r.string(n, "pointer")?;
            if !valid_pointer(&p) {
                self.r.error(
                    n,
                    format!("`{p}` is not a JSON Pointer"),
                    Some("\"\" or /a/b".into()),
                );
                return None;
            }
            return Some(CaptureFrom::Pointer(p));
        }
        Some(CaptureFrom::Status)
    }

    /// Codes and classes (`4xx`) as a list of codes.
    fn status_list(&mut self, node: &Node) -> Vec<u16> {
        self.r
            .one_or_many(node)
            .into_iter()
            .flat_map(
                |n| match n.as_scalar().map(|s| s.as_str().to_ascii_lowercase()) {
                    Some(c)
                        if c.len() == 3
                            && c.ends_with("xx")
                            && matches!(&c[..1], "1" | "2" | "3" | "4" | "5") =>
                    {
                        let base = c[..1].parse::<u16>().unwrap_or(0) * 100;
                        (base..base + 100).collect::<Vec<u16>>()
                    }
                    _ => self.status_code(n).into_iter().collect(),
                },
            )
            .collect()
    }

    fn status_code(&mut self, n: &Node) -> Option<u16> {
        match self
            .r
            .u64(n, "a status code (like 200, or a class like 4xx)")
        {
            Some(c) if (100..=599).contains(&c) => Some(c as u16),
            Some(_) => {
                self.r
                    .error(n, "a status code is between 100 and 599", None);
                None
            }
            None => None,
        }
    }

    fn rule_id(&mut self, id: &str, node: &Node) -> Option<&'static str> {
        match crate::rules::lookup(id) {
            Some(r) => Some(r.id),
            None => {
                let hint = did_you_mean(id, crate::rules::ids())
                    .map(|s| format!("did you mean `{s}`? (`rpconform rules` lists them)"))
                    .unwrap_or_else(|| "a rule ID from `rpconform rules`, like ETAG-07".into());
                self.r
                    .error(node, format!("unknown rule ID `{id}`"), Some(hint));
                None
            }
        }
    }

    fn schema(&mut self, file: &str, node: &Node) -> Option<Arc<jsonschema::Validator>> {
        let path = self.opts.schema_dir.join(file);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(_) => {
                let known: Vec<String> = std::fs::read_dir(&self.opts.schema_dir)
                    .map(|rd| {
                        rd.flatten()
                            .filter_map(|e| e.file_name().to_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let hint = did_you_mean(file, known.iter().map(|s| s.as_str()))
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| {
                        format!(
                            "a file in {} ({})",
                            self.opts.schema_dir.display(),
                            known.join(", ")
                        )
                    });
                self.r
                    .error(node, format!("unknown schema file `{file}`"), Some(hint));
                return None;
            }
        };
        let value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                self.r.error(
                    node,
                    format!("schema {} is not valid JSON: {e}", path.display()),
                    None,
                );
                return None;
            }
        };
        match jsonschema::validator_for(&value) {
            Ok(v) => Some(Arc::new(v)),
            Err(e) => {
                self.r.error(
                    node,
                    format!("schema {} is not a valid JSON Schema: {e}", path.display()),
                    None,
                );
                None
            }
        }
    }

    fn template(&mut self, node: &Node) -> Option<Template> {
        let text = match node.as_scalar() {
            Some(s) => s.as_str().to_string(),
            None => {
                self.r.error(node, "expected a string here", None);
                return None;
            }
        };
        match Template::parse(&text) {
            Ok(t) => Some(t),
            Err((_, msg)) => {
                self.r.error(node, msg, None);
                None
            }
        }
    }

    fn json_template(&mut self, node: &Node) -> Option<JsonTemplate> {
        match JsonTemplate::parse(&to_json(node)) {
            Ok(jt) => Some(jt),
            Err(msg) => {
                self.r.error(node, msg, None);
                None
            }
        }
    }

    /// Report references to names not defined at this point of the scenario.
    fn check_vars(&mut self, vars: &[&VarRef], node: &Node, def: &Defined) {
        for v in vars {
            let ok_root = def.roots.contains(&v.root);
            if !ok_root {
                let hint = did_you_mean(&v.root, def.roots.iter().map(|s| s.as_str()))
                    .map(|s| format!("did you mean `{s}`?"))
                    .unwrap_or_else(|| {
                        format!(
                            "one of: {}",
                            def.roots.iter().cloned().collect::<Vec<_>>().join(", ")
                        )
                    });
                let extra = if v.root == "type" {
                    " (`type` needs `for_each_type` on the scenario)"
                } else if v.root == "row" {
                    " (`row` needs a `table`)"
                } else {
                    ""
                };
                self.r.error(
                    node,
                    format!("undefined variable `{}`{extra}", v.root),
                    Some(hint),
                );
                continue;
            }
            let first = v.path.first().map(|s| s.as_str());
            let allowed: Option<Vec<&str>> = match v.root.as_str() {
                "target" => Some(TARGET_SCOPE_KEYS.to_vec()),
                "type" => Some(TYPE_SCOPE_KEYS.to_vec()),
                "run" => Some(vec!["id", "time_scale"]),
                "unique" => Some(vec![]),
                "row" => def
                    .row_fields
                    .as_ref()
                    .map(|f| f.iter().map(|s| s.as_str()).collect()),
                _ => def
                    .shaped
                    .iter()
                    .rev()
                    .find(|(n, _)| n == &v.root)
                    .map(|(_, f)| f.to_vec()),
            };
            if let (Some(allowed), Some(f)) = (allowed, first)
                && !allowed.contains(&f)
            {
                let hint = did_you_mean(f, allowed.iter().copied())
                    .map(|s| format!("did you mean `{}.{s}`?", v.root))
                    .unwrap_or_else(|| format!("one of: {}", allowed.join(", ")));
                let what = if v.root == "row" {
                    " in every row of the table"
                } else {
                    ""
                };
                self.r.error(
                    node,
                    format!("`{}.{f}` is not defined{what}", v.root),
                    Some(hint),
                );
            }
        }
    }
}

fn scenario_uses_tasks(setup: &[Step], steps: &[Step], teardown: &[Step]) -> bool {
    setup
        .iter()
        .chain(steps)
        .chain(teardown)
        .any(|s| matches!(s.action, Action::Task(_)))
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn valid_pointer(p: &str) -> bool {
    if p.is_empty() {
        return true;
    }
    if !p.starts_with('/') {
        return false;
    }
    // `~` must be followed by 0 or 1.
    let b = p.as_bytes();
    b.iter()
        .enumerate()
        .all(|(i, c)| *c != b'~' || matches!(b.get(i + 1), Some(b'0') | Some(b'1')))
}
