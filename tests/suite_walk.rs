//! Finding and reading suite and target files stays bounded: directory link loops end, deep
//! trees and FIFOs give clear errors, oversized files are refused before they are read, and
//! YAML aliases (billion laughs, merge keys) are refused, never expanded. Every run is bounded
//! in time and memory (`hostile::run_bounded`).

use crate::common;
use crate::hostile;

use std::time::Duration;

use common::Scratch;
use hostile::{Run, run_bounded};

const TINY: &str = r#"suite: tiny
scenarios:
  - name: one
    for_each_type: [any]
    steps:
      - name: get
        request: {method: GET, url: "${target.base_url}/x"}
        expect:
          - {status: 200, rule: RES-01}
"#;

fn check(label: &str, dir: &Scratch, extra: &[String]) -> Run {
    let mut args: Vec<String> = vec!["check".into()];
    args.extend(extra.iter().cloned());
    args.push("--schemas".into());
    args.push(common::schemas_dir().display().to_string());
    run_bounded(label, &args, &[], &dir.join("reports"))
}

fn assert_refused(r: &Run, needles: &[&str]) {
    let ctx = r.context();
    assert_eq!(r.code, Some(2), "a usage error\n{ctx}");
    for n in needles {
        assert!(r.stderr.contains(n), "stderr lacks `{n}`\n{ctx}");
    }
    assert!(!r.stderr.contains("panicked"), "{ctx}");
}

/// A file of about `mb` MB: a valid YAML start and then a long folded description.
fn big_yaml(dir: &Scratch, name: &str, head: &str, mb: usize) -> std::path::PathBuf {
    let mut text = String::with_capacity(mb * 1_000_000 + 1000);
    text.push_str(head);
    text.push_str("description: >\n");
    let line = "  lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\n";
    while text.len() < mb * 1_000_000 {
        text.push_str(line);
    }
    dir.write(name, &text)
}

#[cfg(unix)]
#[test]
fn two_links_to_itself_end_the_walk() {
    let dir = Scratch::new("walk-loop");
    let suites = dir.join("suites");
    std::fs::create_dir_all(suites.join("nested")).unwrap();
    std::fs::write(suites.join("tiny.yaml"), TINY).unwrap();
    std::os::unix::fs::symlink(&suites, suites.join("again")).unwrap();
    std::os::unix::fs::symlink(&suites, suites.join("nested/back")).unwrap();
    let r = check("walk-loop", &dir, &[suites.display().to_string()]);
    let ctx = r.context();
    assert!(r.elapsed < Duration::from_secs(20), "{ctx}");
    assert_eq!(r.code, Some(0), "{ctx}");
    assert!(r.stdout.contains("ok: 1 suite files"), "{ctx}");
}

#[test]
fn deep_directory_trees_are_refused() {
    let dir = Scratch::new("walk-deep");
    let mut deep = dir.join("suites");
    for i in 0..40 {
        deep = deep.join(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("tiny.yaml"), TINY).unwrap();
    let r = check("walk-deep", &dir, &[dir.str("suites")]);
    assert_refused(&r, &["nest deeper than 32 directories"]);
}

#[cfg(unix)]
#[test]
fn a_fifo_named_like_a_suite_does_not_block() {
    let dir = Scratch::new("walk-fifo");
    let suites = dir.join("suites");
    std::fs::create_dir_all(&suites).unwrap();
    std::fs::write(suites.join("tiny.yaml"), TINY).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(suites.join("pipe.yaml"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo is needed for this test");
    let r = check("walk-fifo", &dir, &[suites.display().to_string()]);
    assert!(r.elapsed < Duration::from_secs(20), "{}", r.context());
    assert_refused(&r, &["pipe.yaml", "not a regular file"]);
}

#[test]
fn a_50_mb_suite_is_refused_before_it_is_read() {
    let dir = Scratch::new("walk-big-suite");
    let big = big_yaml(&dir, "suites/big.yaml", "suite: big\n", 50);
    let r = check("walk-big-suite", &dir, &[dir.str("suites")]);
    let pos = format!("{}:1:1", big.display());
    assert_refused(&r, &[&pos, "over the limit of 4 MiB"]);
    assert!(r.peak_kb < 100 * 1024, "{}", r.context());
}

#[test]
fn a_50_mb_target_is_refused_before_it_is_read() {
    let dir = Scratch::new("walk-big-target");
    dir.write("suites/tiny.yaml", TINY);
    let big = big_yaml(&dir, "target.yaml", "base_url: http://127.0.0.1:1\n", 50);
    let r = check(
        "walk-big-target",
        &dir,
        &[
            dir.str("suites"),
            "--target".into(),
            big.display().to_string(),
        ],
    );
    assert_refused(&r, &["cannot read target file", "over the limit of 4 MiB"]);
    assert!(r.peak_kb < 100 * 1024, "{}", r.context());
}

#[test]
fn a_huge_body_file_is_refused() {
    let dir = Scratch::new("walk-body-file");
    let body = "[".to_string() + &"0,".repeat(3_000_000) + "0]";
    dir.write("suites/big-body.json", &body);
    dir.write(
        "suites/body.yaml",
        &TINY.replace(
            "request: {method: GET, url: \"${target.base_url}/x\"}",
            "request: {method: PUT, url: \"${target.base_url}/x\", body_file: big-body.json}",
        ),
    );
    let r = check("walk-body-file", &dir, &[dir.str("suites")]);
    assert_refused(&r, &["big-body.json", "over the limit of 4 MiB"]);
}

#[test]
fn yaml_aliases_and_merge_keys_are_refused_not_expanded() {
    let dir = Scratch::new("walk-aliases");
    // Billion laughs: nine levels of ten aliases each would be 10^9 strings.
    let mut laughs = String::from("suite: lol\nlol0: &l0 [\"lol\"]\n");
    for i in 1..10 {
        let refs: Vec<String> = (0..10).map(|_| format!("*l{}", i - 1)).collect();
        laughs.push_str(&format!("lol{i}: &l{i} [{}]\n", refs.join(", ")));
    }
    laughs.push_str("scenarios: *l9\n");
    dir.write("laughs/lol.yaml", &laughs);
    let merge = format!(
        "suite: merge\nbase: &base {{for_each_type: [any]}}\nscenarios:\n  - <<: *base\n{}",
        TINY.lines()
            .skip(3)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    dir.write("merge/merge.yaml", &merge);
    let undefined = "suite: undefined\nscenarios: *nowhere\n";
    dir.write("undefined/u.yaml", undefined);
    for (label, sub, pos) in [
        ("walk-laughs", "laughs", "lol.yaml:2:"),
        ("walk-merge", "merge", "merge.yaml:2:"),
        ("walk-undefined", "undefined", "u.yaml:2:"),
    ] {
        let r = check(label, &dir, &[dir.str(sub)]);
        assert!(r.elapsed < Duration::from_secs(20), "{}", r.context());
        assert!(r.peak_kb < 100 * 1024, "{}", r.context());
        assert_refused(&r, &[pos]);
        assert!(
            r.stderr.contains("anchors and aliases are not supported")
                || r.stderr.contains("invalid YAML"),
            "{}",
            r.context()
        );
    }
}

#[test]
fn invalid_utf8_is_positioned() {
    let dir = Scratch::new("walk-utf8");
    let mut bytes = b"suite: bad\nscenarios:\n  - name: x\xff\n".to_vec();
    bytes.extend_from_slice(b"    steps: []\n");
    let p = dir.join("suites/bad.yaml");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, bytes).unwrap();
    let r = check("walk-utf8", &dir, &[dir.str("suites")]);
    assert_refused(&r, &["bad.yaml:3:12", "not UTF-8"]);
}

#[test]
fn a_suite_just_under_the_limit_stays_bounded() {
    // The worst shape for the YAML loader per byte: a list of one-character items, 4 MB.
    let dir = Scratch::new("walk-dense");
    let mut text = String::from("suite: dense\nscenarios: []\nx:\n");
    while text.len() < 4_000_000 {
        text.push_str("- a\n");
    }
    dir.write("suites/dense.yaml", &text);
    let r = check("walk-dense", &dir, &[dir.str("suites")]);
    let ctx = r.context();
    assert!(r.elapsed < Duration::from_secs(30), "{ctx}");
    assert!(r.peak_kb < 512 * 1024, "{ctx}");
    assert_eq!(r.code, Some(2), "`x` is not a suite key\n{ctx}");
}
