//! Preflight: is a target ready for a run? In a few seconds, before a run that may take half
//! an hour, check what would otherwise fail every test one by one:
//!
//! | check | how | blocker when |
//! |---|---|---|
//! | token | the target's `auth`, through the run's own [`TokenSource`] (one fetch for the check and the run); a JWT's audience and expiry are read | the command fails (its stderr is shown), prints JSON or several lines, the variable is unset, the token has expired, or the endpoint answers 401 |
//! | endpoint | a TCP connection and one credential-free `GET` of the base URL ([`probe`]) | nothing answers HTTP |
//! | clock | the `Date` of that answer against this machine's clock | never (a warning past [`SKEW_WARN`]) |
//! | provider | ARM's provider read per namespace (`GET /subscriptions/{s}/providers/{ns}?api-version=2021-04-01`): `registrationState`, and the declared types, api-versions and location in its manifest | not registered, or unknown to ARM |
//! | types served | one `GET` of each top-level type's collection ([`served`]) | every answer says the endpoint does not serve it (404 `InvalidResourceType`, `NoRegisteredProviderFound`, 401/403, a redirect or an HTML page) |
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

mod access;
pub mod arm;
pub mod probe;
pub mod served;
mod subscription;

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
    /// Before the run's resource group exists, read each tracked type's collection at
    /// subscription scope (`doctor`); a run reads in its group once it made it instead.
    pub served_at_subscription: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(10),
            served_at_subscription: false,
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
    let served = if ctx.token_ok && ctx.endpoint_ok {
        // Listing in the group needs it to exist; a group the run creates is listed in once
        // the run made it (`served::check` again, from the run).
        let group_exists = !target.resource_group.create
            && answers.group.as_ref().and_then(|e| e.status()) == Some(200);
        if group_exists || opts.served_at_subscription {
            served::check(target, http, group_exists, authed).await
        } else {
            Check::new(
                "types served",
                Level::Skipped,
                "read in the run's resource group once the run made it",
            )
        }
    } else {
        Check::new(
            "types served",
            Level::Skipped,
            "not checked: no token or no endpoint (see above)",
        )
    };
    let mut checks = vec![
        ctx.token_check(&token.0, token.1, claims.as_ref(), authed),
        ctx.endpoint_check(&endpoint),
        ctx.clock_check(&endpoint),
        ctx.provider_check(),
        ctx.group_check(claims.as_ref()),
        served,
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
    /// The resource group (none for a target without ARM types).
    group: Option<String>,
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
            group: (!target.resource_group.name.is_empty()).then(|| {
                format!(
                    "{}?api-version={}",
                    target.rg_url(),
                    target.resource_group.api_version
                )
            }),
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
        let group = async {
            match &self.group {
                Some(u) => get(u.clone()).await,
                None => None,
            }
        };
        let (providers, permissions, group) = tokio::join!(providers, permissions, group);
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
mod tests;
