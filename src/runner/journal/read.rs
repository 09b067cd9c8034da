//! Reading journals back: what each lists as not confirmed gone, which journals a directory
//! holds, and whether the run that wrote one still runs.

use std::fs::File;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::lines::{FILE_NAME, Header, Line};
use crate::runner::tracked::{Tracked, key};

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
