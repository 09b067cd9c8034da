//! Expectations (`status`, `header`, `pointer`, `value`, `schema`, `outcome`, `list_*`, each
//! citing its rules), their predicates, captures, status codes, rule IDs and schema files.

use std::sync::Arc;

use marked_yaml::Node;
use regex::Regex;
use serde_json::Value;

use super::{Defined, SuiteParser, valid_pointer};
use crate::diag::did_you_mean;
use crate::scenario::ast::*;
use crate::yaml::Map;

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
    "when_running_at",
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

impl<'o> SuiteParser<'o> {
    pub(super) fn expectation(
        &mut self,
        node: &Node,
        def: &Defined,
        action: &Action,
    ) -> Option<Expectation> {
        let allowed: Vec<&str> = EXPECT_KEYS.iter().chain(PREDICATES).copied().collect();
        let m = self.r.map(node, "an expectation", &allowed)?;
        let pos = self.r.pos(node);
        let (rules, row_rule) = self.cited_rules(&m, node, def);
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
        let check = self.check(&m, node, subject, sn, def, action)?;
        if !matches!(
            check,
            Check::Header { .. } | Check::Pointer { .. } | Check::Value { .. }
        ) {
            self.no_predicates(&m, subject);
        }
        let when_status = m.get("when_status").map(|n| self.status_list(n));
        let when_running_at = m.get("when_running_at").and_then(|n| {
            let name = self.r.string(n, "when_running_at")?;
            self.check_step_ref(&name, n, def);
            Some(name)
        });
        Some(Expectation {
            rules,
            row_rule,
            when_status,
            when_running_at,
            check,
            pos,
        })
    }

    /// `rule` / `rules`: the rule IDs the expectation checks (a `${row.FIELD}` names each
    /// table row's own, returned as the row field); at least one is required.
    fn cited_rules(
        &mut self,
        m: &Map<'_>,
        node: &Node,
        def: &Defined,
    ) -> (Vec<&'static str>, Option<String>) {
        let mut rules = Vec::new();
        let mut row_rule = None;
        for key in ["rule", "rules"] {
            let Some(n) = m.get(key) else { continue };
            for item in self.r.one_or_many(n) {
                let Some(id) = self.r.string(item, "a rule ID") else {
                    continue;
                };
                if let Some(field) = id.strip_prefix("${row.").and_then(|s| s.strip_suffix('}')) {
                    if self.row_rules(item, field, def, &mut rules) {
                        row_rule = Some(field.to_string());
                    }
                } else if let Some(rule) = self.rule_id(&id, item) {
                    rules.push(rule);
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
        (rules, row_rule)
    }

    /// Each table row names its rule in `field`: check them all now. False when the scenario
    /// has no table.
    fn row_rules(
        &mut self,
        item: &Node,
        field: &str,
        def: &Defined,
        rules: &mut Vec<&'static str>,
    ) -> bool {
        if def.rows.is_empty() {
            self.r
                .error(item, "`${row.…}` needs a `table` on the scenario", None);
            return false;
        }
        for row in def.rows.clone() {
            match row.get(field).and_then(Value::as_str) {
                Some(rid) => {
                    if let Some(rule) = self.rule_id(rid, item) {
                        rules.push(rule);
                    }
                }
                None => self
                    .r
                    .error(item, format!("a row has no rule ID in `{field}`"), None),
            }
        }
        true
    }

    /// The check on `subject` (its node `sn`), one reader per subject.
    fn check(
        &mut self,
        m: &Map<'_>,
        node: &Node,
        subject: &str,
        sn: &Node,
        def: &Defined,
        action: &Action,
    ) -> Option<Check> {
        let ignore_case = m
            .get("ignore_case")
            .and_then(|n| self.r.bool(n, "ignore_case"))
            .unwrap_or(false);
        Some(match subject {
            "status" if sn.as_scalar().is_some_and(|s| s.as_str().contains("${")) => {
                Check::StatusFrom(self.checked_template(sn, def)?)
            }
            "status" => Check::Status(self.status_list(sn)),
            "header" => {
                let name = self.r.string(sn, "header")?;
                Check::Header {
                    name,
                    predicate: self.predicate(m, node, def, false)?,
                    ignore_case,
                }
            }
            "pointer" => Check::Pointer {
                pointer: self.pointer(sn, def)?,
                predicate: self.predicate(m, node, def, true)?,
                ignore_case,
            },
            "value" => {
                let t = self.checked_template(sn, def)?;
                Check::Value {
                    template: t,
                    predicate: self.predicate(m, node, def, false)?,
                    ignore_case,
                }
            }
            "schema" => {
                let file = self.r.string(sn, "schema")?;
                let validator = self.schema(&file, sn)?;
                Check::Schema { file, validator }
            }
            "outcome" => Check::Outcome(self.outcomes(sn, action)),
            "list_contains" => Check::ListContains(self.checked_template(sn, def)?),
            "list_omits" => Check::ListOmits(self.checked_template(sn, def)?),
            _ => return None,
        })
    }

    /// `pointer`: a JSON Pointer, or a template of one.
    fn pointer(&mut self, sn: &Node, def: &Defined) -> Option<String> {
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
        Some(pointer)
    }

    /// `outcome`: how the step's operation ended, for the steps that follow one.
    fn outcomes(&mut self, sn: &Node, action: &Action) -> Vec<String> {
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
        vals
    }

    /// A predicate key goes only with a header, pointer or value.
    fn no_predicates(&mut self, m: &Map<'_>, subject: &str) {
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

    pub(super) fn predicate(
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

    pub(super) fn capture_from(&mut self, node: &Node) -> Option<CaptureFrom> {
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
    pub(super) fn status_list(&mut self, node: &Node) -> Vec<u16> {
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

    pub(super) fn status_code(&mut self, n: &Node) -> Option<u16> {
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

    pub(super) fn rule_id(&mut self, id: &str, node: &Node) -> Option<&'static str> {
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

    pub(super) fn schema(&mut self, file: &str, node: &Node) -> Option<Arc<jsonschema::Validator>> {
        let path = self.opts.schema_dir.join(file);
        let text = match crate::yaml::read_text(&path, crate::yaml::MAX_SOURCE_BYTES) {
            Ok(t) => t,
            Err(e) if !e.not_found() => {
                self.r.error(
                    node,
                    format!("cannot read schema {}: {e}", path.display()),
                    None,
                );
                return None;
            }
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
}
