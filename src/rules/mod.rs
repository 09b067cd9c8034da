//! The rule catalogue: every contract rule with its stable ID, level, statement and source.
//!
//! The data lives in `catalogue.tsv` (generated from `shared/contract/rules.md`, with the
//! project's own additions at the end) and is compiled into the binary. Checks cite rules by
//! ID; [`lookup`] turns an ID into the [`Rule`] with its level, which decides whether a failure
//! fails the run (MUST) or warns (SHOULD). The checks themselves live in `crate::checks`.

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
}

/// One contract rule.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rule {
    pub id: &'static str,
    pub level: Level,
    pub rule: &'static str,
    pub source: &'static str,
    pub observed_by: &'static str,
}

impl Rule {
    /// The area prefix (`ETAG` of `ETAG-07`).
    pub fn family(&self) -> &'static str {
        self.id.split('-').next().unwrap_or(self.id)
    }
}

const DATA: &str = include_str!("catalogue.tsv");

/// All rules, in catalogue order.
pub fn all() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        DATA.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|line| {
                let f: Vec<&'static str> = line.split('\t').collect();
                let level = match f.get(1).copied() {
                    Some("MUST") => Level::Must,
                    Some("SHOULD") => Level::Should,
                    _ => Level::May,
                };
                Rule {
                    id: f[0],
                    level,
                    rule: f.get(2).copied().unwrap_or(""),
                    source: f.get(3).copied().unwrap_or(""),
                    observed_by: f.get(4).copied().unwrap_or(""),
                }
            })
            .collect()
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_has_the_shared_rules() {
        assert!(all().len() >= 132);
        let r = get("ETAG-07");
        assert_eq!(r.level, Level::Must);
        assert_eq!(r.family(), "ETAG");
        assert_eq!(get("HDR-02").level, Level::Should);
        let mut seen = std::collections::BTreeSet::new();
        for r in all() {
            assert!(seen.insert(r.id), "duplicate id {}", r.id);
            assert!(!r.rule.is_empty() && !r.source.is_empty(), "{}", r.id);
        }
    }
}
