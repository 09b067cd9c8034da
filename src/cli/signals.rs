//! The signals that interrupt a run (SIGINT, SIGTERM, SIGHUP) and what each one does.

use std::sync::Arc;

use super::EXIT_INTERRUPTED;
use super::common::err;
use crate::runner::RunCtx;
use crate::runner::console::Console;

/// SIGINT, SIGTERM and SIGHUP (a dropped ssh session) all interrupt the run: the first
/// cancels the tests, the second stops cleanup from waiting, the third exits at once (the
/// journal is on disk). Registered before the function returns.
pub(super) fn spawn_signal_handler(
    rt: &tokio::runtime::Runtime,
    ctx: Arc<RunCtx>,
    console: Arc<Console>,
) {
    let _guard = rt.enter();
    let mut signals = Signals::new();
    rt.spawn(async move {
        let mut n = 0;
        loop {
            signals.recv().await;
            n += 1;
            match n {
                1 => {
                    ctx.cancel.cancel();
                    ctx.http.cancel_auth();
                    if let Some(j) = ctx.cleanup.journal() {
                        j.sync();
                    }
                    console.note(&format!(
                        "\ninterrupted: tests stopped; deleting the {} resource(s) the run created — Ctrl-C again to leave them (the journal lists them), a third time to exit at once",
                        ctx.cleanup.len()
                    ));
                }
                2 => {
                    console.note(
                        "interrupted again: cleanup stops waiting; what is not confirmed gone is listed in the reports and the journal (again to exit at once)",
                    );
                    ctx.cancel.force();
                }
                _ => {
                    if let Some(j) = ctx.cleanup.journal() {
                        j.sync();
                    }
                    err("exiting at once; the journal lists what the run created");
                    std::process::exit(EXIT_INTERRUPTED.into());
                }
            }
        }
    });
}

/// The signals that interrupt a run.
pub(super) struct Signals {
    #[cfg(unix)]
    streams: Vec<tokio::signal::unix::Signal>,
}

impl Signals {
    pub(super) fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let streams = [
                SignalKind::interrupt(),
                SignalKind::terminate(),
                SignalKind::hangup(),
            ]
            .into_iter()
            .filter_map(|k| signal(k).ok())
            .collect();
            Signals { streams }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    pub(super) async fn recv(&mut self) {
        #[cfg(unix)]
        {
            if self.streams.is_empty() {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
            let waits = self.streams.iter_mut().map(|s| Box::pin(s.recv()));
            let _ = select_first(waits.collect()).await;
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// The first of several futures to finish.
async fn select_first<F: std::future::Future + Unpin>(mut futs: Vec<F>) -> F::Output {
    std::future::poll_fn(|cx| {
        for f in futs.iter_mut() {
            if let std::task::Poll::Ready(v) = std::pin::Pin::new(f).poll(cx) {
                return std::task::Poll::Ready(v);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// Wait for the next interrupting signal.
pub(super) async fn wait_for_signal() {
    Signals::new().recv().await
}
