//! `rpconform doctor --target FILE`: the preflight checklist on its own (token, endpoint,
//! clock, provider registration, resource group, rate limits), and [`gate`], the same checks
//! at the start of `run`. Exit 0 when nothing blocks a run (warnings allowed), 1 on a
//! blocker, 2 for a broken target file.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::args::DoctorArgs;
use super::common::{runtime, usage};
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::http::HttpOptions;
use crate::preflight::{Options, preflight_with};
use crate::target::{embedded_target_yaml, load_target, parse_target};

pub(super) fn doctor(a: DoctorArgs) -> u8 {
    let rt = runtime();
    let code = rt.block_on(doctor_async(&a));
    rt.shutdown_timeout(Duration::from_secs(1));
    code
}

async fn doctor_async(a: &DoctorArgs) -> u8 {
    let (mut target, server) = if a.target == "embedded" {
        let server = match rpconform_refrp::start(rpconform_refrp::Settings::default(), 0).await {
            Ok(s) => s,
            Err(e) => return usage(format!("cannot start the embedded RP: {e}")),
        };
        let yaml = embedded_target_yaml(&server.base_url());
        match parse_target(Path::new("embedded-target.yaml"), &yaml, "embedded") {
            Ok(t) => (t, Some(server)),
            Err(r) => {
                eprint!("{}", r.render());
                return EXIT_USAGE;
            }
        }
    } else {
        match load_target(Path::new(&a.target)) {
            Ok(t) => (t, None),
            Err(r) => {
                eprint!("{}", r.render());
                return EXIT_USAGE;
            }
        }
    };
    // As `run` names it: checks of the name see what the run will create.
    if target.resource_group.create {
        target.resource_group.name = format!(
            "{}-{}",
            target.resource_group.name,
            crate::runner::ids::run_id()
        );
    }
    let timeout = Duration::from_secs(a.timeout.clamp(1, 300));
    let opts = HttpOptions {
        connect_timeout: timeout,
        request_timeout: timeout,
        insecure: a.insecure,
        ..Default::default()
    };
    let crate::target::Connection {
        http,
        redactor,
        tokens,
    } = match target.connect(opts) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    outln!(
        "rpconform doctor: {} → {} (subscription {}, resource group {})",
        target.label,
        redactor.text(&target.base()),
        if target.subscription.is_empty() {
            "none"
        } else {
            &target.subscription
        },
        target.resource_group.name
    );
    // Ctrl-C: stop a running token command (with its process group), then report.
    let interrupted = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (tokens, flag) = (tokens.clone(), interrupted.clone());
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
                tokens.cancel();
            }
        })
    };
    let report = preflight_with(
        &target,
        &http,
        &tokens,
        &Options {
            timeout,
            served_at_subscription: true,
        },
    )
    .await;
    watcher.abort();
    if let Some(s) = server {
        s.shutdown().await;
    }
    out!("{}", report.render());
    if interrupted.load(Ordering::SeqCst) {
        eprintln!("interrupted");
        return 130;
    }
    if report.has_blocker() {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}
