//! A run's cancellation, in two steps. The first signal (Ctrl-C, SIGTERM, SIGHUP) *cancels*:
//! tests stop waiting and end as interrupted, teardowns and cleanup still run. A second signal
//! *forces*: cleanup stops waiting too (it sends what deletes it can without confirming them)
//! and the run writes its reports and journal and exits. Every wait of the run goes through
//! [`Cancel::sleep`] (tests) or [`Cancel::sleep_unless_forced`] (cleanup), so no wait outlives
//! the signal that should end it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

const CANCELLED: u8 = 1;
const FORCED: u8 = 2;

#[derive(Debug, Default)]
pub struct Cancel {
    level: AtomicU8,
    notify: Notify,
}

impl Cancel {
    /// Stop the tests (first signal). Idempotent.
    pub fn cancel(&self) {
        self.raise(CANCELLED);
    }

    /// Stop cleanup waits too (second signal). Implies [`Cancel::cancel`].
    pub fn force(&self) {
        self.raise(FORCED);
    }

    fn raise(&self, to: u8) {
        self.level.fetch_max(to, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.level.load(Ordering::SeqCst) >= CANCELLED
    }

    pub fn is_forced(&self) -> bool {
        self.level.load(Ordering::SeqCst) >= FORCED
    }

    /// Sleep unless the run is cancelled; false when it is (at once or during the wait).
    pub async fn sleep(&self, d: Duration) -> bool {
        self.sleep_until_level(d, CANCELLED).await
    }

    /// Sleep unless the run is forced to stop; false when it is. Cleanup waits use this: a
    /// first Ctrl-C must not cut the deletes that follow it.
    pub async fn sleep_unless_forced(&self, d: Duration) -> bool {
        self.sleep_until_level(d, FORCED).await
    }

    async fn sleep_until_level(&self, d: Duration, level: u8) -> bool {
        let reached = || self.level.load(Ordering::SeqCst) >= level;
        if reached() {
            return false;
        }
        let sleep = tokio::time::sleep(d);
        tokio::pin!(sleep);
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Register before checking again, so a signal between the check and the wait is
            // not lost.
            notified.as_mut().enable();
            if reached() {
                return false;
            }
            tokio::select! {
                _ = &mut sleep => return !reached(),
                _ = &mut notified => {
                    if reached() {
                        return false;
                    }
                }
            }
        }
    }

    /// Wait until the run is cancelled (for tasks that race a future against it).
    pub async fn cancelled(&self) {
        while self.sleep(Duration::from_secs(3600)).await {}
    }

    /// Wait until the run is forced to stop.
    pub async fn forced(&self) {
        while self.sleep_unless_forced(Duration::from_secs(3600)).await {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn cancel_cuts_test_waits_but_not_cleanup_waits() {
        rt().block_on(async {
            let c = std::sync::Arc::new(Cancel::default());
            let c2 = c.clone();
            let t = tokio::spawn(async move { c2.sleep(Duration::from_secs(30)).await });
            tokio::time::sleep(Duration::from_millis(20)).await;
            c.cancel();
            assert!(!t.await.unwrap());
            assert!(c.sleep_unless_forced(Duration::from_millis(10)).await);
            let c3 = c.clone();
            let t =
                tokio::spawn(async move { c3.sleep_unless_forced(Duration::from_secs(30)).await });
            tokio::time::sleep(Duration::from_millis(20)).await;
            c.force();
            assert!(!t.await.unwrap());
            assert!(c.is_cancelled() && c.is_forced());
            c.forced().await;
            c.cancelled().await;
        });
    }
}
