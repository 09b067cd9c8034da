//! Tests of `plan`: what one test will send, and `--coverage min`'s choices.

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::scenario::{LoadOptions, expand, parse_suite};
use crate::target::{Target, embedded_target_yaml, parse_target};

const SUITE: &str = r#"
suite: demo
scenarios:
  - name: deep-create
    for_each_type: [any]
    steps:
      - create: {as: r}
      - request: {url: "${r.url}"}
        expect: [{status: 200, rule: PUT-04}]
  - name: rows
    for_each_type: [tracked]
    table:
      - {name: a, fixed: true}
      - {name: b, fixed: false}
    steps:
      - if: "${row.fixed}"
        not_applicable: "row a ends here"
      - create: {as: r}
      - if: "${row.fixed}"
        request: {method: PUT, url: "${r.url}"}
      - request: {url: "${r.url}"}
        expect: [{status: 200, rule: PUT-04}]
  - name: cheap-read
    for_each_type: [tracked]
    steps:
      - create: {as: r}
      - request: {url: "${r.url}"}
"#;

fn setup() -> (Vec<Instance>, Target) {
    let yaml = embedded_target_yaml("http://127.0.0.1:1/");
    let target = parse_target(Path::new("t.yaml"), &yaml, "t").expect("embedded target");
    let opts = LoadOptions {
        schema_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas"),
    };
    let suite = parse_suite(Path::new("demo.yaml"), SUITE, &opts).expect("suite parses");
    (expand(&[Arc::new(suite)], &target), target)
}

fn find<'a>(all: &'a [Instance], name: &str) -> &'a Instance {
    all.iter().find(|i| i.name == name).unwrap_or_else(|| {
        panic!(
            "no {name} among {:?}",
            all.iter().map(|i| &i.name).collect::<Vec<_>>()
        )
    })
}

const T: Timing = Timing {
    operation_seconds: 1.0,
    retry_after_seconds: 10.0,
    min_reads: 3,
    time_scale: 1.0,
};

#[test]
fn a_create_counts_the_parents_it_needs_and_its_polls() {
    let (all, target) = setup();
    // A sprocket lives under a gadget under a widget: three PUTs, each followed.
    let c = estimate(find(&all, "demo::deep-create::sprockets"), &target, &T);
    assert_eq!(c.puts, 3);
    assert_eq!(c.by_type.values().sum::<u64>(), 3);
    assert_eq!(c.by_type.get("sprockets"), Some(&1));
    // Each followed PUT: the write, 3 polls (held for 3 reads) each reading the resource too,
    // a final read; then the read; then cleanup deletes (each followed).
    assert!(c.requests > 3 * (1 + 3 * 2 + 1), "{c:?}");
    assert!(c.wait_seconds >= 3.0 * 30.0, "{c:?}");
    let top = estimate(find(&all, "demo::deep-create::widgets"), &target, &T);
    assert_eq!(top.puts, 1);
}

#[test]
fn a_condition_known_before_the_run_is_decided() {
    let (all, target) = setup();
    let a = estimate(find(&all, "demo::rows::widgets::a"), &target, &T);
    assert!(
        a.not_applicable,
        "row a ends not applicable before it sends anything"
    );
    assert_eq!((a.puts, a.requests), (0, 0));
    let b = estimate(find(&all, "demo::rows::widgets::b"), &target, &T);
    assert!(!b.not_applicable);
    // Row b skips the guarded PUT: its create only.
    assert_eq!(b.puts, 1);
}

#[test]
fn coverage_min_keeps_a_stating_test_per_shape_and_the_cheapest() {
    let (all, target) = setup();
    let t = T;
    let cost = |i: &Instance| {
        let c = estimate(i, &target, &t);
        (!c.not_applicable).then_some(c.puts)
    };
    let (kept, cov) = minimal(all.clone(), &target, &["PUT-04"], cost);
    assert_eq!(cov.of, all.len());
    assert!(kept.len() < all.len());
    // PUT-04 is stated: only a test that states it covers it, never `cheap-read`; the
    // statically not-applicable row covers nothing.
    assert!(
        kept.iter().all(|i| !i.name.contains("cheap-read")),
        "{:?}",
        names(&kept)
    );
    assert!(
        kept.iter().all(|i| !i.name.contains("rows::widgets::a")),
        "{:?}",
        names(&kept)
    );
    // Of two stating tests on the widgets' shape, the plain create is as cheap as the row.
    let widgets: Vec<&str> = names(&kept)
        .into_iter()
        .filter(|n| n.contains("::widgets"))
        .collect();
    assert_eq!(widgets.len(), 1, "{widgets:?}");
    // Every left-out test that states PUT-04 has a stand-in.
    let stood: usize = cov.stand_ins.iter().map(|s| s.stands_in_for.len()).sum();
    assert!(stood > 0, "{cov:?}");
}

fn names(v: &[Instance]) -> Vec<&str> {
    v.iter().map(|i| i.name.as_str()).collect()
}
