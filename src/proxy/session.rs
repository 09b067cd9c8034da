//! The proxy's judging: exchanges are redacted as replay redacts recordings (`replay::build`),
//! judged as they pass (one [`StreamJudge`] for the whole session, a ledger per provider
//! namespace), and paired into operations by the same [`Pairer`] replay uses.
//!
//! An operation opens on an answer a client would poll and is judged ([`Judge::flow`] through
//! [`flow_of`]) when it closes:
//! - once a poll showed its end and no read joined it for `settle` (the reads a client makes
//!   right after the end, such as the final resource GET, belong to it), or at once when a
//!   write to its resource arrives (so that write is judged against the settled state);
//! - as [`End::Unseen`](crate::rules::flow::End::Unseen) when no read joined it for `idle`,
//!   or when the proxy stops before its end.
//!
//! Only the exchanges of open operations are held; everything else is judged and dropped.
//!
//! [`Judge::flow`]: crate::rules::Judge::flow

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::http::{Exchange, Surface};
use crate::lro::path_key;
use crate::replay::build::Builder;
use crate::replay::raw::RawEntry;
use crate::replay::{FlowSketch, Pairer, ReadOptions, StreamJudge, flow_of, result};
use crate::report::ScenarioResult;
use crate::rules::{Registry, RuleTally};
use crate::target::Target;

/// How long operations stay open.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// After the end, how long to wait for the reads that close it.
    pub settle: Duration,
    /// Before the end, how long without a read before it is judged unseen.
    pub idle: Duration,
}

struct Open {
    ns: Option<String>,
    resource: Option<String>,
    last: Instant,
}

/// Everything the proxy judged so far.
pub struct Session {
    target: &'static Target,
    judge: StreamJudge<'static>,
    builder: Builder<'static>,
    pairer: Pairer,
    timing: Timing,
    next: usize,
    /// Exchanges of open operations, by stream position.
    store: HashMap<usize, Exchange>,
    open: BTreeMap<usize, Open>,
    pub exchanges: u64,
    pub judged: u64,
    pub operations: u64,
    pub notes: Vec<String>,
}

impl Session {
    /// A session judging against `target`; `opts` says which hosts are ARM and the body cap.
    pub fn new(target: &'static Target, opts: &'static ReadOptions, timing: Timing) -> Self {
        let registry: &'static Registry = Box::leak(Box::default());
        Session {
            target,
            judge: StreamJudge::new(target, registry, &crate::replay::Stripped::default()),
            builder: Builder::new(opts),
            pairer: Pairer::new(),
            timing,
            next: 0,
            store: HashMap::new(),
            open: BTreeMap::new(),
            exchanges: 0,
            judged: 0,
            operations: 0,
            notes: Vec::new(),
        }
    }

    /// One exchange as it passed, in the target's terms.
    pub(crate) fn record(&mut self, raw: RawEntry, now: Instant) {
        self.builder.push(raw);
        for (mut ex, meta) in self.builder.drain() {
            let i = self.next;
            self.next += 1;
            self.exchanges += 1;
            ex.seq = i as u64 + 1;
            ex.surface = if meta.arm {
                self.target.surface_of(&ex.url)
            } else {
                Surface::Other
            };
            let method = ex.method.to_ascii_uppercase();
            if matches!(method.as_str(), "PUT" | "PATCH" | "DELETE" | "POST") {
                let key = path_key(&ex.url);
                let ended: Vec<usize> = self
                    .open
                    .iter()
                    .filter(|(f, o)| {
                        self.pairer.is_done(**f)
                            && o.resource
                                .as_deref()
                                .is_some_and(|r| key == r || key.starts_with(&format!("{r}/")))
                    })
                    .map(|(f, _)| *f)
                    .collect();
                for f in ended {
                    self.close(f);
                }
            }
            let joined = self.pairer.push(i, &mut ex);
            let ns = joined
                .and_then(|f| self.open.get(&f))
                .map_or(meta.provider.clone(), |o| o.ns.clone());
            if meta.arm && ex.surface == Surface::Arm {
                self.judged += 1;
            }
            if meta.arm {
                self.judge.exchange(&ex, ns.as_deref());
            }
            if let Some(f) = joined {
                let o = self.open.entry(f).or_insert_with(|| Open {
                    ns: meta.provider.clone(),
                    resource: matches!(method.as_str(), "PUT" | "PATCH" | "DELETE")
                        .then(|| path_key(&ex.url)),
                    last: now,
                });
                o.last = now;
                self.store.insert(i, ex);
            } else {
                // Judged and held no more: no rule asks again what failed on it.
                self.judge.forget(ex.seq);
            }
        }
        self.expire(now);
    }

    /// Close the operations whose time is up.
    pub fn expire(&mut self, now: Instant) {
        let due: Vec<usize> = self
            .open
            .iter()
            .filter(|(f, o)| {
                let quiet = now.saturating_duration_since(o.last);
                if self.pairer.is_done(**f) {
                    quiet >= self.timing.settle
                } else {
                    quiet >= self.timing.idle
                }
            })
            .map(|(f, _)| *f)
            .collect();
        for f in due {
            self.close(f);
        }
    }

    /// Judge every operation still open (the proxy stops).
    pub fn finish(&mut self) {
        let all: Vec<usize> = self.open.keys().copied().collect();
        for f in all {
            self.close(f);
        }
    }

    /// Judge one operation on its own exchanges, renumbered from 0, and forget them.
    fn close(&mut self, f: usize) {
        let open = self.open.remove(&f);
        let Some(sketch) = self.pairer.close(f) else {
            return;
        };
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
        let Some(&initial) = pos.get(&sketch.initial) else {
            return;
        };
        let map = |v: &[(usize, crate::replay::PollChannel)]| {
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
        self.operations += 1;
        self.judge
            .flow(&flow, &local, open.and_then(|o| o.ns).as_deref());
        for x in &local {
            self.judge.forget(x.seq);
        }
    }

    /// One result per provider namespace seen, named `proxy::{namespace}`.
    pub fn results(&self, strict: bool, extra: &[String]) -> Vec<ScenarioResult> {
        let cited = self.judge.cited();
        let lines = self.judge.breakdown();
        self.judge
            .namespace_tallies()
            .into_iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(ns, t): (String, Vec<RuleTally>)| {
                let seqs: Vec<u64> = t
                    .iter()
                    .flat_map(|x| &x.failures)
                    .flat_map(|f| [f.exchange, f.last_exchange])
                    .flatten()
                    .collect();
                let mut notes: Vec<String> = lines
                    .iter()
                    .filter(|l| l.starts_with(&format!("{ns}:")))
                    .cloned()
                    .collect();
                notes.extend(extra.iter().cloned());
                notes.extend(self.notes.iter().cloned());
                result(
                    format!("proxy::{ns}"),
                    "proxy",
                    self.target.label.clone(),
                    &t,
                    strict,
                    notes,
                    cited
                        .iter()
                        .filter(|x| seqs.contains(&x.seq))
                        .cloned()
                        .collect(),
                    0,
                )
            })
            .collect()
    }

    /// Operations open now (waiting for their end or their last reads).
    pub fn open_operations(&self) -> usize {
        self.open.len()
    }
}
