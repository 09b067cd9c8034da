//! The end-to-end tests: one test binary, each file of `tests/` a module of it (the files with
//! a harness of their own, run-time skips, are their own binaries). One binary links the
//! library once instead of once per file: a fresh build links ~45 fewer executables.
//! `cargo nextest run -E 'test(/^matrices::/)'` runs one file's tests.

#[path = "bounded_inputs.rs"]
mod bounded_inputs;
#[path = "certification.rs"]
mod certification;
#[path = "certify_variants.rs"]
mod certify_variants;
#[path = "check_errors.rs"]
mod check_errors;
#[path = "ci_docs.rs"]
mod ci_docs;
#[path = "ci_script.rs"]
mod ci_script;
#[path = "cli_usage.rs"]
mod cli_usage;
mod common;
#[path = "doctor.rs"]
mod doctor;
#[path = "embedded_run.rs"]
mod embedded_run;
#[path = "fail_fast.rs"]
mod fail_fast;
#[path = "field_rates.rs"]
mod field_rates;
#[path = "frontdoor.rs"]
mod frontdoor;
mod hostile;
#[path = "hostile_targets.rs"]
mod hostile_targets;
#[path = "init_openapi.rs"]
mod init_openapi;
#[path = "install_anywhere.rs"]
mod install_anywhere;
#[path = "interrupt_and_safety.rs"]
mod interrupt_and_safety;
#[path = "loader_fuzz.rs"]
mod loader_fuzz;
mod local;
#[path = "matrices.rs"]
mod matrices;
#[path = "other_rp.rs"]
mod other_rp;
#[path = "partition.rs"]
mod partition;
#[path = "plan_and_coverage.rs"]
mod plan_and_coverage;
#[path = "probe.rs"]
mod probe;
#[path = "proxy_cli.rs"]
mod proxy_cli;
#[path = "proxy_old_clients.rs"]
mod proxy_old_clients;
#[path = "proxy_streaming.rs"]
mod proxy_streaming;
#[path = "redaction.rs"]
mod redaction;
#[path = "replay_formats.rs"]
mod replay_formats;
#[path = "replay_issue36.rs"]
mod replay_issue36;
#[path = "replay_large_har.rs"]
mod replay_large_har;
#[path = "replay_real.rs"]
mod replay_real;
#[path = "reports.rs"]
mod reports;
#[path = "reports_at_scale.rs"]
mod reports_at_scale;
#[path = "run_loop.rs"]
mod run_loop;
#[path = "run_status.rs"]
mod run_status;
#[path = "safety.rs"]
mod safety;
#[path = "sarif_defects.rs"]
mod sarif_defects;
#[path = "secrets.rs"]
mod secrets;
#[path = "spec_real.rs"]
mod spec_real;
#[path = "suite_walk.rs"]
mod suite_walk;
#[path = "test_lint.rs"]
mod test_lint;
#[path = "token_command.rs"]
mod token_command;
#[path = "traffic_agreement.rs"]
mod traffic_agreement;
