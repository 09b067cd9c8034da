//! `report merge`: join the shards of one partitioned run (`--partition hash:M/N` on several CI
//! machines; directories or report.json files) into the report set the unsharded run would
//! have written. Each input is read one result at a time into a fresh `results.jsonl`, then the
//! reports — and the run's one status — are written from it.
//!
//! Shards must belong together: the same suite set, catalogue, target (label and file hash),
//! time scale, strictness, profiles, selection, fault and variant knobs, and one partition
//! scheme (`hash:M/N` for one N). A duplicate shard (the same partition or run twice), a shard of
//! another run, or a report that is no shard is refused, naming the files (`--force` merges
//! anyway). Missing partitions are named and make the merged run incomplete; a complete set
//! has no partition left (it is the whole run). Requests, throttling, leftovers, problems and
//! journals are summed over the shards.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::json::read_report;
use super::{ResultsWriter, RunInfo, Transcripts, Written, write_all};

/// What must be equal in every shard of one run: (name, value).
fn identity(r: &RunInfo) -> Vec<(String, String)> {
    let mut profiles = r.profiles.clone();
    profiles.sort();
    let mut out: Vec<(&str, String)> = vec![
        ("subject", r.subject.clone().unwrap_or_default()),
        ("front door", r.front_door.clone().unwrap_or_default()),
        ("suite set", r.suite_set.clone()),
        ("catalogue", r.catalogue.clone()),
        ("target", r.target.clone()),
        ("target file", r.target_hash.clone().unwrap_or_default()),
        ("time scale", r.time_scale.to_string()),
        ("strict", r.strict.to_string()),
        ("certify", r.certify.to_string()),
        ("profiles", profiles.join(",")),
        ("name filters", r.filters.join(" ")),
        ("--skip", r.skip.join(" ")),
        ("rule selection", r.select.join(" ")),
        ("fault knobs", r.faults.join(",")),
        ("variants", r.variants.join(",")),
        ("rpconform version", r.rpconform_version.clone()),
    ];
    let mut named: Vec<(String, String)> = out.drain(..).map(|(k, v)| (k.to_string(), v)).collect();
    // Every setting that changes a verdict, by name (a shard that lacks one differs too).
    let keys: std::collections::BTreeSet<&String> = r.options.keys().collect();
    for k in keys {
        named.push((k.clone(), r.options.get(k).cloned().unwrap_or_default()));
    }
    named
}

/// `hash:2/3` → (`hash`, 2, 3).
fn shard(p: &str) -> Option<(String, u64, u64)> {
    let (kind, mn) = p.split_once(':')?;
    let (m, n) = mn.split_once('/')?;
    Some((kind.to_string(), m.parse().ok()?, n.parse().ok()?))
}

/// One input's settings, as read.
struct Input {
    path: PathBuf,
    run: RunInfo,
    results: usize,
}

/// Refuse (unless forced) inputs that are not shards of one run; the missing partitions.
fn check(inputs: &[Input], force: bool) -> Result<Vec<String>, String> {
    let mut problems = Vec::new();
    let first = &inputs[0];
    let mine = identity(&first.run);
    for other in &inputs[1..] {
        let theirs = identity(&other.run);
        let mut names: Vec<&String> = mine.iter().chain(&theirs).map(|(k, _)| k).collect();
        names.sort();
        names.dedup();
        for name in names {
            let of = |id: &[(String, String)]| {
                id.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| "not recorded".into())
            };
            let (a, b) = (of(&mine), of(&theirs));
            if a != b {
                problems.push(format!(
                    "{} and {} are not shards of one run: their {name} differs (`{a}` vs `{b}`)",
                    first.path.display(),
                    other.path.display()
                ));
            }
        }
    }
    let mut seen_runs: BTreeMap<&str, &Path> = BTreeMap::new();
    let mut seen_parts: BTreeMap<u64, (&Path, &str)> = BTreeMap::new();
    let mut scheme: Option<(String, u64)> = None;
    for i in inputs {
        if let Some(prev) = seen_runs.insert(i.run.run_id.as_str(), &i.path) {
            problems.push(format!(
                "{} and {} are the same run ({}): a shard merged twice",
                prev.display(),
                i.path.display(),
                i.run.run_id
            ));
            continue;
        }
        let Some(p) = &i.run.partition else {
            problems.push(format!(
                "{} is not a shard: its run has no --partition (a complete run needs no merge)",
                i.path.display()
            ));
            continue;
        };
        let Some((kind, m, n)) = shard(p) else {
            problems.push(format!(
                "{} is not a shard: its partition `{p}` is not of the form hash:M/N or count:M/N (an earlier merge?)",
                i.path.display()
            ));
            continue;
        };
        match &scheme {
            Some((k, total)) if *k != kind || *total != n => problems.push(format!(
                "{} is partition {p}, of another scheme than {k}:M/{total}",
                i.path.display()
            )),
            Some(_) => {}
            None => scheme = Some((kind.clone(), n)),
        }
        if let Some((prev, q)) = seen_parts.insert(m, (&i.path, p.as_str())) {
            problems.push(format!(
                "{} (partition {q}) and {} (partition {p}) are the same part: a duplicate shard",
                prev.display(),
                i.path.display()
            ));
        }
    }
    if !problems.is_empty() && !force {
        return Err(format!(
            "refusing to merge (--force merges anyway):\n  {}",
            problems.join("\n  ")
        ));
    }
    Ok(match scheme {
        Some((kind, n)) => (1..=n)
            .filter(|m| !seen_parts.contains_key(m))
            .map(|m| format!("{kind}:{m}/{n}"))
            .collect(),
        None => Vec::new(),
    })
}

/// Read every input's settings (the head of report.json) and count its results.
fn heads(inputs: &[PathBuf]) -> Result<Vec<Input>, String> {
    let mut out = Vec::new();
    for path in inputs {
        let mut results = 0usize;
        let head = read_report(path, &mut |_| Ok(()), &mut |_| {
            results += 1;
            Ok(())
        })?;
        out.push(Input {
            path: path.clone(),
            run: head.run,
            results,
        });
    }
    Ok(out)
}

/// The merged run's settings: the shards' identity, their sums.
fn merged_info(inputs: &[Input], missing: Vec<String>, kept: usize) -> RunInfo {
    let mut info = inputs[0].run.clone();
    let runs: Vec<&RunInfo> = inputs.iter().map(|i| &i.run).collect();
    info.run_id = format!(
        "merged:{}",
        runs.iter()
            .map(|r| r.run_id.as_str())
            .collect::<Vec<_>>()
            .join("+")
    );
    info.merged_from = inputs
        .iter()
        .map(|i| {
            format!(
                "{} ({}, run {})",
                i.path.display(),
                i.run.partition.as_deref().unwrap_or("no partition"),
                i.run.run_id
            )
        })
        .collect();
    info.started_at = runs
        .iter()
        .map(|r| r.started_at.clone())
        .min()
        .unwrap_or_default();
    info.ended_at = runs
        .iter()
        .map(|r| r.ended_at.clone())
        .max()
        .unwrap_or_default();
    info.duration_ms = runs.iter().map(|r| r.duration_ms).max().unwrap_or(0);
    info.requests = runs.iter().map(|r| r.requests).sum();
    info.request_rate = if info.duration_ms > 0 {
        (info.requests as f64 * 1000.0 / info.duration_ms as f64 * 10.0).round() / 10.0
    } else {
        0.0
    };
    info.throttling.count = runs.iter().map(|r| r.throttling.count).sum();
    info.throttling.wait_ms = runs.iter().map(|r| r.throttling.wait_ms).sum();
    info.interrupted = runs.iter().any(|r| r.interrupted);
    let mut left: Vec<String> = runs.iter().flat_map(|r| r.left_behind.clone()).collect();
    left.sort();
    left.dedup();
    info.left_behind = left;
    info.problems = runs.iter().flat_map(|r| r.problems.clone()).collect();
    info.not_run = runs.iter().map(|r| r.not_run).sum();
    info.stopped_after = runs.iter().find_map(|r| r.stopped_after.clone());
    info.journal = None;
    info.journals = runs
        .iter()
        .flat_map(|r| r.journal.iter().chain(&r.journals).cloned())
        .collect();
    // Every shard saw the whole selection: what it left out beyond the other shards' tests.
    let total = inputs[0].run.selected_out + inputs[0].results;
    info.selected_out = total.saturating_sub(kept);
    info.partition = if missing.is_empty() {
        None
    } else {
        Some(format!(
            "merged {} of {}",
            runs.iter()
                .filter_map(|r| r.partition.clone())
                .collect::<Vec<_>>()
                .join(", "),
            missing.len() + runs.len()
        ))
    };
    info.missing_partitions = missing;
    info
}

/// How to merge.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions {
    /// Merge inputs that are not shards of one run.
    pub force: bool,
    /// Judge the merged run as a certification.
    pub certify: bool,
    /// Merge even with partitions missing.
    pub allow_missing: bool,
}

/// Why a merge wrote nothing.
#[derive(Debug)]
pub enum MergeError {
    /// Inputs that are not shards of one run, or cannot be read (bad input).
    Refused(String),
    /// Partitions of the set are missing (and `--allow-missing` was not given).
    Missing(String),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Refused(e) | MergeError::Missing(e) => f.write_str(e),
        }
    }
}

impl From<String> for MergeError {
    fn from(e: String) -> Self {
        MergeError::Refused(e)
    }
}

/// Merge the inputs into `out`: the reports written, with the merged settings.
pub fn merge(
    inputs: &[PathBuf],
    out: &Path,
    opts: &MergeOptions,
) -> Result<(Written, RunInfo), MergeError> {
    if inputs.is_empty() {
        return Err("nothing to merge".to_string().into());
    }
    let read = heads(inputs)?;
    let missing = check(&read, opts.force)?;
    if !missing.is_empty() && !opts.allow_missing {
        let have: Vec<&str> = read
            .iter()
            .filter_map(|i| i.run.partition.as_deref())
            .collect();
        return Err(MergeError::Missing(format!(
            "partition{} {} missing (given: {}); nothing merged. `--allow-missing` merges anyway, and the merged run is incomplete",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            have.join(", ")
        )));
    }
    let mut writer = ResultsWriter::create(out, Transcripts::All)
        .map_err(|e| format!("cannot write to {}: {e}", out.display()))?;
    let mut seen = HashSet::new();
    for input in inputs {
        let mut push = |r: super::ScenarioResult| -> Result<(), String> {
            if seen.insert(r.name.clone()) {
                writer.push(&r).map_err(|e| e.to_string())?;
            }
            Ok(())
        };
        read_report(input, &mut |_| Ok(()), &mut push)?;
    }
    writer
        .finish()
        .map_err(|e| format!("cannot write to {}: {e}", out.display()))?;
    let mut info = merged_info(&read, missing, seen.len());
    info.certify |= opts.certify;
    let written = write_all(out, &info)
        .map_err(|e| format!("cannot write reports to {}: {e}", out.display()))?;
    Ok((written, info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{faulty_run, info};

    fn plain() -> MergeOptions {
        MergeOptions::default()
    }

    /// Write a report of `results` with these settings into a fresh folder.
    fn report(name: &str, run: RunInfo, results: &[crate::report::ScenarioResult]) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("rpconform-merge-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut w = ResultsWriter::create(&dir, Transcripts::All).unwrap();
        for r in results {
            w.push(r).unwrap();
        }
        w.finish().unwrap();
        write_all(&dir, &run).unwrap();
        dir
    }

    fn shard_info(p: &str, id: &str, requests: u64) -> RunInfo {
        let mut i = info();
        i.partition = Some(p.into());
        i.run_id = id.into();
        i.requests = requests;
        i.suite_set = "s1".into();
        i.catalogue = "c1".into();
        i
    }

    #[test]
    fn two_shards_merge_into_the_unsharded_report() {
        let run = faulty_run();
        let (a, b) = run.split_at(2);
        let mut ia = shard_info("hash:1/2", "ra", 100);
        ia.selected_out = b.len();
        let mut ib = shard_info("hash:2/2", "rb", 23);
        ib.selected_out = a.len();
        ib.left_behind = vec!["https://x/w1 (created by t): 500".into()];
        let da = report("a", ia, a);
        let db = report("b", ib, b);
        let out = std::env::temp_dir().join(format!("rpconform-merge-{}-out", std::process::id()));
        let (w, merged) = merge(&[da.clone(), db.clone()], &out, &plain()).unwrap();
        assert_eq!(merged.requests, 123);
        assert_eq!(merged.partition, None, "a complete set is the whole run");
        assert_eq!(merged.selected_out, 0);
        assert_eq!(merged.left_behind.len(), 1);
        // The same verdicts as the unsharded run.
        let mut full = info();
        full.suite_set = "s1".into();
        full.catalogue = "c1".into();
        full.left_behind = merged.left_behind.clone();
        let whole = report("whole", full, &run);
        let (_, head) = (
            (),
            crate::report::read_report(&whole, &mut |_| Ok(()), &mut |_| Ok(())).unwrap(),
        );
        assert_eq!(w.status.state, head.status.clone().unwrap().state);
        let conf = |dir: &Path| -> serde_json::Value {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap())
                    .unwrap();
            v["conformance"]["rules"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r["id"].clone(), r["verdict"].clone()))
                .map(|(a, b)| serde_json::json!([a, b]))
                .collect()
        };
        assert_eq!(conf(&out), conf(&whole));
        for d in [da, db, out, whole] {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    #[test]
    fn duplicates_other_runs_and_non_shards_are_refused_and_missing_ones_named() {
        let run = faulty_run();
        let da = report("dup-a", shard_info("hash:1/3", "ra", 1), &run[..1]);
        let out = std::env::temp_dir().join(format!("rpconform-merge-{}-out2", std::process::id()));
        let e = merge(&[da.clone(), da.clone()], &out, &plain())
            .unwrap_err()
            .to_string();
        assert!(e.contains("the same run (ra)"), "{e}");
        let mut other = shard_info("hash:2/3", "rb", 1);
        other.faults = vec!["relative-location".into()];
        let db = report("dup-b", other, &run[1..2]);
        let e = merge(&[da.clone(), db.clone()], &out, &plain())
            .unwrap_err()
            .to_string();
        assert!(e.contains("fault knobs differs"), "{e}");
        assert!(e.contains(&da.display().to_string()), "{e}");
        let full = report("dup-full", info(), &run);
        let mut i = shard_info("hash:1/3", "rc", 1);
        i.suite_set = String::new();
        i.catalogue = String::new();
        let dc = report("dup-c", i, &run[..1]);
        let e = merge(&[dc.clone(), full.clone()], &out, &plain())
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a shard"), "{e}");
        // Same partition, two runs.
        let dd = report("dup-d", shard_info("hash:1/3", "rd", 1), &run[..1]);
        let e = merge(&[da.clone(), dd.clone()], &out, &plain())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(partition hash:1/3) and")
                && e.contains("(partition hash:1/3) are the same part"),
            "{e}"
        );
        // A missing partition is named and refused; with --allow-missing it leaves the run
        // incomplete.
        let de = report("dup-e", shard_info("hash:2/3", "re", 1), &run[1..2]);
        let e = merge(&[da.clone(), de.clone()], &out, &plain()).unwrap_err();
        assert!(
            matches!(&e, MergeError::Missing(m) if m.contains("hash:3/3")),
            "{e}"
        );
        let allow = MergeOptions {
            allow_missing: true,
            ..plain()
        };
        let (w, merged) = merge(&[da.clone(), de.clone()], &out, &allow).unwrap();
        assert_eq!(merged.missing_partitions, ["hash:3/3"]);
        assert!(
            w.status.incomplete.iter().any(|x| x.contains("hash:3/3")),
            "{:?}",
            w.status
        );
        // --force merges anyway.
        assert!(
            merge(
                &[da.clone(), db.clone()],
                &out,
                &MergeOptions {
                    force: true,
                    allow_missing: true,
                    ..plain()
                }
            )
            .is_ok()
        );
        for d in [da, db, dc, dd, de, full, out] {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}
