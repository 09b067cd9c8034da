//! What a command writes never replaces what it reads: an output path (`--har`, a report file
//! of `--report-dir`, `--write-target`, `init -o`, `report merge --out`) that names one of the
//! command's inputs (the target file, a suite, a schema, a spec, a recording, a shard) is a
//! usage error before anything is sent or written. "Names" means is the same file: through a
//! link, a hard link or another spelling of its path.

use std::path::{Path, PathBuf};

/// The files a report directory receives (`report::write_all`, the results stream, the
/// journal, the test durations, the matrices' pages).
const REPORT_FILES: &[&str] = &[
    crate::report::RESULTS_FILE,
    "report.json",
    "junit.xml",
    "summary.md",
    "conformance.md",
    "report.html",
    crate::report::SARIF_FILE,
    crate::runner::journal::FILE_NAME,
    crate::runner::harness::DURATIONS_FILE,
    "fault-matrix.md",
    "variant-matrix.md",
];

/// An input of a command: what it is (for the message) and where.
pub(super) struct Input {
    pub what: String,
    pub path: PathBuf,
}

impl Input {
    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>) -> Input {
        Input {
            what: what.into(),
            path: path.into(),
        }
    }
}

/// What a report directory `dir` holds once written: the folder itself and its files.
pub(super) fn report_files(dir: &Path) -> Vec<PathBuf> {
    std::iter::once(dir.to_path_buf())
        .chain(REPORT_FILES.iter().map(|f| dir.join(f)))
        .collect()
}

/// Who a file is, following links: (device, inode) on Unix, the canonical path elsewhere.
/// `None` when it does not exist (a file not there yet cannot be an input).
#[cfg(unix)]
fn identity(p: &Path) -> Option<(u64, u64, PathBuf)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(p).ok()?;
    Some((meta.dev(), meta.ino(), PathBuf::new()))
}

#[cfg(not(unix))]
fn identity(p: &Path) -> Option<(u64, u64, PathBuf)> {
    Some((0, 0, std::fs::canonicalize(p).ok()?))
}

/// A usage error when one of `outputs` (the option, the paths it writes) is one of `inputs`.
pub(super) fn refuse_overlap(
    outputs: &[(&str, Vec<PathBuf>)],
    inputs: &[Input],
) -> Result<(), String> {
    let known: Vec<(&Input, (u64, u64, PathBuf))> = inputs
        .iter()
        .filter_map(|i| identity(&i.path).map(|id| (i, id)))
        .collect();
    for (flag, paths) in outputs {
        for out in paths {
            let Some(id) = identity(out) else { continue };
            if let Some((input, _)) = known.iter().find(|(_, k)| *k == id) {
                return Err(format!(
                    "{flag} would write {}, which is {} ({}) this command reads; refused: choose another path",
                    out.display(),
                    input.what,
                    input.path.display()
                ));
            }
        }
    }
    Ok(())
}

/// The regular files directly in `dir` (schema folders: suites name schemas by file name).
pub(super) fn files_in(dir: &Path, what: &str) -> Vec<Input> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .map(|p| Input::new(what, p))
        .collect()
}

/// A target file and the specs its `openapi:` names (relative to it), read without the rest of
/// the file being checked: a file that does not parse gives only itself (its loading reports).
pub(super) fn target_inputs(path: &Path) -> Vec<Input> {
    let mut out = vec![Input::new("the target file", path)];
    let Ok(text) = crate::yaml::read_text(path, crate::yaml::MAX_SOURCE_BYTES) else {
        return out;
    };
    let file: std::sync::Arc<Path> = std::sync::Arc::from(path);
    let Ok(root) = crate::yaml::parse(&file, &text) else {
        return out;
    };
    let dir = path.parent().unwrap_or(Path::new(""));
    if let Some(specs) = crate::yaml::to_json(&root)
        .get("openapi")
        .and_then(|v| v.as_array())
    {
        out.extend(
            specs
                .iter()
                .filter_map(|s| s.as_str())
                .map(|s| Input::new("an OpenAPI spec of the target", dir.join(s))),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(label: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("rpconform-outputs-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Every spelling of an input is refused: the same path, another path to it, a link to it,
    /// a report folder holding it under a report's name, the report folder being it.
    #[test]
    fn an_output_that_is_an_input_by_any_name_is_refused() {
        let d = scratch("names");
        let target = d.join("target.yaml");
        std::fs::write(&target, "base_url: http://127.0.0.1:1\n").unwrap();
        std::fs::create_dir_all(d.join("sub")).unwrap();
        let inputs = vec![Input::new("the target file", &target)];
        let refused = |out: PathBuf| {
            let err = refuse_overlap(&[("--har", vec![out.clone()])], &inputs)
                .expect_err(&format!("{} accepted", out.display()));
            assert!(
                err.contains("--har") && err.contains("the target file"),
                "{err}"
            );
        };
        refused(target.clone());
        refused(d.join("sub").join("..").join("target.yaml"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&target, d.join("link.yaml")).unwrap();
            refused(d.join("link.yaml"));
            std::fs::hard_link(&target, d.join("hard.yaml")).unwrap();
            refused(d.join("hard.yaml"));
        }
        // A report folder whose report.json is an input; a report folder that is one.
        std::fs::write(d.join("sub").join("report.json"), "{}").unwrap();
        let shard = vec![Input::new("a shard", d.join("sub").join("report.json"))];
        assert!(refuse_overlap(&[("--out", report_files(&d.join("sub")))], &shard).is_err());
        assert!(refuse_overlap(&[("--report-dir", report_files(&target))], &inputs).is_err());
        // Paths that are not inputs pass, existing or not.
        let fine = [
            d.join("out.har"),
            d.join("sub"),
            d.join("sub").join("x.yaml"),
        ];
        for p in fine {
            assert!(refuse_overlap(&[("--har", vec![p])], &inputs).is_ok());
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_target_brings_its_specs_relative_to_itself() {
        let d = scratch("specs");
        let target = d.join("t.yaml");
        std::fs::write(&target, "openapi: [spec/a.json, b.json]\nbase_url: [\n").unwrap();
        // The file does not parse: only itself.
        assert_eq!(target_inputs(&target).len(), 1);
        std::fs::write(&target, "openapi: [spec/a.json, b.json]\n").unwrap();
        let got: Vec<PathBuf> = target_inputs(&target).into_iter().map(|i| i.path).collect();
        assert_eq!(
            got,
            vec![target.clone(), d.join("spec/a.json"), d.join("b.json")]
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
