//! Variant knobs: each [`Variant`] switches the reference RP to another behaviour that the
//! contract sources ALLOW (and that real RPs ship), so a tester can be proven to pass on it.
//! With any set of variants on, and no fault, the RP still satisfies every MUST rule of
//! `shared/contract/rules.md`; [`Variant::departs_from`] names the few SHOULD-level (or
//! disputed) rules a variant's real-RP behaviour is at odds with.
//!
//! Variants combine with faults: where a fault acts on an answer a variant changes, the fault's
//! answer is sent, so the fault still breaks its rule. The few faults whose break a variant
//! makes unobservable are listed by [`Variant::hides_faults`].
//!
//! [`Variant::conflicts`] lists the variants that cannot be on together;
//! [`Variant::compatible_set`] is one large set that can. [`target_hints`] says what a target
//! file must declare differently with a set of variants on.

mod hints;
mod table;

use std::collections::BTreeSet;

use crate::faults::Fault;

pub use hints::{TargetHints, target_hints};
use table::TABLE;

/// One legal behaviour the reference RP can switch to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// PATCH completes synchronously (200 Succeeded, no operation headers).
    SyncPatch,
    /// PUT is followed through provisioningState only (no AAO, no Location).
    PutProvisioningStateOnly,
    /// DELETE answers 202 with Location only.
    DeleteLocationOnly,
    /// A creating PUT answers 202 + Location; the resource stays invisible until done.
    Put202Location,
    /// The operation resource is `{"status"}` (+ `error`) only.
    OpStatusStatusOnly,
    /// RP-specific running values of operation status and create provisioningState.
    CustomRunningStates,
    /// No Retry-After on asynchronous answers.
    NoRetryAfter,
    /// Every 202 Location poll answers a new Location URL.
    NewLocationPerPoll,
    /// Azure-AsyncOperation under `.../locations/{l}/asyncoperations/{id}`.
    AaoAsyncOperations,
    /// Compute style `.../locations/{l}/operations/{id}` (+ `?monitor=true` for Location).
    OperationsMonitorTrue,
    /// Location under the original request URL: `{request path}/operationresults/{id}`.
    LocationUnderResource,
    /// Operation times with 7 fractional digits and `+00:00`.
    FractionalTimestamps,
    /// Fractional percentComplete.
    FractionalPercent,
    /// Weak ETags (`W/"…"`), compared by opaque tag.
    WeakEtags,
    /// Resource bodies carry `etag`.
    EtagInBody,
    /// Error objects with target, details, innererror and additionalInfo.
    RichErrors,
    /// One list item a page.
    PageSize1,
    /// Terminal operation status in lower case.
    LowercaseTerminalStatus,
    /// PUT answers with Azure-AsyncOperation only (no Location).
    AaoOnlyPut,
    /// DELETE of an existing resource answers 200 at once.
    DeleteSync200,
    /// A finished DELETE's Location answers 200 (no body) instead of 204.
    DeleteFinal200,
    /// A top-level resource being deleted answers 404 at once.
    DeleteHidesAtOnce,
    /// Operations end before their first answer.
    FastOperations,
    /// Retry-After: 2 on 200/201 answers.
    ShortRetryAfterOn2xx,
    /// x-ms-request-id values that are not GUIDs.
    RequestIdFormat,
    /// PATCH answers 202 + Azure-AsyncOperation + Location.
    Patch202,
    /// Operation resources with resourceId and lastTransitionTime.
    OperationExtraFields,
    /// Data plane: Retry-After: 1 on monitor reads.
    MonRetryAfter1,
    /// Data plane: no Operation-Id response header.
    MonNoOperationId,
    /// Data plane: widget PUT also answers Location (the widget URL).
    MonPutLocation,
    /// `If-Match: ""` (two quote characters) is read as the seed table's empty row (absent).
    QuotedEmptyIfMatchAbsent,
    /// A PUT or PATCH that names another `location` keeps the old one instead of refusing.
    LocationChangeIgnored,
}

/// Pairs of variants that cannot be on together: they answer the same request in
/// contradicting ways, or one makes the other's behaviour impossible to see.
const CONFLICTS: &[(Variant, Variant)] = {
    use Variant::*;
    &[
        (PutProvisioningStateOnly, Put202Location),
        (PutProvisioningStateOnly, AaoOnlyPut),
        (Put202Location, AaoOnlyPut),
        (FastOperations, PutProvisioningStateOnly),
        (FastOperations, Put202Location),
        (FastOperations, CustomRunningStates),
        (FastOperations, NewLocationPerPoll),
        (FastOperations, DeleteHidesAtOnce),
        (SyncPatch, Patch202),
        (DeleteSync200, DeleteLocationOnly),
        (DeleteSync200, DeleteFinal200),
        (DeleteSync200, DeleteHidesAtOnce),
        (AaoAsyncOperations, OperationsMonitorTrue),
        (LocationUnderResource, OperationsMonitorTrue),
        (NoRetryAfter, ShortRetryAfterOn2xx),
        (OpStatusStatusOnly, FractionalTimestamps),
        (OpStatusStatusOnly, FractionalPercent),
        (OpStatusStatusOnly, OperationExtraFields),
    ]
};

/// Variants left out of [`Variant::compatible_set`]; each conflicts with a member of it.
const LEFT_OUT: &[Variant] = &[
    Variant::SyncPatch,
    Variant::PutProvisioningStateOnly,
    Variant::Put202Location,
    Variant::OpStatusStatusOnly,
    Variant::NoRetryAfter,
    Variant::OperationsMonitorTrue,
    Variant::DeleteSync200,
    Variant::FastOperations,
];

impl Variant {
    fn row(self) -> &'static table::Row {
        // TABLE holds every variant exactly once, in declaration order (checked by a test).
        &TABLE[self as usize]
    }

    /// Every variant, in declaration order.
    pub fn all() -> Vec<Variant> {
        TABLE.iter().map(|r| r.variant).collect()
    }

    /// The kebab-case name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// One line saying what the RP does with the variant on.
    pub fn description(self) -> &'static str {
        self.row().description
    }

    /// Where the contract sources allow the behaviour (seed file § section, or rules.md).
    pub fn source(self) -> &'static str {
        self.row().source
    }

    /// The real-RP evidence in `shared/contract/real-rps.md`, where there is some.
    pub fn evidence(self) -> Option<&'static str> {
        self.row().evidence
    }

    /// Rules the behaviour is at odds with although real RPs ship it: SHOULD rules
    /// (OPRES-04, OPRES-09, DEL-02, LOC-09) whose failure does not fail a run, and PUT-02 for
    /// `fast-operations`, whose wording real-rps.md recommends relaxing. Empty for most.
    pub fn departs_from(self) -> &'static [&'static str] {
        self.row().departs_from
    }

    /// The variant with this name (case-insensitive, `_` accepted for `-`).
    pub fn from_name(name: &str) -> Option<Variant> {
        let wanted = name.trim().replace('_', "-");
        TABLE
            .iter()
            .find(|r| r.name.eq_ignore_ascii_case(&wanted))
            .map(|r| r.variant)
    }

    /// The variants that cannot be on together with this one.
    pub fn conflicts(self) -> Vec<Variant> {
        CONFLICTS
            .iter()
            .filter_map(|&(a, b)| {
                if a == self {
                    Some(b)
                } else if b == self {
                    Some(a)
                } else {
                    None
                }
            })
            .collect()
    }

    /// One large set of variants that can all be on at once (every variant left out
    /// conflicts with one in the set).
    pub fn compatible_set() -> Vec<Variant> {
        Variant::all()
            .into_iter()
            .filter(|v| !LEFT_OUT.contains(v))
            .collect()
    }

    /// The first conflicting pair in `set`, if any.
    pub fn conflict_in(set: &BTreeSet<Variant>) -> Option<(Variant, Variant)> {
        CONFLICTS
            .iter()
            .copied()
            .find(|(a, b)| set.contains(a) && set.contains(b))
    }

    /// Faults whose rule break a tester cannot reliably observe while this variant is on (for
    /// a fault matrix to skip the pair). Every other fault still breaks its rules with the
    /// variant on: where both act on one answer, the fault's answer is sent.
    pub fn hides_faults(self) -> &'static [Fault] {
        use Fault::*;
        match self {
            // Nothing ever runs: every fault that acts while an operation runs is invisible.
            Variant::FastOperations => &[
                OpResult200WhileRunning,
                OpStatus404WhileRunning,
                OpStatus500WhileRunning,
                CanceledWithoutError,
                TerminalStateInPutResponse,
                NoStateWhileProvisioning,
                AllowConcurrentWrite,
                DeleteNoCancel,
                NoPropagation,
                PropagateToSiblings,
                DeleteKeepsAncestors,
                DependantFollowsDependency,
                GrandparentNotUpdating,
                PutDuringOperationAccepted,
            ],
            // A synchronous DELETE leaves no running delete whose ancestors could show Updating.
            Variant::DeleteSync200 => &[DeleteKeepsAncestors],
            // A create answered 202 is invisible: there is no GET to omit the state from.
            Variant::Put202Location => &[NoStateWhileProvisioning],
            // Without the header, which id it echoes cannot be seen; and with the header
            // declared absent a tester has no header to send a client id in (MON-08).
            Variant::MonNoOperationId => &[MonOperationIdIgnored, MonRepeatStartsNew],
            _ => &[],
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Variant {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Variant::from_name(s).ok_or_else(|| format!("unknown variant `{s}`"))
    }
}

/// One line per variant: `name  description  [source: …]  [evidence: …]`, names padded to one
/// column (`evidence: none recorded` when real-rps.md has none).
pub fn list_variants_text() -> String {
    let all = Variant::all();
    let width = all.iter().map(|v| v.name().len()).max().unwrap_or(0);
    let mut out = String::new();
    for v in all {
        out.push_str(&format!(
            "{:width$}  {}  [source: {}]  [evidence: {}]",
            v.name(),
            v.description(),
            v.source(),
            v.evidence().unwrap_or("none recorded in real-rps.md"),
        ));
        if !v.departs_from().is_empty() {
            out.push_str(&format!("  [departs from: {}]", v.departs_from().join(",")));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order_and_names_round_trip() {
        for (i, r) in TABLE.iter().enumerate() {
            assert_eq!(r.variant as usize, i, "{} out of order", r.name);
        }
        assert_eq!(TABLE.len(), Variant::LocationChangeIgnored as usize + 1);
        let mut seen = BTreeSet::new();
        for v in Variant::all() {
            assert!(seen.insert(v.name()));
            assert_eq!(Variant::from_name(v.name()), Some(v));
            assert_eq!(v.name().parse::<Variant>(), Ok(v));
            assert_eq!(Variant::from_name(&v.name().replace('-', "_")), Some(v));
            assert!(!v.description().is_empty() && !v.source().is_empty());
        }
        assert!(Variant::all().len() >= 18);
        assert!("nope".parse::<Variant>().is_err());
    }

    #[test]
    fn conflicts_are_symmetric_and_the_compatible_set_is_maximal() {
        for v in Variant::all() {
            for c in v.conflicts() {
                assert!(c.conflicts().contains(&v), "{v} / {c}");
                assert_ne!(c, v);
            }
        }
        let set: BTreeSet<Variant> = Variant::compatible_set().into_iter().collect();
        assert_eq!(Variant::conflict_in(&set), None);
        for v in LEFT_OUT {
            assert!(
                v.conflicts().iter().any(|c| set.contains(c)),
                "{v} could join the compatible set"
            );
        }
    }

    #[test]
    fn listing_has_one_line_per_variant() {
        let text = list_variants_text();
        assert_eq!(text.lines().count(), Variant::all().len());
        assert!(text.lines().all(|l| l.contains("[source: ")));
        assert!(text.contains("Key Vault PUT 200 `RegisteringDns`"));
    }
}
