//! clap definitions of every subcommand and flag.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rpconform",
    version = crate::suiteset::VERSION_LINE,
    about = "Conformance tester for Azure Resource Manager resource providers and other asynchronous resource APIs"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run suites against a target and write reports.
    Run(RunArgs),
    /// Check suites (and a target file) without sending a request.
    Check(CheckArgs),
    /// Print the rule catalogue.
    Rules(RulesArgs),
    /// Serve the embedded reference RP on 127.0.0.1.
    Serve(ServeArgs),
    /// Work with report directories.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Write a target file from the RP's OpenAPI spec(s).
    Init(InitArgs),
    /// Check, in a few seconds, that a target is ready for a run: token, endpoint, provider
    /// registration, resource group, clock, ARM rate limits.
    Doctor(DoctorArgs),
}

/// Where suites and schemas come from (run, check, rules): without any, `./suites` and
/// `./schemas` in a checkout, else the set built into the binary.
const SUITES_HELP: &str = "Suite folder or file: DIR replaces the default set (./suites, else the built-in one), +DIR adds to it; repeatable";
const SCHEMAS_HELP: &str = "Schema folder: DIR replaces the default (./schemas, else beside the suites, else the built-in one), +DIR adds its files; repeatable";

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// The target file to check (`embedded` checks the reference RP, started in-process).
    #[arg(long)]
    pub target: String,
    /// Do not verify TLS certificates (as `run --insecure`).
    #[arg(long)]
    pub insecure: bool,
    /// Seconds each network check may take.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub timeout: u64,
}

#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// OpenAPI 2.0 (azure-rest-api-specs style) or OpenAPI 3 (TypeSpec) files, JSON or YAML.
    #[arg(long = "openapi", value_name = "SPEC", num_args = 1.., required = true)]
    pub openapi: Vec<PathBuf>,
    /// Where to write the target file (`-` for standard output).
    #[arg(short = 'o', long = "output", default_value = "target.yaml")]
    pub output: PathBuf,
    /// Overwrite an existing output file.
    #[arg(long)]
    pub force: bool,
    /// The subscription to put in the file (default: a placeholder with a TODO).
    #[arg(long)]
    pub subscription: Option<String>,
    #[arg(long, default_value = "eastus")]
    pub location: String,
    /// The resource group name (the run creates it, with a unique suffix).
    #[arg(long, default_value = "rpconform-ci")]
    pub resource_group: String,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Suite files or folders (default: ./suites, else the built-in set), and at most one
    /// test-name filter.
    #[arg(value_name = "SUITE_PATHS")]
    pub paths: Vec<PathBuf>,
    #[arg(long = "suites", value_name = "[+]DIR", help = SUITES_HELP)]
    pub suites: Vec<String>,
    /// `embedded` (the reference RP, in-process) or a target file.
    #[arg(long, default_value = "embedded")]
    pub target: String,
    /// Reference-RP fault knobs to turn on (with --target embedded).
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    /// Operation duration of the embedded RP, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub op_duration: u64,
    /// Multiply every wait (Retry-After, sleeps) by F; F != 1 marks the run accelerated.
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub time_scale: f64,
    /// SHOULD failures fail the run too.
    #[arg(long)]
    pub strict: bool,
    /// Where reports go.
    #[arg(long, default_value = "reports")]
    pub report_dir: PathBuf,
    #[arg(long = "schemas", value_name = "[+]DIR", help = SCHEMAS_HELP)]
    pub schemas: Vec<String>,
    /// Run one partition of the tests: hash:M/N or count:M/N.
    #[arg(long, value_name = "hash:M/N|count:M/N")]
    pub partition: Option<String>,
    /// Do not verify TLS certificates.
    #[arg(long)]
    pub insecure: bool,
    /// Do not fetch URLs on another origin than the target's (they are reported).
    #[arg(long)]
    pub no_foreign: bool,
    /// Seconds one operation may take before its poll gives up (overrides the target file).
    #[arg(long, value_name = "SECS")]
    pub deadline: Option<u64>,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 60)]
    pub request_timeout: u64,
    /// Largest response body read, in bytes.
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    pub body_cap: usize,
    /// Run the suites once per reference-RP fault and write reports/fault-matrix.md.
    #[arg(long)]
    pub fault_matrix: bool,

    // cargo-test flags.
    /// Run only tests whose name contains FILTER (exactly, with --exact).
    #[arg(long = "filter", short = 'f', value_name = "FILTER")]
    pub filter: Option<String>,
    #[arg(long)]
    pub exact: bool,
    /// Skip tests whose name contains this (repeatable).
    #[arg(long)]
    pub skip: Vec<String>,
    /// List the tests and exit.
    #[arg(long)]
    pub list: bool,
    #[arg(long)]
    pub include_ignored: bool,
    #[arg(long)]
    pub ignored: bool,
    /// Tests run at once (default 32: most of a test's time is waiting on polls).
    #[arg(long)]
    pub test_threads: Option<usize>,
    /// One character per test.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Suite files or folders (default: ./suites, else the built-in set).
    #[arg(value_name = "SUITE_PATHS")]
    pub paths: Vec<PathBuf>,
    #[arg(long = "suites", value_name = "[+]DIR", help = SUITES_HELP)]
    pub suites: Vec<String>,
    /// Also check this target file (and that the suites can run on it).
    #[arg(long)]
    pub target: Option<PathBuf>,
    #[arg(long = "schemas", value_name = "[+]DIR", help = SCHEMAS_HELP)]
    pub schemas: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RulesArgs {
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
    /// Only rules of this profile (arm, propagation, azure-core-lro, aro-hcp, task-api); repeatable.
    #[arg(long = "profile", value_name = "P")]
    pub profiles: Vec<String>,
    /// Only rules of this family (ETAG, LOC...); repeatable.
    #[arg(long = "family", value_name = "F")]
    pub families: Vec<String>,
    /// Only these rules; repeatable.
    #[arg(long = "rule", value_name = "ID")]
    pub rules: Vec<String>,
    /// Suites whose coverage to show: DIR replaces the default set (./suites, else the
    /// built-in one), +DIR adds to it; repeatable.
    #[arg(long = "suites", value_name = "[+]DIR")]
    pub suites: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    #[arg(long, default_value_t = 1000)]
    pub op_duration: u64,
    #[arg(long, default_value_t = 10)]
    pub retry_after: u64,
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    #[arg(long, default_value = "reports/embedded-target.yaml")]
    pub write_target: PathBuf,
    /// Print every fault knob with the rules it breaks, and exit.
    #[arg(long)]
    pub list_faults: bool,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Join the reports of partitioned runs (directories or report.json files).
    Merge {
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        #[arg(long, default_value = "reports")]
        out: PathBuf,
    },
}
