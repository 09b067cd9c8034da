//! `rpconform probe METHOD URL`: one request against a target, followed to its end, judged by
//! every ambient and flow rule; the verdicts printed, and the usual reports written with
//! `--report-dir`.
//!
//! Which target: `--target embedded` (the reference RP, in-process, with `--fault` knobs; URL
//! a path), `--target FILE`, or none: a path then probes the embedded RP, an absolute URL a
//! minimal target inferred from the URL (its origin, no credentials, every path on it taken as
//! an ARM route, no types declared, so the rules that need a type declaration are not judged).
//!
//! Safety as for `run`: credentials only to the target's origin, redaction, the deadline, and
//! nothing deleted that the probe did not create (a PUT's resource is deleted at the end only
//! when a read before it answered 404; `--keep` leaves it). A probe never creates or deletes a
//! resource group, except on the embedded RP, which starts empty each time.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::args::ProbeArgs;
use super::common::{runtime, usage};
use super::embedded::parse_faults;
use super::outputs;
use super::signals::wait_for_signal;
use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::http::{HttpOptions, Redactor, cut};
use crate::report::{self, RunInfo, ScenarioResult, Status};
use crate::runner::{self, ProbeRequest, RunCtx};
use crate::target::{Target, embedded_target_yaml, is_guid, load_target, parse_target};

/// Where the probe goes.
enum Which {
    Embedded,
    File(String),
    Inferred,
}

pub(super) fn probe(a: ProbeArgs) -> u8 {
    let method = a.method.to_ascii_uppercase();
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return usage(format!("`{}` is not an HTTP method", a.method));
    }
    if !(a.time_scale > 0.0 && a.time_scale.is_finite() && a.time_scale <= 100.0) {
        return usage("--time-scale must be a number above 0 and at most 100");
    }
    let headers = match parse_headers(&a.headers) {
        Ok(h) => h,
        Err(e) => return usage(e),
    };
    let body = match &a.body {
        None => None,
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => Some(t),
            Err(e) => return usage(format!("cannot read --body {}: {e}", p.display())),
        },
    };
    let absolute = a.url.contains("://");
    let which = match a.target.as_deref() {
        Some("embedded") => Which::Embedded,
        Some(f) => Which::File(f.to_string()),
        None if absolute => Which::Inferred,
        None => Which::Embedded,
    };
    if matches!(which, Which::Embedded) && absolute {
        return usage(
            "the embedded RP listens on a port of its own: give the URL as a path (/subscriptions/...)",
        );
    }
    if !matches!(which, Which::Embedded) && !a.faults.is_empty() {
        return usage("--fault only applies to the embedded RP");
    }
    if !absolute && !a.url.starts_with('/') {
        return usage(format!(
            "`{}` is neither an absolute URL nor a path starting with /",
            a.url
        ));
    }
    let faults = match parse_faults(&a.faults) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    if let Err(e) = outputs_apart(&a, &which) {
        return usage(e);
    }
    let rt = runtime();
    let code = rt.block_on(run(&a, which, method, headers, body, faults));
    rt.shutdown_timeout(Duration::from_secs(1));
    code
}

/// The reports never replace the body sent, the target file or a spec.
fn outputs_apart(a: &ProbeArgs, which: &Which) -> Result<(), String> {
    let Some(dir) = &a.report_dir else {
        return Ok(());
    };
    let mut inputs = Vec::new();
    if let Which::File(f) = which {
        inputs.extend(outputs::target_inputs(Path::new(f)));
    }
    if let Some(b) = &a.body {
        inputs.push(outputs::Input::new("the request body (--body)", b));
    }
    inputs.extend(
        a.openapi
            .iter()
            .map(|p| outputs::Input::new("an OpenAPI spec", p)),
    );
    outputs::refuse_overlap(&[("--report-dir", outputs::report_files(dir))], &inputs)
}

/// `Name: value` pairs.
fn parse_headers(given: &[String]) -> Result<Vec<(String, String)>, String> {
    given
        .iter()
        .map(|h| {
            let (k, v) = h
                .split_once(':')
                .ok_or_else(|| format!("--header `{h}`: expected `Name: value`"))?;
            let k = k.trim();
            if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(format!("--header `{h}`: `{k}` is not a header name"));
            }
            Ok((k.to_string(), v.trim().to_string()))
        })
        .collect()
}

/// A minimal target for an absolute URL: its origin, no credentials, the ARM and data-plane
/// operation profiles, every path on it an ARM route (until an answer says otherwise); subscription and resource group from the path when it has them.
fn inferred_target(url: &str) -> Result<Target, String> {
    let u = crate::http::parse_url(url).map_err(|e| format!("invalid URL `{url}`: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(format!("`{url}` is not an absolute http(s) URL"));
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(
            "the URL carries credentials (user:password@); they would be printed in every report"
                .into(),
        );
    }
    let segs: Vec<&str> = u.path().split('/').filter(|s| !s.is_empty()).collect();
    let after = |word: &str| {
        segs.iter()
            .position(|s| s.eq_ignore_ascii_case(word))
            .and_then(|i| segs.get(i + 1))
            .map(|s| s.to_string())
    };
    let subscription = after("subscriptions")
        .filter(|s| is_guid(s))
        .unwrap_or_else(|| "00000000-0000-0000-0000-000000000000".into());
    let group = after("resourceGroups").unwrap_or_else(|| "rpconform-probe".into());
    let mut origin = u.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    let mut doc = json!({
        "base_url": origin.as_str(),
        "auth": "none",
        "subscription": subscription,
        "resource_group": {"name": group},
        // A write's answer may turn out to start a data-plane operation (`infer_monitor`):
        // its monitor's rules count too.
        "profiles": ["arm", "azure-core-lro"],
        "arm_paths": ["/"],
    });
    // The URL's api-version is the one every read of the flow carries (the resource's settled
    // state after a PUT, say), as a client of that API version would send it.
    let given = u
        .query_pairs()
        .find(|(k, _)| k == "api-version")
        .map(|(_, v)| v.into_owned());
    if let Some(v) = &given {
        doc["api_version"] = json!(v);
        if let Ok(t) = parse_target(
            Path::new("inferred-target.yaml"),
            &doc.to_string(),
            "inferred from the URL",
        ) {
            return Ok(t);
        }
        // Not an ARM api-version: sent as given on the probe's own request only.
        doc.as_object_mut().map(|o| o.remove("api_version"));
    }
    parse_target(
        Path::new("inferred-target.yaml"),
        &doc.to_string(),
        "inferred from the URL",
    )
    .map_err(|r| r.render())
}

/// For a target inferred from the URL: the status monitor a data-plane write at this URL
/// would hand out (`Operation-Location`, TypeSpec Azure.Core defaults: a `status` field, a
/// `result` for POST; the final resource at the original URL for PUT and PATCH, none after a
/// DELETE; missing
/// api-versions appended to handed-out links, as the Azure SDK team asks clients to). Used only if the answer
/// turns out to be one.
fn inferred_monitor(url: &str, method: &str) -> Option<crate::target::Monitor> {
    let u = crate::http::parse_url(url).ok()?;
    let mut origin = u.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    let method = method.to_ascii_uppercase();
    let mut mon = json!({
        "request": {"method": method, "url": u.path()},
        "link": "operation-location",
        "operation_id_header": "none",
    });
    match method.as_str() {
        "PUT" | "PATCH" => {
            mon["final_state_via"] = json!("original-uri");
            mon["result_field"] = Value::Null;
        }
        "DELETE" => mon["result_field"] = Value::Null,
        _ => {}
    }
    if let Some((_, v)) = u.query_pairs().find(|(k, _)| k == "api-version") {
        mon["api_version"] = json!(v);
        mon["poll_api_version"] = json!("append");
    }
    let doc = json!({
        "base_url": origin.as_str(),
        "auth": "none",
        "profiles": ["azure-core-lro"],
        "monitors": {"inferred": mon},
    });
    parse_target(
        Path::new("inferred-target.yaml"),
        &doc.to_string(),
        "inferred from the URL",
    )
    .ok()?
    .monitors
    .into_iter()
    .next()
}

/// The target a probe runs against, whether it was declared (not inferred from the URL), and
/// the embedded RP when it is the target; `Err` is the exit code, the error printed.
async fn probe_target(
    a: &ProbeArgs,
    which: &Which,
    faults: &std::collections::BTreeSet<rpconform_refrp::Fault>,
) -> Result<(Target, bool, Option<rpconform_refrp::RunningServer>), u8> {
    match which {
        Which::Embedded => embedded(a, faults).await,
        Which::File(f) => match load_target(Path::new(f)) {
            Ok(mut t) => {
                // The probe's URL names the group; the probe never creates or deletes one.
                t.resource_group.create = false;
                Ok((t, true, None))
            }
            Err(r) => {
                eprint!("{}", r.render());
                Err(EXIT_USAGE)
            }
        },
        Which::Inferred => match inferred_target(&a.url) {
            Ok(t) => Ok((t, false, None)),
            Err(e) => Err(usage(e)),
        },
    }
}

/// The embedded RP started with the probe's fault knobs, and its target with its spec.
async fn embedded(
    a: &ProbeArgs,
    faults: &std::collections::BTreeSet<rpconform_refrp::Fault>,
) -> Result<(Target, bool, Option<rpconform_refrp::RunningServer>), u8> {
    let settings = rpconform_refrp::Settings {
        op_duration: Duration::from_millis(a.op_duration),
        faults: faults.clone(),
        ..Default::default()
    };
    let s = match rpconform_refrp::start(settings, 0).await {
        Ok(s) => s,
        Err(e) => return Err(usage(format!("cannot start the embedded RP: {e}"))),
    };
    let yaml = embedded_target_yaml(&s.base_url());
    match parse_target(Path::new("embedded-target.yaml"), &yaml, "embedded") {
        Ok(mut t) => {
            let settings = rpconform_refrp::Settings {
                faults: faults.clone(),
                ..Default::default()
            };
            match crate::target::embedded_specs(&settings) {
                Ok(specs) => t.attach_specs(std::sync::Arc::new(specs), "the embedded RP's spec"),
                Err(e) => return Err(usage(e)),
            }
            Ok((t, true, Some(s)))
        }
        Err(r) => {
            eprint!("{}", r.render());
            Err(EXIT_USAGE)
        }
    }
}

/// The command line's additions to the target: `--openapi`, `--deadline` and `-H` headers.
fn amend_target(
    a: &ProbeArgs,
    target: &mut Target,
    headers: &[(String, String)],
) -> Result<(), u8> {
    if !a.openapi.is_empty() {
        match crate::spec::Specs::load(&a.openapi) {
            Ok(s) => target.attach_specs(std::sync::Arc::new(s), "--openapi"),
            Err(e) => return Err(usage(format!("--openapi: {e}"))),
        }
    }
    if let Some(d) = a.deadline {
        target.deadline = Duration::from_secs(d.max(1));
    }
    // `-H` headers go with every request of the flow to the target's origin (polls and the
    // final reads too), as an SDK re-sends its client request id and custom headers.
    for (k, v) in headers {
        target.headers.retain(|(h, _)| !h.eq_ignore_ascii_case(k));
        target.headers.push((k.clone(), v.clone()));
    }
    Ok(())
}

/// Each exchange as it passes, and each wait before the next read (on stderr; the verdict
/// goes to stdout): a probe of a slow operation is never silent.
fn narrate(ctx: &mut RunCtx) {
    ctx.observer = Some(Arc::new(|_: &str, x: &crate::http::Exchange| {
        eprintln!("  {}", cut(&x.summary(), 300));
    }));
    ctx.on_wait = Some(Arc::new(|d: Duration| {
        eprintln!(
            "  waiting {:.1} s before the next read (Retry-After, or the Azure SDK's default)",
            d.as_secs_f64()
        );
    }));
}

/// Ctrl-C stops the probe and cleans up; a second one aborts.
fn stop_on_signal(ctx: &Arc<RunCtx>) {
    let ctx = ctx.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        eprintln!("\ninterrupted: stopping the probe and cleaning up (Ctrl-C again aborts)");
        ctx.cancel.cancel();
        wait_for_signal().await;
        std::process::exit(130);
    });
}

/// What a probe hands its reports: its start, identity and what it left behind.
struct ProbeRun<'a> {
    started: Instant,
    started_at: String,
    run_id: String,
    label: String,
    base_url: String,
    faults: &'a std::collections::BTreeSet<rpconform_refrp::Fault>,
}

/// The usual reports of the probe's one result, in `dir`.
fn write_reports(
    dir: &Path,
    a: &ProbeArgs,
    p: ProbeRun<'_>,
    ctx: &RunCtx,
    result: &ScenarioResult,
    left: &[String],
) -> Result<(), u8> {
    let info = RunInfo {
        rpconform_version: env!("CARGO_PKG_VERSION").into(),
        run_id: p.run_id,
        target: p.label,
        base_url: p.base_url,
        time_scale: a.time_scale,
        accelerated: a.time_scale != 1.0,
        strict: a.strict,
        filters: Vec::new(),
        skip: Vec::new(),
        partition: None,
        started_at: p.started_at,
        duration_ms: p.started.elapsed().as_millis() as u64,
        left_behind: left.to_vec(),
        faults: p.faults.iter().map(|f| f.name().to_string()).collect(),
        profiles: ctx
            .target
            .profiles
            .iter()
            .map(|p| p.name().to_string())
            .collect(),
        select: Vec::new(),
        transcripts: report::Transcripts::All.name().into(),
        interrupted: ctx.cancel.is_cancelled(),
        requests: result.exchanges.len() as u64,
        request_rate: 0.0,
        throttling: Default::default(),
        journal: None,
        suite_set: crate::suiteset::ID.to_string(),
        catalogue: crate::rules::catalogue_id(),
        ended_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ..Default::default()
    };
    let written = report::ResultsWriter::create(dir, report::Transcripts::All).and_then(|mut w| {
        w.push(result)?;
        w.finish()?;
        report::write_all(dir, &info)
    });
    if let Err(e) = written {
        eprintln!("error: cannot write reports to {}: {e}", dir.display());
        return Err(EXIT_FAILED);
    }
    outln!("reports in {}", dir.display());
    Ok(())
}

async fn run(
    a: &ProbeArgs,
    which: Which,
    method: String,
    headers: Vec<(String, String)>,
    body: Option<String>,
    faults: std::collections::BTreeSet<rpconform_refrp::Fault>,
) -> u8 {
    let started = Instant::now();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (mut target, declared, server) = match probe_target(a, &which, &faults).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    if let Err(code) = amend_target(a, &mut target, &headers) {
        return code;
    }
    let url = if a.url.contains("://") {
        a.url.clone()
    } else {
        format!("{}{}", target.base(), a.url)
    };
    crate::lro::set_base_path(target.base_path());
    let run_id = runner::ids::run_id();
    let opts = HttpOptions {
        request_timeout: Duration::from_secs(a.request_timeout.max(1)),
        body_cap: a.body_cap,
        insecure: a.insecure,
        follow_foreign: !a.no_foreign,
        ..Default::default()
    };
    let crate::target::Connection { http, redactor, .. } = match target.connect(opts) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let label = target.label.clone();
    let base_url = target.base();
    let mut ctx = RunCtx::new(target, http, a.time_scale, a.strict, run_id.clone());
    narrate(&mut ctx);
    let ctx = Arc::new(ctx);
    stop_on_signal(&ctx);
    if let Err(e) = runner::create_resource_group(&ctx).await {
        eprintln!("error: {}", redactor.text(&e));
        if let Some(s) = server {
            s.shutdown().await;
        }
        return EXIT_FAILED;
    }
    let infer_monitor = matches!(which, Which::Inferred)
        .then(|| inferred_monitor(&a.url, &method))
        .flatten();
    let req = ProbeRequest {
        method,
        url,
        headers: Vec::new(),
        body,
        add_api_version: declared,
        keep: a.keep,
        infer_monitor,
    };
    let result = runner::probe(&ctx, &req).await;
    let left = runner::final_cleanup(
        ctx.clone(),
        (ctx.target.deadline * 2).clamp(Duration::from_secs(10), Duration::from_secs(300)),
    )
    .await;
    if let Some(s) = server {
        s.shutdown().await;
    }
    print_result(&result, &redactor);
    for l in &left {
        outln!("warning: could not clean up: {}", redactor.text(l));
    }
    if let Some(dir) = &a.report_dir {
        let p = ProbeRun {
            started,
            started_at,
            run_id,
            label,
            base_url,
            faults: &faults,
        };
        if let Err(code) = write_reports(dir, a, p, &ctx, &result, &left) {
            return code;
        }
    }
    match result.status {
        Status::Failed | Status::Error(_) => EXIT_FAILED,
        _ if !left.is_empty() => EXIT_FAILED,
        _ => EXIT_OK,
    }
}

/// The verdicts, failures first: rule, level, counts, expected/seen, the exchange.
fn print_result(r: &ScenarioResult, redactor: &Redactor) {
    let first = r
        .exchanges
        .iter()
        .find(|x| x.role == crate::http::Role::Step);
    match first {
        Some(x) => {
            outln!("probe: {}", redactor.text(&cut(&x.summary(), 300)));
            // An answer that is not a success shows what the server said (its error body).
            if let Some(resp) = x.response.as_ref().filter(|r| r.status >= 300)
                && !resp.body.trim().is_empty()
            {
                outln!("  body: {}", redactor.text(&cut(resp.body.trim(), 600)));
            }
        }
        None => outln!("probe: {}", r.scenario),
    }
    for p in &r.polls {
        outln!(
            "followed via {}: {} ({} reads, {} ms)",
            p.via,
            p.outcome,
            p.attempts,
            p.elapsed_ms
        );
    }
    let mut verdicts: Vec<&crate::report::Verdict> = r.verdicts.iter().collect();
    verdicts.sort_by_key(|v| {
        (
            match v.outcome.as_str() {
                "failed" => 0,
                "not-judged" => 2,
                "exempt" => 3,
                _ => 1,
            },
            v.level != "MUST",
            v.rule.clone(),
        )
    });
    for v in verdicts {
        let tag = match v.outcome.as_str() {
            "failed" => "FAIL",
            "passed" => "pass",
            "not-judged" => "n/j ",
            _ => "exmp",
        };
        outln!(
            "  {tag}  {:<9} {:<6} {} passed, {} failed",
            v.rule,
            v.level,
            v.passed,
            v.failed
        );
        for f in &v.failures {
            let at = f
                .exchange
                .and_then(|s| r.exchanges.iter().find(|x| x.seq == s))
                .map(|x| cut(&x.summary(), 300))
                .unwrap_or_default();
            outln!(
                "        expected: {}\n        seen:     {}{}",
                redactor.text(&f.expected),
                redactor.text(&cut(&f.seen, 400)),
                if f.count > 1 {
                    format!(" (×{})", f.count)
                } else {
                    String::new()
                }
            );
            if !at.is_empty() {
                outln!("        exchange: {}", redactor.text(&at));
            }
        }
        if let Some(why) = &v.not_judged {
            outln!("        not judged: {why}");
        }
    }
    for n in &r.notes {
        outln!("note: {}", redactor.text(n));
    }
    let failed = |level: &str| {
        r.verdicts
            .iter()
            .filter(|v| v.failed_outcome() && v.level == level)
            .count()
    };
    let passed = r.verdicts.iter().filter(|v| v.outcome == "passed").count();
    let status = match &r.status {
        Status::Error(e) => format!("runner error: {}", redactor.text(e)),
        Status::Skipped(why) => why.clone(),
        s => format!("{s:?}").to_lowercase(),
    };
    outln!(
        "rpconform probe: {} MUST failed, {} SHOULD failed, {} rules passed ({status})",
        failed("MUST"),
        failed("SHOULD"),
        passed
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_inferred_targets() {
        assert_eq!(
            parse_headers(&["x-ms-client-request-id: abc".into()]).unwrap(),
            vec![("x-ms-client-request-id".into(), "abc".into())]
        );
        assert!(parse_headers(&["nocolon".into()]).is_err());
        assert!(parse_headers(&[": v".into()]).is_err());
        let t = inferred_target(
            "http://127.0.0.1:9/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/g1/providers/A.B/c/d?api-version=2024-01-01",
        )
        .unwrap();
        assert_eq!(t.base(), "http://127.0.0.1:9");
        assert_eq!(t.subscription, "00000000-0000-0000-0000-000000000001");
        assert_eq!(t.resource_group.name, "g1");
        assert!(!t.resource_group.create);
        assert_eq!(
            t.surface_of("http://127.0.0.1:9/lro/put/200"),
            crate::http::Surface::Arm
        );
        assert_eq!(
            t.surface_of("http://localhost/x"),
            crate::http::Surface::Other
        );
        assert!(inferred_target("http://u:p@h/x").is_err());
        assert!(inferred_target("ftp://h/x").is_err());
        // The URL's api-version is kept for the flow's later reads (the resource after a PUT).
        assert_eq!(t.api_version, "2024-01-01");
        assert_eq!(
            t.api_version_for(
                "http://127.0.0.1:9/subscriptions/s/resourceGroups/g1/providers/A.B/c/d"
            ),
            "2024-01-01"
        );
        // One that is not an ARM api-version is sent as given, and the target still forms.
        let t = inferred_target("http://127.0.0.1:9/orders/1?api-version=v1").unwrap();
        assert!(t.api_version.is_empty());
    }
}
