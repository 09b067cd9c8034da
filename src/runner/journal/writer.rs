//! Writing a journal: one `write(2)` per line on a file opened for appending, made durable by
//! a background thread within a second and at the end of the run; the first failure is
//! remembered and refuses further PUTs.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use super::lines::{Header, Line, file_for, now};
use super::read::{find, process_alive, read};
use crate::runner::tracked::Tracked;

/// Told once, when the journal first fails to write.
type OnFailure = Box<dyn Fn(&str) + Send + Sync>;

/// How a URL is written (secrets masked, see [`token_mask`]).
type Masker = Box<dyn Fn(&str) -> String + Send + Sync>;

/// A journal being written.
pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
    dirty: Arc<AtomicBool>,
    /// Why the journal could not be written (the first failure), once it could not.
    failed: std::sync::OnceLock<String>,
    on_failure: std::sync::OnceLock<OnFailure>,
    masker: std::sync::OnceLock<Masker>,
}

impl Journal {
    /// Start `dir/journal-<run id>.jsonl` for a new run (a file of its own: another run in the
    /// same directory keeps writing its own). Returns the journals of earlier runs there that
    /// still list resources not confirmed gone (for a warning); those of earlier runs that
    /// ended with nothing outstanding are removed.
    pub fn create(dir: &Path, header: &Header) -> std::io::Result<(Arc<Journal>, Vec<PathBuf>)> {
        std::fs::create_dir_all(dir)?;
        let path = file_for(dir, &header.run_id);
        let mut earlier = Vec::new();
        for old in find(dir).unwrap_or_default() {
            match read(&old) {
                // Another run writing to this directory now: its own to clean.
                Ok(o) if !o.ended && process_alive(o.header.pid) => {}
                Ok(o) if o.ended && o.is_empty() && o.damaged.is_empty() => {
                    let _ = std::fs::remove_file(&old);
                }
                Ok(o) if o.is_empty() => {}
                _ => earlier.push(old),
            }
        }
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)?;
        let j = Self::start(path, file);
        j.write(&Line::Run(header.clone()));
        j.sync();
        if let Some(e) = j.failure() {
            return Err(std::io::Error::other(e));
        }
        Ok((j, earlier))
    }

    /// Append to an existing journal (`rpconform cleanup`).
    pub fn append(path: &Path) -> std::io::Result<Arc<Journal>> {
        // A run killed in the middle of a write leaves a torn last line: end it first, so the
        // next line stands on its own.
        let torn = {
            let mut f = File::open(path)?;
            let len = f.metadata()?.len();
            let mut last = [0u8; 1];
            len > 0 && {
                use std::io::{Read, Seek, SeekFrom};
                f.seek(SeekFrom::Start(len - 1))?;
                f.read_exact(&mut last)?;
                last[0] != b'\n'
            }
        };
        let mut file = OpenOptions::new().append(true).open(path)?;
        if torn {
            file.write_all(b"\n")?;
        }
        Ok(Self::start(path.to_path_buf(), file))
    }

    /// A journal writing to `file` (opened for appending), named `path`.
    pub(crate) fn start(path: PathBuf, file: File) -> Arc<Journal> {
        let j = Arc::new(Journal {
            path,
            file: Mutex::new(file),
            dirty: Arc::new(AtomicBool::new(false)),
            failed: std::sync::OnceLock::new(),
            on_failure: std::sync::OnceLock::new(),
            masker: std::sync::OnceLock::new(),
        });
        let weak: Weak<Journal> = Arc::downgrade(&j);
        // Durable within a second of any write; the thread ends with the journal.
        let _ = std::thread::Builder::new()
            .name("journal-sync".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(Duration::from_millis(500));
                    let Some(j) = weak.upgrade() else { return };
                    if j.dirty.swap(false, Ordering::SeqCst) {
                        j.sync_now();
                    }
                }
            });
        j
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the journal cannot be written, once a write or sync failed.
    pub fn failure(&self) -> Option<&str> {
        self.failed.get().map(String::as_str)
    }

    /// Write every URL through `f` from now on (see [`token_mask`]).
    pub fn set_masker(&self, f: impl Fn(&str) -> String + Send + Sync + 'static) {
        let _ = self.masker.set(Box::new(f));
    }

    /// A URL as written: without userinfo, through the masker.
    fn shown(&self, url: &str) -> String {
        let u = crate::http::without_userinfo(url);
        match self.masker.get() {
            Some(f) => f(&u),
            None => u,
        }
    }

    /// Call `f` with the reason when the journal first fails.
    pub fn on_failure(&self, f: impl Fn(&str) + Send + Sync + 'static) {
        let _ = self.on_failure.set(Box::new(f));
    }

    fn fail(&self, what: &str, e: &std::io::Error) {
        let why = format!("cannot {what} the journal {}: {e}", self.path.display());
        if self.failed.set(why.clone()).is_ok()
            && let Some(f) = self.on_failure.get()
        {
            f(&why);
        }
    }

    fn write(&self, line: &Line) {
        let Ok(mut text) = serde_json::to_string(line) else {
            return;
        };
        text.push('\n');
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // One write for the whole line. A failure is remembered: the run creates nothing
        // more (see `failure`), and says so.
        if let Err(e) = f.write_all(text.as_bytes()) {
            drop(f);
            self.fail("write", &e);
            return;
        }
        self.dirty.store(true, Ordering::SeqCst);
    }

    fn sync_now(&self) {
        let f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // A full disk may show only here (delayed allocation).
        if let Err(e) = f.sync_data() {
            drop(f);
            self.fail("sync", &e);
        }
    }

    /// Make everything written so far durable now.
    pub fn sync(&self) {
        self.dirty.store(false, Ordering::SeqCst);
        self.sync_now();
    }

    /// Record a resource before its PUT is sent; `Err` (the reason) when the journal cannot
    /// be written, and then the PUT must not be sent.
    pub fn put_checked(&self, t: &Tracked) -> Result<(), String> {
        if let Some(e) = self.failure() {
            return Err(e.to_string());
        }
        self.put(t);
        match self.failure() {
            Some(e) => Err(e.to_string()),
            None => Ok(()),
        }
    }

    pub fn put(&self, t: &Tracked) {
        self.write(&Line::Put {
            url: self.shown(&t.url),
            api_version: t.api_version.clone(),
            surface: t.surface,
            by: t.by.clone(),
            at: now(),
        });
    }

    pub fn group(&self, url: &str, api_version: &str) {
        self.write(&Line::Group {
            url: self.shown(url),
            api_version: api_version.to_string(),
            at: now(),
        });
        // Before the group's PUT leaves: make it durable at once.
        self.sync();
    }

    pub fn gone(&self, url: &str) {
        self.write(&Line::Gone {
            url: self.shown(url),
            at: now(),
        });
    }

    pub fn left(&self, url: &str, why: &str) {
        self.write(&Line::Left {
            url: self.shown(url),
            why: why.to_string(),
            at: now(),
        });
    }

    pub fn end(&self, left: usize, interrupted: bool) {
        self.write(&Line::End {
            left,
            interrupted,
            at: now(),
        });
        self.sync();
    }

    pub fn cleaned(&self, left: usize) {
        self.write(&Line::Cleanup { left, at: now() });
        self.sync();
    }
}
