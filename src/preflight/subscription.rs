//! The checks of the subscription: the provider's registration and manifest, the resource
//! group and the caller's permissions there, ARM's rate limits.

use super::*;

/// The name of the resource group check.
const GROUP: &str = "resource group";

impl Ctx<'_> {
    pub(super) fn provider_check(&self) -> Check {
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
    pub(super) fn needed_actions(&self) -> Vec<String> {
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
    pub(super) fn permission_verdict(&self) -> Result<Result<(), Vec<String>>, String> {
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

    pub(super) fn role_hint(&self, claims: Option<&arm::Claims>, scope: &str) -> String {
        let who = match claims.and_then(|c| c.object_id.as_deref()) {
            Some(oid) => format!("--assignee-object-id {oid}"),
            None => "--assignee <the identity>".to_string(),
        };
        format!("az role assignment create {who} --role Contributor --scope {scope}")
    }

    pub(super) fn group_check(&self, claims: Option<&arm::Claims>) -> Check {
        let t = self.target;
        let rg = &t.resource_group;
        if rg.name.is_empty() && t.types.is_empty() {
            return Check::new(
                GROUP,
                Level::Skipped,
                "the target declares no ARM resource type: no resource group is used",
            );
        }
        if let Some(p) = arm::rg_name_problem(&rg.name) {
            return Check::new(GROUP, Level::Blocker, p).hint(if rg.create {
                "the run appends `-<run id>` (7 characters) to the name: shorten `resource_group.name`"
            } else {
                "fix `resource_group.name`"
            });
        }
        if rg.create {
            return self.group_to_create(claims);
        }
        self.existing_group(claims)
    }

    /// A group the run creates: may the identity create it?
    fn group_to_create(&self, claims: Option<&arm::Claims>) -> Check {
        let t = self.target;
        let rg = &t.resource_group;
        let sub_scope = format!("/subscriptions/{}", t.subscription);
        let plan = format!(
            "the run will create {} in {} and delete it at the end",
            rg.name, t.location
        );
        if let Some(why) = self.skipped_because(self.answers.group.as_ref()) {
            return Check::new(GROUP, Level::Skipped, format!("{plan}; {why}"));
        }
        if !self.arm {
            return Check::new(
                GROUP,
                Level::Ok,
                format!(
                    "{plan} (PUT; {} has no ARM permission API to ask first)",
                    self.host
                ),
            );
        }
        match self.permission_verdict() {
            Ok(Ok(())) => Check::new(
                GROUP,
                Level::Ok,
                format!("{plan}; the identity's roles on the subscription allow it"),
            ),
            Ok(Err(missing)) => Check::new(
                GROUP,
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
                GROUP,
                Level::Warning,
                format!("{plan}; could not tell whether the identity may ({why}): the run will find out"),
            ),
        }
    }

    /// A group the target names: does it exist, and may the identity write there?
    fn existing_group(&self, claims: Option<&arm::Claims>) -> Check {
        let rg = &self.target.resource_group;
        let group_ex = self.answers.group.as_ref();
        if let Some(why) = self.skipped_because(group_ex) {
            return Check::new(GROUP, Level::Skipped, format!("{}: {why}", rg.name));
        }
        let Some(ex) = group_ex else {
            return Check::new(
                GROUP,
                Level::Warning,
                format!("{}: no answer to the read in time", rg.name),
            );
        };
        let Some(resp) = &ex.response else {
            return Check::new(
                GROUP,
                Level::Warning,
                format!(
                    "{}: the read failed: {}",
                    rg.name,
                    ex.error.clone().unwrap_or_default()
                ),
            );
        };
        if let Some(refused) = self.group_read_refused(claims, resp) {
            return refused;
        }
        self.group_permissions(claims)
    }

    /// The check when reading the group did not answer 200 (it does not exist, the identity
    /// may not read it, or something else answered).
    fn group_read_refused(
        &self,
        claims: Option<&arm::Claims>,
        resp: &crate::http::Response,
    ) -> Option<Check> {
        let t = self.target;
        let rg = &t.resource_group;
        let err =
            arm::error_text(resp.json.as_ref()).unwrap_or_else(|| format!("HTTP {}", resp.status));
        let not_arm = if self.arm {
            Level::Blocker
        } else {
            Level::Warning
        };
        let sub_scope = format!("/subscriptions/{}", t.subscription);
        match resp.status {
            200 => None,
            404 => Some(Check::new(
                GROUP,
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
            ))),
            403 => Some(Check::new(
                GROUP,
                not_arm,
                format!("the identity may not read {} ({err})", rg.name),
            )
            .hint(self.role_hint(claims, &format!("{sub_scope}/resourceGroups/{}", rg.name)))),
            s => Some(Check::new(
                GROUP,
                Level::Warning,
                format!("reading {} answered {s} ({err})", rg.name),
            )),
        }
    }

    /// An existing group: do the identity's roles there allow the run's writes?
    fn group_permissions(&self, claims: Option<&arm::Claims>) -> Check {
        let t = self.target;
        let rg = &t.resource_group;
        let mode = if rg.disposable {
            "disposable: destructive scenarios run in it"
        } else {
            "not disposable: destructive scenarios are skipped"
        };
        let exists = format!("{} exists ({mode})", rg.name);
        if !self.arm {
            return Check::new(GROUP, Level::Ok, exists);
        }
        let sub_scope = format!("/subscriptions/{}", t.subscription);
        match self.permission_verdict() {
            Ok(Ok(())) => Check::new(
                GROUP,
                Level::Ok,
                format!("{exists}; the identity's roles there allow the run's writes"),
            ),
            Ok(Err(missing)) => Check::new(
                GROUP,
                Level::Blocker,
                format!(
                    "{exists}, but the identity's roles there do not allow: {}",
                    missing.join(", ")
                ),
            )
            .hint(self.role_hint(claims, &format!("{sub_scope}/resourceGroups/{}", rg.name))),
            Err(why) => Check::new(
                GROUP,
                Level::Warning,
                format!("{exists}; could not tell whether the identity may write there ({why})"),
            ),
        }
    }

    pub(super) fn rate_limit_check(&self) -> Check {
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
