//! The run's journal (`<report dir>/journal-<run id>.jsonl`): one JSON object per line, written
//! as the run goes, so that a run killed outright (SIGKILL, a machine that dies) leaves a record
//! of what it may have created. Each resource (and the run's resource group) is written *before*
//! its PUT is sent, and again once it is confirmed gone; what cleanup could not delete is
//! written with the reason. Each run has a file of its own, so two runs sharing a report
//! directory never truncate each other's; `journal.jsonl` (one per directory, as earlier
//! versions wrote it) is still read. `rpconform cleanup --journal DIR` reads them all and
//! deletes what is still outstanding (and only that).
//!
//! Every line is one `write(2)` on a file opened for appending, so it is in the operating
//! system's hands before the request leaves (a killed process loses nothing); a background
//! thread makes it durable (`fdatasync`) within a second, and at the end of the run. A write
//! or sync that fails (a full disk) is remembered ([`Journal::failure`]): from then on the
//! run creates nothing more, since it could lose what it created.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::context::{Tracked, key};
use crate::http::Surface;

/// The journal of runs before journals had a file per run (still read).
pub const FILE_NAME: &str = "journal.jsonl";

/// This run's journal file in `dir`.
pub fn file_for(dir: &Path, run_id: &str) -> PathBuf {
    dir.join(format!("journal-{run_id}.jsonl"))
}

/// Does process `pid` still run (on this machine)? A pid that cannot be signalled for lack of
/// permission runs too.
pub fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(p) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if p <= 0 {
            return false;
        }
        // SAFETY: kill with signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(p, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// What a journal says about the run that wrote it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub version: u32,
    pub run_id: String,
    /// `embedded` or the target file as given.
    pub target: String,
    /// The target file's absolute path (none for the embedded RP, which dies with the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_file: Option<String>,
    /// Without userinfo.
    pub base_url: String,
    pub subscription: String,
    /// The run's resource group (with the run id suffix when the run creates it).
    pub resource_group: String,
    pub rg_created: bool,
    pub started_at: String,
    pub pid: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
enum Line {
    Run(Header),
    /// A PUT for this resource is about to be sent.
    Put {
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_version: Option<String>,
        #[serde(default)]
        surface: Surface,
        by: String,
        at: String,
    },
    /// The run's resource group is about to be created.
    Group {
        url: String,
        api_version: String,
        at: String,
    },
    /// Confirmed gone (a 404 after its delete).
    Gone {
        url: String,
        at: String,
    },
    /// Cleanup could not confirm it gone.
    Left {
        url: String,
        why: String,
        at: String,
    },
    /// The run ended (normally or interrupted) with `left` resources not confirmed gone.
    End {
        left: usize,
        interrupted: bool,
        at: String,
    },
    /// `rpconform cleanup` went over the journal.
    Cleanup {
        left: usize,
        at: String,
    },
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Told once, when the journal first fails to write.
type OnFailure = Box<dyn Fn(&str) + Send + Sync>;

/// How a URL is written (secrets masked, see [`token_mask`]).
type Masker = Box<dyn Fn(&str) -> String + Send + Sync>;

/// What stands in the journal for the caller's token in a URL, as written and
/// percent-encoded: put back from the token source when cleanup sends the DELETE.
pub const TOKEN_MARK: &str = "{rpconform:token}";
const TOKEN_MARK_ENCODED: &str = "{rpconform:token:encoded}";

/// The characters a token is escaped as in a path or query (RFC 3986 unreserved stay).
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A URL as the journal keeps it: every token the run was handed (`tokens`), as written or
/// percent-encoded, replaced by a mark cleanup can put the token back into; any other secret
/// the redactor knows masked for good.
pub fn token_mask(url: &str, tokens: &[String], redactor: &crate::http::Redactor) -> String {
    let mut out = url.to_string();
    for t in tokens.iter().rev().filter(|t| t.len() >= 8) {
        let encoded = percent_encoding::utf8_percent_encode(t, COMPONENT).to_string();
        out = out.replace(t.as_str(), TOKEN_MARK);
        if encoded != *t {
            out = out.replace(&encoded, TOKEN_MARK_ENCODED);
        }
    }
    redactor.text(&out)
}

/// Does a journaled URL hold a token mark?
pub fn has_token_mark(url: &str) -> bool {
    url.contains(TOKEN_MARK) || url.contains(TOKEN_MARK_ENCODED)
}

/// A journaled URL with the caller's token put back (`token`: the token source's now), or
/// why it cannot be sent: a secret the journal does not keep, or a token mark with no token.
pub fn token_unmask(url: &str, token: Option<&str>) -> Result<String, String> {
    if url.contains(crate::http::MASK) {
        return Err("its URL held a secret the journal does not keep; delete it by hand".into());
    }
    if !has_token_mark(url) {
        return Ok(url.to_string());
    }
    let t = token.ok_or("its URL held the caller's token, and the target gives none now")?;
    let encoded = percent_encoding::utf8_percent_encode(t, COMPONENT).to_string();
    Ok(url
        .replace(TOKEN_MARK_ENCODED, &encoded)
        .replace(TOKEN_MARK, t))
}

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

/// What an existing journal lists as not confirmed gone.
#[derive(Debug, Clone)]
pub struct Outstanding {
    pub path: PathBuf,
    pub header: Header,
    pub resources: Vec<Tracked>,
    /// The line of each resource's (last) `put`, in the order of `resources`.
    pub put_lines: Vec<usize>,
    /// The line of the group's `group` line, when there is one outstanding.
    pub group_line: Option<usize>,
    /// The run's resource group, when the run created it and it is not confirmed gone.
    pub group: Option<(String, String)>,
    /// The run wrote its end line (it was not killed).
    pub ended: bool,
    /// Lines that could not be read (`file:line: why`): what they recorded is unknown.
    pub damaged: Vec<String>,
}

impl Outstanding {
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.group.is_none()
    }
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

/// Read a journal: its header and what it lists as not confirmed gone. A torn last line (a
/// run killed in the middle of a write) is ignored.
pub fn read(path: &Path) -> Result<Outstanding, String> {
    let f = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let reader = std::io::BufReader::new(f);
    let mut header = None;
    // key -> resource and the line of its put, in the order first written.
    let mut puts: Vec<(String, Tracked, usize)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    let mut gone: std::collections::BTreeSet<String> = Default::default();
    let mut group: Option<(String, String, usize)> = None;
    let mut ended = false;
    let mut damaged = Vec::new();
    let mut lines = reader.split(b'\n').enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        // Bytes that are not UTF-8 are a damaged line, not the end of the journal.
        let line = String::from_utf8_lossy(&line);
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = match serde_json::from_str(&line) {
            Ok(l) => l,
            // A torn line: the last one, or one a later append ended (see `append`). It was
            // being written when the run died, before its request left.
            Err(e) if lines.peek().is_none() || e.is_eof() => continue,
            // Damaged: skipped, and said (what it recorded is unknown).
            Err(e) => {
                damaged.push(format!(
                    "{}:{}: not a journal line ({e}); skipped",
                    path.display(),
                    n + 1
                ));
                continue;
            }
        };
        match parsed {
            Line::Run(h) => header = Some(h),
            Line::Put {
                url,
                api_version,
                surface,
                by,
                ..
            } => {
                let k = key(&url);
                gone.remove(&k);
                let t = Tracked {
                    url,
                    api_version,
                    surface,
                    by,
                    maybe_gone: true,
                    left: None,
                    waited: false,
                };
                match index.get(&k) {
                    Some(i) => (puts[*i].1, puts[*i].2) = (t, n + 1),
                    None => {
                        index.insert(k.clone(), puts.len());
                        puts.push((k, t, n + 1));
                    }
                }
            }
            Line::Group {
                url, api_version, ..
            } => {
                gone.remove(&key(&url));
                group = Some((url, api_version, n + 1));
            }
            Line::Gone { url, .. } => {
                gone.insert(key(&url));
            }
            Line::Left { .. } | Line::Cleanup { .. } => {}
            Line::End { .. } => ended = true,
        }
    }
    let header = header
        .ok_or_else(|| format!("{}: not an rpconform journal (no run line)", path.display()))?;
    // Gone with itself, or with a parent (the group included) confirmed gone.
    let is_gone = |k: &str| {
        let mut cur = k;
        loop {
            if gone.contains(cur) {
                return true;
            }
            match cur.rsplit_once('/') {
                Some((parent, _)) if parent.contains("://") && parent.len() > 8 => cur = parent,
                _ => return false,
            }
        }
    };
    let group = group.filter(|(u, _, _)| !is_gone(&key(u)));
    let (resources, put_lines) = puts
        .into_iter()
        .filter(|(k, _, _)| !is_gone(k))
        .map(|(_, t, line)| (t, line))
        .unzip();
    Ok(Outstanding {
        path: path.to_path_buf(),
        header,
        resources,
        put_lines,
        group_line: group.as_ref().map(|g| g.2),
        group: group.map(|(u, v, _)| (u, v)),
        ended,
        damaged,
    })
}

/// The journals in `dir` (or `dir` itself when it is a file): every run's
/// `journal-<run id>.jsonl`, and `journal.jsonl` of earlier versions.
pub fn find(dir: &Path) -> Result<Vec<PathBuf>, String> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let rd = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut out: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n == FILE_NAME || (n.starts_with("journal-") && n.ends_with(".jsonl"))
            })
        })
        // Regular files only: a FIFO of that name would block the read forever.
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(format!(
            "{}: no journal here (journal-<run id>.jsonl); a run writes one in its report directory",
            dir.display()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(id: &str) -> Header {
        Header {
            version: 1,
            run_id: id.into(),
            target: "t.yaml".into(),
            target_file: Some("/x/t.yaml".into()),
            base_url: "http://127.0.0.1:1".into(),
            subscription: "s".into(),
            resource_group: format!("rg-{id}"),
            rg_created: true,
            started_at: now(),
            // No process has it: the run is over.
            pid: u32::MAX,
        }
    }

    fn tracked(url: &str) -> Tracked {
        Tracked {
            url: url.into(),
            api_version: Some("2024-01-01".into()),
            surface: Surface::Arm,
            by: "t".into(),
            maybe_gone: false,
            left: None,
            waited: false,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("rpconform-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_base_urls_password_never_reaches_the_journal() {
        let dir = scratch("userinfo");
        let (j, _) = Journal::create(&dir, &header("ccc")).unwrap();
        let rg = "http://me:p%40ss-w0rd@127.0.0.1:1/subscriptions/s/resourceGroups/rg-ccc";
        j.group(rg, "2021-04-01");
        j.put(&tracked(&format!("{rg}/p/a")));
        j.put(&tracked(&format!("{rg}/p/b")));
        j.gone(&format!("{rg}/p/a"));
        j.left(&format!("{rg}/p/b"), "still there");
        drop(j);
        let p = dir.join("journal-ccc.jsonl");
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            !text.contains("p%40ss-w0rd") && !text.contains("p@ss-w0rd") && !text.contains("me:"),
            "{text}"
        );
        // Still one resource, cleaned by its URL (the credential comes from the target file).
        let o = read(&p).unwrap();
        let urls: Vec<&str> = o.resources.iter().map(|t| t.url.as_str()).collect();
        assert_eq!(
            urls,
            ["http://127.0.0.1:1/subscriptions/s/resourceGroups/rg-ccc/p/b"]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_token_a_server_put_in_a_url_is_kept_masked_and_put_back_for_cleanup() {
        let dir = scratch("token-mask");
        let (j, _) = Journal::create(&dir, &header("tok")).unwrap();
        let token = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln+/=";
        let other = "hunter2-api-key";
        let redactor = std::sync::Arc::new(crate::http::Redactor::new(&[]));
        redactor.register(token);
        redactor.register(other);
        let (r, tokens) = (redactor.clone(), vec![token.to_string()]);
        j.set_masker(move |u| token_mask(u, &tokens, &r));
        let encoded = percent_encoding::utf8_percent_encode(token, COMPONENT).to_string();
        let base = "http://127.0.0.1:1/subscriptions/s/resourceGroups/rg-tok/providers/N/w";
        let in_path = format!("{base}/{token}");
        let in_query_form = format!("{base}/x{encoded}y");
        let with_other = format!("{base}/{other}");
        for u in [&in_path, &in_query_form, &with_other] {
            j.put(&tracked(u));
        }
        drop(j);
        let p = dir.join("journal-tok.jsonl");
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            !text.contains(token) && !text.contains(&encoded) && !text.contains(other),
            "{text}"
        );
        let o = read(&p).unwrap();
        let back: Vec<Result<String, String>> = o
            .resources
            .iter()
            .map(|t| token_unmask(&t.url, Some(token)))
            .collect();
        assert_eq!(back[0].as_deref(), Ok(in_path.as_str()));
        assert_eq!(back[1].as_deref(), Ok(in_query_form.as_str()));
        // A secret that is not the caller's token cannot be put back: never sent masked.
        assert!(back[2].as_ref().unwrap_err().contains("delete it by hand"));
        // No token now: a URL that held one is not sent either.
        assert!(token_unmask(&o.resources[0].url, None).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn outstanding_is_what_was_put_and_not_confirmed_gone() {
        let dir = scratch("outstanding");
        let (j, earlier) = Journal::create(&dir, &header("aaa")).unwrap();
        assert!(earlier.is_empty());
        assert_eq!(j.path(), dir.join("journal-aaa.jsonl"));
        let rg = "http://127.0.0.1:1/subscriptions/s/resourceGroups/rg-aaa";
        j.group(rg, "2021-04-01");
        j.put(&tracked(&format!("{rg}/p/a")));
        j.put(&tracked(&format!("{rg}/p/a/c/x")));
        j.put(&tracked(&format!("{rg}/p/b")));
        j.put(&tracked("http://127.0.0.1:1/dataplane/widgets/w1"));
        j.gone(&format!("{rg}/p/A"));
        j.left(&format!("{rg}/p/b"), "still there");
        drop(j);
        // A torn last line is ignored.
        let p = dir.join("journal-aaa.jsonl");
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"event\":\"gone\",\"ur").unwrap();
        let o = read(&p).unwrap();
        let urls: Vec<&str> = o.resources.iter().map(|t| t.url.as_str()).collect();
        assert_eq!(
            urls,
            vec![
                format!("{rg}/p/b").as_str(),
                "http://127.0.0.1:1/dataplane/widgets/w1"
            ]
        );
        assert!(o.group.is_some() && !o.ended && o.damaged.is_empty());
        // A new run writes a journal of its own and names the unfinished one.
        let (j2, earlier) = Journal::create(&dir, &header("bbb")).unwrap();
        assert_eq!(earlier, vec![p.clone()]);
        j2.end(0, false);
        let found = find(&dir).unwrap();
        assert_eq!(found.len(), 2);
        // The group gone takes everything in it.
        let j = Journal::append(&p).unwrap();
        j.gone(rg);
        drop(j);
        let o = read(&p).unwrap();
        assert_eq!(o.resources.len(), 1);
        assert!(o.group.is_none());
        // A run that ended with nothing outstanding is tidied away by the next one.
        drop(j2);
        let (_j3, _) = Journal::create(&dir, &header("ccc")).unwrap();
        assert!(!dir.join("journal-bbb.jsonl").exists());
        assert!(p.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn two_runs_in_one_directory_keep_their_own_journals() {
        let dir = scratch("two-runs");
        let mut live = header("one");
        live.pid = std::process::id();
        let (a, _) = Journal::create(&dir, &live).unwrap();
        a.put(&tracked("http://127.0.0.1:1/x/a0"));
        // A run still going is not "an earlier run" to warn about.
        let (b, earlier) = Journal::create(&dir, &header("two")).unwrap();
        assert!(earlier.is_empty(), "{earlier:?}");
        a.put(&tracked("http://127.0.0.1:1/x/a1"));
        b.put(&tracked("http://127.0.0.1:1/x/b1"));
        a.put(&tracked("http://127.0.0.1:1/x/a2"));
        drop((a, b));
        let mut all: Vec<String> = Vec::new();
        for p in find(&dir).unwrap() {
            let o = read(&p).unwrap();
            assert!(o.damaged.is_empty(), "{:?}", o.damaged);
            all.extend(o.resources.into_iter().map(|t| t.url));
        }
        all.sort();
        assert_eq!(
            all,
            [
                "http://127.0.0.1:1/x/a0",
                "http://127.0.0.1:1/x/a1",
                "http://127.0.0.1:1/x/a2",
                "http://127.0.0.1:1/x/b1"
            ]
        );
        // An old single journal.jsonl is still found.
        std::fs::copy(dir.join("journal-one.jsonl"), dir.join(FILE_NAME)).unwrap();
        assert_eq!(find(&dir).unwrap().len(), 3);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_line_is_skipped_and_named() {
        let dir = scratch("damaged");
        let (j, _) = Journal::create(&dir, &header("ddd")).unwrap();
        j.put(&tracked("http://127.0.0.1:1/x/a"));
        let p = j.path().to_path_buf();
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"event\": \"put\", \"url\": 3}\n\xff\xfe garbage\n")
            .unwrap();
        drop(f);
        let j = Journal::append(&p).unwrap();
        j.put(&tracked("http://127.0.0.1:1/x/b"));
        drop(j);
        let o = read(&p).unwrap();
        let urls: Vec<&str> = o.resources.iter().map(|t| t.url.as_str()).collect();
        assert_eq!(urls, ["http://127.0.0.1:1/x/a", "http://127.0.0.1:1/x/b"]);
        assert_eq!(o.damaged.len(), 2, "{:?}", o.damaged);
        assert!(
            o.damaged[0].starts_with(&format!("{}:3:", p.display())),
            "{:?}",
            o.damaged
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_journal_that_cannot_be_written_refuses_further_puts() {
        // /dev/full: every write fails with "no space left on device".
        let file = OpenOptions::new().append(true).open("/dev/full").unwrap();
        let j = Journal::start(PathBuf::from("/dev/full"), file);
        let told = Arc::new(Mutex::new(Vec::<String>::new()));
        let t2 = told.clone();
        j.on_failure(move |why| t2.lock().unwrap().push(why.to_string()));
        assert!(j.failure().is_none());
        let e = j
            .put_checked(&tracked("http://127.0.0.1:1/x/a"))
            .unwrap_err();
        assert!(e.contains("cannot write the journal"), "{e}");
        assert!(j.put_checked(&tracked("http://127.0.0.1:1/x/b")).is_err());
        // Said once, at once.
        assert_eq!(told.lock().unwrap().len(), 1);
    }

    #[test]
    fn live_and_dead_processes() {
        assert!(process_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid));
        assert!(!process_alive(0));
        assert!(!process_alive(u32::MAX));
    }
}
