//! The `rpconform` binary: parse the command line and hand over to `rpconform::cli`.

/// mimalloc: see Cargo.toml for why.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    rpconform::cli::main()
}
