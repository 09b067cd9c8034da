//! The rule engine: every verdict the tool reports is made here, as a [`Finding`] for a rule ID.
//!
//! `ledger` collects findings per scenario (passes counted, failures kept with expected, seen
//! and the exchange); `ambient` holds the rules checked on every exchange (headers, error
//! envelope, Location/Retry-After, operation resource, resource envelope...); `expect` evaluates
//! the expectations a scenario states; `arm_path` classifies ARM URLs. Rule code is a function
//! of exchanges and context only, never of a particular target.

pub mod ambient;
pub mod arm_path;
pub mod expect;
mod ledger;

pub use ledger::{Finding, Ledger, Outcome, RuleTally};

/// Rules checked on every exchange in scope (ambient) or by every poll loop.
pub fn ambient_rules() -> &'static [&'static str] {
    &[
        "HDR-01",
        "HDR-02",
        "HDR-03",
        "ERR-01",
        "ERR-02",
        "ERR-03",
        "RETRY-01",
        "LOC-01",
        "LOC-02",
        "LOC-03",
        "LOC-04",
        "LOC-09",
        "AAO-01",
        "AAO-02",
        "AAO-03",
        "OPRES-01",
        "OPRES-02",
        "OPRES-04",
        "OPRES-05",
        "OPRES-06",
        "OPRES-07",
        "OPRES-08",
        "OPS-07",
        "OPS-08",
        "ETAG-24",
        "RES-01",
        "RES-02",
        "RES-03",
        "RES-04",
        "RES-05",
        "PSTATE-01",
        "PSTATE-05",
        "DEL-02",
        // Checked by the poller whenever it follows an operation.
        "OPRES-03",
        "LOC-05",
        "LOC-06",
        "LOC-08",
        "PUT-02",
        "PUT-03",
        "PUT-04",
        "PATCH-02",
        "DEL-03",
        "AAO-04",
        "PSTATE-02",
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_rule_code_cites_exists() {
        for id in super::ambient_rules() {
            assert!(crate::rules::lookup(id).is_some(), "{id}");
        }
    }
}
