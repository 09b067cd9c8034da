//! The target file of the embedded reference RP (`--target embedded`, `rpconform serve`).
//! It is kept as YAML text, parsed by the same code as a user's file, so it doubles as a
//! complete, tested example of the format.
//!
//! With variant knobs on, the file follows [`rpconform_refrp::target_hints`]: every type
//! declared `async: true` gets the per-operation `lro:` patterns the variants give it (a
//! synchronous PATCH or DELETE, a PUT followed through provisioningState), the monitors
//! declare the operation-id header the data plane sends (or `none`), and each hint's note
//! heads the file as a comment.

use rpconform_refrp::{TargetHints, target_hints};

/// The reference RP's own OpenAPI spec for these settings (its variants' overlays and spec-drift
/// faults applied): the SPEC rules judge the embedded run by it.
pub fn embedded_specs(settings: &rpconform_refrp::Settings) -> Result<crate::spec::Specs, String> {
    let docs: Vec<(String, String, serde_json::Value)> = rpconform_refrp::spec_files(settings)
        .into_iter()
        .map(|f| (f.name.to_string(), f.text.to_string(), f.doc))
        .collect();
    crate::spec::Specs::from_documents(&docs)
}

/// Target YAML for the reference RP (default settings) listening at `base_url`.
pub fn embedded_target_yaml(base_url: &str) -> String {
    embedded_target_yaml_for(base_url, &rpconform_refrp::Settings::default())
}

/// The operation deadline the embedded target declares for these settings: 30 s, or longer
/// when the hold-open gate keeps each operation running for several reads at the RP's own
/// Retry-After (3 reads 10 s apart must not reach the deadline at time scale 1), with room
/// for the reads of a busy machine; at most two minutes (a gate of thousands of reads is an
/// operation meant never to end, not one to wait hours for).
pub fn embedded_deadline_secs(settings: &rpconform_refrp::Settings) -> u64 {
    let held = (u64::from(settings.complete_after_reads) + 2)
        .saturating_mul(settings.retry_after_secs.max(1))
        .saturating_add(settings.op_duration.as_secs() + 1);
    held.clamp(30, 120)
}

/// Target YAML for the reference RP listening at `base_url` with these settings (their
/// variants shape the `lro:` lines, their timing the deadline).
pub fn embedded_target_yaml_for(base_url: &str, settings: &rpconform_refrp::Settings) -> String {
    let variants = &settings.variants;
    let hints = target_hints(variants);
    let mut text = TEMPLATE
        .replace("{BASE_URL}", base_url.trim_end_matches('/'))
        .replace("{DEADLINE}", &embedded_deadline_secs(settings).to_string())
        .replace(
            "{OPERATION_ID_HEADER}",
            hints.dataplane_operation_id_header.unwrap_or("none"),
        );
    if let Some(lro) = lro_line(&hints) {
        text = text.replace(
            "\n    async: true\n",
            &format!("\n    async: true\n    {lro}\n"),
        );
    }
    if variants.is_empty() {
        return text;
    }
    let mut head = String::from("# Variants on: ");
    head.push_str(
        &variants
            .iter()
            .map(|v| v.name())
            .collect::<Vec<_>>()
            .join(", "),
    );
    head.push('\n');
    for n in &hints.notes {
        head.push_str(&format!("#   {n}\n"));
    }
    head + &text
}

/// The `lro:` declaration of an asynchronous type under these hints (None: `async: true` says
/// it all).
fn lro_line(h: &TargetHints) -> Option<String> {
    let mut ops = Vec::new();
    if h.put_polls_the_resource {
        ops.push("put: provisioning-state");
    }
    if h.patch_synchronous {
        ops.push("patch: sync");
    }
    if h.delete_synchronous {
        ops.push("delete: sync");
    }
    (!ops.is_empty()).then(|| format!("lro: {{{}}}", ops.join(", ")))
}

const TEMPLATE: &str = r#"# Target file for the rpconform embedded reference RP (generated).
base_url: {BASE_URL}
auth: none
subscription: 00000000-0000-0000-0000-00000000c0de
resource_group:
  name: rpconform
  create: true          # the run creates the group (name + run suffix) and deletes it at the end
# The reference RP implements every profile: the ARM contract, propagation, the ARO-HCP
# operation design, a TypeSpec data plane and a task API.
profiles: [arm, propagation, aro-hcp, azure-core-lro, task-api, subscription-lifecycle, resource-move]
namespace: Microsoft.Contoso
api_version: "2024-05-01"
namespaces:
  Microsoft.Fabrikam: {api_version: "2023-07-01"}   # a second namespace, its own api-version
location: eastus
deadline: {DEADLINE}    # seconds one operation may take before the poll gives up
identity:
  tenant: 72f988bf-0000-0000-0000-00000000aaaa
  client: 11111111-0000-0000-0000-00000000bbbb
types:
  widgets:
    kind: tracked
    async: true
    etag: true
    propagation: true
    skus: true
    create_body:
      location: eastus
      tags: {env: test}
      properties: {size: 3, minCount: 1, maxCount: 5}
    update_body:
      tags: {env: patched}
      properties: {size: 4}
    failing_body:
      location: eastus
      properties: {size: 3, simulateFailure: true}
    failing_update_body:
      properties: {simulateFailure: true}
    invalid_bodies:
      - {location: eastus, properties: {size: "three"}}
      - {location: eastus, properties: {minCount: 9, maxCount: 2}}
      - {properties: {size: 3}}
    actions:
      - name: restart
        long_running: true
        body: {}
        result: {status: 200, pointer: /restartCount}
  gadgets:
    parent: widgets
    kind: proxy
    async: true
    etag: true
    propagation: true
    skus: true
    skus_empty: true
    create_body:
      properties: {size: 1}
    update_body:
      properties: {size: 2}
    failing_update_body:
      properties: {simulateFailure: true}
  sprockets:
    parent: gadgets
    kind: proxy
    async: true
    etag: true
    propagation: true
    create_body:
      properties: {size: 1}
    update_body:
      properties: {size: 2}
    failing_update_body:
      properties: {simulateFailure: true}
  links:
    depends_on: widgets
    kind: tracked
    async: true
    etag: true
    propagation: true
    create_body:
      location: eastus
      properties: {widgetId: "${dependency.id}"}
    update_body:
      tags: {note: updated}
  # Shapes beyond a resource group's top-level types (README "More ARM shapes"): a singleton
  # child, subscription-, location- and tenant-level types, an extension resource, and a type
  # of a second namespace with its own api-version. All synchronous except subscriptionWidgets.
  configurations:
    parent: widgets
    singleton: default      # the only name; ARM singletons cannot be deleted (deletable: false)
    kind: proxy
    async: false
    etag: true
    provisioning_state: true
    create_body:
      properties: {logLevel: Warning, retentionDays: 30}
    update_body:
      properties: {logLevel: Verbose}
    invalid_bodies:
      - {properties: {logLevel: Loud}}
      - {properties: {retentionDays: 400}}
  subscriptionWidgets:
    scope: subscription
    kind: tracked
    async: true
    etag: true
    create_body:
      location: eastus
      tags: {env: test}
      properties: {size: 3, minCount: 1, maxCount: 5}
    update_body:
      tags: {env: patched}
      properties: {size: 4}
    failing_body:
      location: eastus
      properties: {size: 3, simulateFailure: true}
    invalid_bodies:
      - {location: eastus, properties: {size: "three"}}
      - {location: eastus, properties: {minCount: 9, maxCount: 2}}
  regionalWidgets:
    scope: location
    kind: proxy
    async: false
    etag: true
    provisioning_state: true
    create_body:
      properties: {size: 2}
    update_body:
      properties: {size: 5}
    invalid_bodies:
      - {properties: {size: 0}}
  tenantWidgets:
    scope: tenant
    kind: proxy
    async: false
    etag: true
    provisioning_state: true
    create_body:
      properties: {size: 2}
    update_body:
      properties: {size: 5}
    invalid_bodies:
      - {properties: {size: "two"}}
  annotations:
    scope: extension
    extends: widgets
    kind: proxy
    async: false
    etag: true
    provisioning_state: true
    create_body:
      properties: {text: "checked by rpconform"}
    update_body:
      properties: {text: "updated by rpconform"}
    invalid_bodies:
      - {properties: {}}
      - {properties: {text: 7}}
  gizmos:
    namespace: Microsoft.Fabrikam
    kind: tracked
    async: false
    etag: true
    provisioning_state: true
    create_body:
      location: eastus
      tags: {env: test}
      properties: {color: blue, count: 3}
    update_body:
      tags: {env: patched}
      properties: {count: 4}
    invalid_bodies:
      - {location: eastus, properties: {count: -1}}
# TypeSpec Azure.Core status-monitor operations on the data plane (MON rules).
monitors:
  widget-put:
    request: {method: PUT, url: "/dataplane/widgets/dp${unique}", body: {size: 1}}
    cancel: {method: DELETE, url: "/dataplane/widgets/dp${unique}"}
    failing_body: {size: 1, fail: true}
    api_version: "2024-05-01"
    poll_api_version: append
    operation_id_header: {OPERATION_ID_HEADER}
    link: operation-location
    result_field: result
    final_state_via: operation-location
  widget-export:
    prerequisite: widget-put
    cancel: {method: DELETE, url: "/dataplane/widgets/${prerequisite.name}"}
    request: {method: POST, url: "/dataplane/widgets/${prerequisite.name}:export", body: {}}
    failing_body: {fail: true}
    api_version: "2024-05-01"
    poll_api_version: append
    operation_id_header: {OPERATION_ID_HEADER}
    succeeded: [Completed]
    failed: [Faulted]
    canceled: [Aborted]
  widget-analyze:
    prerequisite: widget-put
    cancel: {method: DELETE, url: "/dataplane/widgets/${prerequisite.name}"}
    request: {method: POST, url: "/dataplane/widgets/${prerequisite.name}:analyze", body: {}}
    failing_body: {fail: true}
    api_version: "2024-05-01"
    poll_api_version: append
    operation_id_header: {OPERATION_ID_HEADER}
    result_field: success
    error_field: failure
  widget-restart:
    prerequisite: widget-put
    cancel: {method: DELETE, url: "/dataplane/widgets/${prerequisite.name}"}
    request: {method: POST, url: "/dataplane/widgets/${prerequisite.name}:restart", body: {}}
    failing_body: {fail: true}
    api_version: "2024-05-01"
    poll_api_version: append
    operation_id_header: {OPERATION_ID_HEADER}
    link: location
  widget-rebuild:
    prerequisite: widget-put
    cancel: {method: DELETE, url: "/dataplane/widgets/${prerequisite.name}"}
    request: {method: POST, url: "/dataplane/widgets/${prerequisite.name}:rebuild", body: {}}
    failing_body: {fail: true}
    api_version: "2024-05-01"
    poll_api_version: append
    operation_id_header: {OPERATION_ID_HEADER}
    link: azure-async-operation
  widget-snapshot:
    prerequisite: widget-put
    cancel: {method: DELETE, url: "/dataplane/widgets/${prerequisite.name}"}
    request: {method: POST, url: "/dataplane/widgets/${prerequisite.name}:snapshot", body: {}}
    failing_body: {fail: true}
    api_version: "2024-05-01"
    poll_api_version: append
    operation_id_header: {OPERATION_ID_HEADER}
    final_state_via: location
# A task-based API in the Redis Cloud style (TASK rules).
tasks:
  create: {method: POST, url: /v1/subscriptions, body: {name: "sub-${unique}"}}
  update: {method: PUT, url: "/v1/subscriptions/${resource_id}", body: {name: "sub-${unique}-renamed"}}
  delete: {method: DELETE, url: "/v1/subscriptions/${resource_id}"}
  failing_processing_body: {name: "sub-${unique}", fail: processing}
  failing_provisioning_body: {name: "sub-${unique}", fail: provisioning}
  task_url: "/v1/tasks/${task_id}"
  tasks_url: /v1/tasks
  resource_url: "/v1/subscriptions/${resource_id}"
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use rpconform_refrp::Variant;
    use std::collections::BTreeSet;
    use std::path::Path;

    #[test]
    fn embedded_target_parses() {
        let text = embedded_target_yaml("http://127.0.0.1:1234/");
        let t = crate::target::parse_target(Path::new("embedded.yaml"), &text, "embedded")
            .unwrap_or_else(|r| panic!("{}", r.render()));
        assert_eq!(t.base(), "http://127.0.0.1:1234");
        assert_eq!(t.types.len(), 10);
        let sp = t.type_named("sprockets").unwrap();
        assert_eq!(
            sp.arm_type(&t),
            "Microsoft.Contoso/widgets/gadgets/sprockets"
        );
        assert!(sp.has("grandchild", &t));
        assert!(t.type_named("widgets").unwrap().has("has_children", &t));
    }

    #[test]
    fn variants_change_the_declarations_their_hints_name() {
        let set: BTreeSet<Variant> = [
            Variant::SyncPatch,
            Variant::PutProvisioningStateOnly,
            Variant::MonNoOperationId,
            Variant::WeakEtags,
        ]
        .into_iter()
        .collect();
        let settings = rpconform_refrp::Settings {
            variants: set,
            ..Default::default()
        };
        let text = embedded_target_yaml_for("http://127.0.0.1:1234", &settings);
        assert!(text.starts_with("# Variants on: "), "{text}");
        let t = crate::target::parse_target(Path::new("embedded.yaml"), &text, "embedded")
            .unwrap_or_else(|r| panic!("{}", r.render()));
        // Types declared `async: false` (singletons, subscription-level types) stay synchronous.
        let sync = crate::target::Lro::all(crate::target::OpPattern::Sync);
        for ty in t.types.iter().filter(|ty| ty.lro != sync) {
            assert_eq!(
                ty.lro.patch.pattern,
                crate::target::OpPattern::Sync,
                "{}",
                ty.name
            );
            assert_eq!(
                ty.lro.put.pattern,
                crate::target::OpPattern::ProvisioningState,
                "{}",
                ty.name
            );
            assert_eq!(ty.lro.delete.pattern, crate::target::OpPattern::Any);
        }
        assert!(t.monitors.iter().all(|m| m.operation_id_header.is_none()));
        // Without variants: every write may run either way, monitors send Operation-Id.
        let plain = crate::target::parse_target(
            Path::new("embedded.yaml"),
            &embedded_target_yaml("http://127.0.0.1:1234"),
            "embedded",
        )
        .unwrap_or_else(|r| panic!("{}", r.render()));
        assert!(
            plain
                .monitors
                .iter()
                .all(|m| m.operation_id_header.as_deref() == Some("Operation-Id"))
        );
        assert!(plain.types.iter().all(|t| t.lro
            == crate::target::Lro::all(crate::target::OpPattern::Any)
            || t.lro == sync));
        // Every variant alone gives a file that parses.
        for v in Variant::all() {
            let one = rpconform_refrp::Settings::default().with_variant(v);
            let text = embedded_target_yaml_for("http://127.0.0.1:1234", &one);
            crate::target::parse_target(Path::new("embedded.yaml"), &text, "embedded")
                .unwrap_or_else(|r| panic!("{v}: {}", r.render()));
        }
    }

    #[test]
    fn the_deadline_outlasts_the_held_reads() {
        let parse = |s: &rpconform_refrp::Settings| {
            let text = embedded_target_yaml_for("http://127.0.0.1:1234", s);
            crate::target::parse_target(Path::new("embedded.yaml"), &text, "embedded")
                .unwrap_or_else(|r| panic!("{}", r.render()))
                .deadline
                .as_secs()
        };
        let plain = rpconform_refrp::Settings::default();
        assert_eq!(parse(&plain), 30);
        // Three held reads 10 s apart (plus the first answer and the operation's own second)
        // would reach 30 s at time scale 1.
        let held = rpconform_refrp::Settings {
            complete_after_reads: 3,
            ..Default::default()
        };
        let secs = parse(&held);
        assert!(secs > 3 * held.retry_after_secs + 1, "{secs}");
        // An operation held for good is not waited on for hours.
        let forever = rpconform_refrp::Settings {
            complete_after_reads: 100_000,
            ..Default::default()
        };
        assert_eq!(parse(&forever), 120);
    }

    #[test]
    fn target_errors_are_positioned() {
        let text = "base_url: nope\nsubscription: s\nnamespace: N\napi_version: v\nresource_group: {name: rg}\n\
                    types:\n  a:\n    kind: weird\n    create_bdy: {}\n    parent: zz\n";
        let err = crate::target::parse_target(Path::new("t.yaml"), text, "t").unwrap_err();
        let out = err.render();
        assert!(out.contains("t.yaml:1:11"), "{out}");
        assert!(out.contains("unknown kind `weird`"), "{out}");
        assert!(out.contains("did you mean `create_body`"), "{out}");
    }
}
