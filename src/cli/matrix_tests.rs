//! Tests of the fault and variant matrices' planning.

use super::*;

fn found(must: &[&str], should: &[&str]) -> Found {
    Found {
        must: must.iter().map(|s| s.to_string()).collect(),
        should: should.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn a_fault_row_needs_every_named_rule_and_no_other() {
    let (row, ok) = fault_row(Some(Fault::ParentDeleteOrphans), &found(&["NEST-05"], &[]));
    assert!(!ok && row.contains("missed OPS-04"), "{row}");
    let (_, ok) = fault_row(
        Some(Fault::ParentDeleteOrphans),
        &found(&["NEST-05", "OPS-04"], &[]),
    );
    assert!(ok);
    // A fault fails only its own rules: another failed rule fails the row.
    let (row, ok) = fault_row(
        Some(Fault::ParentDeleteOrphans),
        &found(&["NEST-05", "OPS-04", "ERR-01"], &[]),
    );
    assert!(!ok && row.contains("also failed ERR-01"), "{row}");
    assert!(row.ends_with("| ERR-01 |"), "{row}");
    let (row, ok) = fault_row(None, &found(&[], &["HDR-03"]));
    assert!(!ok && row.contains("HDR-03"), "{row}");
    assert!(fault_row(None, &found(&[], &[])).1);
}

#[test]
fn under_the_combined_variants_their_departures_are_no_extra_and_others_are_shown() {
    let shown = Extras::Shown {
        departs: ["OPRES-09".to_string()].into_iter().collect(),
    };
    let f = found(&["NEST-05", "OPS-04"], &["OPRES-09"]);
    let (row, ok) = fault_row_with(Some(Fault::ParentDeleteOrphans), &f, "", &shown);
    assert!(ok && row.ends_with("|  |"), "{row}");
    let f = found(&["NEST-05", "OPS-04", "DEL-04"], &["OPRES-09"]);
    let (row, ok) = fault_row_with(Some(Fault::ParentDeleteOrphans), &f, "", &shown);
    assert!(
        ok && row.contains("also failed under the variants: DEL-04"),
        "{row}"
    );
    // A fault the variants hide is still a failure.
    let (_, ok) = fault_row_with(
        Some(Fault::ParentDeleteOrphans),
        &found(&["NEST-05"], &[]),
        "",
        &shown,
    );
    assert!(!ok);
}

#[test]
fn a_variant_row_allows_only_documented_should_failures() {
    let departs: BTreeSet<String> = ["DEL-02".to_string()].into_iter().collect();
    let job = |key: &str, minimal: bool| Job {
        key: key.into(),
        minimal,
        dir: "x".into(),
        ..Job::default()
    };
    let (row, ok) = variant_row(
        &job("no-retry-after", true),
        &departs,
        &found(&[], &["DEL-02"]),
    );
    assert!(ok && row.contains("✅ (--coverage min)"), "{row}");
    let x = job("x", false);
    let (row, ok) = variant_row(&x, &departs, &found(&[], &["OPRES-04"]));
    assert!(
        !ok && row.contains("undocumented SHOULD failures: OPRES-04"),
        "{row}"
    );
    let (row, ok) = variant_row(&x, &departs, &found(&["PUT-03"], &[]));
    assert!(!ok && row.contains("MUST failed: PUT-03"), "{row}");
    let mut broken = found(&[], &[]);
    broken.errors.push("t: deadline".into());
    assert!(!variant_row(&x, &departs, &broken).1);
}

#[test]
fn only_faults_on_undeclared_shapes_are_unobservable() {
    use crate::target::Scope;
    let yaml = crate::target::embedded_target_yaml("http://127.0.0.1:1");
    let t = crate::target::parse_target(Path::new("e.yaml"), &yaml, "embedded").unwrap();
    // The embedded target declares every kind of type a knob acts on.
    let missed: Vec<String> = Fault::all()
        .into_iter()
        .filter_map(|f| unobservable(f, &t).map(|why| format!("{f}: {why}")))
        .collect();
    assert!(missed.is_empty(), "{missed:?}");
    // Each shape knob becomes unobservable once its kind of type is gone, and says why.
    let without = |keep: &dyn Fn(&crate::target::ResourceType) -> bool| {
        let mut x = t.clone();
        x.types.retain(|ty| keep(ty));
        x
    };
    let cases: [(Fault, crate::target::Target); 4] = [
        (
            Fault::SubscriptionLevelWrongId,
            without(&|ty| ty.scope != Scope::Subscription),
        ),
        (
            Fault::ExtensionWrongType,
            without(&|ty| !matches!(ty.scope, Scope::Extension(_))),
        ),
        (
            Fault::LocationTypeNoRequestId,
            without(&|ty| ty.scope != Scope::Location),
        ),
        (
            Fault::NamespaceApiVersionMixup,
            without(&|ty| ty.namespace == t.namespace),
        ),
    ];
    for (f, target) in &cases {
        let why = unobservable(*f, target).unwrap_or_else(|| panic!("{f} still observable"));
        assert!(why.contains("declares no"), "{f}: {why}");
        // Other knobs stay observable on that target.
        assert!(unobservable(Fault::FlatError, target).is_none());
    }
}

#[test]
fn child_runs_get_the_knobs_and_never_the_matrix_flags() {
    let cli = <crate::cli::Cli as clap::Parser>::try_parse_from([
        "rpconform",
        "run",
        "--variant-matrix",
        "--hold-reads",
        "3",
        "--op-duration",
        "100",
        "--time-scale",
        "0.01",
        "--report-dir",
        "r",
        "--deadline",
        "10",
    ])
    .unwrap();
    let crate::cli::Command::Run(a) = cli.command else {
        panic!("not a run")
    };
    let job = Job {
        key: "k".into(),
        faults: vec![Fault::FlatError],
        variants: vec![Variant::SyncPatch, Variant::WeakEtags],
        minimal: true,
        dir: "r/x".into(),
        ..Job::default()
    };
    let v = child_args(&a, &[PathBuf::from("suites")], &[], &job).join(" ");
    assert!(
        v.starts_with("run suites --target embedded --strict"),
        "{v}"
    );
    assert!(v.contains("--fault flat-error"), "{v}");
    assert!(
        v.contains("--variant sync-patch --variant weak-etags"),
        "{v}"
    );
    assert!(
        v.contains("--hold-reads 3") && v.contains("--deadline 10"),
        "{v}"
    );
    assert!(v.contains("--coverage min"), "{v}");
    assert!(!v.contains("matrix"), "{v}");
    // Exact names replace the filters and the coverage choice.
    let named = Job {
        only: vec!["a::b::widgets".into(), "c::d::gizmos".into()],
        ..job
    };
    let v = child_args(&a, &[PathBuf::from("suites")], &["x".into()], &named).join(" ");
    assert!(
        v.contains("--filter a::b::widgets --filter c::d::gizmos --exact"),
        "{v}"
    );
    assert!(
        !v.contains("--filter x") && !v.contains("--coverage"),
        "{v}"
    );
}

#[test]
fn a_narrowed_row_keeps_the_tests_written_to_judge_its_rules() {
    let set = vec![
        (
            "a".to_string(),
            ["LOC-02".to_string(), "HDR-01".to_string()]
                .into_iter()
                .collect(),
        ),
        (
            "b".to_string(),
            ["HDR-01".to_string()].into_iter().collect(),
        ),
        (
            "c".to_string(),
            ["LOC-02".to_string()].into_iter().collect(),
        ),
    ];
    assert_eq!(judging(&set, Fault::RelativeLocation), ["a", "c"]);
}
