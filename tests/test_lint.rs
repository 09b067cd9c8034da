//! A review of the test code itself, for the shapes of a test that cannot fail:
//!
//! - **`.all(...)` asserted over a collection that may be empty** (vacuously true): the
//!   collection's emptiness must be checked (`is_empty()`, `len()`) in the dozen lines before;
//! - **`if let` around assertions with no `else`**: when the pattern does not match, the
//!   assertions never run and the test passes; the `else` must say what that means (fail, or
//!   why it is fine);
//! - **`let _ =` discarding a result**: only where the failure is not the test's business
//!   (stopping a child, cleaning a scratch directory, a test server's writes to a client that
//!   went away...), listed in [`DISCARD_OK`]; anything else is asserted or `expect`ed.
//!
//! It reads every Rust file under `tests/` and `refrp/tests/`, and the unit-test files beside
//! the code (`src/**/*_tests.rs`, `src/**/tests.rs`). A finding names file and line.

use crate::common;

use std::path::{Path, PathBuf};

/// Calls whose failure a test may ignore (`let _ = <call>`): teardown, and I/O with a peer
/// that may legitimately have gone away.
const DISCARD_OK: &[&str] = &[
    ".kill()",
    ".wait()",
    "remove_dir_all",
    "remove_file",
    "create_dir_all",
    "Command::new(\"kill\")",
    ".write_all(",
    "write!(",
    ".flush()",
    ".shutdown(",
    ".read(",
    ".read_exact(",
    ".read_to_end(",
    "read_to_string(",
    "set_read_timeout",
    "set_nonblocking",
    ".send(",
    "symlink(",
    "std::fs::write(",
    "axum::serve(",
    "serve_connection(",
    "serve(stream",
    // A test server waiting for its client to go away, and servers stopped at teardown.
    "tokio::time::timeout(",
    "stopped.await",
    "server.await",
    "\"--stop\"",
    ".join()",
    "tx.send",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn test_files() -> Vec<PathBuf> {
    let root = common::root();
    let mut all = Vec::new();
    rust_files(&root.join("tests"), &mut all);
    rust_files(&root.join("refrp/tests"), &mut all);
    let mut src = Vec::new();
    rust_files(&root.join("src"), &mut src);
    rust_files(&root.join("refrp/src"), &mut src);
    all.extend(src.into_iter().filter(|p| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        name.is_some_and(|n| n.ends_with("_tests.rs") || n == "tests.rs")
    }));
    all.sort();
    all
}

/// The identifier an `.all(` is called on, in `ident.iter().all(` or `ident.all(`.
fn collection_of(line: &str) -> Option<String> {
    let at = line.find(".all(")?;
    let head = line[..at]
        .trim_end_matches(".iter()")
        .trim_end_matches(".into_iter()");
    let ident: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!ident.is_empty() && !ident.chars().all(|c| c.is_ascii_digit())).then_some(ident)
}

/// The line a method chain ending on line `i` starts at, and the chain up to line `i` as one
/// line: lines that start with `.` continue the line before them.
fn chain_of(lines: &[&str], i: usize) -> (usize, String) {
    let mut start = i;
    while start > 0 && lines[start].trim_start().starts_with('.') {
        start -= 1;
    }
    let joined = lines[start..=i]
        .iter()
        .map(|l| l.trim())
        .collect::<String>();
    (start, joined)
}

/// `.all(` inside an assertion over a collection whose emptiness nothing nearby checks.
fn vacuous_all(lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.contains(".all(") {
            continue;
        }
        // A method chain split over lines (`plain\n.monitors\n.iter()\n.all(`) is read as one.
        let (start, joined) = chain_of(lines, i);
        // Within an assertion: the chain's first line or one of the two before opens it.
        let from = start.saturating_sub(2);
        if !lines[from..=i].iter().any(|l| l.contains("assert")) {
            continue;
        }
        let Some(ident) = collection_of(&joined) else {
            continue;
        };
        // The dozen lines before, and the rest of the statement.
        let near = &lines[i.saturating_sub(12)..(i + 3).min(lines.len())];
        let checked = near.iter().any(|l| {
            l.contains(&format!("{ident}.is_empty()"))
                || l.contains(&format!("{ident}.len()"))
                || l.contains(&format!("{ident}.first()"))
                || l.contains(&format!("{ident}[0]"))
                || l.contains(&format!("{ident}.iter().any("))
        });
        if !checked {
            out.push((
                i + 1,
                format!("`{ident}.all(...)` asserted with no check that `{ident}` is not empty"),
            ));
        }
    }
    out
}

/// `if let` blocks holding assertions, with no `else`.
fn if_let_without_else(lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if !t.starts_with("if let ") {
            continue;
        }
        // The block: from the first `{` at or after this line to its matching `}`.
        let mut depth = 0i32;
        let mut opened = false;
        let mut body = String::new();
        let mut after = String::new();
        'scan: for (j, l) in lines.iter().enumerate().skip(i) {
            for (k, c) in l.char_indices() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => {
                        depth -= 1;
                        if opened && depth == 0 {
                            after = l[k + 1..].to_string();
                            if after.trim().is_empty() {
                                after = lines.get(j + 1).map_or(String::new(), |s| s.to_string());
                            }
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
            body.push_str(l);
            body.push('\n');
        }
        let asserts = body.contains("assert");
        if asserts && !after.trim_start().starts_with("else") {
            out.push((
                i + 1,
                "`if let` around assertions with no `else`: when it does not match, nothing is checked".into(),
            ));
        }
    }
    out
}

/// `let _ =` discarding what is not in [`DISCARD_OK`].
fn discarded(lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(at) = line.find("let _ = ") else {
            continue;
        };
        // The statement, up to its `;` (a few lines at most).
        let mut stmt = line[at..].to_string();
        let mut j = i + 1;
        while !stmt.contains(';') && j < lines.len() && j < i + 6 {
            stmt.push_str(lines[j].trim());
            j += 1;
        }
        if !DISCARD_OK.iter().any(|ok| stmt.contains(ok)) {
            out.push((
                i + 1,
                format!("`{}` discards a result a test should check", stmt.trim()),
            ));
        }
    }
    out
}

#[test]
fn no_test_can_pass_vacuously() {
    let files = test_files();
    assert!(files.len() > 40, "found only {} test files", files.len());
    let root = common::root();
    let mut findings = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        // This file's own examples are not findings.
        if f.ends_with("tests/test_lint.rs") {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        let shown = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        for (line, why) in vacuous_all(&lines)
            .into_iter()
            .chain(if_let_without_else(&lines))
            .chain(discarded(&lines))
        {
            findings.push(format!("{shown}:{line}: {why}"));
        }
    }
    assert!(
        findings.is_empty(),
        "{} finding(s):\n{}",
        findings.len(),
        findings.join("\n")
    );
}

#[test]
fn the_lint_finds_each_shape() {
    let vacuous = [
        "    let xs: Vec<u8> = Vec::new();",
        "    assert!(xs.iter().all(|x| *x > 0));",
    ];
    assert_eq!(vacuous_all(&vacuous).len(), 1);
    let guarded = [
        "    assert!(!xs.is_empty());",
        "    assert!(xs.iter().all(|x| *x > 0));",
    ];
    assert!(vacuous_all(&guarded).is_empty());
    // A chain split over lines is the same shape.
    let split = [
        "    assert!(",
        "        plain",
        "            .monitors",
        "            .iter()",
        "            .all(|m| m.ok)",
        "    );",
    ];
    assert_eq!(vacuous_all(&split).len(), 1, "{:?}", vacuous_all(&split));
    let split_guarded = [
        "    assert!(!plain.monitors.is_empty());",
        "    assert!(",
        "        plain",
        "            .monitors",
        "            .iter()",
        "            .all(|m| m.ok)",
        "    );",
    ];
    assert!(vacuous_all(&split_guarded).is_empty());
    let silent = [
        "    if let Some(x) = maybe {",
        "        assert_eq!(x, 1);",
        "    }",
        "    done();",
    ];
    assert_eq!(if_let_without_else(&silent).len(), 1);
    let said = [
        "    if let Some(x) = maybe {",
        "        assert_eq!(x, 1);",
        "    } else {",
        "        panic!(\"no x\");",
        "    }",
    ];
    assert!(if_let_without_else(&said).is_empty());
    assert_eq!(discarded(&["    let _ = parse(\"x\");"]).len(), 1);
    assert!(discarded(&["    let _ = child.kill();"]).is_empty());
}
