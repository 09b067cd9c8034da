use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::scenario::{LoadOptions, expand, parse_suite};
use crate::target::{embedded_target_yaml, parse_target};

const SUITE: &str = r#"
suite: demo
scenarios:
  - name: get-only
    for_each_type: [tracked]
    steps:
      - request: {method: GET, url: "${target.provider_url}/widgets"}
        expect: [{status: 200, rule: RES-05}]
  - name: delete-flow
    for_each_type: [tracked]
    steps:
      - create: {as: r}
      - name: del
        request: {method: DELETE, url: "${r.url}"}
        expect: [{status: [200, 202, 204], rule: DEL-01}]
      - poll: del
  - name: rows
    steps:
      - request: {method: GET, url: "${target.provider_url}/operations"}
        expect: [{status: 200, rule: "${row.rule}"}]
    table:
      - {name: one, rule: API-01}
      - {name: two, rule: API-03}
  - name: hcp-only
    steps:
      - request: {method: GET, url: "${target.provider_url}/x"}
        expect: [{status: 404, rule: OPS-01}]
"#;

fn setup(profiles: &str) -> (Vec<Instance>, Target) {
    let yaml = embedded_target_yaml("http://127.0.0.1:1/").replace(
        "profiles: [arm, propagation, aro-hcp, azure-core-lro, task-api, subscription-lifecycle, resource-move]",
        profiles,
    );
    let target = parse_target(Path::new("t.yaml"), &yaml, "t").expect("embedded target");
    let opts = LoadOptions {
        schema_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas"),
    };
    let suite = parse_suite(Path::new("demo.yaml"), SUITE, &opts).expect("suite parses");
    (expand(&[Arc::new(suite)], &target), target)
}

fn names(v: &[Instance]) -> Vec<&str> {
    v.iter().map(|i| i.name.as_str()).collect()
}

#[test]
fn a_row_states_its_own_rule_and_actions_imply_theirs() {
    let (all, _) = setup("profiles: [arm, aro-hcp]");
    let one = all.iter().find(|i| i.name == "demo::rows::one").unwrap();
    assert_eq!(stated_rules(one), ["API-01"]);
    let del = all
        .iter()
        .find(|i| i.name.starts_with("demo::delete-flow"))
        .unwrap();
    assert_eq!(stated_rules(del), ["DEL-01"]);
}

#[test]
fn engine_rules_follow_what_the_steps_can_show() {
    let (all, target) = setup("profiles: [arm, aro-hcp]");
    let get = all
        .iter()
        .find(|i| i.name.starts_with("demo::get-only"))
        .unwrap();
    let j = judges(get, &target);
    assert!(j.contains(&"HDR-01") && j.contains(&"RES-05"), "{j:?}");
    assert!(!j.contains(&"LOC-02") && !j.contains(&"PUT-03"), "{j:?}");
    let del = all
        .iter()
        .find(|i| i.name.starts_with("demo::delete-flow"))
        .unwrap();
    let j = judges(del, &target);
    for id in [
        "LOC-02", "DEL-02", "DEL-03", "DEL-04", "PUT-03", "OPRES-01", "HDR-01",
    ] {
        assert!(j.contains(&id), "{id} in {j:?}");
    }
    assert!(!j.contains(&"PATCH-02") && !j.contains(&"MON-01"), "{j:?}");
}

#[test]
fn every_engine_rule_has_a_known_trigger() {
    // A new engine rule lands in `Shows::Any` unless listed: make sure the families whose
    // rules need more than an answer are all listed.
    for id in crate::rules::engine_rules() {
        let s = shows(id);
        match crate::rules::family_of(id) {
            "PUT" | "PATCH" | "AAO" | "OPRES" => assert_ne!(s, Shows::Any, "{id}"),
            "MON" | "TASK" | "RGDEL" => assert_eq!(s, Shows::Stated, "{id}"),
            _ => {}
        }
    }
}

#[test]
fn rule_selection_keeps_the_tests_that_judge_the_rule() {
    let (all, target) = setup("profiles: [arm]");
    let sel = Selection::new(vec![], false, vec![], &["loc-02".into()], &[], &[]).unwrap();
    let kept = select(all.clone(), &sel, &target).unwrap();
    assert!(!kept.is_empty());
    assert!(
        kept.iter().all(|i| i.name.starts_with("demo::delete-flow")),
        "{:?}",
        names(&kept)
    );
    let sel = Selection::new(vec![], false, vec![], &[], &["API".into()], &[]).unwrap();
    assert_eq!(
        names(&select(all.clone(), &sel, &target).unwrap()),
        ["demo::rows::one", "demo::rows::two"]
    );
    // Several name filters: any matches; with a rule, both must match.
    let sel = Selection::new(
        vec!["rows::one".into(), "get-only".into()],
        false,
        vec![],
        &["HDR-01".into()],
        &[],
        &[],
    )
    .unwrap();
    let kept = select(all.clone(), &sel, &target).unwrap();
    assert!(kept.iter().any(|i| i.name == "demo::rows::one"));
    assert!(kept.iter().any(|i| i.name.starts_with("demo::get-only")));
    assert!(!kept.iter().any(|i| i.name.starts_with("demo::delete-flow")));
}

#[test]
fn rules_of_undeclared_profiles_select_nothing_and_say_why() {
    let (all, target) = setup("profiles: [arm]");
    let hcp = all.iter().find(|i| i.name == "demo::hcp-only").unwrap();
    assert!(hcp.not_applicable.is_some());
    let sel = Selection::new(vec![], false, vec![], &["OPS-01".into()], &[], &[]).unwrap();
    let e = select(all.clone(), &sel, &target).unwrap_err();
    assert!(e.contains("aro-hcp") && e.contains("not declared"), "{e}");
    let (all, target) = setup("profiles: [arm, aro-hcp]");
    let kept = select(all, &sel, &target).unwrap();
    assert_eq!(names(&kept), ["demo::hcp-only"]);
}

#[test]
fn bad_selectors_and_empty_name_matches_are_errors() {
    assert!(Selection::new(vec![], false, vec![], &["LOC-99".into()], &[], &[]).is_err());
    let e = Selection::new(vec![], false, vec![], &["LOC-2".into()], &[], &[]).unwrap_err();
    assert!(e.contains("did you mean"), "{e}");
    assert!(Selection::new(vec![], false, vec![], &[], &["NOPE".into()], &[]).is_err());
    assert!(Selection::new(vec![], false, vec![], &[], &[], &["aro".into()]).is_err());
    let (all, target) = setup("profiles: [arm]");
    let sel = Selection::new(vec!["zzz".into()], false, vec![], &[], &[], &[]).unwrap();
    assert!(
        select(all.clone(), &sel, &target)
            .unwrap_err()
            .contains("`zzz`")
    );
    let sel = Selection::new(vec!["demo::rows::one".into()], true, vec![], &[], &[], &[]).unwrap();
    assert_eq!(
        names(&select(all.clone(), &sel, &target).unwrap()),
        ["demo::rows::one"]
    );
    let sel = Selection::new(vec![], false, vec!["rows".into()], &[], &[], &[]).unwrap();
    assert!(
        !names(&select(all, &sel, &target).unwrap())
            .iter()
            .any(|n| n.contains("rows"))
    );
}
