//! The command line: clap arguments turned into a validated plan, then run. Exit codes:
//! 0 every MUST rule passed; 1 a MUST rule failed (or a runner error); 2 usage, suite or
//! target-file errors.

mod args;
mod check;
mod cleanup;
mod commands;
mod common;
mod doctor;
mod embedded;
mod init;
mod list;
mod matrix;
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

pub const EXIT_OK: u8 = 0;
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

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
