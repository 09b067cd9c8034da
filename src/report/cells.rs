//! Markdown table cells both Markdown views write: escaped text, a rule's first evidence.

use super::conformance::RuleRow;

/// Text that stays in one table cell.
pub(super) fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A rule's first evidence, as one cell: what was expected and seen, where.
pub(super) fn evidence(r: &RuleRow) -> String {
    match &r.evidence {
        Some(e) => {
            let mut s = format!(
                "expected {}; seen {} — in `{}` ({})",
                crate::http::cut(&e.expected, 160),
                crate::http::cut(&e.seen, 200),
                e.test,
                e.at
            );
            if let Some(q) = &e.request {
                s.push_str(&format!(" · `{}`", crate::http::cut(q, 200)));
            }
            esc(&s)
        }
        None => String::new(),
    }
}
