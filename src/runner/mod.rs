//! The runner: turns test instances into libtest-mimic trials, runs them concurrently on one
//! tokio runtime, and hands the results to the reporters.
//!
//! `context` is what a run shares (target, HTTP client, cleanup, cancellation); `exec` runs one
//! test's steps; `lro` follows long-running operations; `partition` splits a run across CI
//! machines; `harness` drives libtest-mimic; `cleanup` deletes what the run left.

mod cleanup;
mod context;
mod exec;
pub mod harness;
pub mod ids;
mod lro;
pub mod partition;
mod surfaces;

pub use cleanup::{create_resource_group, final_cleanup};
pub use context::{Cancel, Cleanup, RunCtx};
pub use exec::run_instance;
