//! The command line: clap arguments turned into a validated plan, then run. Exit codes:
//! 0 every MUST rule passed; 1 a MUST rule failed (or a runner error); 2 usage, suite or
//! target-file errors.

/// `println!` that never panics: when the reader of stdout went away (`rpconform replay | head`)
/// the output stops, not the command, which still writes its reports and exits as it would.
macro_rules! outln {
    () => {
        $crate::cli::common::out_line(format_args!(""))
    };
    ($($t:tt)*) => {
        $crate::cli::common::out_line(format_args!($($t)*))
    };
}

/// `print!` that never panics (see [`outln`]).
macro_rules! out {
    ($($t:tt)*) => {
        $crate::cli::common::out_text(format_args!($($t)*))
    };
}

mod args;
mod check;
mod cleanup;
mod commands;
mod common;
mod doctor;
mod embedded;
mod init;
mod journal_cleanup;
mod list;
mod matrix;
mod outputs;
mod probe;
mod proxy;
mod replay;
mod report;
mod rules;
mod run;
mod signals;

pub use args::{Cli, Command};

use clap::Parser;
use std::process::ExitCode;

pub use crate::report::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE};

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    ExitCode::from(commands::dispatch(cli))
}
