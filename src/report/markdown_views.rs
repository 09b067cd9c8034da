//! The views conformance.md and summary.md add apart from the rule tables: spec drift (the
//! SPEC rules, with the spec file and line) and recorded traffic by provider namespace.

use std::fmt::Write;

use super::cells::{esc, evidence};
use super::conformance::{Conformance, RuleRow, RuleVerdict};

/// The SPEC rules the RP broke: where it does not do what its own OpenAPI spec says, with the
/// spec file and line of the operation (the fix may be the spec's).
pub(super) fn spec_drift(out: &mut String, conf: &Conformance) {
    let rows: Vec<&RuleRow> = conf
        .rules
        .iter()
        .filter(|r| r.family == "SPEC")
        .filter(|r| matches!(r.verdict, RuleVerdict::Failed | RuleVerdict::Warned))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## Spec drift: where the RP breaks its own OpenAPI spec\n\nGenerated SDKs, the CLI and the portal are built from the spec: each row is an answer they will misread. The fix may be in the spec (the operation's file and line) as often as in the code.\n\n| rule | level | verdict | tests failed | checks failed | spec | first evidence |\n|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let spec = r
            .evidence
            .as_ref()
            .map(|e| format!("`{}`", e.at))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| **{}** {} | {} | {} {} | {} of {} | {} of {} | {} | {} |",
            r.id,
            esc(&crate::http::cut(&r.statement, 90)),
            r.level,
            r.verdict.icon(),
            r.verdict.label(),
            r.tests_failed,
            r.tests,
            r.checks_failed,
            r.checks_failed + r.checks_passed,
            spec,
            evidence(r)
        );
    }
}

/// The run played ARM's front door: the RP as ARM calls it, every FD rule with its verdict.
pub(super) fn front_door(out: &mut String, conf: &Conformance, host: Option<&str>) {
    let rows: Vec<&RuleRow> = conf.rules.iter().filter(|r| r.family == "FD").collect();
    let Some(host) = host.filter(|_| !rows.is_empty()) else {
        return;
    };
    let _ = writeln!(
        out,
        "\n## ARM's front door, played as `{host}`\n\nEvery request went to the RP as ARM sends it (the Referer on `{host}`, the caller's headers, x-ms-arm-resource-system-data on writes); what ARM answers itself was never the RP's.\n\n| rule | level | verdict | tests | checks | why / first evidence |\n|---|---|---|---|---|---|"
    );
    for r in rows {
        let detail = match (&r.why, r.verdict) {
            (Some(w), _) => esc(&crate::http::cut(w, 200)),
            (None, RuleVerdict::Failed | RuleVerdict::Warned) => evidence(r),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "| **{}** {} | {} | {} {} | {} | {} / {} | {} |",
            r.id,
            esc(&crate::http::cut(&r.statement, 90)),
            r.level,
            r.verdict.icon(),
            r.verdict.label(),
            r.tests,
            r.checks_passed,
            r.checks_failed,
            detail
        );
    }
}

/// Recorded traffic: each provider namespace's broken rules apart, ranked by severity, then
/// root cause, then breadth (recordings), never by volume.
pub(super) fn by_namespace(out: &mut String, conf: &Conformance) {
    if conf.namespaces.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n## By provider namespace\n\nEach namespace's broken rules, apart from every other's: MUST first, then the rules whose failure left others unjudged (root causes), then by how many recordings show it, never by how many checks failed."
    );
    for ns in &conf.namespaces {
        let n = |v: RuleVerdict| ns.rules.iter().filter(|r| r.verdict == v).count();
        let _ = writeln!(
            out,
            "\n### `{}`: {} MUST rule(s) broken, {} SHOULD warned, in {} recording(s)\n\n| # | rule | level | recordings | root of | first evidence |\n|---|---|---|---|---|---|",
            esc(&ns.namespace),
            n(RuleVerdict::Failed),
            n(RuleVerdict::Warned),
            ns.recordings
        );
        for (i, r) in ns.rules.iter().enumerate() {
            let mut ev = format!(
                "expected {}; seen {} — in `{}`",
                crate::http::cut(&r.expected, 160),
                crate::http::cut(&r.seen, 240),
                r.test
            );
            if let Some(req) = &r.request {
                ev.push_str(&format!(" · `{req}`"));
            }
            let _ = writeln!(
                out,
                "| {} | {} `{}` | {} | {} | {} | {} |",
                i + 1,
                r.verdict.icon(),
                r.rule,
                r.level,
                r.recordings,
                if r.root_of > 0 {
                    format!("{} check(s) left unjudged", r.root_of)
                } else {
                    "—".into()
                },
                esc(&ev)
            );
        }
    }
}
