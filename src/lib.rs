//! rpconform: a conformance tester for asynchronous resource APIs, first of all Azure Resource
//! Manager resource providers.
//!
//! Data flows from a YAML suite to a JUnit line like this: `scenario` parses suites (with
//! positions) and expands them over the `target`'s resource types into test instances; the
//! `runner` runs each instance as a libtest-mimic trial, sending requests through `http`
//! (redacted [`http::Exchange`]s) and following operations as `lro` describes them; every
//! exchange, followed operation and record goes to the `rules` engine, which judges them (and
//! the expectations a step states) against the rule catalogue; `report` writes JUnit, JSON and
//! Markdown. `cli` is the command line. The reference RP lives in the `rpconform-refrp` crate.

pub mod cancel;
pub mod cli;
pub mod diag;
pub mod fingerprint;
pub mod http;
pub mod init;
pub mod lro;
pub mod plan;
pub mod preflight;
pub mod proxy;
pub mod replay;
pub mod report;
pub mod rules;
pub mod runner;
pub mod scenario;
pub mod spec;
pub mod suiteset;
pub mod target;
pub mod template;
pub mod yaml;
