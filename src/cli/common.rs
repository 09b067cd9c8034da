//! What several subcommands share: loading suites, telling suite paths from name filters,
//! finding the schemas, the tokio runtime, and the usage-error exit.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::EXIT_USAGE;
use crate::scenario::{LoadOptions, Suite, load_suites};

/// Print a usage error; the exit code for it.
pub(super) fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error: {msg}");
    EXIT_USAGE
}

/// Split positional arguments into suite paths (they exist) and name filters (they do not).
pub(super) fn paths_and_filters(args: &[PathBuf]) -> (Vec<PathBuf>, Vec<String>) {
    let mut paths = Vec::new();
    let mut filters = Vec::new();
    for a in args {
        if a.exists() {
            paths.push(a.clone());
        } else {
            filters.push(a.display().to_string());
        }
    }
    if paths.is_empty() {
        paths.push(PathBuf::from("suites"));
    }
    (paths, filters)
}

pub(super) fn schema_dir(given: &Path, paths: &[PathBuf]) -> PathBuf {
    if given.is_dir() {
        return given.to_path_buf();
    }
    // Next to the suites: <suites>/../schemas.
    for p in paths {
        let base = if p.is_dir() {
            p.clone()
        } else {
            p.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let cand = base.join("..").join("schemas");
        if cand.is_dir() {
            return cand;
        }
    }
    given.to_path_buf()
}

pub(super) fn load(paths: &[PathBuf], schemas: &Path) -> Result<Vec<Arc<Suite>>, u8> {
    let opts = LoadOptions {
        schema_dir: schema_dir(schemas, paths),
    };
    match load_suites(paths, &opts) {
        Ok(s) => Ok(s.into_iter().map(Arc::new).collect()),
        Err(report) => {
            eprint!("{}", report.render());
            eprintln!(
                "error: {} problem(s) in the suites; nothing was run",
                report.len()
            );
            Err(EXIT_USAGE)
        }
    }
}

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}
