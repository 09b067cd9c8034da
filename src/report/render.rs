//! A failure rendered once, as text, for the console, JUnit and Markdown alike: the rule IDs
//! first, then expected versus seen, the suite line, and the exchanges that show it. An
//! exchange in one line puts its status before the (long) URL: `#12 202 PUT https://…`.

use crate::http::Exchange;
use crate::report::{ScenarioResult, Status};
use crate::scenario::Instance;

/// An exchange in one line, the status first: `#12 202 PUT https://…` (or the transport error).
pub fn exchange_line(x: &Exchange) -> String {
    let outcome = match (&x.response, &x.error) {
        (Some(r), _) => r.status.to_string(),
        (None, Some(e)) => format!("(no answer: {})", crate::http::cut(e, 120)),
        _ => "(no answer)".into(),
    };
    format!("#{} {outcome} {} {}", x.seq, x.method, x.url)
}

/// A redacted transcript headed by its one-line form.
pub fn transcript(x: &Exchange, max_body: usize) -> String {
    format!("=== {}\n{}", exchange_line(x), x.transcript(max_body))
}

/// The rules that failed in the test — those it states and those the engine judged on its
/// exchanges (ambient and flow rules) alike —, MUST first, stated before unstated.
pub fn failed_rules(r: &ScenarioResult) -> Vec<String> {
    let mut v: Vec<&crate::report::Verdict> =
        r.verdicts.iter().filter(|v| v.failed_outcome()).collect();
    v.sort_by_key(|x| {
        (
            x.level != "MUST",
            !r.stated.contains(&x.rule),
            x.rule.clone(),
        )
    });
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

/// The full failure text: each failed rule with expected vs seen (a rule the test does not
/// state is marked as judged by the engine on its exchanges), then (optionally) the redacted
/// transcript of the exchanges the findings point at.
pub fn failure_text(r: &ScenarioResult, transcripts: bool) -> String {
    let mut out = String::new();
    if let Status::Error(e) = &r.status {
        out.push_str(&format!("runner error (could not check): {e}\n"));
    }
    let mut cited = Vec::new();
    for id in failed_rules(r) {
        let Some(v) = r.verdicts.iter().find(|v| v.rule == id) else {
            continue;
        };
        let text = crate::rules::lookup(&v.rule).map(|x| x.rule).unwrap_or("");
        out.push_str(&format!(
            "{} ({}) failed {} of {} checks{} — {}\n",
            v.rule,
            v.level,
            v.failed,
            v.failed + v.passed,
            if r.stated.contains(&v.rule) {
                ""
            } else {
                " (judged by the engine on this test's exchanges)"
            },
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
                match (r.exchanges.iter().find(|x| x.seq == seq), &f.request) {
                    (Some(x), _) => out.push_str(&format!("    exchange: {}\n", exchange_line(x))),
                    (None, Some(line)) => out.push_str(&format!("    exchange: {line}\n")),
                    _ => {}
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
                out.push_str(&transcript(x, 2000));
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
        suite_file: crate::suiteset::shown_path(&inst.suite.path),
        scenario: sc.name.clone(),
        type_name: inst.type_name.clone(),
        row: inst.row.as_ref().map(|r| r.name.clone()),
        at: sc.pos.shown(),
        status: Status::Skipped(reason),
        duration_ms: 0,
        cleanup_ms: None,
        verdicts: Vec::new(),
        polls: Vec::new(),
        notes: Vec::new(),
        exchanges: Vec::new(),
        stated: crate::scenario::stated_rules(inst)
            .into_iter()
            .map(String::from)
            .collect(),
        transcript: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{exchange, faulty_run};

    #[test]
    fn exchange_lines_put_the_status_before_the_url() {
        let x = exchange(7, "PUT", "http://h/very/long/url", 202);
        assert_eq!(exchange_line(&x), "#7 202 PUT http://h/very/long/url");
        assert!(transcript(&x, 100).starts_with("=== #7 202 PUT http://h/very/long/url\n> PUT"));
    }

    #[test]
    fn failure_text_details_every_failed_rule_stated_first() {
        let run = faulty_run();
        let etag = &run[1];
        assert_eq!(failed_rules(etag), ["ETAG-07", "LOC-02", "HDR-02"]);
        assert!(
            message(etag).starts_with("ETAG-07, LOC-02, HDR-02: expected what ETAG-07 wants"),
            "{}",
            message(etag)
        );
        let t = failure_text(etag, true);
        assert!(t.contains("ETAG-07 (MUST) failed 2 of 3 checks"), "{t}");
        assert!(t.contains("    at:       suites/etag.yaml:14:11"), "{t}");
        assert!(t.contains("    exchange: #12 200 PUT"), "{t}");
        assert!(
            t.contains(
                "LOC-02 (MUST) failed 2 of 3 checks (judged by the engine on this test's exchanges)"
            ),
            "{t}"
        );
        assert!(
            t.contains("--- exchanges (redacted) ---\n=== #12 200 PUT"),
            "{t}"
        );
        let create = &run[0];
        assert_eq!(failed_rules(create), ["LOC-02"]);
        assert!(message(create).starts_with("LOC-02"));
    }
}
