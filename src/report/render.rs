//! A failure rendered once, as text, for the console, JUnit and Markdown alike: the rule IDs
//! first, then expected versus seen, the suite line, and the exchanges that show it.

use crate::report::{ScenarioResult, Status};
use crate::scenario::Instance;

/// The rule IDs that failed, MUST first, for a one-line message.
pub fn failed_rules(r: &ScenarioResult) -> Vec<String> {
    let mut v: Vec<&crate::report::Verdict> =
        r.verdicts.iter().filter(|v| v.failed_outcome()).collect();
    v.sort_by_key(|x| (x.level != "MUST", x.rule.clone()));
    v.into_iter().map(|x| x.rule.clone()).collect()
}

/// `ETAG-07, LOC-02: 2 rules failed` or the runner error.
pub fn message(r: &ScenarioResult) -> String {
    let rules = failed_rules(r);
    match &r.status {
        Status::Error(e) if rules.is_empty() => {
            format!("runner error: {}", crate::http::cut(e, 300))
        }
        _ if rules.is_empty() => String::new(),
        _ => {
            let first = r
                .verdicts
                .iter()
                .find(|v| v.rule == rules[0])
                .and_then(|v| v.failures.first())
                .map(|f| format!(": expected {}; seen {}", f.expected, f.seen))
                .unwrap_or_default();
            crate::http::cut(&format!("{}{}", rules.join(", "), first), 400)
        }
    }
}

/// The full failure text: each failed rule with expected vs seen, then (optionally) the
/// redacted transcript of the exchanges the findings point at.
pub fn failure_text(r: &ScenarioResult, transcripts: bool) -> String {
    let mut out = String::new();
    if let Status::Error(e) = &r.status {
        out.push_str(&format!("runner error (could not check): {e}\n"));
    }
    let mut cited = Vec::new();
    for v in r.verdicts.iter().filter(|v| v.failed_outcome()) {
        let text = crate::rules::lookup(&v.rule).map(|x| x.rule).unwrap_or("");
        out.push_str(&format!(
            "{} ({}) failed {} of {} checks — {}\n",
            v.rule,
            v.level,
            v.failed,
            v.failed + v.passed,
            crate::http::cut(text, 160)
        ));
        for f in &v.failures {
            out.push_str(&format!(
                "    expected: {}\n    seen:     {}\n",
                f.expected, f.seen
            ));
            if let Some(at) = &f.at {
                out.push_str(&format!("    at:       {at}\n"));
            }
            if let Some(s) = &f.step {
                out.push_str(&format!("    step:     {s}\n"));
            }
            if let Some(seq) = f.exchange {
                if let Some(x) = r.exchanges.iter().find(|x| x.seq == seq) {
                    out.push_str(&format!("    exchange: {}\n", x.summary()));
                }
                if !cited.contains(&seq) {
                    cited.push(seq);
                }
            }
        }
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    if transcripts && !cited.is_empty() {
        out.push_str("\n--- exchanges (redacted) ---\n");
        for seq in cited.iter().take(10) {
            if let Some(x) = r.exchanges.iter().find(|x| x.seq == *seq) {
                out.push_str(&x.transcript(2000));
                out.push('\n');
            }
        }
    }
    out
}

/// A result for a test that was selected but not run.
pub fn skipped_result(inst: &Instance, reason: String) -> ScenarioResult {
    let sc = inst.scenario();
    ScenarioResult {
        name: inst.name.clone(),
        suite: inst.suite.name.clone(),
        suite_file: inst.suite.path.display().to_string(),
        scenario: sc.name.clone(),
        type_name: inst.type_name.clone(),
        row: inst.row.as_ref().map(|r| r.name.clone()),
        at: sc.pos.to_string(),
        status: Status::Skipped(reason),
        duration_ms: 0,
        verdicts: Vec::new(),
        polls: Vec::new(),
        notes: Vec::new(),
        exchanges: Vec::new(),
    }
}
