//! Errors of `target_from_openapi`: each names the file and, where there is one, the line and
//! column or the JSON Pointer of the object holding a bad `$ref`. A missing example file is a
//! TODO, not an error.

use super::support::*;
use rpconform::init::{InitError, InitOptions, target_from_openapi};

#[test]
fn errors_name_the_file_and_place() {
    let dir = scratch_dir("errors");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let run = |p: &std::path::Path| {
        target_from_openapi(&[p.to_path_buf()], &InitOptions::default()).unwrap_err()
    };

    let e = target_from_openapi(&[], &InitOptions::default()).unwrap_err();
    assert!(matches!(e, InitError::NoSpecs));

    // An alias bomb ends in an error, quickly.
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            vec![format!("*a{}", i - 1); 10].join(", ")
        ));
    }
    bomb.push_str("swagger: \"2.0\"\npaths: *a9\n");
    let bomb = write("bomb.yaml", &bomb);
    let started = std::time::Instant::now();
    let e = run(&bomb).to_string();
    assert!(e.starts_with(&format!("{}:", bomb.display())), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    let missing = dir.join("nope.json");
    let e = run(&missing).to_string();
    assert!(
        e.contains("nope.json") && e.starts_with("cannot read"),
        "{e}"
    );

    let bad = write(
        "bad.json",
        "{\n  \"swagger\": \"2.0\",\n  \"paths\": {,}\n}\n",
    );
    let e = run(&bad).to_string();
    assert!(e.contains("bad.json:3:"), "{e}");

    let bad_yaml = write("bad.yaml", "swagger: \"2.0\"\npaths:\n  - a\n  b: c\n");
    let e = run(&bad_yaml).to_string();
    assert!(e.contains("bad.yaml:"), "{e}");

    let not_oas = write("plain.json", "{\"hello\": 1}");
    assert!(matches!(run(&not_oas), InitError::NotOpenApi { .. }));

    let none = write(
        "none.json",
        r#"{"swagger": "2.0", "info": {"version": "2024-01-01"}, "paths": {"/providers/X.Y/operations": {"get": {"responses": {}}}}}"#,
    );
    let e = run(&none);
    assert!(matches!(e, InitError::NoResourceTypes { .. }), "{e}");
    assert!(e.to_string().contains("none.json"));

    let put = |body_ref: &str| {
        format!(
            r##"{{"swagger": "2.0", "info": {{"version": "2024-01-01"}}, "paths": {{"/subscriptions/{{s}}/resourceGroups/{{rg}}/providers/X.Y/things/{{n}}": {{"put": {{"parameters": [{{"name": "b", "in": "body", "schema": {{"$ref": "{body_ref}"}}}}], "responses": {{"200": {{}}}}}}}}}},
              "definitions": {{"Loop": {{"$ref": "#/definitions/Loop2"}}, "Loop2": {{"$ref": "#/definitions/Loop"}}}}}}"##
        )
    };
    let dangling = write("dangling.json", &put("#/definitions/Nope"));
    let e = run(&dangling);
    let s = e.to_string();
    assert!(matches!(e, InitError::Ref { .. }), "{s}");
    assert!(
        s.contains("dangling.json#/paths/") && s.contains("#/definitions/Nope"),
        "{s}"
    );

    let other_file = write("other.json", &put("./shared/defs.json#/definitions/Thing"));
    let s = run(&other_file).to_string();
    assert!(
        s.contains("defs.json")
            && s.contains("referenced from")
            && s.contains("other.json#/paths/"),
        "{s}"
    );

    let cycle = write("cycle.json", &put("#/definitions/Loop"));
    let s = run(&cycle).to_string();
    assert!(s.contains("cycle"), "{s}");

    // A malformed example file is an error naming it; a missing one is only a TODO.
    let ex = write(
        "ex.json",
        r#"{"swagger": "2.0", "info": {"version": "2024-01-01"}, "paths": {"/subscriptions/{s}/resourceGroups/{rg}/providers/X.Y/things/{n}": {"put": {"parameters": [{"name": "b", "in": "body", "schema": {"type": "object"}}], "responses": {"200": {}}, "x-ms-examples": {"broken": {"$ref": "./examples/broken.json"}}}}}}"#,
    );
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    std::fs::write(dir.join("examples/broken.json"), "{\"parameters\": ").unwrap();
    let s = run(&ex).to_string();
    assert!(s.contains("broken.json:1:"), "{s}");
    std::fs::remove_file(dir.join("examples/broken.json")).unwrap();
    let out = target_from_openapi(&[ex], &InitOptions::default()).unwrap();
    assert!(
        out.todos.iter().any(|t| t.contains("broken.json")),
        "{:?}",
        out.todos
    );
    parse_checked(&out.yaml);
}

/// A `$ref` to something that is no regular file (/dev/zero: endless; a FIFO: a read that
/// never returns) is refused at once, and a YAML spec nested very deep is refused before the
/// YAML reader (quadratic on it) starts.
#[test]
fn refs_to_devices_and_fifos_and_deep_yaml_are_refused_quickly() {
    let dir = scratch_dir("hostile-refs");
    let put = |body_ref: &str| {
        format!(
            r##"{{"swagger": "2.0", "info": {{"version": "2024-01-01"}}, "paths": {{"/subscriptions/{{s}}/resourceGroups/{{rg}}/providers/X.Y/things/{{n}}": {{"put": {{"parameters": [{{"name": "b", "in": "body", "schema": {{"$ref": "{body_ref}"}}}}], "responses": {{"200": {{}}}}}}}}}}}}"##
        )
    };
    let run = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let started = std::time::Instant::now();
        let e = target_from_openapi(&[p], &InitOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{name}: took {:?}",
            started.elapsed()
        );
        e
    };
    let e = run("zero.json", put("/dev/zero#/definitions/X"));
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let fifo = dir.join("fifo.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let e = run("via-fifo.json", put("./fifo.json#/definitions/X"));
        assert!(
            e.contains("fifo.json") && e.contains("not a regular file"),
            "{e}"
        );
    }
    let mut deep = String::from("swagger: \"2.0\"\npaths:\n  ");
    deep.push_str(&"- ".repeat(100_000));
    deep.push_str("x\n");
    let e = run("deep.yaml", deep);
    assert!(
        e.contains("deep.yaml:") && e.contains("nests deeper"),
        "{e}"
    );
    let mut flow = String::from("swagger: \"2.0\"\npaths: ");
    flow.push_str(&"[".repeat(100_000));
    let e = run("flow.yaml", flow);
    assert!(
        e.contains("flow.yaml:2:") && e.contains("nests deeper"),
        "{e}"
    );
}
