//! Creating the run's resource group, and deleting what the run created: as each test ends,
//! what it tracked (children first, a few deletes at a time run-wide); at the end, whatever is
//! left, then the group if the run made it.
//!
//! A delete counts only once it is *confirmed*: its operation is followed to its end, then the
//! resource is read until it answers 404 (or the deadline passes). A resource whose PUT got no
//! success answer, or that a scenario deleted, is read first: it may not exist at all. What
//! cannot be confirmed gone is listed, with the reason, in every report and in the journal.
//!
//! Fixed-name resources that existed before the run are put back as they were, never deleted;
//! resources of types that cannot be deleted go with their parent or are listed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::context::RunCtx;
use super::tracked::Tracked;
use crate::http::{Exchange, OutRequest, Role, Surface};
use crate::lro::{State, Strategy, Vocabulary};

/// Tags on the resource group a run creates, so `rpconform cleanup --sweep-tagged` can find
/// leftovers without a journal.
pub const TAG_RUN: &str = "rpconform-run";
pub const TAG_CREATED_BY: &str = "created-by";
pub const TAG_CREATED_AT: &str = "rpconform-created-at";
pub const CREATED_BY: &str = "rpconform";

pub fn with_version(url: &str, v: Option<&str>) -> String {
    match v {
        None => url.to_string(),
        Some(v) => {
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}api-version={v}")
        }
    }
}

fn request(surface: Surface, method: &str, url: &str, body: Option<String>) -> OutRequest {
    OutRequest {
        surface,
        method: method.into(),
        url: url.into(),
        headers: Vec::new(),
        body,
    }
}

/// Send a cleanup request (shown to `-v`).
async fn send(ctx: &RunCtx, surface: Surface, method: &str, url: &str) -> Exchange {
    send_body(ctx, surface, method, url, None).await
}

async fn send_body(
    ctx: &RunCtx,
    surface: Surface,
    method: &str,
    url: &str,
    body: Option<String>,
) -> Exchange {
    let ex = ctx
        .http
        .send(request(surface, method, url, body), Role::Cleanup)
        .await;
    ctx.observe("cleanup", &ex);
    ex
}

/// The tags a run puts on the resource group it creates.
pub fn group_tags(run_id: &str) -> serde_json::Value {
    serde_json::json!({
        TAG_RUN: run_id,
        TAG_CREATED_BY: CREATED_BY,
        TAG_CREATED_AT: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    })
}

/// PUT the resource group when the target asks the run to create it (tagged, and written to
/// the journal before the PUT leaves).
pub async fn create_resource_group(ctx: &RunCtx) -> Result<(), String> {
    let rg = &ctx.target.resource_group;
    if !rg.create {
        return Ok(());
    }
    if let Some(j) = ctx.cleanup.journal() {
        j.group(&ctx.target.rg_url(), &rg.api_version);
        if let Some(why) = j.failure() {
            return Err(format!(
                "resource group {} not created: {why}",
                ctx.target.resource_group.name
            ));
        }
    }
    let url = with_version(&ctx.target.rg_url(), Some(&rg.api_version));
    let body = serde_json::json!({
        "location": ctx.target.location,
        "tags": group_tags(&ctx.run_id),
    })
    .to_string();
    let ex = ctx
        .http
        .send(request(Surface::Arm, "PUT", &url, Some(body)), Role::Setup)
        .await;
    ctx.observe("setup", &ex);
    match ex.status() {
        Some(200 | 201) => Ok(()),
        Some(s) => Err(format!(
            "could not create resource group {}: {s} {}",
            rg.name,
            crate::http::cut(&ex.response.map(|r| r.body).unwrap_or_default(), 300)
        )),
        None => Err(format!(
            "could not create resource group {}: {}",
            rg.name,
            ex.error.unwrap_or_default()
        )),
    }
}

/// What the console says while an interrupted run deletes what it created.
pub fn deleting_line(n: usize) -> String {
    format!(
        "deleting {n} resource(s) the run created — Ctrl-C again to leave them; the journal lists them"
    )
}

/// Why a resource is not confirmed gone.
#[derive(Debug, Clone, PartialEq)]
pub enum Miss {
    /// Another pass may help (a refusal while a dependant exists, a transport error).
    Retry(String),
    /// Waited its whole budget (or the run was forced to stop).
    Gave(String),
}

/// The wait before read number `n` while confirming: 250 ms doubling to 5 s, scaled.
fn backoff(ctx: &RunCtx, n: u32) -> Duration {
    let base = Duration::from_millis(250) * 2u32.pow(n.min(5));
    base.min(Duration::from_secs(5))
        .mul_f64(ctx.time_scale.clamp(0.0, 100.0))
        .max(Duration::from_millis(5))
}

/// Wait before the next read, within the deadline, unless the run is forced to stop.
async fn pause(ctx: &RunCtx, n: u32, deadline: Instant) -> bool {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return false;
    }
    ctx.cancel
        .sleep_unless_forced(backoff(ctx, n).min(left))
        .await
}

/// Delete one resource and confirm it gone (its operation ended, then a 404), by `deadline`.
pub async fn remove(ctx: &RunCtx, t: &Tracked, deadline: Instant) -> Result<(), Miss> {
    let url = with_version(&t.url, t.api_version.as_deref());
    if t.surface == Surface::Arm && ctx.target.type_for(&t.url).is_some_and(|ty| !ty.deletable) {
        // Gone only with a parent the run created (forgotten then with its subtree).
        let g = send(ctx, t.surface, "GET", &url).await;
        if matches!(g.status(), Some(404 | 410)) {
            return Ok(());
        }
        return Err(Miss::Gave(
            "its type cannot be deleted and no parent the run created took it along".into(),
        ));
    }
    if t.maybe_gone {
        let g = send(ctx, t.surface, "GET", &url).await;
        if matches!(g.status(), Some(404 | 410)) {
            return Ok(());
        }
    }
    let d = send(ctx, t.surface, "DELETE", &url).await;
    if ctx.cancel.is_forced() {
        return Err(Miss::Gave(format!(
            "DELETE sent ({}), not confirmed: the run was stopped",
            status_text(&d)
        )));
    }
    let resp = match (d.status(), &d.response) {
        (Some(200 | 201 | 202 | 204 | 404), Some(r)) => r,
        (Some(s), _) => {
            return Err(Miss::Retry(format!(
                "DELETE answered {s}: {}",
                crate::http::cut(
                    &d.response
                        .as_ref()
                        .map(|r| r.body.clone())
                        .unwrap_or_default(),
                    200
                )
            )));
        }
        (None, _) => {
            return Err(Miss::Retry(format!(
                "no answer to DELETE: {}",
                d.error.unwrap_or_default()
            )));
        }
    };
    // Follow its operation, when it started one.
    if matches!(resp.status, 201 | 202) {
        let mut strategy = match t.surface {
            Surface::Arm => Strategy::arm("DELETE", &url, resp),
            _ => Strategy::monitor(
                crate::lro::Channel::OperationLocation,
                &url,
                resp,
                Vocabulary::arm(),
            ),
        };
        let mut n = 0;
        while let Some(op) = strategy.url().map(str::to_string)
            && !matches!(strategy, Strategy::Body { .. } | Strategy::Done)
            && ctx.http.refusal(&op).is_none()
        {
            if !pause(ctx, n, deadline).await {
                break;
            }
            n += 1;
            // A data-plane link handed out without api-version is read with the one the
            // resource was written with, as the Azure SDKs add it.
            let op = match (&t.surface, t.api_version.as_deref()) {
                (Surface::DataPlane, Some(v)) if !op.contains("api-version=") => {
                    with_version(&op, Some(v))
                }
                _ => op,
            };
            let r = send(ctx, t.surface, "GET", &op).await;
            match strategy.read(r.response.as_ref()) {
                State::Running(_) => {}
                State::Done(crate::lro::Outcome::Succeeded, _) => break,
                State::Done(o, why) => {
                    return Err(Miss::Retry(format!(
                        "its DELETE operation ended {} ({why})",
                        o.as_str()
                    )));
                }
                // Cannot tell from the operation: the resource itself will.
                State::Unreadable(_) => break,
            }
        }
    }
    // Confirm: read until 404.
    let mut n = 0;
    loop {
        let g = send(ctx, t.surface, "GET", &url).await;
        if matches!(g.status(), Some(404 | 410)) {
            return Ok(());
        }
        let last = status_text(&g);
        if !pause(ctx, n, deadline).await {
            let why = if ctx.cancel.is_forced() {
                format!("deleted, not confirmed gone: the run was stopped (GET answered {last})")
            } else {
                format!(
                    "still there after its DELETE answered {}: GET answers {last} at the deadline",
                    resp.status
                )
            };
            return Err(Miss::Gave(why));
        }
        n += 1;
    }
}

fn status_text(ex: &Exchange) -> String {
    match (ex.status(), &ex.error) {
        (Some(s), _) => s.to_string(),
        (None, Some(e)) => format!("no answer: {}", crate::http::cut(e, 120)),
        _ => "no answer".into(),
    }
}

/// Delete these resources, `DELETE_SLOTS` at a time run-wide: the topmost ones first (see
/// [`top_down`]), then what is left children first. Confirmed ones are forgotten; the others
/// are marked left with the reason.
pub async fn remove_all(ctx: &Arc<RunCtx>, items: Vec<Tracked>, budget: Duration) {
    let deadline = Instant::now() + budget;
    let rest = top_down(ctx, items, deadline).await;
    children_first(ctx, rest, deadline).await;
}

/// Is `url` under `parent` (a descendant of it)?
fn under(url: &str, parent: &str) -> bool {
    let (u, p) = (crate::lro::path_key(url), crate::lro::path_key(parent));
    u.len() > p.len() && u.starts_with(&p) && u.as_bytes()[p.len()] == b'/'
}

/// Deleting a resource deletes what it holds (NEST-04): one DELETE for each topmost resource,
/// then a read of each tracked resource under it, at once, instead of a wait per level.
/// Returns what is still to delete: the subtrees whose top was refused (an RP may want the
/// children gone first) and anything still there after its parent went.
async fn top_down(ctx: &Arc<RunCtx>, items: Vec<Tracked>, deadline: Instant) -> Vec<Tracked> {
    let (tops, below): (Vec<Tracked>, Vec<Tracked>) = items
        .iter()
        .cloned()
        .partition(|t| !items.iter().any(|p| under(&t.url, &p.url)));
    if below.is_empty() {
        return items;
    }
    let mut set = tokio::task::JoinSet::new();
    for t in tops {
        let ctx = ctx.clone();
        set.spawn(async move {
            let _slot = ctx.delete_slots.acquire().await;
            let r = remove(&ctx, &t, deadline).await;
            (t, r)
        });
    }
    let mut rest = Vec::new();
    let mut gone_tops = Vec::new();
    while let Some(done) = set.join_next().await {
        let Ok((t, r)) = done else { continue };
        match r {
            Ok(()) => gone_tops.push(t),
            Err(Miss::Gave(why)) => {
                ctx.cleanup.left(&t.url, &why, true);
                rest.push(t);
            }
            Err(Miss::Retry(why)) => {
                ctx.cleanup.left(&t.url, &why, false);
                rest.push(t);
            }
        }
    }
    // What was under a confirmed top: gone too, unless a read says otherwise.
    let mut reads = tokio::task::JoinSet::new();
    for t in below {
        if !gone_tops.iter().any(|p| under(&t.url, &p.url)) {
            rest.push(t);
            continue;
        }
        let ctx = ctx.clone();
        reads.spawn(async move {
            let _slot = ctx.delete_slots.acquire().await;
            let url = with_version(&t.url, t.api_version.as_deref());
            let g = send(&ctx, t.surface, "GET", &url).await;
            (t, matches!(g.status(), Some(404 | 410)))
        });
    }
    let mut kept = Vec::new();
    while let Some(done) = reads.join_next().await {
        let Ok((t, gone)) = done else { continue };
        if gone {
            ctx.cleanup.forget(&t.url);
        } else {
            kept.push(t);
        }
    }
    for t in gone_tops {
        // Its subtree goes with it from the tracker, unless something under it is still there.
        if kept.iter().any(|k| under(&k.url, &t.url)) {
            ctx.cleanup.forget(&t.url);
        } else {
            ctx.cleanup.gone(&t.url);
        }
    }
    rest.extend(kept);
    rest
}

/// Delete children first, a depth level at a time, again while a pass makes progress (a
/// dependency refuses its DELETE until its dependant is gone).
async fn children_first(ctx: &Arc<RunCtx>, items: Vec<Tracked>, deadline: Instant) {
    let mut todo = items;
    if todo.is_empty() {
        return;
    }
    loop {
        todo.sort_by_key(|t| std::cmp::Reverse(t.depth()));
        let before = todo.len();
        let mut retry = Vec::new();
        let mut i = 0;
        while i < todo.len() {
            let depth = todo[i].depth();
            let mut set = tokio::task::JoinSet::new();
            while i < todo.len() && todo[i].depth() == depth {
                let t = todo[i].clone();
                i += 1;
                // Gone with its parent already.
                if !ctx.cleanup.contains(&t.url) {
                    continue;
                }
                let ctx = ctx.clone();
                set.spawn(async move {
                    let _slot = ctx.delete_slots.acquire().await;
                    let r = if t.waited {
                        // It had its full wait once: read it once more, no new wait.
                        let url = with_version(&t.url, t.api_version.as_deref());
                        let g = send(&ctx, t.surface, "GET", &url).await;
                        match g.status() {
                            Some(404 | 410) => Ok(()),
                            _ => Err(Miss::Gave(t.left.clone().unwrap_or_default())),
                        }
                    } else {
                        remove(&ctx, &t, deadline).await
                    };
                    (t, r)
                });
            }
            while let Some(done) = set.join_next().await {
                let Ok((t, r)) = done else { continue };
                match r {
                    Ok(()) => ctx.cleanup.gone(&t.url),
                    Err(Miss::Gave(why)) => ctx.cleanup.left(&t.url, &why, true),
                    Err(Miss::Retry(why)) => {
                        ctx.cleanup.left(&t.url, &why, false);
                        retry.push(t);
                    }
                }
            }
        }
        let progress = retry.len() < before;
        todo = retry;
        if todo.is_empty() || !progress || Instant::now() >= deadline || ctx.cancel.is_forced() {
            break;
        }
    }
}

/// Test `by` ended: delete what it tracked that no running test still uses.
pub async fn after_test(ctx: &Arc<RunCtx>, by: &str) -> AfterTest {
    let items = ctx.cleanup.release(by);
    if items.is_empty() {
        return AfterTest::default();
    }
    let urls: Vec<String> = items.iter().map(|t| t.url.clone()).collect();
    remove_all(ctx, items, ctx.target.deadline).await;
    let left = urls.iter().filter(|u| ctx.cleanup.contains(u)).count();
    AfterTest {
        deleted: urls.len() - left,
        left,
    }
}

/// What deleting one test's resources gave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AfterTest {
    /// Confirmed gone.
    pub deleted: usize,
    /// Not confirmed gone yet (the final cleanup tries again; the journal lists them).
    pub left: usize,
}

impl AfterTest {
    /// What an interrupted test's result says of its cleanup.
    pub fn describe(self) -> String {
        match (self.deleted, self.left) {
            (0, 0) => "it had created nothing to delete".into(),
            (d, 0) => format!("the {d} resource(s) it created were deleted"),
            (d, l) => format!(
                "{d} resource(s) it created deleted, {l} not confirmed gone (the final cleanup tries again; the cleanup testcase and the journal list what stays)"
            ),
        }
    }
}

/// Delete what is left, then the run's resource group; returns what could not be confirmed
/// gone ("URL (created by TEST): why"), also written to the journal.
pub async fn final_cleanup(ctx: Arc<RunCtx>, budget: Duration) -> Vec<String> {
    let start = Instant::now();
    let mut left = Vec::new();
    for o in ctx.cleanup.fixed.originals() {
        let deadline = Instant::now() + budget.saturating_sub(start.elapsed());
        let mut done = restore(&ctx, &o.url, &o.body, deadline).await;
        // A server that accepts only the exact body of its type gets the same values in that
        // body's shape.
        if let (Err(_), Some(f)) = (&done, &o.fallback) {
            done = restore(&ctx, &o.url, f, deadline).await;
        }
        if let Err(why) = done {
            left.push(format!(
                "{} could not be restored to its state before the run: {why} (first written by {})",
                o.url, o.by
            ));
        }
    }
    let items = ctx.cleanup.remaining();
    if !items.is_empty() {
        remove_all(&ctx, items, budget.saturating_sub(start.elapsed())).await;
    }
    let rg = &ctx.target.resource_group;
    if rg.create {
        let left_budget = budget
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(5).min(budget));
        match delete_group(&ctx, &ctx.target.rg_url(), &rg.api_version, left_budget).await {
            Ok(()) => ctx.cleanup.gone(&ctx.target.rg_url()),
            Err(why) => {
                if let Some(j) = ctx.cleanup.journal() {
                    j.left(&ctx.target.rg_url(), &why);
                }
                left.push(format!("resource group {} ({why})", rg.name));
            }
        }
    }
    let mut rest: Vec<String> = Vec::new();
    for t in ctx.cleanup.remaining() {
        let why = t
            .left
            .clone()
            .unwrap_or_else(|| "not deleted: cleanup ran out of time".into());
        if let Some(j) = ctx.cleanup.journal() {
            j.left(&t.url, &why);
        }
        rest.push(format!("{} (created by {}): {why}", t.url, t.by));
    }
    rest.append(&mut left);
    rest
}

/// PUT the body a fixed-name resource had before the run, and wait until it settles.
async fn restore(
    ctx: &RunCtx,
    url: &str,
    body: &serde_json::Value,
    deadline: Instant,
) -> Result<(), String> {
    let u = with_version(url, Some(ctx.target.api_version_for(url)));
    let mut last = send_body(ctx, Surface::Arm, "PUT", &u, Some(body.to_string())).await;
    let mut n = 0;
    loop {
        match last.status() {
            Some(200 | 201) => {
                let json = last.response.as_ref().and_then(|r| r.json.as_ref());
                match crate::lro::resource_state(json) {
                    State::Done(crate::lro::Outcome::Succeeded, _) => return Ok(()),
                    State::Done(o, _) => return Err(format!("it ended {}", o.as_str())),
                    _ => {}
                }
            }
            Some(202) => {}
            _ => return Err(last.summary()),
        }
        if !pause(ctx, n, deadline).await {
            return Err("still running when the cleanup budget ran out".into());
        }
        n += 1;
        last = send(ctx, Surface::Arm, "GET", &u).await;
    }
}

/// Delete a resource group and confirm it gone: its operation (a 202's Location) followed,
/// then the group read until 404.
pub async fn delete_group(
    ctx: &RunCtx,
    rg_url: &str,
    api_version: &str,
    budget: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + budget;
    let url = with_version(rg_url, Some(api_version));
    let d = send(ctx, Surface::Arm, "DELETE", &url).await;
    if ctx.cancel.is_forced() {
        return Err(format!(
            "DELETE sent ({}), not confirmed: the run was stopped",
            status_text(&d)
        ));
    }
    match d.status() {
        Some(200 | 202 | 204 | 404) => {}
        _ => return Err(format!("DELETE answered {}", status_text(&d))),
    }
    if d.status() == Some(202)
        && let Some(mut strategy) = d
            .response
            .as_ref()
            .map(|r| Strategy::arm("DELETE", &url, r))
    {
        let mut n = 0;
        while let Some(op) = strategy.url().map(str::to_string)
            && ctx.http.refusal(&op).is_none()
        {
            if !pause(ctx, n, deadline).await {
                break;
            }
            n += 1;
            let r = send(ctx, Surface::Arm, "GET", &op).await;
            match strategy.read(r.response.as_ref()) {
                State::Running(_) => {}
                State::Done(crate::lro::Outcome::Succeeded, _) | State::Unreadable(_) => break,
                State::Done(o, why) => {
                    return Err(format!("its DELETE operation ended {} ({why})", o.as_str()));
                }
            }
        }
    }
    let mut n = 0;
    loop {
        let g = send(ctx, Surface::Arm, "GET", &url).await;
        if matches!(g.status(), Some(404)) {
            return Ok(());
        }
        if !pause(ctx, n, deadline).await {
            return Err(format!(
                "its DELETE answered {} but GET still answers {} at the deadline",
                status_text(&d),
                status_text(&g)
            ));
        }
        n += 1;
    }
}
