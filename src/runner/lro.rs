//! The long-running-operation poller (ARM pattern): follows Azure-AsyncOperation when the
//! response has it, else a 202's Location, else the resource's provisioningState; honours
//! Retry-After (integer seconds, 60 when absent) scaled by `--time-scale`; stops at the
//! deadline; and checks the rules that only a poll can see (OPRES-03, LOC-05/06/08, PUT-02/03,
//! PATCH-02, DEL-03, AAO-04, PSTATE-02, PUT-04). Attempts are history, never failures.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::exec::{Exec, canonical};
use crate::checks::ambient::is_terminal;
use crate::checks::arm_path::{PathKind, classify};
use crate::http::Role;
use crate::report::PollRecord;
use crate::scenario::ApiVersion;

pub(super) struct PollOut {
    pub outcome: String,
    pub final_exchange: Option<usize>,
}

#[derive(PartialEq)]
enum Via {
    Operation(String),
    Location(String),
    Resource(String),
}

/// Seconds from a Retry-After header, when it is the integer form.
fn retry_after(v: Option<&str>) -> Option<f64> {
    v.map(str::trim)
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<f64>().ok())
}

/// Characters of body text an earlier poll answer keeps once a later one has come.
const SHED_BODY_CHARS: usize = 4096;

fn resolve(base: &str, v: &str) -> String {
    url::Url::parse(base)
        .and_then(|b| b.join(v))
        .map(|u| u.to_string())
        .unwrap_or_else(|_| v.to_string())
}

impl Exec<'_> {
    /// Drop what an earlier poll answer is no longer needed for: its parsed JSON and most of
    /// its body text (attempts are history; the latest answer is kept whole). A target that
    /// answers "still running" with a large body hundreds of times would otherwise hold every
    /// one of those bodies, parsed, until the test ends.
    fn shed(&mut self, idx: usize) {
        if std::env::var_os("TMP_NO_SHED").is_some() {
            return;
        }
        if let Some(r) = self
            .exchanges
            .get_mut(idx)
            .and_then(|x| x.response.as_mut())
        {
            r.json = None;
            if r.body.len() > SHED_BODY_CHARS {
                r.body = crate::http::cut(&r.body, SHED_BODY_CHARS);
            }
        }
    }

    fn ps_of(&self, idx: usize) -> Option<String> {
        self.exchanges[idx]
            .response
            .as_ref()
            .and_then(|r| r.pointer("/properties/provisioningState"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    fn reports_state(&self, url: &str) -> bool {
        let path = url::Url::parse(url)
            .map(|u| u.path().to_string())
            .unwrap_or_default();
        match classify(&path, &self.ctx.target) {
            PathKind::Resource(t) => t.provisioning_state,
            _ => false,
        }
    }

    fn declared_async(&self, url: &str) -> bool {
        let path = url::Url::parse(url)
            .map(|u| u.path().to_string())
            .unwrap_or_default();
        matches!(classify(&path, &self.ctx.target), PathKind::Resource(t) if t.asynchronous)
    }

    /// A GET of the resource made while the operation was known to run, both before and after.
    fn judge_during(&mut self, idx: usize, method: &str) {
        let ex = &self.exchanges[idx];
        let seq = Some(ex.seq);
        let status = ex.status();
        let ps = self.ps_of(idx);
        let running = ps.as_deref().is_some_and(|s| !is_terminal(s));
        let seen = format!(
            "{} with provisioningState {:?}",
            status
                .map(|s| s.to_string())
                .unwrap_or("no response".into()),
            ps
        );
        match method {
            "PUT" => self
                .ledger
                .check("PUT-03", status == Some(200) && running, seq, || {
                    (
                        "200 with a non-terminal provisioningState while provisioning runs".into(),
                        seen,
                    )
                }),
            "PATCH" => self
                .ledger
                .check("PATCH-02", status == Some(200) && running, seq, || {
                    (
                        "200 with a non-terminal provisioningState while the update runs".into(),
                        seen,
                    )
                }),
            "DELETE" => self.ledger.check(
                "DEL-03",
                status == Some(404) || (status == Some(200) && running),
                seq,
                || {
                    (
                        "404, or 200 with a non-terminal provisioningState, while the delete runs"
                            .into(),
                        seen,
                    )
                },
            ),
            _ => {}
        }
    }

    /// LOC-06: a Location's final answer is what the request would have returned synchronously.
    fn judge_final_location(
        &mut self,
        i: usize,
        outcome: &str,
        method: &str,
        resource: Option<&str>,
    ) {
        let st = self.exchanges[i].status().unwrap_or(0);
        let iseq = Some(self.exchanges[i].seq);
        if outcome == "Succeeded" && matches!(method, "PUT" | "PATCH") {
            let body_id = self.exchanges[i]
                .response
                .as_ref()
                .and_then(|r| r.pointer("/id"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let want = resource
                .and_then(|r| url::Url::parse(r).ok())
                .map(|u| u.path().to_string())
                .unwrap_or_default();
            let ok = matches!(st, 200 | 201)
                && body_id
                    .as_deref()
                    .is_some_and(|b| b.eq_ignore_ascii_case(&want));
            self.ledger.check("LOC-06", ok, iseq, || {
                (
                    format!("200/201 with the resource (id {want})"),
                    format!("{st} with id {body_id:?}"),
                )
            });
        } else if outcome != "Succeeded" {
            self.ledger.check("LOC-06", st >= 400, iseq, || {
                (
                    "the failure's 4xx/5xx with the error envelope".into(),
                    format!("{st}"),
                )
            });
        }
    }

    /// Follow the operation started by exchange `init`.
    pub(super) async fn follow(
        &mut self,
        init: usize,
        resource: Option<String>,
        method: &str,
        deadline: Duration,
        watch: Vec<String>,
    ) -> PollOut {
        let start = Instant::now();
        let Some(resp) = self.exchanges[init].response.clone() else {
            return PollOut {
                outcome: "error: no response to follow".into(),
                final_exchange: Some(init),
            };
        };
        let req_url = self.exchanges[init].url.clone();
        let aao = resp
            .header("azure-asyncoperation")
            .map(|v| resolve(&req_url, v));
        let loc = if resp.status == 202 {
            resp.header("location").map(|v| resolve(&req_url, v))
        } else {
            None
        };
        let ps = self.ps_of(init);
        let seq = Some(self.exchanges[init].seq);
        if matches!(resp.status, 200 | 201) && matches!(method, "PUT" | "PATCH") {
            let unfinished = aao.is_some() || self.declared_async(&req_url);
            if unfinished {
                let ok = ps.as_deref().is_some_and(|s| !is_terminal(s));
                let rule = if method == "PUT" {
                    "PUT-02"
                } else {
                    "PATCH-02"
                };
                self.ledger.check(rule, ok, seq, || {
                    ("a non-terminal properties.provisioningState in the initial response of an asynchronous operation".into(), format!("provisioningState {ps:?}"))
                });
            }
        }
        let needs = resp.status == 202
            || aao.is_some()
            || (matches!(resp.status, 200 | 201) && ps.as_deref().is_some_and(|s| !is_terminal(s)));
        if !needs {
            let outcome = if (200..300).contains(&resp.status) {
                "Succeeded"
            } else {
                "Failed"
            };
            return PollOut {
                outcome: outcome.into(),
                final_exchange: Some(init),
            };
        }
        let via = match (&aao, &loc, &resource) {
            (Some(a), _, _) => Via::Operation(a.clone()),
            (None, Some(l), _) => Via::Location(l.clone()),
            (None, None, Some(r)) if resp.status != 202 => Via::Resource(r.clone()),
            _ => {
                return PollOut {
                    outcome: "error: a 202 with neither Location nor Azure-AsyncOperation: nothing to poll".into(),
                    final_exchange: Some(init),
                };
            }
        };
        let via_name = match &via {
            Via::Operation(_) => "azure-asyncoperation",
            Via::Location(_) => "location",
            Via::Resource(_) => "resource",
        };
        // A poll URL that will never be sent (another scheme, another origin under
        // --no-foreign, not a URL) is known now: say so at once instead of retrying it until
        // the deadline and blaming the deadline.
        let poll_url = match &via {
            Via::Operation(u) | Via::Location(u) | Via::Resource(u) => u.clone(),
        };
        if let Some(why) = self.ctx.http.refusal(&poll_url) {
            let outcome = format!("error: cannot poll {via_name} URL {poll_url}: {why}");
            self.notes
                .push(format!("step `{}`: {outcome}", self.step_label));
            self.polls.push(PollRecord {
                step: self.step_label.clone(),
                via: via_name.into(),
                attempts: 0,
                elapsed_ms: start.elapsed().as_millis() as u64,
                outcome: outcome.clone(),
            });
            return PollOut {
                outcome,
                final_exchange: Some(init),
            };
        }
        let mut retry = retry_after(resp.header("retry-after"));
        let mut attempts = 0u32;
        let mut pending: Vec<usize> = Vec::new();
        let mut last: Option<usize> = None;
        let mut outcome: Option<String> = None;
        let mut interrupted = false;
        loop {
            let remaining = deadline.saturating_sub(start.elapsed());
            if remaining.is_zero() {
                break;
            }
            // Retry-After of 0, negative or absurd still gets a sane floor; the deadline caps it.
            let wait = Duration::from_secs_f64(
                (retry.unwrap_or(60.0).max(1.0) * self.ctx.time_scale).min(86_400.0),
            );
            if !self.ctx.cancel.sleep(wait.min(remaining)).await {
                interrupted = true;
                break;
            }
            // One poll at the deadline itself: the loop's top gives up after it.
            attempts += 1;
            let (url, role) = match &via {
                Via::Operation(u) => (u.clone(), Role::OperationStatus),
                Via::Location(u) => (u.clone(), Role::LocationPoll),
                Via::Resource(u) => (u.clone(), Role::ResourcePoll),
            };
            let Ok(i) = self
                .send("GET", &url, Vec::new(), None, role, &ApiVersion::Default)
                .await
            else {
                outcome = Some("error: invalid poll URL".into());
                break;
            };
            if let Some(prev) = last.replace(i)
                && prev != init
            {
                self.shed(prev);
            }
            let r = self.exchanges[i].response.clone();
            if let Some(r) = &r
                && let Some(ra) = retry_after(r.header("retry-after"))
            {
                retry = Some(ra);
            }
            let running = match &via {
                Via::Operation(_) => {
                    let st = r
                        .as_ref()
                        .filter(|r| r.status == 200)
                        .and_then(|r| r.json.as_ref())
                        .and_then(|j| j.get("status"))
                        .and_then(Value::as_str);
                    match st {
                        Some(s) if is_terminal(s) => {
                            outcome = Some(canonical(s));
                            false
                        }
                        // An unreadable status is not progress: keep polling to the deadline.
                        _ => true,
                    }
                }
                Via::Location(_) => match r.as_ref().map(|r| r.status) {
                    Some(202) => true,
                    Some(s) if (200..300).contains(&s) => {
                        outcome = Some("Succeeded".into());
                        false
                    }
                    Some(_) => {
                        outcome = Some("Failed".into());
                        false
                    }
                    None => true,
                },
                Via::Resource(_) => match r.as_ref().map(|r| r.status) {
                    Some(404) if method == "DELETE" => {
                        outcome = Some("Succeeded".into());
                        false
                    }
                    Some(200) => match self.ps_of(i) {
                        Some(s) if !is_terminal(&s) => true,
                        Some(s) => {
                            outcome = Some(canonical(&s));
                            false
                        }
                        None => {
                            outcome = Some("Succeeded".into());
                            false
                        }
                    },
                    _ => true,
                },
            };
            if !running {
                break;
            }
            // GETs made between two "running" reads were made during the operation.
            for p in std::mem::take(&mut pending) {
                self.judge_during(p, method);
                self.shed(p);
            }
            // LOC-05: a Location that stops answering 202 while the operation still runs.
            if let (Via::Operation(op), Some(l)) = (&via, &loc)
                && self.ctx.http.refusal(l).is_none()
                && let Ok(li) = self.get(l, Role::LocationPoll, &ApiVersion::Default).await
            {
                let ls = self.exchanges[li].status();
                if ls != Some(202) {
                    // Confirm the operation still runs before blaming Location.
                    if let Ok(again) = self
                        .get(op, Role::OperationStatus, &ApiVersion::Default)
                        .await
                    {
                        let st = self.exchanges[again]
                            .response
                            .as_ref()
                            .and_then(|r| r.pointer("/status"))
                            .and_then(Value::as_str)
                            .map(str::to_string);
                        self.shed(again);
                        if st.as_deref().is_some_and(|s| !is_terminal(s)) {
                            let lseq = Some(self.exchanges[li].seq);
                            self.ledger.fail(
                                "LOC-05",
                                "202 from Location while the operation runs",
                                format!(
                                    "{} while the operation status is {}",
                                    ls.map(|s| s.to_string()).unwrap_or("no response".into()),
                                    st.unwrap_or_default()
                                ),
                                lseq,
                                None,
                            );
                        }
                    }
                } else {
                    self.ledger.pass("LOC-05");
                }
                self.shed(li);
            }
            if matches!(via, Via::Location(_)) {
                self.ledger.pass("LOC-05");
            }
            for w in &watch {
                if self.reports_state(w)
                    && let Ok(wi) = self.get(w, Role::ResourcePoll, &ApiVersion::Default).await
                {
                    pending.push(wi);
                }
            }
            // Close the sandwich at once: if the operation still runs, those GETs were made
            // during it. (Otherwise they are judged, or dropped, at the next read.)
            if !pending.is_empty() && !matches!(via, Via::Resource(_)) {
                let (u, role) = match &via {
                    Via::Operation(u) => (u.clone(), Role::OperationStatus),
                    Via::Location(u) => (u.clone(), Role::LocationPoll),
                    Via::Resource(u) => (u.clone(), Role::ResourcePoll),
                };
                if let Ok(again) = self
                    .send("GET", &u, Vec::new(), None, role, &ApiVersion::Default)
                    .await
                {
                    let r = self.exchanges[again].response.as_ref();
                    let still = match &via {
                        Via::Operation(_) => r
                            .filter(|r| r.status == 200)
                            .and_then(|r| r.pointer("/status"))
                            .and_then(Value::as_str)
                            .is_some_and(|s| !is_terminal(s)),
                        _ => r.is_some_and(|r| r.status == 202),
                    };
                    if still {
                        for p in std::mem::take(&mut pending) {
                            self.judge_during(p, method);
                            self.shed(p);
                        }
                    }
                    self.shed(again);
                }
            }
        }
        let mut final_exchange = last.or(Some(init));
        let outcome = match outcome {
            Some(o) => o,
            None if interrupted => "interrupted".to_string(),
            None => {
                let (rule, what) = match (&via, method) {
                    (Via::Operation(_), _) => (
                        "OPRES-03",
                        "the operation status to become Succeeded, Failed or Canceled",
                    ),
                    (Via::Location(_), _) => ("LOC-08", "Location to stop answering 202"),
                    (Via::Resource(_), "PATCH") => {
                        ("PATCH-02", "provisioningState to become terminal")
                    }
                    (Via::Resource(_), _) => ("PUT-04", "provisioningState to become terminal"),
                };
                let seen = last
                    .map(|i| {
                        let r = self.exchanges[i].response.as_ref();
                        let st = r
                            .and_then(|r| {
                                r.pointer("/status")
                                    .or_else(|| r.pointer("/properties/provisioningState"))
                            })
                            .map(|v| v.to_string());
                        // No answer: say why (timed out, refused, reset...), not just "none".
                        let why = match (r, &self.exchanges[i].error) {
                            (None, Some(e)) => format!(" ({e})"),
                            _ => String::new(),
                        };
                        format!(
                            "after {attempts} polls over {} s the last answer was {} {}{why}",
                            deadline.as_secs(),
                            r.map(|r| r.status.to_string()).unwrap_or("none".into()),
                            st.unwrap_or_default()
                        )
                    })
                    .unwrap_or_else(|| "no poll was answered".into());
                let lseq = last.map(|i| self.exchanges[i].seq);
                self.ledger.fail(
                    rule,
                    format!("{what} within the deadline ({} s)", deadline.as_secs()),
                    seen,
                    lseq,
                    None,
                );
                format!("timed out after {} s", deadline.as_secs())
            }
        };
        let terminal = ["Succeeded", "Failed", "Canceled"].contains(&outcome.as_str());
        if terminal && let Via::Operation(op) = &via {
            match outcome.as_str() {
                "Succeeded" | "Failed" | "Canceled" => self.ledger.pass("OPRES-03"),
                _ => {}
            }
            // OPS-07: one more read after the end must show the same terminal status.
            let _ = self
                .get(op, Role::OperationStatus, &ApiVersion::Default)
                .await;
            if let Some(l) = loc.clone().filter(|l| self.ctx.http.refusal(l).is_none()) {
                let mut li = None;
                for _ in 0..5 {
                    let Ok(i) = self.get(&l, Role::LocationPoll, &ApiVersion::Default).await else {
                        break;
                    };
                    li = Some(i);
                    if self.exchanges[i].status() != Some(202) {
                        break;
                    }
                    if start.elapsed() >= deadline
                        || !self.ctx.sleep(retry.unwrap_or(10.0).max(1.0)).await
                    {
                        break;
                    }
                }
                if let Some(i) = li {
                    let st = self.exchanges[i].status().unwrap_or(0);
                    let iseq = Some(self.exchanges[i].seq);
                    if st == 202 {
                        self.ledger.fail(
                            "LOC-08",
                            "Location to stop answering 202 once the operation is terminal",
                            format!("still 202 after the operation ended {outcome}"),
                            iseq,
                            None,
                        );
                    } else {
                        let agree = if outcome == "Succeeded" {
                            (200..300).contains(&st)
                        } else {
                            st >= 400
                        };
                        self.ledger.check("AAO-04", agree, iseq, || {
                            (format!("Location's final answer to agree with the operation status {outcome}"), format!("Location answered {st}"))
                        });
                        self.judge_final_location(i, &outcome, method, resource.as_deref());
                        if method != "PUT" && method != "PATCH" {
                            final_exchange = Some(i);
                        }
                    }
                }
            }
        }
        if terminal
            && matches!(via, Via::Location(_))
            && let Some(i) = last
        {
            // The final non-202 Location answer is what the request would have returned.
            self.judge_final_location(i, &outcome, method, resource.as_deref());
        }
        // Settled state of the resource for PUT/PATCH.
        if terminal
            && matches!(method, "PUT" | "PATCH")
            && outcome != "Canceled"
            && let Some(r) = &resource
            && let Ok(gi) = self.get(r, Role::ResourcePoll, &ApiVersion::Default).await
        {
            let gseq = Some(self.exchanges[gi].seq);
            if self.exchanges[gi].status() == Some(200) {
                let ps = self.ps_of(gi);
                let shown = ps.clone().unwrap_or_else(|| "Succeeded".into());
                self.ledger
                    .check("PSTATE-02", is_terminal(&shown), gseq, || {
                        (
                            "a terminal (or absent) provisioningState once the operation ended"
                                .into(),
                            format!("provisioningState {shown}"),
                        )
                    });
                if matches!(via, Via::Operation(_)) {
                    self.ledger
                        .check("AAO-04", shown.eq_ignore_ascii_case(&outcome), gseq, || {
                            (
                                format!(
                                    "provisioningState {outcome}, as the operation status says"
                                ),
                                format!("provisioningState {shown}"),
                            )
                        });
                }
                if matches!(via, Via::Resource(_)) {
                    self.ledger.pass(if method == "PATCH" {
                        "PATCH-02"
                    } else {
                        "PUT-04"
                    });
                }
            }
            final_exchange = Some(gi);
        }
        if outcome == "Succeeded"
            && method == "DELETE"
            && let Some(r) = &resource
        {
            self.ctx.cleanup.forget(r);
        }
        self.polls.push(PollRecord {
            step: self.step_label.clone(),
            via: via_name.into(),
            attempts,
            elapsed_ms: start.elapsed().as_millis() as u64,
            outcome: outcome.clone(),
        });
        PollOut {
            outcome,
            final_exchange,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use crate::http::{Http, HttpOptions, Redactor, TokenSource};
    use crate::report::ScenarioResult;
    use crate::runner::RunCtx;
    use crate::scenario::{LoadOptions, expand, parse_suite};
    use crate::target::parse_target;

    const SUITE: &str = r#"suite: t
scenarios:
  - name: put-and-poll
    for_each_type: [any]
    steps:
      - fresh: {as: r}
      - name: put
        request: {method: PUT, url: "${r.url}", body: "${type.create_body}"}
      - name: wait
        poll: put
"#;

    /// A target whose PUT answers 202 with `location` (`{base}` is replaced by the server's
    /// address) and whose Location answers 202 forever with a body of `pad` bytes.
    async fn server(location: &'static str, pad: usize) -> String {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let b = base.clone();
        tokio::spawn(async move {
            let mut n = 0u64;
            while let Ok((mut s, _)) = l.accept().await {
                n += 1;
                let base = b.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16384];
                    let got = s.read(&mut buf).await.unwrap_or(0);
                    let put = buf[..got].starts_with(b"PUT");
                    let body = if put {
                        String::new()
                    } else {
                        format!("{{\"pad\":\"{}\"}}", "x".repeat(pad))
                    };
                    let raw = format!(
                        "HTTP/1.1 202 Accepted\r\nx-ms-request-id: r{n}\r\nLocation: {}\r\nRetry-After: 10\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        location.replace("{base}", &base),
                        body.len()
                    );
                    let _ = s.write_all(raw.as_bytes()).await;
                    let _ = s.shutdown().await;
                });
            }
        });
        base
    }

    fn run(
        rt: &tokio::runtime::Runtime,
        base: &str,
        no_foreign: bool,
        deadline: u64,
    ) -> ScenarioResult {
        let yaml = format!(
            "base_url: {base}\nsubscription: s\nresource_group: {{name: rg, disposable: true}}\n\
             namespace: Microsoft.T\napi_version: \"1\"\ndeadline: {deadline}\n\
             types:\n  things: {{kind: tracked, async: true, create_body: {{location: eastus}}}}\n"
        );
        let target = parse_target(Path::new("t.yaml"), &yaml, "t").unwrap();
        let redactor = Arc::new(Redactor::new(&[]));
        let http = Http::new(
            target.base_url.clone(),
            TokenSource::new(target.auth.clone(), redactor.clone()),
            redactor,
            HttpOptions {
                request_timeout: Duration::from_secs(3),
                follow_foreign: !no_foreign,
                ..Default::default()
            },
            Vec::new(),
        )
        .unwrap();
        let opts = LoadOptions {
            schema_dir: "schemas".into(),
        };
        let suite = Arc::new(parse_suite(Path::new("t.yaml"), SUITE, &opts).unwrap());
        let inst = expand(&[suite], &target).remove(0);
        let ctx = RunCtx::new(target, http, 0.01, false, "u".into());
        rt.block_on(super::super::exec::run_instance(&ctx, &inst))
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn an_unsendable_poll_url_ends_the_poll_at_once_with_the_reason() {
        let rt = rt();
        for (location, no_foreign, why) in [
            ("ftp://127.0.0.1:1/op", false, "`ftp:`"),
            ("http://127.0.0.2:1/op", true, "another origin"),
        ] {
            let base = rt.block_on(server(location, 0));
            let started = Instant::now();
            let res = run(&rt, &base, no_foreign, 60);
            assert!(started.elapsed() < Duration::from_secs(10));
            let poll = &res.polls[0];
            assert!(poll.outcome.starts_with("error: cannot poll"), "{poll:?}");
            assert!(poll.outcome.contains(why), "{poll:?}");
            assert_eq!(poll.attempts, 0);
            assert!(res.notes.iter().any(|n| n.contains(why)), "{:?}", res.notes);
            // Nothing was sent to the URL: the only exchange is the PUT.
            assert_eq!(res.exchanges.len(), 1, "{:?}", res.exchanges);
        }
    }

    #[test]
    fn earlier_poll_answers_are_shed_and_the_deadline_verdict_says_why() {
        let rt = rt();
        let base = rt.block_on(server("{base}/op", 100_000));
        let res = run(&rt, &base, false, 2);
        let polls: Vec<_> = res
            .exchanges
            .iter()
            .filter(|x| x.role == crate::http::Role::LocationPoll)
            .collect();
        assert!(polls.len() >= 3, "{}", polls.len());
        let (last, earlier) = polls.split_last().unwrap();
        for x in earlier {
            let r = x.response.as_ref().unwrap();
            assert!(
                r.json.is_none() && r.body.chars().count() < 5000,
                "not shed"
            );
        }
        let r = last.response.as_ref().unwrap();
        assert!(
            r.json.is_some() && r.body.chars().count() > 60_000,
            "the last answer is kept"
        );
        let loc08 = res.verdicts.iter().find(|v| v.rule == "LOC-08").unwrap();
        assert!(loc08.failures[0].seen.contains("last answer was 202"));

        // No answer at all: the verdict names the transport error, not just "none".
        let base = rt.block_on(server("http://127.0.0.1:1/op", 0));
        let res = run(&rt, &base, false, 1);
        let loc08 = res.verdicts.iter().find(|v| v.rule == "LOC-08").unwrap();
        let seen = &loc08.failures[0].seen;
        assert!(
            seen.contains("last answer was none") && seen.contains("connection"),
            "{seen}"
        );
    }
}
