//! Judging a recording one entry at a time, so memory follows what judging holds (the
//! exchanges of operations still open, the findings' citations), not the number of entries: a
//! HAR of a million small entries is read twice and never held.
//!
//! The first pass ([`scan`]) pairs every entry into operations and notes where each operation's
//! last exchange is (and feeds target inference); at most [`MAX_OPEN`] operations are paired
//! at once. The second ([`FileJudge`]) pairs again (the
//! same pairing: it only ever looks back), judges each exchange as it comes and each operation
//! right after its last exchange, holding only the exchanges of operations not yet judged. An
//! in-memory [`Recording`] goes through the same [`FileJudge`] ([`judge_recording`]).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Instant;

use super::judging::{StreamJudge, result};
use super::read::stream_recording;
use super::reconstruct::flow_of;
use super::{EntryMeta, FlowSketch, Pairer, ReadOptions, Recording, ReplayError, Streamed};
use crate::http::{Exchange, Surface};
use crate::report::ScenarioResult;
use crate::rules::Registry;
use crate::rules::flow::End;
use crate::target::Target;

/// Operations paired at once, at most: one no read joined while this many others were read
/// is taken as over (each open one costs some hundreds of bytes, a recording may hold
/// millions; real clients poll an operation without thousands of others in between).
pub const MAX_OPEN: usize = 1_000;

/// What the first pass learned: the file, and the position of each operation's last exchange
/// (by operation, in the order they started).
pub struct Scanned {
    pub streamed: Streamed,
    pub last: Vec<usize>,
}

/// First pass over a file: pair it, note each operation's last exchange; `each` sees every
/// entry paired (its poll role set), for inference.
pub fn scan(
    path: &Path,
    opts: &ReadOptions,
    mut each: impl FnMut(&Exchange, &EntryMeta) + Send,
) -> Result<Scanned, ReplayError> {
    let mut pairer = Pairer::new();
    let mut last: Vec<usize> = Vec::new();
    let mut pos = 0;
    // Operations by when a read last joined them: past MAX_OPEN, the one idle longest is
    // paired no more (it ended there, for the second pass too).
    let mut idle: BTreeMap<usize, usize> = BTreeMap::new();
    let streamed = stream_recording(path, opts, |mut ex, meta, own| {
        let recorded = ex.role;
        if let Some(f) = pairer.push(pos, &mut ex) {
            if f == last.len() {
                last.push(pos);
            } else {
                idle.remove(&last[f]);
                last[f] = pos;
            }
            idle.insert(pos, f);
            while idle.len() > MAX_OPEN {
                if let Some((_, old)) = idle.pop_first() {
                    pairer.close(old);
                }
            }
        }
        if own {
            // rpconform's own files say what each exchange was; pairing never relabels it.
            ex.role = recorded;
        }
        each(&ex, &meta);
        pos += 1;
    })?;
    Ok(Scanned { streamed, last })
}

/// Second pass: judge a file scanned by [`scan`] against `target`; `by_target` sets each
/// exchange's surface by the target's declarations (a target file given for a recording
/// rpconform did not write).
pub fn judge_scanned(
    scanned: &Scanned,
    opts: &ReadOptions,
    target: &Target,
    registry: &Registry,
    strict: bool,
    by_target: bool,
) -> Result<ScenarioResult, ReplayError> {
    let started = Instant::now();
    let s = &scanned.streamed;
    let mut fj = FileJudge::new(target, registry, s, &scanned.last, by_target);
    let again = stream_recording(&s.path, opts, |ex, meta, _| fj.push(ex, meta))?;
    if again.entries != s.entries {
        return Err(ReplayError::at(
            &s.path,
            0,
            0,
            "the recording changed while it was read",
        ));
    }
    Ok(fj.finish(s, strict, started))
}

/// Judges one recording's entries as they come (see the module docs).
pub(crate) struct FileJudge<'t> {
    target: &'t Target,
    sj: StreamJudge<'t>,
    pairer: Pairer,
    /// Operations ending at each position.
    ending: BTreeMap<usize, Vec<usize>>,
    /// Exchanges of operations not yet judged, by position.
    store: HashMap<usize, Exchange>,
    /// Each open operation's namespace, and whether it is ARM traffic.
    opened: HashMap<usize, (Option<String>, bool)>,
    own: bool,
    by_target: bool,
    pos: usize,
    arm: usize,
    flows: usize,
    finished: usize,
    unseen: usize,
}

impl<'t> FileJudge<'t> {
    pub(crate) fn new(
        target: &'t Target,
        registry: &'t Registry,
        s: &Streamed,
        last: &[usize],
        by_target: bool,
    ) -> Self {
        let mut ending: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (f, &at) in last.iter().enumerate() {
            ending.entry(at).or_default().push(f);
        }
        FileJudge {
            target,
            sj: StreamJudge::new(target, registry, &s.stripped),
            pairer: Pairer::new(),
            ending,
            store: HashMap::new(),
            opened: HashMap::new(),
            own: s.own,
            by_target: by_target && !s.own,
            pos: 0,
            arm: 0,
            flows: last.len(),
            finished: 0,
            unseen: 0,
        }
    }

    /// The next entry, in wire order.
    pub(crate) fn push(&mut self, mut ex: Exchange, mut meta: EntryMeta) {
        let i = self.pos;
        self.pos += 1;
        let recorded = ex.role;
        let joined = self.pairer.push(i, &mut ex);
        if self.own {
            ex.role = recorded;
        }
        if let Some(f) = joined {
            match self.opened.get(&f) {
                None => {
                    self.opened.insert(f, (meta.provider.clone(), meta.arm));
                }
                // A poll or a read after the end belongs to its operation's namespace.
                Some((Some(p), _)) if self.pairer.took(f, i) => meta.provider = Some(p.clone()),
                Some(_) => {}
            }
        }
        if self.by_target {
            ex.surface = surface_by(self.target, &ex, &meta);
        }
        if meta.arm {
            self.arm += 1;
            self.sj.exchange(&ex, meta.provider.as_deref());
        }
        if joined.is_some() {
            self.store.insert(i, ex);
        } else {
            self.sj.forget(ex.seq);
        }
        for f in self.ending.remove(&i).unwrap_or_default() {
            self.close(f);
        }
    }

    /// Judge operation `f` on its own exchanges, renumbered from 0, and forget them.
    fn close(&mut self, f: usize) {
        let Some(sketch) = self.pairer.close(f) else {
            return;
        };
        let (ns, arm) = self.opened.remove(&f).unwrap_or((None, false));
        let mut order = vec![sketch.initial];
        order.extend(sketch.reads());
        let mut local = Vec::with_capacity(order.len());
        let mut pos = HashMap::new();
        for i in &order {
            if let Some(x) = self.store.remove(i) {
                pos.insert(*i, local.len());
                local.push(x);
            }
        }
        let Some(&initial) = pos.get(&sketch.initial).filter(|_| arm) else {
            for x in &local {
                self.sj.forget(x.seq);
            }
            return;
        };
        let map = |v: &[(usize, super::PollChannel)]| {
            v.iter()
                .filter_map(|(i, c)| pos.get(i).map(|p| (*p, *c)))
                .collect()
        };
        let renumbered = FlowSketch {
            initial,
            method: sketch.method.clone(),
            resource_url: sketch.resource_url.clone(),
            polls: map(&sketch.polls),
            finals: map(&sketch.finals),
            watches: sketch
                .watches
                .iter()
                .filter_map(|i| pos.get(i).copied())
                .collect(),
            terminal: sketch.terminal.clone(),
        };
        let flow = flow_of(&renumbered, &local, self.target);
        self.finished += usize::from(flow.finished().is_some());
        self.unseen += usize::from(flow.end == End::Unseen);
        self.sj.flow(&flow, &local, ns.as_deref());
        for x in &local {
            self.sj.forget(x.seq);
        }
    }

    /// The recording's result, named `replay::{file name}`.
    pub(crate) fn finish(mut self, s: &Streamed, strict: bool, started: Instant) -> ScenarioResult {
        // Operations whose last exchange never came (a file shorter than its scan).
        let left: Vec<usize> = self.ending.into_values().flatten().collect();
        self.ending = BTreeMap::new();
        for f in left {
            self.close(f);
        }
        let name = s.path.file_name().map_or_else(
            || s.path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        let mut notes = vec![format!(
            "{} format, {} entries, {} ARM exchanges judged, {} operations ({} seen to end, {} not)",
            s.format, s.entries, self.arm, self.flows, self.finished, self.unseen
        )];
        let stripped: Vec<String> = s
            .stripped
            .response
            .iter()
            .map(|h| format!("{h} (response)"))
            .chain(s.stripped.request.iter().map(|h| format!("{h} (request)")))
            .collect();
        if !stripped.is_empty() {
            notes.push(format!(
                "stripped by the recorder, so not judged when absent: {}",
                stripped.join(", ")
            ));
        }
        notes.extend(s.notes.iter().cloned());
        notes.extend(self.sj.breakdown());
        result(
            format!("replay::{name}"),
            "replay",
            s.path.display().to_string(),
            &self.sj.tallies(),
            strict,
            notes,
            self.sj.cited(),
            started.elapsed().as_millis() as u64,
        )
    }
}

/// The surface the target declares for an entry's URL (on the target's own base).
pub(crate) fn surface_by(target: &Target, ex: &Exchange, meta: &EntryMeta) -> Surface {
    if !meta.arm {
        return Surface::Other;
    }
    let rel = crate::http::parse_url(&ex.url).map_or_else(
        |_| ex.url.clone(),
        |u| {
            format!(
                "{}{}",
                u.path(),
                u.query().map(|q| format!("?{q}")).unwrap_or_default()
            )
        },
    );
    target.surface_of(&format!("{}{rel}", target.base()))
}

/// Judge one recording: one result named `replay::{file name}` (as a file streamed through
/// this module is judged).
pub fn judge_recording(
    rec: &Recording,
    target: &Target,
    registry: &Registry,
    strict: bool,
) -> ScenarioResult {
    let started = Instant::now();
    let s = Streamed {
        path: rec.path.clone(),
        format: rec.format,
        entries: rec.entries.len(),
        stripped: rec.stripped.clone(),
        notes: rec.notes.clone(),
        own: rec.own,
    };
    let last: Vec<usize> = rec.flows.iter().map(FlowSketch::last).collect();
    let mut fj = FileJudge::new(target, registry, &s, &last, false);
    for (ex, meta) in rec.entries.iter().zip(&rec.meta) {
        fj.push(ex.clone(), meta.clone());
    }
    fj.finish(&s, strict, started)
}
