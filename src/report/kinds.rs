//! The words every report counts in: how a test ended ([`Kind`]) and a rule's verdict for
//! the RP ([`RuleVerdict`]). Their own module, so the views that count tests and the view
//! that judges rules share them without reaching into each other.

use serde::{Deserialize, Serialize};

use super::Status;

/// How a test ended, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Passed,
    Warned,
    Failed,
    Error,
    /// The target cannot run it (a feature, a profile, a requirement it lacks), or nothing in
    /// it could be judged.
    NotApplicable,
    /// `ignore:` in the suite.
    Ignored,
    /// Skipped for another reason.
    Skipped,
    /// Cut short by the run's interruption (Ctrl-C, SIGTERM, SIGHUP).
    Interrupted,
}

impl Kind {
    pub fn of(s: &Status) -> Kind {
        match s {
            Status::Passed => Kind::Passed,
            Status::Warned => Kind::Warned,
            Status::Failed => Kind::Failed,
            Status::Error(_) => Kind::Error,
            Status::Skipped(r) if r.starts_with("not applicable") => Kind::NotApplicable,
            Status::Skipped(r) if r.starts_with("ignored") => Kind::Ignored,
            Status::Skipped(_) => Kind::Skipped,
            Status::Interrupted(_) => Kind::Interrupted,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Kind::Passed => "passed",
            Kind::Warned => "warned",
            Kind::Failed => "failed",
            Kind::Error => "error",
            Kind::NotApplicable => "not applicable",
            Kind::Ignored => "ignored",
            Kind::Skipped => "skipped",
            Kind::Interrupted => "interrupted",
        }
    }
}

/// A rule's verdict for the RP; the order is the order reports list them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleVerdict {
    Failed,
    Warned,
    Passed,
    NotJudged,
    NotApplicable,
}

impl RuleVerdict {
    pub fn label(self) -> &'static str {
        match self {
            RuleVerdict::Failed => "failed",
            RuleVerdict::Warned => "warned",
            RuleVerdict::Passed => "passed",
            RuleVerdict::NotJudged => "not judged",
            RuleVerdict::NotApplicable => "not applicable",
        }
    }

    /// A mark any font has (for HTML): ✗ ! ✓ – ∅.
    pub fn mark(self) -> &'static str {
        match self {
            RuleVerdict::Failed => "✗",
            RuleVerdict::Warned => "!",
            RuleVerdict::Passed => "✓",
            RuleVerdict::NotJudged => "–",
            RuleVerdict::NotApplicable => "∅",
        }
    }

    pub fn icon(self) -> &'static str {
        match self {
            RuleVerdict::Failed => "❌",
            RuleVerdict::Warned => "⚠️",
            RuleVerdict::Passed => "✅",
            RuleVerdict::NotJudged => "➖",
            RuleVerdict::NotApplicable => "⏭️",
        }
    }
}
