//! Which subcommand runs: the dispatch table.

use super::args::{Cli, Command, ReportCommand};
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::report;

pub fn dispatch(cli: Cli) -> u8 {
    match cli.command {
        Command::Run(a) => {
            if a.fault_matrix {
                super::matrix::fault_matrix(a)
            } else {
                super::run::run(a)
            }
        }
        Command::Check(a) => super::check::check(a),
        Command::Rules(a) => super::rules::rules(a),
        Command::Init(a) => super::init::init(a),
        Command::Doctor(a) => super::doctor::doctor(a),
        Command::Serve(a) => super::embedded::serve(a),
        Command::Report(ReportCommand::Merge { inputs, out }) => match report::merge(&inputs, &out)
        {
            Ok(c) => {
                println!(
                    "merged {} reports into {}: {} passed, {} warned, {} failed, {} errors, {} skipped",
                    inputs.len(),
                    out.display(),
                    c.passed,
                    c.warned,
                    c.failed,
                    c.errors,
                    c.skipped
                );
                if c.failed + c.errors > 0 {
                    EXIT_FAILED
                } else {
                    EXIT_OK
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_USAGE
            }
        },
    }
}
