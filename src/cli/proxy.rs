//! `rpconform proxy --target FILE --listen 127.0.0.1:PORT`: pass traffic to the target unchanged,
//! judge it as it passes, write reports every `--every` seconds and when stopped (Ctrl-C,
//! SIGTERM). See `crate::proxy` for what passes and what is recorded.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::args::ProxyArgs;
use super::common::{runtime, usage};
use super::outputs;
use super::replay::{run_info, write_reports};
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::proxy::{Proxy, ProxyOptions, Timing};
use crate::target::load_target;

pub(super) fn proxy(a: ProxyArgs) -> u8 {
    let listen: SocketAddr = match a.listen.parse() {
        Ok(l) => l,
        Err(_) => return usage(format!("--listen {}: expected IP:PORT", a.listen)),
    };
    if !listen.ip().is_loopback() && !a.allow_remote {
        return usage(format!(
            "--listen {listen} is not a loopback address: anyone who can reach it could use the proxy; \
             add --allow-remote if that is intended"
        ));
    }
    if a.every == Some(0) {
        return usage("--every must be at least 1 second");
    }
    let target = match load_target(&a.target) {
        Ok(t) => t,
        Err(r) => {
            eprint!("{}", r.render());
            return EXIT_USAGE;
        }
    };
    let mut inputs = vec![outputs::Input::new("the target file", &a.target)];
    if let Some(s) = &target.specs {
        inputs.extend(
            s.files
                .iter()
                .map(|f| outputs::Input::new("an OpenAPI spec", f)),
        );
    }
    let written = [("--report-dir", outputs::report_files(&a.report_dir))];
    if let Err(e) = outputs::refuse_overlap(&written, &inputs) {
        return usage(e);
    }
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let base = target.base();
    let info_target = target.clone();
    let rt = runtime();
    let opts = ProxyOptions {
        target,
        listen,
        rewrite_links: a.rewrite_links,
        strict: a.strict,
        body_cap: a.body_cap,
        timing: Timing {
            settle: Duration::from_secs(a.settle),
            idle: Duration::from_secs(a.idle.max(1)),
        },
        every: a.every.map(Duration::from_secs),
    };
    let every = opts.every;
    let (report_dir, strict) = (a.report_dir.clone(), a.strict);
    let (dir, info_t, at) = (report_dir.clone(), info_target.clone(), started_at.clone());
    let outcome = rt.block_on(async move {
        let proxy = match Proxy::start(opts).await {
            Ok(p) => p,
            Err(e) => return Err(usage(format!("cannot listen on {listen}: {e}"))),
        };
        outln!(
            "rpconform proxy listening on http://{} (reverse proxy to {base}; forward proxy for http:// URLs)",
            proxy.addr
        );
        outln!("reports in {} when stopped (Ctrl-C)", dir.display());
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let mut last_report = Instant::now();
        let stop = stop_signal();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => break,
                _ = tick.tick() => {
                    proxy.tick();
                    if every.is_some_and(|e| last_report.elapsed() >= e) {
                        last_report = Instant::now();
                        let info = run_info(&info_t, strict, at.clone(), started.elapsed().as_millis() as u64);
                        write_reports(&dir, &info, &proxy.results());
                    }
                }
            }
        }
        Ok(proxy.stop())
    });
    let results = match outcome {
        Ok(r) => r,
        Err(code) => return code,
    };
    rt.shutdown_timeout(Duration::from_secs(1));
    let info = run_info(
        &info_target,
        strict,
        started_at,
        started.elapsed().as_millis() as u64,
    );
    let Some(c) = write_reports(&report_dir, &info, &results) else {
        return EXIT_FAILED;
    };
    outln!(
        "rpconform proxy: {} namespaces: {} passed, {} warned, {} failed, {} skipped; reports in {}",
        results.len(),
        c.passed,
        c.warned,
        c.failed,
        c.skipped,
        report_dir.display()
    );
    if c.failed_run() { EXIT_FAILED } else { EXIT_OK }
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
