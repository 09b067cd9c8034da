//! The `rpconform` binary: parse the command line and hand over to `rpconform::cli`.

fn main() -> std::process::ExitCode {
    rpconform::cli::main()
}
