//! What every scenario of a run shares: the target, the HTTP client, the time scale, the
//! uniqueness registry, the cleanup tracker (with its journal) and the cancellation signal.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::fixed::FixedNames;
use super::journal::Journal;
use super::tracked::{Tracked, key};
use crate::cancel::Cancel;
use crate::http::{Exchange, Http, Surface};
use crate::rules::Registry;
use crate::target::Target;

/// Sees every exchange as it happens, with the name of the test that made it (`-v`).
pub type ExchangeObserver = Arc<dyn Fn(&str, &Exchange) + Send + Sync>;

/// Settings of a run that scenarios read.
pub struct RunCtx {
    pub target: Target,
    pub http: Http,
    pub time_scale: f64,
    pub strict: bool,
    pub run_id: String,
    /// Values that must be unique across the run (request ids, task ids).
    pub registry: Registry,
    pub cleanup: Cleanup,
    pub cancel: Arc<Cancel>,
    /// Cleanup deletes in flight at once, run-wide.
    pub delete_slots: tokio::sync::Semaphore,
    pub observer: Option<ExchangeObserver>,
    /// Told of every wait of a second or more before it starts (`probe` shows them).
    pub on_wait: Option<WaitObserver>,
    counter: AtomicU64,
}

/// Told of a wait before it starts.
pub type WaitObserver = Arc<dyn Fn(Duration) + Send + Sync>;

/// Cleanup deletes in flight at once (each waits for its operation and a 404).
pub const DELETE_SLOTS: usize = 16;

impl RunCtx {
    pub fn new(target: Target, http: Http, time_scale: f64, strict: bool, run_id: String) -> Self {
        let cancel = Arc::new(Cancel::default());
        http.set_cancel(cancel.clone());
        RunCtx {
            target,
            http,
            time_scale,
            strict,
            run_id,
            registry: Registry::default(),
            cleanup: Cleanup::default(),
            cancel,
            delete_slots: tokio::sync::Semaphore::new(DELETE_SLOTS),
            observer: None,
            on_wait: None,
            counter: AtomicU64::new(0),
        }
    }

    /// A name no other scenario or run uses: `rpc<run><n>`.
    pub fn unique(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("rpc{}{n}", self.run_id)
    }

    /// A wait scaled by `--time-scale`, capped by the operation deadline, cut short by
    /// cancellation. False when cancelled.
    pub async fn sleep(&self, secs: f64) -> bool {
        let d = Duration::from_secs_f64((secs * self.time_scale).clamp(0.0, 86_400.0))
            .min(self.target.deadline);
        self.wait(d).await
    }

    /// A wait of `d` as it is (already scaled), cut short by cancellation; told to
    /// [`RunCtx::on_wait`]. False when cancelled.
    pub async fn wait(&self, d: Duration) -> bool {
        if let Some(o) = self
            .on_wait
            .as_ref()
            .filter(|_| d >= Duration::from_secs(1))
        {
            o(d);
        }
        self.cancel.sleep(d).await
    }

    /// Show an exchange to the observer (`-v`), if there is one.
    pub fn observe(&self, test: &str, ex: &Exchange) {
        if let Some(o) = &self.observer {
            o(test, ex);
        }
    }
}

#[derive(Default)]
struct Inner {
    /// Keyed by lowercased URL without query or trailing slash: a child's key starts with its
    /// parent's key and a `/`, so a parent's subtree is one range of the map.
    items: BTreeMap<String, (Tracked, Vec<Arc<str>>)>,
    /// Keys each test tracked (some may be gone already).
    by_test: HashMap<Arc<str>, Vec<String>>,
}

/// Resources the run sent a PUT for and has not confirmed gone. Every operation is O(log n)
/// (plus what it returns); the journal records each resource before its PUT leaves and again
/// once it is confirmed gone.
#[derive(Default)]
pub struct Cleanup {
    inner: Mutex<Inner>,
    journal: OnceLock<Arc<Journal>>,
    /// Fixed-name resources: locks, and what existed before the run (restored, not deleted).
    pub fixed: FixedNames,
}

/// The first key after every key under `k/` (`0` follows `/` in ASCII).
fn subtree_end(k: &str) -> String {
    format!("{k}0")
}

impl Cleanup {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Write to this journal from now on.
    pub fn set_journal(&self, j: Arc<Journal>) {
        let _ = self.journal.set(j);
    }

    pub fn journal(&self) -> Option<&Arc<Journal>> {
        self.journal.get()
    }

    /// Remember `url` before a PUT for it is sent by test `by` (journaled before returning).
    /// `Err` (why) when the journal cannot be written: the PUT must not be sent, since a
    /// killed run would leave no record of it.
    pub fn track(
        &self,
        url: &str,
        by: &str,
        api_version: Option<&str>,
        surface: Surface,
    ) -> Result<(), String> {
        if let Some(why) = self.journal.get().and_then(|j| j.failure()) {
            return Err(format!("not sent: {why}; the run creates nothing more"));
        }
        if self.fixed.is_original(url) {
            return Ok(()); // it existed before the run: restored at the end, never deleted
        }
        let k = key(url);
        self.fixed.note_created(&k);
        let fresh = {
            let mut inner = self.lock();
            let owner: Arc<str> = Arc::from(by);
            let fresh = match inner.items.get_mut(&k) {
                Some((t, owners)) => {
                    // Sent again: it may exist again whatever happened before.
                    t.maybe_gone = false;
                    t.left = None;
                    t.waited = false;
                    if !owners.iter().any(|o| **o == *by) {
                        owners.push(owner.clone());
                    }
                    None
                }
                None => {
                    let t = Tracked {
                        url: url.split('?').next().unwrap_or(url).to_string(),
                        api_version: api_version.map(str::to_string),
                        surface,
                        by: by.to_string(),
                        maybe_gone: false,
                        left: None,
                        waited: false,
                    };
                    inner
                        .items
                        .insert(k.clone(), (t.clone(), vec![owner.clone()]));
                    Some(t)
                }
            };
            inner.by_test.entry(owner).or_default().push(k);
            fresh
        };
        if let (Some(t), Some(j)) = (fresh, self.journal.get()) {
            j.put_checked(&t)
                .map_err(|why| format!("not sent: {why}; the run creates nothing more"))?;
        }
        Ok(())
    }

    /// Put back what a journal lists (for `rpconform cleanup --journal`): not journaled again.
    pub fn restore(&self, t: Tracked) {
        let k = key(&t.url);
        let owner: Arc<str> = Arc::from(t.by.as_str());
        let mut inner = self.lock();
        inner.items.insert(k.clone(), (t, vec![owner.clone()]));
        inner.by_test.entry(owner).or_default().push(k);
    }

    /// The resource may not exist any more (its PUT failed, or a DELETE answered success,
    /// which deletes its children too): cleanup reads before it deletes.
    pub fn maybe_gone(&self, url: &str) {
        let k = key(url);
        let mut inner = self.lock();
        if let Some((t, _)) = inner.items.get_mut(&k) {
            t.maybe_gone = true;
        }
        let end = subtree_end(&k);
        for (_, (t, _)) in inner.items.range_mut(format!("{k}/")..end) {
            t.maybe_gone = true;
        }
    }

    /// Confirmed gone (a 404): forget it and everything under it.
    pub fn gone(&self, url: &str) {
        let k = key(url);
        let removed: Vec<String> = {
            let mut inner = self.lock();
            // The URL itself is journaled even when it is not tracked (the run's group).
            let mut removed = vec![match inner.items.remove(&k) {
                Some((t, _)) => t.url,
                None => url.split('?').next().unwrap_or(url).to_string(),
            }];
            let under: Vec<String> = inner
                .items
                .range(format!("{k}/")..subtree_end(&k))
                .map(|(k, _)| k.clone())
                .collect();
            for u in under {
                if let Some((t, _)) = inner.items.remove(&u) {
                    removed.push(t.url);
                }
            }
            removed
        };
        if let Some(j) = self.journal.get() {
            for u in removed {
                j.gone(&u);
            }
        }
    }

    /// Not the run's to delete (a probe wrote to what existed, or was told to keep it): drop
    /// it alone, journaled as settled.
    pub fn forget(&self, url: &str) {
        let k = key(url);
        let removed = self.lock().items.remove(&k).map(|(t, _)| t.url);
        if let (Some(u), Some(j)) = (removed, self.journal.get()) {
            j.gone(&u);
        }
    }

    /// Cleanup gave up on it for now, with the reason; `waited`: it had its full wait.
    pub fn left(&self, url: &str, why: &str, waited: bool) {
        let k = key(url);
        let mut inner = self.lock();
        if let Some((t, _)) = inner.items.get_mut(&k) {
            t.left = Some(why.to_string());
            t.waited |= waited;
        }
    }

    /// Is `url` still to be deleted (not yet confirmed gone, with itself or its parent)?
    pub fn contains(&self, url: &str) -> bool {
        self.lock().items.contains_key(&key(url))
    }

    /// Test `by` ended: drop its claim on what it tracked; returns what no running test
    /// claims any more (to delete now), children first.
    pub fn release(&self, by: &str) -> Vec<Tracked> {
        let mut inner = self.lock();
        let Some(keys) = inner.by_test.remove(by) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for k in keys {
            if !seen.insert(k.clone()) {
                continue;
            }
            if let Some((t, owners)) = inner.items.get_mut(&k) {
                owners.retain(|o| **o != *by);
                if owners.is_empty() {
                    out.push(t.clone());
                }
            }
        }
        out.sort_by_key(|t| std::cmp::Reverse(t.depth()));
        out
    }

    /// Everything not confirmed gone, children first.
    pub fn remaining(&self) -> Vec<Tracked> {
        let mut v: Vec<Tracked> = self.lock().items.values().map(|(t, _)| t.clone()).collect();
        v.sort_by_key(|t| std::cmp::Reverse(t.depth()));
        v
    }

    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(c: &Cleanup, url: &str, by: &str) {
        c.track(url, by, Some("2024-01-01"), Surface::Arm).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn nothing_is_created_once_the_journal_cannot_be_written() {
        let c = Cleanup::default();
        // /dev/full: every write fails with "no space left on device".
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open("/dev/full")
            .unwrap();
        c.set_journal(Journal::start("/dev/full".into(), file));
        let e = c
            .track("http://h/rg/p/a", "t1", None, Surface::Arm)
            .unwrap_err();
        assert!(
            e.contains("not sent") && e.contains("cannot write the journal"),
            "{e}"
        );
        let e = c
            .track("http://h/rg/p/b", "t2", None, Surface::Arm)
            .unwrap_err();
        assert!(e.contains("creates nothing more"), "{e}");
        // The one whose line failed is still tracked (cleanup reads it); the next never was.
        let left: Vec<String> = c.remaining().into_iter().map(|t| t.url).collect();
        assert_eq!(left, ["http://h/rg/p/a"]);
    }

    #[test]
    fn a_parent_takes_its_subtree_and_nothing_else() {
        let c = Cleanup::default();
        track(&c, "http://h/rg/p/a", "t1");
        track(&c, "http://h/rg/p/a/children/x", "t1");
        track(&c, "http://h/rg/p/a/children/x/g/y", "t1");
        track(&c, "http://h/rg/p/ab", "t1");
        track(&c, "http://h/rg/p/a.b", "t1");
        c.gone("http://h/rg/p/A/");
        let mut left: Vec<String> = c.remaining().into_iter().map(|t| t.url).collect();
        left.sort();
        assert_eq!(left, vec!["http://h/rg/p/a.b", "http://h/rg/p/ab"]);
        assert!(!c.contains("http://h/rg/p/a/children/x"));
        assert!(c.contains("http://h/rg/p/AB?api-version=1"));
    }

    #[test]
    fn a_shared_resource_is_released_by_its_last_test() {
        let c = Cleanup::default();
        track(&c, "http://h/fixed", "t1");
        track(&c, "http://h/fixed", "t2");
        track(&c, "http://h/mine", "t1");
        track(&c, "http://h/mine/child", "t1");
        let r1: Vec<String> = c.release("t1").into_iter().map(|t| t.url).collect();
        assert_eq!(r1, vec!["http://h/mine/child", "http://h/mine"]);
        let r2: Vec<String> = c.release("t2").into_iter().map(|t| t.url).collect();
        assert_eq!(r2, vec!["http://h/fixed"]);
        assert!(c.release("t2").is_empty());
        assert_eq!(c.len(), 3, "released is not gone: only a 404 forgets");
    }

    #[test]
    fn maybe_gone_marks_the_subtree_and_a_new_put_clears_it() {
        let c = Cleanup::default();
        track(&c, "http://h/a", "t");
        track(&c, "http://h/a/b", "t");
        c.maybe_gone("http://h/a");
        assert!(c.remaining().iter().all(|t| t.maybe_gone));
        track(&c, "http://h/a", "t");
        let a = c
            .remaining()
            .into_iter()
            .find(|t| t.url == "http://h/a")
            .unwrap();
        assert!(!a.maybe_gone);
    }

    #[test]
    fn tracking_stays_fast_with_many_resources() {
        let c = Cleanup::default();
        let start = std::time::Instant::now();
        for i in 0..50_000 {
            let u = format!("http://h/rg/providers/x/things/r{i}");
            track(&c, &u, &format!("t{i}"));
            assert!(c.contains(&u));
        }
        for i in 0..50_000 {
            let r = c.release(&format!("t{i}"));
            assert_eq!(r.len(), 1);
            c.gone(&r[0].url);
        }
        assert!(c.is_empty());
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
    }
}
