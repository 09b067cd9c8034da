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
//! every use and its files rewritten where they differ from the binary's (edited or removed):
//! edit a copy of the folder instead and pass it with `--suites DIR`. A set folder that holds
//! what rpconform did not write (a file added, a link anywhere, the folder itself a link) is
//! left as it is and the set written to a folder beside it (`<ID>-1`...): the cache never
//! writes through a link out of itself, nor deletes what it did not write. Files are written
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

/// Tries of a folder name (`<ID>`, `<ID>-1`, ...) before the cache root is given up.
const CLAIM_TRIES: usize = 8;

fn write_set(base: &Path) -> io::Result<Materialized> {
    make_dir(base)?;
    let expected = set_entries();
    let root = claim(base, ID, &|root| {
        foreign_in(root, &|p, kind| {
            let rel = p.strip_prefix(root).unwrap_or(p);
            match expected.get(rel) {
                Some(want) => *want == kind,
                // Folders of merged schemas (`merged_schemas`) are checked when used.
                None => in_merged(rel, kind),
            }
        })
    })?;
    let m = Materialized {
        suites: root.join("suites"),
        schemas: root.join("schemas"),
        root,
    };
    for (dir, files) in [(&m.suites, SUITES), (&m.schemas, SCHEMAS)] {
        for (rel, text) in files {
            put_text(dir, &under(dir, rel), text)?;
        }
    }
    Ok(m)
}

/// `rel` is a folder of merged schemas (`schemas-<hash>`) or in one.
fn in_merged(rel: &Path, kind: Kind) -> bool {
    let mut parts = rel.components();
    let merged = parts
        .next()
        .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with("schemas-"));
    merged && (kind == Kind::Dir || parts.next().is_some())
}

/// What an entry of a cache folder is, never following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    File,
    Dir,
    Link,
}

fn kind_of(p: &Path) -> io::Result<Option<Kind>> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Ok(Some(Kind::Link)),
        Ok(m) if m.is_dir() => Ok(Some(Kind::Dir)),
        Ok(_) => Ok(Some(Kind::File)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Every path the set folder may hold (relative to it), and what it is.
fn set_entries() -> BTreeMap<PathBuf, Kind> {
    let mut out = BTreeMap::new();
    for (top, files) in [("suites", SUITES), ("schemas", SCHEMAS)] {
        out.insert(PathBuf::from(top), Kind::Dir);
        for (rel, _) in files {
            let file = under(Path::new(top), rel);
            for dir in file.ancestors().skip(1) {
                if !dir.as_os_str().is_empty() {
                    out.insert(dir.to_path_buf(), Kind::Dir);
                }
            }
            out.insert(file, Kind::File);
        }
    }
    out
}

/// The first folder of `name`, `name-1`, ... under `base` that is missing (then created) or
/// holds only what this process writes there (`foreign` says what else it holds). A folder
/// that is a link, or holds a link or a file rpconform did not write, is left untouched: the
/// cache never writes through a link out of itself nor deletes what it did not write.
fn claim(
    base: &Path,
    name: &str,
    foreign: &dyn Fn(&Path) -> io::Result<Option<PathBuf>>,
) -> io::Result<PathBuf> {
    let mut why = Vec::new();
    for n in 0..CLAIM_TRIES {
        let dir = match n {
            0 => base.join(name),
            n => base.join(format!("{name}-{n}")),
        };
        match kind_of(&dir)? {
            None => match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(dir),
                // Another process made it first: look at what it holds.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            },
            Some(Kind::Dir) => {}
            Some(_) => {
                why.push(format!("{} is not a folder", dir.display()));
                continue;
            }
        }
        if kind_of(&dir)? != Some(Kind::Dir) {
            why.push(format!("{} is not a folder", dir.display()));
            continue;
        }
        match foreign(&dir)? {
            None => return Ok(dir),
            Some(p) => why.push(format!("{} was not written by rpconform", p.display())),
        }
    }
    Err(io::Error::other(format!(
        "no folder of the cache is free ({})",
        why.join("; ")
    )))
}

/// The first entry under `dir` that `ours` does not accept (walked without following links);
/// temporary files of writers (`.*.tmp`) are always accepted.
fn foreign_in(dir: &Path, ours: &dyn Fn(&Path, Kind) -> bool) -> io::Result<Option<PathBuf>> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            let Some(kind) = kind_of(&path)? else {
                continue;
            };
            let temp = kind == Kind::File
                && path.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.starts_with('.') && n.ends_with(".tmp")
                });
            if temp {
                continue;
            }
            if !ours(&path, kind) {
                return Ok(Some(path));
            }
            if kind == Kind::Dir {
                stack.push(path);
            }
        }
    }
    Ok(None)
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

/// Write `text` to `path` (under the claimed folder `top`) unless it already holds exactly
/// that; atomically (rename). Folders on the way are created one by one, never through a link.
fn put_text(top: &Path, path: &Path, text: &str) -> io::Result<()> {
    if kind_of(path)? == Some(Kind::File) && std::fs::read(path).is_ok_and(|b| b == text.as_bytes())
    {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        own_dirs(top, parent)?;
    }
    let tmp = temp_beside(path);
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Create `dir` and the folders between `top` and it, refusing any that is a link.
fn own_dirs(top: &Path, dir: &Path) -> io::Result<()> {
    let rel = dir.strip_prefix(top).unwrap_or(Path::new(""));
    let mut at = top.to_path_buf();
    for part in std::iter::once(None).chain(rel.components().map(Some)) {
        if let Some(part) = part {
            at.push(part);
        }
        match kind_of(&at)? {
            Some(Kind::Dir) => {}
            None => match std::fs::create_dir(&at) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            },
            Some(_) => {
                return Err(io::Error::other(format!(
                    "{} is not a folder rpconform wrote",
                    at.display()
                )));
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
    let name = format!("schemas-{}", short_hash(key.as_bytes()));
    let dir = link_all(root, &name, &wanted)
        .map_err(|e| format!("cannot write {}: {e}", root.join(&name).display()))?;
    Ok(dir)
}

/// The merged folder: on Unix it holds only links this process makes (a file in it is not
/// ours), elsewhere only copies of the wanted files. Links to files no longer wanted are
/// removed (removing a link never touches what it points to).
fn link_all(root: &Path, name: &str, wanted: &BTreeMap<String, PathBuf>) -> io::Result<PathBuf> {
    let made = if cfg!(unix) { Kind::Link } else { Kind::File };
    let dir = claim(root, name, &|dir| {
        foreign_in(dir, &|p, kind| {
            kind == made
                && (made == Kind::Link
                    || p.file_name()
                        .is_some_and(|n| wanted.contains_key(n.to_string_lossy().as_ref())))
        })
    })?;
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
            put_text(&dir, &dest, &text)?;
        }
    }
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let keep = path
            .file_name()
            .is_some_and(|n| wanted.contains_key(n.to_string_lossy().as_ref()));
        if !keep && kind_of(&path)? == Some(Kind::Link) {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(dir)
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

    /// The names of the regular files in `dir` (temporary files aside).
    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".tmp"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writing_the_set_repairs_its_own_files_in_place() {
        let base = scratch("sync");
        let m = write_set(&base).unwrap();
        let etag = m.suites.join("etag.yaml");
        let original = std::fs::read_to_string(&etag).unwrap();
        std::fs::write(&etag, "suite: edited\n").unwrap();
        std::fs::remove_file(m.schemas.join("tracked-resource.json")).unwrap();
        std::fs::write(m.suites.join(".etag.yaml.1.0.tmp"), "in flight").unwrap();
        let again = write_set(&base).unwrap();
        assert_eq!(again.root, m.root);
        assert_eq!(std::fs::read_to_string(&etag).unwrap(), original);
        assert!(m.schemas.join("tracked-resource.json").is_file());
        assert!(
            m.suites.join(".etag.yaml.1.0.tmp").exists(),
            "others' temp files stay"
        );
        let mut want: Vec<String> = SUITES.iter().map(|(n, _)| n.to_string()).collect();
        want.sort();
        assert_eq!(names_in(&m.suites), want);
        let _ = std::fs::remove_dir_all(&base);
    }

    /// Whatever the set folder holds that rpconform did not write (a file or folder added, a
    /// link anywhere in it, the folder itself a link) stays as it is, and nothing is written
    /// through a link: the set goes to a folder of its own beside it.
    #[test]
    fn the_cache_never_deletes_what_it_did_not_write_nor_follows_a_link() {
        let base = scratch("foreign");
        let mine = scratch("users-own");
        std::fs::write(mine.join("notes.yaml"), "mine\n").unwrap();
        std::fs::write(mine.join("etag.yaml"), "my etag\n").unwrap();
        let m = write_set(&base).unwrap();
        type Spoil<'a> = Box<dyn Fn(&Materialized) + 'a>;
        let cases: Vec<(&str, Spoil<'_>)> = vec![
            (
                "an added file",
                Box::new(|m| std::fs::write(m.suites.join("planted.yaml"), "x\n").unwrap()),
            ),
            (
                "an added folder",
                Box::new(|m| std::fs::create_dir_all(m.suites.join("sub")).unwrap()),
            ),
            #[cfg(unix)]
            (
                "suites a link to the user's folder",
                Box::new(|m: &Materialized| {
                    std::fs::remove_dir_all(&m.suites).unwrap();
                    std::os::unix::fs::symlink(&mine, &m.suites).unwrap();
                }),
            ),
            #[cfg(unix)]
            (
                "a suite a link to the user's file",
                Box::new(|m: &Materialized| {
                    let etag = m.suites.join("etag.yaml");
                    std::fs::remove_file(&etag).unwrap();
                    std::os::unix::fs::symlink(mine.join("etag.yaml"), &etag).unwrap();
                }),
            ),
            #[cfg(unix)]
            (
                "the set folder a link to the user's folder",
                Box::new(|m: &Materialized| {
                    std::fs::remove_dir_all(&m.root).unwrap();
                    std::os::unix::fs::symlink(&mine, &m.root).unwrap();
                }),
            ),
        ];
        for (what, make) in cases {
            let _ = std::fs::remove_dir_all(&base);
            std::fs::create_dir_all(&base).unwrap();
            let first = write_set(&base).unwrap();
            assert_eq!(first.root, m.root, "{what}");
            make(&first);
            let before: Vec<(PathBuf, Kind)> = walk(&base);
            let again = write_set(&base).unwrap();
            assert_ne!(again.root, first.root, "{what}: the folder was taken");
            let after: Vec<(PathBuf, Kind)> = walk(&base)
                .into_iter()
                .filter(|(p, _)| !p.starts_with(&again.root))
                .collect();
            assert_eq!(
                before, after,
                "{what}: something outside the new folder changed"
            );
            assert_eq!(names_in(&mine), vec!["etag.yaml", "notes.yaml"], "{what}");
            assert_eq!(
                std::fs::read_to_string(mine.join("etag.yaml")).unwrap(),
                "my etag\n",
                "{what}"
            );
            assert!(again.suites.join("etag.yaml").is_file(), "{what}");
            // A second use finds the new folder its own.
            assert_eq!(write_set(&base).unwrap().root, again.root, "{what}");
        }
        let _ = std::fs::remove_dir_all(&base);
        let _ = std::fs::remove_dir_all(&mine);
    }

    /// Every entry under `dir`, without following links, sorted.
    fn walk(dir: &Path) -> Vec<(PathBuf, Kind)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let kind = kind_of(&e.path()).unwrap().unwrap();
                if kind == Kind::Dir {
                    stack.push(e.path());
                }
                out.push((e.path(), kind));
            }
        }
        out.sort();
        out
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
        // The merged folder made a link to a user's folder: left alone, another one is used.
        #[cfg(unix)]
        {
            let mine = scratch("merge-users-own");
            std::fs::write(mine.join("keep.json"), "{}").unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
            std::os::unix::fs::symlink(&mine, &dir).unwrap();
            let other = merged_in(&root, &a, std::slice::from_ref(&b)).unwrap();
            assert_ne!(other, dir);
            assert_eq!(names_in(&mine), vec!["keep.json"]);
            assert_eq!(
                std::fs::read_to_string(other.join("two.json")).unwrap(),
                "{\"b\":2}"
            );
            let _ = std::fs::remove_dir_all(&mine);
        }
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
