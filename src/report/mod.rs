//! Reports. The runner hands each finished test ([`ScenarioResult`]) to a [`ResultsWriter`],
//! which appends it to `results.jsonl` with the transcript policy applied; at the end
//! [`write_all`] reads that file back, streaming, into:
//!
//! - `conformance.md`: the conformance view, rule by rule ([`conformance`]);
//! - `summary.md`: the verdict, failed and warned rules first, failed tests, one line per suite;
//! - `junit.xml`: a `conformance` testsuite (one testcase per rule) and one testsuite per suite
//!   file (one testcase per test, failing on the rules it states);
//! - `report.json`: settings, counts, the conformance view, every test (input of `report merge`
//!   and `report diff`);
//! - `report.html`: one self-contained page with all of it and the transcripts;
//! - `results.sarif`: SARIF 2.1.0, the catalogue as its rules and one result per defect (a rule
//!   broken at one operation of the RP), located in the user's target file or spec ([`sarif`],
//!   [`stable`]).
//!
//! [`Counts`] are the one set of counts all of them, and the console ([`console_summary`]),
//! show. `render` writes a failure once as text; `merge` joins partitioned runs; `diff`
//! compares two runs.

mod cells;
pub mod conformance;
mod counts;
pub mod diff;
mod html;
mod json;
mod junit;
mod kinds;
mod markdown;
mod markdown_views;
mod merge;
mod model;
pub mod namespaces;
pub mod render;
mod sarif;
pub mod stable;
mod status;
mod stream;
mod summary_line;
mod timeline;
mod write;

#[cfg(test)]
mod fixtures;

pub use conformance::{Conformance, RuleVerdict, conformance};
pub use counts::{Counts, Kind, RuleCounts, test_status, unstated_failures};
pub use json::{ReportHead, read_report, report_path};
pub use merge::{MergeError, MergeOptions, merge};
pub use model::*;
pub use sarif::{EMBEDDED_TARGET, SARIF_FILE, SARIF_SCHEMA};
pub use status::{
    Certification, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, RunState, RunStatus,
};
pub use stream::{RESULTS_FILE, ResultsWriter, Transcripts, apply_policy};
pub use summary_line::console_summary;
pub use write::{Written, write_all};
