//! Pacing a run's requests within the rate limits of its endpoint (ARM's per-subscription
//! budgets): the limits, and the cell-rate bucket that spaces requests.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Request-rate limits (requests per second; `None`: unlimited). Writes (PUT, PATCH, DELETE,
/// POST) have a budget of their own, as ARM counts them apart.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    pub max_rps: Option<f64>,
    pub max_write_rps: Option<f64>,
}

impl Limits {
    /// What a run against a real ARM endpoint uses unless told otherwise: ARM refills a
    /// subscription's write bucket at 10 per second and its read bucket at 25 (per region and
    /// principal), so half of each leaves room for the other clients of the subscription.
    pub const ARM: Limits = Limits {
        max_rps: Some(12.0),
        max_write_rps: Some(5.0),
    };
}

/// A generic cell rate: request `n` may go at `start + n * interval`, with a burst of `burst`
/// requests allowed at once. O(1) per request, fair (first come, first served).
#[derive(Debug)]
pub(super) struct Bucket {
    interval: Duration,
    tolerance: Duration,
    tat: Mutex<Option<Instant>>,
}

impl Bucket {
    pub(super) fn new(rps: f64) -> Option<Bucket> {
        if !(rps.is_finite() && rps > 0.0) {
            return None;
        }
        // A rate so low its interval is no duration: no bucket would ever let one through.
        let interval = Duration::try_from_secs_f64(1.0 / rps).ok()?;
        let burst = rps.ceil().max(1.0) as u32;
        Some(Bucket {
            interval,
            tolerance: interval * (burst - 1),
            tat: Mutex::new(None),
        })
    }

    /// When the next request may go (reserving its slot).
    pub(super) fn reserve(&self, now: Instant) -> Instant {
        let mut tat = self.tat.lock().unwrap_or_else(|e| e.into_inner());
        let t = tat.unwrap_or(now).max(now);
        let go = t.checked_sub(self.tolerance).unwrap_or(now).max(now);
        *tat = Some(t.max(go) + self.interval);
        go
    }
}
