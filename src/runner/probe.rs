//! `rpconform probe`: one request, sent with the run's standard headers and safety (credentials
//! only to the target's origin, redaction, deadline), followed to its end by whatever its answer
//! shows, every exchange judged by the ambient rules of its surface and the flow by the flow
//! rules. The result is one [`ScenarioResult`], as a test of a run would give.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::context::RunCtx;
use super::exec::{Exec, StepOut};
use super::follow::{FollowSpec, Followed, Jar};
use crate::diag::Pos;
use crate::http::{Role, Surface};
use crate::lro::resource_of;
use crate::report::{PollRecord, ScenarioResult};
use crate::scenario::{ApiVersion, Instance, Scenario, Suite};
use crate::target::Addressed;

/// The one request a probe sends.
#[derive(Debug, Clone)]
pub struct ProbeRequest {
    pub method: String,
    /// Absolute, or a path on the target.
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
    /// Add the target's api-version when the URL has none (a declared target), or send the
    /// URL exactly as given.
    pub add_api_version: bool,
    /// Leave what the request creates (else it is deleted at cleanup, like a run's resources).
    pub keep: bool,
    /// A target inferred from the URL alone does not know the route's surface: when the
    /// write's answer hands out an `Operation-Location` and no `Azure-AsyncOperation` (a
    /// data-plane long-running operation, as the Azure SDK reads it), the probe judges it as
    /// one and follows this status monitor.
    pub infer_monitor: Option<crate::target::Monitor>,
}

/// Does this answer start a data-plane operation (a status monitor at `Operation-Location`)?
fn data_plane_answer(resp: Option<&crate::http::Response>) -> bool {
    resp.is_some_and(|r| {
        r.header("operation-location").is_some() && r.header("azure-asyncoperation").is_none()
    })
}

/// The test a probe stands for in reports: `probe::METHOD path`.
fn instance(req: &ProbeRequest) -> Instance {
    let file: Arc<Path> = Arc::from(Path::new("probe"));
    let label = format!("{} {}", req.method, path_only(&req.url));
    let scenario = Scenario {
        name: label.clone(),
        pos: Pos::new(&file, 1, 1),
        description: Some(format!("rpconform probe {label}")),
        for_each_type: None,
        for_each_monitor: None,
        needs_tasks: false,
        requires: Vec::new(),
        ignore: None,
        table: Vec::new(),
        vars: Vec::new(),
        setup: Vec::new(),
        steps: Vec::new(),
        teardown: Vec::new(),
    };
    Instance {
        name: format!("probe::{label}"),
        suite: Arc::new(Suite {
            name: "probe".into(),
            path: PathBuf::from("probe"),
            description: None,
            scenarios: vec![scenario],
        }),
        scenario: 0,
        type_name: None,
        monitor: None,
        row: None,
        not_applicable: None,
    }
}

fn path_only(url: &str) -> String {
    crate::http::parse_url(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.split('?').next().unwrap_or(url).to_string())
}

/// Send the probe's request, follow what it starts, judge everything; never panics on what
/// the target answers.
pub async fn probe(ctx: &RunCtx, req: &ProbeRequest) -> ScenarioResult {
    let start = Instant::now();
    let inst = instance(req);
    let mut ex = Exec::new(ctx, &inst);
    ex.step_label = "probe".into();
    ex.judge.ledger.step = Some("probe".into());
    let error = ex.probe(req).await.err();
    let judged_any = ex.judge.ledger.judged_any();
    let mut r = ex.result(error.clone(), start);
    // A probe states every rule it judged: it passes or fails on all of them.
    r.stated = r.verdicts.iter().map(|v| v.rule.clone()).collect();
    if !matches!(r.status, crate::report::Status::Interrupted(_)) {
        r.status = crate::report::test_status(error, &r.verdicts, ctx.strict, judged_any);
    }
    r
}

impl Exec<'_> {
    async fn probe(&mut self, req: &ProbeRequest) -> Result<(), String> {
        let method = req.method.to_ascii_uppercase();
        let url = self.absolute(&req.url);
        let surface = self.probe_surface(&url);
        // What existed before is never deleted: only a resource the probe's PUT created is.
        let declared = matches!(self.ctx.target.address(&url), Addressed::Resource(_));
        let api = if req.add_api_version {
            ApiVersion::Default
        } else {
            ApiVersion::AsGiven
        };
        let existed = if method == "PUT" && declared {
            Some(self.existed(&url, &api, surface).await?)
        } else {
            None
        };
        let (idx, data_plane) = self.send_retried(req, &method, &url, &api, surface).await?;
        let bare = url.split('?').next().unwrap_or(&url).to_string();
        if existed == Some(true) || req.keep {
            self.ctx.cleanup.forget(&bare);
        }
        if self.exchanges[idx].response.is_none() {
            let e = self.exchanges[idx].error.clone().unwrap_or_default();
            return Err(format!(
                "no response from {method} {}: {e}",
                self.exchanges[idx].url
            ));
        }
        if data_plane {
            self.notes.push(
                "the answer handed out an Operation-Location and no Azure-AsyncOperation: judged and followed as a data-plane operation (a status monitor), as the Azure SDK reads it".into(),
            );
        }
        // What ARM says of a write's answer; a data-plane operation is judged by its monitor's
        // rules instead.
        let implied = if data_plane {
            Vec::new()
        } else {
            crate::rules::implied::implied_expectations(&method, declared, existed)
        };
        let out = StepOut {
            exchange: Some(idx),
            url: url.clone(),
            method: method.clone(),
            ..Default::default()
        };
        self.evaluate_all(&implied, &out)?;
        if !matches!(method.as_str(), "PUT" | "PATCH" | "DELETE" | "POST") {
            return Ok(());
        }
        let followed = self
            .follow_probe(req, idx, &method, &url, surface, data_plane)
            .await;
        if (existed == Some(true) || req.keep) && method == "PUT" {
            self.ctx.cleanup.forget(&bare);
        }
        followed.or_unread()?;
        if self.polls.is_empty() {
            self.polls.push(PollRecord {
                step: "probe".into(),
                via: "none".into(),
                attempts: 0,
                elapsed_ms: 0,
                outcome: followed.outcome,
            });
        }
        Ok(())
    }

    /// The declared surface of the URL; a URL the target does not declare, on its origin, is
    /// probed as an ARM route (what the command is for).
    fn probe_surface(&self, url: &str) -> Surface {
        let own = crate::http::parse_url(url).is_ok_and(|u| self.ctx.target.same_origin(&u));
        match self.ctx.target.surface_of(url) {
            Surface::Other if own => Surface::Arm,
            s => s,
        }
    }

    /// Did the resource a PUT names exist before it (a read that did not answer 404)?
    async fn existed(
        &mut self,
        url: &str,
        api: &ApiVersion,
        surface: Surface,
    ) -> Result<bool, String> {
        let i = self
            .send(
                "GET",
                url,
                Vec::new(),
                None,
                Role::Setup,
                api,
                Some(surface),
            )
            .await?;
        Ok(self.exchanges[i].status() != Some(404))
    }

    /// Send the probe's request. An answer ARM clients retry (408, 429, 500, 502, 503, 504)
    /// is judged, then retried as they do (three times at most, after Retry-After or
    /// 0 / 1.6 / 3.2 s). The last attempt's exchange, and whether its answer started a
    /// data-plane operation (when the target was inferred from the URL).
    async fn send_retried(
        &mut self,
        req: &ProbeRequest,
        method: &str,
        url: &str,
        api: &ApiVersion,
        surface: Surface,
    ) -> Result<(usize, bool), String> {
        let mut attempt = 0;
        // Cookies a refused attempt set go with the retry (a server may tie them together).
        let mut jar = Jar::default();
        let infer =
            req.infer_monitor.is_some() && matches!(method, "PUT" | "PATCH" | "DELETE" | "POST");
        let mut data_plane = false;
        loop {
            let mut headers = req.headers.clone();
            headers.extend(jar.headers());
            self.judge_later = infer;
            let sent = self
                .send(
                    method,
                    url,
                    headers,
                    req.body.clone(),
                    Role::Step,
                    api,
                    Some(surface),
                )
                .await;
            self.judge_later = false;
            let i = sent?;
            if infer {
                if data_plane_answer(self.exchanges[i].response.as_ref()) {
                    data_plane = true;
                    self.exchanges[i].surface = Surface::DataPlane;
                }
                let ex = self.exchanges[i].clone();
                self.judge.exchange(&ex);
            }
            let retried = matches!(
                self.exchanges[i].status(),
                Some(408 | 429 | 500 | 502 | 503 | 504)
            );
            if !retried || attempt == 3 {
                return Ok((i, data_plane));
            }
            jar.take(self.exchanges[i].response.as_ref());
            let wait = retry_wait(self.exchanges[i].response.as_ref(), attempt);
            self.notes.push(format!(
                "the answer {} was retried, as ARM clients do",
                self.exchanges[i].summary()
            ));
            attempt += 1;
            if !self.ctx.sleep(wait).await {
                return Err("interrupted".into());
            }
        }
    }

    /// Follow what the write started: a status monitor for a data-plane operation, else the
    /// ARM pattern its answer shows.
    async fn follow_probe(
        &mut self,
        req: &ProbeRequest,
        idx: usize,
        method: &str,
        url: &str,
        surface: Surface,
        data_plane: bool,
    ) -> Followed {
        let deadline = self.ctx.target.deadline;
        let inferred = req.infer_monitor.as_ref().filter(|_| data_plane);
        match inferred.or(self.ctx.target.monitor_for(method, url)) {
            Some(mon) if data_plane || surface == Surface::DataPlane => {
                self.follow_monitor(idx, mon, deadline).await
            }
            _ => {
                let spec = FollowSpec::of(
                    method,
                    resource_of(method, url),
                    self.declared_op(method, url),
                    deadline,
                );
                self.follow(idx, spec).await
            }
        }
    }
}

/// Seconds before retrying: the answer's Retry-After, else 0, 1.6, 3.2 s.
fn retry_wait(resp: Option<&crate::http::Response>, attempt: u32) -> f64 {
    resp.and_then(crate::lro::retry_after)
        .map(|d| d.as_secs_f64())
        .unwrap_or(if attempt == 0 {
            0.0
        } else {
            0.8 * f64::from(1 << attempt)
        })
}
