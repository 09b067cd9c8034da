//! rpconform: a conformance tester for asynchronous resource APIs, first of all Azure Resource
//! Manager resource providers.
//!
//! Data flows from a YAML suite to a JUnit line like this: `scenario` parses suites (with
//! positions) and expands them over the `target`'s resource types into test instances; the
//! `runner` runs each instance as a libtest-mimic trial, sending requests through `http`
//! (redacted [`http::Exchange`]s), following operations with its LRO poller, and asking
//! `checks` for verdicts (ambient rules on every exchange, stated expectations per step), each
//! citing a rule of the `rules` catalogue; `report` writes JUnit, JSON and Markdown. `cli` is the
//! command line. The reference RP lives in the `rpconform-refrp` crate.

pub mod checks;
pub mod cli;
pub mod diag;
pub mod http;
pub mod replay;
pub mod report;
pub mod rules;
pub mod runner;
pub mod scenario;
pub mod target;
pub mod template;
pub mod yaml;
