//! The rules: the catalogue and the engine that judges exchanges against it. Every verdict the
//! tool reports is made here, whichever front end produced the exchanges.
//!
//! - `catalogue`: every rule with its ID, level, profile, statement, source and the project's
//!   decision (`catalogue.tsv`).
//! - `ledger`: a test's findings per rule (passes, failures with a count, "not judged" reasons).
//! - `engine`: the [`Judge`] a front end feeds; `flow` and `records` are what it is fed beyond
//!   single exchanges (a followed operation, a monitor, a task write, a sweep).
//! - one module per family holds that family's judgements: `hdr`, `err`, `etag`, `put`, `patch`,
//!   `del`, `loc`, `aao`, `opres`, `pstate`, `rgdel`, `retry`, `res`, `mon`, `ops`, `task`.
//!   Families whose rules need requests of their own (ACT, NEST, SKU, PROP, API, most of ETAG and
//!   OPS) are stated in the suites (`suites/*.yaml`), each expectation citing its rule ID, and
//!   judged by `expect`.
//! - `shown`: what earlier exchanges showed about each resource (exists, settled, missing),
//!   kept in the judge's `History` for DEL-01, DEL-05 and PUT-01.
//! - `iso8601`: the date-times operation resources carry.

mod aao;
mod catalogue;
mod del;
mod engine;
mod err;
mod etag;
pub mod expect;
pub mod flow;
mod hdr;
pub mod implied;
pub mod iso8601;
mod ledger;
mod loc;
mod mon;
mod opres;
pub(crate) mod ops;
mod patch;
mod pstate;
mod put;
mod records;
mod res;
mod retry;
mod rgdel;
mod shown;
mod task;
#[cfg(test)]
pub(crate) mod testing;

pub use catalogue::{Level, Profile, Rule, all, families, family_of, get, ids, lookup};
pub use engine::{Judge, Registry, Stripped};
pub use ledger::{Cause, Finding, Ledger, Outcome, RuleTally};
pub use records::{MonitorRecord, SweepRecord, TaskRecord, TaskWrite};

/// The sources of the family modules, for listing which rules the engine judges by itself.
const FAMILY_SOURCES: &[&str] = &[
    include_str!("hdr.rs"),
    include_str!("err.rs"),
    include_str!("etag.rs"),
    include_str!("put.rs"),
    include_str!("patch.rs"),
    include_str!("del.rs"),
    include_str!("loc.rs"),
    include_str!("aao.rs"),
    include_str!("opres.rs"),
    include_str!("pstate.rs"),
    include_str!("rgdel.rs"),
    include_str!("retry.rs"),
    include_str!("res.rs"),
    include_str!("mon.rs"),
    include_str!("ops.rs"),
    include_str!("task.rs"),
];

/// The rules the engine judges on its own (on every exchange, or on every followed operation
/// or record), without a suite stating them: the IDs the family modules cite.
pub fn engine_rules() -> &'static [&'static str] {
    static IDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    IDS.get_or_init(|| {
        let mut out: Vec<&'static str> = ids()
            .filter(|id| {
                let quoted = format!("\"{id}\"");
                FAMILY_SOURCES.iter().any(|src| src.contains(&quoted))
            })
            .collect();
        out.sort_unstable();
        out
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_rule_the_engine_cites_exists_and_lives_in_its_family() {
        let re = regex::Regex::new(r#""([A-Z]{2,6})-(\d\d)""#).unwrap();
        for src in super::FAMILY_SOURCES {
            for c in re.captures_iter(src) {
                let id = format!("{}-{}", &c[1], &c[2]);
                assert!(
                    super::lookup(&id).is_some(),
                    "{id} is cited but not catalogued"
                );
            }
        }
        let judged = super::engine_rules();
        for id in [
            "HDR-01", "LOC-05", "PUT-02", "MON-06", "TASK-06", "RGDEL-03", "OPRES-09",
        ] {
            assert!(judged.contains(&id), "{id}");
        }
    }
}
