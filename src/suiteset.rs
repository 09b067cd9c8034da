//! The suite set built into the binary, so that `cargo install` gives a tester that runs from
//! any directory.
//!
//! `build.rs` embeds every `suites/**/*.yaml` and `schemas/**/*.json` of the package. Before
//! the suite parser reads them they are written, once per suite set, into a cache directory
//! ([`materialize`]): `$RPCONFORM_CACHE_DIR`, else `$XDG_CACHE_HOME/rpconform`, else
//! `~/.cache/rpconform` (`~/Library/Caches/rpconform` on macOS, `%LOCALAPPDATA%\rpconform` on
//! Windows), else a private `rpconform-<uid>` folder in the temporary directory, each under the
//! set's [`ID`]:
//!
//! ```text
//! ~/.cache/rpconform/3f9c0d21a7b4/suites/etag.yaml ...
//! ~/.cache/rpconform/3f9c0d21a7b4/schemas/tracked-resource.json ...
//! ```
//!
//! So every position in an error names a real file the user can open. The copy is checked on
//! every use and rewritten where it differs from the binary's (a file edited or removed, one
//! added): edit a copy of the folder instead and pass it with `--suites DIR`. Files are written
//! to a temporary name and renamed into place, so runs started at the same time (CI partitions
//! on one machine) never read a half-written suite.
//!
//! [`merged_schemas`] gives `--schemas +DIR` one folder holding the base schemas and the added
//! ones (links to them on Unix, copies elsewhere), since suites name schemas by file name in a
//! single folder.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod generated {
    include!(concat!(env!("OUT_DIR"), "/suite_set.rs"));
}

pub use generated::{ID, SCHEMAS, SUITES};

/// What `rpconform --version` prints after the name: the crate version and the suite set
/// (its short hash and how many suites and schemas it holds).
pub const VERSION_LINE: &str = env!("RPCONFORM_VERSION_LINE");

/// `suite set 3f9c0d21a7b4 (12 suites, 7 schemas)`.
pub fn describe() -> String {
    format!(
        "suite set {ID} ({} suites, {} schemas)",
        SUITES.len(),
        SCHEMAS.len()
    )
}

/// The identity of a suite set from its files, as `build.rs` computes [`ID`]: FNV-1a over each
/// suite (`s`, its path relative to its folder, its length and text), then each schema (`j`,
/// likewise), in path order. The same files give the same twelve hex digits.
pub fn id_of_files(suites: &[(String, Vec<u8>)], schemas: &[(String, Vec<u8>)]) -> String {
    let mut bytes: Vec<u8> = Vec::new();
    for (kind, files) in [(b's', suites), (b'j', schemas)] {
        let mut sorted: Vec<&(String, Vec<u8>)> = files.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        for (rel, text) in sorted {
            bytes.push(kind);
            bytes.extend_from_slice(rel.as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
            bytes.extend_from_slice(text);
        }
    }
    crate::fingerprint::short(&bytes)
}

/// The identity of the suites a run loaded (`files`, each under one of the `roots` it was
/// given: a folder, or a suite file itself) and of the schema folder it used.
pub fn id_of_run(roots: &[PathBuf], files: &[PathBuf], schema_dir: &Path) -> io::Result<String> {
    let rel = |f: &Path| -> String {
        roots
            .iter()
            .filter(|r| r.is_dir())
            .find_map(|r| {
                let (r, f) = (r.canonicalize().ok()?, f.canonicalize().ok()?);
                f.strip_prefix(&r).ok().map(slashes)
            })
            .unwrap_or_else(|| {
                f.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
    };
    let mut suites = Vec::new();
    for f in files {
        suites.push((rel(f), std::fs::read(f)?));
    }
    let mut schemas = Vec::new();
    let mut stack = vec![schema_dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            let meta = std::fs::metadata(&p)?;
            if meta.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let r = p.strip_prefix(schema_dir).map(slashes).unwrap_or_default();
                schemas.push((r, std::fs::read(&p)?));
            }
        }
    }
    Ok(id_of_files(&suites, &schemas))
}

/// Where the embedded set was written.
#[derive(Debug, Clone)]
pub struct Materialized {
    /// `<cache>/<ID>`.
    pub root: PathBuf,
    /// `<root>/suites`.
    pub suites: PathBuf,
    /// `<root>/schemas`.
    pub schemas: PathBuf,
}

static DONE: OnceLock<Result<Materialized, String>> = OnceLock::new();

/// A suite or schema file as reports name it: relative to the suite set for the built-in set
/// (`suites/async-put.yaml`, not the cache folder), relative to the working directory for a
/// file under it, else as given — so CI annotations (JUnit `file=`, SARIF) point into the
/// repository that holds the suites.
pub fn shown_path(p: &Path) -> String {
    if let Some(Ok(m)) = DONE.get()
        && let Ok(rel) = p.strip_prefix(&m.root)
    {
        return slashes(rel);
    }
    if p.is_absolute()
        && let Ok(cwd) = std::env::current_dir()
        && let Ok(rel) = p.strip_prefix(&cwd)
    {
        return slashes(rel);
    }
    let s = p.display().to_string();
    s.strip_prefix("./").map(str::to_string).unwrap_or(s)
}

fn slashes(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The embedded set as files (written on first use in this process, checked against the
/// binary every time the process starts). The error lists every place tried and why each
/// failed.
pub fn materialize() -> Result<&'static Materialized, String> {
    DONE.get_or_init(|| {
        let mut why = Vec::new();
        for base in cache_roots() {
            match write_set(&base) {
                Ok(m) => return Ok(m),
                Err(e) => why.push(format!("{}: {e}", base.display())),
            }
        }
        Err(format!(
            "cannot write the built-in suites anywhere (set RPCONFORM_CACHE_DIR to a writable folder): {}",
            why.join("; ")
        ))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// Candidate cache folders, most preferred first.
fn cache_roots() -> Vec<PathBuf> {
    let env_dir = |k: &str| {
        std::env::var_os(k)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let mut out = Vec::new();
    if let Some(d) = env_dir("RPCONFORM_CACHE_DIR") {
        out.push(d);
    }
    if let Some(d) = env_dir("XDG_CACHE_HOME") {
        out.push(d.join("rpconform"));
    }
    if cfg!(windows) {
        if let Some(d) = env_dir("LOCALAPPDATA") {
            out.push(d.join("rpconform"));
        }
    } else if let Some(home) = env_dir("HOME") {
        if cfg!(target_os = "macos") {
            out.push(home.join("Library").join("Caches").join("rpconform"));
        }
        out.push(home.join(".cache").join("rpconform"));
    }
    out.push(temp_root());
    out
}

#[cfg(unix)]
fn temp_root() -> PathBuf {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    std::env::temp_dir().join(format!("rpconform-{uid}"))
}

#[cfg(not(unix))]
fn temp_root() -> PathBuf {
    std::env::temp_dir().join("rpconform")
}

/// Create `dir` (and its parents). A folder in the shared temporary directory must be ours
/// and writable only by us: another user could otherwise plant suites in it.
fn make_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    if dir.starts_with(temp_root()) {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let root = temp_root();
        let meta = std::fs::symlink_metadata(&root)?;
        // SAFETY: as above.
        let uid = unsafe { libc::geteuid() };
        if !meta.is_dir() || meta.uid() != uid {
            return Err(io::Error::other(format!(
                "{} is not a folder owned by this user",
                root.display()
            )));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

fn write_set(base: &Path) -> io::Result<Materialized> {
    let root = base.join(ID);
    let m = Materialized {
        suites: root.join("suites"),
        schemas: root.join("schemas"),
        root,
    };
    make_dir(&m.suites)?;
    make_dir(&m.schemas)?;
    sync_texts(&m.suites, SUITES)?;
    sync_texts(&m.schemas, SCHEMAS)?;
    Ok(m)
}

/// `rel` (`a/b.yaml`) under `dir`.
fn under(dir: &Path, rel: &str) -> PathBuf {
    rel.split('/').fold(dir.to_path_buf(), |p, s| p.join(s))
}

/// A name no other process picks: `.<name>.<pid>.<n>.tmp` beside `path`.
fn temp_beside(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Write `text` to `path` unless it already holds exactly that; atomically (rename).
fn put_text(path: &Path, text: &str) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::read(path).is_ok_and(|b| b == text.as_bytes())
    {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(path)?;
    }
    let tmp = temp_beside(path);
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Make `dir` hold exactly `files` (relative path → text): write what differs, remove what
/// is not in the set (a suite left there would be loaded). Temporary files of other processes
/// (`*.tmp`) are left alone.
fn sync_texts(dir: &Path, files: &[(&str, &str)]) -> io::Result<()> {
    for (rel, text) in files {
        put_text(&under(dir, rel), text)?;
    }
    let keep: Vec<PathBuf> = files.iter().map(|(rel, _)| under(dir, rel)).collect();
    prune(dir, &|p: &Path| {
        keep.iter().any(|k| k == p || k.starts_with(p))
    })
}

/// Remove every entry under `dir` that `wanted` refuses (and is not a `*.tmp` file).
fn prune(dir: &Path, wanted: &dyn Fn(&Path) -> bool) -> io::Result<()> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if wanted(&path) {
                if kind.is_dir() {
                    stack.push(path);
                }
                continue;
            }
            if kind.is_file() && path.extension().is_some_and(|e| e == "tmp") {
                continue;
            }
            if kind.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(())
}

/// One folder holding the files of `base` and then of each of `extra` (a later file of the
/// same name wins): links to them on Unix, copies elsewhere. It lives in the cache, named by a
/// hash of the folders' canonical paths, and is brought up to date on every call.
pub fn merged_schemas(base: &Path, extra: &[PathBuf]) -> Result<PathBuf, String> {
    merged_in(&materialize()?.root, base, extra)
}

fn merged_in(root: &Path, base: &Path, extra: &[PathBuf]) -> Result<PathBuf, String> {
    let mut wanted: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut key = String::new();
    for dir in std::iter::once(base).chain(extra.iter().map(PathBuf::as_path)) {
        let canon =
            std::fs::canonicalize(dir).map_err(|e| format!("schemas {}: {e}", dir.display()))?;
        if !canon.is_dir() {
            return Err(format!("schemas {}: not a folder", dir.display()));
        }
        key.push_str(&canon.to_string_lossy());
        key.push('\n');
        let entries =
            std::fs::read_dir(&canon).map_err(|e| format!("schemas {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if !name.starts_with('.') && path.is_file() {
                wanted.insert(name, path);
            }
        }
    }
    let dir = root.join(format!("schemas-{}", short_hash(key.as_bytes())));
    link_all(&dir, &wanted).map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
    Ok(dir)
}

fn link_all(dir: &Path, wanted: &BTreeMap<String, PathBuf>) -> io::Result<()> {
    make_dir(dir)?;
    for (name, source) in wanted {
        let dest = dir.join(name);
        #[cfg(unix)]
        {
            if std::fs::read_link(&dest).is_ok_and(|t| &t == source) {
                continue;
            }
            let tmp = temp_beside(&dest);
            std::os::unix::fs::symlink(source, &tmp)?;
            std::fs::rename(&tmp, &dest).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })?;
        }
        #[cfg(not(unix))]
        {
            let text = std::fs::read_to_string(source)?;
            put_text(&dest, &text)?;
        }
    }
    prune(dir, &|p: &Path| {
        p.file_name()
            .is_some_and(|n| wanted.contains_key(n.to_string_lossy().as_ref()))
    })
}

/// 12 hex digits of FNV-1a over `bytes` (names a folder; not a security measure).
fn short_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:012x}", h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(label: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "rpconform-suiteset-{label}-{}-{}",
            std::process::id(),
            short_hash(format!("{:?}", std::time::SystemTime::now()).as_bytes())
        ));
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    #[test]
    fn the_set_holds_the_packages_suites_and_schemas() {
        assert!(SUITES.iter().any(|(n, _)| *n == "etag.yaml"));
        assert!(SCHEMAS.iter().any(|(n, _)| *n == "tracked-resource.json"));
        assert!(
            SUITES
                .iter()
                .all(|(n, t)| n.ends_with(".yaml") && !t.is_empty())
        );
        assert_eq!(ID.len(), 12);
        assert!(VERSION_LINE.contains(ID), "{VERSION_LINE}");
        assert!(
            VERSION_LINE.contains(&format!("{} suites", SUITES.len())),
            "{VERSION_LINE}"
        );
    }

    #[test]
    fn writing_the_set_repairs_edits_removals_and_additions() {
        let base = scratch("sync");
        let m = write_set(&base).unwrap();
        let etag = m.suites.join("etag.yaml");
        let original = std::fs::read_to_string(&etag).unwrap();
        std::fs::write(&etag, "suite: edited\n").unwrap();
        std::fs::remove_file(m.schemas.join("tracked-resource.json")).unwrap();
        std::fs::write(m.suites.join("planted.yaml"), "suite: planted\n").unwrap();
        std::fs::create_dir_all(m.suites.join("sub")).unwrap();
        std::fs::write(m.suites.join("sub").join("x.yaml"), "suite: x\n").unwrap();
        std::fs::write(m.suites.join(".etag.yaml.1.0.tmp"), "in flight").unwrap();
        write_set(&base).unwrap();
        assert_eq!(std::fs::read_to_string(&etag).unwrap(), original);
        assert!(m.schemas.join("tracked-resource.json").is_file());
        assert!(!m.suites.join("planted.yaml").exists());
        assert!(!m.suites.join("sub").exists());
        assert!(
            m.suites.join(".etag.yaml.1.0.tmp").exists(),
            "others' temp files stay"
        );
        let mut names: Vec<String> = std::fs::read_dir(&m.suites)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".tmp"))
            .collect();
        names.sort();
        let mut want: Vec<String> = SUITES.iter().map(|(n, _)| n.to_string()).collect();
        want.sort();
        assert_eq!(names, want);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn merged_schemas_hold_the_base_and_the_added_files_later_ones_winning() {
        let a = scratch("merge-a");
        let b = scratch("merge-b");
        std::fs::write(a.join("one.json"), "{\"a\":1}").unwrap();
        std::fs::write(a.join("two.json"), "{\"a\":2}").unwrap();
        std::fs::write(b.join("two.json"), "{\"b\":2}").unwrap();
        std::fs::write(b.join("three.json"), "{\"b\":3}").unwrap();
        let root = scratch("merge-root");
        let dir = merged_in(&root, &a, std::slice::from_ref(&b)).unwrap();
        let read = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
        assert_eq!(read("one.json"), "{\"a\":1}");
        assert_eq!(read("two.json"), "{\"b\":2}");
        assert_eq!(read("three.json"), "{\"b\":3}");
        // A file removed from a source folder leaves the merged one too.
        std::fs::remove_file(b.join("three.json")).unwrap();
        let again = merged_in(&root, &a, std::slice::from_ref(&b)).unwrap();
        assert_eq!(again, dir);
        assert!(!dir.join("three.json").exists());
        assert!(merged_in(&root, &a, &[a.join("missing")]).is_err());
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&a);
        let _ = std::fs::remove_dir_all(&b);
    }

    #[test]
    fn the_identity_of_the_embedded_files_is_the_built_in_id() {
        let own = |files: &[(&str, &str)]| -> Vec<(String, Vec<u8>)> {
            files
                .iter()
                .map(|(r, t)| (r.to_string(), t.as_bytes().to_vec()))
                .collect()
        };
        assert_eq!(
            super::id_of_files(&own(super::SUITES), &own(super::SCHEMAS)),
            super::ID
        );
        let mut changed = own(super::SUITES);
        changed[0].1.push(b'\n');
        assert_ne!(
            super::id_of_files(&changed, &own(super::SCHEMAS)),
            super::ID
        );
        // Materialized, the same files read back give the same identity.
        let m = super::materialize().unwrap();
        let files: Vec<std::path::PathBuf> = super::SUITES
            .iter()
            .map(|(r, _)| m.suites.join(r))
            .collect();
        assert_eq!(
            super::id_of_run(std::slice::from_ref(&m.suites), &files, &m.schemas).unwrap(),
            super::ID
        );
    }
}
