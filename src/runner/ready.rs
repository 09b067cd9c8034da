//! Before the first test: the journal opened (what the run creates is on disk before its
//! PUT leaves), then the target made ready — preflight (token, endpoint, registration), the
//! resource group, the types served — or the reason no test may run.

use std::sync::Arc;
use std::time::Duration;

use super::RunCtx;
use super::console::Console;
use super::journal::{self, Journal};
use super::settings::{Settings, TargetSpec};
use crate::http::Redactor;

/// The journal as it opened: its path, or why the run may not create anything (a target
/// file's run), or a problem to report (the embedded RP's, which dies with the run).
pub(super) struct JournalOpened {
    pub path: Option<String>,
    pub blocked: Option<String>,
    pub problem: Option<String>,
}

/// Open the journal before anything is created, and hand it to the run's cleanup.
pub(super) fn open_journal(
    s: &Settings,
    ctx: &Arc<RunCtx>,
    console: &Arc<Console>,
    tokens: &crate::http::TokenSource,
    redactor: &Arc<Redactor>,
    started_at: &str,
) -> JournalOpened {
    let header = journal::Header {
        version: 1,
        run_id: ctx.run_id.clone(),
        target: ctx.target.label.clone(),
        target_file: match &s.target {
            TargetSpec::File(p) => Some(
                std::fs::canonicalize(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string(),
            ),
            TargetSpec::Embedded { .. } => None,
        },
        base_url: redactor.text(&crate::http::strip_userinfo(&ctx.target.base())),
        subscription: ctx.target.subscription.clone(),
        resource_group: ctx.target.resource_group.name.clone(),
        rg_created: ctx.target.resource_group.create,
        started_at: started_at.to_string(),
        pid: std::process::id(),
    };
    match Journal::create(&s.report_dir, &header) {
        Ok((j, earlier)) => {
            for k in earlier {
                console.note(&format!(
                    "warning: an earlier run's journal {} lists resources not confirmed gone (`rpconform cleanup --journal {}`)",
                    k.display(),
                    s.report_dir.display()
                ));
            }
            // A journal that stops being written (a full disk) is said at once; the run
            // creates nothing more from then on (see `Cleanup::track`).
            let c = console.clone();
            j.on_failure(move |why| {
                c.note(&format!(
                    "error: {why}; the run creates nothing more (a killed run would leave no record of it), tests that would are runner errors"
                ));
            });
            // A URL a server handed out may carry the caller's token: kept masked.
            let (t, r) = (tokens.clone(), redactor.clone());
            j.set_masker(move |u| journal::token_mask(u, &t.seen(), &r));
            let path = j.path().display().to_string();
            ctx.cleanup.set_journal(j);
            JournalOpened {
                path: Some(path),
                blocked: None,
                problem: None,
            }
        }
        Err(e) => {
            let why = format!(
                "the journal could not be written in {}: {e}; a killed run would leave no record of what it created",
                s.report_dir.display()
            );
            // The embedded RP dies with the run: nothing it holds can be left behind.
            if header.target_file.is_some() {
                JournalOpened {
                    path: None,
                    blocked: Some(why),
                    problem: None,
                }
            } else {
                console.note(&format!("warning: {why}"));
                JournalOpened {
                    path: None,
                    blocked: None,
                    problem: Some(why),
                }
            }
        }
    }
}

/// Why no test ran: said in every report; what a cleanup attempt could not delete.
pub(super) struct NotReady {
    pub why: String,
    pub detail: String,
    pub left: Option<Vec<String>>,
}

/// Token, endpoint, registration, resource group: one clear error instead of one per test.
pub(super) async fn get_ready(
    s: &Settings,
    ctx: &Arc<RunCtx>,
    console: &Console,
    tokens: &crate::http::TokenSource,
    redactor: &Redactor,
    label: &str,
) -> Result<(), NotReady> {
    let pre = crate::preflight::preflight(&ctx.target, &ctx.http, tokens).await;
    if pre.has_blocker() {
        console.note(&format!("preflight:\n{}", pre.render().trim_end()));
        let why = format!(
            "the target is not ready ({} preflight blocker(s)); no test was run. `rpconform doctor --target {label}` repeats these checks",
            pre.blockers().len(),
        );
        console.note(&format!("error: {why}"));
        return Err(NotReady {
            why,
            detail: pre.render(),
            left: None,
        });
    }
    for w in pre.warnings() {
        console.note(&format!(
            "warning: preflight: {}: {}{}",
            w.name,
            w.detail.replace('\n', "; "),
            w.hint
                .as_ref()
                .map(|h| format!(" ({h})"))
                .unwrap_or_default()
        ));
    }
    console.note(&format!("preflight: {}", pre.summary()));
    if let Err(e) = super::create_resource_group(ctx).await {
        let why = redactor.text(&e);
        console.note(&format!("error: {why}"));
        // It may exist even so: the final cleanup reads it and deletes it.
        return Err(NotReady {
            detail: why.clone(),
            why,
            left: Some(give_up(ctx, redactor).await),
        });
    }
    // A group the run made is there to list in now: does the endpoint serve the types?
    if ctx.target.resource_group.create {
        let timeout = Duration::from_secs(s.request_timeout.max(1));
        let served = crate::preflight::served::check(&ctx.target, &ctx.http, true, timeout).await;
        if served.level == crate::preflight::Level::Blocker {
            let detail = redactor.text(&served.detail);
            let why = format!(
                "the target is not ready: {}; no test was run",
                detail.lines().next().unwrap_or("")
            );
            console.note(&format!("error: {why}\n{detail}"));
            return Err(NotReady {
                why,
                detail,
                left: Some(give_up(ctx, redactor).await),
            });
        }
    }
    Ok(())
}

/// Delete whatever the run made before it gave up, and close the journal.
async fn give_up(ctx: &Arc<RunCtx>, redactor: &Redactor) -> Vec<String> {
    let left = super::final_cleanup(ctx.clone(), ctx.target.deadline).await;
    if let Some(j) = ctx.cleanup.journal() {
        j.end(left.len(), ctx.cancel.is_cancelled());
    }
    left.iter().map(|l| redactor.text(l)).collect()
}
