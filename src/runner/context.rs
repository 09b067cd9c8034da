//! What every scenario of a run shares: the target, the HTTP client, the time scale, the
//! uniqueness registry, the cleanup list and the cancellation signal (Ctrl-C / SIGTERM).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::http::Http;
use crate::rules::Registry;
use crate::target::Target;

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
    pub cancel: Cancel,
    counter: AtomicU64,
}

impl RunCtx {
    pub fn new(target: Target, http: Http, time_scale: f64, strict: bool, run_id: String) -> Self {
        RunCtx {
            target,
            http,
            time_scale,
            strict,
            run_id,
            registry: Registry::default(),
            cleanup: Cleanup::default(),
            cancel: Cancel::default(),
            counter: AtomicU64::new(0),
        }
    }

    /// A name no other scenario or run uses: `rpc<run><n>`.
    pub fn unique(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("rpc{}{n}", self.run_id)
    }

    /// A wait scaled by `--time-scale`, cut short by cancellation. False when cancelled.
    pub async fn sleep(&self, secs: f64) -> bool {
        let d = Duration::from_secs_f64((secs * self.time_scale).clamp(0.0, 86_400.0));
        self.cancel.sleep(d).await
    }
}

/// Resources the run created and has not deleted yet, to delete at the end; and resources of
/// fixed-name types that existed before the run wrote them, to put back as they were.
#[derive(Default)]
pub struct Cleanup {
    items: Mutex<Vec<(String, String)>>,
    /// Every URL the run ever created (deleted or not), by key.
    created: Mutex<HashSet<String>>,
    /// Fixed-name resources as they were before the run's first write: URL, body, test.
    originals: Mutex<Vec<Original>>,
    /// Fixed-name URLs whose state before the run is known (read, or absent).
    known: Mutex<HashSet<String>>,
    /// One lock per fixed-name URL: a test that writes one holds it until it ends, so two
    /// tests never change the same resource at once.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// A fixed-name resource as the run found it, to restore at the end.
#[derive(Debug, Clone)]
pub struct Original {
    pub url: String,
    pub body: serde_json::Value,
    /// The same values in the shape of the type's own PUT body, for a server that accepts
    /// only exact bodies (tried when `body` is refused).
    pub fallback: Option<serde_json::Value>,
    pub by: String,
}

impl Cleanup {
    fn key(url: &str) -> String {
        url.split('?')
            .next()
            .unwrap_or(url)
            .trim_end_matches('/')
            .to_ascii_lowercase()
    }

    /// Remember `url` (absolute, no query), created by test `by`; true when it was not yet
    /// remembered.
    pub fn track(&self, url: &str, by: &str) -> bool {
        let k = Self::key(url);
        if self.is_original(url) {
            return false; // it existed before the run: restored, never deleted
        }
        self.created
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(k.clone());
        let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        if items.iter().any(|(u, _)| Self::key(u) == k) {
            return false;
        }
        items.push((
            url.split('?').next().unwrap_or(url).to_string(),
            by.to_string(),
        ));
        true
    }

    /// Forget `url` and everything under it (deleting a parent deletes its children).
    pub fn forget(&self, url: &str) {
        let k = Self::key(url);
        let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        items.retain(|(u, _)| {
            let uk = Self::key(u);
            uk != k && !uk.starts_with(&format!("{k}/"))
        });
    }

    /// Is `url` still to be deleted (not yet gone with itself or its parent)?
    pub fn contains(&self, url: &str) -> bool {
        let k = Self::key(url);
        self.items
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|(u, _)| Self::key(u) == k)
    }

    pub fn remaining(&self) -> Vec<(String, String)> {
        self.items.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The lock of a fixed-name URL.
    pub fn lock_of(&self, url: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(Self::key(url))
            .or_default()
            .clone()
    }

    /// True the first time a fixed-name URL is about to be written in this run (its state
    /// before the run is still to be read); false ever after.
    pub fn first_write(&self, url: &str) -> bool {
        self.known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(Self::key(url))
    }

    /// The resource at `url` existed before the run with this body: restore it at the end.
    pub fn keep_original(
        &self,
        url: &str,
        body: serde_json::Value,
        fallback: Option<serde_json::Value>,
        by: &str,
    ) {
        self.originals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Original {
                url: url.split('?').next().unwrap_or(url).to_string(),
                body,
                fallback,
                by: by.to_string(),
            });
    }

    fn is_original(&self, url: &str) -> bool {
        let k = Self::key(url);
        self.originals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|o| Self::key(&o.url) == k)
    }

    /// Originals to restore: those under no resource the run created (those go with it).
    pub fn originals(&self) -> Vec<Original> {
        let created = self
            .created
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        self.originals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|o| {
                let k = Self::key(&o.url);
                !created.iter().any(|c| k.starts_with(&format!("{c}/")))
            })
            .cloned()
            .collect()
    }
}

/// Cancellation: set once by a signal; waits wake up at once.
#[derive(Default)]
pub struct Cancel {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancel {
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Sleep unless cancelled; false when cancelled.
    pub async fn sleep(&self, d: Duration) -> bool {
        if self.is_cancelled() {
            return false;
        }
        let notified = self.notify.notified();
        tokio::select! {
            _ = tokio::time::sleep(d) => !self.is_cancelled(),
            _ = notified => false,
        }
    }
}
