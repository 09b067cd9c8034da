//! `rpconform-refrp`: the embedded reference resource provider of rpconform.
//!
//! A conforming ARM-style RP for the `Microsoft.Contoso` namespace (widgets, nested gadgets
//! and sprockets, a singleton configuration, links that depend on widgets, a `restart`
//! action, `/skus`, subscription-level, location-based, tenant-level and extension types) and
//! a second namespace `Microsoft.Fabrikam` (gizmos), built with axum on tokio. Every [`Fault`]
//! knob in [`Settings::faults`] breaks named contract rules on purpose; every [`Variant`] in
//! [`Settings::variants`] switches to another legal behaviour; with no fault set the RP
//! satisfies the whole catalogue. [`Settings::complete_after_reads`] holds operations open
//! until they have been observed.
//!
//! - [`app`] builds the router for one fresh RP instance (for in-process tests);
//! - [`start`] serves it on `127.0.0.1` and returns a [`RunningServer`];
//! - [`Fault`] lists the fault knobs, [`list_faults_text`] renders them for humans;
//! - [`Variant`] lists the variant knobs, [`list_variants_text`] renders them, and
//!   [`target_hints`] says what a target file must declare differently with them.
//!
//! Two more surfaces share the server: a TypeSpec Azure.Core data plane under `/dataplane`
//! (status monitors, rules MON-01..08; module `dataplane`) and a Redis Cloud style task API
//! under `/v1` (rules TASK-01..08; module `tasks`). Each has its own state and knobs.
//!
//! Inside: `arm` receives every request (one fallback handler) and hands `/dataplane` and
//! `/v1` to their modules; for ARM paths, `path` parses routes, and `resources` / `groups` /
//! `operations` handle them against the `store` (state, operations, propagation, lazy
//! completion by time and observation), `lro` shapes asynchronous answers, with `validate`,
//! `etag`, `errors`, `render` and `reply` as helpers; `variants` describes the variant knobs.

use std::sync::Arc;

mod arm;
mod context;
mod dataplane;
mod errors;
mod etag;
mod faults;
mod groups;
mod ids;
mod lro;
mod moves;
mod operations;
mod path;
mod render;
mod reply;
mod resources;
mod server;
mod settings;
mod spec;
mod store;
mod subscriptions;
mod tasks;
mod validate;
mod variants;

pub use faults::Fault;
pub use server::{RunningServer, start};
pub use settings::Settings;
pub use spec::{SpecFile, spec_files};
pub use variants::{TargetHints, Variant, list_variants_text, target_hints};

/// The resource-provider namespace served.
pub const NAMESPACE: &str = "Microsoft.Contoso";

/// The second provider namespace served (one synchronous tracked type, `gizmos`).
pub const FABRIKAM_NAMESPACE: &str = "Microsoft.Fabrikam";

/// The only api-version of the `Microsoft.Fabrikam` routes.
pub const FABRIKAM_API_VERSION: &str = "2023-07-01";

/// The api-versions every `Microsoft.Contoso` route accepts (resource groups also take
/// `2021-04-01`).
pub const API_VERSIONS: &[&str] = &["2024-05-01", "2024-09-01-preview"];

/// The api-version to use when nothing else is said.
pub const DEFAULT_API_VERSION: &str = "2024-05-01";

/// The only api-version of the data-plane surface under `/dataplane`.
pub const DATAPLANE_API_VERSION: &str = dataplane::API_VERSION;

/// The router of one fresh RP instance with its own empty state.
pub fn app(settings: Settings) -> axum::Router {
    let state = Arc::new(arm::App::new(settings));
    axum::Router::new().fallback(arm::handle).with_state(state)
}

/// One line per fault: `name  RULE-01,RULE-02  description`, names padded to one column.
pub fn list_faults_text() -> String {
    let all = Fault::all();
    let name_width = all.iter().map(|f| f.name().len()).max().unwrap_or(0);
    let rules_width = all
        .iter()
        .map(|f| f.rules().join(",").len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for f in all {
        out.push_str(&format!(
            "{:name_width$}  {:rules_width$}  {}\n",
            f.name(),
            f.rules().join(","),
            f.description()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_list_has_one_line_per_fault() {
        let text = list_faults_text();
        assert_eq!(text.lines().count(), Fault::all().len());
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with("relative-location  "));
        assert!(first.contains("LOC-02"));
        assert_eq!(list_variants_text().lines().count(), Variant::all().len());
    }
}
