//! `rpconform report merge` and `rpconform report diff`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::outputs;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::report;

/// Join the shards of a partitioned run; the merged run's status is the exit code (1 when a
/// partition is missing and `--allow-missing` was not given).
pub(super) fn merge(inputs: &[PathBuf], out: &Path, opts: &report::MergeOptions) -> u8 {
    // A shard's files are read while the merged ones are written: never the same files.
    let shards: Vec<outputs::Input> = inputs
        .iter()
        .flat_map(|i| {
            outputs::report_files(i)
                .into_iter()
                .skip(1)
                .chain([i.clone()])
        })
        .map(|p| outputs::Input::new("a shard's report", p))
        .collect();
    if let Err(e) = outputs::refuse_overlap(&[("--out", outputs::report_files(out))], &shards) {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    match report::merge(inputs, out, opts) {
        Ok((w, info)) => {
            outln!(
                "merged {} reports: {}",
                inputs.len(),
                report::console_summary(&w.counts, &info, out, &w.status)
            );
            w.status.exit_code()
        }
        Err(report::MergeError::Missing(why)) => {
            eprintln!("error: {why}");
            EXIT_FAILED
        }
        Err(report::MergeError::Refused(e)) => {
            eprintln!("error: {e}");
            EXIT_USAGE
        }
    }
}

/// Compare two runs; exit 1 when something got worse, 2 on bad input.
pub(super) fn diff(old: &Path, new: &Path, markdown: bool) -> u8 {
    let sides = report::diff::load(old).and_then(|o| report::diff::load(new).map(|n| (o, n)));
    let (o, n) = match sides {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let d = report::diff::diff(&o, &n);
    let text = report::diff::render(&d, &o, &n, markdown);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    if d.worse() { EXIT_FAILED } else { EXIT_OK }
}
