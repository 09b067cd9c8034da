//! The embedded reference RP on the command line: fault and variant knobs by name, the settings
//! they make, and `rpconform serve`.

use std::collections::BTreeSet;
use std::time::Duration;

use rpconform_refrp::{Fault, Settings, Variant};

use super::EXIT_OK;
use super::args::ServeArgs;
use super::common::{runtime, usage};
use crate::target::embedded_target_yaml_for;

pub(super) fn parse_faults(names: &[String]) -> Result<BTreeSet<Fault>, String> {
    let mut set = BTreeSet::new();
    for n in names {
        match Fault::from_name(n) {
            Some(f) => {
                set.insert(f);
            }
            None => {
                let all: Vec<&str> = Fault::all().iter().map(|f| f.name()).collect();
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

/// Variant names → a set the reference RP can run: every name known, no conflicting pair.
pub(super) fn parse_variants(names: &[String]) -> Result<BTreeSet<Variant>, String> {
    let mut set = BTreeSet::new();
    for n in names {
        match Variant::from_name(n) {
            Some(v) => {
                set.insert(v);
            }
            None => {
                let all: Vec<&str> = Variant::all().iter().map(|v| v.name()).collect();
                let hint = crate::diag::did_you_mean(n, all.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                return Err(format!(
                    "unknown variant `{n}`{hint}; `rpconform serve --list-variants` lists them"
                ));
            }
        }
    }
    if let Some((a, b)) = Variant::conflict_in(&set) {
        return Err(format!(
            "variants `{a}` and `{b}` cannot be on together (they answer the same request in contradicting ways); drop one of them"
        ));
    }
    Ok(set)
}

/// The reference RP's settings from the command line's knobs.
pub(super) fn settings(
    op_duration_ms: u64,
    retry_after: Option<u64>,
    hold_reads: u32,
    faults: BTreeSet<Fault>,
    variants: BTreeSet<Variant>,
) -> Settings {
    let mut s = Settings {
        op_duration: Duration::from_millis(op_duration_ms),
        complete_after_reads: hold_reads,
        faults,
        variants,
        ..Default::default()
    };
    if let Some(r) = retry_after {
        s.retry_after_secs = r;
    }
    s
}

/// The label reports show for the embedded target: `embedded`, with its variants if any.
pub(super) fn label(variants: &BTreeSet<Variant>) -> String {
    if variants.is_empty() {
        "embedded".into()
    } else {
        let names: Vec<&str> = variants.iter().map(|v| v.name()).collect();
        format!("embedded (variants: {})", names.join(", "))
    }
}

pub(super) fn serve(a: ServeArgs) -> u8 {
    if a.list_faults {
        out!("{}", rpconform_refrp::list_faults_text());
        return EXIT_OK;
    }
    if a.list_variants {
        out!("{}", rpconform_refrp::list_variants_text());
        return EXIT_OK;
    }
    let faults = match parse_faults(&a.faults) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let variants = match parse_variants(&a.variants) {
        Ok(v) => v,
        Err(e) => return usage(e),
    };
    let settings = settings(
        a.op_duration,
        Some(a.retry_after),
        a.hold_reads,
        faults,
        variants.clone(),
    );
    let rt = runtime();
    rt.block_on(async {
        let server = match rpconform_refrp::start(settings.clone(), a.port).await {
            Ok(s) => s,
            Err(e) => return usage(format!("cannot listen on 127.0.0.1:{}: {e}", a.port)),
        };
        let base = server.base_url();
        if let Some(dir) = a.write_target.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = std::fs::write(&a.write_target, embedded_target_yaml_for(&base, &settings))
        {
            return usage(format!("cannot write {}: {e}", a.write_target.display()));
        }
        outln!("rpconform reference RP listening on {base}");
        if !variants.is_empty() {
            outln!("variants: {}", label(&variants));
        }
        outln!("target file: {}", a.write_target.display());
        outln!("{}", try_line(&a.write_target, a.hold_reads));
        let _ = tokio::signal::ctrl_c().await;
        server.shutdown().await;
        EXIT_OK
    })
}

/// What to run next. An accelerated run against a server that holds no operation open may end
/// before a read lands inside an operation (INCOMPLETE): the line says to start it with
/// `--hold-reads 3`.
fn try_line(target: &std::path::Path, hold_reads: u32) -> String {
    let run = format!(
        "rpconform run suites/ --target {} --time-scale 0.05",
        target.display()
    );
    if hold_reads > 0 {
        format!("try: {run}")
    } else {
        format!(
            "try: rpconform serve --hold-reads 3 (this server holds no operation open, so an accelerated run may end incomplete), then {run}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_try_line_holds_operations_open() {
        let t = std::path::Path::new("reports/embedded-target.yaml");
        assert!(try_line(t, 0).contains("rpconform serve --hold-reads 3"));
        assert_eq!(
            try_line(t, 3),
            "try: rpconform run suites/ --target reports/embedded-target.yaml --time-scale 0.05"
        );
    }

    #[test]
    fn variants_parse_and_conflicts_name_both() {
        let ok = parse_variants(&["sync-patch".into(), "WEAK_ETAGS".into()]).unwrap();
        assert_eq!(ok.len(), 2);
        let err = parse_variants(&["sync-patch".into(), "patch-202".into()]).unwrap_err();
        assert!(
            err.contains("`sync-patch`") && err.contains("`patch-202`"),
            "{err}"
        );
        let err = parse_variants(&["sync-pach".into()]).unwrap_err();
        assert!(err.contains("did you mean `sync-patch`"), "{err}");
        let all: Vec<String> = Variant::compatible_set()
            .iter()
            .map(|v| v.name().to_string())
            .collect();
        assert_eq!(parse_variants(&all).unwrap().len(), all.len());
    }

    #[test]
    fn settings_carry_every_knob() {
        let s = settings(
            250,
            None,
            3,
            [Fault::FlatError].into_iter().collect(),
            [Variant::SyncPatch].into_iter().collect(),
        );
        assert_eq!(s.op_duration, Duration::from_millis(250));
        assert_eq!(s.complete_after_reads, 3);
        assert!(s.has(Fault::FlatError) && s.is(Variant::SyncPatch));
        assert_eq!(s.retry_after_secs, Settings::default().retry_after_secs);
        assert_eq!(label(&s.variants), "embedded (variants: sync-patch)");
    }
}
