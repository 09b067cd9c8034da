//! [`Settings`]: timing, paging and the set of enabled [`Fault`] knobs of one RP instance.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::faults::Fault;

/// How one reference RP behaves. `Settings::default()` is the conforming RP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// How long every asynchronous operation runs before it ends. On the task surface each
    /// task phase takes a third of it, and provisioning after the task takes all of it.
    pub op_duration: Duration,
    /// The `Retry-After` value, in seconds, sent with asynchronous answers.
    pub retry_after_secs: u64,
    /// Items per page of a collection list.
    pub page_size: usize,
    /// Enabled fault knobs (empty: conforming).
    pub faults: BTreeSet<Fault>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            op_duration: Duration::from_millis(1000),
            retry_after_secs: 10,
            page_size: 3,
            faults: BTreeSet::new(),
        }
    }
}

impl Settings {
    /// These settings with `fault` enabled as well.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.faults.insert(fault);
        self
    }

    /// These settings with another operation duration.
    pub fn with_op_duration(mut self, op_duration: Duration) -> Self {
        self.op_duration = op_duration;
        self
    }

    /// Whether `fault` is enabled.
    pub fn has(&self, fault: Fault) -> bool {
        self.faults.contains(&fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_conforming() {
        let s = Settings::default();
        assert_eq!(s.op_duration, Duration::from_millis(1000));
        assert_eq!(s.retry_after_secs, 10);
        assert_eq!(s.page_size, 3);
        assert!(s.faults.is_empty());
        assert!(s.with_fault(Fault::FlatError).has(Fault::FlatError));
    }
}
