//! `rpconform check`: validate suites (and a target file) without sending a request.

use super::args::CheckArgs;
use super::common::{load, paths_and_filters, usage};
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::scenario::expand;
use crate::target::load_target;

pub(super) fn check(a: CheckArgs) -> u8 {
    let (paths, extra) = paths_and_filters(&a.paths, &a.suites);
    if !extra.is_empty() {
        return usage(format!("no such file or directory: {}", extra.join(", ")));
    }
    let suites = match load(&paths, &a.schemas) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let n: usize = suites.iter().map(|s| s.scenarios.len()).sum();
    if let Some(t) = &a.target {
        match load_target(t) {
            Ok(target) => {
                if let Some(note) = target.implied_note(&t.display().to_string()) {
                    outln!("{note}");
                }
                let inst = expand(&suites, &target);
                let na = inst.iter().filter(|i| i.not_applicable.is_some()).count();
                if na == inst.len() {
                    // Never "ok" for a target against which nothing would run.
                    let mut reasons: Vec<(usize, String)> = Vec::new();
                    for r in inst.iter().filter_map(|i| i.not_applicable.as_deref()) {
                        match reasons.iter_mut().find(|(_, x)| x == r) {
                            Some((n, _)) => *n += 1,
                            None => reasons.push((1, r.to_string())),
                        }
                    }
                    reasons.sort_by_key(|r| std::cmp::Reverse(r.0));
                    eprintln!(
                        "error: nothing would run against {}: all {} tests are not applicable. Most common reasons:",
                        t.display(),
                        inst.len()
                    );
                    for (n, r) in reasons.iter().take(3) {
                        eprintln!("  {n} × {r}");
                    }
                    eprintln!(
                        "declare what the RP serves (`types:`, `monitors:`, `tasks:`) and the rule `profiles:` it follows"
                    );
                    return EXIT_FAILED;
                }
                outln!(
                    "{}: ok ({} tests, {} not applicable to this target)",
                    t.display(),
                    inst.len(),
                    na
                );
            }
            Err(r) => {
                eprint!("{}", r.render());
                return EXIT_USAGE;
            }
        }
    }
    outln!("ok: {} suite files, {} scenarios", suites.len(), n);
    EXIT_OK
}
