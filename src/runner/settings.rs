//! What a run is asked to do, already validated by the CLI: where the target comes from and
//! every setting the run's phases read (selection, limits, reports).

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::partition::Partition;
use crate::report::Transcripts;
use crate::scenario::Selection;

/// Where the target comes from.
pub enum TargetSpec {
    /// The reference RP, in process, with these knobs.
    Embedded {
        settings: rpconform_refrp::Settings,
        variants: BTreeSet<rpconform_refrp::Variant>,
        label: String,
    },
    /// A target file.
    File(PathBuf),
}

/// Everything a run needs, already validated by the CLI.
pub struct Settings {
    pub target: TargetSpec,
    pub report_dir: PathBuf,
    pub time_scale: f64,
    pub strict: bool,
    /// Judge the run as a certification (`--certify`).
    pub certify: bool,
    pub deadline: Option<u64>,
    pub request_timeout: u64,
    /// `--retries N`: requests that got no answer of the RP's are sent again.
    pub retries: u32,
    pub body_cap: usize,
    pub insecure: bool,
    pub no_foreign: bool,
    pub max_rps: Option<f64>,
    pub test_threads: Option<usize>,
    /// `--fail-fast`: start no test after the first that fails.
    pub fail_fast: bool,
    pub selection: Selection,
    pub partition: Option<Partition>,
    pub transcripts: Transcripts,
    /// libtest's arguments (`--skip`, `--exact`, `--ignored`, `--include-ignored`, `-q`).
    pub libtest: libtest_mimic::Arguments,
    pub har: Option<PathBuf>,
    /// Show each exchange as it happens (`-v`).
    pub verbose: bool,
    /// Fault knobs of the embedded RP, by name, for the reports.
    pub faults: Vec<String>,
    /// `--subject`: the RP build under test (else the target file's `subject:`).
    pub subject: Option<String>,
    /// The identity of the suites and schemas that run (the built-in set's is
    /// [`crate::suiteset::ID`]).
    pub suite_set: String,
}
