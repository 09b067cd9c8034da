//! The rule catalogue: every contract rule with its stable ID, level, profile, statement, source
//! and the project's decision about it.
//!
//! The data lives in `catalogue.tsv`, compiled into the binary. Its statement, source and
//! "observed by" columns come from `shared/contract/rules.md` (refresh them with
//! `tools/refresh-catalogue.py`); the level, profile and decision columns are the project's:
//! where rpconform reads a rule differently from the shared catalogue (a calibrated level, a
//! narrower scope, a profile), the decision column says what and why, with its evidence.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// How binding a rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Level {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "MAY")]
    May,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        }
    }

    fn parse(s: &str) -> Level {
        match s {
            "MUST" => Level::Must,
            "SHOULD" => Level::Should,
            _ => Level::May,
        }
    }
}

/// A set of rules that belong to one contract source. A target declares the profiles it
/// implements; rules of other profiles are not applicable to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// The ARM RP contract (seed 001) with the API, RES and generic operation rules.
    Arm,
    /// Parent/child and dependency provisioningState propagation (seed 000).
    Propagation,
    /// TypeSpec Azure.Core status monitors (seed 002).
    AzureCoreLro,
    /// The ARO-HCP RP's own operation design (seed 003).
    AroHcp,
    /// Task-based APIs (seed 004).
    TaskApi,
    /// Subscription lifecycle notifications (public RPC), for RPs that take them directly.
    SubscriptionLifecycle,
    /// Moving resources between resource groups (public RPC), for RPs that support it.
    ResourceMove,
    /// The RP's behaviour against its own OpenAPI spec (SPEC), for a target that has one.
    OpenApi,
    /// The RP as ARM calls it, with the run playing ARM's part in front of its own endpoint
    /// (FD): implied by `front_door` (the default for an endpoint that is not ARM).
    FrontDoor,
}

impl Profile {
    pub const ALL: [Profile; 9] = [
        Profile::Arm,
        Profile::Propagation,
        Profile::AzureCoreLro,
        Profile::AroHcp,
        Profile::TaskApi,
        Profile::SubscriptionLifecycle,
        Profile::ResourceMove,
        Profile::OpenApi,
        Profile::FrontDoor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Arm => "arm",
            Profile::Propagation => "propagation",
            Profile::AzureCoreLro => "azure-core-lro",
            Profile::AroHcp => "aro-hcp",
            Profile::TaskApi => "task-api",
            Profile::SubscriptionLifecycle => "subscription-lifecycle",
            Profile::ResourceMove => "resource-move",
            Profile::OpenApi => "openapi",
            Profile::FrontDoor => "front-door",
        }
    }

    pub fn from_name(s: &str) -> Option<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
    }

    pub fn describe(self) -> &'static str {
        match self {
            Profile::Arm => {
                "the ARM resource-provider contract (seed 001), with api-version and resource-envelope rules"
            }
            Profile::Propagation => {
                "parent/child and dependency provisioningState propagation (seed 000)"
            }
            Profile::AzureCoreLro => {
                "TypeSpec Azure.Core status monitors on a data plane (seed 002)"
            }
            Profile::AroHcp => {
                "the ARO-HCP RP's operation design: one active operation, cancel on delete, scoped status reads (seed 003)"
            }
            Profile::TaskApi => {
                "task-based APIs: task ids, task states, provisioning states (seed 004)"
            }
            Profile::SubscriptionLifecycle => {
                "subscription lifecycle notifications ARM sends the RP (public RPC): opt in only for an RP endpoint you own, never through ARM"
            }
            Profile::ResourceMove => {
                "moving resources between resource groups (public RPC § Move Resource)"
            }
            Profile::OpenApi => {
                "the RP against its own OpenAPI spec: statuses, long-running declarations, final-state-via, schemas, headers, secrets (SPEC)"
            }
            Profile::FrontDoor => {
                "the RP as ARM calls it, the run playing ARM's front door in front of its own endpoint: links from the Referer, systemData from ARM's header, operation reads scoped to the caller, the 60 s deadline (FD)"
            }
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One contract rule.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rule {
    pub id: &'static str,
    /// The level rpconform judges the rule at.
    pub level: Level,
    pub profile: Profile,
    pub rule: &'static str,
    pub source: &'static str,
    pub observed_by: &'static str,
    /// The level in the shared catalogue, when the project calibrated it differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalogue_level: Option<Level>,
    /// What the project decided about this rule and why (empty: read as written).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub decision: &'static str,
    /// The rules this one only restates where they fail on the same exchange (its decision's
    /// `Restates X, Y on the same exchange`): there it is not judged, naming their failure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restates: Vec<&'static str>,
}

impl Rule {
    /// The area prefix (`ETAG` of `ETAG-07`).
    pub fn family(&self) -> &'static str {
        family_of(self.id)
    }
}

/// The family prefix of a rule ID.
pub fn family_of(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

const DATA: &str = include_str!("catalogue.tsv");

/// The catalogue's identity for reports: a hash of its text and the number of rules
/// (`3f9c0d21a7b4 (134 rules)`), so a certificate names the rules it was judged by.
pub fn catalogue_id() -> String {
    format!(
        "{} ({} rules)",
        crate::fingerprint::short(DATA.as_bytes()),
        all().len()
    )
}

/// All rules, in catalogue order.
pub fn all() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        DATA.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|line| {
                let f: Vec<&'static str> = line.split('\t').collect();
                let col = |i: usize| f.get(i).copied().unwrap_or("");
                let level = Level::parse(col(1));
                let catalogue = col(6);
                Rule {
                    id: f[0],
                    level,
                    profile: Profile::from_name(col(2)).unwrap_or(Profile::Arm),
                    rule: col(3),
                    source: col(4),
                    observed_by: col(5),
                    catalogue_level: (!catalogue.is_empty() && Level::parse(catalogue) != level)
                        .then(|| Level::parse(catalogue)),
                    decision: col(7),
                    restates: restated_by(col(7)),
                }
            })
            .collect()
    })
}

/// The rule IDs a decision says its rule restates: those named after `Restates ` up to the
/// end of that clause (`:` or `.`).
fn restated_by(decision: &'static str) -> Vec<&'static str> {
    let Some(at) = decision.find("Restates ") else {
        return Vec::new();
    };
    let clause = &decision[at + "Restates ".len()..];
    let clause = &clause[..clause.find([':', '.']).unwrap_or(clause.len())];
    clause
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| {
            w.split_once('-').is_some_and(|(f, n)| {
                !f.is_empty()
                    && f.bytes().all(|b| b.is_ascii_uppercase())
                    && n.len() == 2
                    && n.bytes().all(|b| b.is_ascii_digit())
            })
        })
        .collect()
}

fn index() -> &'static BTreeMap<&'static str, &'static Rule> {
    static IDX: OnceLock<BTreeMap<&'static str, &'static Rule>> = OnceLock::new();
    IDX.get_or_init(|| all().iter().map(|r| (r.id, r)).collect())
}

/// The rule with this ID, if the catalogue has it.
pub fn lookup(id: &str) -> Option<&'static Rule> {
    index().get(id).copied()
}

/// The rule with this ID; for IDs that code cites, which a unit test proves exist.
pub fn get(id: &str) -> &'static Rule {
    lookup(id).unwrap_or_else(|| panic!("rule {id} cited by code is not in the catalogue"))
}

/// All IDs, for did-you-mean suggestions.
pub fn ids() -> impl Iterator<Item = &'static str> {
    all().iter().map(|r| r.id)
}

/// The family prefixes, in catalogue order.
pub fn families() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in all() {
        if !out.contains(&r.family()) {
            out.push(r.family());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_has_the_shared_rules_with_profiles() {
        assert!(all().len() >= 134);
        let r = get("ETAG-07");
        assert_eq!(r.level, Level::Must);
        assert_eq!(r.family(), "ETAG");
        assert_eq!(r.profile, Profile::Arm);
        assert_eq!(get("HDR-02").level, Level::Should);
        assert_eq!(get("OPS-01").profile, Profile::AroHcp);
        assert_eq!(get("OPS-07").profile, Profile::Arm);
        assert_eq!(get("PROP-01").profile, Profile::Propagation);
        assert_eq!(get("MON-01").profile, Profile::AzureCoreLro);
        assert_eq!(get("TASK-01").profile, Profile::TaskApi);
        let mut seen = std::collections::BTreeSet::new();
        for r in all() {
            assert!(seen.insert(r.id), "duplicate id {}", r.id);
            assert!(!r.rule.is_empty() && !r.source.is_empty(), "{}", r.id);
        }
    }

    #[test]
    fn every_aro_hcp_rule_says_why_it_is_not_arm() {
        let aro: Vec<&Rule> = all()
            .iter()
            .filter(|r| r.profile == Profile::AroHcp)
            .collect();
        assert!(!aro.is_empty(), "no aro-hcp rule");
        for r in aro {
            assert!(!r.decision.is_empty(), "{} has no decision", r.id);
        }
    }

    /// One defect, one failed rule: what each rule restates is read from its decision, names
    /// rules of the catalogue, never itself, and no rule restates a rule that restates it.
    #[test]
    fn restated_rules_come_from_the_decisions() {
        assert_eq!(
            restated_by("Kept. Restates DEL-01 and LOC-01 on the same exchange: not judged."),
            vec!["DEL-01", "LOC-01"]
        );
        assert!(restated_by("Kept MUST (DEL-01 is close).").is_empty());
        for id in ["ETAG-18", "ETAG-20", "ETAG-22", "NEST-03"] {
            assert_eq!(get(id).restates, vec!["DEL-01"], "{id}");
        }
        assert_eq!(get("AAO-02").restates, vec!["OPRES-01"]);
        assert!(get("LOC-01").restates.contains(&"OPRES-01"));
        for r in all() {
            for x in &r.restates {
                let root = lookup(x).unwrap_or_else(|| panic!("{} restates unknown {x}", r.id));
                assert_ne!(root.id, r.id);
                assert!(
                    !root.restates.contains(&r.id),
                    "{} and {x} restate each other",
                    r.id
                );
            }
        }
    }

    /// The statements agree with the shared catalogue, when it is beside the checkout.
    #[test]
    fn statements_follow_the_shared_catalogue() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/contract/rules.md");
        let Ok(md) = std::fs::read_to_string(&path) else {
            // Under CI the shared tree is always beside the checkout: its absence is a fault.
            assert!(
                std::env::var("CI").map_or(true, |v| v.is_empty() || v == "false" || v == "0"),
                "{} is missing",
                path.display()
            );
            return;
        };
        let mut shared = std::collections::BTreeSet::new();
        for line in md.lines() {
            let cells: Vec<&str> = line.split(" | ").collect();
            if cells.len() < 5 || !cells[0].starts_with("| ") || cells[0] == "| ID" {
                continue;
            }
            let id = cells[0].trim_start_matches("| ");
            let r = lookup(id).unwrap_or_else(|| panic!("{id} of rules.md is not catalogued"));
            assert_eq!(r.rule, cells[2], "{id}: run tools/refresh-catalogue.py");
            shared.insert(id.to_string());
        }
        // A table whose layout changed would compare nothing and pass.
        assert!(
            shared.len() > 100,
            "only {} catalogued rules found in the shared rules.md table",
            shared.len()
        );
        // Every other rule is the project's own, and says so.
        for r in all().iter().filter(|r| !shared.contains(r.id)) {
            assert!(
                r.decision.contains("project's own rule") || r.decision.starts_with("Project rule"),
                "{} is in no shared table and its decision does not say it is the project's own",
                r.id
            );
        }
    }
}
