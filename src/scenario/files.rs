//! Finding suite files under the paths given on the command line, within bounds.
//!
//! Directory symlinks are followed (a suites folder may link in a shared one), but every
//! directory is visited once, by its canonical path: a link back to an ancestor or two links
//! to the same folder end the walk there instead of looping. The walk also stops with a clear
//! error past [`MAX_DEPTH`] levels, [`MAX_DIRS`] directories or [`MAX_SUITE_FILES`] files.
//! Only regular files are taken (a FIFO named `x.yaml` would block the reader); reading them
//! is bounded per file ([`crate::yaml::MAX_SOURCE_BYTES`]) and in all ([`MAX_TOTAL_BYTES`]),
//! see `load_suites`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Deepest directory nesting walked under a suites path.
pub const MAX_DEPTH: usize = 32;
/// Most directories walked under all suites paths.
pub const MAX_DIRS: usize = 10_000;
/// Most suite files loaded in one run.
pub const MAX_SUITE_FILES: usize = 10_000;
/// Most bytes of suite files loaded in one run.
pub const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;

fn is_suite(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// Every `*.yaml` / `*.yml` under the given paths (files or directories), sorted.
pub fn suite_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut dirs = 0usize;
    for p in paths {
        let meta = std::fs::metadata(p)
            .map_err(|_| format!("{}: no such file or directory", p.display()))?;
        if meta.is_file() {
            out.push(p.clone());
        } else if meta.is_dir() {
            walk(p, &mut seen, &mut dirs, &mut out)?;
        } else {
            return Err(format!(
                "{}: not a regular file or directory (a FIFO, socket or device)",
                p.display()
            ));
        }
        if out.len() > MAX_SUITE_FILES {
            return Err(too_many_files(p));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn too_many_files(p: &Path) -> String {
    format!(
        "{}: more than {MAX_SUITE_FILES} suite files; point rpconform at the suites folder",
        p.display()
    )
}

fn walk(
    root: &Path,
    seen: &mut HashSet<PathBuf>,
    dirs: &mut usize,
    out: &mut Vec<PathBuf>,
) -> Result<(), String> {
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let canonical = std::fs::canonicalize(&dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        if !seen.insert(canonical) {
            // Visited already, through a link (a loop, or two links to one folder).
            continue;
        }
        if depth > MAX_DEPTH {
            return Err(format!(
                "{}: suites nest deeper than {MAX_DEPTH} directories",
                dir.display()
            ));
        }
        *dirs += 1;
        if *dirs > MAX_DIRS {
            return Err(format!(
                "{}: more than {MAX_DIRS} directories under the suites paths; point rpconform at the suites folder",
                root.display()
            ));
        }
        let rd =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let mut entries: Vec<(PathBuf, std::fs::FileType)> = rd
            .flatten()
            .filter_map(|e| Some((e.path(), e.file_type().ok()?)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        // Real directories are pushed last, so they are walked before links to them: a
        // folder reached both ways is listed under its own name.
        let (mut real, mut linked) = (Vec::new(), Vec::new());
        for (path, kind) in entries {
            // Follow a link to see what it points at; a dangling one named *.yaml is kept,
            // so reading it says what is wrong.
            let target = if kind.is_symlink() {
                std::fs::metadata(&path).ok().map(|m| m.file_type())
            } else {
                Some(kind)
            };
            match target {
                Some(t) if t.is_dir() => {
                    if kind.is_symlink() {
                        linked.push(path);
                    } else {
                        real.push(path);
                    }
                }
                Some(t) if t.is_file() && is_suite(&path) => out.push(path),
                None if is_suite(&path) => out.push(path),
                Some(_) if is_suite(&path) => {
                    return Err(format!(
                        "{}: not a regular file (a FIFO, socket or device)",
                        path.display()
                    ));
                }
                _ => {}
            }
            if out.len() > MAX_SUITE_FILES {
                return Err(too_many_files(root));
            }
        }
        for d in linked.into_iter().rev().chain(real.into_iter().rev()) {
            stack.push((d, depth + 1));
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_to_itself_are_walked_once() {
        let d = std::env::temp_dir().join(format!("rpconform-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("a.yaml"), "suite: a\n").unwrap();
        std::fs::write(d.join("sub/b.yml"), "suite: b\n").unwrap();
        symlink(&d, d.join("loop1")).unwrap();
        symlink(&d, d.join("sub/loop2")).unwrap();
        symlink(d.join("sub"), d.join("again")).unwrap();
        let files = suite_files(std::slice::from_ref(&d)).unwrap();
        assert_eq!(files.len(), 2, "{files:?}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
