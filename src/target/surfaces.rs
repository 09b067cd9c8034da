//! Target declarations beyond ARM resource types: TypeSpec Azure.Core status-monitor operations
//! (`monitors:`, the MON rules) and a task-based API (`tasks:`, the TASK rules). Each names its
//! requests and the vocabulary the service uses, so the same suites test any service of that style.

use serde_json::{Value, json};

/// How a status monitor is linked from the initial response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MonitorLink {
    OperationLocation,
    Location,
    AzureAsyncOperation,
}

impl MonitorLink {
    pub fn channel(self) -> crate::lro::Channel {
        match self {
            MonitorLink::OperationLocation => crate::lro::Channel::OperationLocation,
            MonitorLink::Location => crate::lro::Channel::Location,
            MonitorLink::AzureAsyncOperation => crate::lro::Channel::AzureAsyncOperation,
        }
    }

    pub fn header(self) -> &'static str {
        match self {
            MonitorLink::OperationLocation => "operation-location",
            MonitorLink::Location => "location",
            MonitorLink::AzureAsyncOperation => "azure-asyncoperation",
        }
    }
}

/// A request template from a target file (method, URL, body).
#[derive(Debug, Clone)]
pub struct RequestDecl {
    pub method: String,
    pub url: String,
    pub body: Option<Value>,
}

/// One long-running operation with a status monitor.
#[derive(Debug, Clone)]
pub struct Monitor {
    pub name: String,
    pub request: RequestDecl,
    pub failing_body: Option<Value>,
    /// Query `api-version` added to every request (None: none).
    pub api_version: Option<String>,
    pub link: MonitorLink,
    pub status_field: String,
    pub succeeded: Vec<String>,
    pub failed: Vec<String>,
    pub canceled: Vec<String>,
    /// None: the operation has no result.
    pub result_field: Option<String>,
    pub error_field: String,
    /// Where the final result is read once the monitor reports success.
    pub final_state_via: crate::lro::FinalStateVia,
    /// The response header carrying the operation id (None: the service declares it sends none).
    pub operation_id_header: Option<String>,
    /// Another monitor run to success first; its request URL is `${prerequisite.url}`.
    pub prerequisite: Option<String>,
    /// A request that cancels the running operation (a DELETE of the resource it acts on, say);
    /// its URL may use `${prerequisite.…}` and `${unique}` like `request`.
    pub cancel: Option<RequestDecl>,
    /// `poll_api_version: append`: a handed-out link without `api-version` is read with the
    /// monitor's `api_version` added, as the Azure SDK team asks clients to
    /// (Azure/azure-sdk-for-net#25411; azure-core for Python sends links as given);
    /// `as_given` (default): links are read exactly as handed out.
    pub poll_api_version_append: bool,
}

impl Monitor {
    /// The URL a client reads for a handed-out link: with the monitor's api-version added when
    /// the monitor says `poll_api_version: append` and the link has none.
    pub fn poll_url(&self, link: &str) -> String {
        let Some(v) = self
            .api_version
            .as_deref()
            .filter(|_| self.poll_api_version_append)
        else {
            return link.to_string();
        };
        match crate::http::parse_url(link) {
            Ok(mut u) if !u.query_pairs().any(|(k, _)| k == "api-version") => {
                u.query_pairs_mut().append_pair("api-version", v);
                u.to_string()
            }
            _ => link.to_string(),
        }
    }
}

/// Features a scenario can require of a monitor (`for_each_monitor: [...]`).
pub const MONITOR_FEATURES: &[&str] = &[
    "any",
    "standard",
    "failing_body",
    "result",
    "final_location",
    "custom_terminal",
    "operation_id",
    "no_operation_id",
    "cancel",
];

impl Monitor {
    pub fn has(&self, feature: &str) -> bool {
        match feature {
            "any" => true,
            "operation_id" => self.operation_id_header.is_some(),
            "no_operation_id" => self.operation_id_header.is_none(),
            "cancel" => self.cancel.is_some(),
            "standard" => self.link == MonitorLink::OperationLocation,
            "failing_body" => self.failing_body.is_some(),
            "result" => self.result_field.is_some(),
            // A separate final link: when the Location header is the status monitor itself
            // (seed 002, "Link to StatusMonitor in the location header"), the final result is
            // the monitor's result field, not another GET.
            "final_location" => {
                self.final_state_via == crate::lro::FinalStateVia::Location
                    && self.link != MonitorLink::Location
            }
            "custom_terminal" => {
                !(self.succeeded == ["Succeeded"]
                    && self.failed == ["Failed"]
                    && self.canceled == ["Canceled"])
            }
            _ => false,
        }
    }

    /// How this monitor spells its status.
    pub fn vocabulary(&self) -> crate::lro::Vocabulary {
        crate::lro::Vocabulary {
            field: self.status_field.clone(),
            succeeded: self.succeeded.clone(),
            failed: self.failed.clone(),
            canceled: self.canceled.clone(),
        }
    }

    pub fn scope_value(&self) -> Value {
        json!({
            "name": self.name,
            "status_field": self.status_field,
            "result_field": self.result_field,
            "error_field": self.error_field,
            "operation_id_header": self.operation_id_header,
            "link": self.link.header(),
            "final_state_via": self.final_state_via.name(),
            "succeeded": self.succeeded,
            "failed": self.failed,
            "canceled": self.canceled,
        })
    }
}

/// A task-based API (the Redis Cloud style): writes answer a task id; tasks move through four
/// states; the resource then moves through its provisioning states.
#[derive(Debug, Clone)]
pub struct TaskApi {
    pub create: RequestDecl,
    pub update: Option<RequestDecl>,
    pub delete: RequestDecl,
    pub failing_processing_body: Option<Value>,
    pub failing_provisioning_body: Option<Value>,
    /// `${task_id}` is filled in.
    pub task_url: String,
    pub tasks_url: Option<String>,
    /// `${resource_id}` is filled in.
    pub resource_url: String,
    pub task_id_field: String,
    pub status_field: String,
    /// received, processing-in-progress, processing-completed, processing-error (in order).
    pub task_states: [String; 4],
    pub resource_id_pointer: String,
    pub task_error_pointer: String,
    pub resource_status_field: String,
    /// pending, active, deleting, error.
    pub resource_states: [String; 4],
    pub resource_error_pointer: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::monitor;

    #[test]
    fn a_location_that_is_the_monitor_has_no_separate_final_link() {
        use crate::lro::FinalStateVia;
        // Seed 002: "Link to StatusMonitor in the location header" with finalStateVia location
        // and logicalPath result: the result is the monitor's field, MON-06 does not apply.
        assert!(!monitor(MonitorLink::Location, FinalStateVia::Location).has("final_location"));
        assert!(
            monitor(MonitorLink::OperationLocation, FinalStateVia::Location).has("final_location")
        );
    }
}
