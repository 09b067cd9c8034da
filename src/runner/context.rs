//! What every scenario of a run shares: the target, the HTTP client, the time scale, the
//! uniqueness registry, the cleanup list and the cancellation signal (Ctrl-C / SIGTERM).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

/// Resources the run created and has not deleted yet, to delete at the end.
#[derive(Default)]
pub struct Cleanup {
    items: Mutex<Vec<(String, String)>>,
}

impl Cleanup {
    fn key(url: &str) -> String {
        url.split('?')
            .next()
            .unwrap_or(url)
            .trim_end_matches('/')
            .to_ascii_lowercase()
    }

    /// Remember `url` (absolute, no query), created by test `by`.
    pub fn track(&self, url: &str, by: &str) {
        let mut items = self.items.lock().unwrap_or_else(|e| e.into_inner());
        let k = Self::key(url);
        if !items.iter().any(|(u, _)| Self::key(u) == k) {
            items.push((
                url.split('?').next().unwrap_or(url).to_string(),
                by.to_string(),
            ));
        }
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
