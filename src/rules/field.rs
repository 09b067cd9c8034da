//! How often real traffic breaks each rule: the verdicts `rpconform replay` gives on the real
//! Azure SDK recordings kept as fixtures (`tests/fixtures/recordings`, 10+ shipping RPs), per
//! rule: in how many recordings it was judged, in how many it failed, and which RPs those were.
//! `field.tsv` is written and checked by `tests/field_rates.rs` (a replay of the fixtures), so
//! it never goes stale; `rpconform rules` and the conformance view show it beside a rule, so a
//! team reads its failure beside the field's.

use std::collections::HashMap;
use std::sync::OnceLock;

/// One rule's rate over the fixtures.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FieldRate {
    /// Recordings in which the rule got a verdict.
    pub judged: u32,
    /// Recordings in which it failed.
    pub failed: u32,
    /// The RPs (SDK packages) of those recordings.
    pub rps: Vec<&'static str>,
}

impl FieldRate {
    /// `broken in 3 of 21 real recordings (network, compute)`.
    pub fn describe(&self) -> String {
        if self.failed == 0 {
            return format!("held in all {} real recordings that show it", self.judged);
        }
        format!(
            "broken in {} of {} real recordings ({})",
            self.failed,
            self.judged,
            self.rps.join(", ")
        )
    }
}

const TABLE: &str = include_str!("field.tsv");

fn table() -> &'static HashMap<&'static str, FieldRate> {
    static T: OnceLock<HashMap<&'static str, FieldRate>> = OnceLock::new();
    T.get_or_init(|| {
        TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let f: Vec<&'static str> = l.split('\t').collect();
                Some((
                    *f.first()?,
                    FieldRate {
                        judged: f.get(1)?.parse().ok()?,
                        failed: f.get(2)?.parse().ok()?,
                        rps: f
                            .get(3)
                            .map(|s| s.split(',').filter(|x| !x.is_empty()).collect())
                            .unwrap_or_default(),
                    },
                ))
            })
            .collect()
    })
}

/// The rule's rate over the real recordings, when any of them shows it.
pub fn rate(id: &str) -> Option<&'static FieldRate> {
    table().get(id)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_row_names_a_catalogued_rule_and_adds_up() {
        let t = super::table();
        assert!(!t.is_empty());
        for (id, r) in t {
            assert!(crate::rules::lookup(id).is_some(), "{id}");
            assert!(r.failed <= r.judged, "{id}");
            assert_eq!(r.failed == 0, r.rps.is_empty(), "{id}");
        }
    }
}
