//! [`Settings`]: timing, paging, the hold-open gate and the sets of enabled [`Fault`] and
//! [`Variant`] knobs of one RP instance.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::faults::Fault;
use crate::variants::Variant;

/// How one reference RP behaves. `Settings::default()` is the conforming RP with no variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// How long every asynchronous operation runs before it ends. On the task surface each
    /// task phase takes a third of it, and provisioning after the task takes all of it.
    pub op_duration: Duration,
    /// The `Retry-After` value, in seconds, sent with asynchronous answers.
    pub retry_after_secs: u64,
    /// Items per page of a collection list (`page-size-1` overrides it).
    pub page_size: usize,
    /// Hold-open gate: when above 0, an operation ends only once `op_duration` has passed AND
    /// it has been observed running this many times through its own channels (reads of its
    /// operation status URL or Location URL, of its data-plane monitor or task; GETs of the
    /// resource itself where the answer gave no operation URL). 0: time alone ends it. The
    /// running phases time would show (data-plane `NotStarted`, task `received`, the
    /// `custom-running-states` names) then also wait for a read each.
    pub complete_after_reads: u32,
    /// Enabled fault knobs (empty: conforming).
    pub faults: BTreeSet<Fault>,
    /// Enabled variant knobs: legal behaviours other than the default ones.
    pub variants: BTreeSet<Variant>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            op_duration: Duration::from_millis(1000),
            retry_after_secs: 10,
            page_size: 3,
            complete_after_reads: 0,
            faults: BTreeSet::new(),
            variants: BTreeSet::new(),
        }
    }
}

impl Settings {
    /// These settings with `fault` enabled as well.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.faults.insert(fault);
        self
    }

    /// These settings with `variant` enabled as well.
    pub fn with_variant(mut self, variant: Variant) -> Self {
        self.variants.insert(variant);
        self
    }

    /// These settings with another operation duration.
    pub fn with_op_duration(mut self, op_duration: Duration) -> Self {
        self.op_duration = op_duration;
        self
    }

    /// These settings with the hold-open gate at `reads` observations (0 turns it off).
    pub fn with_complete_after_reads(mut self, reads: u32) -> Self {
        self.complete_after_reads = reads;
        self
    }

    /// Whether `fault` is enabled.
    pub fn has(&self, fault: Fault) -> bool {
        self.faults.contains(&fault)
    }

    /// Whether `variant` is enabled.
    pub fn is(&self, variant: Variant) -> bool {
        self.variants.contains(&variant)
    }

    /// Items per list page in force.
    pub fn effective_page_size(&self) -> usize {
        if self.is(Variant::PageSize1) {
            1
        } else {
            self.page_size.max(1)
        }
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
        assert_eq!(s.complete_after_reads, 0);
        assert!(s.faults.is_empty() && s.variants.is_empty());
        assert_eq!(s.effective_page_size(), 3);
        let s = s
            .with_fault(Fault::FlatError)
            .with_variant(Variant::PageSize1)
            .with_complete_after_reads(2);
        assert!(s.has(Fault::FlatError) && s.is(Variant::PageSize1));
        assert_eq!((s.effective_page_size(), s.complete_after_reads), (1, 2));
    }
}
