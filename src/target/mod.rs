//! Target files: where the RP under test lives and what it serves.
//!
//! A [`Target`] holds the base URL, auth, subscription and resource group, api-version and the
//! resource types under test (bodies, nested types, dependencies, actions, features such as
//! ETags or asynchronous provisioning, and the LRO pattern). Suites refer only to these
//! declarations, never to names of a particular RP, so one suite tests any RP.
//! `parse` reads the YAML file with positions; `embedded` is the file for the reference RP.

mod embedded;
mod parse;
mod surfaces;

pub use embedded::embedded_target_yaml;
pub use parse::{load_target, parse_target};
pub use surfaces::{MONITOR_FEATURES, Monitor, MonitorLink, RequestDecl, TaskApi};

use serde_json::{Value, json};
use std::time::Duration;

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

/// How a long-running operation of a type is followed.
#[derive(Debug, Clone, PartialEq)]
pub enum LroPattern {
    /// ARM: Azure-AsyncOperation when present, else 202 + Location, else the resource's
    /// provisioningState.
    Arm,
}

#[derive(Debug, Clone)]
pub struct Action {
    pub name: String,
    pub long_running: bool,
    pub body: Value,
    /// The answer a successful synchronous call gives: status and, optionally, a JSON Pointer
    /// that must exist in the body.
    pub result_status: Vec<u16>,
    pub result_pointer: Option<String>,
}

/// A resource type under test.
#[derive(Debug, Clone)]
pub struct ResourceType {
    /// The key in the target file (`widgets`).
    pub name: String,
    /// The URL segment after the provider or parent (`widgets`).
    pub segment: String,
    pub parent: Option<String>,
    pub depends_on: Option<String>,
    pub kind: Kind,
    pub asynchronous: bool,
    pub etag: bool,
    pub provisioning_state: bool,
    pub propagation: bool,
    pub skus: bool,
    pub skus_empty: bool,
    pub create_body: Value,
    pub update_body: Option<Value>,
    pub failing_body: Option<Value>,
    pub invalid_bodies: Vec<Value>,
    pub actions: Vec<Action>,
    pub lro: LroPattern,
}

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
    pub namespace: String,
    pub api_version: String,
    pub location: String,
    pub deadline: Duration,
    pub identity: Option<(String, String)>,
    pub types: Vec<ResourceType>,
    pub monitors: Vec<Monitor>,
    pub tasks: Option<TaskApi>,
}

/// Features a scenario can require of a type (`for_each_type: [etag, child]`).
pub const TYPE_FEATURES: &[&str] = &[
    "any",
    "tracked",
    "proxy",
    "async",
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
    "invalid_bodies",
    "update_body",
];

impl ResourceType {
    pub fn has(&self, feature: &str, target: &Target) -> bool {
        match feature {
            "any" => true,
            "tracked" => self.kind == Kind::Tracked,
            "proxy" => self.kind == Kind::Proxy,
            "async" => self.asynchronous,
            "etag" => self.etag,
            "provisioning_state" => self.provisioning_state,
            "propagation" => self.propagation,
            "skus" => self.skus,
            "skus_empty" => self.skus_empty,
            "actions" => !self.actions.is_empty(),
            "long_running_action" => self.actions.iter().any(|a| a.long_running),
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
            "invalid_bodies" => !self.invalid_bodies.is_empty(),
            "update_body" => self.update_body.is_some(),
            _ => false,
        }
    }

    /// The `type` an ARM body reports: `Namespace/parent/child`.
    pub fn arm_type(&self, target: &Target) -> String {
        let mut segs = vec![self.segment.clone()];
        let mut cur = self.parent.as_deref();
        while let Some(p) = cur.and_then(|n| target.type_named(n)) {
            segs.push(p.segment.clone());
            cur = p.parent.as_deref();
        }
        segs.reverse();
        format!("{}/{}", target.namespace, segs.join("/"))
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
        json!({
            "name": self.name,
            "segment": self.segment,
            "arm_type": self.arm_type(target),
            "kind": if self.kind == Kind::Tracked { "tracked" } else { "proxy" },
            "create_body": self.create_body,
            "update_body": self.update_body.clone().unwrap_or(Value::Null),
            "failing_body": self.failing_body.clone().unwrap_or(Value::Null),
            "invalid_bodies": self.invalid_bodies,
            "parent": self.parent.clone().unwrap_or_default(),
            "child": first_child.map(|c| c.name.clone()).unwrap_or_default(),
            "grandchild": grandchild.map(|c| c.name.clone()).unwrap_or_default(),
            "dependency": self.depends_on.clone().unwrap_or_default(),
            "actions": self.actions.iter().map(|a| json!({
                "name": a.name, "long_running": a.long_running, "body": a.body,
                "result_status": a.result_status, "result_pointer": a.result_pointer,
            })).collect::<Vec<_>>(),
            "action": self.actions.first().map(|a| json!({
                "name": a.name, "long_running": a.long_running, "body": a.body,
                "result_status": a.result_status, "result_pointer": a.result_pointer,
            })).unwrap_or(Value::Null),
        })
    }
}

/// Keys a suite may read from `${type.…}`.
pub const TYPE_SCOPE_KEYS: &[&str] = &[
    "name",
    "segment",
    "arm_type",
    "kind",
    "create_body",
    "update_body",
    "failing_body",
    "invalid_bodies",
    "parent",
    "child",
    "grandchild",
    "dependency",
    "actions",
    "action",
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
    pub fn monitor_named(&self, name: &str) -> Option<&Monitor> {
        self.monitors.iter().find(|m| m.name == name)
    }

    pub fn type_named(&self, name: &str) -> Option<&ResourceType> {
        self.types.iter().find(|t| t.name == name)
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

    pub fn provider_url(&self) -> String {
        format!("{}/providers/{}", self.rg_url(), self.namespace)
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
