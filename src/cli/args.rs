//! clap definitions of every subcommand and flag.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rpconform",
    version,
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
    /// Judge recorded traffic (HAR, Azure SDK test-proxy JSON, vcrpy YAML) and write reports.
    Replay(ReplayArgs),
    /// Pass any client's traffic to the target unchanged and judge it as it passes.
    Proxy(ProxyArgs),
    /// Work with report directories.
    #[command(subcommand)]
    Report(ReportCommand),
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Suite files or directories (default: suites/).
    #[arg(value_name = "SUITE_PATHS")]
    pub paths: Vec<PathBuf>,
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
    /// Where JSON Schemas are.
    #[arg(long, default_value = "schemas")]
    pub schemas: PathBuf,
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
    /// Also write every exchange of the run as HAR 1.2 (replayable with `rpconform replay`).
    #[arg(long, value_name = "FILE")]
    pub har: Option<PathBuf>,

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
pub struct ReplayArgs {
    /// Recording files, or directories searched for *.json, *.har, *.yaml and *.yml.
    #[arg(required = true, value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Read every file as this format instead of detecting it.
    #[arg(long, value_parser = ["har", "test-proxy", "vcrpy"])]
    pub format: Option<String>,
    /// A target file saying what the RP declares (default: inferred from the recordings).
    #[arg(long, value_name = "FILE")]
    pub target: Option<PathBuf>,
    /// Write the target used (inferred or given) as a target file, to review and reuse.
    #[arg(long, value_name = "FILE")]
    pub write_target: Option<PathBuf>,
    /// Where reports go.
    #[arg(long, default_value = "reports")]
    pub report_dir: PathBuf,
    /// SHOULD failures fail the recording too.
    #[arg(long)]
    pub strict: bool,
    /// Largest response body kept, in bytes.
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    pub body_cap: usize,
    /// A host whose traffic is ARM besides management.azure.com, management.* and loopback
    /// (repeatable).
    #[arg(long = "arm-host", value_name = "HOST")]
    pub arm_hosts: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The target file: where traffic goes (its base_url) and what the RP declares.
    #[arg(long, value_name = "FILE")]
    pub target: PathBuf,
    /// Where the proxy listens (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:0", value_name = "IP:PORT")]
    pub listen: String,
    /// Allow a --listen address that is not loopback.
    #[arg(long)]
    pub allow_remote: bool,
    /// Where reports go (when stopped, and every --every seconds).
    #[arg(long, default_value = "reports")]
    pub report_dir: PathBuf,
    /// Also write the reports every SECS seconds while running.
    #[arg(long, value_name = "SECS")]
    pub every: Option<u64>,
    /// Rewrite Location, Azure-AsyncOperation and Operation-Location answers that point at the
    /// target so they point at the proxy (reverse mode; reported as such).
    #[arg(long)]
    pub rewrite_links: bool,
    /// Seconds an ended operation waits for its last reads before it is judged.
    #[arg(long, default_value_t = 5, value_name = "SECS")]
    pub settle: u64,
    /// Seconds without a read before a running operation is judged as not seen to end.
    #[arg(long, default_value_t = 900, value_name = "SECS")]
    pub idle: u64,
    /// SHOULD failures fail a namespace too.
    #[arg(long)]
    pub strict: bool,
    /// Largest body kept for judging, in bytes (larger bodies still pass).
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    pub body_cap: usize,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[arg(value_name = "SUITE_PATHS")]
    pub paths: Vec<PathBuf>,
    /// Also check this target file (and that the suites can run on it).
    #[arg(long)]
    pub target: Option<PathBuf>,
    #[arg(long, default_value = "schemas")]
    pub schemas: PathBuf,
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
    /// Suites whose coverage to show (default: suites/).
    #[arg(long = "suites", default_value = "suites")]
    pub suites: PathBuf,
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
