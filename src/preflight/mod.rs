//! Preflight: is a target ready for a run? In a few seconds, before a run that may take half
//! an hour, check what would otherwise fail every test one by one:
//!
//! | check | how | blocker when |
//! |---|---|---|
//! | token | the target's `auth`, through the run's own [`TokenSource`] (one fetch for the check and the run); a JWT's audience and expiry are read | the command fails (its stderr is shown), prints JSON or several lines, the variable is unset, the token has expired, or the endpoint answers 401 |
//! | endpoint | a TCP connection and one credential-free `GET` of the base URL ([`probe`]) | nothing answers HTTP |
//! | clock | the `Date` of that answer against this machine's clock | never (a warning past [`SKEW_WARN`]) |
//! | provider | ARM's provider read per namespace (`GET /subscriptions/{s}/providers/{ns}?api-version=2021-04-01`): `registrationState`, and the declared types, api-versions and location in its manifest | not registered, or unknown to ARM |
//! | resource group | its name against ARM's rules; `create: true`: the caller's permissions at the subscription (`GET .../providers/Microsoft.Authorization/permissions`) must allow creating and deleting groups and the declared types; otherwise a `GET` of the group, and the permissions there | an invalid name, a missing group, missing permissions |
//! | rate limits | `x-ms-ratelimit-remaining-*` on ARM's answers | never (a warning when few requests are left) |
//!
//! Nothing is written: whether the identity may create a resource group is read from its
//! effective permissions (every role it holds at the scope, `actions` minus `notActions`) —
//! creating a throwaway group would need a cleanup that can itself fail, and would leave
//! an entry in the subscription's activity log for a check. Deny assignments and Azure
//! Policy are not in that list; the run meets them at its first write.
//!
//! The provider and permission reads are ARM's; for the embedded reference RP or an RP's own
//! endpoint they are skipped, and the checklist says so.

pub mod arm;
pub mod probe;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::http::{Exchange, Http, OutRequest, Role, Surface, TokenSource};
use crate::target::{Auth, Scope, Target};

/// A clock this far from the server's gets a warning.
pub const SKEW_WARN: Duration = Duration::from_secs(60);
/// Fewer remaining requests than this in an `x-ms-ratelimit-remaining-*` header get a warning.
pub const RATE_LIMIT_WARN: u64 = 100;
/// A bearer token from a variable that expires sooner than this gets a warning: nothing
/// renews it during the run.
pub const TOKEN_LIFE_WARN: Duration = Duration::from_secs(20 * 60);

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Ok,
    /// Does not apply to this target (the reason is in the detail).
    Skipped,
    Warning,
    /// The run would fail for this reason alone.
    Blocker,
}

impl Level {
    fn tag(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Skipped => "skip",
            Level::Warning => "warn",
            Level::Blocker => "BLOCKER",
        }
    }
}

/// One line of the checklist.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: &'static str,
    pub level: Level,
    pub detail: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl Check {
    fn new(name: &'static str, level: Level, detail: impl Into<String>) -> Self {
        Check {
            name,
            level,
            detail: detail.into(),
            hint: None,
        }
    }

    fn hint(mut self, h: impl Into<String>) -> Self {
        self.hint = Some(h.into());
        self
    }
}

/// The checklist, in a fixed order: token, endpoint, clock, provider, resource group, rate
/// limits. Every text in it has been through the run's redactor.
#[derive(Debug, Clone)]
pub struct Report {
    pub checks: Vec<Check>,
    pub elapsed: Duration,
}

impl Report {
    pub fn blockers(&self) -> Vec<&Check> {
        self.of(Level::Blocker)
    }

    pub fn warnings(&self) -> Vec<&Check> {
        self.of(Level::Warning)
    }

    fn of(&self, l: Level) -> Vec<&Check> {
        self.checks.iter().filter(|c| c.level == l).collect()
    }

    pub fn has_blocker(&self) -> bool {
        !self.blockers().is_empty()
    }

    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// The checklist as text, one check a line (details and hints indented below).
    pub fn render(&self) -> String {
        let width = self.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        let mut out = String::new();
        for c in &self.checks {
            let mut lines = c.detail.lines();
            out.push_str(&format!(
                "  {:<7} {:<width$}  {}\n",
                c.level.tag(),
                c.name,
                lines.next().unwrap_or("")
            ));
            for l in lines {
                out.push_str(&format!("  {:<7} {:<width$}    {l}\n", "", ""));
            }
            if let Some(h) = &c.hint {
                out.push_str(&format!("  {:<7} {:<width$}  → {h}\n", "", ""));
            }
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// `ready: 4 ok, 2 skipped (1.2 s)` or `2 blockers, 1 warning (3.4 s)`.
    pub fn summary(&self) -> String {
        let n = |l| self.of(l).len();
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let took = if self.elapsed < Duration::from_secs(1) {
            format!("{} ms", self.elapsed.as_millis())
        } else {
            format!("{:.1} s", self.elapsed.as_secs_f64())
        };
        if self.has_blocker() {
            format!(
                "not ready: {}, {} ({took})",
                plural(n(Level::Blocker), "blocker"),
                plural(n(Level::Warning), "warning")
            )
        } else {
            format!(
                "ready: {} ok, {}, {} skipped ({took})",
                n(Level::Ok),
                plural(n(Level::Warning), "warning"),
                n(Level::Skipped)
            )
        }
    }
}

/// Limits of the checks.
#[derive(Debug, Clone)]
pub struct Options {
    /// Each network check (on top of the token command's own timeout).
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(10),
        }
    }
}

/// Run every check against `target`, sending through `http` whose bearer tokens come from
/// `tokens` (the same source, so a token command runs once for the checks and the run).
pub async fn preflight(target: &Target, http: &Http, tokens: &TokenSource) -> Report {
    preflight_with(target, http, tokens, &Options::default()).await
}

/// [`preflight`] with explicit limits.
pub async fn preflight_with(
    target: &Target,
    http: &Http,
    tokens: &TokenSource,
    opts: &Options,
) -> Report {
    let started = Instant::now();
    let host = target.base_url.host_str().unwrap_or("").to_string();
    let arm = arm::is_arm_host(&host);
    let auth_budget = match &target.auth {
        Auth::Command { timeout, .. } => *timeout,
        _ => Duration::ZERO,
    };
    let authed = opts.timeout + auth_budget;
    let reads = Reads::plan(target, arm);
    // Everything at once: the token check, the plain probe, and ARM's reads (which wait for
    // the same token fetch: a single flight).
    let (token, endpoint, answers) = tokio::join!(
        async {
            let t0 = Instant::now();
            let r = tokio::time::timeout(authed, tokens.token()).await;
            (r, t0.elapsed())
        },
        probe::endpoint(&target.base_url, opts.timeout),
        reads.send(http, authed),
    );
    let ctx = Ctx {
        target,
        arm,
        host,
        token_ok: matches!(token.0, Ok(Ok(_))),
        endpoint_ok: endpoint.http.is_ok(),
        answers: &answers,
    };
    let claims = match &token.0 {
        Ok(Ok(Some(t))) => arm::jwt_claims(t),
        _ => None,
    };
    let mut checks = vec![
        ctx.token_check(&token.0, token.1, claims.as_ref(), authed),
        ctx.endpoint_check(&endpoint),
        ctx.clock_check(&endpoint),
        ctx.provider_check(),
        ctx.group_check(claims.as_ref()),
        ctx.rate_limit_check(),
    ];
    for c in &mut checks {
        c.detail = http.redactor.text(&c.detail);
        c.hint = c.hint.as_ref().map(|h| http.redactor.text(h));
    }
    Report {
        checks,
        elapsed: started.elapsed(),
    }
}

/// The reads sent through the run's client, by purpose.
struct Reads {
    /// (namespace, URL) of each provider read.
    providers: Vec<(String, String)>,
    /// The permission list at the scope the run writes in.
    permissions: Option<String>,
    /// The resource group.
    group: String,
}

/// Their answers.
struct Answers {
    providers: Vec<(String, Option<Exchange>)>,
    permissions: Option<Exchange>,
    group: Option<Exchange>,
}

impl Reads {
    fn plan(target: &Target, arm: bool) -> Reads {
        let base = target.base();
        let sub = &target.subscription;
        let mut namespaces: Vec<String> = Vec::new();
        for ns in
            std::iter::once(&target.namespace).chain(target.types.iter().map(|t| &t.namespace))
        {
            if !ns.is_empty() && !namespaces.iter().any(|n| n.eq_ignore_ascii_case(ns)) {
                namespaces.push(ns.clone());
            }
        }
        let (providers, permissions) = if arm && !sub.is_empty() {
            let providers = namespaces
                .into_iter()
                .map(|ns| {
                    let url = format!(
                        "{base}/subscriptions/{sub}/providers/{ns}?api-version={}",
                        arm::PROVIDERS_API
                    );
                    (ns, url)
                })
                .collect();
            let scope = if target.resource_group.create {
                format!("{base}/subscriptions/{sub}")
            } else {
                target.rg_url()
            };
            let perms = format!(
                "{scope}/providers/Microsoft.Authorization/permissions?api-version={}",
                arm::PERMISSIONS_API
            );
            (providers, Some(perms))
        } else {
            (Vec::new(), None)
        };
        Reads {
            providers,
            permissions,
            group: format!(
                "{}?api-version={}",
                target.rg_url(),
                target.resource_group.api_version
            ),
        }
    }

    async fn send(&self, http: &Http, limit: Duration) -> Answers {
        let get = |url: String| async move {
            let req = OutRequest {
                surface: Surface::Arm,
                method: "GET".into(),
                url,
                headers: vec![("Accept".into(), "application/json".into())],
                body: None,
            };
            tokio::time::timeout(limit, http.send(req, Role::Setup))
                .await
                .ok()
        };
        // One read per namespace, one after the other (a target has one or two).
        let providers = async {
            let mut out = Vec::new();
            for (ns, url) in &self.providers {
                out.push((ns.clone(), get(url.clone()).await));
            }
            out
        };
        let permissions = async {
            match &self.permissions {
                Some(u) => get(u.clone()).await,
                None => None,
            }
        };
        let (providers, permissions, group) =
            tokio::join!(providers, permissions, get(self.group.clone()));
        Answers {
            providers,
            permissions,
            group,
        }
    }
}

struct Ctx<'a> {
    target: &'a Target,
    arm: bool,
    host: String,
    token_ok: bool,
    endpoint_ok: bool,
    answers: &'a Answers,
}

type TokenResult = Result<Result<Option<String>, String>, tokio::time::error::Elapsed>;

impl Ctx<'_> {
    /// Every answer of ARM's reads (for 401s and rate-limit headers).
    fn exchanges(&self) -> Vec<&Exchange> {
        let a = self.answers;
        a.providers
            .iter()
            .filter_map(|(_, e)| e.as_ref())
            .chain(a.permissions.as_ref())
            .chain(a.group.as_ref())
            .collect()
    }

    /// The transport error of a read through the run's client (certificates, TLS, a reset),
    /// when one failed that way.
    fn client_failure(&self) -> Option<String> {
        self.exchanges()
            .into_iter()
            .find(|e| e.response.is_none())
            .and_then(|e| e.error.clone())
    }

    /// Why an authenticated read has no usable answer, when the cause is already a line of
    /// its own (no token, no endpoint, the token refused), so it is not said twice.
    fn skipped_because(&self, ex: Option<&Exchange>) -> Option<String> {
        if !self.token_ok {
            return Some("not checked: no token (see above)".into());
        }
        if ex.is_some_and(|e| e.status() == Some(401)) {
            return Some("not checked: the token was refused (see above)".into());
        }
        if !self.endpoint_ok && ex.is_none_or(|e| e.response.is_none()) {
            return Some("not checked: the endpoint does not answer (see above)".into());
        }
        None
    }

    fn token_check(
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

    fn endpoint_check(&self, e: &probe::Endpoint) -> Check {
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

    fn clock_check(&self, e: &probe::Endpoint) -> Check {
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

    fn provider_check(&self) -> Check {
        const NAME: &str = "provider";
        if self.target.label == "embedded" {
            return Check::new(
                NAME,
                Level::Skipped,
                "the embedded reference RP has no ARM registration",
            );
        }
        if !self.arm {
            return Check::new(
                NAME,
                Level::Skipped,
                format!(
                    "{} is not ARM (management.azure.com): no provider registration to read",
                    self.host
                ),
            );
        }
        if self.target.subscription.is_empty() {
            return Check::new(NAME, Level::Skipped, "no subscription in the target file");
        }
        let mut lines = Vec::new();
        let mut level = Level::Ok;
        let mut hints = Vec::new();
        for (ns, ex) in &self.answers.providers {
            if let Some(why) = self.skipped_because(ex.as_ref()) {
                return Check::new(NAME, Level::Skipped, why);
            }
            let Some(ex) = ex else {
                level = level.max(Level::Warning);
                lines.push(format!("{ns}: no answer to the provider read in time"));
                continue;
            };
            let resp = match &ex.response {
                Some(r) => r,
                None => {
                    level = level.max(Level::Warning);
                    lines.push(format!(
                        "{ns}: the provider read failed: {}",
                        ex.error.clone().unwrap_or_default()
                    ));
                    continue;
                }
            };
            let err = arm::error_text(resp.json.as_ref())
                .unwrap_or_else(|| format!("HTTP {}", resp.status));
            match resp.status {
                200 => {}
                404 => {
                    level = Level::Blocker;
                    lines.push(format!("{ns}: ARM does not know this namespace ({err})"));
                    hints.push("check `namespace:` for a typo, and that the RP's manifest is rolled out to this cloud".to_string());
                    continue;
                }
                403 => {
                    level = level.max(Level::Warning);
                    lines.push(format!(
                        "{ns}: the identity may not read the registration ({err}); fine when its role is on the resource group only"
                    ));
                    continue;
                }
                s => {
                    level = level.max(Level::Warning);
                    lines.push(format!("{ns}: the provider read answered {s} ({err})"));
                    continue;
                }
            }
            let declared: Vec<arm::DeclaredType> = self
                .target
                .types
                .iter()
                .filter(|t| t.namespace.eq_ignore_ascii_case(ns))
                .map(|t| {
                    let full = t.arm_type(self.target);
                    arm::DeclaredType {
                        path: full
                            .split_once('/')
                            .map(|(_, p)| p.to_string())
                            .unwrap_or(full),
                        api_version: t.api_version.clone(),
                    }
                })
                .collect();
            let Some(body) = resp.json.as_ref() else {
                level = level.max(Level::Warning);
                lines.push(format!("{ns}: the provider read's body is not JSON"));
                continue;
            };
            let facts = arm::provider_facts(body, &declared, &self.target.location);
            match &facts.registration {
                arm::Registration::Registered => {
                    lines.push(format!(
                        "{ns} is Registered in subscription {}",
                        self.target.subscription
                    ));
                }
                arm::Registration::Registering => {
                    level = level.max(Level::Warning);
                    lines.push(format!("{ns} is still Registering"));
                    hints.push(format!("wait until `az provider show -n {ns} --query registrationState` says Registered"));
                }
                arm::Registration::Not(state) => {
                    level = Level::Blocker;
                    lines.push(format!(
                        "{ns} is not registered in subscription {} ({state})",
                        self.target.subscription
                    ));
                    hints.push(format!("az provider register --namespace {ns} --subscription {} (needs the */register/action permission, e.g. Contributor)", self.target.subscription));
                }
            }
            if !facts.mismatches.is_empty() {
                level = level.max(Level::Warning);
                for m in facts.mismatches {
                    lines.push(format!("{ns}/{m}"));
                }
            }
        }
        let mut c = Check::new(NAME, level, lines.join("\n"));
        if !hints.is_empty() {
            c.hint = Some(hints.join("; "));
        }
        c
    }

    /// The RBAC actions the run needs at the scope its permissions were read at.
    fn needed_actions(&self) -> Vec<String> {
        let t = self.target;
        let mut out = Vec::new();
        if t.resource_group.create {
            out.push(arm::RG_WRITE.to_string());
            out.push(arm::RG_DELETE.to_string());
        }
        for ty in &t.types {
            if t.top_of(ty).scope != Scope::ResourceGroup {
                continue;
            }
            let at = ty.arm_type(t);
            for verb in ["write", "delete"] {
                let a = format!("{at}/{verb}");
                if !out.contains(&a) {
                    out.push(a);
                }
            }
            for action in &ty.actions {
                let a = format!("{at}/{}/action", action.name);
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
        out
    }

    /// The permission read's verdict: `Ok(())`, the missing actions, or why it is unknown.
    fn permission_verdict(&self) -> Result<Result<(), Vec<String>>, String> {
        let Some(ex) = &self.answers.permissions else {
            return Err("no answer to the permission read in time".into());
        };
        let Some(resp) = &ex.response else {
            return Err(format!(
                "the permission read failed: {}",
                ex.error.clone().unwrap_or_default()
            ));
        };
        if resp.status != 200 {
            return Err(format!(
                "the permission read answered {} ({})",
                resp.status,
                arm::error_text(resp.json.as_ref()).unwrap_or_default()
            ));
        }
        let Some(body) = &resp.json else {
            return Err("the permission read's body is not JSON".into());
        };
        let missing: Vec<String> = self
            .needed_actions()
            .into_iter()
            .filter(|a| !arm::allows(body, a))
            .collect();
        Ok(if missing.is_empty() {
            Ok(())
        } else {
            Err(missing)
        })
    }

    fn role_hint(&self, claims: Option<&arm::Claims>, scope: &str) -> String {
        let who = match claims.and_then(|c| c.object_id.as_deref()) {
            Some(oid) => format!("--assignee-object-id {oid}"),
            None => "--assignee <the identity>".to_string(),
        };
        format!("az role assignment create {who} --role Contributor --scope {scope}")
    }

    fn group_check(&self, claims: Option<&arm::Claims>) -> Check {
        const NAME: &str = "resource group";
        let t = self.target;
        let rg = &t.resource_group;
        if let Some(p) = arm::rg_name_problem(&rg.name) {
            return Check::new(NAME, Level::Blocker, p).hint(if rg.create {
                "the run appends `-<run id>` (7 characters) to the name: shorten `resource_group.name`"
            } else {
                "fix `resource_group.name`"
            });
        }
        let group_ex = self.answers.group.as_ref();
        let sub_scope = format!("/subscriptions/{}", t.subscription);
        if rg.create {
            let plan = format!(
                "the run will create {} in {} and delete it at the end",
                rg.name, t.location
            );
            if let Some(why) = self.skipped_because(group_ex) {
                return Check::new(NAME, Level::Skipped, format!("{plan}; {why}"));
            }
            if !self.arm {
                return Check::new(
                    NAME,
                    Level::Ok,
                    format!(
                        "{plan} (PUT; {} has no ARM permission API to ask first)",
                        self.host
                    ),
                );
            }
            return match self.permission_verdict() {
                Ok(Ok(())) => Check::new(
                    NAME,
                    Level::Ok,
                    format!("{plan}; the identity's roles on the subscription allow it"),
                ),
                Ok(Err(missing)) => Check::new(
                    NAME,
                    Level::Blocker,
                    format!(
                        "{plan}, but the identity's roles on the subscription do not allow: {}",
                        missing.join(", ")
                    ),
                )
                .hint(format!(
                    "{}; or pre-create a group and use `resource_group: {{name: G, disposable: true}}` with a role on it",
                    self.role_hint(claims, &sub_scope)
                )),
                Err(why) => Check::new(
                    NAME,
                    Level::Warning,
                    format!("{plan}; could not tell whether the identity may ({why}): the run will find out"),
                ),
            };
        }
        let mode = if rg.disposable {
            "disposable: destructive scenarios run in it"
        } else {
            "not disposable: destructive scenarios are skipped"
        };
        if let Some(why) = self.skipped_because(group_ex) {
            return Check::new(NAME, Level::Skipped, format!("{}: {why}", rg.name));
        }
        let Some(ex) = group_ex else {
            return Check::new(
                NAME,
                Level::Warning,
                format!("{}: no answer to the read in time", rg.name),
            );
        };
        let Some(resp) = &ex.response else {
            return Check::new(
                NAME,
                Level::Warning,
                format!(
                    "{}: the read failed: {}",
                    rg.name,
                    ex.error.clone().unwrap_or_default()
                ),
            );
        };
        let err =
            arm::error_text(resp.json.as_ref()).unwrap_or_else(|| format!("HTTP {}", resp.status));
        let not_arm = if self.arm {
            Level::Blocker
        } else {
            Level::Warning
        };
        match resp.status {
            200 => {}
            404 => {
                return Check::new(
                    NAME,
                    not_arm,
                    format!("{} does not exist in subscription {} ({err})", rg.name, t.subscription),
                )
                .hint(format!(
                    "az group create -n {} -l {} --subscription {}, or set `resource_group: {{name: {}, create: true}}`{}",
                    rg.name,
                    t.location,
                    t.subscription,
                    rg.name,
                    if self.arm { "" } else { " (fine if this endpoint does not serve resource groups)" }
                ));
            }
            403 => {
                return Check::new(
                    NAME,
                    not_arm,
                    format!("the identity may not read {} ({err})", rg.name),
                )
                .hint(self.role_hint(claims, &format!("{sub_scope}/resourceGroups/{}", rg.name)));
            }
            s => {
                return Check::new(
                    NAME,
                    Level::Warning,
                    format!("reading {} answered {s} ({err})", rg.name),
                );
            }
        }
        let exists = format!("{} exists ({mode})", rg.name);
        if !self.arm {
            return Check::new(NAME, Level::Ok, exists);
        }
        match self.permission_verdict() {
            Ok(Ok(())) => Check::new(
                NAME,
                Level::Ok,
                format!("{exists}; the identity's roles there allow the run's writes"),
            ),
            Ok(Err(missing)) => Check::new(
                NAME,
                Level::Blocker,
                format!(
                    "{exists}, but the identity's roles there do not allow: {}",
                    missing.join(", ")
                ),
            )
            .hint(self.role_hint(claims, &format!("{sub_scope}/resourceGroups/{}", rg.name))),
            Err(why) => Check::new(
                NAME,
                Level::Warning,
                format!("{exists}; could not tell whether the identity may write there ({why})"),
            ),
        }
    }

    fn rate_limit_check(&self) -> Check {
        const NAME: &str = "rate limits";
        let mut least: BTreeMap<String, u64> = BTreeMap::new();
        for ex in self.exchanges() {
            let Some(r) = &ex.response else { continue };
            for (k, v) in &r.headers {
                let k = k.to_ascii_lowercase();
                if let Some(what) = k.strip_prefix("x-ms-ratelimit-remaining-")
                    && let Ok(n) = v.trim().parse::<u64>()
                {
                    let e = least.entry(what.to_string()).or_insert(n);
                    *e = (*e).min(n);
                }
            }
        }
        if least.is_empty() {
            return Check::new(
                NAME,
                Level::Skipped,
                if self.arm {
                    "no answer from ARM carried x-ms-ratelimit-remaining-* headers"
                } else {
                    "not ARM: no rate-limit headers seen"
                },
            );
        }
        let shown: Vec<String> = least.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let low: Vec<&String> = least
            .iter()
            .filter(|(_, v)| **v < RATE_LIMIT_WARN)
            .map(|(k, _)| k)
            .collect();
        let writes = if least.keys().any(|k| k.contains("writes")) {
            ""
        } else {
            " (writes are reported on writes only)"
        };
        if low.is_empty() {
            Check::new(
                NAME,
                Level::Ok,
                format!("remaining {}{writes}", shown.join(", ")),
            )
        } else {
            Check::new(
                NAME,
                Level::Warning,
                format!("remaining {}: few {} left in ARM's current window", shown.join(", "), low.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")),
            )
            .hint("other clients share the subscription's quota; the run will be throttled: run later, or with fewer tests at once")
        }
    }
}

/// `3 min`, `2 h 5 min`, `45 s`.
fn minutes(secs: i64) -> String {
    let s = secs.max(0);
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min", s / 60)
    } else {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Response;
    use serde_json::{Value, json};

    const SUB: &str = "00000000-0000-0000-0000-000000000001";

    fn target(rg: &str) -> Target {
        let yaml = format!(
            "base_url: https://management.azure.com\nauth: {{bearer_env: RP_TOKEN}}\nsubscription: {SUB}\n\
             resource_group: {rg}\nnamespace: Microsoft.Contoso\napi_version: \"2024-05-01\"\nlocation: eastus\n\
             types:\n  widgets:\n    kind: tracked\n    create_body: {{location: eastus}}\n    \
             actions: [{{name: restart, body: {{}}}}]\n  gadgets: {{parent: widgets, kind: proxy, create_body: {{}}}}\n"
        );
        crate::target::parse_target(std::path::Path::new("t.yaml"), &yaml, "t.yaml")
            .unwrap_or_else(|r| panic!("{}", r.render()))
    }

    fn ex(status: u16, body: Value, headers: &[(&str, &str)]) -> Option<Exchange> {
        Some(Exchange {
            seq: 1,
            throttled: Vec::new(),
            throttled_times: 0,
            role: Role::Setup,
            surface: Surface::Arm,
            method: "GET".into(),
            url: "https://management.azure.com/x".into(),
            request_headers: Vec::new(),
            request_body: None,
            response: Some(Response {
                status,
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                body: body.to_string(),
                body_bytes: 0,
                json: Some(body),
                json_error: None,
                set_cookies: Vec::new(),
            }),
            error: None,
            started_at: "2025-01-01T00:00:00.000Z".into(),
            elapsed_ms: 10,
            foreign: false,
        })
    }

    fn registered() -> Value {
        json!({"registrationState": "Registered", "resourceTypes": [
            {"resourceType": "widgets", "locations": ["East US"], "apiVersions": ["2024-05-01"]},
            {"resourceType": "widgets/gadgets", "locations": ["East US"], "apiVersions": ["2024-05-01"]},
        ]})
    }

    fn contributor() -> Value {
        json!({"value": [{"actions": ["*"], "notActions": ["Microsoft.Authorization/*/Write"]}]})
    }

    fn ctx<'a>(t: &'a Target, answers: &'a Answers) -> Ctx<'a> {
        Ctx {
            target: t,
            arm: true,
            host: "management.azure.com".into(),
            token_ok: true,
            endpoint_ok: true,
            answers,
        }
    }

    #[test]
    fn arm_reads_plan_the_provider_and_the_permissions_at_the_right_scope() {
        let t = target("{name: rg1, create: true}");
        let r = Reads::plan(&t, true);
        assert_eq!(r.providers.len(), 1);
        assert!(r.providers[0].1.ends_with(&format!(
            "/subscriptions/{SUB}/providers/Microsoft.Contoso?api-version=2021-04-01"
        )));
        let p = r.permissions.unwrap();
        assert!(
            p.contains(&format!(
                "/subscriptions/{SUB}/providers/Microsoft.Authorization/permissions"
            )),
            "{p}"
        );
        let t = target("{name: rg1}");
        let p = Reads::plan(&t, true).permissions.unwrap();
        assert!(
            p.contains("/resourceGroups/rg1/providers/Microsoft.Authorization/permissions"),
            "{p}"
        );
        let r = Reads::plan(&t, false);
        assert!(r.providers.is_empty() && r.permissions.is_none());
        assert!(r.group.contains("/resourceGroups/rg1?api-version="));
    }

    #[test]
    fn a_ready_subscription_passes_every_arm_check() {
        let t = target("{name: rg1-abc123, create: true}");
        let a = Answers {
            providers: vec![(
                "Microsoft.Contoso".into(),
                ex(
                    200,
                    registered(),
                    &[("x-ms-ratelimit-remaining-subscription-reads", "11999")],
                ),
            )],
            permissions: ex(200, contributor(), &[]),
            group: ex(
                404,
                json!({"error": {"code": "ResourceGroupNotFound", "message": "no"}}),
                &[],
            ),
        };
        let c = ctx(&t, &a);
        let p = c.provider_check();
        assert_eq!(p.level, Level::Ok, "{p:?}");
        assert!(p.detail.contains("Registered"));
        let g = c.group_check(None);
        assert_eq!(g.level, Level::Ok, "{g:?}");
        assert!(g.detail.contains("will create rg1-abc123"));
        let r = c.rate_limit_check();
        assert_eq!(r.level, Level::Ok, "{r:?}");
        assert!(r.detail.contains("subscription-reads: 11999"), "{r:?}");
    }

    #[test]
    fn an_unregistered_namespace_and_missing_roles_are_blockers_with_the_fix() {
        let t = target("{name: rg1-abc123, create: true}");
        let reader = json!({"value": [{"actions": ["*/read"], "notActions": []}]});
        let a = Answers {
            providers: vec![(
                "Microsoft.Contoso".into(),
                ex(200, json!({"registrationState": "NotRegistered"}), &[]),
            )],
            permissions: ex(
                200,
                reader,
                &[("x-ms-ratelimit-remaining-subscription-reads", "12")],
            ),
            group: ex(404, json!({}), &[]),
        };
        let c = ctx(&t, &a);
        let p = c.provider_check();
        assert_eq!(p.level, Level::Blocker);
        assert!(
            p.hint
                .unwrap()
                .contains("az provider register --namespace Microsoft.Contoso")
        );
        let claims = arm::Claims {
            object_id: Some("oid-1".into()),
            ..Default::default()
        };
        let g = c.group_check(Some(&claims));
        assert_eq!(g.level, Level::Blocker, "{g:?}");
        for action in [
            arm::RG_WRITE,
            arm::RG_DELETE,
            "Microsoft.Contoso/widgets/write",
            "Microsoft.Contoso/widgets/gadgets/delete",
            "Microsoft.Contoso/widgets/restart/action",
        ] {
            assert!(g.detail.contains(action), "{action} in {}", g.detail);
        }
        assert!(
            g.hint
                .unwrap()
                .contains("--assignee-object-id oid-1 --role Contributor")
        );
        let r = c.rate_limit_check();
        assert_eq!(r.level, Level::Warning, "{r:?}");
    }

    #[test]
    fn a_missing_group_a_forbidden_read_and_a_refused_token_are_told_apart() {
        let t = target("{name: rg1, disposable: true}");
        let a = Answers {
            providers: vec![(
                "Microsoft.Contoso".into(),
                ex(
                    403,
                    json!({"error": {"code": "AuthorizationFailed", "message": "no"}}),
                    &[],
                ),
            )],
            permissions: ex(200, contributor(), &[]),
            group: ex(
                404,
                json!({"error": {"code": "ResourceGroupNotFound", "message": "gone"}}),
                &[],
            ),
        };
        let c = ctx(&t, &a);
        // No subscription-level read: a warning, not a blocker (the role may be on the group).
        assert_eq!(c.provider_check().level, Level::Warning);
        let g = c.group_check(None);
        assert_eq!(g.level, Level::Blocker);
        assert!(g.detail.contains("ResourceGroupNotFound"), "{g:?}");
        assert!(g.hint.unwrap().contains("az group create -n rg1 -l eastus"));

        let a = Answers {
            providers: vec![(
                "Microsoft.Contoso".into(),
                ex(
                    401,
                    json!({"error": {"code": "InvalidAuthenticationTokenAudience", "message": "wrong audience"}}),
                    &[],
                ),
            )],
            permissions: ex(401, json!({}), &[]),
            group: ex(401, json!({}), &[]),
        };
        let c = ctx(&t, &a);
        let tok = c.token_check(
            &Ok(Ok(Some("opaque-token-1234567".into()))),
            Duration::from_millis(5),
            None,
            Duration::from_secs(1),
        );
        assert_eq!(tok.level, Level::Blocker);
        assert!(
            tok.detail.contains("InvalidAuthenticationTokenAudience"),
            "{tok:?}"
        );
        // The other checks do not repeat it.
        assert_eq!(c.provider_check().level, Level::Skipped);
        assert_eq!(c.group_check(None).level, Level::Skipped);
    }

    #[test]
    fn an_existing_group_needs_the_type_writes_there() {
        let t = target("{name: rg1}");
        let only_widgets = json!({"value": [{"actions": ["Microsoft.Contoso/widgets/*", "*/read"], "notActions": []}]});
        let a = Answers {
            providers: vec![("Microsoft.Contoso".into(), ex(200, registered(), &[]))],
            permissions: ex(200, only_widgets, &[]),
            group: ex(200, json!({"name": "rg1", "location": "eastus"}), &[]),
        };
        let g = ctx(&t, &a).group_check(None);
        // widgets/gadgets/* is under widgets/*: allowed; nothing missing.
        assert_eq!(g.level, Level::Ok, "{g:?}");
        assert!(g.detail.contains("not disposable"), "{g:?}");
        let none = json!({"value": [{"actions": ["*/read"], "notActions": []}]});
        let a = Answers {
            permissions: ex(200, none, &[]),
            ..a
        };
        let g = ctx(&t, &a).group_check(None);
        assert_eq!(g.level, Level::Blocker);
        assert!(
            !g.detail.contains(arm::RG_WRITE),
            "no group write needed: {g:?}"
        );
    }

    #[test]
    fn token_claims_expiry_and_audience() {
        let t = target("{name: rg1}");
        let a = Answers {
            providers: Vec::new(),
            permissions: None,
            group: None,
        };
        let c = ctx(&t, &a);
        let now = chrono::Utc::now().timestamp();
        let ok = Ok(Ok(Some("x.y.z".to_string())));
        let claims = |aud: &str, exp: i64| arm::Claims {
            audience: vec![aud.into()],
            expires: Some(exp),
            ..Default::default()
        };
        let fresh = c.token_check(
            &ok,
            Duration::ZERO,
            Some(&claims("https://management.azure.com/", now + 3600)),
            Duration::from_secs(1),
        );
        assert_eq!(fresh.level, Level::Ok, "{fresh:?}");
        assert!(
            fresh.detail.contains("expires in 59 min") || fresh.detail.contains("expires in 1 h"),
            "{fresh:?}"
        );
        let short = c.token_check(
            &ok,
            Duration::ZERO,
            Some(&claims("https://management.azure.com/", now + 300)),
            Duration::from_secs(1),
        );
        assert_eq!(
            short.level,
            Level::Warning,
            "a variable's token is not renewed: {short:?}"
        );
        let expired = c.token_check(
            &ok,
            Duration::ZERO,
            Some(&claims("https://management.azure.com/", now - 120)),
            Duration::from_secs(1),
        );
        assert_eq!(expired.level, Level::Blocker);
        assert!(expired.detail.contains("expired 2 min ago"), "{expired:?}");
        let graph = c.token_check(
            &ok,
            Duration::ZERO,
            Some(&claims("https://graph.microsoft.com", now + 3600)),
            Duration::from_secs(1),
        );
        assert_eq!(graph.level, Level::Warning);
        let failed = c.token_check(
            &Ok(Err("auth: environment variable RP_TOKEN is not set".into())),
            Duration::ZERO,
            None,
            Duration::from_secs(1),
        );
        assert_eq!(failed.level, Level::Blocker);
        assert!(failed.detail.contains("RP_TOKEN is not set"));
    }

    #[test]
    fn a_plain_answer_with_a_failing_client_is_an_endpoint_blocker() {
        let t = target("{name: rg1}");
        let mut broken = ex(200, json!({}), &[]).unwrap();
        broken.response = None;
        broken.error = Some("invalid peer certificate: UnknownIssuer".into());
        let a = Answers {
            providers: Vec::new(),
            permissions: None,
            group: Some(broken),
        };
        let probe = probe::Endpoint {
            authority: "rp.example:443".into(),
            tcp: Ok("10.0.0.1:443".into()),
            http: Ok(probe::Answer {
                status: 404,
                date: None,
                sent: std::time::SystemTime::now(),
                elapsed: Duration::from_millis(20),
            }),
        };
        let c = ctx(&t, &a);
        let e = c.endpoint_check(&probe);
        assert_eq!(e.level, Level::Blocker, "{e:?}");
        assert!(e.detail.contains("UnknownIssuer"), "{e:?}");
        assert!(e.hint.unwrap().contains("--insecure"));
        let fine = Answers {
            providers: Vec::new(),
            permissions: None,
            group: ex(200, json!({}), &[]),
        };
        assert_eq!(ctx(&t, &fine).endpoint_check(&probe).level, Level::Ok);
    }

    #[test]
    fn the_report_renders_a_checklist_and_counts() {
        let r = Report {
            checks: vec![
                Check::new("token", Level::Ok, "fine"),
                Check::new("endpoint", Level::Blocker, "refused\nsecond line").hint("start it"),
                Check::new("clock", Level::Warning, "off"),
                Check::new("provider", Level::Skipped, "not ARM"),
            ],
            elapsed: Duration::from_millis(1500),
        };
        let text = r.render();
        assert!(text.contains("  ok      token     fine\n"), "{text}");
        assert!(text.contains("  BLOCKER endpoint  refused\n"), "{text}");
        assert!(text.contains("second line\n"), "{text}");
        assert!(text.contains("→ start it"), "{text}");
        assert!(
            text.ends_with("not ready: 1 blocker, 1 warning (1.5 s)\n"),
            "{text}"
        );
        assert!(r.has_blocker());
        assert_eq!(r.check("clock").unwrap().level, Level::Warning);
    }
}
