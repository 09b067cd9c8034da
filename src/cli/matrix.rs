//! `rpconform run --fault-matrix` and `--variant-matrix`: the suites against the embedded RP
//! many times, each run a child `rpconform run` process of its own (runs go in parallel and
//! one run's trouble never takes the others down), then one Markdown table.
//!
//! - Fault matrix (`fault-matrix.md`): a clean run must fail nothing; each fault knob's run must
//!   fail every rule the knob names (strict, so SHOULD rules count) and no other (`extra`).
//! - Variant matrix (`variant-matrix.md`): every variant alone and the combined
//!   [`Variant::compatible_set`] must give no MUST failure, no runner error and no SHOULD
//!   failure beyond the ones the variant is documented to cause (`departs_from`). Every test
//!   runs under every variant: the set's run runs them all, and a variant of the set runs
//!   alone on the tests `--coverage min` keeps (a variant left out of the set, on all); then the fault
//!   matrix again with the combined set on, skipping the pairs a variant hides
//!   (`hides_faults`), which the table says. There other failed rules are only shown, so each
//!   row first runs only the tests of the minimal set written to judge the fault's rules.
//!
//! Both use the hold-open gate (`--hold-reads`, default 3 here) so no verdict depends on
//! machine load. Exit 1 when a row fails.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rpconform_refrp::{Fault, Variant};

use super::args::RunArgs;
use super::common::load;
use super::run::plan;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};

mod runs;
#[cfg(test)]
use runs::child_args;
use runs::{Found, Job, judging, minimal_set, run_all};

/// Reads an operation needs before the matrices' reference RP lets it end.
const MATRIX_HOLD_READS: u32 = 3;

fn join(set: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    set.into_iter()
        .map(|s| s.as_ref().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a fault row treats rules that failed besides the knob's own.
#[derive(Debug, Clone)]
enum Extras {
    /// The fault matrix: any other failed rule fails the row (one fault fails only its rules).
    Fail,
    /// A fault under the combined legal variants: the SHOULD rules the variants are documented
    /// to depart from fail anyway and are no extra; other extras are shown, and do not fail
    /// the row (the fault must still be caught: no variant may hide it).
    Shown { departs: BTreeSet<String> },
}

/// A fault row: caught when every named rule failed, and nothing else did.
fn fault_row(fault: Option<Fault>, f: &Found) -> (String, bool) {
    fault_row_with(fault, f, "", &Extras::Fail)
}

/// A fault row with a note on how it was run (the minimal set or every test, or why it could not be observed).
fn fault_row_with(fault: Option<Fault>, f: &Found, note: &str, extras: &Extras) -> (String, bool) {
    let failed = f.failed();
    let (name, named): (&str, BTreeSet<String>) = match fault {
        Some(x) => (x.name(), x.rules().iter().map(|s| s.to_string()).collect()),
        None => ("none", BTreeSet::new()),
    };
    let extra: Vec<&String> = failed
        .difference(&named)
        .filter(|r| match extras {
            Extras::Fail => true,
            Extras::Shown { departs } => !departs.contains(*r),
        })
        .collect();
    let (mark, ok) = if let Some(why) = &f.broken {
        (format!("❌ could not run: {why}"), false)
    } else if fault.is_none() {
        if failed.is_empty() && f.errors.is_empty() {
            ("✅ clean".to_string(), true)
        } else {
            (
                format!(
                    "❌ failures on a conforming RP: {} (errors: {})",
                    join(&failed),
                    f.errors.join("; ")
                ),
                false,
            )
        }
    } else if named.is_subset(&failed) && extra.is_empty() {
        (format!("✅{note}"), true)
    } else if named.is_subset(&failed) && matches!(extras, Extras::Shown { .. }) {
        (
            format!(
                "✅{note} (also failed under the variants: {})",
                join(&extra)
            ),
            true,
        )
    } else if named.is_subset(&failed) {
        // One fault fails only its own rules: a check an earlier failure made impossible is
        // "not judged", naming it, never a failure of its own.
        (
            format!("❌ caught, but also failed {}{note}", join(&extra)),
            false,
        )
    } else {
        let missed: Vec<&String> = named.difference(&failed).collect();
        (format!("❌ missed {}", join(missed)), false)
    };
    (
        format!(
            "| `{name}` | {} | {} | {mark} | {} |",
            join(&named),
            join(&failed),
            join(extra)
        ),
        ok,
    )
}

/// A variant row: no MUST failure, no runner error, no SHOULD failure beyond `departs`.
fn variant_row(job: &Job, departs: &BTreeSet<String>, f: &Found) -> (String, bool) {
    let undocumented: Vec<&String> = f.should.difference(departs).collect();
    let (mark, ok) = if let Some(why) = &f.broken {
        (format!("❌ could not run: {why}"), false)
    } else if !f.must.is_empty() || !f.errors.is_empty() || !undocumented.is_empty() {
        let mut why = Vec::new();
        if !f.must.is_empty() {
            why.push(format!("MUST failed: {}", join(&f.must)));
        }
        if !undocumented.is_empty() {
            why.push(format!(
                "undocumented SHOULD failures: {}",
                join(undocumented)
            ));
        }
        if !f.errors.is_empty() {
            why.push(format!(
                "{} runner error(s), first: {}",
                f.errors.len(),
                f.errors[0]
            ));
        }
        (format!("❌ {}", why.join("; ")), false)
    } else {
        ("✅".to_string(), true)
    };
    let tests = if job.minimal { " (--coverage min)" } else { "" };
    (
        format!(
            "| `{}` | {} | {} | {mark}{tests} | {:.0} s |",
            job.key,
            join(departs),
            join(&f.should),
            f.secs
        ),
        ok,
    )
}

/// What the matrices need to know besides the arguments.
struct Prepared {
    paths: Vec<PathBuf>,
    filters: Vec<String>,
    /// The embedded target's declarations (default variants).
    target: crate::target::Target,
}

/// Faults that act only on a kind of resource type the embedded target file does not declare
/// (the reference RP serves it; the file has no type for it yet): nothing can observe them.
fn unobservable(fault: Fault, t: &crate::target::Target) -> Option<String> {
    use crate::target::Scope;
    let has_scope = |want: fn(&Scope) -> bool| {
        t.types
            .iter()
            .any(|ty| ty.parent.is_none() && want(&ty.scope))
    };
    let (ok, what) = match fault {
        Fault::SubscriptionLevelWrongId => (
            has_scope(|s| *s == Scope::Subscription),
            "subscription-level type",
        ),
        Fault::ExtensionWrongType => (
            has_scope(|s| matches!(s, Scope::Extension(_))),
            "extension type",
        ),
        Fault::LocationTypeNoRequestId => {
            (has_scope(|s| *s == Scope::Location), "location-based type")
        }
        Fault::NamespaceApiVersionMixup => (
            t.types.iter().any(|ty| ty.namespace != t.namespace),
            "type in a second namespace",
        ),
        _ => (true, ""),
    };
    (!ok).then(|| {
        format!("the embedded target file declares no {what}, the only place this fault acts")
    })
}

/// Shared preparation: matrix defaults, the plan, the suites (checked once here so a broken
/// suite is one usage error, not a failed row per run).
fn prepare(a: &mut RunArgs) -> Result<Prepared, u8> {
    if a.target != "embedded" {
        eprintln!("error: the matrices run against --target embedded only");
        return Err(EXIT_USAGE);
    }
    if !a.faults.is_empty() || !a.variants.is_empty() {
        eprintln!("error: the matrices choose the --fault and --variant knobs themselves");
        return Err(EXIT_USAGE);
    }
    // A fault that never ends an operation makes every poll run to the deadline: keep it short.
    a.deadline = a.deadline.or(Some(10));
    if a.hold_reads == 0 {
        a.hold_reads = MATRIX_HOLD_READS;
    }
    let plan = plan(a)?;
    // Bad suites are one clear error here, not one per row.
    load(&plan.paths, &a.schemas)?;
    let yaml = crate::target::embedded_target_yaml("http://127.0.0.1:1");
    let target = match crate::target::parse_target(Path::new("embedded.yaml"), &yaml, "embedded") {
        Ok(t) => t,
        Err(r) => {
            eprint!("{}", r.render());
            return Err(EXIT_USAGE);
        }
    };
    Ok(Prepared {
        paths: plan.paths,
        filters: plan.selection.names,
        target,
    })
}

/// The fault rows of one matrix: every fault that can be observed, first run on the tests
/// `--coverage min` keeps (one set for every row: it must catch them all; under the variants,
/// only those of the set written to judge the fault's rules), and again on every test when that
/// run did not catch it (not under `--coverage min`). Returns the rows and whether all were
/// caught.
fn fault_rows(
    a: &RunArgs,
    p: &Prepared,
    dir: &Path,
    with: &[Variant],
    prefix: &str,
    skip: &BTreeSet<Fault>,
    extras: &Extras,
) -> (Vec<String>, bool) {
    let faults: Vec<Fault> = Fault::all()
        .into_iter()
        .filter(|f| !skip.contains(f))
        .collect();
    // Under --coverage min every row runs the one minimal set, and that is all.
    let only_min = a.coverage == "min";
    let job = |f: Fault, first: bool, only: Vec<String>| Job {
        key: format!(
            "{prefix}{}{}",
            f.name(),
            match (first, only.is_empty()) {
                (false, _) => "",
                (true, true) => " (minimal)",
                (true, false) => " (minimal, judging its rules)",
            }
        ),
        faults: vec![f],
        variants: with.to_vec(),
        minimal: first,
        only,
        dir: dir.join(if first {
            format!("{}-minimal", f.name())
        } else {
            f.name().to_string()
        }),
    };
    let observable: Vec<Fault> = faults
        .iter()
        .copied()
        .filter(|f| unobservable(*f, &p.target).is_none())
        .collect();
    // Where other failed rules are only shown (under the variants), a row needs only the tests
    // of the minimal set that can catch its fault: those written to judge one of its rules.
    // Where they fail the row (the fault matrix), every test of the set must run.
    let set = match extras {
        Extras::Shown { .. } => match minimal_set(a, &p.paths, &p.filters, with) {
            Ok(set) => Some(set),
            Err(e) => {
                eprintln!("note: {e}; each row runs the whole minimal set");
                None
            }
        },
        Extras::Fail => None,
    };
    let first: Vec<Job> = observable
        .iter()
        .map(|f| {
            job(
                *f,
                true,
                set.as_deref().map(|s| judging(s, *f)).unwrap_or_default(),
            )
        })
        .collect();
    let found = run_all(a, &p.paths, &p.filters, &first);
    let caught = |f: Fault, x: &Found| {
        x.broken.is_none() && f.rules().iter().all(|r| x.failed().contains(*r))
    };
    // The minimal set missed it: every test decides (not under --coverage min, where the
    // minimal set is the run).
    let again: Vec<Job> = observable
        .iter()
        .zip(&found)
        .filter(|(f, x)| !only_min && !caught(**f, x))
        .map(|(f, _)| job(*f, false, Vec::new()))
        .collect();
    let found_again = run_all(a, &p.paths, &p.filters, &again);
    let mut rows = Vec::new();
    let mut ok = true;
    for f in &faults {
        if let Some(why) = unobservable(*f, &p.target) {
            let named: Vec<&str> = f.rules().to_vec();
            rows.push(format!(
                "| `{}` | {} | | ⏳ not observable: {why} | |",
                f.name(),
                named.join(" ")
            ));
            continue;
        }
        let i = observable.iter().position(|x| x == f).unwrap_or(0);
        let (x, note) = match again.iter().position(|j| j.faults.first() == Some(f)) {
            Some(k) => (&found_again[k], " (all scenarios)"),
            None if first[i].only.is_empty() => (&found[i], " (--coverage min)"),
            None => (&found[i], " (--coverage min, the tests judging its rules)"),
        };
        let (row, good) = fault_row_with(Some(*f), x, note, extras);
        ok &= good;
        rows.push(row);
    }
    (rows, ok)
}

fn write(base_dir: &Path, file: &str, md: &str) -> bool {
    let path = base_dir.join(file);
    let _ = std::fs::create_dir_all(base_dir);
    match std::fs::write(&path, md) {
        Ok(()) => {
            outln!("written to {}", path.display());
            true
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            false
        }
    }
}

const FAULT_HEAD: &str = "| fault | named | failed | caught | extra |\n|---|---|---|---|---|\n";

pub fn fault_matrix(mut a: RunArgs) -> u8 {
    let p = match prepare(&mut a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let base_dir = a.report_dir.clone();
    let dir = base_dir.join("fault-matrix");
    let clean = Job {
        key: "none".into(),
        dir: dir.join("none"),
        ..Job::default()
    };
    let found = run_all(&a, &p.paths, &p.filters, std::slice::from_ref(&clean));
    let (clean_row, mut ok) = fault_row(None, &found[0]);
    let (rows, faults_ok) = fault_rows(&a, &p, &dir, &[], "", &BTreeSet::new(), &Extras::Fail);
    ok &= faults_ok;
    let mut md = format!(
        "# Fault matrix\n\nEach row runs the suites against the embedded reference RP with one fault knob on \
         (`--strict`, `--hold-reads {}`): {}.\n`named` are the rules the knob claims to break; `caught` says whether \
         all of them failed and nothing else did; `extra` lists other rules that failed (a row with any fails).\n\n{FAULT_HEAD}",
        a.hold_reads,
        if a.coverage == "min" {
            "only the tests `--coverage min` keeps, the same minimal set on every row"
        } else {
            "first only the tests `--coverage min` keeps (one minimal set for every row), then, if that did not catch it, every scenario"
        }
    );
    let _ = writeln!(md, "{clean_row}");
    for row in rows {
        let _ = writeln!(md, "{row}");
    }
    if !write(&base_dir, "fault-matrix.md", &md) {
        return EXIT_FAILED;
    }
    if ok { EXIT_OK } else { EXIT_FAILED }
}

pub fn variant_matrix(mut a: RunArgs) -> u8 {
    let p = match prepare(&mut a) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let base_dir = a.report_dir.clone();
    let dir = base_dir.join("variant-matrix");
    let combined = Variant::compatible_set();
    let hidden: BTreeSet<Fault> = combined
        .iter()
        .flat_map(|v| v.hides_faults().iter().copied())
        .collect();
    let mut jobs: Vec<Job> = vec![Job {
        key: "none".into(),
        dir: dir.join("none"),
        ..Job::default()
    }];
    // A variant of the set runs every test in the set's own full run: alone, the tests
    // `--coverage min` keeps (each rule the same chance of a verdict) say what it does by
    // itself. A variant left out of the set runs every test alone.
    jobs.extend(Variant::all().into_iter().map(|v| Job {
        key: v.name().into(),
        variants: vec![v],
        minimal: combined.contains(&v),
        dir: dir.join(v.name()),
        ..Job::default()
    }));
    jobs.push(Job {
        key: "compatible-set".into(),
        variants: combined.clone(),
        dir: dir.join("compatible-set"),
        ..Job::default()
    });
    let found = run_all(&a, &p.paths, &p.filters, &jobs);

    let mut ok = true;
    let mut md = format!(
        "# Variant matrix\n\nThe suites against the embedded reference RP with legal variant knobs on (`--strict`, \
         `--hold-reads {}`). A row passes when no MUST rule fails, no test ends in a runner error, and no SHOULD \
         rule fails beyond the ones the variant is documented to depart from (`departs from`, from \
         `Variant::departs_from`). Every test runs under every variant: a variant of the compatible set runs \
         alone on the tests `--coverage min` keeps, and in the set's run on all.\n\n\
         ## No variant, each variant alone, then all compatible variants at once\n\n\
         | variants | departs from | SHOULD failed | verdict | time |\n|---|---|---|---|---|\n",
        a.hold_reads
    );
    for (job, f) in jobs.iter().zip(&found) {
        let departs: BTreeSet<String> = job
            .variants
            .iter()
            .flat_map(|v| v.departs_from().iter().map(|s| s.to_string()))
            .collect();
        let (row, good) = variant_row(job, &departs, f);
        ok &= good;
        let _ = writeln!(md, "{row}");
    }
    let _ = writeln!(
        md,
        "\n`compatible-set` = {}.\n\n## The fault matrix with the compatible set on\n\n\
         Each fault must still fail every rule it names (first on the tests `--coverage min` keeps that are \
         written to judge one of its rules, then, if needed, on all): no legal variant may hide it. The SHOULD rules the variants depart from are no \
         extra here; other rules that fail only with the variants on are listed, and are the fault matrix's \
         business without variants, where any extra fails the row.\n\n{FAULT_HEAD}",
        join(combined.iter().map(|v| v.name()))
    );
    let (rows, faults_ok) = fault_rows(
        &a,
        &p,
        &dir.join("faults"),
        &combined,
        "compatible-set+",
        &hidden,
        &Extras::Shown {
            departs: combined
                .iter()
                .flat_map(|v| v.departs_from().iter().map(|s| s.to_string()))
                .collect(),
        },
    );
    ok &= faults_ok;
    for row in rows {
        let _ = writeln!(md, "{row}");
    }
    if !hidden.is_empty() {
        let _ = writeln!(
            md,
            "\nNot run (a variant of the set makes the fault's break unobservable, `Variant::hides_faults`):\n"
        );
        for f in &hidden {
            let by: Vec<&str> = combined
                .iter()
                .filter(|v| v.hides_faults().contains(f))
                .map(|v| v.name())
                .collect();
            let _ = writeln!(md, "- `{}`: hidden by {}", f.name(), join(by));
        }
    }
    if !write(&base_dir, "variant-matrix.md", &md) {
        return EXIT_FAILED;
    }
    if ok { EXIT_OK } else { EXIT_FAILED }
}

#[cfg(test)]
#[path = "matrix_tests.rs"]
mod tests;
