//! The scenario language as data: suites, scenarios, steps, expectations. Every node that can be
//! blamed carries the [`Pos`] it came from, so a finding points at the YAML that produced it.

use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

use crate::diag::Pos;
use crate::template::{JsonTemplate, Template};

#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    pub path: std::path::PathBuf,
    pub description: Option<String>,
    pub scenarios: Vec<Scenario>,
}

/// One table row: its name and values (`${row.x}`).
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub values: serde_json::Map<String, Value>,
    pub pos: Pos,
}

/// Extra conditions a scenario needs from the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requirement {
    /// May delete everything in the resource group.
    Destructive,
    /// The target declares ARM identity headers.
    Identity,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub pos: Pos,
    pub description: Option<String>,
    /// Features every type the scenario runs against must have; `None`: not per type.
    pub for_each_type: Option<Vec<String>>,
    /// Features every status monitor the scenario runs against must have.
    pub for_each_monitor: Option<Vec<String>>,
    /// The scenario needs the target's task API.
    pub needs_tasks: bool,
    pub requires: Vec<Requirement>,
    /// Ignored unless `--include-ignored`, with the reason.
    pub ignore: Option<String>,
    pub table: Vec<Row>,
    pub vars: Vec<(String, JsonTemplate, Pos)>,
    pub setup: Vec<Step>,
    pub steps: Vec<Step>,
    pub teardown: Vec<Step>,
}

impl Scenario {
    /// Every rule ID an expectation of this scenario cites, sorted, without duplicates.
    pub fn rules(&self) -> Vec<&'static str> {
        let mut ids: Vec<&'static str> = self
            .setup
            .iter()
            .chain(&self.steps)
            .chain(&self.teardown)
            .flat_map(|s| s.all_rules())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

#[derive(Debug, Clone)]
pub struct Step {
    pub name: Option<String>,
    pub pos: Pos,
    pub action: Action,
    pub condition: Option<Condition>,
    pub expect: Vec<Expectation>,
    pub capture: Vec<Capture>,
    /// Ambient rules not applied to this step's exchanges, with the reason shown in reports.
    pub exempt: Vec<(&'static str, String)>,
}

impl Step {
    /// The rules this step's expectations cite and its action implies, inner steps included.
    pub fn all_rules(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = self
            .expect
            .iter()
            .flat_map(|e| e.rules.iter().copied())
            .chain(self.implied_rules())
            .collect();
        if let Action::During(d) = &self.action {
            out.extend(d.steps.iter().flat_map(|s| s.all_rules()));
        }
        out
    }

    /// Rules that a built-in action checks by itself.
    pub fn implied_rules(&self) -> Vec<&'static str> {
        match &self.action {
            Action::Sweep(_) => vec!["RGDEL-03"],
            // Starting a monitor operation checks the initial response; its poll checks the rest.
            Action::Start(_) => vec![
                "MON-01", "MON-02", "MON-03", "MON-04", "MON-05", "MON-06", "MON-07", "MON-09",
                "MON-10",
            ],
            Action::Task(_) => vec![
                "TASK-01", "TASK-02", "TASK-03", "TASK-04", "TASK-05", "TASK-06", "TASK-07",
                "TASK-08",
            ],
            _ => Vec::new(),
        }
    }

    /// The rules a built-in action is written to exercise: narrower than
    /// [`Step::implied_rules`] (what it may show), for `--coverage min`, which must keep a test
    /// that will judge a rule, not one that only might.
    pub fn aimed_rules(&self) -> Vec<&'static str> {
        match &self.action {
            Action::Sweep(_) => vec!["RGDEL-03"],
            Action::Start(s) => {
                let mut v = vec!["MON-01", "MON-02", "MON-03", "MON-09", "MON-10"];
                if s.failing {
                    v.push("MON-05");
                } else {
                    v.extend(["MON-04", "MON-06"]);
                }
                if s.operation_id.is_some() || s.repeat.is_some() {
                    v.extend(["MON-07", "MON-08"]);
                }
                v
            }
            Action::Task(t) => {
                let mut v = vec!["TASK-01", "TASK-02", "TASK-04", "TASK-05"];
                match (t.op, t.body.as_str()) {
                    (_, "failing_processing") => v.push("TASK-03"),
                    (_, "failing_provisioning") => v.extend(["TASK-06", "TASK-07"]),
                    (TaskOp::Delete, _) => v.push("TASK-08"),
                    _ => v.extend(["TASK-03", "TASK-06"]),
                }
                v
            }
            _ => Vec::new(),
        }
    }

    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("{} (line {})", self.action.keyword(), self.pos.line),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Condition {
    /// All must hold (a list under `if:`).
    pub templates: Vec<Template>,
    /// `unless:` rather than `if:`.
    pub negate: bool,
}

#[derive(Debug, Clone)]
pub enum ApiVersion {
    /// The target's api-version, added when the URL has none.
    Default,
    /// The URL exactly as given (one the server handed out).
    AsGiven,
    /// Send no api-version.
    Omit,
    Value(Template),
}

#[derive(Debug, Clone)]
pub struct RequestSpec {
    pub method: Template,
    pub url: Template,
    pub headers: Vec<(String, Template)>,
    pub body: Option<Body>,
    pub api_version: ApiVersion,
    /// Follow `nextLink` and gather every page's `value` into `items`.
    pub all_pages: bool,
}

#[derive(Debug, Clone)]
pub enum Body {
    Json(JsonTemplate),
    /// Sent as is (for malformed-JSON tests).
    Raw(Template),
}

/// Which type a `create`/`fresh` step makes, relative to the scenario's type.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeRef {
    SelfType,
    Parent,
    Child,
    Grandchild,
    Dependency,
    Named(String),
}

impl TypeRef {
    /// As a scenario writes it: `self`, `parent`, `child`, `grandchild`, `dependency` or the
    /// type's name.
    pub fn label(&self) -> &str {
        match self {
            TypeRef::SelfType => "self",
            TypeRef::Parent => "parent",
            TypeRef::Child => "child",
            TypeRef::Grandchild => "grandchild",
            TypeRef::Dependency => "dependency",
            TypeRef::Named(n) => n,
        }
    }

    /// The type this names, relative to the scenario's type `me`, on this target.
    pub fn resolve<'t>(
        &self,
        target: &'t crate::target::Target,
        me: Option<&'t crate::target::ResourceType>,
    ) -> Option<&'t crate::target::ResourceType> {
        let t = target.types.as_slice();
        let named = |n: &str| t.iter().find(|x| x.name == n);
        let child_of = |m: &crate::target::ResourceType| {
            t.iter().find(|x| x.parent.as_deref() == Some(&m.name))
        };
        match self {
            TypeRef::SelfType => me,
            TypeRef::Parent => me.and_then(|m| m.parent.as_deref()).and_then(named),
            TypeRef::Child => me.and_then(child_of),
            TypeRef::Grandchild => me.and_then(child_of).and_then(child_of),
            TypeRef::Dependency => me.and_then(|m| m.depends_on.as_deref()).and_then(named),
            TypeRef::Named(n) => named(n),
        }
    }
}

#[derive(Debug, Clone)]
pub struct CreateSpec {
    pub bind: String,
    pub type_ref: TypeRef,
    pub parent: Option<Template>,
    pub dependency: Option<Template>,
    pub body: Option<JsonTemplate>,
    /// Wait until the resource is settled (default true).
    pub wait: bool,
}

#[derive(Debug, Clone)]
pub struct PollSpec {
    /// The step whose response started the operation.
    pub follow: String,
    pub deadline: Option<std::time::Duration>,
    /// A resource URL to GET on each poll round while the operation runs.
    pub watch: Vec<Template>,
}

/// Reads made while an operation runs: the block's expectations are judged only when reads of
/// the operation right before and right after the block both show it running.
#[derive(Debug, Clone)]
pub struct DuringSpec {
    /// The step that started the operation.
    pub follow: String,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone)]
pub struct SweepSpec {
    pub resources: Vec<Template>,
    pub seed: u64,
}

#[derive(Debug, Clone)]
pub enum Action {
    Request(RequestSpec),
    During(DuringSpec),
    Poll(PollSpec),
    Create(CreateSpec),
    Fresh(CreateSpec),
    /// GET the resource until no operation runs on it.
    Settle(Template),
    Sleep(f64),
    Sweep(SweepSpec),
    /// Check an earlier step's response again (after later steps showed the checks apply).
    Inspect(String),
    /// Start the scenario's status-monitor operation.
    Start(StartSpec),
    /// A write on the task API, followed to its end.
    Task(TaskSpec),
    /// End the test here as not applicable, with the reason (guarded by `if:`): what the
    /// scenario needs is not there on this target (failures already recorded still count).
    NotApplicable(Template),
}

#[derive(Debug, Clone)]
pub struct StartSpec {
    pub failing: bool,
    pub operation_id: Option<Template>,
    /// Send again exactly the request an earlier `start` step sent.
    pub repeat: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskOp {
    Create,
    Update,
    Delete,
}

#[derive(Debug, Clone)]
pub struct TaskSpec {
    pub op: TaskOp,
    /// `default`, `failing_processing` or `failing_provisioning`.
    pub body: String,
    /// For update and delete: the earlier `task` step that created the resource.
    pub of: Option<String>,
}

impl Action {
    pub fn keyword(&self) -> &'static str {
        match self {
            Action::Request(_) => "request",
            Action::During(_) => "during",
            Action::Poll(_) => "poll",
            Action::Create(_) => "create",
            Action::Fresh(_) => "fresh",
            Action::Settle(_) => "settle",
            Action::Sleep(_) => "sleep",
            Action::Sweep(_) => "sweep",
            Action::Inspect(_) => "inspect",
            Action::Start(_) => "start",
            Action::Task(_) => "task",
            Action::NotApplicable(_) => "not_applicable",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Predicate {
    Present,
    Absent,
    Equals(JsonTemplate),
    NotEquals(JsonTemplate),
    Matches(Arc<Regex>),
    OneOf(Vec<JsonTemplate>),
    NotOneOf(Vec<JsonTemplate>),
    /// Every field of the expected value is there with the same value (deep subset).
    Contains(JsonTemplate),
}

#[derive(Debug, Clone)]
pub enum Check {
    Status(Vec<u16>),
    /// A status from a variable (`${row.status}`): a number or a list of numbers.
    StatusFrom(Template),
    Header {
        name: String,
        predicate: Predicate,
        ignore_case: bool,
    },
    Pointer {
        pointer: String,
        predicate: Predicate,
        ignore_case: bool,
    },
    /// A value from variables (`value: ${second.monitor}`), tested like a header.
    Value {
        template: Template,
        predicate: Predicate,
        ignore_case: bool,
    },
    Schema {
        file: String,
        validator: Arc<jsonschema::Validator>,
    },
    /// A poll step's outcome: Succeeded, Failed, Canceled.
    Outcome(Vec<String>),
    /// The (all-pages) collection lists / does not list a resource id.
    ListContains(Template),
    ListOmits(Template),
}

#[derive(Debug, Clone)]
pub struct Expectation {
    /// The rules cited; with `row_rule`, every rule the table's rows name (for coverage).
    pub rules: Vec<&'static str>,
    /// `rule: ${row.x}`: each test cites the rule its row names.
    pub row_rule: Option<String>,
    /// Check only when the response status is one of these (else no verdict).
    pub when_status: Option<Vec<u16>>,
    /// `when_running_at: delete`: judge only if the operation this step reads was still
    /// running when the named step's request reached the target (see `rules::ops`).
    pub when_running_at: Option<String>,
    pub check: Check,
    pub pos: Pos,
}

#[derive(Debug, Clone)]
pub enum CaptureFrom {
    Header(String),
    Pointer(String),
    Status,
}

#[derive(Debug, Clone)]
pub struct Capture {
    pub var: String,
    pub from: CaptureFrom,
    pub pos: Pos,
}
