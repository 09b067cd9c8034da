//! Unit tests of the store: propagation, cancellation, ordering and the hold-open gate.

use super::*;

const W: &str = "/subscriptions/s/resourcegroups/rg/providers/microsoft.contoso/widgets/w";

fn res(id: &str, kind: Kind) -> Resource {
    Resource {
        id: id.to_string(),
        name: id.rsplit('/').next().unwrap_or_default().to_string(),
        type_name: String::new(),
        kind,
        location: None,
        tags: None,
        properties: Map::new(),
        settled: State::Succeeded,
        etag: ids::etag(),
        system_data: Map::new(),
        restart_count: 0,
        op_location: "eastus".into(),
    }
}

fn spec(kind: OpKind, target: &str) -> OpSpec {
    let target_kind = match target.rsplit('/').nth(1) {
        Some("gadgets") => Kind::Gadget,
        Some("sprockets") => Kind::Sprocket,
        _ => Kind::Widget,
    };
    OpSpec {
        kind,
        target: target.to_string(),
        target_name: "n".into(),
        target_kind,
        target_id: target.to_string(),
        origin: target.to_string(),
        sub: "s".into(),
        location: "eastus".into(),
        fail_with: None,
        tenant: None,
        client: None,
        resource_reads: false,
        hidden: false,
    }
}

fn tree(settings: &Settings) -> (Store, [String; 5]) {
    let mut s = Store::new(settings);
    let g1 = format!("{W}/gadgets/g1");
    let g2 = format!("{W}/gadgets/g2");
    let s1 = format!("{g1}/sprockets/s1");
    let s2 = format!("{g2}/sprockets/s2");
    s.resources.insert(W.into(), res(W, Kind::Widget));
    for k in [&g1, &g2] {
        s.resources.insert(k.clone(), res(k, Kind::Gadget));
    }
    for k in [&s1, &s2] {
        s.resources.insert(k.clone(), res(k, Kind::Sprocket));
    }
    (s, [W.to_string(), g1, g2, s1, s2])
}

#[test]
fn child_update_propagates_up_and_down_not_sideways() {
    let settings = Settings::default();
    let (mut s, [w, g1, g2, s1, s2]) = tree(&settings);
    let t0 = Instant::now();
    let mut failing = spec(OpKind::Patch, &g1);
    failing.fail_with = Some(OpError::new("ProvisioningFailed", "boom"));
    let id = s.start(failing, t0);
    for k in [&w, &g1, &s1] {
        assert_eq!(s.shown_state(k), State::Updating, "{k}");
    }
    for k in [&g2, &s2] {
        assert_eq!(s.shown_state(k), State::Succeeded, "{k}");
    }
    assert!(s.busy(&w) && s.busy(&g1) && s.busy(&s1) && !s.busy(&g2));
    s.advance(t0 + settings.op_duration);
    for k in [&w, &g1, &s1] {
        assert_eq!(s.shown_state(k), State::Failed, "{k}");
    }
    assert_eq!(s.shown_state(&g2), State::Succeeded);
    assert_eq!(s.ops[&id].status, OpStatus::Failed);
    assert!(s.ops[&id].end_time >= Some(s.ops[&id].start_time));
}

#[test]
fn parent_delete_cancels_children_and_removes_subtree() {
    let settings = Settings::default();
    let (mut s, [w, g1, _g2, s1, _]) = tree(&settings);
    let t0 = Instant::now();
    let child = s.start(spec(OpKind::Replace, &s1), t0);
    s.cancel_for_delete(&w);
    let del = s.start(spec(OpKind::Delete, &w), t0);
    assert_eq!(s.ops[&child].status, OpStatus::Canceled);
    assert_eq!(
        s.ops[&child].error.as_ref().map(|e| e.code.as_str()),
        Some("OperationCanceled")
    );
    assert_eq!(s.shown_state(&g1), State::Deleting);
    s.advance(t0 + settings.op_duration);
    assert!(s.resources.is_empty());
    assert_eq!(s.ops[&del].status, OpStatus::Succeeded);
}

#[test]
fn fault_knobs_change_propagation() {
    let settings = Settings::default().with_fault(Fault::NoPropagation);
    let (mut s, [w, g1, ..]) = tree(&settings);
    s.start(spec(OpKind::Patch, &w), Instant::now());
    assert_eq!(s.shown_state(&g1), State::Succeeded);

    let settings = Settings::default().with_fault(Fault::PropagateToSiblings);
    let (mut s, [_, g1, g2, ..]) = tree(&settings);
    s.start(spec(OpKind::Patch, &g1), Instant::now());
    assert_eq!(s.shown_state(&g2), State::Updating);
}

#[test]
fn advance_finalizes_in_deadline_order() {
    let settings = Settings::default();
    let (mut s, [w, ..]) = tree(&settings);
    let t0 = Instant::now();
    let r = s.start(spec(OpKind::Restart, &w), t0);
    s.advance(t0);
    assert_eq!(s.ops[&r].status, OpStatus::Running);
    s.advance(t0 + Duration::from_secs(5));
    assert_eq!(
        s.ops[&r].result,
        Some(json!({"restartCount": 1, "status": "Restarted"}))
    );
}

#[test]
fn hold_open_gate_counts_only_the_operations_own_reads() {
    let settings = Settings::default()
        .with_op_duration(Duration::ZERO)
        .with_complete_after_reads(2);
    let (mut s, [w, g1, ..]) = tree(&settings);
    let t0 = Instant::now();
    let id = s.start(spec(OpKind::Patch, &g1), t0);
    let later = t0 + Duration::from_secs(1);
    s.advance(later);
    s.observe(&id);
    s.observe_resource(&w);
    s.observe_resource(&g1); // the answer gave an operation URL: resource reads do not count
    s.advance(later);
    assert_eq!(s.ops[&id].status, OpStatus::Running);
    s.observe(&id);
    s.advance(later);
    assert_eq!(s.ops[&id].status, OpStatus::Succeeded);
    assert_eq!(s.shown_state(&w), State::Succeeded);
    let end = s.ops[&id].end_time.unwrap_or_default();
    assert!(end >= s.ops[&id].start_time + chrono::Duration::milliseconds(900));

    let mut resource_spec = spec(OpKind::Replace, &g1);
    resource_spec.resource_reads = true;
    let id = s.start(resource_spec, later);
    s.observe_resource(&w);
    s.observe_resource(&g1);
    s.advance(later);
    assert_eq!(s.ops[&id].status, OpStatus::Running);
    s.observe_resource(&g1);
    s.advance(later);
    assert_eq!(s.ops[&id].status, OpStatus::Succeeded);
}

#[test]
fn running_phases_follow_time_and_under_the_gate_reads() {
    let t0 = Instant::now();
    // Ungated: quarters of the duration alone.
    let settings = Settings::default().with_op_duration(Duration::from_millis(400));
    let (mut s, [_, g1, ..]) = tree(&settings);
    let id = s.start(spec(OpKind::Patch, &g1), t0);
    let at = |ms| t0 + Duration::from_millis(ms);
    let phases: Vec<u32> = [0, 150, 250]
        .map(|ms| s.ops[&id].running_phase(at(ms)))
        .into();
    assert_eq!(phases, [0, 1, 2]);
    // Gated: one read per step as well, whatever the time.
    let settings = Settings::default()
        .with_op_duration(Duration::ZERO)
        .with_complete_after_reads(3);
    let (mut s, [_, g1, ..]) = tree(&settings);
    let id = s.start(spec(OpKind::Patch, &g1), t0);
    let mut seen = vec![s.ops[&id].running_phase(t0)];
    for _ in 0..3 {
        s.observe(&id);
        seen.push(s.ops[&id].running_phase(t0));
    }
    assert_eq!(seen, [0, 0, 1, 2]);
}

#[test]
fn fast_operations_end_at_start_and_ignore_the_gate() {
    let settings = Settings::default()
        .with_variant(Variant::FastOperations)
        .with_complete_after_reads(5);
    let (mut s, [w, g1, ..]) = tree(&settings);
    let id = s.start(spec(OpKind::Delete, &g1), Instant::now());
    assert_eq!(s.ops[&id].status, OpStatus::Succeeded);
    assert!(!s.resources.contains_key(&g1));
    assert_eq!(s.shown_state(&w), State::Succeeded);
}

#[test]
fn hidden_creates_and_deletes() {
    let settings = Settings::default().with_variant(Variant::DeleteHidesAtOnce);
    let (mut s, [w, g1, ..]) = tree(&settings);
    let t0 = Instant::now();
    let id = s.start(spec(OpKind::Delete, &g1), t0);
    assert!(s.visible(&g1), "nested deletes stay visible");
    s.advance(t0 + settings.op_duration);
    assert_eq!(s.ops[&id].status, OpStatus::Succeeded);
    s.start(spec(OpKind::Delete, &w), t0);
    assert!(!s.visible(&w) && s.resources.contains_key(&w));
    let (mut s, [w, g1, _, s1, _]) = tree(&Settings::default());
    let mut create = spec(OpKind::Create, &g1);
    create.hidden = true;
    s.start(create, t0);
    assert!(s.visible(&w) && !s.visible(&g1) && !s.visible(&s1));
    assert!(s.hidden(&g1) && !s.hidden(&s1));
}

#[test]
fn narrow_propagation_faults() {
    let settings = Settings::default().with_fault(Fault::GrandparentNotUpdating);
    let (mut s, [w, g1, _, s1, _]) = tree(&settings);
    s.start(spec(OpKind::Patch, &s1), Instant::now());
    assert_eq!(s.shown_state(&g1), State::Updating);
    assert_eq!(s.shown_state(&w), State::Succeeded);

    let settings = Settings::default().with_fault(Fault::FailedUpdateChildrenStale);
    let (mut s, [w, g1, g2, s1, _]) = tree(&settings);
    let t0 = Instant::now();
    let mut failing = spec(OpKind::Patch, &w);
    failing.fail_with = Some(OpError::new("ProvisioningFailed", "boom"));
    s.start(failing, t0);
    assert_eq!(s.shown_state(&s1), State::Updating);
    s.advance(t0 + settings.op_duration);
    assert_eq!(s.shown_state(&w), State::Failed);
    for k in [&g1, &g2, &s1] {
        assert_eq!(s.shown_state(k), State::Succeeded, "{k}");
    }

    let settings = Settings::default().with_fault(Fault::ParentDeleteOrphans);
    let (mut s, [w, g1, _, s1, _]) = tree(&settings);
    let annotation = format!("{w}/providers/microsoft.contoso/annotations/a");
    s.resources
        .insert(annotation.clone(), res(&annotation, Kind::Annotation));
    s.remove_subtree(&w, Kind::Widget);
    assert!(!s.resources.contains_key(&w) && !s.resources.contains_key(&annotation));
    assert!(s.resources.contains_key(&g1) && s.resources.contains_key(&s1));
}
