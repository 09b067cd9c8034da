//! `rpconform check`: validate suites (and a target file) without sending a request.

use super::args::CheckArgs;
use super::common::{load, paths_and_filters, usage};
use super::{EXIT_OK, EXIT_USAGE};
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
                let inst = expand(&suites, &target);
                let na = inst.iter().filter(|i| i.not_applicable.is_some()).count();
                println!(
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
    println!("ok: {} suite files, {} scenarios", suites.len(), n);
    EXIT_OK
}
