//! Runs several tests read: under nextest every test is a process of its own, so a run kept in
//! a `OnceLock` is run again by each test that asks for it. [`shared_run`] runs it once per
//! build: the first test to ask runs it under a file lock, the others wait on the lock and read
//! the same reports. A run is keyed by its arguments, the binary and the suites and schemas it
//! reads, so an edited suite or a rebuilt binary never reads an old run.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A finished run whose reports are in `reports()`; read them, never write there.
pub struct SharedRun {
    pub dir: PathBuf,
    pub code: i32,
    pub stdout: String,
}

impl SharedRun {
    /// The run's report directory.
    pub fn reports(&self) -> PathBuf {
        self.dir.join("reports")
    }
}

/// Run `rpconform ARGS --report-dir …` once for every test (of any file) asking with the same
/// arguments, and give each the finished run. A run that did not write report.json panics in
/// the test that ran it; the next test to ask runs it again.
pub fn shared_run(args: &[&str], timeout: Duration) -> SharedRun {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared-runs");
    std::fs::create_dir_all(&base)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", base.display()));
    let dir = base.join(format!("{:016x}", key(args)));
    let lock = std::fs::File::create(dir.with_extension("lock"))
        .unwrap_or_else(|e| panic!("cannot create the lock of {}: {e}", dir.display()));
    // Held until this function returns (the lock goes with the file, and with the process).
    lock.lock()
        .unwrap_or_else(|e| panic!("cannot lock {}: {e}", dir.display()));
    let done = dir.join("done.json");
    if let Some(run) = std::fs::read_to_string(&done)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    {
        return SharedRun {
            code: run["code"].as_i64().unwrap_or(-1) as i32,
            stdout: run["stdout"].as_str().unwrap_or_default().to_string(),
            dir,
        };
    }
    // A run that ended half-way (its test was killed) is run again from nothing.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let reports = dir.join("reports").display().to_string();
    let mut full: Vec<&str> = args.to_vec();
    full.extend(["--report-dir", &reports]);
    let out = super::rpconform(&full, timeout);
    assert!(
        dir.join("reports/report.json").exists(),
        "no report.json from rpconform {}\n{}",
        full.join(" "),
        out.tail(3000)
    );
    let record = serde_json::json!({"code": out.code(), "stdout": out.stdout});
    std::fs::write(&done, record.to_string())
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", done.display()));
    SharedRun {
        code: out.code(),
        stdout: out.stdout,
        dir,
    }
}

/// What a run depends on: its arguments, the binary (by size and time), and every file of
/// the suites and schemas it reads.
fn key(args: &[&str]) -> u64 {
    let mut h = DefaultHasher::new();
    args.hash(&mut h);
    let exe = Path::new(env!("CARGO_BIN_EXE_rpconform"));
    if let Ok(m) = std::fs::metadata(exe) {
        m.len().hash(&mut h);
        m.modified().ok().hash(&mut h);
    }
    for tree in ["suites", "schemas"] {
        hash_tree(&super::root().join(tree), &mut h);
    }
    h.finish()
}

fn hash_tree(dir: &Path, h: &mut DefaultHasher) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        p.hash(h);
        if p.is_dir() {
            hash_tree(&p, h);
        } else if let Ok(bytes) = std::fs::read(&p) {
            bytes.hash(h);
        }
    }
}
