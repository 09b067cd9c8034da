//! Suite files (YAML) → [`Suite`]s, checking everything that can be checked without a target:
//! keys, types, rule IDs, variables, regexes, JSON Pointers and schema files. Every problem of
//! a file is reported, each with file, line and column.
//!
//! `mod` reads files, suites, scenarios and tables and checks variables; `steps` the steps and
//! their actions; `requests` the request-like actions (request, poll, create, sweep); `expect`
//! expectations and captures.

mod expect;
mod requests;
mod steps;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use marked_yaml::Node;
use serde_json::Value;

use super::ast::*;
use super::files::{MAX_TOTAL_BYTES, suite_files};
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
/// Variables every scenario sees.
const ALWAYS: &[&str] = &["target", "run", "unique", "uuid"];

/// Where the suites and schemas are.
pub struct LoadOptions {
    pub schema_dir: PathBuf,
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
    let mut total: u64 = 0;
    for f in files {
        let text = match crate::yaml::read_text(&f, crate::yaml::MAX_SOURCE_BYTES) {
            Ok(t) => t,
            Err(e) => {
                let file: Arc<Path> = Arc::from(f.as_path());
                report.push(Diagnostic::new(
                    Pos::new(&file, e.line, e.col),
                    format!("cannot read suite: {e}"),
                ));
                continue;
            }
        };
        total += text.len() as u64;
        if total > MAX_TOTAL_BYTES {
            let file: Arc<Path> = Arc::from(f.as_path());
            report.push(Diagnostic::new(
                Pos::new(&file, 1, 1),
                format!(
                    "the suite files read so far pass {} in all; load fewer at once",
                    crate::yaml::human_bytes(MAX_TOTAL_BYTES)
                ),
            ));
            return Err(report);
        }
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
        let name = self.scenario_name(m.get("name"), node)?;
        let description = m
            .get("description")
            .and_then(|n| self.r.string(n, "description"));
        let for_each_type = m.get("for_each_type").map(|n| self.type_features(n));
        let for_each_monitor = m.get("for_each_monitor").map(|n| self.monitor_features(n));
        if for_each_type.is_some() && for_each_monitor.is_some() {
            self.r.error(
                node,
                "a scenario runs per type or per monitor, not both",
                None,
            );
        }
        let requires = m
            .get("requires")
            .map(|n| self.requirements(n))
            .unwrap_or_default();
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
        if let Some(tn) = m.get("table") {
            self.define_table(tn, &table, &mut def);
        }
        let vars = m
            .get("vars")
            .map(|n| self.vars(n, &mut def))
            .unwrap_or_default();
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

    /// `name`: required, letters, digits, `-` and `_`.
    fn scenario_name(&mut self, n: Option<&Node>, node: &Node) -> Option<String> {
        let Some(n) = n else {
            self.r.error(node, "a scenario needs a `name`", None);
            return None;
        };
        let s = self.r.string(n, "name")?;
        if !valid_name(&s) {
            self.r.error(
                n,
                format!("scenario name `{s}` may only use letters, digits, `-` and `_`"),
                None,
            );
        }
        Some(s)
    }

    /// `for_each_type`: the type features a type needs for the scenario to run on it.
    fn type_features(&mut self, n: &Node) -> Vec<String> {
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
        feats.into_iter().map(|(f, _)| f).collect()
    }

    /// `for_each_monitor`: the monitor features a monitor needs for the scenario to run on it.
    fn monitor_features(&mut self, n: &Node) -> Vec<String> {
        let feats = self.r.strings(n, "a monitor feature");
        for (f, fpos) in &feats {
            if !crate::target::MONITOR_FEATURES.contains(&f.as_str()) {
                self.r.diags.push(
                    Diagnostic::new(fpos.clone(), format!("unknown monitor feature `{f}`"))
                        .expected(crate::target::MONITOR_FEATURES.join(", ")),
                );
            }
        }
        feats.into_iter().map(|(f, _)| f).collect()
    }

    /// `requires`: destructive, identity.
    fn requirements(&mut self, n: &Node) -> Vec<Requirement> {
        let mut requires = Vec::new();
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
        requires
    }

    /// The table's rows as variables: `row`, with the fields every row has. Row values may
    /// use target, type, run and unique (rendered when the test starts).
    fn define_table(&mut self, tn: &Node, table: &[Row], def: &mut Defined) {
        for row in table {
            if let Ok(jt) = JsonTemplate::parse(&Value::Object(row.values.clone())) {
                self.check_vars(&jt.vars(), tn, def);
            }
        }
        if table.is_empty() {
            return;
        }
        def.roots.insert("row".into());
        let mut fields: Option<BTreeSet<String>> = None;
        for row in table {
            let keys: BTreeSet<String> = row.values.keys().cloned().collect();
            fields = Some(match fields {
                None => keys,
                Some(f) => f.intersection(&keys).cloned().collect(),
            });
        }
        def.row_fields = fields;
        def.rows = table.iter().map(|r| r.values.clone()).collect();
    }

    /// `vars`: name → JSON template, each defined for the ones after it. The fewest bytes each
    /// var renders to are counted: vars that repeat each other past the cap on what a template
    /// may build are refused here, not when the run runs out of memory.
    fn vars(&mut self, n: &Node, def: &mut Defined) -> Vec<(String, JsonTemplate, Pos)> {
        let mut vars = Vec::new();
        let mut least: std::collections::HashMap<String, usize> = Default::default();
        let Some(vm) = self.r.free_map(n, "vars") else {
            return vars;
        };
        for (k, v) in vm.entries() {
            let key = k
                .as_scalar()
                .map(|s| s.as_str().to_string())
                .unwrap_or_default();
            let Some(jt) = self.json_template(v) else {
                continue;
            };
            self.check_vars(&jt.vars(), v, def);
            let n = jt.min_len(&|name| least.get(name).copied());
            if n > crate::template::MAX_RENDERED_BYTES {
                self.r.error(
                    v,
                    format!(
                        "vars.{key} renders to at least {}, past the {} a template may build (it repeats variables that repeat others)",
                        crate::yaml::human_bytes(n as u64),
                        crate::yaml::human_bytes(crate::template::MAX_RENDERED_BYTES as u64)
                    ),
                    None,
                );
                def.roots.insert(key.clone());
                continue;
            }
            least.insert(key.clone(), n);
            def.roots.insert(key.clone());
            vars.push((key, jt, self.r.pos(&k)));
        }
        vars
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
                "unique" | "uuid" => Some(vec![]),
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
