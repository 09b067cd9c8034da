//! The embedded reference RP on the command line: fault knobs by name, and `rpconform serve`.

use std::time::Duration;

use super::EXIT_OK;
use super::args::ServeArgs;
use super::common::{runtime, usage};
use crate::target::embedded_target_yaml;

pub(super) fn parse_faults(
    names: &[String],
) -> Result<std::collections::BTreeSet<rpconform_refrp::Fault>, String> {
    let mut set = std::collections::BTreeSet::new();
    for n in names {
        match rpconform_refrp::Fault::from_name(n) {
            Some(f) => {
                set.insert(f);
            }
            None => {
                let all: Vec<&str> = rpconform_refrp::Fault::all()
                    .iter()
                    .map(|f| f.name())
                    .collect();
                let hint = crate::diag::did_you_mean(n, all.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                return Err(format!(
                    "unknown fault `{n}`{hint}; `rpconform serve --list-faults` lists them"
                ));
            }
        }
    }
    Ok(set)
}

pub(super) fn serve(a: ServeArgs) -> u8 {
    if a.list_faults {
        print!("{}", rpconform_refrp::list_faults_text());
        return EXIT_OK;
    }
    let faults = match parse_faults(&a.faults) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let settings = rpconform_refrp::Settings {
        op_duration: Duration::from_millis(a.op_duration),
        retry_after_secs: a.retry_after,
        faults,
        ..Default::default()
    };
    let rt = runtime();
    rt.block_on(async {
        let server = match rpconform_refrp::start(settings, a.port).await {
            Ok(s) => s,
            Err(e) => return usage(format!("cannot listen on 127.0.0.1:{}: {e}", a.port)),
        };
        let base = server.base_url();
        if let Some(dir) = a.write_target.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(&a.write_target, embedded_target_yaml(&base)) {
            return usage(format!("cannot write {}: {e}", a.write_target.display()));
        }
        println!("rpconform reference RP listening on {base}");
        println!("target file: {}", a.write_target.display());
        println!(
            "try: rpconform run suites/ --target {} --time-scale 0.05",
            a.write_target.display()
        );
        let _ = tokio::signal::ctrl_c().await;
        server.shutdown().await;
        EXIT_OK
    })
}
