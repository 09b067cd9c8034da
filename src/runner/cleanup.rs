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

/// Delete what is left; returns what could not be deleted.
pub async fn final_cleanup(ctx: std::sync::Arc<RunCtx>, budget: Duration) -> Vec<String> {
    let start = Instant::now();
    // Passes until nothing is left or a pass makes no progress: a dependency refuses its DELETE
    // until its dependant is gone, in an order the run cannot know.
    loop {
        let mut items = ctx.cleanup.remaining();
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
        if ctx.cleanup.remaining().len() >= before {
            break;
        }
    }
    let mut left: Vec<String> = ctx
        .cleanup
        .remaining()
        .into_iter()
        .map(|(url, by)| format!("{url} (created by {by})"))
        .collect();
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

async fn delete_and_wait(ctx: &RunCtx, url: &str, budget: Duration) -> bool {
    let start = Instant::now();
    let u = with_version(url, &ctx.target.api_version);
    let ex = ctx
        .http
        .send(
            OutRequest {
                surface: crate::http::Surface::Arm,
                method: "DELETE".into(),
                url: u.clone(),
                headers: Vec::new(),
                body: None,
            },
            Role::Cleanup,
        )
        .await;
    match ex.status() {
        Some(200 | 204 | 404) => return true,
        Some(202) => {}
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
    // Poll the resource itself until it is gone: the simplest signal every RP gives.
    while start.elapsed() < budget {
        tokio::time::sleep(
            Duration::from_millis((500.0 * ctx.time_scale.max(0.05)) as u64)
                .max(Duration::from_millis(50)),
        )
        .await;
        if let Some(op) = &op_url {
            let _ = ctx
                .http
                .send(
                    OutRequest {
                        surface: crate::http::Surface::Arm,
                        method: "GET".into(),
                        url: op.clone(),
                        headers: Vec::new(),
                        body: None,
                    },
                    Role::Cleanup,
                )
                .await;
        }
        let g = ctx
            .http
            .send(
                OutRequest {
                    surface: crate::http::Surface::Arm,
                    method: "GET".into(),
                    url: u.clone(),
                    headers: Vec::new(),
                    body: None,
                },
                Role::Cleanup,
            )
            .await;
        match g.status() {
            Some(404) => return true,
            Some(_) => continue,
            None => return false,
        }
    }
    false
}
