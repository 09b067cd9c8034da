//! `report diff OLD NEW`: which rules and tests got worse or better between two runs (a
//! release against the last certified run). Each side is a report directory or a report.json,
//! read one result at a time; the conformance view is rebuilt from the results with the
//! side's own settings, so both sides are judged alike.
//!
//! - A rule got **worse** when it fails now and did not (was passed, not judged, not
//!   applicable, or not in the view), or was warned and fails now, or warns now and passed or
//!   had no verdict. **Better** is the reverse (failed → warned or passed, warned → passed).
//! - A test got worse when it fails (or errors) now and passed, warned or was not run before, or
//!   warns now and passed. Better is the reverse.
//! - Verdicts that appear or disappear (passed → not judged, a test that is not applicable now,
//!   tests added or removed) are listed as coverage changes; they do not count as worse.
//!
//! Exit status: 1 when something got worse, 0 otherwise, 2 on bad input.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use super::conformance::{Builder, Conformance, RuleRow, RuleVerdict};
use super::counts::Kind;
use super::json::read_report;
use super::{RunInfo, render};

/// One side of a diff: its settings, its conformance view, each test's status.
#[derive(Debug)]
pub struct Side {
    pub label: String,
    pub run: RunInfo,
    pub conformance: Conformance,
    /// The run's status as its report recorded it (absent in reports of older versions).
    pub status: Option<super::RunStatus>,
    /// Test name → how it ended and its one-line message.
    pub tests: BTreeMap<String, (Kind, String)>,
}

/// Read one side (a directory or a report.json), streaming.
pub fn load(path: &Path) -> Result<Side, String> {
    let builder: std::cell::RefCell<Option<Builder>> = Default::default();
    let mut tests = BTreeMap::new();
    let head = read_report(
        path,
        &mut |run| {
            *builder.borrow_mut() = Some(Builder::new(run));
            Ok(())
        },
        &mut |r| {
            let mut b = builder.borrow_mut();
            let b = b
                .as_mut()
                .ok_or("`results` come before `run`: not a report rpconform wrote")?;
            b.add(&r);
            tests.insert(r.name.clone(), (Kind::of(&r.status), render::message(&r)));
            Ok(())
        },
    )?;
    let conformance = builder
        .into_inner()
        .unwrap_or_else(|| Builder::new(&head.run))
        .finish();
    Ok(Side {
        label: path.display().to_string(),
        run: head.run,
        status: head.status,
        conformance,
        tests,
    })
}

#[derive(Debug, Clone)]
pub struct RuleChange {
    pub id: String,
    pub level: String,
    pub old: Option<RuleVerdict>,
    pub new: Option<RuleVerdict>,
    /// The new side's row (evidence, counts, why).
    pub row: Option<RuleRow>,
}

#[derive(Debug, Clone)]
pub struct TestChange {
    pub name: String,
    pub old: Option<Kind>,
    pub new: Option<Kind>,
    pub detail: String,
}

#[derive(Debug, Default)]
pub struct Diff {
    pub rules_worse: Vec<RuleChange>,
    pub rules_better: Vec<RuleChange>,
    pub rules_coverage: Vec<RuleChange>,
    pub tests_worse: Vec<TestChange>,
    pub tests_better: Vec<TestChange>,
    pub tests_coverage: Vec<TestChange>,
}

fn rank(v: Option<RuleVerdict>) -> Option<u8> {
    match v {
        Some(RuleVerdict::Failed) => Some(0),
        Some(RuleVerdict::Warned) => Some(1),
        Some(RuleVerdict::Passed) => Some(2),
        _ => None,
    }
}

fn test_rank(k: Option<Kind>) -> Option<u8> {
    match k {
        Some(Kind::Failed | Kind::Error) => Some(0),
        Some(Kind::Warned) => Some(1),
        Some(Kind::Passed) => Some(2),
        _ => None,
    }
}

/// Compare by rank: worse when the new rank is lower, or the new side has a failing rank
/// (0 or 1) and the old had none; better when higher (both ranked).
fn compare(old: Option<u8>, new: Option<u8>) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (old, new) {
        (Some(o), Some(n)) => n.cmp(&o),
        (None, Some(n)) if n < 2 => Less,
        _ => Equal,
    }
}

pub fn diff(old: &Side, new: &Side) -> Diff {
    let mut d = Diff::default();
    let ids: BTreeSet<&str> = old
        .conformance
        .rules
        .iter()
        .chain(&new.conformance.rules)
        .map(|r| r.id.as_str())
        .collect();
    for id in crate::rules::all()
        .iter()
        .map(|r| r.id)
        .filter(|id| ids.contains(id))
    {
        let o = old.conformance.rule(id);
        let n = new.conformance.rule(id);
        let (ov, nv) = (o.map(|r| r.verdict), n.map(|r| r.verdict));
        if ov == nv {
            continue;
        }
        let c = RuleChange {
            id: id.to_string(),
            level: n.or(o).map(|r| r.level.clone()).unwrap_or_default(),
            old: ov,
            new: nv,
            row: n.cloned(),
        };
        match compare(rank(ov), rank(nv)) {
            std::cmp::Ordering::Less => d.rules_worse.push(c),
            std::cmp::Ordering::Greater => d.rules_better.push(c),
            std::cmp::Ordering::Equal => d.rules_coverage.push(c),
        }
    }
    // Failed before warned; catalogue order within.
    d.rules_worse.sort_by_key(|c| c.new);
    let names: BTreeSet<&String> = old.tests.keys().chain(new.tests.keys()).collect();
    for name in names {
        let o = old.tests.get(name);
        let n = new.tests.get(name);
        let (ok, nk) = (o.map(|t| t.0), n.map(|t| t.0));
        if ok == nk {
            continue;
        }
        let c = TestChange {
            name: name.clone(),
            old: ok,
            new: nk,
            detail: n.or(o).map(|t| t.1.clone()).unwrap_or_default(),
        };
        match compare(test_rank(ok), test_rank(nk)) {
            std::cmp::Ordering::Less => d.tests_worse.push(c),
            std::cmp::Ordering::Greater => d.tests_better.push(c),
            std::cmp::Ordering::Equal => d.tests_coverage.push(c),
        }
    }
    d
}

impl Diff {
    pub fn worse(&self) -> bool {
        !self.rules_worse.is_empty() || !self.tests_worse.is_empty()
    }
}

/// Show at most this many tests per list.
const MAX_TESTS: usize = 50;

fn verdict(v: Option<RuleVerdict>) -> &'static str {
    v.map(RuleVerdict::label).unwrap_or("not in the view")
}

fn kind(k: Option<Kind>) -> &'static str {
    k.map(Kind::label).unwrap_or("absent")
}

fn rule_detail(c: &RuleChange) -> String {
    let Some(r) = &c.row else {
        return String::new();
    };
    match (&r.evidence, &r.why) {
        (Some(e), _) if matches!(r.verdict, RuleVerdict::Failed | RuleVerdict::Warned) => format!(
            "in {} test(s), {} check(s); first: expected {}; seen {} — in {} ({})",
            r.tests_failed,
            r.checks_failed,
            crate::http::cut(&e.expected, 160),
            crate::http::cut(&e.seen, 200),
            e.test,
            e.at
        ),
        (_, Some(w)) => crate::http::cut(w, 200),
        _ => format!("in {} test(s)", r.tests),
    }
}

fn side_line(s: &Side) -> String {
    format!(
        "{} — {}, run {}, target {}, started {}{}",
        s.label,
        s.status
            .as_ref()
            .map(|st| st.state.label())
            .unwrap_or("status not recorded"),
        s.run.run_id,
        s.run.target,
        s.run.started_at,
        if s.run.accelerated {
            format!(", accelerated ×{}", s.run.time_scale)
        } else {
            String::new()
        }
    )
}

/// The diff as text (the default) or Markdown.
pub fn render(d: &Diff, old: &Side, new: &Side, markdown: bool) -> String {
    let mut out = String::new();
    let h = |out: &mut String, title: &str| {
        if markdown {
            let _ = writeln!(out, "\n## {title}\n");
        } else {
            let _ = writeln!(out, "\n{title}:");
        }
    };
    let summary = format!(
        "worse: {} rule(s), {} test(s) · better: {} rule(s), {} test(s) · coverage changes: {} rule(s), {} test(s)",
        d.rules_worse.len(),
        d.tests_worse.len(),
        d.rules_better.len(),
        d.tests_better.len(),
        d.rules_coverage.len(),
        d.tests_coverage.len()
    );
    if markdown {
        let _ = writeln!(
            out,
            "# rpconform report diff: {}\n\n- old: {}\n- new: {}\n\n**{summary}**",
            if d.worse() {
                "❌ worse"
            } else {
                "✅ not worse"
            },
            side_line(old),
            side_line(new)
        );
    } else {
        let _ = writeln!(
            out,
            "rpconform report diff: {}\n  old: {}\n  new: {}\n{summary}",
            if d.worse() { "WORSE" } else { "not worse" },
            side_line(old),
            side_line(new)
        );
    }
    if old.run.target != new.run.target || old.run.profiles != new.run.profiles {
        let _ = writeln!(
            out,
            "{}note: the runs differ in target or declared profiles ({} [{}] vs {} [{}])",
            if markdown { "\n> " } else { "" },
            old.run.target,
            old.run.profiles.join(","),
            new.run.target,
            new.run.profiles.join(",")
        );
    }
    let rules = |out: &mut String, title: &str, list: &[RuleChange]| {
        if list.is_empty() {
            return;
        }
        h(out, &format!("{title} ({})", list.len()));
        if markdown {
            out.push_str("| rule | level | was | now | detail |\n|---|---|---|---|---|\n");
        }
        for c in list {
            let detail = rule_detail(c);
            if markdown {
                let _ = writeln!(
                    out,
                    "| **{}** | {} | {} | {} | {} |",
                    c.id,
                    c.level,
                    verdict(c.old),
                    verdict(c.new),
                    detail.replace('|', "\\|").replace('\n', " ")
                );
            } else {
                let _ = writeln!(
                    out,
                    "  {} ({})  {} → {}  {detail}",
                    c.id,
                    c.level,
                    verdict(c.old),
                    verdict(c.new)
                );
            }
        }
    };
    let tests = |out: &mut String, title: &str, list: &[TestChange]| {
        if list.is_empty() {
            return;
        }
        h(out, &format!("{title} ({})", list.len()));
        if markdown {
            out.push_str("| test | was | now | detail |\n|---|---|---|---|\n");
        }
        for c in list.iter().take(MAX_TESTS) {
            let detail = crate::http::cut(&c.detail, 200);
            if markdown {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} |",
                    c.name,
                    kind(c.old),
                    kind(c.new),
                    detail.replace('|', "\\|").replace('\n', " ")
                );
            } else {
                let _ = writeln!(
                    out,
                    "  {}  {} → {}  {detail}",
                    c.name,
                    kind(c.old),
                    kind(c.new)
                );
            }
        }
        if list.len() > MAX_TESTS {
            let _ = writeln!(out, "  …and {} more", list.len() - MAX_TESTS);
        }
    };
    rules(&mut out, "Rules that got worse", &d.rules_worse);
    tests(&mut out, "Tests that got worse", &d.tests_worse);
    rules(&mut out, "Rules that got better", &d.rules_better);
    tests(&mut out, "Tests that got better", &d.tests_better);
    rules(
        &mut out,
        "Rules judged differently (coverage)",
        &d.rules_coverage,
    );
    tests(
        &mut out,
        "Tests run differently (coverage)",
        &d.tests_coverage,
    );
    out
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
