//! `rpconform cleanup`: delete what a run left behind.
//!
//! - `--journal DIR` reads the journal(s) a run wrote in its report directory and deletes what
//!   they list as not confirmed gone, once the journal is shown to match the target
//!   (`journal_cleanup`): each confirmed (its operation followed, then a 404), the topmost
//!   first (then what was under them is read, and deleted if still there), then the run's
//!   resource group if the run created it. What is confirmed gone (or not) is appended to the
//!   journal, so running it again resumes.
//! - `--sweep-tagged --older-than 2h --target FILE` lists the resource groups of the target's
//!   subscription and deletes those a run created (tagged `rpconform-run`, `created-by:
//!   rpconform` and a creation time) longer ago than the age given. Groups without those tags
//!   are never touched.

use std::sync::Arc;
use std::time::Duration;

use super::args::CleanupArgs;
use super::common::{err, http_for, out, runtime, usage};
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::http::{OutRequest, Role, Surface};
use crate::runner::RunCtx;
use crate::runner::cleanup::{CREATED_BY, TAG_CREATED_AT, TAG_CREATED_BY, TAG_RUN, delete_group};
use crate::target::load_target;

/// `30m`, `2h`, `1d`, `90s` or plain seconds.
pub(super) fn parse_age(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("--older-than: `{s}` is not an age like 30m, 2h or 1d"))?;
    let unit_secs: u64 = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "--older-than: unknown unit in `{s}` (s, m, h or d)"
            ));
        }
    };
    // Ages are subtracted from the clock: at most ten years.
    const MAX_AGE_SECS: u64 = 3650 * 86_400;
    match n.checked_mul(unit_secs) {
        Some(secs) if secs <= MAX_AGE_SECS => Ok(Duration::from_secs(secs)),
        _ => Err(format!(
            "--older-than: `{s}` is longer than ten years (3650d)"
        )),
    }
}

pub(super) fn cleanup(a: CleanupArgs) -> u8 {
    if a.journal.is_none() && !a.sweep_tagged {
        return usage("cleanup needs --journal DIR or --sweep-tagged (with --target FILE)");
    }
    let rt = runtime();
    let mut code = EXIT_OK;
    if let Some(dir) = &a.journal {
        code = code.max(rt.block_on(super::journal_cleanup::from_journal(dir, &a)));
    }
    if a.sweep_tagged && code != EXIT_USAGE {
        code = code.max(rt.block_on(sweep_tagged(&a)));
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    code
}

/// A tagged group's age, when its tags say a run created it.
fn run_group_age(
    group: &serde_json::Value,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let tags = group.get("tags")?.as_object()?;
    if tags.get(TAG_CREATED_BY)?.as_str()? != CREATED_BY {
        return None;
    }
    let run = tags.get(TAG_RUN)?.as_str()?;
    if run.trim().is_empty() {
        return None;
    }
    let at = chrono::DateTime::parse_from_rfc3339(tags.get(TAG_CREATED_AT)?.as_str()?).ok()?;
    (now - at.with_timezone(&chrono::Utc)).to_std().ok()
}

async fn sweep_tagged(a: &CleanupArgs) -> u8 {
    let Some(file) = &a.target else {
        return usage("--sweep-tagged needs --target FILE (its subscription is searched)");
    };
    let age = match parse_age(&a.older_than) {
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    let mut target = match load_target(file) {
        Ok(t) => t,
        Err(r) => {
            err(&r.render());
            return EXIT_USAGE;
        }
    };
    target.deadline = Duration::from_secs(a.deadline.max(1));
    let http = match http_for(&target, a) {
        Ok(c) => c.http,
        Err(e) => return usage(e),
    };
    let api = target.resource_group.api_version.clone();
    let base = target.base();
    let sub = target.subscription.clone();
    let ctx = Arc::new(RunCtx::new(
        target.clone(),
        http,
        1.0,
        false,
        "sweep".into(),
    ));
    // Every group of the subscription (ARM filters by tag name; the tags are checked here too).
    let mut url =
        match crate::http::parse_url(&format!("{base}/subscriptions/{sub}/resourcegroups")) {
            Ok(u) => u,
            Err(e) => return usage(format!("invalid base URL: {e}")),
        };
    url.query_pairs_mut()
        .append_pair("api-version", &api)
        .append_pair("$filter", &format!("tagName eq '{TAG_RUN}'"));
    let mut next = Some(url.to_string());
    let mut groups: Vec<serde_json::Value> = Vec::new();
    let mut pages = 0;
    while let Some(u) = next.take() {
        pages += 1;
        if pages > 200 {
            break;
        }
        let ex = ctx
            .http
            .send(
                OutRequest {
                    surface: Surface::Arm,
                    method: "GET".into(),
                    url: u.clone(),
                    headers: Vec::new(),
                    body: None,
                },
                Role::Cleanup,
            )
            .await;
        let Some(body) = ex
            .response
            .as_ref()
            .filter(|r| r.status == 200)
            .and_then(|r| r.json.clone())
        else {
            err(&format!(
                "error: cannot list the resource groups of subscription {sub}: {}",
                ex.summary()
            ));
            return EXIT_FAILED;
        };
        if let Some(v) = body.get("value").and_then(|v| v.as_array()) {
            groups.extend(v.iter().cloned());
        }
        next = body
            .get("nextLink")
            .and_then(|v| v.as_str())
            .filter(|n| !n.is_empty() && ctx.http.refusal(n).is_none())
            .map(str::to_string);
    }
    let now = chrono::Utc::now();
    let mut doomed = Vec::new();
    let mut young = 0;
    let mut others = 0;
    for g in &groups {
        let Some(name) = g.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        match run_group_age(g, now) {
            Some(d) if d >= age => doomed.push((name.to_string(), d)),
            Some(_) => young += 1,
            None => others += 1,
        }
    }
    out(&format!(
        "subscription {sub}: {} group(s) a run created more than {} ago; {young} newer; {others} not created by rpconform (untouched)",
        doomed.len(),
        a.older_than
    ));
    let mut code = EXIT_OK;
    for (name, d) in doomed {
        let rg_url = format!("{base}/subscriptions/{sub}/resourceGroups/{name}");
        if a.dry_run {
            out(&format!(
                "    would delete {name} (created {} h ago)",
                d.as_secs() / 3600
            ));
            continue;
        }
        // Each group its own connection: the target's guard lets a run write only to its
        // group, and this one was a run's.
        let mut own = target.clone();
        own.resource_group.name = name.clone();
        let gctx = match http_for(&own, a) {
            Ok(c) => RunCtx::new(own, c.http, 1.0, false, "sweep".into()),
            Err(e) => return usage(e),
        };
        match delete_group(&gctx, &rg_url, &api, gctx.target.deadline).await {
            Ok(()) => out(&format!("    deleted {name} (confirmed gone)")),
            Err(why) => {
                code = EXIT_FAILED;
                out(&format!("    {name}: not confirmed gone: {why}"));
            }
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_age("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_age("1d").unwrap(), Duration::from_secs(86_400));
        assert_eq!(parse_age("90").unwrap(), Duration::from_secs(90));
        assert!(parse_age("18446744073709551615d").is_err());
        assert!(parse_age("4000d").unwrap_err().contains("ten years"));
        assert!(parse_age("2 weeks").is_err());
        assert!(parse_age("h").is_err());
    }

    #[test]
    fn only_groups_a_run_tagged_are_old_enough() {
        let now = chrono::Utc::now();
        let old = (now - chrono::Duration::hours(3)).to_rfc3339();
        let g = serde_json::json!({"name": "a", "tags": {
            TAG_RUN: "abc", TAG_CREATED_BY: CREATED_BY, TAG_CREATED_AT: old}});
        assert!(run_group_age(&g, now).unwrap() >= Duration::from_secs(3 * 3600 - 5));
        let foreign = serde_json::json!({"name": "b", "tags": {
            TAG_RUN: "abc", TAG_CREATED_BY: "someone", TAG_CREATED_AT: old}});
        assert!(run_group_age(&foreign, now).is_none());
        let untagged = serde_json::json!({"name": "c"});
        assert!(run_group_age(&untagged, now).is_none());
        let no_time = serde_json::json!({"name": "d", "tags": {
            TAG_RUN: "abc", TAG_CREATED_BY: CREATED_BY}});
        assert!(run_group_age(&no_time, now).is_none());
    }
}
