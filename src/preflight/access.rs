//! The checks of the caller and the endpoint: the token, the endpoint answering HTTP, the
//! clock.

use super::*;

impl Ctx<'_> {
    pub(super) fn token_check(
        &self,
        result: &TokenResult,
        took: Duration,
        claims: Option<&arm::Claims>,
        limit: Duration,
    ) -> Check {
        const NAME: &str = "token";
        let source = match &self.target.auth {
            Auth::None => {
                return if self.arm {
                    Check::new(NAME, Level::Blocker, "`auth: none`, but ARM needs a bearer token")
                        .hint("auth: {command: \"az account get-access-token --query accessToken -o tsv\"}")
                } else {
                    Check::new(
                        NAME,
                        Level::Ok,
                        "`auth: none`: requests carry no Authorization header",
                    )
                };
            }
            Auth::BearerEnv(v) => format!("environment variable {v}"),
            Auth::Command { .. } => "the token command".to_string(),
            Auth::TokenFile { path, .. } => format!("token file {}", path.display()),
        };
        let token = match result {
            Err(_) => {
                return Check::new(
                    NAME,
                    Level::Blocker,
                    format!("no token from {source} within {} s", limit.as_secs()),
                );
            }
            Ok(Err(e)) => {
                let hint = match &self.target.auth {
                    Auth::Command { .. } => {
                        "run the command yourself; for az: `az login` (or azure/login in CI), then `az account get-access-token --query accessToken -o tsv`"
                    }
                    Auth::BearerEnv(_) => "export the variable before the run",
                    _ => "check that the CI step writing the file ran",
                };
                return Check::new(NAME, Level::Blocker, e.clone()).hint(hint);
            }
            Ok(Ok(None)) => {
                return Check::new(NAME, Level::Ok, "no token is needed");
            }
            Ok(Ok(Some(t))) => t,
        };
        // Refused by the endpoint?
        if let Some(ex) = self
            .exchanges()
            .into_iter()
            .find(|e| e.status() == Some(401))
        {
            let why = ex
                .response
                .as_ref()
                .and_then(|r| arm::error_text(r.json.as_ref()))
                .unwrap_or_else(|| "401 Unauthorized".into());
            let mut c = Check::new(
                NAME,
                Level::Blocker,
                format!("the endpoint refused the token from {source}: {why}"),
            );
            if self.arm {
                c = c.hint("a token for ARM: `az account get-access-token --resource https://management.azure.com/ --query accessToken -o tsv`, in the subscription's tenant");
            }
            return c;
        }
        let mut detail = format!("from {source} in {:.1} s", took.as_secs_f64());
        let mut level = Level::Ok;
        let mut hint = None;
        match claims {
            None => detail.push_str(&format!(" ({} characters, not a JWT)", token.len())),
            Some(c) => {
                if !c.audience.is_empty() {
                    detail.push_str(&format!(": a JWT for {}", c.audience.join(", ")));
                }
                if let Some(exp) = c.expires {
                    let left = exp - chrono::Utc::now().timestamp();
                    if left <= 0 {
                        return Check::new(
                            NAME,
                            Level::Blocker,
                            format!("{detail}, expired {} ago", minutes(-left)),
                        )
                        .hint("get a fresh token (a `command` or `token_file` auth renews it)");
                    }
                    detail.push_str(&format!(", expires in {}", minutes(left)));
                    if matches!(self.target.auth, Auth::BearerEnv(_))
                        && (left as u64) < TOKEN_LIFE_WARN.as_secs()
                    {
                        level = Level::Warning;
                        hint = Some("nothing renews a token from a variable: use `auth: {command: ...}` or `{token_file: ...}` for long runs".to_string());
                    }
                }
                if self.arm
                    && !c.audience.is_empty()
                    && !c.audience.iter().any(|a| arm::arm_audience(a))
                {
                    level = Level::Warning;
                    hint = Some("ARM takes tokens for https://management.azure.com/ (`--resource https://management.azure.com/`)".into());
                }
            }
        }
        let mut check = Check::new(NAME, level, detail);
        check.hint = hint;
        check
    }

    pub(super) fn endpoint_check(&self, e: &probe::Endpoint) -> Check {
        const NAME: &str = "endpoint";
        match (&e.http, &e.tcp) {
            (Ok(a), _) if self.token_ok && self.client_failure().is_some() => {
                let why = self.client_failure().unwrap_or_default();
                Check::new(
                    NAME,
                    Level::Blocker,
                    format!(
                        "{} answers a plain request (HTTP {}), but the run's own client fails: {why}",
                        e.authority, a.status
                    ),
                )
                .hint("a certificate this machine does not trust? `--insecure` skips the check (for test endpoints only)")
            }
            (Ok(a), tcp) => {
                let via = if tcp.is_err() {
                    " (through a proxy: no direct TCP connection)"
                } else {
                    ""
                };
                Check::new(
                    NAME,
                    Level::Ok,
                    format!(
                        "{} answers HTTP {} in {} ms{via}",
                        e.authority,
                        a.status,
                        a.elapsed.as_millis()
                    ),
                )
            }
            (Err(_), Err(t)) => Check::new(NAME, Level::Blocker, format!("{}: {t}", e.authority))
                .hint(format!(
                    "check base_url ({}) and that the RP is up",
                    self.target.base()
                )),
            (Err(h), Ok(addr)) => Check::new(
                NAME,
                Level::Blocker,
                format!(
                    "{} accepts TCP connections ({addr}) but gives no HTTP answer: {h}",
                    e.authority
                ),
            )
            .hint("is it the right port and scheme (http / https)?"),
        }
    }

    pub(super) fn clock_check(&self, e: &probe::Endpoint) -> Check {
        const NAME: &str = "clock";
        // The plain probe's Date, else any of ARM's answers.
        let from_probe = e.http.as_ref().ok().and_then(probe::skew);
        let from_reads = || {
            self.exchanges().into_iter().find_map(|ex| {
                let r = ex.response.as_ref()?;
                let date = r.header("date")?.to_string();
                let sent = chrono::DateTime::parse_from_rfc3339(&ex.started_at).ok()?;
                let sent = std::time::SystemTime::UNIX_EPOCH
                    + Duration::from_millis(sent.timestamp_millis().max(0) as u64);
                probe::skew(&probe::Answer {
                    status: r.status,
                    date: Some(date),
                    sent,
                    elapsed: Duration::from_millis(ex.elapsed_ms),
                })
            })
        };
        let Some((skew, tolerance)) = from_probe.or_else(from_reads) else {
            return Check::new(
                NAME,
                Level::Skipped,
                if self.endpoint_ok {
                    "not checked: the server sends no Date header"
                } else {
                    "not checked: no answer to read a Date from"
                },
            );
        };
        let off = (skew.abs() - tolerance).max(0.0);
        if off < SKEW_WARN.as_secs_f64() {
            return Check::new(
                NAME,
                Level::Ok,
                format!(
                    "within {:.0} s of the server's Date",
                    skew.abs().max(tolerance).ceil()
                ),
            );
        }
        let side = if skew > 0.0 { "behind" } else { "ahead of" };
        Check::new(
            NAME,
            Level::Warning,
            format!("this machine's clock is {:.0} s {side} the server's", skew.abs()),
        )
        .hint("sync it (NTP): tokens made here (az, federated credentials) can be refused or expire early, and report times are off")
    }
}
