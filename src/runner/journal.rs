//! The run's journal (`<report dir>/journal.jsonl`): one JSON object per line, written as the
//! run goes, so that a run killed outright (SIGKILL, a machine that dies) leaves a record of
//! what it may have created. Each resource (and the run's resource group) is written *before*
//! its PUT is sent, and again once it is confirmed gone; what cleanup could not delete is
//! written with the reason. `rpconform cleanup --journal DIR` reads it and deletes what is
//! still outstanding (and only that).
//!
//! Every line is one `write(2)` on a file opened for appending, so it is in the operating
//! system's hands before the request leaves (a killed process loses nothing); a background
//! thread makes it durable (`fdatasync`) within a second, and at the end of the run.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::context::{Tracked, key};
use crate::http::Surface;

pub const FILE_NAME: &str = "journal.jsonl";

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

/// A journal being written.
pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
    dirty: Arc<AtomicBool>,
}

/// What an existing journal lists as not confirmed gone.
#[derive(Debug, Clone)]
pub struct Outstanding {
    pub path: PathBuf,
    pub header: Header,
    pub resources: Vec<Tracked>,
    /// The run's resource group, when the run created it and it is not confirmed gone.
    pub group: Option<(String, String)>,
    /// The run wrote its end line (it was not killed).
    pub ended: bool,
}

impl Outstanding {
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.group.is_none()
    }
}

impl Journal {
    /// Start `dir/journal.jsonl` for a new run. A journal already there that still lists
    /// resources not confirmed gone is kept, renamed `journal-<its run id>.jsonl` (returned,
    /// for a warning): a new run never erases what an earlier one may have left.
    pub fn create(dir: &Path, header: &Header) -> std::io::Result<(Arc<Journal>, Option<PathBuf>)> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(FILE_NAME);
        let mut kept = None;
        if path.exists()
            && let Ok(old) = read(&path)
            && !old.is_empty()
        {
            let to = dir.join(format!("journal-{}.jsonl", old.header.run_id));
            std::fs::rename(&path, &to)?;
            kept = Some(to);
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)?;
        let j = Self::start(path, file);
        j.write(&Line::Run(header.clone()));
        j.sync();
        Ok((j, kept))
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

    fn start(path: PathBuf, file: File) -> Arc<Journal> {
        let j = Arc::new(Journal {
            path,
            file: Mutex::new(file),
            dirty: Arc::new(AtomicBool::new(false)),
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

    fn write(&self, line: &Line) {
        let Ok(mut text) = serde_json::to_string(line) else {
            return;
        };
        text.push('\n');
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // One write for the whole line; a journal that cannot be written must not stop the run
        // (the reports still list what is left).
        let _ = f.write_all(text.as_bytes());
        self.dirty.store(true, Ordering::SeqCst);
    }

    fn sync_now(&self) {
        let f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = f.sync_data();
    }

    /// Make everything written so far durable now.
    pub fn sync(&self) {
        self.dirty.store(false, Ordering::SeqCst);
        self.sync_now();
    }

    pub fn put(&self, t: &Tracked) {
        self.write(&Line::Put {
            url: t.url.clone(),
            api_version: t.api_version.clone(),
            surface: t.surface,
            by: t.by.clone(),
            at: now(),
        });
    }

    pub fn group(&self, url: &str, api_version: &str) {
        self.write(&Line::Group {
            url: url.to_string(),
            api_version: api_version.to_string(),
            at: now(),
        });
        // Before the group's PUT leaves: make it durable at once.
        self.sync();
    }

    pub fn gone(&self, url: &str) {
        self.write(&Line::Gone {
            url: url.to_string(),
            at: now(),
        });
    }

    pub fn left(&self, url: &str, why: &str) {
        self.write(&Line::Left {
            url: url.to_string(),
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
    // key -> resource, in the order first written.
    let mut puts: Vec<(String, Tracked)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    let mut gone: std::collections::BTreeSet<String> = Default::default();
    let mut group: Option<(String, String)> = None;
    let mut ended = false;
    let mut lines = reader.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = match serde_json::from_str(&line) {
            Ok(l) => l,
            // A torn line: the last one, or one a later append ended (see `append`).
            Err(e) if lines.peek().is_none() || e.is_eof() => continue,
            Err(e) => {
                return Err(format!(
                    "{}:{}: not a journal line: {e}",
                    path.display(),
                    n + 1
                ));
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
                    Some(i) => puts[*i].1 = t,
                    None => {
                        index.insert(k.clone(), puts.len());
                        puts.push((k, t));
                    }
                }
            }
            Line::Group {
                url, api_version, ..
            } => {
                gone.remove(&key(&url));
                group = Some((url, api_version));
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
    let group = group.filter(|(u, _)| !is_gone(&key(u)));
    let resources = puts
        .into_iter()
        .filter(|(k, _)| !is_gone(k))
        .map(|(_, t)| t)
        .collect();
    Ok(Outstanding {
        path: path.to_path_buf(),
        header,
        resources,
        group,
        ended,
    })
}

/// The journals in `dir` (or `dir` itself when it is a file): `journal.jsonl` and every
/// `journal-*.jsonl` kept from earlier runs.
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
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(format!(
            "{}: no journal here ({FILE_NAME}); a run writes one in its report directory",
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
            pid: 1,
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

    #[test]
    fn outstanding_is_what_was_put_and_not_confirmed_gone() {
        let dir = std::env::temp_dir().join(format!("rpconform-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (j, kept) = Journal::create(&dir, &header("aaa")).unwrap();
        assert!(kept.is_none());
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
        let p = dir.join(FILE_NAME);
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
        assert!(o.group.is_some() && !o.ended);
        // A new run keeps the unfinished journal aside.
        let (j2, kept) = Journal::create(&dir, &header("bbb")).unwrap();
        assert_eq!(kept.unwrap(), dir.join("journal-aaa.jsonl"));
        j2.end(0, false);
        let found = find(&dir).unwrap();
        assert_eq!(found.len(), 2);
        // The group gone takes everything in it.
        let j = Journal::append(&dir.join("journal-aaa.jsonl")).unwrap();
        j.gone(rg);
        drop(j);
        let o = read(&dir.join("journal-aaa.jsonl")).unwrap();
        assert_eq!(o.resources.len(), 1);
        assert!(o.group.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
