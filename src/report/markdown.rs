//! Markdown: `conformance.md` (the conformance view: failed rules first, then warnings, the
//! families, every rule) and `summary.md`, sized for a CI job summary (GitHub Actions'
//! `$GITHUB_STEP_SUMMARY`, Azure DevOps' summary tab): the verdict, the failed and warned rules
//! first, the families, then the tests that failed and one line per suite. Every test with its
//! transcript is in `report.html` and `report.json`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::cells::{esc, evidence};
use super::conformance::{Conformance, RuleRow, RuleVerdict};
use super::counts::{Counts, Kind};
use super::{RunInfo, RunStatus, ScenarioResult, Status, render};

/// What summary.md shows of one test (kept while the results stream by).
#[derive(Debug, Clone)]
pub struct TestLine {
    pub name: String,
    pub suite: String,
    pub kind: Kind,
    pub detail: String,
}

impl TestLine {
    pub fn of(r: &ScenarioResult) -> TestLine {
        let detail = match &r.status {
            Status::Skipped(why) => why.clone(),
            Status::Warned => format!("SHOULD: {}", render::failed_rules(r).join(", ")),
            _ => render::message(r),
        };
        TestLine {
            name: r.name.clone(),
            suite: r.suite.clone(),
            kind: Kind::of(&r.status),
            detail: crate::http::cut(&detail, 300),
        }
    }
}

/// Show at most this many failed tests in summary.md.
const MAX_TESTS: usize = 50;

fn settings(out: &mut String, info: &RunInfo, conf: &Conformance) {
    if let Some(subject) = &info.subject {
        let _ = writeln!(
            out,
            "- subject: **{}** (the RP build under test)",
            esc(subject)
        );
    }
    let _ = writeln!(
        out,
        "- target: `{}` ({}) · profiles: {}",
        info.target,
        info.base_url,
        conf.profiles.join(", ")
    );
    let _ = writeln!(
        out,
        "- rpconform {} · run `{}` · started {}{} · {:.1} s",
        info.rpconform_version,
        info.run_id,
        info.started_at,
        if info.ended_at.is_empty() {
            String::new()
        } else {
            format!(", ended {}", info.ended_at)
        },
        info.duration_ms as f64 / 1000.0
    );
    let _ = writeln!(out, "- {}", info.provenance());
    let _ = writeln!(
        out,
        "- time scale: {}{} · strict: {} · transcripts: {}",
        info.time_scale,
        if info.accelerated {
            " — **accelerated run: not a certification run**"
        } else {
            ""
        },
        info.strict,
        info.transcripts
    );
    if info.filtered() {
        let _ = writeln!(
            out,
            "- selection: {} {} {} {} — **not every test ran**",
            info.filters.join(" "),
            info.skip
                .iter()
                .map(|s| format!("--skip {s}"))
                .collect::<Vec<_>>()
                .join(" "),
            info.select.join(" "),
            info.partition
                .as_deref()
                .map(|p| format!("--partition {p}"))
                .unwrap_or_default()
        );
    }
    if !info.faults.is_empty() {
        let _ = writeln!(out, "- reference RP faults: {}", info.faults.join(", "));
    }
    if info.interrupted {
        let _ = writeln!(
            out,
            "- ⛔ **interrupted**: the run stopped before every test ran"
        );
    }
    if info.requests > 0 {
        let _ = writeln!(
            out,
            "- {} requests ({:.1}/s)",
            info.requests, info.request_rate
        );
    }
    if info.throttling.count > 0 {
        let _ = writeln!(
            out,
            "- the target throttled {} request(s) (429, or 503 with Retry-After): waited out in {:.1} s and retried; throttled answers are not judged",
            info.throttling.count,
            info.throttling.wait_ms as f64 / 1000.0
        );
    }
    if let Some(j) = &info.journal {
        let _ = writeln!(out, "- journal of what the run created: `{j}`");
    }
}

/// The headline: the run's status (computed once, [`RunStatus`]), with every reason.
fn verdict_line(c: &Counts, status: &RunStatus) -> String {
    let mut s = format!("{} {}", status.state.icon(), status.state.label());
    let detail = status.detail();
    if !detail.is_empty() {
        s.push_str(&format!(" — {detail}"));
    }
    if c.rules.warned > 0 {
        s.push_str(&format!(" · ⚠️ {} SHOULD rule(s) warned", c.rules.warned));
    }
    s
}

/// Items of a list a Markdown report shows before it cuts the list with a count and where the
/// rest is.
const MAX_LISTED: usize = 20;

/// At most [`MAX_LISTED`] items as `- item` lines, then how many more and where they are.
fn capped(out: &mut String, items: &[String], rest: &str) {
    for w in items.iter().take(MAX_LISTED) {
        let _ = writeln!(out, "- {w}");
    }
    if items.len() > MAX_LISTED {
        let _ = writeln!(out, "- …and {} more: {rest}", items.len() - MAX_LISTED);
    }
}

/// Certification and incompleteness, right under the headline.
fn status_block(out: &mut String, status: &RunStatus) {
    if let Some(c) = &status.certification {
        if c.certified {
            let _ = writeln!(
                out,
                "**Certified**: every MUST rule of the declared profiles judged and passed at time scale 1, nothing selected out, nothing left behind.\n"
            );
        } else {
            let _ = writeln!(out, "**Not certified**:\n");
            let why: Vec<String> = c.why_not.iter().map(|w| esc(w)).collect();
            capped(out, &why, "every one in report.json (`run_status`)");
            out.push('\n');
        }
    }
    if !status.incomplete.is_empty() && status.certification.is_none() {
        let _ = writeln!(out, "**Incomplete**:\n");
        let why: Vec<String> = status.incomplete.iter().map(|w| esc(w)).collect();
        capped(out, &why, "every one in report.json (`run_status`)");
        out.push('\n');
    }
}

/// What the run created and could not confirm deleted: the first few, then how many more and
/// where every one is (the journal, report.json).
fn left_behind(out: &mut String, info: &RunInfo) {
    if info.left_behind.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n**Left behind** ({}): resources the run created and could not confirm deleted (`rpconform cleanup --journal` deletes them):\n",
        info.left_behind.len()
    );
    let items: Vec<String> = info
        .left_behind
        .iter()
        .map(|l| format!("`{}`", l.replace('`', "'")))
        .collect();
    let rest = match &info.journal {
        Some(j) => format!(
            "every one in the journal `{}` and in report.json (`run.left_behind`)",
            j.replace('`', "'")
        ),
        None => "every one in report.json (`run.left_behind`)".into(),
    };
    capped(out, &items, &rest);
}

fn totals(out: &mut String, c: &Counts, conf: &Conformance) {
    let _ = writeln!(
        out,
        "\n**Rules: {} failed · {} warned · {} passed · {} not judged · {} not applicable** of {} in the declared profiles{}",
        c.rules.failed,
        c.rules.warned,
        c.rules.passed,
        c.rules.not_judged,
        c.rules.not_applicable,
        conf.rules.len(),
        if conf.undeclared.is_empty() {
            String::new()
        } else {
            format!(
                " ({} rules of undeclared profiles: {})",
                c.rules.undeclared,
                conf.undeclared
                    .iter()
                    .map(|u| format!("{} {}", u.profile, u.rules))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    let _ = writeln!(
        out,
        "\n**Tests: {} passed · {} warned · {} failed · {} errors · {} not applicable · {} ignored** (of {}) · {} flaky (needed `--retries`)",
        c.passed,
        c.warned,
        c.failed,
        c.errors,
        c.not_applicable,
        c.ignored,
        c.tests(),
        c.flaky
    );
}

fn broken(out: &mut String, conf: &Conformance) {
    for (v, title) in [
        (RuleVerdict::Failed, "## ❌ Failed rules"),
        (RuleVerdict::Warned, "## ⚠️ Warned rules (SHOULD)"),
    ] {
        // Spec drift has its own section: the fix is often in the spec, not the code.
        let rows: Vec<&RuleRow> = conf
            .rules
            .iter()
            .filter(|r| r.verdict == v && r.family != "SPEC")
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{title}\n\n| rule | level | tests failed | checks failed | first evidence | real traffic |\n|---|---|---|---|---|---|"
        );
        for r in rows {
            // How often the field breaks it (the replayed recordings of shipping RPs).
            let field = crate::rules::field::rate(&r.id)
                .map(|f| esc(&f.describe()))
                .unwrap_or_else(|| "—".into());
            let _ = writeln!(
                out,
                "| **{}** {} | {} | {} of {} | {} of {} | {} | {} |",
                r.id,
                esc(&crate::http::cut(&r.statement, 90)),
                r.level,
                r.tests_failed,
                r.tests,
                r.checks_failed,
                r.checks_failed + r.checks_passed,
                evidence(r),
                field
            );
        }
    }
}

fn families(out: &mut String, conf: &Conformance) {
    let _ = writeln!(
        out,
        "\n## Families\n\n| family | verdict | rules | passed | failed | warned | not judged | not applicable |\n|---|---|---|---|---|---|---|---|"
    );
    for f in &conf.families {
        let _ = writeln!(
            out,
            "| {} | {} {} | {} | {} | {} | {} | {} | {} |",
            f.family,
            f.verdict.icon(),
            f.verdict.label(),
            f.rules,
            f.passed,
            f.failed,
            f.warned,
            f.not_judged,
            f.not_applicable
        );
    }
}

/// Show at most this many not-judged rules in summary.md.
const MAX_NOT_JUDGED: usize = 30;

/// Why a rule got no verdict, as a group heading: the rule whose failure left it unjudged
/// ("because LOC-02 failed"), timing, an exemption, the selection, the interruption, no
/// exchange showing it, or (not applicable) what the target lacks.
fn cause(r: &RuleRow, failed: &[&str]) -> String {
    let why = r.why.as_deref().unwrap_or("");
    if let Some(id) = failed
        .iter()
        .find(|id| why.contains(&format!("{id} failed")))
    {
        return format!("because {id} failed");
    }
    if r.verdict == RuleVerdict::NotApplicable {
        return format!("not applicable: {}", crate::http::cut(why, 160));
    }
    let w = why.trim_start_matches("not judged ");
    if w.starts_with("(timing)") {
        "timing: the operations ended before a read could be placed inside them".into()
    } else if why.starts_with("exempted") {
        "exempted by the suite".into()
    } else if why.starts_with("skipped by filter") {
        "the selection left out the tests that judge them".into()
    } else if why.starts_with("the run was interrupted") {
        "the run was interrupted".into()
    } else if why.starts_with("no exchange showed it") {
        "no exchange showed them".into()
    } else if why.starts_with("no test checks it") {
        "no test checks them".into()
    } else {
        crate::http::cut(why, 160)
    }
}

/// The rules without a verdict, grouped by cause (causes that another rule's failure explains
/// first), each rule with its own reason.
fn not_judged(out: &mut String, conf: &Conformance) {
    let failed: Vec<&str> = conf
        .rules
        .iter()
        .filter(|r| matches!(r.verdict, RuleVerdict::Failed | RuleVerdict::Warned))
        .map(|r| r.id.as_str())
        .collect();
    let mut groups: Vec<(String, Vec<&RuleRow>)> = Vec::new();
    for r in conf.rules.iter().filter(|r| {
        matches!(
            r.verdict,
            RuleVerdict::NotJudged | RuleVerdict::NotApplicable
        )
    }) {
        let c = cause(r, &failed);
        match groups.iter_mut().find(|(k, _)| *k == c) {
            Some((_, v)) => v.push(r),
            None => groups.push((c, vec![r])),
        }
    }
    if groups.is_empty() {
        return;
    }
    // Another rule's failure first, then the causes a run can act on (timing, selection,
    // exemptions), then what no exchange or test showed, then not applicable.
    let generic = |k: &str| k.starts_with("no exchange") || k.starts_with("no test");
    groups.sort_by_key(|(k, v)| {
        (
            !k.starts_with("because "),
            k.starts_with("not applicable"),
            generic(k),
            usize::MAX - v.len(),
        )
    });
    let total: usize = groups.iter().map(|(_, v)| v.len()).sum();
    let _ = writeln!(out, "\n## ➖ Rules without a verdict ({total}), by cause\n");
    let mut shown = 0;
    for (cause, rows) in &groups {
        let _ = writeln!(out, "- **{}** ({}):", esc(cause), rows.len());
        for r in rows {
            if shown >= MAX_NOT_JUDGED {
                break;
            }
            shown += 1;
            let _ = writeln!(
                out,
                "  - `{}` {}: {}",
                r.id,
                r.verdict.label(),
                esc(&crate::http::cut(r.why.as_deref().unwrap_or(""), 240))
            );
        }
    }
    if total > shown {
        let _ = writeln!(out, "- …and {} more: see conformance.md", total - shown);
    }
}

/// `conformance.md`: the view rule by rule.
pub fn conformance_md(
    info: &RunInfo,
    counts: &Counts,
    conf: &Conformance,
    status: &RunStatus,
) -> String {
    let mut out = format!(
        "# Conformance of `{}`: {}\n\n",
        info.subject.as_deref().unwrap_or(&info.target),
        verdict_line(counts, status)
    );
    status_block(&mut out, status);
    left_behind(&mut out, info);
    settings(&mut out, info, conf);
    totals(&mut out, counts, conf);
    broken(&mut out, conf);
    super::markdown_views::spec_drift(&mut out, conf);
    super::markdown_views::front_door(&mut out, conf, info.front_door.as_deref());
    super::markdown_views::by_namespace(&mut out, conf);
    families(&mut out, conf);
    not_judged(&mut out, conf);
    let _ = writeln!(
        out,
        "\n## Every rule\n\n`tests`: tests in which a check of the rule was made; `checks`: passed / failed.\n\n| rule | level | verdict | tests | checks | why / first evidence |\n|---|---|---|---|---|---|"
    );
    for r in &conf.rules {
        let detail = match (&r.why, r.verdict) {
            (Some(w), _) => esc(&crate::http::cut(w, 300)),
            (None, RuleVerdict::Failed | RuleVerdict::Warned) => evidence(r),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} {} | {} | {} / {} | {} |",
            r.id,
            r.level,
            r.verdict.icon(),
            r.verdict.label(),
            r.tests,
            r.checks_passed,
            r.checks_failed,
            detail
        );
    }
    if !conf.undeclared.is_empty() {
        let _ = writeln!(
            out,
            "\n## Not applicable: profiles the target does not declare\n"
        );
        for u in &conf.undeclared {
            let _ = writeln!(
                out,
                "- {} ({} rules): {}",
                u.profile,
                u.rules,
                u.ids.join(", ")
            );
        }
    }
    out
}

/// `summary.md`: the verdict, rules first, then failed tests and one line per suite.
pub fn summary_md(
    info: &RunInfo,
    counts: &Counts,
    conf: &Conformance,
    status: &RunStatus,
    tests: &[TestLine],
) -> String {
    // Totals and broken rules first: CI shows the top of it (a step summary is cut at 1 MiB).
    let mut out = format!("# rpconform: {}\n", verdict_line(counts, status));
    totals(&mut out, counts, conf);
    out.push('\n');
    status_block(&mut out, status);
    broken(&mut out, conf);
    left_behind(&mut out, info);
    out.push('\n');
    settings(&mut out, info, conf);
    super::markdown_views::spec_drift(&mut out, conf);
    super::markdown_views::by_namespace(&mut out, conf);
    families(&mut out, conf);
    not_judged(&mut out, conf);
    let bad: Vec<&TestLine> = tests
        .iter()
        .filter(|t| matches!(t.kind, Kind::Failed | Kind::Error))
        .collect();
    if !bad.is_empty() {
        let _ = writeln!(
            out,
            "\n## Tests that failed on what they state\n\n| test | result | detail |\n|---|---|---|"
        );
        for t in bad.iter().take(MAX_TESTS) {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                esc(&t.name),
                if t.kind == Kind::Failed {
                    "❌ fail"
                } else {
                    "💥 error"
                },
                esc(&t.detail)
            );
        }
        if bad.len() > MAX_TESTS {
            let _ = writeln!(
                out,
                "\n…and {} more: see junit.xml, report.html.",
                bad.len() - MAX_TESTS
            );
        }
    }
    let mut suites: BTreeMap<&str, [usize; 6]> = BTreeMap::new();
    for t in tests {
        let e = suites.entry(t.suite.as_str()).or_default();
        let i = match t.kind {
            Kind::Passed => 0,
            Kind::Warned => 1,
            Kind::Failed => 2,
            Kind::Error => 3,
            Kind::NotApplicable => 4,
            Kind::Ignored | Kind::Skipped | Kind::Interrupted => 5,
        };
        e[i] += 1;
    }
    let _ = writeln!(
        out,
        "\n## Suites\n\n| suite | passed | warned | failed | errors | not applicable | ignored / skipped |\n|---|---|---|---|---|---|---|"
    );
    for (s, n) in suites {
        let _ = writeln!(
            out,
            "| {s} | {} | {} | {} | {} | {} | {} |",
            n[0], n[1], n[2], n[3], n[4], n[5]
        );
    }
    out.push_str(FOOTER);
    bounded(out)
}

const FOOTER: &str = "\nEvery rule with why it was or was not judged: `conformance.md`. Every test with its transcript: `report.html`, `report.json`.\n";

/// The most summary.md holds: CI appends it to a step summary (GitHub's holds 1 MiB for a
/// whole job) and shows it in a pull request.
pub const SUMMARY_MAX: usize = 64 * 1024;

/// summary.md within [`SUMMARY_MAX`]: cut at a line, saying so and where the rest is.
fn bounded(mut out: String) -> String {
    if out.len() <= SUMMARY_MAX {
        return out;
    }
    let note = format!(
        "\n**summary.md is cut here at {} KiB**: the whole of it is in conformance.md (every rule), junit.xml and report.html (every test).\n{FOOTER}",
        SUMMARY_MAX / 1024
    );
    let mut end = SUMMARY_MAX - note.len();
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    let end = out[..end].rfind('\n').map_or(0, |i| i + 1);
    out.truncate(end);
    out.push_str(&note);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::conformance::conformance;
    use crate::report::fixtures::{faulty_run, info};

    fn parts() -> (RunInfo, Counts, Conformance, RunStatus, Vec<TestLine>) {
        let run = faulty_run();
        let mut info = info();
        info.faults = vec!["relative-location".into()];
        let conf = conformance(&info, &run);
        let mut c = Counts::default();
        for r in &run {
            c.add(r);
        }
        c.set_rules(&conf);
        let status = RunStatus::compute(&info, &c, &conf);
        (
            info,
            c,
            conf,
            status,
            run.iter().map(TestLine::of).collect(),
        )
    }

    fn first_rule_id(md: &str) -> (usize, String) {
        let re = regex::Regex::new(r"\b[A-Z]{2,6}-\d\d\b").unwrap();
        md.lines()
            .enumerate()
            .find_map(|(i, l)| re.find(l).map(|m| (i, m.as_str().to_string())))
            .unwrap()
    }

    #[test]
    fn conformance_md_names_the_broken_rule_first() {
        let (info, c, conf, status, _) = parts();
        let md = conformance_md(&info, &c, &conf, &status);
        let (line, id) = first_rule_id(&md);
        assert_eq!(id, "ETAG-07", "{md}");
        assert!(line < 10, "{md}");
        let failed = md.split("## ❌ Failed rules").nth(1).unwrap();
        let row = failed
            .lines()
            .find(|l| l.starts_with("| **LOC-02**"))
            .unwrap();
        assert!(
            row.contains("2 of 2") && row.contains("#1 202 PUT"),
            "{row}"
        );
        assert!(md.contains("## ⚠️ Warned rules (SHOULD)"));
        assert!(md.contains("| `PUT-03` | MUST | ➖ not judged | 0 | 0 / 0 | not judged (timing)"));
        assert!(md.contains("| `SKU-01` | MUST | ⏭️ not applicable"));
        assert!(
            md.contains("- aro-hcp (8 rules): OPS-01,"),
            "undeclared profiles are named"
        );
    }

    #[test]
    fn summary_md_leads_with_rules_and_lists_only_failed_tests() {
        let (info, c, conf, status, lines) = parts();
        let md = summary_md(&info, &c, &conf, &status, &lines);
        assert!(
            md.starts_with("# rpconform: ❌ failed — 2 rules broken (ETAG-07, LOC-02)"),
            "{md}"
        );
        assert_eq!(first_rule_id(&md).1, "ETAG-07");
        assert!(md.contains("**Tests: 1 passed · 0 warned · 2 failed · 0 errors · 1 not applicable · 0 ignored** (of 4) · 0 flaky"), "{md}");
        let tests = md
            .split("## Tests that failed on what they state")
            .nth(1)
            .unwrap();
        assert!(tests.contains("`etag::if-match`"));
        assert!(
            tests.contains("`async-put::create`"),
            "a test fails on the ambient rules its exchanges broke"
        );
        assert!(md.contains("| etag | 0 | 0 | 1 | 0 | 1 | 0 |"), "{md}");
        assert!(md.contains("reference RP faults: relative-location"));
        assert!(md.contains("## ➖ Rules without a verdict"), "{md}");
        assert!(
            md.contains("- **timing: the operations ended before a read could be placed inside them** (1):\n  - `PUT-03` not judged: not judged (timing) in 2 test(s)"),
            "{md}"
        );
    }

    #[test]
    fn a_run_that_leaves_thousands_behind_keeps_summary_md_small_totals_first() {
        let (mut info, c, conf, status, mut tests) = parts();
        info.journal = Some("reports/journal-r1.jsonl".into());
        info.left_behind = (0..5000)
            .map(|i| {
                format!(
                    "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/rpcr1{i}"
                )
            })
            .collect();
        let failed = tests
            .iter()
            .find(|t| t.kind == Kind::Failed)
            .unwrap()
            .clone();
        tests.extend((0..3000).map(|i| TestLine {
            name: format!("many::t{i}"),
            suite: format!("suite{i}"),
            detail: "x".repeat(300),
            ..failed.clone()
        }));
        let md = summary_md(&info, &c, &conf, &status, &tests);
        assert!(md.len() <= SUMMARY_MAX, "{} bytes", md.len());
        let head: Vec<&str> = md.lines().take(6).collect();
        assert!(head.iter().any(|l| l.starts_with("**Rules: ")), "{head:?}");
        assert!(head.iter().any(|l| l.starts_with("**Tests: ")), "{head:?}");
        assert!(
            md.contains("- …and 4980 more: every one in the journal `reports/journal-r1.jsonl`"),
            "{md}"
        );
        let rules = md.find("## ❌ Failed rules").unwrap();
        assert!(rules < md.find("**Left behind**").unwrap());
        assert!(
            md.contains("summary.md is cut here at 64 KiB"),
            "the suites table is cut"
        );
        assert!(md.ends_with(FOOTER));
    }
}
