//! Which subcommand runs: the dispatch table.

use super::args::{Cli, Command, ReportCommand};

pub fn dispatch(cli: Cli) -> u8 {
    match cli.command {
        Command::Run(a) => {
            let a = *a;
            if a.fault_matrix {
                super::matrix::fault_matrix(a)
            } else if a.variant_matrix {
                super::matrix::variant_matrix(a)
            } else {
                super::run::run(a)
            }
        }
        Command::Plan(a) => super::run::plan_command(*a),
        Command::Check(a) => super::check::check(a),
        Command::Rules(a) => super::rules::rules(a),
        Command::Init(a) => super::init::init(a),
        Command::Probe(a) => super::probe::probe(a),
        Command::Doctor(a) => super::doctor::doctor(a),
        Command::Serve(a) => super::embedded::serve(a),
        Command::Replay(a) => super::replay::replay(a),
        Command::Proxy(a) => super::proxy::proxy(a),
        Command::Cleanup(a) => super::cleanup::cleanup(a),
        Command::Report(ReportCommand::Merge {
            inputs,
            out,
            force,
            certify,
            allow_missing,
        }) => super::report::merge(
            &inputs,
            &out,
            &crate::report::MergeOptions {
                force,
                certify,
                allow_missing,
            },
        ),
        Command::Report(ReportCommand::Diff { old, new, format }) => {
            super::report::diff(&old, &new, format == "markdown")
        }
    }
}
