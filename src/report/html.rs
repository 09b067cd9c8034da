//! `report.html`: one self-contained page (inline CSS and a little JS, no network, no external
//! asset): the verdict and settings, the conformance view (every rule of the declared profiles,
//! failed first, with why and the first evidence; the families), then every test with its
//! verdicts and its transcript, collapsed. Filters by rule, family and status hide what does not
//! match (`report.html?rule=LOC-02&status=failed` works too). Written one test at a time.
//!
//! **Bounded for large runs.** A test shows its failed and not-judged rules as chips, the
//! rules it passed as one; its transcript (and timeline) only when it is among the first
//! [`TRANSCRIPTS_PER_RULE`] tests, in report order, to break one of its failed rules (or among
//! the first [`TRANSCRIPTS_OF_ERRORS`] that could not check): one defect met by hundreds of
//! tests is shown a few times, not hundreds. Every other test says how many exchanges it made
//! and that they are in report.json and results.jsonl; the page ends with how many tests'
//! transcripts it left out. A one-fault run of every suite stays well under 5 MiB.

use std::io::{self, Write};

use super::conformance::{Conformance, RuleRow};
use super::counts::{Counts, Kind};
use super::render::{failure_text, transcript};
use super::{RunInfo, RunStatus, ScenarioResult};

const CSS: &str = include_str!("html/report.css");
const JS: &str = include_str!("html/report.js");

/// Escape text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn kebab(s: &str) -> String {
    s.replace(' ', "-")
}

fn rule_row(r: &RuleRow) -> String {
    let detail = match (&r.why, &r.evidence) {
        (Some(w), _) => esc(w),
        (None, Some(e)) => format!(
            "expected {}; seen {}<br><span class=\"muted\">in <code>{}</code> ({}){}</span>",
            esc(&e.expected),
            esc(&e.seen),
            esc(&e.test),
            esc(&e.at),
            match (&e.request, &e.transcript) {
                (Some(q), Some(t)) => format!(
                    "<details class=\"x\"><summary>{}</summary><pre>{}</pre></details>",
                    esc(q),
                    esc(t)
                ),
                (Some(q), None) => format!("<br><code>{}</code>", esc(q)),
                _ => String::new(),
            }
        ),
        _ => String::new(),
    };
    format!(
        "<tr class=\"rule v-{v}\" data-status=\"{v}\" data-rules=\"{id}\" data-families=\"{fam}\"><td><code>{id}</code> <span class=\"muted\">{stmt}</span></td><td>{lvl}</td><td>{icon} {label}</td><td class=\"n\">{tests}</td><td class=\"n\">{cp} / {cf}</td><td>{detail}</td></tr>\n",
        v = kebab(r.verdict.label()),
        id = esc(&r.id),
        fam = esc(&r.family),
        stmt = esc(&crate::http::cut(&r.statement, 140)),
        lvl = esc(&r.level),
        icon = r.verdict.mark(),
        label = r.verdict.label(),
        tests = r.tests,
        cp = r.checks_passed,
        cf = r.checks_failed,
    )
}

fn head(info: &RunInfo, counts: &Counts, conf: &Conformance, status: &RunStatus) -> String {
    let detail = status.detail();
    let verdict = format!(
        "<span class=\"run-{}\">{} {}</span>{}",
        status.state.label(),
        status.state.mark(),
        status.state.label(),
        if detail.is_empty() {
            String::new()
        } else {
            format!(" — {}", esc(&detail))
        }
    );
    let mut settings = vec![
        format!(
            "target <code>{}</code> ({}) · profiles: {}",
            esc(&info.target),
            esc(&info.base_url),
            esc(&conf.profiles.join(", "))
        ),
        format!(
            "rpconform {} · run <code>{}</code> · started {} · {:.1} s",
            esc(&info.rpconform_version),
            esc(&info.run_id),
            esc(&info.started_at),
            info.duration_ms as f64 / 1000.0
        ),
        esc(&info.provenance()),
        format!(
            "time scale {}{} · strict: {} · transcripts: {}",
            info.time_scale,
            if info.accelerated {
                " — <strong>accelerated: not a certification run</strong>"
            } else {
                ""
            },
            info.strict,
            esc(&info.transcripts)
        ),
    ];
    if info.filtered() {
        settings.push(format!(
            "selection: {} {} {} — <strong>not every test ran</strong>",
            esc(&info.filters.join(" ")),
            esc(&info.select.join(" ")),
            esc(&info.partition.clone().unwrap_or_default())
        ));
    }
    if !info.faults.is_empty() {
        settings.push(format!(
            "reference RP faults: {}",
            esc(&info.faults.join(", "))
        ));
    }
    if info.interrupted {
        settings.push("<strong>interrupted: not every test ran</strong>".into());
    }
    for l in info.left_behind.iter().take(LEFT_BEHIND_SHOWN) {
        settings.push(format!(
            "<strong>left behind</strong> (could not delete): {}",
            esc(l)
        ));
    }
    if info.left_behind.len() > LEFT_BEHIND_SHOWN {
        settings.push(format!(
            "<strong>…and {} more left behind</strong>: every one in report.json (<code>run.left_behind</code>) and the run's journal",
            info.left_behind.len() - LEFT_BEHIND_SHOWN
        ));
    }
    let r = &counts.rules;
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>rpconform — {title}</title><style>{CSS}</style></head>\n<body>\n<header><h1>rpconform: {verdict}</h1><ul class=\"settings\">{settings}</ul>\
         <p class=\"totals\">Rules: {rf} failed · {rw} warned · {rp} passed · {rn} not judged · {rna} not applicable</p>\
         <p class=\"totals\">Tests: {tp} passed · {tw} warned · {tf} failed · {te} errors · {tna} not applicable · {ti} ignored (of {tt}) · {tfl} flaky</p>{bars}</header>\n",
        title = esc(&info.target),
        settings = settings
            .iter()
            .map(|s| format!("<li>{s}</li>"))
            .collect::<String>(),
        rf = r.failed,
        rw = r.warned,
        rp = r.passed,
        rn = r.not_judged,
        rna = r.not_applicable,
        tp = counts.passed,
        tw = counts.warned,
        tf = counts.failed,
        te = counts.errors,
        tna = counts.not_applicable,
        ti = counts.ignored,
        tt = counts.tests(),
        tfl = counts.flaky,
        bars = super::timeline::families_svg(conf),
    )
}

fn filters(conf: &Conformance) -> String {
    let fams: String = conf
        .families
        .iter()
        .map(|f| format!("<option>{}</option>", esc(&f.family)))
        .collect();
    let statuses: String = [
        "failed",
        "warned",
        "passed",
        "error",
        "not-judged",
        "not-applicable",
        "ignored",
    ]
    .iter()
    .map(|s| format!("<option value=\"{s}\">{}</option>", s.replace('-', " ")))
    .collect();
    format!(
        "<div class=\"filters\"><label for=\"f-rule\">rule</label><input id=\"f-rule\" placeholder=\"LOC-02\" size=\"10\">\
         <label for=\"f-family\">family</label><select id=\"f-family\"><option value=\"\">all</option>{fams}</select>\
         <label for=\"f-status\">status</label><select id=\"f-status\"><option value=\"\">all</option>{statuses}</select>\
         <span id=\"shown\"></span></div>\n"
    )
}

/// Resources left behind named in the page's head (the rest are counted).
const LEFT_BEHIND_SHOWN: usize = 20;

/// Tests per failed rule whose transcripts the page keeps.
pub const TRANSCRIPTS_PER_RULE: usize = 3;
/// Tests that could not check (runner errors) whose transcripts the page keeps.
pub const TRANSCRIPTS_OF_ERRORS: usize = 20;

/// Writes report.html: the head and conformance view, each test, the script.
pub struct HtmlWriter<W: Write> {
    out: W,
    /// Tests whose transcripts were kept, per failed rule.
    shown: std::collections::HashMap<String, usize>,
    errors_shown: usize,
    /// Tests with exchanges whose transcripts were left out.
    left_out: usize,
}

impl<W: Write> HtmlWriter<W> {
    pub fn begin(
        mut out: W,
        info: &RunInfo,
        counts: &Counts,
        conf: &Conformance,
        status: &RunStatus,
    ) -> io::Result<Self> {
        out.write_all(head(info, counts, conf, status).as_bytes())?;
        out.write_all(b"<section id=\"conformance\"><h2>Conformance, rule by rule</h2>\n")?;
        out.write_all(filters(conf).as_bytes())?;
        out.write_all(
            b"<table id=\"conformance-table\"><thead><tr><th>rule</th><th>level</th><th>verdict</th><th>tests</th><th>checks passed / failed</th><th>why / first evidence</th></tr></thead><tbody>\n",
        )?;
        for r in &conf.rules {
            out.write_all(rule_row(r).as_bytes())?;
        }
        out.write_all(b"</tbody></table>\n<h3>Families</h3><table id=\"families\"><thead><tr><th>family</th><th>verdict</th><th>rules</th><th>passed</th><th>failed</th><th>warned</th><th>not judged</th><th>not applicable</th></tr></thead><tbody>\n")?;
        for f in &conf.families {
            writeln!(
                out,
                "<tr><td>{}</td><td>{} {}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&f.family),
                f.verdict.mark(),
                f.verdict.label(),
                f.rules,
                f.passed,
                f.failed,
                f.warned,
                f.not_judged,
                f.not_applicable
            )?;
        }
        out.write_all(b"</tbody></table></section>\n<section id=\"tests\"><h2>Tests</h2>\n")?;
        Ok(HtmlWriter {
            out,
            shown: std::collections::HashMap::new(),
            errors_shown: 0,
            left_out: 0,
        })
    }

    /// Does the page keep this test's transcript? The first few tests to break each failed
    /// rule, and the first few that could not check.
    fn keeps_transcript(&mut self, r: &ScenarioResult, kind: Kind) -> bool {
        let mut keep = false;
        for v in r.verdicts.iter().filter(|v| v.failed_outcome()) {
            let n = self.shown.entry(v.rule.clone()).or_default();
            if *n < TRANSCRIPTS_PER_RULE {
                *n += 1;
                keep = true;
            }
        }
        if kind == Kind::Error && self.errors_shown < TRANSCRIPTS_OF_ERRORS {
            self.errors_shown += 1;
            keep = true;
        }
        keep
    }

    /// One test, collapsed: its verdicts as chips, its failure text, its transcript.
    pub fn add(&mut self, r: &ScenarioResult) -> io::Result<()> {
        let kind = Kind::of(&r.status);
        let status = kebab(kind.label());
        let rules: Vec<&str> = r.verdicts.iter().map(|v| v.rule.as_str()).collect();
        let mut fams: Vec<&str> = rules.iter().map(|id| crate::rules::family_of(id)).collect();
        fams.sort_unstable();
        fams.dedup();
        let icon = match kind {
            Kind::Passed => "✓",
            Kind::Warned => "!",
            Kind::Failed | Kind::Error => "✗",
            _ => "∅",
        };
        let mut s = format!(
            "<details class=\"test\" data-status=\"{status}\" data-rules=\"{}\" data-families=\"{}\"><summary>{icon} <code>{}</code> <span class=\"k-{status}\">{}</span></summary>\n<div class=\"muted\">{} · {} ms</div>\n",
            esc(&rules.join(" ")),
            esc(&fams.join(" ")),
            esc(&r.name),
            kind.label(),
            esc(&r.at),
            r.duration_ms
        );
        if let super::Status::Skipped(why) = &r.status {
            s.push_str(&format!("<p>{}</p>\n", esc(why)));
        }
        s.push_str(&chips(r));
        let keep = self.keeps_transcript(r, kind);
        if keep && let Some(svg) = super::timeline::test_svg(r) {
            s.push_str(&svg);
            s.push('\n');
        }
        let text = failure_text(r, false);
        if !text.is_empty() {
            s.push_str(&format!("<pre>{}</pre>\n", esc(&text)));
        }
        if !keep {
            if !r.exchanges.is_empty() {
                self.left_out += 1;
                s.push_str(&format!(
                    "<p class=\"muted\">{} exchange(s): their transcripts are in report.json and results.jsonl (this page keeps those of the first {TRANSCRIPTS_PER_RULE} tests to break each rule)</p>\n",
                    r.exchanges.len()
                ));
            }
            self.out.write_all(s.as_bytes())?;
            return self.out.write_all(b"</details>\n");
        }
        if let Some(t) = &r.transcript
            && t.kept != "full"
        {
            s.push_str(&format!(
                "<p class=\"muted\">transcript: {} of {} exchanges kept ({}; <code>--transcripts all</code> keeps every one)</p>\n",
                r.exchanges.len(),
                t.total,
                esc(&t.kept)
            ));
        }
        self.out.write_all(s.as_bytes())?;
        for x in &r.exchanges {
            writeln!(
                self.out,
                "<details class=\"x\"><summary>{}</summary><pre>{}</pre></details>",
                esc(&super::render::exchange_line(x)),
                esc(&transcript(x, 4000))
            )?;
        }
        self.out.write_all(b"</details>\n")
    }

    pub fn end(mut self) -> io::Result<W> {
        if self.left_out > 0 {
            writeln!(
                self.out,
                "<p id=\"left-out\" class=\"muted\">The transcripts of {} test(s) are left out of this page (it keeps those of the first {TRANSCRIPTS_PER_RULE} tests to break each rule, and of the first {TRANSCRIPTS_OF_ERRORS} that could not check): every kept exchange is in report.json and results.jsonl.</p>",
                self.left_out
            )?;
        }
        write!(
            self.out,
            "</section>\n<script>{JS}</script>\n</body></html>\n"
        )?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// A test's verdicts as chips: each rule not passed on its own, the passed ones as one.
fn chips(r: &ScenarioResult) -> String {
    let mut s = String::from("<div class=\"chips\">");
    let passed: Vec<&str> = r
        .verdicts
        .iter()
        .filter(|v| v.outcome == "passed")
        .map(|v| v.rule.as_str())
        .collect();
    for v in r.verdicts.iter().filter(|v| v.outcome != "passed") {
        let stated = r.stated.contains(&v.rule);
        s.push_str(&format!(
            "<span class=\"chip {}\" title=\"{}{}\">{}{} {}/{}</span>",
            esc(&v.outcome),
            esc(&v.level),
            if stated {
                ", stated by the test"
            } else {
                ", judged by the engine"
            },
            esc(&v.rule),
            if stated { "" } else { " ·" },
            v.passed,
            v.failed
        ));
    }
    if !passed.is_empty() {
        s.push_str(&format!(
            "<span class=\"chip passed\" title=\"{}\">✓ {} rule(s) passed</span>",
            esc(&passed.join(" ")),
            passed.len()
        ));
    }
    s.push_str("</div>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::conformance::conformance;
    use crate::report::fixtures::{faulty_run, info};

    fn page() -> String {
        let run = faulty_run();
        let conf = conformance(&info(), &run);
        let mut c = Counts::default();
        for r in &run {
            c.add(r);
        }
        c.set_rules(&conf);
        let status = crate::report::RunStatus::compute(&info(), &c, &conf);
        let mut w = HtmlWriter::begin(Vec::new(), &info(), &c, &conf, &status).unwrap();
        for r in &run {
            w.add(r).unwrap();
        }
        String::from_utf8(w.end().unwrap()).unwrap()
    }

    #[test]
    fn the_page_is_self_contained_with_the_conformance_table_first() {
        let html = page();
        assert!(html.starts_with("<!doctype html>"));
        for external in ["http://", "https://", "src=", "<link"] {
            let outside_data = html
                .split("<section id=\"tests\">")
                .next()
                .unwrap()
                .replace("http://127.0.0.1:1", "");
            assert!(
                !outside_data.contains(external),
                "{external} in the page head"
            );
        }
        let table = html.find("id=\"conformance-table\"").unwrap();
        let tests = html.find("id=\"tests\"").unwrap();
        assert!(table < tests);
        let first_row = &html[table..];
        let row = first_row
            .find("<tr class=\"rule")
            .map(|i| &first_row[i..i + 120])
            .unwrap();
        assert!(row.contains("data-rules=\"ETAG-07\""), "{row}");
        assert!(html.contains("<option>LOC</option>"));
        assert!(html.contains("id=\"f-status\""));
    }

    #[test]
    fn tests_carry_their_filters_and_collapsed_transcripts_escaped() {
        let html = page();
        assert!(html.contains("<details class=\"test\" data-status=\"failed\" data-rules=\"LOC-02 ETAG-07 PUT-03 HDR-02\" data-families=\"ETAG HDR LOC PUT\">"));
        assert!(html.contains("data-status=\"not-applicable\""));
        assert!(html.contains("<details class=\"x\"><summary>#12 200 PUT http://"));
        assert!(html.contains("&quot;location&quot;"), "bodies are escaped");
        assert!(!html.contains("{\"location\""));
        assert_eq!(esc("<a href='x'>&"), "&lt;a href=&#39;x&#39;&gt;&amp;");
    }
}
