//! The runner: turns test instances into trials, runs them concurrently on one tokio runtime,
//! and hands the results to the reporters. It only drives (sends, waits, follows); every
//! judgement is the rule engine's (`crate::rules`).
//!
//! `context` is what a run shares (target, HTTP client, cleanup, cancellation); `exec` runs one
//! test's steps and evaluates what they state; `send` sends and records; `resources` creates
//! what a test needs; `follow` follows ARM operations (and `during` blocks); `monitor` and
//! `tasks` drive the data-plane and task surfaces; `sweep` deletes like a resource-group
//! delete; `partition` splits a run across CI machines; `harness` schedules the tests (tasks on
//! one runtime, libtest's arguments and lines) and `console` prints them; `cleanup` deletes
//! what each test created as it ends, and what is left at the end, confirming each delete;
//! `fixed` keeps fixed-name resources locked and restored; `journal` records what the run
//! creates as it goes; `probe` sends one request and follows what it starts.

mod chosen;
pub mod cleanup;
pub mod console;
mod context;
mod during;
mod exec;
mod expectations;
mod fixed;
mod follow;
mod group;
pub mod harness;
pub mod ids;
pub mod journal;
mod monitor;
pub mod partition;
mod probe;
mod ready;
mod resources;
mod send;
pub mod session;
mod settings;
mod sweep;
mod tasks;
mod tracked;

pub use crate::cancel::Cancel;
pub use cleanup::{create_resource_group, final_cleanup};
pub use context::{Cleanup, ExchangeObserver, RunCtx};
pub use exec::run_instance;
pub use probe::{ProbeRequest, probe};
pub use tracked::Tracked;
