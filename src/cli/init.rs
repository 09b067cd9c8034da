//! `rpconform init --openapi SPEC...`: write a target file from the RP's OpenAPI spec(s), with a
//! `# TODO` wherever the spec could not decide, then check that the result parses.

use std::io::Write;
use std::path::Path;

use super::args::InitArgs;
use super::common::usage;
use super::outputs;
use super::{EXIT_FAILED, EXIT_OK};
use crate::init::{InitOptions, target_from_openapi};

pub(super) fn init(a: InitArgs) -> u8 {
    let to_stdout = a.output == Path::new("-");
    if !to_stdout && a.output.exists() && !a.force {
        return usage(format!(
            "{} exists; pass --force to overwrite it",
            a.output.display()
        ));
    }
    let inputs: Vec<outputs::Input> = a
        .openapi
        .iter()
        .map(|p| outputs::Input::new("an OpenAPI spec", p))
        .collect();
    if !to_stdout
        && let Err(e) = outputs::refuse_overlap(&[("--output", vec![a.output.clone()])], &inputs)
    {
        return usage(e);
    }
    let opts = InitOptions {
        location: a.location.clone(),
        resource_group: a.resource_group.clone(),
        subscription: a.subscription.clone(),
        target_dir: (!to_stdout).then(|| {
            a.output
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| Path::new(".").to_path_buf(), Path::to_path_buf)
        }),
    };
    // Every error here is about the specs given (missing, unreadable, malformed): bad input.
    let out = match target_from_openapi(&a.openapi, &opts) {
        Ok(o) => o,
        Err(e) => return usage(e.to_string()),
    };
    // A target file is read within a size limit; one past it would be written and refused.
    if out.yaml.len() > crate::yaml::MAX_SOURCE_BYTES {
        return usage(format!(
            "the target file for {} resource type(s) would be {}, over the limit of {} a target file may have; not written. Give the specs of fewer resource types (one namespace or api-version at a time)",
            out.types.len(),
            crate::yaml::human_bytes(out.yaml.len() as u64),
            crate::yaml::human_bytes(crate::yaml::MAX_SOURCE_BYTES as u64)
        ));
    }
    // What `check` would say: a generated file the parser refuses is a bug, said plainly.
    // Parsed where it will be written: `openapi:` names the specs relative to it.
    let at = if to_stdout {
        Path::new("generated-target.yaml").to_path_buf()
    } else {
        a.output.clone()
    };
    if let Err(r) = crate::target::parse_target(&at, &out.yaml, "generated") {
        eprint!("{}", r.render());
        eprintln!(
            "error: the generated target file does not parse (please report this); not written"
        );
        return EXIT_FAILED;
    }
    if to_stdout {
        let _ = std::io::stdout().write_all(out.yaml.as_bytes());
    } else if let Err(e) = std::fs::write(&a.output, &out.yaml) {
        return usage(format!("cannot write {}: {e}", a.output.display()));
    }
    for w in &out.warnings {
        eprintln!("warning: {w}");
    }
    let dest = if to_stdout {
        "standard output".to_string()
    } else {
        a.output.display().to_string()
    };
    eprintln!(
        "wrote {dest}: {} resource type(s) ({}), {} TODO(s) to review",
        out.types.len(),
        out.types.join(", "),
        out.todos.len()
    );
    for t in &out.todos {
        eprintln!("  TODO {t}");
    }
    if !to_stdout {
        eprintln!(
            "next: rpconform check suites --target {}",
            a.output.display()
        );
    }
    EXIT_OK
}
