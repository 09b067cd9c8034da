//! `rpconform rules`: the catalogue as rpconform judges it, with each rule's profile, level,
//! where it is judged (the engine on its own, or the suites that state it) and the project's
//! decision about it. Filters: `--profile`, `--family`, `--rule`. Text is wrapped, never cut.

use std::collections::BTreeMap;

use super::args::RulesArgs;
use super::{EXIT_OK, EXIT_USAGE};
use crate::rules::{Profile, Rule};
use crate::scenario::{LoadOptions, load_suites};

/// Which suites cite each rule (best effort: suites that fail to load show no coverage).
fn coverage(suites: &[String]) -> BTreeMap<&'static str, Vec<String>> {
    let mut out: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let (paths, _) = super::common::suite_paths(&[], suites, false);
    let Ok(schema_dir) = super::common::schema_dir(&[], &paths) else {
        return out;
    };
    let opts = LoadOptions { schema_dir };
    if let Ok(loaded) = load_suites(&paths, &opts) {
        for s in &loaded {
            for sc in &s.scenarios {
                for r in sc.rules() {
                    let e = out.entry(r).or_default();
                    if !e.contains(&s.name) {
                        e.push(s.name.clone());
                    }
                }
            }
        }
    }
    out
}

/// Wrap text at `width` columns, each line indented.
fn wrap(text: &str, indent: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > width {
            out.push_str(indent);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(indent);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The rules the filters select, or why the filters are wrong.
pub(super) fn select(
    profiles: &[String],
    families: &[String],
    ids: &[String],
) -> Result<Vec<&'static Rule>, String> {
    let mut ps = Vec::new();
    for p in profiles {
        match Profile::from_name(p) {
            Some(x) => ps.push(x),
            None => {
                let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
                return Err(format!(
                    "unknown profile `{p}` (one of: {})",
                    names.join(", ")
                ));
            }
        }
    }
    let fams = crate::rules::families();
    for f in families {
        if !fams.iter().any(|x| x.eq_ignore_ascii_case(f)) {
            return Err(format!(
                "unknown family `{f}` (one of: {})",
                fams.join(", ")
            ));
        }
    }
    for id in ids {
        if crate::rules::lookup(&id.to_ascii_uppercase()).is_none() {
            return Err(format!("unknown rule `{id}`"));
        }
    }
    Ok(crate::rules::all()
        .iter()
        .filter(|r| ps.is_empty() || ps.contains(&r.profile))
        .filter(|r| {
            families.is_empty() || families.iter().any(|f| f.eq_ignore_ascii_case(r.family()))
        })
        .filter(|r| ids.is_empty() || ids.iter().any(|i| i.eq_ignore_ascii_case(r.id)))
        .collect())
}

pub(super) fn rules(a: RulesArgs) -> u8 {
    let selected = match select(&a.profiles, &a.families, &a.rules) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let cov = coverage(&a.suites);
    let engine = crate::rules::engine_rules();
    let judged_by = |r: &Rule| {
        let mut v: Vec<String> = Vec::new();
        if engine.contains(&r.id) {
            v.push("engine".into());
        }
        v.extend(cov.get(r.id).cloned().unwrap_or_default());
        v
    };
    if a.format == "json" {
        let v: Vec<serde_json::Value> = selected
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id, "level": r.level.as_str(), "profile": r.profile.name(),
                    "family": r.family(), "rule": r.rule, "source": r.source,
                    "observed_by": r.observed_by,
                    "catalogue_level": r.catalogue_level.map(|l| l.as_str()),
                    "decision": r.decision,
                    "judged_by": judged_by(r),
                    "field": crate::rules::field::rate(r.id),
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&v).unwrap_or_default() + "\n";
        return print_all(&text);
    }
    let mut out = String::new();
    for r in &selected {
        let by = judged_by(r);
        let level = match r.catalogue_level {
            Some(c) => format!("{} (catalogue: {})", r.level.as_str(), c.as_str()),
            None => r.level.as_str().to_string(),
        };
        out.push_str(&format!(
            "{}  {}  profile {}  judged by: {}\n",
            r.id,
            level,
            r.profile.name(),
            if by.is_empty() {
                "-".into()
            } else {
                by.join(", ")
            }
        ));
        out.push_str(&wrap(r.rule, "    ", 100));
        out.push_str(&wrap(&format!("source: {}", r.source), "    ", 100));
        if !r.decision.is_empty() {
            out.push_str(&wrap(&format!("decision: {}", r.decision), "    ", 100));
        }
        if let Some(f) = crate::rules::field::rate(r.id) {
            out.push_str(&wrap(
                &format!("real traffic: {}", f.describe()),
                "    ",
                100,
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!("{} rules\n", selected.len()));
    print_all(&out)
}

/// Write to stdout; a reader that went away (`rpconform rules | head`) ends the listing
/// quietly, as for the other listing commands.
fn print_all(text: &str) -> u8 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_select_by_profile_family_and_id() {
        let hcp = select(&["aro-hcp".into()], &[], &[]).unwrap();
        assert!(hcp.iter().any(|r| r.id == "OPS-01"));
        assert!(hcp.iter().all(|r| r.profile == Profile::AroHcp));
        let arm = select(&["arm".into()], &[], &[]).unwrap();
        assert!(!arm.iter().any(|r| r.id == "OPS-01"));
        assert!(arm.iter().any(|r| r.id == "OPS-07"));
        assert_eq!(select(&[], &["etag".into()], &[]).unwrap().len(), 26);
        assert_eq!(select(&[], &[], &["loc-02".into()]).unwrap().len(), 1);
        assert!(select(&["aro".into()], &[], &[]).is_err());
        assert!(select(&[], &["NOPE".into()], &[]).is_err());
    }

    #[test]
    fn wrapping_never_cuts_text() {
        let long = "word ".repeat(60);
        let w = wrap(&long, "  ", 40);
        assert_eq!(w.split_whitespace().count(), 60);
        assert!(w.lines().all(|l| l.len() <= 40));
    }
}
