//! `run --list`: the selected tests, one per line, marking those that will not run (not
//! applicable to the target, or ignored) with the reason; `--format json` gives each test's
//! suite position, status, the rules it states and the rules it can judge. A closed stdout
//! (`| head`) ends the listing quietly.

use std::io::Write;

use crate::scenario::{Instance, judges, stated_rules};
use crate::target::Target;

/// Why a test will not run, if it will not.
fn reason(inst: &Instance) -> Option<(&'static str, String)> {
    if let Some(r) = &inst.not_applicable {
        return Some(("not-applicable", r.clone()));
    }
    inst.scenario()
        .ignore
        .as_ref()
        .map(|r| ("ignored", r.clone()))
}

/// The listing as text or JSON.
pub(super) fn render(instances: &[Instance], target: &Target, json: bool) -> String {
    if json {
        let v: Vec<serde_json::Value> = instances
            .iter()
            .map(|i| {
                let sc = i.scenario();
                let (status, why) = match reason(i) {
                    Some((s, r)) => (s, Some(r)),
                    None => ("runnable", None),
                };
                serde_json::json!({
                    "name": i.name,
                    "suite": i.suite.name,
                    "file": i.suite.path.display().to_string(),
                    "line": sc.pos.line,
                    "type": i.type_name,
                    "monitor": i.monitor,
                    "row": i.row.as_ref().map(|r| r.name.clone()),
                    "status": status,
                    "reason": why,
                    "states": stated_rules(i),
                    "judges": judges(i, target),
                })
            })
            .collect();
        return serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    let (mut na, mut ignored) = (0, 0);
    for i in instances {
        match reason(i) {
            Some(("not-applicable", r)) => {
                na += 1;
                out.push_str(&format!("{}: test (not applicable: {r})\n", i.name));
            }
            Some((_, r)) => {
                ignored += 1;
                out.push_str(&format!("{}: test (ignored: {r})\n", i.name));
            }
            None => out.push_str(&format!("{}: test\n", i.name)),
        }
    }
    out.push_str(&format!(
        "\n{} tests: {} to run, {na} not applicable, {ignored} ignored\n",
        instances.len(),
        instances.len() - na - ignored
    ));
    out
}

/// Print the listing; a reader that went away (a closed pipe) is not an error.
pub(super) fn print(instances: &[Instance], target: &Target, json: bool) {
    let text = render(instances, target, json);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
