//! The results a run hands to reporters: one [`ScenarioResult`] per test plus [`RunInfo`].
//! Reporters (JUnit, JSON, Markdown, console) read only these.

use serde::{Deserialize, Serialize};

use crate::http::Exchange;
use crate::rules::{Outcome, RuleTally};

/// How one test ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", content = "detail", rename_all = "kebab-case")]
pub enum Status {
    Passed,
    /// Only SHOULD rules failed (and the run is not `--strict`).
    Warned,
    /// A rule failed: the target broke the contract.
    Failed,
    /// The runner could not check: transport failure, setup failure, deadline, bad variable.
    Error(String),
    /// Not applicable to this target, or ignored; with the reason.
    Skipped(String),
    /// The run was interrupted (Ctrl-C, SIGTERM, SIGHUP) before the test could end; where.
    Interrupted(String),
}

/// One poll loop's history: attempts are history, never failures of their own.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PollRecord {
    pub step: String,
    pub via: String,
    pub attempts: u32,
    pub elapsed_ms: u64,
    pub outcome: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// `suite::scenario[::type][::row]`.
    pub name: String,
    pub suite: String,
    pub suite_file: String,
    pub scenario: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// file:line:col of the scenario.
    pub at: String,
    #[serde(flatten)]
    pub status: Status,
    /// The test's own time: its steps, not its cleanup.
    pub duration_ms: u64,
    /// Its cleanup's time (its resources' DELETEs, confirmed), after `duration_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_ms: Option<u64>,
    #[serde(default)]
    pub verdicts: Vec<Verdict>,
    #[serde(default)]
    pub polls: Vec<PollRecord>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub exchanges: Vec<Exchange>,
    /// The rules this test states (its expectations, its actions' own rules, its table row's
    /// rule): the test passes or fails on these alone; the other rules its exchanges showed
    /// (ambient and flow rules the engine judges by itself) are reported rule by rule in the
    /// conformance view.
    #[serde(default)]
    pub stated: Vec<String>,
    /// Which exchanges the report keeps (`full`, `sample`, `cited`, `none`), and how many the
    /// test made; absent: all of them (a result not yet through [`super::ResultsWriter`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Transcript>,
}

/// What a report kept of a test's exchanges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    /// `full`, `sample` (the first few, and those a finding cites), `cited` (only those a
    /// finding cites) or `none`.
    pub kept: String,
    /// How many exchanges the test made.
    pub total: usize,
}

/// All checks of one rule in one test, as reports hold them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Verdict {
    pub rule: String,
    /// MUST, SHOULD or MAY.
    pub level: String,
    /// passed, failed or exempt.
    pub outcome: String,
    pub passed: u32,
    pub failed: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FindingOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exempt_reason: Option<String>,
    /// Why the rule applied but could not be decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindingOut {
    pub expected: String,
    pub seen: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<u64>,
    /// How many times the same failure was seen (in one step), and the last exchange showing it.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_exchange: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The exchange that shows it, in one line (status before the URL), kept even when the
    /// transcript is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// The note that marks a test flaky: it needed `--retries` (every attempt is on its exchanges).
pub const FLAKY_NOTE: &str = "flaky: ";

impl ScenarioResult {
    /// Did a request of this test need a retry (`--retries`)?
    pub fn flaky(&self) -> bool {
        self.notes.iter().any(|n| n.starts_with(FLAKY_NOTE))
    }
}

impl Verdict {
    pub fn failed_outcome(&self) -> bool {
        self.outcome == "failed"
    }
}

/// The run's settings, recorded in every report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunInfo {
    pub rpconform_version: String,
    pub run_id: String,
    pub target: String,
    pub base_url: String,
    pub time_scale: f64,
    /// True when the time scale is not 1: not a certification run.
    pub accelerated: bool,
    pub strict: bool,
    pub filters: Vec<String>,
    pub skip: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    pub started_at: String,
    pub duration_ms: u64,
    /// Resources the run created and could not delete.
    #[serde(default)]
    pub left_behind: Vec<String>,
    #[serde(default)]
    pub faults: Vec<String>,
    /// The rule profiles the target declares (empty in reports of older versions: all).
    #[serde(default)]
    pub profiles: Vec<String>,
    /// Rules of the declared profiles whose subject the target itself never declares (no
    /// ETag-capable type, no proxy type, a spec that marks no secret), each with why: not
    /// applicable to it whatever the run sees (`rules::undeclared_subjects`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub not_applicable: std::collections::BTreeMap<String, String>,
    /// Rule selection (`--rule`, `--family`, `--profile`), as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub select: Vec<String>,
    /// The transcript policy: `all`, `failures` or `none`.
    #[serde(default = "failures")]
    pub transcripts: String,
    /// The run was interrupted (Ctrl-C / SIGTERM) before every test ran.
    #[serde(default)]
    pub interrupted: bool,
    /// Requests sent (throttled attempts included) and their rate over the run, per second.
    #[serde(default)]
    pub requests: u64,
    #[serde(default)]
    pub request_rate: f64,
    /// Answers that were the target throttling (429, 503 with Retry-After), waited out and
    /// retried; never judged by the rules.
    #[serde(default)]
    pub throttling: Throttling,
    /// The run's journal of what it created (for `rpconform cleanup --journal`); a merged
    /// report lists every shard's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub journals: Vec<String>,
    /// The run was asked to certify the RP (`--certify`).
    #[serde(default)]
    pub certify: bool,
    /// Tests the selection (name filters, `--skip`, `--rule`, a partition) left out.
    #[serde(default)]
    pub selected_out: usize,
    /// `--fail-fast` stopped scheduling after this test failed (or errored)...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_after: Option<String>,
    /// ...and this many tests were never started (reported skipped, "not run: ...").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_run: usize,
    /// What went wrong with the run itself (reports or journal not written): each fails it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// Provenance: the suite set (its hash, as `--version` shows it), the rule catalogue's
    /// fingerprint, the target file (its path and a hash of its redacted text), when it ended.
    #[serde(default)]
    pub suite_set: String,
    /// The settings besides the target's that change verdicts (the operation deadline, the
    /// request timeout, retries, the body cap, whether foreign links are read; for the
    /// embedded RP its operation duration, read gate and Retry-After), by name: shards with
    /// different ones are not one run.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub options: std::collections::BTreeMap<String, String>,
    /// The public host under which the run played ARM's front door in front of the RP's own
    /// endpoint (none: the run went through ARM, or `front_door: none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub front_door: Option<String>,
    /// The RP build the run was of (`--subject NAME@VERSION`, or the target's `subject:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default)]
    pub catalogue: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_hash: Option<String>,
    #[serde(default)]
    pub ended_at: String,
    /// The reference RP's variant knobs (embedded target).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// A merged report: the shards it was merged from (their partitions, or run ids), and the
    /// partitions of the set that are missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_partitions: Vec<String>,
    /// PUTs the run sent (its requests are `requests`).
    #[serde(default)]
    pub puts: u64,
    /// What the plan said the run would send, before it sent anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<Planned>,
    /// `--coverage min`: what it kept and which tests stood in for which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<crate::plan::Coverage>,
    /// Where the target's declarations are in the user's files (each type's key in the target
    /// file, each operation of its `openapi:` spec): SARIF places each defect there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<super::stable::Site>,
}

/// A run's plan, as its reports set it against what the run sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    pub tests: u64,
    pub puts: u64,
    pub requests: u64,
    pub estimated_seconds: f64,
}

impl Planned {
    pub fn of(p: &crate::plan::Plan) -> Planned {
        Planned {
            tests: p.tests,
            puts: p.puts,
            requests: p.requests,
            estimated_seconds: p.estimated_seconds,
        }
    }
}

/// How much the target throttled the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Throttling {
    pub count: u64,
    pub wait_ms: u64,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn failures() -> String {
    "failures".into()
}

impl RunInfo {
    /// Did a filter, a rule selection or a partition leave tests out of this run?
    pub fn filtered(&self) -> bool {
        !self.filters.is_empty()
            || !self.skip.is_empty()
            || !self.select.is_empty()
            || self.partition.is_some()
    }

    /// What a reader needs to reproduce the run, in one line: suite set, catalogue, target
    /// file and its hash (`suite set 6fe8f7b9e306 · catalogue 1a2b3c4d5e6f (134 rules) · target
    /// file ci/target.yaml (redacted text 0a1b2c3d4e5f)`).
    pub fn provenance(&self) -> String {
        let mut parts = Vec::new();
        if let Some(subj) = &self.subject {
            parts.push(format!("subject {subj}"));
        }
        if let Some(host) = &self.front_door {
            parts.push(format!("ARM's front door played as {host}"));
        }
        if !self.suite_set.is_empty() {
            parts.push(format!("suite set {}", self.suite_set));
        }
        if !self.catalogue.is_empty() {
            parts.push(format!("catalogue {}", self.catalogue));
        }
        match (&self.target_file, &self.target_hash) {
            (Some(f), Some(h)) => parts.push(format!("target file {f} (redacted text {h})")),
            (Some(f), None) => parts.push(format!("target file {f}")),
            (None, Some(h)) => parts.push(format!("target {h}")),
            (None, None) => {}
        }
        if !self.variants.is_empty() {
            parts.push(format!("variants {}", self.variants.join(", ")));
        }
        if !self.merged_from.is_empty() {
            parts.push(format!("merged from {}", self.merged_from.join(", ")));
        }
        if parts.is_empty() {
            "provenance not recorded (a report of an older version)".into()
        } else {
            parts.join(" · ")
        }
    }

    /// The run's id, and every shard's of a merged report (`merged_from` names them as
    /// `… run ID)`): names holding one are the run's own, taken out of stable text.
    pub fn run_ids(&self) -> Vec<String> {
        let mut ids = vec![self.run_id.clone()];
        for m in &self.merged_from {
            if let Some(id) = m
                .strip_suffix(')')
                .and_then(|x| x.rsplit_once(", run "))
                .map(|(_, id)| id.to_string())
                && !ids.contains(&id)
            {
                ids.push(id);
            }
        }
        ids.retain(|id| !id.is_empty());
        ids
    }

    /// The declared profiles (all of them for a report that does not say).
    pub fn declared(&self) -> Vec<crate::rules::Profile> {
        let ps: Vec<crate::rules::Profile> = self
            .profiles
            .iter()
            .filter_map(|p| crate::rules::Profile::from_name(p))
            .collect();
        if ps.is_empty() {
            crate::rules::Profile::ALL.to_vec()
        } else {
            ps
        }
    }
}

/// Turn a scenario's tallies into report verdicts.
pub fn verdicts(t: &[RuleTally]) -> Vec<Verdict> {
    t.iter()
        .map(|x| Verdict {
            rule: x.rule.to_string(),
            level: x.level.as_str().to_string(),
            outcome: match x.outcome {
                Outcome::Passed => "passed",
                Outcome::Failed => "failed",
                Outcome::Exempt => "exempt",
                Outcome::NotJudged => "not-judged",
            }
            .to_string(),
            passed: x.passed,
            failed: x.failed,
            failures: x
                .failures
                .iter()
                .map(|f| FindingOut {
                    expected: f.expected.clone(),
                    seen: f.seen.clone(),
                    exchange: f.exchange,
                    count: f.count,
                    last_exchange: f.last_exchange,
                    at: f.at.clone(),
                    step: f.step.clone(),
                    request: None,
                })
                .collect(),
            exempt_reason: x.exempt_reason.clone(),
            not_judged: x.not_judged.clone(),
        })
        .collect()
}
