//! `rpconform cleanup --journal DIR`: delete what a run's journal lists as not confirmed gone,
//! and only what the journal shows that run created, where that run could create it.
//!
//! A journal is a file anyone can edit or copy: before anything is deleted, it must match the
//! target it is cleaned with (its own target file, or `--target`). Its run was in the target's
//! subscription; every resource it lists is on the target's origin, of a type (or surface) the
//! target declares, in the run's resource group (or a group a declared type names, or a
//! subscription the run made up when the target declares `subscription-lifecycle`); a group is
//! deleted only when the run created it (`create: true`, named with the run's id). Anything
//! else refuses the whole journal, naming the line: nothing of it is deleted. A URL the journal
//! keeps masked (a server put the caller's token in it) gets the token back from the target's
//! token source when its DELETE is sent.

use std::path::Path;
use std::sync::Arc;

use super::args::CleanupArgs;
use super::common::usage;
use super::common::{err, http_for, origin_of, out};
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::http::{Surface, TokenSource};
use crate::rules::Profile;
use crate::runner::cleanup::{delete_group, remove_all};
use crate::runner::journal::{self, Journal, Outstanding};
use crate::runner::{RunCtx, Tracked};
use crate::target::{Addressed, Connection, Target, load_target};

pub(super) async fn from_journal(dir: &Path, a: &CleanupArgs) -> u8 {
    let paths = match journal::find(dir) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let mut code = EXIT_OK;
    for path in paths {
        code = code.max(clean_journal(&path, a).await);
    }
    code
}

async fn clean_journal(path: &Path, a: &CleanupArgs) -> u8 {
    let o = match journal::read(path) {
        Ok(o) => o,
        Err(e) => {
            err(&format!(
                "error: {e}; what it lists is not deleted (it may still exist)"
            ));
            return EXIT_USAGE;
        }
    };
    // A damaged line is skipped (the rest is cleaned), but what it recorded is unknown.
    for d in &o.damaged {
        err(&format!("warning: {d}"));
    }
    let (mut code, unread) = if o.damaged.is_empty() {
        (EXIT_OK, String::new())
    } else {
        let n = o.damaged.len();
        (
            EXIT_FAILED,
            format!(
                "; {n} damaged line(s) could not be read: what they recorded may still exist (`--sweep-tagged` finds groups runs left)"
            ),
        )
    };
    let run = &o.header.run_id;
    if o.is_empty() {
        out(&format!(
            "{}: run {run}: nothing outstanding{unread}",
            path.display()
        ));
        return code;
    }
    if let Some(c) = still_running(&o, a) {
        return c;
    }
    let mut target = match journal_target(&o, a) {
        Ok(Some(t)) => t,
        Ok(None) => return code,
        Err(c) => return c,
    };
    let refusals = mismatches(&target, &o);
    target.resource_group.name = o.header.resource_group.clone();
    target.deadline = std::time::Duration::from_secs(a.deadline.max(1));
    if !refusals.is_empty() {
        for r in &refusals {
            err(&format!("error: {r}"));
        }
        err(&format!(
            "error: {}: the journal does not match the target {}; nothing of it is deleted",
            path.display(),
            target.label
        ));
        return EXIT_USAGE;
    }
    out(&format!(
        "{}: run {run} left {} resource(s){}",
        path.display(),
        o.resources.len(),
        match &o.group {
            Some(_) => format!(" and its resource group {}", o.header.resource_group),
            None => String::new(),
        }
    ));
    if a.dry_run {
        for t in &o.resources {
            out(&format!("    would delete {} (created by {})", t.url, t.by));
        }
        if let Some((g, _)) = &o.group {
            out(&format!("    would delete resource group {g}"));
        }
        return code;
    }
    let left = match delete_outstanding(target, &o, a).await {
        Ok(left) => left,
        Err(e) => {
            err(&format!("error: {e}"));
            return EXIT_USAGE;
        }
    };
    if left.is_empty() && unread.is_empty() {
        out("    everything it listed is confirmed gone");
    } else if left.is_empty() {
        out(&format!(
            "    everything it listed and could be read is confirmed gone{unread}"
        ));
    } else {
        code = EXIT_FAILED;
        out(&format!("    {} not confirmed gone{unread}:", left.len()));
        for l in &left {
            out(&format!("        {l}"));
        }
    }
    code
}

/// The run that wrote the journal still runs: its own cleanup may be deleting these right
/// now (the journal records its pid). `Some(exit code)` to stop here.
fn still_running(o: &Outstanding, a: &CleanupArgs) -> Option<u8> {
    if o.ended || !journal::process_alive(o.header.pid) {
        return None;
    }
    let (path, run, pid) = (o.path.display(), &o.header.run_id, o.header.pid);
    if a.force {
        err(&format!(
            "warning: {path}: run {run} (pid {pid}) still runs; cleaning up anyway (--force)"
        ));
        None
    } else if !a.dry_run {
        err(&format!(
            "error: {path}: run {run} is still running (pid {pid}): it deletes what it created as it ends; nothing deleted (--force to clean up anyway)"
        ));
        Some(EXIT_USAGE)
    } else {
        None
    }
}

/// The target to clean up with: `--target`, else the file the journal records; `Ok(None)`
/// for a run against the embedded RP (nothing outlives it).
fn journal_target(o: &Outstanding, a: &CleanupArgs) -> Result<Option<Target>, u8> {
    let file = match (&a.target, &o.header.target_file) {
        (Some(t), _) => t.clone(),
        (None, Some(f)) => f.into(),
        (None, None) => {
            out(&format!(
                "{}: run {} was against the embedded reference RP, which ended with it: nothing to delete",
                o.path.display(),
                o.header.run_id
            ));
            return Ok(None);
        }
    };
    match load_target(&file) {
        Ok(t) => Ok(Some(t)),
        Err(r) => {
            err(&r.render());
            Err(EXIT_USAGE)
        }
    }
}

/// Every way the journal does not match `target` (as its file declares it), each naming its
/// line (empty: it matches).
pub(super) fn mismatches(target: &Target, o: &Outstanding) -> Vec<String> {
    let path = o.path.display();
    let h = &o.header;
    let mut out = Vec::new();
    if origin_of(&target.base()) != origin_of(&h.base_url) {
        out.push(format!(
            "{path}:1: the run was against {}, but the target points at {}",
            h.base_url,
            crate::http::strip_userinfo(&target.base())
        ));
    }
    if !h.subscription.eq_ignore_ascii_case(&target.subscription) {
        out.push(format!(
            "{path}:1: the run was in subscription {}, the target's is {}",
            h.subscription, target.subscription
        ));
    }
    // A run that creates its group names it after the file's, with its own id.
    let rg = &target.resource_group;
    let expected_group = if rg.create {
        format!("{}-{}", rg.name, h.run_id)
    } else {
        rg.name.clone()
    };
    if !h.resource_group.eq_ignore_ascii_case(&expected_group) {
        out.push(format!(
            "{path}:1: the run's resource group is {}, but with this target it would be {expected_group}",
            h.resource_group
        ));
    }
    if !out.is_empty() {
        return out;
    }
    for (t, line) in o.resources.iter().zip(&o.put_lines) {
        if let Some(why) = outside(target, &h.resource_group, t) {
            out.push(format!("{path}:{line}: {}: {why}", t.url));
        }
    }
    if let (Some((g, _)), Some(line)) = (&o.group, o.group_line) {
        let own = format!(
            "/subscriptions/{}/resourceGroups/{}",
            target.subscription, h.resource_group
        );
        let created = h.rg_created && rg.create;
        if !created
            || !target.rel_path(g).eq_ignore_ascii_case(&own)
            || origin_of(g) != origin_of(&target.base())
        {
            out.push(format!(
                "{path}:{line}: resource group {g}: not the group the run created"
            ));
        }
    }
    out
}

/// Why the journal's resource `t` is not one a run against `target` could have created in
/// `group` (`None`: it is).
fn outside(target: &Target, group: &str, t: &Tracked) -> Option<String> {
    if origin_of(&t.url) != origin_of(&target.base()) {
        return Some("not on the target's origin".into());
    }
    let rel = target.rel_path(&t.url);
    let segs: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
    let is = |i: usize, w: &str| segs.get(i).is_some_and(|s| s.eq_ignore_ascii_case(w));
    if is(0, "subscriptions") {
        let sub = segs.get(1).copied().unwrap_or("");
        if !sub.eq_ignore_ascii_case(&target.subscription) {
            if !target.declares(Profile::SubscriptionLifecycle) {
                return Some(format!("in subscription {sub}, not the target's"));
            }
        } else if is(2, "resourceGroups") {
            let g = segs.get(3).copied().unwrap_or("");
            let fixed = target.guard().names_group(g);
            if !g.eq_ignore_ascii_case(group) && !fixed {
                return Some(format!("in resource group {g}, not the run's ({group})"));
            }
        }
    }
    let declared = match t.surface {
        Surface::Arm => matches!(target.address(&t.url), Addressed::Resource(_)),
        s => target.surface_of(&t.url) == s,
    };
    (!declared).then(|| "not a resource of a type (or surface) the target declares".into())
}

/// Delete what the journal lists (its group last), appending to it what is confirmed gone;
/// what could not be, with the reason.
async fn delete_outstanding(
    target: Target,
    o: &Outstanding,
    a: &CleanupArgs,
) -> Result<Vec<String>, String> {
    let Connection {
        http,
        redactor,
        tokens,
    } = http_for(&target, a)?;
    let ctx = Arc::new(RunCtx::new(
        target,
        http,
        1.0,
        false,
        o.header.run_id.clone(),
    ));
    match Journal::append(&o.path) {
        Ok(j) => {
            let (t, r) = (tokens.clone(), redactor.clone());
            j.set_masker(move |u| journal::token_mask(u, &t.seen(), &r));
            ctx.cleanup.set_journal(j);
        }
        Err(e) => err(&format!(
            "warning: cannot append to {}: {e}; deleting anyway",
            o.path.display()
        )),
    }
    let mut left = restore(&ctx, &tokens, o).await;
    let items = ctx.cleanup.remaining();
    remove_all(&ctx, items, ctx.target.deadline).await;
    if let Some((g, v)) = &o.group {
        match delete_group(&ctx, g, v, ctx.target.deadline).await {
            Ok(()) => {
                ctx.cleanup.gone(g);
                out(&format!("    deleted resource group {g} (confirmed gone)"));
            }
            Err(why) => {
                if let Some(j) = ctx.cleanup.journal() {
                    j.left(g, &why);
                }
                left.push(format!("resource group {g}: {why}"));
            }
        }
    }
    for t in ctx.cleanup.remaining() {
        let why = t.left.clone().unwrap_or_else(|| "not deleted".into());
        if let Some(j) = ctx.cleanup.journal() {
            j.left(&t.url, &why);
        }
        left.push(format!("{}: {why}", t.url));
    }
    if let Some(j) = ctx.cleanup.journal() {
        j.cleaned(left.len());
    }
    Ok(left.iter().map(|l| redactor.text(l)).collect())
}

/// Hand the journal's resources to the cleanup tracker, with the caller's token put back in a
/// URL that held it; what cannot be sent is returned as left, with the reason.
async fn restore(ctx: &RunCtx, tokens: &TokenSource, o: &Outstanding) -> Vec<String> {
    let mut left = Vec::new();
    let needs_token = o.resources.iter().any(|t| journal::has_token_mark(&t.url));
    let token = if needs_token {
        tokens.token().await.ok().flatten()
    } else {
        None
    };
    for t in &o.resources {
        match journal::token_unmask(&t.url, token.as_deref()) {
            Ok(url) => ctx.cleanup.restore(Tracked { url, ..t.clone() }),
            Err(why) => left.push(format!("{}: {why}", t.url)),
        }
    }
    left
}
