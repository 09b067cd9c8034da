//! What several subcommands share: loading suites (a checkout's, given folders, or the
//! built-in set), telling suite paths from name filters, finding the schemas, the tokio runtime, and the usage-error exit.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::report::EXIT_USAGE;
use crate::scenario::{LoadOptions, Suite, load_suites};

/// Print a usage error; the exit code for it.
pub(super) fn usage(msg: impl std::fmt::Display) -> u8 {
    eprintln!("error: {msg}");
    EXIT_USAGE
}

/// Split positional arguments into suite paths (they exist) and name filters (they do not),
/// then apply `--suites`: `--suites DIR` replaces the default set (like a positional path),
/// `--suites +DIR` adds to it (or to the given paths). The default set is `./suites` when it is
/// a folder (a checkout), else the suites built into the binary ([`crate::suiteset`]). A
/// positional `suites` that does not exist names that default set too, so the README's
/// commands work outside a checkout. A `--suites` path that does not exist is kept: loading
/// reports it.
pub(super) fn paths_and_filters(
    args: &[PathBuf],
    suites: &[String],
) -> (Vec<PathBuf>, Vec<String>) {
    suite_paths(args, suites, true)
}

/// [`paths_and_filters`]; `note` says on stderr when the built-in set is used and where it is.
pub(super) fn suite_paths(
    args: &[PathBuf],
    suites: &[String],
    note: bool,
) -> (Vec<PathBuf>, Vec<String>) {
    let mut paths = Vec::new();
    let mut added = Vec::new();
    let mut filters = Vec::new();
    for a in args {
        if a.exists() {
            paths.push(a.clone());
        } else if a
            .components()
            .eq([std::path::Component::Normal("suites".as_ref())])
        {
            // The default set, wherever it comes from.
        } else {
            filters.push(a.display().to_string());
        }
    }
    for s in suites {
        match s.strip_prefix('+') {
            Some(p) => added.push(PathBuf::from(p)),
            None => paths.push(PathBuf::from(s)),
        }
    }
    if paths.is_empty() {
        paths.push(default_suites(note));
    }
    paths.extend(added);
    (paths, filters)
}

/// `./suites` in a checkout, else the built-in set as files in the cache.
fn default_suites(note: bool) -> PathBuf {
    let local = PathBuf::from("suites");
    if local.is_dir() {
        return local;
    }
    match crate::suiteset::materialize() {
        Ok(m) => {
            if note {
                eprintln!(
                    "note: no ./suites here; using the built-in {} from {}",
                    crate::suiteset::describe(),
                    m.suites.display()
                );
            }
            m.suites.clone()
        }
        Err(e) => {
            // Loading then says that `suites` does not exist, after this reason.
            eprintln!("error: {e}");
            local
        }
    }
}

/// The schema folder: `--schemas DIR` (at most one) replaces the default, each
/// `--schemas +DIR` adds its files (a later file of the same name wins; see
/// [`crate::suiteset::merged_schemas`]). The default is `./schemas` when it is a folder, else
/// `schemas/` beside a suites folder, else the built-in schemas.
pub(super) fn schema_dir(given: &[String], paths: &[PathBuf]) -> Result<PathBuf, String> {
    let mut replace: Vec<PathBuf> = Vec::new();
    let mut added: Vec<PathBuf> = Vec::new();
    for g in given {
        match g.strip_prefix('+') {
            Some(p) => added.push(PathBuf::from(p)),
            None => replace.push(PathBuf::from(g)),
        }
    }
    if replace.len() > 1 {
        return Err(
            "one `--schemas DIR` replaces the schemas; add folders with `--schemas +DIR`".into(),
        );
    }
    for d in replace.iter().chain(&added) {
        if !d.is_dir() {
            return Err(format!("--schemas {}: no such folder", d.display()));
        }
    }
    let base = match replace.pop() {
        Some(d) => d,
        None => default_schemas(paths)?,
    };
    if added.is_empty() {
        Ok(base)
    } else {
        crate::suiteset::merged_schemas(&base, &added)
    }
}

fn default_schemas(paths: &[PathBuf]) -> Result<PathBuf, String> {
    let local = PathBuf::from("schemas");
    if local.is_dir() {
        return Ok(local);
    }
    // Next to the suites: <suites>/../schemas (the built-in set's cache is laid out so).
    for p in paths {
        let base = if p.is_dir() {
            p.clone()
        } else {
            p.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let cand = base.join("..").join("schemas");
        if cand.is_dir() {
            return Ok(cand);
        }
    }
    Ok(crate::suiteset::materialize()?.schemas.clone())
}

pub(super) fn load(paths: &[PathBuf], schemas: &[String]) -> Result<Vec<Arc<Suite>>, u8> {
    let opts = LoadOptions {
        schema_dir: schema_dir(schemas, paths).map_err(usage)?,
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

/// The identity of the suites and schemas a run loaded (as `--version` names the built-in
/// set's), so a report names the set that ran, not the one built in.
pub(super) fn suite_set_of(
    paths: &[PathBuf],
    schemas: &[String],
    suites: &[Arc<Suite>],
) -> Result<String, u8> {
    let dir = schema_dir(schemas, paths).map_err(usage)?;
    let files: Vec<PathBuf> = suites.iter().map(|s| s.path.clone()).collect();
    crate::suiteset::id_of_run(paths, &files, &dir).map_err(|e| {
        usage(format!(
            "cannot read the suites back to name their set: {e}"
        ))
    })
}

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// One line to stdout, ignoring a closed pipe (see `outln!`).
pub(crate) fn out_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_fmt(args).and_then(|()| o.write_all(b"\n"));
}

/// Text to stdout, ignoring a closed pipe (see `out!`).
pub(crate) fn out_text(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_fmt(args).and_then(|()| o.flush());
}

/// Print a line to stdout without ever panicking (a closed pipe is not the command's problem).
pub(super) fn out(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{text}");
}

/// Print a line to stderr without ever panicking: a closed stderr is not the command's problem
/// (`run` goes on to clean up and write its reports).
pub(super) fn err(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The client a cleanup command talks to the target with: its own origin only, within the
/// command's deadline.
pub(super) fn http_for(
    target: &crate::target::Target,
    a: &super::args::CleanupArgs,
) -> Result<crate::target::Connection, String> {
    let opts = crate::http::HttpOptions {
        request_timeout: std::time::Duration::from_secs(a.request_timeout.max(1)),
        insecure: a.insecure,
        // Cleanup only ever talks to the target's own origin.
        follow_foreign: false,
        limits: target.limits(None),
        throttle_budget: std::time::Duration::from_secs(a.deadline.max(1)),
        ..Default::default()
    };
    target.connect(opts)
}

/// A URL's origin (`scheme://host[:port]`), lowercase.
pub(super) fn origin_of(url: &str) -> Option<String> {
    crate::http::parse_url(url)
        .ok()
        .map(|u| u.origin().ascii_serialization().to_ascii_lowercase())
}
