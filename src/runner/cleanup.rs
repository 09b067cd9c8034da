//! Creating the run's resource group, and deleting at the end what the run created: every
//! tracked resource (children first, LRO deletes polled to completion), then the group if the
//! run made it. Whatever could not be deleted is listed in the reports.

use std::time::{Duration, Instant};

use super::context::RunCtx;
use crate::http::{OutRequest, Role};

fn with_version(url: &str, v: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}api-version={v}")
}

/// PUT the resource group when the target asks the run to create it.
pub async fn create_resource_group(ctx: &RunCtx) -> Result<(), String> {
    let rg = &ctx.target.resource_group;
    if !rg.create {
        return Ok(());
    }
    let url = with_version(&ctx.target.rg_url(), &rg.api_version);
    let body = serde_json::json!({"location": ctx.target.location}).to_string();
    let req = OutRequest {
        surface: crate::http::Surface::Arm,
        method: "PUT".into(),
        url,
        headers: Vec::new(),
        body: Some(body),
    };
    let ex = ctx.http.send(req, Role::Setup).await;
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

/// Put back what the run changed and delete what it created; returns what could not be.
/// Fixed-name resources that existed before the run are restored to the body they had;
/// resources of types that cannot be deleted go with their parent or are listed.
pub async fn final_cleanup(ctx: std::sync::Arc<RunCtx>, budget: Duration) -> Vec<String> {
    let start = Instant::now();
    let mut left = Vec::new();
    for o in ctx.cleanup.originals() {
        let budget_left = budget.saturating_sub(start.elapsed());
        let mut done = restore(&ctx, &o.url, &o.body, budget_left).await;
        // A server that accepts only the exact body of its type gets the same values in that
        // body's shape.
        if let (Err(_), Some(f)) = (&done, &o.fallback) {
            let budget_left = budget.saturating_sub(start.elapsed());
            done = restore(&ctx, &o.url, f, budget_left).await;
        }
        if let Err(why) = done {
            left.push(format!(
                "{} could not be restored to its state before the run: {why} (first written by {})",
                o.url, o.by
            ));
        }
    }
    let deletable = |url: &str| ctx.target.type_for(url).is_none_or(|t| t.deletable);
    // Passes until nothing is left or a pass makes no progress: a dependency refuses its DELETE
    // until its dependant is gone, in an order the run cannot know.
    loop {
        let mut items = ctx.cleanup.remaining();
        items.retain(|(u, _)| deletable(u));
        if items.is_empty() || start.elapsed() >= budget {
            break;
        }
        // Children first: longer paths go before their parents.
        items.sort_by_key(|(u, _)| std::cmp::Reverse(u.matches('/').count()));
        let before = items.len();
        // Delete a whole depth level at once: deletes are slow and independent.
        let mut depth_groups: Vec<Vec<String>> = Vec::new();
        let mut last_depth = usize::MAX;
        for (url, _) in items {
            let d = url.matches('/').count();
            if d != last_depth {
                depth_groups.push(Vec::new());
                last_depth = d;
            }
            if let Some(g) = depth_groups.last_mut() {
                g.push(url);
            }
        }
        for group in depth_groups {
            let mut set = tokio::task::JoinSet::new();
            for url in group {
                if !ctx.cleanup.contains(&url) {
                    continue; // deleted with its parent
                }
                let ctx = ctx.clone();
                let left = budget.saturating_sub(start.elapsed());
                set.spawn(async move {
                    if delete_and_wait(&ctx, &url, left).await {
                        ctx.cleanup.forget(&url);
                    }
                });
            }
            while set.join_next().await.is_some() {}
        }
        let now = ctx
            .cleanup
            .remaining()
            .iter()
            .filter(|(u, _)| deletable(u))
            .count();
        if now >= before {
            break;
        }
    }
    left.extend(ctx.cleanup.remaining().into_iter().map(|(url, by)| {
        if deletable(&url) {
            format!("{url} (created by {by})")
        } else {
            format!("{url} (created by {by}; its type cannot be deleted and no parent the run created took it along)")
        }
    }));
    let rg = &ctx.target.resource_group;
    if rg.create {
        let url = with_version(&ctx.target.rg_url(), &rg.api_version);
        let ex = ctx
            .http
            .send(
                OutRequest {
                    surface: crate::http::Surface::Arm,
                    method: "DELETE".into(),
                    url,
                    headers: Vec::new(),
                    body: None,
                },
                Role::Cleanup,
            )
            .await;
        if !matches!(ex.status(), Some(200..=299)) {
            left.push(format!("resource group {} ({})", rg.name, ex.summary()));
        }
    }
    left
}

async fn send(
    ctx: &RunCtx,
    method: &str,
    url: &str,
    body: Option<String>,
) -> crate::http::Exchange {
    ctx.http
        .send(
            OutRequest {
                surface: crate::http::Surface::Arm,
                method: method.into(),
                url: url.to_string(),
                headers: Vec::new(),
                body,
            },
            Role::Cleanup,
        )
        .await
}

/// The wait between cleanup reads.
async fn pause(ctx: &RunCtx) {
    tokio::time::sleep(
        Duration::from_millis((500.0 * ctx.time_scale.max(0.05)) as u64)
            .max(Duration::from_millis(50)),
    )
    .await;
}

/// PUT the body a fixed-name resource had before the run, and wait until it settles.
async fn restore(
    ctx: &RunCtx,
    url: &str,
    body: &serde_json::Value,
    budget: Duration,
) -> Result<(), String> {
    let start = Instant::now();
    let u = with_version(url, ctx.target.api_version_for(url));
    let ex = send(ctx, "PUT", &u, Some(body.to_string())).await;
    let mut last = ex;
    loop {
        match last.status() {
            Some(200 | 201) => {
                let json = last.response.as_ref().and_then(|r| r.json.as_ref());
                match crate::lro::resource_state(json) {
                    crate::lro::State::Done(crate::lro::Outcome::Succeeded, _) => return Ok(()),
                    crate::lro::State::Done(o, _) => {
                        return Err(format!("it ended {}", o.as_str()));
                    }
                    _ => {}
                }
            }
            Some(202) => {}
            _ => return Err(last.summary()),
        }
        if start.elapsed() >= budget {
            return Err("still running when the cleanup budget ran out".into());
        }
        pause(ctx).await;
        last = send(ctx, "GET", &u, None).await;
    }
}

/// DELETE and confirm the resource is gone (GET answers 404).
async fn delete_and_wait(ctx: &RunCtx, url: &str, budget: Duration) -> bool {
    let start = Instant::now();
    let u = with_version(url, ctx.target.api_version_for(url));
    let ex = send(ctx, "DELETE", &u, None).await;
    match ex.status() {
        Some(404) => return true,
        Some(200 | 202 | 204) => {}
        _ => return false,
    }
    // The operation's own URL, read as given on each round as a client following it would
    // (some RPs end an operation only once it has been observed).
    let op_url = ex.response.as_ref().and_then(|r| {
        r.header("azure-asyncoperation")
            .or_else(|| r.header("location"))
            .and_then(|l| url::Url::parse(&u).ok()?.join(l).ok())
            .map(|l| l.to_string())
    });
    // Read the resource itself until it is gone: the simplest signal every RP gives.
    loop {
        if let Some(op) = &op_url {
            let _ = send(ctx, "GET", op, None).await;
        }
        let g = send(ctx, "GET", &u, None).await;
        match g.status() {
            Some(404) => return true,
            Some(_) => {}
            None => return false,
        }
        if start.elapsed() >= budget {
            return false;
        }
        pause(ctx).await;
    }
}
