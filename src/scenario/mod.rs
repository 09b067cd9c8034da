//! The scenario language: suite files of scenarios with setup, steps and teardown, tables,
//! captures, `${...}` variables and expectations tagged with rule IDs.
//!
//! `ast` is the language as data (every node positioned); `parse` reads suite files and checks
//! them statically; `plan` expands scenarios over target types and table rows into tests;
//! `select` picks the tests a run selects (name filters, and rules the tests judge).

mod ast;
mod files;
mod parse;
mod plan;
mod select;

pub use ast::*;
pub use ast::{StartSpec, TaskOp, TaskSpec};
pub use files::{MAX_DEPTH, MAX_DIRS, MAX_SUITE_FILES, MAX_TOTAL_BYTES, suite_files};
pub use parse::{LoadOptions, load_suites, parse_suite};
pub use plan::{Instance, expand};
pub use select::{Selection, aims, judges, select, stated_rules};
