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

// Parsed once per process: the size of the `run` variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run suites against a target and write reports.
    Run(Box<RunArgs>),
    /// What `run` with the same options would send, before anything is sent: tests, PUTs per
    /// type, requests, the longest chain of waits, the expected duration, resource-minutes.
    Plan(Box<RunArgs>),
    /// Check suites (and a target file) without sending a request.
    Check(CheckArgs),
    /// Print the rule catalogue.
    Rules(RulesArgs),
    /// Send one request, follow the operation it starts, and judge it by every rule.
    Probe(ProbeArgs),
    /// Serve the embedded reference RP on 127.0.0.1.
    Serve(ServeArgs),
    /// Judge recorded traffic (HAR, Azure SDK test-proxy JSON, vcrpy YAML) and write reports.
    Replay(ReplayArgs),
    /// Pass any client's traffic to the target unchanged and judge it as it passes.
    Proxy(ProxyArgs),
    /// Work with report directories.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Write a target file from the RP's OpenAPI spec(s).
    Init(InitArgs),
    /// Delete what a run left: what its journal lists, or tagged resource groups.
    Cleanup(CleanupArgs),
    /// Check, in a few seconds, that a target is ready for a run: token, endpoint, provider
    /// registration, resource group, clock, ARM rate limits.
    Doctor(DoctorArgs),
}

/// Where suites and schemas come from (run, check, rules): without any, `./suites` and
/// `./schemas` in a checkout, else the set built into the binary.
const SUITES_HELP: &str = "Suite folder or file: DIR replaces the default set (./suites, else the built-in one), +DIR adds to it; repeatable";
const SCHEMAS_HELP: &str = "Schema folder: DIR replaces the default (./schemas, else beside the suites, else the built-in one), +DIR adds its files; repeatable";

/// Longest `--request-timeout`: an hour.
pub const MAX_REQUEST_TIMEOUT_SECS: u64 = 3600;

/// Whole seconds from 1 to `max`: a usage error (exit 2) otherwise, saying the bound.
fn bounded_secs(s: &str, max: u64, max_text: &str) -> Result<u64, String> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of seconds"))?;
    if v == 0 || v > max {
        return Err(format!("must be from 1 to {max} seconds ({max_text})"));
    }
    Ok(v)
}

/// `--deadline`: at most [`crate::target::MAX_DEADLINE_SECS`].
pub(crate) fn deadline_secs(s: &str) -> Result<u64, String> {
    bounded_secs(
        s,
        crate::target::MAX_DEADLINE_SECS,
        crate::target::MAX_DEADLINE_TEXT,
    )
}

/// `--request-timeout`: at most [`MAX_REQUEST_TIMEOUT_SECS`].
pub(crate) fn timeout_secs(s: &str) -> Result<u64, String> {
    bounded_secs(s, MAX_REQUEST_TIMEOUT_SECS, "an hour")
}

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
    /// The Azure region the file's resources are created in.
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
    /// Reference-RP variant knobs (legal behaviours) to turn on (with --target embedded);
    /// `rpconform serve --list-variants` lists them.
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Hold every embedded-RP operation open until it has been read N times through its own
    /// channels (0: time alone ends it), so no verdict depends on machine load.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub hold_reads: u32,
    /// Operation duration of the embedded RP, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub op_duration: u64,
    /// Multiply every wait (Retry-After, sleeps) by F; F != 1 marks the run accelerated.
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub time_scale: f64,
    /// SHOULD failures fail the run too.
    #[arg(long)]
    pub strict: bool,
    /// Judge the run as a certification: it certifies only at time scale 1, with nothing
    /// selected out, nothing left behind, not interrupted, and every MUST rule of the declared
    /// profiles judged and passed; any other run says "not certified" and why, and exits 1.
    #[arg(long)]
    pub certify: bool,
    /// The RP build under test, `NAME@VERSION` (`contoso-rp@1.4.2`): named in every report's
    /// provenance, so a certificate says what it certifies (default: the target file's
    /// `subject:`).
    #[arg(long, value_name = "NAME@VERSION")]
    pub subject: Option<String>,
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
    /// Seconds one operation may take before its poll gives up (overrides the target file;
    /// at most a week).
    #[arg(long, value_name = "SECS", value_parser = deadline_secs)]
    pub deadline: Option<u64>,
    /// Seconds one request may take (at most an hour).
    #[arg(long, default_value_t = 60, value_name = "SECS", value_parser = timeout_secs)]
    pub request_timeout: u64,
    /// Send a request again, up to N times, when it got no answer of the RP's (no answer at
    /// all, or a 502/503/504 without the ARM error body); a test that needed it is reported
    /// flaky. What the RP answered is judged, never retried.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retries: u32,
    /// Largest response body read, in bytes.
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    pub body_cap: usize,
    /// Run the suites once per reference-RP fault and write reports/fault-matrix.md.
    #[arg(long)]
    pub fault_matrix: bool,
    /// Run the suites once per reference-RP variant, once with all compatible variants, and
    /// the fault matrix with them on; write reports/variant-matrix.md.
    #[arg(long, conflicts_with = "fault_matrix")]
    pub variant_matrix: bool,
    /// Matrix runs at once (each in its own process; default: cores + 1).
    #[arg(long, value_name = "N")]
    pub matrix_jobs: Option<usize>,
    /// Also write every exchange of the run as HAR 1.2 (replayable with `rpconform replay`).
    #[arg(long, value_name = "FILE")]
    pub har: Option<PathBuf>,

    // Selection (cargo-test / nextest / pytest style).
    /// Run only tests whose name contains FILTER (exactly, with --exact); repeatable: any
    /// matches. Positional arguments that are not paths are filters too.
    #[arg(long = "filter", short = 'f', value_name = "FILTER")]
    pub filters: Vec<String>,
    /// Run only the tests that judge this rule (stated, or judged by the engine on what their
    /// steps can show); repeatable, with --family and --profile: any matches.
    #[arg(long = "rule", value_name = "ID")]
    pub rules: Vec<String>,
    /// Run only the tests that judge a rule of this family (ETAG, LOC...); repeatable.
    #[arg(long = "family", value_name = "F")]
    pub families: Vec<String>,
    /// Run only the tests that judge a rule of this profile (arm, propagation, azure-core-lro,
    /// aro-hcp, task-api); repeatable.
    #[arg(long = "profile", value_name = "P")]
    pub profiles: Vec<String>,
    /// Which exchanges reports keep: every one, those of failing tests (and a sample of the
    /// others), or none.
    #[arg(long, default_value = "failures", value_parser = ["all", "failures", "none"])]
    pub transcripts: String,
    /// Output format of --list and of `plan`.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
    /// `full` runs every selected test; `min` only the fewest (cheapest first) that give every
    /// rule they judge, per type, the same chance of a verdict (a rule a test states only by a
    /// test that states it); the reports say which tests stood in for which.
    #[arg(long, default_value = "full", value_parser = ["full", "min"])]
    pub coverage: String,
    /// With --rule, --family or --profile: send only what those rules need (the fewest tests
    /// that judge them, per type), not every test that can show them. Same as --coverage min
    /// with a rule selection.
    #[arg(long)]
    pub rule_only: bool,
    /// Filters match whole test names, not parts of them.
    #[arg(long)]
    pub exact: bool,
    /// Skip tests whose name contains this (repeatable).
    #[arg(long)]
    pub skip: Vec<String>,
    /// List the tests and exit.
    #[arg(long)]
    pub list: bool,
    /// Start no more tests after the first that fails or errors (those running end, cleanup
    /// runs as always); the tests not started are reported skipped, "not run". Every test
    /// starts at once by default, so this stops most under --test-threads N.
    #[arg(long, overrides_with = "no_fail_fast")]
    pub fail_fast: bool,
    /// Run every selected test whatever fails (the default; overrides --fail-fast).
    #[arg(long, overrides_with = "fail_fast")]
    pub no_fail_fast: bool,
    /// Run only the tests that failed or errored in DIR's report.json (default: the report
    /// directory, --report-dir); with none failed, run nothing and exit 0.
    #[arg(
        long,
        value_name = "DIR",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub rerun_failed: Option<String>,
    /// Run the ignored (not applicable) tests too; they report why they cannot run.
    #[arg(long)]
    pub include_ignored: bool,
    /// Run only the ignored (not applicable) tests.
    #[arg(long)]
    pub ignored: bool,
    /// Most tests running at once (default: as many as the rate limits allow; tests are waits,
    /// not work, and hold no thread).
    #[arg(long)]
    pub test_threads: Option<usize>,
    /// One character per test, printed as each ends.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Show each exchange as it happens (redacted).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Color the test lines: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
    /// Most requests per second (default: unlimited against a local endpoint such as the
    /// embedded RP; 12 per second, 5 of them writes, against any other, within ARM's
    /// per-subscription limits); at least 0.001.
    #[arg(long, value_name = "N")]
    pub max_rps: Option<f64>,
}

#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// A report directory (or journal file) of a run that did not finish its cleanup: delete
    /// what its journal lists as not confirmed gone, and nothing else.
    #[arg(long, value_name = "DIR")]
    pub journal: Option<PathBuf>,
    /// Find resource groups that runs created (tagged `rpconform-run` and
    /// `created-by: rpconform`) in the target's subscription and delete those older than
    /// --older-than.
    #[arg(long)]
    pub sweep_tagged: bool,
    /// With --sweep-tagged: only groups created longer ago than this (30m, 2h, 1d).
    #[arg(long, value_name = "AGE", default_value = "2h")]
    pub older_than: String,
    /// The target file (default for --journal: the one the journal records).
    #[arg(long, value_name = "FILE")]
    pub target: Option<PathBuf>,
    /// Say what would be deleted, delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Seconds to wait for one delete to be confirmed (at most a week).
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = deadline_secs)]
    pub deadline: u64,
    /// Seconds one request may take (at most an hour).
    #[arg(long, default_value_t = 60, value_name = "SECS", value_parser = timeout_secs)]
    pub request_timeout: u64,
    /// Do not verify TLS certificates.
    #[arg(long)]
    pub insecure: bool,
    /// Clean up even when the run that wrote the journal still runs (its own cleanup may be
    /// deleting the same resources).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ProbeArgs {
    /// HTTP method: GET, PUT, PATCH, DELETE, POST...
    pub method: String,
    /// An absolute URL, or a path on the target.
    pub url: String,
    /// A file whose content is the request body (sent as is, JSON by default).
    #[arg(long, value_name = "FILE")]
    pub body: Option<PathBuf>,
    /// A request header `Name: value` (repeatable); it replaces the standard header of that name.
    #[arg(long = "header", short = 'H', value_name = "K:V")]
    pub headers: Vec<String>,
    /// `embedded` or a target file. Without it, a path probes the embedded reference RP and an
    /// absolute URL a minimal target inferred from the URL (its origin, no credentials).
    #[arg(long)]
    pub target: Option<String>,
    /// The RP's own OpenAPI spec file: the answers are also judged against it (the SPEC
    /// rules), besides any `openapi:` of the target file; repeat for several files.
    #[arg(long = "openapi", value_name = "SPEC")]
    pub openapi: Vec<PathBuf>,
    /// Also write the usual reports (junit.xml, report.json, summary.md) here.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Reference-RP fault knobs to turn on (embedded target).
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    /// Operation duration of the embedded RP, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub op_duration: u64,
    /// Multiply every wait (Retry-After) by F.
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub time_scale: f64,
    /// SHOULD failures fail the probe too.
    #[arg(long)]
    pub strict: bool,
    /// Leave what the request creates (by default a resource the probe's PUT created is deleted).
    #[arg(long)]
    pub keep: bool,
    /// Seconds the operation may take (overrides the target file; at most a week).
    #[arg(long, value_name = "SECS", value_parser = deadline_secs)]
    pub deadline: Option<u64>,
    /// Do not verify TLS certificates.
    #[arg(long)]
    pub insecure: bool,
    /// Do not fetch URLs on another origin than the target's (they are reported).
    #[arg(long)]
    pub no_foreign: bool,
    /// Seconds one request may take (at most an hour).
    #[arg(long, default_value_t = 60, value_name = "SECS", value_parser = timeout_secs)]
    pub request_timeout: u64,
    /// Largest response body read, in bytes.
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    pub body_cap: usize,
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
    /// The RP's own OpenAPI spec file: every recorded answer is also judged against it (the
    /// SPEC rules), besides any `openapi:` of the target file; repeat for several files.
    #[arg(long = "openapi", value_name = "SPEC")]
    pub openapi: Vec<PathBuf>,
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
    /// Output format: a table for people, or JSON for tools.
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
    /// Port to listen on, on 127.0.0.1 (0: any free port, printed at start).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// How long each long-running operation runs, in milliseconds.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub op_duration: u64,
    /// Seconds the RP's Retry-After headers advertise.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub retry_after: u64,
    /// Fault knobs (rule violations) to turn on; repeatable; --list-faults lists them.
    #[arg(long = "fault", value_name = "NAME")]
    pub faults: Vec<String>,
    /// Variant knobs (legal behaviours) to turn on; repeatable.
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Hold every operation open until it has been read N times through its own channels.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub hold_reads: u32,
    /// Where to write the target file that points a run at this server.
    #[arg(
        long,
        default_value = "reports/embedded-target.yaml",
        value_name = "FILE"
    )]
    pub write_target: PathBuf,
    /// Print every fault knob with the rules it breaks, and exit.
    #[arg(long)]
    pub list_faults: bool,
    /// Print every variant knob with its source and real-RP evidence, and exit.
    #[arg(long)]
    pub list_variants: bool,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Join the shards of one partitioned run (`run --partition hash:M/N` on several machines)
    /// into the report set the unsharded run would have written. Exit 1 when the merged run
    /// failed, 2 when the inputs are not shards of one run.
    Merge {
        /// The shards: report directories or report.json files, one per partition.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Where the merged reports go.
        #[arg(long, default_value = "reports")]
        out: PathBuf,
        /// Merge even duplicate shards, shards of different runs or reports that are no shard.
        #[arg(long)]
        force: bool,
        /// Judge the merged run as a certification (the shards' one verdict): certified only
        /// at time scale 1, every partition there, every MUST rule judged and passed.
        #[arg(long)]
        certify: bool,
        /// Merge even when partitions are missing (the merged run is incomplete); without
        /// it a missing partition is named and the merge exits 1.
        #[arg(long)]
        allow_missing: bool,
    },
    /// Which rules and tests got worse or better between two runs (report directories or
    /// report.json files). Exit 1 when something got worse.
    Diff {
        /// The earlier run (for example the last certified one).
        old: PathBuf,
        /// The later run.
        new: PathBuf,
        /// `text` for a terminal, `markdown` for a pull-request comment or job summary.
        #[arg(long, default_value = "text", value_parser = ["text", "markdown"])]
        format: String,
    },
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
