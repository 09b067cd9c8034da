//! Target files: where the RP under test lives and what it serves.
//!
//! A [`Target`] holds the base URL, auth, subscription and resource group, the rule profiles
//! the RP implements, its namespaces and api-versions, and the resource types under test:
//! their scope (resource group, subscription, location, tenant, extension) and nesting, fixed
//! names, per-operation long-running patterns ([`Lro`]), bodies for each purpose, actions and
//! features (ETags, provisioningState, propagation, SKUs). Data-plane status monitors and a task
//! API are declared beside them (`surfaces`). Suites refer only to these declarations, never to
//! names of a particular RP, so one suite tests any RP.
//!
//! `parse` reads the YAML file with positions (every mistake positioned); `address` builds URLs
//! and tells which declaration a URL addresses; `embedded` is the file of the reference RP.

mod address;
mod client;
mod embedded;
mod guard;
mod parse;
mod surfaces;

pub use address::{Addressed, is_guid};
pub use client::Connection;
pub use embedded::{embedded_specs, embedded_target_yaml, embedded_target_yaml_for};
pub use guard::Guard;
pub use parse::{load_target, parse_target};
pub use surfaces::{MONITOR_FEATURES, Monitor, MonitorLink, RequestDecl, TaskApi};

use serde_json::{Value, json};
use std::time::Duration;

use crate::lro::FinalStateVia;
use crate::rules::catalogue::Profile;

/// How the runner gets a bearer token.
#[derive(Debug, Clone, PartialEq)]
pub enum Auth {
    None,
    /// Token in this environment variable.
    BearerEnv(String),
    /// Token printed by this shell command; refreshed after `refresh`; the command is
    /// killed (with its process group) after `timeout`.
    Command {
        command: String,
        refresh: Duration,
        timeout: Duration,
    },
    /// Token in this file (kept fresh by someone else); read again when it changes and at
    /// least every `refresh`.
    TokenFile {
        path: std::path::PathBuf,
        refresh: Duration,
    },
}

/// Whether the run may delete the resource group and what it deletes in it.
#[derive(Debug, Clone)]
pub struct ResourceGroup {
    pub name: String,
    /// The run creates the group (and deletes it at the end); destructive scenarios may run.
    pub create: bool,
    /// The target owner says the group may be emptied by destructive scenarios.
    pub disposable: bool,
    pub api_version: String,
}

/// ARM's split between tracked (location, tags) and proxy resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tracked,
    Proxy,
}

/// Where a top-level type lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// `/subscriptions/{s}/resourceGroups/{rg}/providers/{ns}/{type}/{name}`
    ResourceGroup,
    /// `/subscriptions/{s}/providers/{ns}/{type}/{name}`
    Subscription,
    /// `/subscriptions/{s}/providers/{ns}/locations/{location}/{type}/{name}`
    Location,
    /// `/providers/{ns}/{type}/{name}`
    Tenant,
    /// `{resource id}/providers/{ns}/{type}/{name}`
    Extension(Extends),
}

/// What an extension resource extends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extends {
    /// A resource of another declared type, created for the test.
    Type(String),
    /// A fixed resource id that exists already.
    Id(String),
}

impl Scope {
    pub fn name(&self) -> &'static str {
        match self {
            Scope::ResourceGroup => "resource_group",
            Scope::Subscription => "subscription",
            Scope::Location => "location",
            Scope::Tenant => "tenant",
            Scope::Extension(_) => "extension",
        }
    }
}

/// How one operation runs, as the RP's API description states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpPattern {
    /// Completes in its answer.
    Sync,
    /// May run asynchronously by any ARM pattern, or finish at once (`async: true`).
    Any,
    /// 200/201 with a non-terminal provisioningState; the client reads the resource.
    ProvisioningState,
    /// An operation resource named by Azure-AsyncOperation.
    AzureAsyncOperation,
    /// 202 with Location.
    Location,
    /// Both headers.
    AzureAsyncOperationAndLocation,
}

impl OpPattern {
    pub const NAMES: &'static [&'static str] = &[
        "sync",
        "any",
        "provisioning-state",
        "azure-async-operation",
        "location",
        "azure-async-operation+location",
    ];

    pub fn from_name(s: &str) -> Option<OpPattern> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "sync" => OpPattern::Sync,
            "any" | "async" => OpPattern::Any,
            "provisioning-state" => OpPattern::ProvisioningState,
            "azure-async-operation" => OpPattern::AzureAsyncOperation,
            "location" => OpPattern::Location,
            "azure-async-operation+location" | "location+azure-async-operation" => {
                OpPattern::AzureAsyncOperationAndLocation
            }
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            OpPattern::Sync => "sync",
            OpPattern::Any => "any",
            OpPattern::ProvisioningState => "provisioning-state",
            OpPattern::AzureAsyncOperation => "azure-async-operation",
            OpPattern::Location => "location",
            OpPattern::AzureAsyncOperationAndLocation => "azure-async-operation+location",
        }
    }

    /// May the operation run asynchronously?
    pub fn is_async(self) -> bool {
        self != OpPattern::Sync
    }
}

/// One operation's declared pattern and where its final result is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpDecl {
    pub pattern: OpPattern,
    pub final_state_via: Option<FinalStateVia>,
}

impl OpDecl {
    pub fn of(pattern: OpPattern) -> OpDecl {
        OpDecl {
            pattern,
            final_state_via: None,
        }
    }
}

/// The declared patterns of a type's write operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lro {
    pub put: OpDecl,
    pub patch: OpDecl,
    pub delete: OpDecl,
}

impl Lro {
    pub fn all(p: OpPattern) -> Lro {
        Lro {
            put: OpDecl::of(p),
            patch: OpDecl::of(p),
            delete: OpDecl::of(p),
        }
    }

    pub fn for_method(&self, method: &str) -> Option<OpDecl> {
        match method {
            "PUT" => Some(self.put),
            "PATCH" => Some(self.patch),
            "DELETE" => Some(self.delete),
            _ => None,
        }
    }

    pub fn any_async(&self) -> bool {
        self.put.pattern.is_async()
            || self.patch.pattern.is_async()
            || self.delete.pattern.is_async()
    }
}

#[derive(Debug, Clone)]
pub struct Action {
    pub name: String,
    pub lro: OpDecl,
    pub body: Value,
    /// The answer a successful synchronous call gives: status and, optionally, a JSON Pointer
    /// that must exist in the body.
    pub result_status: Vec<u16>,
    pub result_pointer: Option<String>,
}

impl Action {
    pub fn long_running(&self) -> bool {
        self.lro.pattern.is_async()
    }
}

/// A resource type under test.
#[derive(Debug, Clone)]
pub struct ResourceType {
    /// The key in the target file (`widgets`).
    pub name: String,
    /// The URL segment after the provider or parent (`widgets`).
    pub segment: String,
    pub namespace: String,
    pub api_version: String,
    /// Where a top-level type lives (nested types live under their parent).
    pub scope: Scope,
    pub parent: Option<String>,
    pub depends_on: Option<String>,
    pub kind: Kind,
    /// The only names the RP accepts (a singleton has one); None: any fresh name.
    pub names: Option<Vec<String>>,
    /// The RP accepts DELETE on it (false for ARM singletons unless declared otherwise); a
    /// resource that cannot be deleted is restored at the end of the run instead.
    pub deletable: bool,
    pub etag: bool,
    pub provisioning_state: bool,
    pub propagation: bool,
    pub skus: bool,
    pub skus_empty: bool,
    pub lro: Lro,
    pub create_body: Value,
    pub update_body: Option<Value>,
    pub replace_body: Option<Value>,
    pub tags_body: Option<Value>,
    pub failing_body: Option<Value>,
    /// A PATCH body the RP accepts and whose update then fails (the operation ends Failed).
    pub failing_update_body: Option<Value>,
    pub invalid_bodies: Vec<Value>,
    /// Top-level fields the RP echoes back as sent (None: not declared).
    pub echoes: Option<Vec<String>>,
    pub actions: Vec<Action>,
    pub cost: TypeCost,
    /// The line of its key in the target file (0: not from a file), where reports point.
    pub line: usize,
}

/// What a run's plan assumes of a type (`cost:` in the target file).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TypeCost {
    /// How long a write's operation runs; else the plan's default.
    pub operation_seconds: Option<f64>,
    /// What one resource costs per hour, for resource-minute prices.
    pub price_per_hour: Option<f64>,
}

/// A namespace the target serves, with its api-version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    pub name: String,
    pub api_version: String,
}

/// Longest operation deadline a target file, a suite or `--deadline` may give: a week. Waits
/// are added to clock readings; a bound keeps every sum far from overflow.
pub const MAX_DEADLINE_SECS: u64 = 7 * 86_400;
/// [`MAX_DEADLINE_SECS`] for people.
pub const MAX_DEADLINE_TEXT: &str = "a week";

/// A parsed target file.
#[derive(Debug, Clone)]
pub struct Target {
    /// Shown in reports: `embedded` or the file path.
    pub label: String,
    pub base_url: url::Url,
    pub auth: Auth,
    pub secret_headers: Vec<String>,
    pub headers: Vec<(String, String)>,
    pub subscription: String,
    pub resource_group: ResourceGroup,
    /// The rule profiles the RP implements (rules of others are not applicable).
    pub profiles: Vec<Profile>,
    /// Profiles implied by what the target declares (`monitors:` → azure-core-lro, `tasks:` →
    /// task-api) when it names none, with why, for the run and `check` to say.
    pub implied_profiles: Vec<String>,
    /// The file names its `profiles:` (the implied ones are then added to them).
    pub profiles_declared: bool,
    /// The default namespace.
    pub namespace: String,
    /// The default api-version.
    pub api_version: String,
    /// Every namespace served, the default one first.
    pub namespaces: Vec<Namespace>,
    pub location: String,
    pub deadline: Duration,
    pub identity: Option<(String, String)>,
    pub types: Vec<ResourceType>,
    pub monitors: Vec<Monitor>,
    pub tasks: Option<TaskApi>,
    /// Path prefixes of the ARM surface that are not shaped like ARM resource ids (a test
    /// double's `/lro/...` routes): requests there get the ARM rules.
    pub arm_paths: Vec<String>,
    /// The RP's own OpenAPI spec (`openapi:`, `--openapi`, the embedded RP's): the SPEC rules
    /// judge answers against it.
    pub specs: Option<std::sync::Arc<crate::spec::Specs>>,
    /// What a certificate certifies: the RP build under test (`subject: contoso-rp@1.4.2`;
    /// `--subject` wins).
    pub subject: Option<String>,
    /// The public host under which the run plays ARM's part in front of the endpoint
    /// (`front_door:`; by default for an endpoint that is not an ARM host); `None` when the
    /// endpoint is ARM (or the target says `none`).
    pub front_door: Option<String>,
}

/// Is `s` a subject `NAME@VERSION` (the RP build a report is of)? Both parts non-empty, no
/// spaces or control characters, at most 200 characters.
pub fn check_subject(s: &str) -> Result<(), String> {
    let ok_part = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-+/:~".contains(c))
    };
    match s.rsplit_once('@') {
        Some((name, version)) if s.len() <= 200 && ok_part(name) && ok_part(version) => Ok(()),
        _ => Err(format!(
            "subject `{}` is not NAME@VERSION (letters, digits and ._-+/:~ on each side of one `@`)",
            s.chars().take(80).collect::<String>()
        )),
    }
}

/// Features a scenario can require of a type (`for_each_type: [etag, child]`).
pub const TYPE_FEATURES: &[&str] = &[
    "any",
    "tracked",
    "proxy",
    "async",
    "async_put",
    "async_patch",
    "async_delete",
    "etag",
    "provisioning_state",
    "propagation",
    "skus",
    "skus_empty",
    "actions",
    "long_running_action",
    "top_level",
    "child",
    "grandchild",
    "has_children",
    "dependant",
    "failing_body",
    "failing_update_body",
    "invalid_bodies",
    "update_body",
    "tags_body",
    "fresh_names",
    "fixed_names",
    "deletable",
    "resource_group_scope",
];

impl ResourceType {
    pub fn has(&self, feature: &str, target: &Target) -> bool {
        match feature {
            "any" => true,
            "tracked" => self.kind == Kind::Tracked,
            "proxy" => self.kind == Kind::Proxy,
            "async" => self.lro.any_async(),
            "async_put" => self.lro.put.pattern.is_async(),
            "async_patch" => self.lro.patch.pattern.is_async(),
            "async_delete" => self.lro.delete.pattern.is_async(),
            "etag" => self.etag,
            "provisioning_state" => self.provisioning_state,
            "propagation" => self.propagation,
            "skus" => self.skus,
            "skus_empty" => self.skus_empty,
            "actions" => !self.actions.is_empty(),
            "long_running_action" => self.actions.iter().any(Action::long_running),
            "top_level" => self.parent.is_none(),
            "child" => self.parent.is_some(),
            "grandchild" => self
                .parent
                .as_deref()
                .and_then(|p| target.type_named(p))
                .is_some_and(|p| p.parent.is_some()),
            "has_children" => target
                .types
                .iter()
                .any(|t| t.parent.as_deref() == Some(&self.name)),
            "dependant" => self.depends_on.is_some(),
            "failing_body" => self.failing_body.is_some(),
            "failing_update_body" => self.failing_update_body.is_some(),
            "invalid_bodies" => !self.invalid_bodies.is_empty(),
            "update_body" => self.update_body.is_some(),
            "tags_body" => self.tags_body.is_some() || self.kind == Kind::Tracked,
            "fresh_names" => self.names.is_none(),
            "fixed_names" => self.names.is_some(),
            "deletable" => self.deletable,
            "resource_group_scope" => target.top_of(self).scope == Scope::ResourceGroup,
            _ => false,
        }
    }

    /// Why this type cannot serve a scenario that needs `feature`, when the feature is one a
    /// declaration rules out (rather than simply lacks).
    pub fn lacks_reason(&self, feature: &str) -> Option<String> {
        match feature {
            "fresh_names" => self.names.as_ref().map(|_| {
                format!(
                    "type {} accepts only {}; the scenario needs a fresh name",
                    self.name,
                    self.fixed_names_text()
                )
            }),
            "deletable" if !self.deletable => Some(format!(
                "type {} cannot be deleted (DELETE is not part of its API); the scenario deletes it",
                self.name
            )),
            _ => None,
        }
    }

    /// `the fixed name default` / `the fixed names a, b`.
    pub fn fixed_names_text(&self) -> String {
        match self.names.as_deref() {
            Some([one]) => format!("the fixed name {one}"),
            Some(many) => format!("the fixed names {}", many.join(", ")),
            None => "any name".into(),
        }
    }

    /// The `type` an ARM body reports: `Namespace/parent/child` (location-based types report
    /// `Namespace/locations/child`).
    pub fn arm_type(&self, target: &Target) -> String {
        let mut segs = vec![self.segment.clone()];
        let mut cur = self.parent.as_deref();
        while let Some(p) = cur.and_then(|n| target.type_named(n)) {
            segs.push(p.segment.clone());
            cur = p.parent.as_deref();
        }
        if target.top_of(self).scope == Scope::Location {
            segs.push("locations".into());
        }
        segs.reverse();
        format!("{}/{}", self.namespace, segs.join("/"))
    }

    /// The body a PUT sends to replace the resource (`replace_body`, else `create_body`).
    pub fn replace_body(&self) -> &Value {
        self.replace_body.as_ref().unwrap_or(&self.create_body)
    }

    /// The part of `update_body` the RP answers back as sent: its `echoes` fields when
    /// declared, else all of it (null without an update body).
    pub fn update_echo(&self) -> Value {
        let Some(Value::Object(body)) = &self.update_body else {
            return Value::Null;
        };
        match &self.echoes {
            None => Value::Object(body.clone()),
            Some(fields) => Value::Object(
                body.iter()
                    .filter(|(k, _)| fields.iter().any(|f| f == *k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
        }
    }

    /// `${type.read_only_probe}`: what a PUT of this type sending its replace body could set
    /// that the target's spec marks readOnly (SPEC-07), known before anything is created (so a
    /// type with nothing to probe costs no create); null without a spec or when there is none.
    /// A created resource binds its own (`${x.read_only_probe}`, from the body as rendered).
    pub fn read_only_probe(&self, target: &Target) -> Value {
        target.sample_url(self).map_or(Value::Null, |url| {
            target.read_only_probe(&url, self.replace_body())
        })
    }

    /// The scope value `${type}` for this type.
    pub fn scope_value(&self, target: &Target) -> Value {
        let first_child = target
            .types
            .iter()
            .find(|t| t.parent.as_deref() == Some(&self.name));
        let grandchild = first_child.and_then(|c| {
            target
                .types
                .iter()
                .find(|t| t.parent.as_deref() == Some(&c.name))
        });
        let action = |a: &Action| {
            json!({
                "name": a.name, "long_running": a.long_running(), "lro": a.lro.pattern.name(),
                "body": a.body, "result_status": a.result_status, "result_pointer": a.result_pointer,
            })
        };
        json!({
            "name": self.name,
            "segment": self.segment,
            "namespace": self.namespace,
            "api_version": self.api_version,
            "arm_type": self.arm_type(target),
            "scope": target.top_of(self).scope.name(),
            "kind": if self.kind == Kind::Tracked { "tracked" } else { "proxy" },
            "create_body": self.create_body,
            "update_body": self.update_body.clone().unwrap_or(Value::Null),
            "replace_body": self.replace_body(),
            "tags_body": self.tags_body.clone().unwrap_or(Value::Null),
            "update_echo": self.update_echo(),
            "failing_body": self.failing_body.clone().unwrap_or(Value::Null),
            "failing_update_body": self.failing_update_body.clone().unwrap_or(Value::Null),
            "echoes": self.echoes.clone().map(Value::from).unwrap_or(Value::Null),
            "invalid_bodies": self.invalid_bodies,
            "names": self.names.clone().map(Value::from).unwrap_or(Value::Null),
            "deletable": self.deletable,
            "parent": self.parent.clone().unwrap_or_default(),
            "child": first_child.map(|c| c.name.clone()).unwrap_or_default(),
            "grandchild": grandchild.map(|c| c.name.clone()).unwrap_or_default(),
            "dependency": self.depends_on.clone().unwrap_or_default(),
            "lro": {
                "put": self.lro.put.pattern.name(),
                "patch": self.lro.patch.pattern.name(),
                "delete": self.lro.delete.pattern.name(),
            },
            "actions": self.actions.iter().map(action).collect::<Vec<_>>(),
            "action": self.actions.first().map(action).unwrap_or(Value::Null),
            "read_only_probe": self.read_only_probe(target),
        })
    }
}

/// Keys a suite may read from `${type.…}`.
pub const TYPE_SCOPE_KEYS: &[&str] = &[
    "name",
    "segment",
    "namespace",
    "api_version",
    "arm_type",
    "scope",
    "kind",
    "create_body",
    "update_body",
    "replace_body",
    "tags_body",
    "update_echo",
    "failing_body",
    "failing_update_body",
    "echoes",
    "invalid_bodies",
    "names",
    "deletable",
    "parent",
    "child",
    "grandchild",
    "dependency",
    "lro",
    "actions",
    "action",
    "read_only_probe",
];

/// Keys a suite may read from `${target.…}`.
pub const TARGET_SCOPE_KEYS: &[&str] = &[
    "base_url",
    "subscription",
    "resource_group",
    "rg_url",
    "provider_url",
    "namespace",
    "api_version",
    "location",
    "host",
];

impl Target {
    /// Judge answers against this spec too: the `openapi` profile comes with it (`from` says
    /// where the spec came from, for `check` and the run to say).
    /// SPEC-07's probe for a PUT to `url` (with its api-version) that sends `body`: the
    /// readOnly members the spec lets it set, at the probe value; null without a spec or when
    /// there are none.
    pub fn read_only_probe(&self, url: &str, body: &Value) -> Value {
        self.specs
            .as_ref()
            .and_then(|s| s.read_only_probe("PUT", url, body))
            .unwrap_or(Value::Null)
    }

    /// What `check` and `run` say of the profiles the target implies, naming it `what` (a file
    /// or "the target"): added to its `profiles:`, or standing for them when it names none.
    pub fn implied_note(&self, what: &str) -> Option<String> {
        if self.implied_profiles.is_empty() {
            return None;
        }
        let implied = self.implied_profiles.join(", ");
        Some(if self.profiles_declared {
            format!("note: {what}: besides its `profiles:`, what it declares implies {implied}")
        } else {
            format!("note: {what} declares no `profiles:`; implied by what it declares: {implied}")
        })
    }

    pub fn attach_specs(&mut self, specs: std::sync::Arc<crate::spec::Specs>, from: &str) {
        self.specs = Some(specs);
        if !self.profiles.contains(&Profile::OpenApi) {
            self.profiles.push(Profile::OpenApi);
            self.implied_profiles
                .push(format!("{} ({from})", Profile::OpenApi.name()));
        }
    }

    pub fn monitor_named(&self, name: &str) -> Option<&Monitor> {
        self.monitors.iter().find(|m| m.name == name)
    }

    pub fn type_named(&self, name: &str) -> Option<&ResourceType> {
        self.types.iter().find(|t| t.name == name)
    }

    /// The top-level ancestor of a type (the type itself when it is top-level).
    pub fn top_of<'t>(&'t self, ty: &'t ResourceType) -> &'t ResourceType {
        let mut cur = ty;
        let mut hops = 0;
        while let Some(p) = cur.parent.as_deref().and_then(|p| self.type_named(p)) {
            cur = p;
            hops += 1;
            if hops > 32 {
                break;
            }
        }
        cur
    }

    pub fn base(&self) -> String {
        self.base_url.as_str().trim_end_matches('/').to_string()
    }

    pub fn rg_url(&self) -> String {
        format!(
            "{}/subscriptions/{}/resourceGroups/{}",
            self.base(),
            self.subscription,
            self.resource_group.name
        )
    }

    /// The provider URL of the default namespace in the resource group.
    pub fn provider_url(&self) -> String {
        format!("{}/providers/{}", self.rg_url(), self.namespace)
    }

    /// The api-version of a namespace (the default one when the namespace is not declared).
    pub fn api_version_of(&self, namespace: &str) -> &str {
        self.namespaces
            .iter()
            .find(|n| n.name.eq_ignore_ascii_case(namespace))
            .map(|n| n.api_version.as_str())
            .unwrap_or(&self.api_version)
    }

    /// What this target lets a run send ([`Guard`]), with the resource group as named now.
    pub fn guard(&self) -> Guard {
        Guard::of(self)
    }

    /// Does the target implement this rule profile?
    pub fn declares(&self, p: Profile) -> bool {
        self.profiles.contains(&p)
    }

    /// The scope value `${target}`.
    pub fn scope_value(&self) -> Value {
        json!({
            "base_url": self.base(),
            "subscription": self.subscription,
            "resource_group": self.resource_group.name,
            "rg_url": self.rg_url(),
            "provider_url": self.provider_url(),
            "namespace": self.namespace,
            "api_version": self.api_version,
            "location": self.location,
            "host": self.base_url.host_str().unwrap_or(""),
        })
    }

    /// May destructive scenarios (resource-group sweeps) run here?
    pub fn destructive_allowed(&self) -> bool {
        self.resource_group.create || self.resource_group.disposable
    }

    /// Does `url` belong to the target's origin (scheme, host and port)?
    pub fn same_origin(&self, url: &url::Url) -> bool {
        url.scheme() == self.base_url.scheme()
            && url.host_str().map(str::to_ascii_lowercase)
                == self.base_url.host_str().map(str::to_ascii_lowercase)
            && url.port_or_known_default() == self.base_url.port_or_known_default()
    }
}
