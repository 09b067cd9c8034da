//! The rules: the catalogue and the engine that judges exchanges against it. Every verdict the
//! tool reports is made here, whichever front end produced the exchanges.
//!
//! - `catalogue`: every rule with its ID, level, profile, statement, source and the project's
//!   decision (`catalogue.tsv`).
//! - `ledger`: a test's findings per rule (passes, failures with a count, "not judged" reasons).
//! - `engine`: the [`Judge`] a front end feeds; `flow` and `records` are what it is fed beyond
//!   single exchanges (a followed operation, a monitor, a task write, a sweep).
//! - one module per family holds that family's judgements: `hdr`, `err`, `etag`, `put`, `patch`,
//!   `del`, `act`, `loc`, `aao`, `opres`, `pstate`, `rgdel`, `retry`, `res`, `mon`, `ops`, `task`.
//!   Families whose rules need requests of their own (most of ACT, NEST, SKU, PROP, API, most of
//!   ETAG and OPS) are stated in the suites (`suites/*.yaml`), each expectation citing its rule ID, and
//!   judged by `expect`.
//! - `shown`: what earlier exchanges showed about each resource (exists, settled, missing),
//!   kept in the judge's `History` for DEL-01, DEL-05 and PUT-01.
//! - `iso8601`: the date-times operation resources carry.
//!
//! Tests: `testing` builds exchanges, flows and records by hand and judges them with the
//! embedded target; every family module's `tests::CASES` shows each of its rules failing and
//! passing; `stated` does the same for the rules only the suites state, with the suites' own
//! expectations; `cases` walks the catalogue and fails when a rule has no failing or no
//! passing case that runs as it says.

mod aao;
mod act;
#[cfg(test)]
mod cases;
pub mod catalogue;
mod del;
mod engine;
mod err;
mod etag;
pub mod expect;
pub(crate) mod fd;
pub mod field;
pub mod flow;
mod hdr;
pub mod implied;
pub mod iso8601;
mod ledger;
mod loc;
mod mon;
mod opres;
pub(crate) mod ops;
mod patch;
mod pstate;
mod put;
mod recent;
mod records;
mod res;
mod retry;
mod rgdel;
mod shown;
mod spec;
#[cfg(test)]
#[path = "stated_tests.rs"]
mod stated;
#[cfg(test)]
#[path = "stated_rpc_tests.rs"]
mod stated_rpc;
mod task;
#[cfg(test)]
pub(crate) mod testing;
pub mod words;

pub use catalogue::{
    Level, Profile, Rule, all, catalogue_id, families, family_of, get, ids, lookup,
};
pub use engine::{Judge, Registry, Stripped};
pub use ledger::{Cause, Finding, Ledger, NOT_APPLICABLE, Outcome, RuleTally, inapplicable};
pub use records::{MonitorRecord, SweepRecord, TaskRecord, TaskWrite};

/// When the engine judges a rule by itself, as the rule's family module declares it (its
/// `SHOWS`): what a test's steps must make the RP show for the rule to get a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shows {
    /// Any ARM answer.
    Any,
    /// Any answer on any surface (the SPEC rules: the spec describes the data plane and task
    /// APIs too).
    Every,
    /// The answer to a write (of this method).
    Write(Option<&'static str>),
    /// A followed operation (of this method).
    Follow(Option<&'static str>),
    /// Only where a test states it.
    Stated,
}

/// When the engine judges `id` by itself (its family's declaration; a family that declares
/// nothing judges its rules on any ARM answer).
pub fn shows(id: &str) -> Shows {
    let (default, rules) = match family_of(id) {
        "LOC" => loc::SHOWS,
        "AAO" => aao::SHOWS,
        "DEL" => del::SHOWS,
        "PUT" => put::SHOWS,
        "PATCH" => patch::SHOWS,
        "ACT" => act::SHOWS,
        "PSTATE" => pstate::SHOWS,
        "OPS" => ops::SHOWS,
        "OPRES" => opres::SHOWS,
        "MON" => mon::SHOWS,
        "TASK" => task::SHOWS,
        "RGDEL" => rgdel::SHOWS,
        "SPEC" => spec::SHOWS,
        "FD" => fd::SHOWS,
        _ => (Shows::Any, &[][..]),
    };
    rules
        .iter()
        .find(|(r, _)| *r == id)
        .map_or(default, |(_, s)| *s)
}

/// The rules of the target's profiles whose subject the target itself never declares (no
/// ETag-capable type, no proxy type, a spec that marks no secret), each with why: not
/// applicable to it whatever a run sees. Each family says it of its own rules (its
/// `undeclared`); the run records it with its settings and the conformance view reads it.
/// What a target does declare, the RP may still never offer (a synchronous PATCH, no
/// Retry-After): that is decided on its answers, by the family's judgement.
pub fn undeclared_subjects(
    target: &crate::target::Target,
) -> std::collections::BTreeMap<String, String> {
    [etag::undeclared, res::undeclared, spec::undeclared]
        .into_iter()
        .flat_map(|f| f(target))
        .filter(|(rule, _)| lookup(rule).is_some_and(|r| target.profiles.contains(&r.profile)))
        .map(|(rule, why)| (rule.to_string(), why))
        .collect()
}

/// The sources of the family modules, with their family, for listing which rules the engine
/// judges by itself.
const FAMILY_SOURCES: &[(&str, &str)] = &[
    ("HDR", include_str!("hdr.rs")),
    ("ERR", include_str!("err.rs")),
    ("ETAG", include_str!("etag.rs")),
    ("PUT", include_str!("put.rs")),
    ("PATCH", include_str!("patch.rs")),
    ("DEL", include_str!("del.rs")),
    ("ACT", include_str!("act.rs")),
    ("LOC", include_str!("loc.rs")),
    ("AAO", include_str!("aao.rs")),
    ("OPRES", include_str!("opres.rs")),
    ("PSTATE", include_str!("pstate.rs")),
    ("RGDEL", include_str!("rgdel.rs")),
    ("RETRY", include_str!("retry.rs")),
    ("RES", include_str!("res.rs")),
    ("SPEC", include_str!("spec.rs")),
    ("MON", include_str!("mon.rs")),
    ("OPS", include_str!("ops.rs")),
    ("TASK", include_str!("task.rs")),
    ("FD", include_str!("fd.rs")),
];

/// The rules the engine judges on its own (on every exchange, or on every followed operation
/// or record), without a suite stating them: the IDs the family modules' code cites (their
/// unit tests, after `#[cfg(test)]`, cite what they show and do not count).
pub fn engine_rules() -> &'static [&'static str] {
    static IDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    IDS.get_or_init(|| {
        let mut out: Vec<&'static str> = ids()
            .filter(|id| {
                let quoted = format!("\"{id}\"");
                FAMILY_SOURCES
                    .iter()
                    .any(|(_, src)| judging_code(src).contains(&quoted))
            })
            .collect();
        out.sort_unstable();
        out
    })
}

/// A family module's source without its unit tests.
fn judging_code(src: &str) -> &str {
    src.split("#[cfg(test)]").next().unwrap_or(src)
}

#[cfg(test)]
mod tests {
    /// A target of one tracked type without ETags (what `init` writes for many real RPs).
    fn plain_target() -> crate::target::Target {
        let yaml = "base_url: http://127.0.0.1:1\nauth: none\nsubscription: 00000000-0000-0000-0000-00000000c0de\nresource_group: {name: rg}\nprofiles: [arm]\nnamespace: Microsoft.Contoso\napi_version: \"2024-05-01\"\nlocation: eastus\ntypes:\n  widgets:\n    kind: tracked\n    async: true\n    etag: false\n    create_body: {location: eastus, properties: {size: 3}}\n";
        crate::target::parse_target(std::path::Path::new("plain.yaml"), yaml, "plain")
            .unwrap_or_else(|r| panic!("{}", r.render()))
    }

    #[test]
    fn rules_whose_subject_the_target_never_declares_are_named_with_why() {
        let mut t = plain_target();
        let na = super::undeclared_subjects(&t);
        assert_eq!(na.keys().collect::<Vec<_>>(), ["ETAG-24", "RES-04"]);
        assert!(na["ETAG-24"].starts_with("no type in the target has: etag"));
        assert!(na["RES-04"].starts_with("no type in the target has: kind proxy"));
        // A spec that marks no secret: SPEC-06 too (its profile comes with the spec).
        let doc = serde_json::json!({"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}});
        let specs =
            crate::spec::Specs::from_documents(&[("t.json".into(), doc.to_string(), doc)]).unwrap();
        t.attach_specs(std::sync::Arc::new(specs), "test");
        let na = super::undeclared_subjects(&t);
        assert!(na["SPEC-06"].starts_with("the spec marks no property `x-ms-secret: true`"));
        // The reference RP's target declares all of them (and its spec has a secret).
        assert!(super::undeclared_subjects(&super::testing::target()).is_empty());
        // What the target declares is also what each rule is judged on: ETAG-24 needs a type
        // declared ETag-capable.
        let widget = crate::rules::testing::exchange(
            "GET",
            "http://127.0.0.1:1/subscriptions/00000000-0000-0000-0000-00000000c0de/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01",
            200,
            &[],
            crate::rules::testing::widget("Succeeded"),
        );
        let (o, _, _) = super::testing::judged_on(&plain_target(), "ETAG-24", &[widget], false);
        assert_eq!(o, super::Outcome::NotJudged);
    }
    #[test]
    fn engine_rules_are_cited_by_judging_code_not_by_tests() {
        let src = "fn f() { check(\"HDR-01\") }\n#[cfg(test)]\nmod tests { \"HDR-02\" }";
        assert_eq!(super::judging_code(src), "fn f() { check(\"HDR-01\") }\n");
        let judged = super::engine_rules();
        // Stated by the suites only: never in a family's judging code.
        for id in ["ETAG-03", "NEST-01", "SKU-02", "MON-08", "OPS-02", "API-01"] {
            assert!(!judged.contains(&id), "{id}");
        }
    }

    #[test]
    fn every_rule_the_engine_cites_exists_and_lives_in_its_family() {
        let re = regex::Regex::new(r#""([A-Z]{2,6})-(\d\d)""#).unwrap();
        // A verdict recorded on the ledger names the rule first; other rules a family cites
        // are causes (`cause_among(…, &["LOC-02"])`: not judged because that one failed).
        let judging = regex::Regex::new(
            r#"\.(check|fail|pass|not_judged|not_applicable)\(\s*"([A-Z]{2,6})-(\d\d)""#,
        )
        .unwrap();
        let mut cited = 0;
        for (family, src) in super::FAMILY_SOURCES {
            for c in re.captures_iter(super::judging_code(src)) {
                let id = format!("{}-{}", &c[1], &c[2]);
                assert!(
                    super::lookup(&id).is_some(),
                    "{id} is cited but not catalogued"
                );
                cited += 1;
            }
            for c in judging.captures_iter(super::judging_code(src)) {
                let id = format!("{}-{}", &c[2], &c[3]);
                assert_eq!(&c[2], *family, "{id} is judged outside its family");
            }
        }
        assert!(cited > 0, "no rule cited");
        let judged = super::engine_rules();
        for id in [
            "HDR-01", "LOC-05", "PUT-02", "MON-06", "TASK-06", "RGDEL-03", "OPRES-09",
        ] {
            assert!(judged.contains(&id), "{id}");
        }
    }
}
