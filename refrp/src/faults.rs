//! Fault knobs: each [`Fault`] makes the reference RP break the named contract rules of
//! `shared/contract/rules.md` on purpose, and changes nothing else.
//!
//! The ARM knobs act on the ARM surface only; the `mon-*` knobs act on the data-plane surface
//! (`/dataplane`) and the task knobs on the task surface (`/v1`).
//!
//! A knob is identified by its kebab-case [`Fault::name`]; [`Fault::rules`] lists the rule IDs
//! it trips and [`Fault::description`] says in one line what the RP does instead.

/// One deliberate deviation from the ARM RP contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// LOC-02: Location headers are bare paths instead of absolute URIs.
    RelativeLocation,
    /// LOC-03: Retry-After is sent as an HTTP-date instead of whole seconds.
    RetryAfterDate,
    /// LOC-04: Retry-After is 5 seconds, below the contract's 10..600 range.
    RetryAfterOutOfRange,
    /// LOC-01, DEL-01: a DELETE answered 202 carries no Location header.
    DeleteNoLocation,
    /// LOC-05: operationResults answers 200 (resource or empty body) while the operation runs.
    OpResult200WhileRunning,
    /// OPRES-01: operationStatuses answers 404 while the operation runs.
    OpStatus404WhileRunning,
    /// OPRES-01, RETRY-01: operationStatuses answers 500 (no Retry-After) while the operation runs.
    OpStatus500WhileRunning,
    /// OPRES-08: a Failed operation resource has no `error`.
    FailedWithoutError,
    /// OPRES-08, OPS-03: a Canceled operation resource has no `error`.
    CanceledWithoutError,
    /// OPRES-03: a finished operation reports status `Completed` instead of `Succeeded`.
    UnknownTerminalStatus,
    /// OPRES-05: the operation resource's `name` is the resource name, not the operation id.
    OpStatusNameMismatch,
    /// OPRES-06: `startTime`/`endTime` use a US locale format instead of ISO 8601.
    OpStatusBadTime,
    /// OPRES-06: `percentComplete` is 150.
    PercentOutOfRange,
    /// ETAG-03, ETAG-05, ETAG-07, ETAG-16, ETAG-23: `If-Match` is ignored.
    IgnoreIfMatch,
    /// ETAG-09: `If-None-Match` is ignored.
    IgnoreIfNoneMatch,
    /// ETAG-25, ETAG-07, ETAG-16: a PUT or PATCH of an existing resource keeps the old ETag.
    EtagUnchangedOnUpdate,
    /// ETAG-10, ETAG-12, ETAG-14: PATCH of a missing resource creates it (201).
    PatchCreates,
    /// DEL-05, ETAG-17, ETAG-19, ETAG-21: DELETE of a missing resource answers 404.
    DeleteMissing404,
    /// PSTATE-04: a PUT body's differing `provisioningState` is silently ignored.
    EchoAcceptDifferent,
    /// PSTATE-03: a PUT body's `provisioningState` is refused even when it matches.
    EchoRejectMatching,
    /// PUT-02: the initial PUT response says `Succeeded` while the operation still runs.
    TerminalStateInPutResponse,
    /// PUT-03, PSTATE-05: GET omits `provisioningState` while a create runs.
    NoStateWhileProvisioning,
    /// RGDEL-01, RGDEL-03: a DELETE refused because of a dependant answers 500 instead of 409.
    DependencyDelete500,
    /// HDR-01: responses carry no `x-ms-request-id`.
    NoRequestId,
    /// HDR-03: `x-ms-client-request-id` and `x-ms-correlation-request-id` are not echoed.
    NoCorrelationEcho,
    /// ERR-01: error bodies are `{"code","message"}` without the `error` wrapper.
    FlatError,
    /// OPS-01: a write during an active operation is accepted instead of 409.
    AllowConcurrentWrite,
    /// OPS-03: DELETE leaves the resource's in-flight operation running to Succeeded.
    DeleteNoCancel,
    /// OPS-05: operation reads do not check the caller's identity headers.
    OpStatusAnyTenant,
    /// API-01: a request without `api-version` is served with the default version.
    MissingApiVersionAccepted,
    /// RES-05: list `nextLink` is a bare path.
    RelativeNextLink,
    /// OPS-12: resource names are matched case-sensitively.
    CaseSensitiveIds,
    /// SKU-05, SKU-01: `/skus` of a resource without alternative SKUs answers 404.
    EmptySkus404,
    /// OPS-10, PATCH-01: tags are not persisted (so a PATCH of the tags is not applied either).
    TagsDropped,
    /// OPS-09: the `x-ms-arm-resource-system-data` header is ignored.
    SystemDataIgnored,
    /// OPS-11: static validation is skipped; invalid bodies start an operation that fails.
    InvalidBodyAccepted,
    /// PROP-02, PROP-03: descendants keep their state while an ancestor is updated.
    NoPropagation,
    /// PROP-04: a child update also marks its siblings `Updating`.
    PropagateToSiblings,
    /// PROP-05: while a child is deleted, its ancestors keep their state instead of `Updating`.
    DeleteKeepsAncestors,
    /// PROP-06: a link shows `Updating` while the widget it depends on is updated.
    DependantFollowsDependency,
    /// PUT-01, ETAG-02, ETAG-04, ETAG-06, RETRY-02, OPS-12: PUT on an existing resource answers 201.
    ReplaceAnswers201,
    /// MON-01: a data-plane widget PUT answers without `Operation-Location`.
    MonNoOperationLocation,
    /// MON-04: a data-plane monitor shows its result field while the operation is not done.
    MonResultWhileRunning,
    /// MON-05: a data-plane monitor reporting failure has no error field.
    MonFailedWithoutError,
    /// MON-03: the export monitor reports `Succeeded` instead of its declared `Completed`.
    MonDefaultNamesOnCustom,
    /// MON-07: a client `Operation-Id` is not echoed; a server-made id is used instead.
    MonOperationIdIgnored,
    /// MON-06: the snapshot final `Location` keeps answering 404 after the monitor succeeded.
    MonFinalLocation404,
    /// MON-08: repeating a request with the same `Operation-Id` starts a second operation.
    MonRepeatStartsNew,
    /// TASK-02: a task goes from `processing-in-progress` back to `received` once.
    TaskStatusRegresses,
    /// TASK-03: a `processing-completed` task's `response` has no `resourceId`.
    TaskCompletedWithoutResourceId,
    /// TASK-03: a `processing-error` task's error has no description of the cause.
    TaskErrorWithoutDescription,
    /// TASK-05: GET of a subscription answers 202 with a `taskId` instead of the data.
    TaskGetAsync,
    /// TASK-06: a created subscription never leaves `pending`.
    ResourceStaysPending,
    /// TASK-01: every write on the task API answers the same `taskId`.
    TaskIdReused,
    /// TASK-08: after a completed DELETE task the subscription stays `deleting` forever.
    DeletedResourceRemains,
}

/// (variant, name, rules, description), in the order of [`Fault::all`].
const TABLE: &[(Fault, &str, &[&str], &str)] = &[
    (
        Fault::RelativeLocation,
        "relative-location",
        &["LOC-02"],
        "Location headers are bare paths",
    ),
    (
        Fault::RetryAfterDate,
        "retry-after-date",
        &["LOC-03"],
        "Retry-After is an HTTP-date",
    ),
    (
        Fault::RetryAfterOutOfRange,
        "retry-after-out-of-range",
        &["LOC-04"],
        "Retry-After is 5 seconds",
    ),
    (
        Fault::DeleteNoLocation,
        "delete-no-location",
        &["LOC-01", "DEL-01"],
        "DELETE answers 202 without Location",
    ),
    (
        Fault::OpResult200WhileRunning,
        "opresult-200-while-running",
        &["LOC-05"],
        "operationResults answers 200 while the operation runs",
    ),
    (
        Fault::OpStatus404WhileRunning,
        "opstatus-404-while-running",
        &["OPRES-01"],
        "operationStatuses answers 404 while the operation runs",
    ),
    (
        Fault::OpStatus500WhileRunning,
        "opstatus-500-while-running",
        &["OPRES-01", "RETRY-01"],
        "operationStatuses answers 500 without Retry-After while the operation runs",
    ),
    (
        Fault::FailedWithoutError,
        "failed-without-error",
        &["OPRES-08"],
        "a Failed operation has no error",
    ),
    (
        Fault::CanceledWithoutError,
        "canceled-without-error",
        &["OPRES-08", "OPS-03"],
        "a Canceled operation has no error",
    ),
    (
        Fault::UnknownTerminalStatus,
        "unknown-terminal-status",
        &["OPRES-03"],
        "a finished operation says Completed instead of Succeeded",
    ),
    (
        Fault::OpStatusNameMismatch,
        "opstatus-name-mismatch",
        &["OPRES-05"],
        "the operation's name is the resource name, not the last segment of its id",
    ),
    (
        Fault::OpStatusBadTime,
        "opstatus-bad-time",
        &["OPRES-06"],
        "startTime/endTime are not ISO 8601 (11/22/2026 10:00:00 AM)",
    ),
    (
        Fault::PercentOutOfRange,
        "percent-out-of-range",
        &["OPRES-06"],
        "percentComplete is 150",
    ),
    (
        Fault::IgnoreIfMatch,
        "ignore-if-match",
        &["ETAG-03", "ETAG-05", "ETAG-07", "ETAG-16", "ETAG-23"],
        "If-Match is ignored on PUT, PATCH and DELETE",
    ),
    (
        Fault::IgnoreIfNoneMatch,
        "ignore-if-none-match",
        &["ETAG-09"],
        "If-None-Match is ignored on PUT",
    ),
    (
        Fault::EtagUnchangedOnUpdate,
        "etag-unchanged-on-update",
        &["ETAG-25", "ETAG-07", "ETAG-16"],
        "PUT/PATCH of an existing resource keeps its ETag",
    ),
    (
        Fault::PatchCreates,
        "patch-creates",
        &["ETAG-10", "ETAG-12", "ETAG-14"],
        "PATCH of a missing resource creates it",
    ),
    (
        Fault::DeleteMissing404,
        "delete-missing-404",
        &["DEL-05", "ETAG-17", "ETAG-19", "ETAG-21"],
        "DELETE of a missing resource answers 404",
    ),
    (
        Fault::EchoAcceptDifferent,
        "echo-accept-different",
        &["PSTATE-04"],
        "a PUT with a different provisioningState is accepted",
    ),
    (
        Fault::EchoRejectMatching,
        "echo-reject-matching",
        &["PSTATE-03"],
        "a PUT with any provisioningState is refused with 400",
    ),
    (
        Fault::TerminalStateInPutResponse,
        "terminal-state-in-put-response",
        &["PUT-02"],
        "the initial PUT response says Succeeded while the operation runs",
    ),
    (
        Fault::NoStateWhileProvisioning,
        "no-state-while-provisioning",
        &["PUT-03", "PSTATE-05"],
        "GET omits provisioningState while a create runs",
    ),
    (
        Fault::DependencyDelete500,
        "dependency-delete-500",
        &["RGDEL-01", "RGDEL-03"],
        "DELETE of a widget still in use answers 500 instead of 409",
    ),
    (
        Fault::NoRequestId,
        "no-request-id",
        &["HDR-01"],
        "no x-ms-request-id header",
    ),
    (
        Fault::NoCorrelationEcho,
        "no-correlation-echo",
        &["HDR-03"],
        "client-request-id and correlation-request-id are not echoed",
    ),
    (
        Fault::FlatError,
        "flat-error",
        &["ERR-01"],
        "error bodies lack the top-level error object",
    ),
    (
        Fault::AllowConcurrentWrite,
        "allow-concurrent-write",
        &["OPS-01"],
        "a write during an active operation is accepted",
    ),
    (
        Fault::DeleteNoCancel,
        "delete-no-cancel",
        &["OPS-03"],
        "DELETE leaves the in-flight operation running to Succeeded",
    ),
    (
        Fault::OpStatusAnyTenant,
        "opstatus-any-tenant",
        &["OPS-05"],
        "operation reads ignore the identity headers",
    ),
    (
        Fault::MissingApiVersionAccepted,
        "missing-api-version-accepted",
        &["API-01"],
        "a request without api-version is served",
    ),
    (
        Fault::RelativeNextLink,
        "relative-next-link",
        &["RES-05"],
        "nextLink is a bare path",
    ),
    (
        Fault::CaseSensitiveIds,
        "case-sensitive-ids",
        &["OPS-12"],
        "resource names are matched case-sensitively",
    ),
    (
        Fault::EmptySkus404,
        "empty-skus-404",
        &["SKU-05", "SKU-01"],
        "/skus without alternative SKUs answers 404",
    ),
    (
        Fault::TagsDropped,
        "tags-dropped",
        &["OPS-10", "PATCH-01"],
        "tags are not stored",
    ),
    (
        Fault::SystemDataIgnored,
        "system-data-ignored",
        &["OPS-09"],
        "x-ms-arm-resource-system-data is ignored",
    ),
    (
        Fault::InvalidBodyAccepted,
        "invalid-body-accepted",
        &["OPS-11"],
        "invalid bodies start an operation that fails later",
    ),
    (
        Fault::NoPropagation,
        "no-propagation",
        &["PROP-02", "PROP-03"],
        "descendants keep their state during an ancestor's update",
    ),
    (
        Fault::PropagateToSiblings,
        "propagate-to-siblings",
        &["PROP-04"],
        "a child update also marks its siblings Updating",
    ),
    (
        Fault::DeleteKeepsAncestors,
        "delete-keeps-ancestors",
        &["PROP-05"],
        "deleting a child leaves its ancestors' provisioningState as it was",
    ),
    (
        Fault::DependantFollowsDependency,
        "dependant-follows-dependency",
        &["PROP-06"],
        "a link shows Updating while the widget it depends on is updated",
    ),
    (
        Fault::ReplaceAnswers201,
        "replace-answers-201",
        &[
            "PUT-01", "ETAG-02", "ETAG-04", "ETAG-06", "RETRY-02", "OPS-12",
        ],
        "PUT on an existing resource answers 201",
    ),
    (
        Fault::MonNoOperationLocation,
        "mon-no-operation-location",
        &["MON-01"],
        "data-plane PUT answers without Operation-Location",
    ),
    (
        Fault::MonResultWhileRunning,
        "mon-result-while-running",
        &["MON-04"],
        "data-plane monitors show the result field while the operation runs",
    ),
    (
        Fault::MonFailedWithoutError,
        "mon-failed-without-error",
        &["MON-05"],
        "data-plane monitors reporting failure have no error field",
    ),
    (
        Fault::MonDefaultNamesOnCustom,
        "mon-default-names-on-custom",
        &["MON-03"],
        "the export monitor says Succeeded instead of its declared Completed",
    ),
    (
        Fault::MonOperationIdIgnored,
        "mon-operation-id-ignored",
        &["MON-07"],
        "a client Operation-Id is not echoed; a server-made id is used",
    ),
    (
        Fault::MonFinalLocation404,
        "mon-final-location-404",
        &["MON-06"],
        "the snapshot Location answers 404 even after the monitor succeeded",
    ),
    (
        Fault::MonRepeatStartsNew,
        "mon-repeat-starts-new",
        &["MON-08"],
        "repeating a request with the same Operation-Id starts a second operation",
    ),
    (
        Fault::TaskStatusRegresses,
        "task-status-regresses",
        &["TASK-02"],
        "a task goes from processing-in-progress back to received once",
    ),
    (
        Fault::TaskCompletedWithoutResourceId,
        "task-completed-without-resource-id",
        &["TASK-03"],
        "a processing-completed task has no resourceId in its response",
    ),
    (
        Fault::TaskErrorWithoutDescription,
        "task-error-without-description",
        &["TASK-03"],
        "a processing-error task does not describe the cause",
    ),
    (
        Fault::TaskGetAsync,
        "task-get-async",
        &["TASK-05"],
        "GET of a subscription answers 202 with a taskId",
    ),
    (
        Fault::ResourceStaysPending,
        "resource-stays-pending",
        &["TASK-06"],
        "a created subscription never leaves pending",
    ),
    (
        Fault::TaskIdReused,
        "task-id-reused",
        &["TASK-01"],
        "every write answers the same taskId",
    ),
    (
        Fault::DeletedResourceRemains,
        "deleted-resource-remains",
        &["TASK-08"],
        "a subscription stays deleting forever after its DELETE task completed",
    ),
];

impl Fault {
    fn entry(self) -> &'static (Fault, &'static str, &'static [&'static str], &'static str) {
        // TABLE holds every variant exactly once (checked by a unit test), in declaration order.
        &TABLE[self as usize]
    }

    /// Every knob, in declaration order.
    pub fn all() -> Vec<Fault> {
        TABLE.iter().map(|e| e.0).collect()
    }

    /// The kebab-case name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        self.entry().1
    }

    /// The rule IDs this knob breaks.
    pub fn rules(self) -> &'static [&'static str] {
        self.entry().2
    }

    /// One line saying what the RP does instead.
    pub fn description(self) -> &'static str {
        self.entry().3
    }

    /// The knob with this name (case-insensitive, `_` accepted for `-`).
    pub fn from_name(name: &str) -> Option<Fault> {
        let wanted = name.trim().replace('_', "-");
        TABLE
            .iter()
            .find(|e| e.1.eq_ignore_ascii_case(&wanted))
            .map(|e| e.0)
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Fault {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fault::from_name(s).ok_or_else(|| format!("unknown fault `{s}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order() {
        for (i, e) in TABLE.iter().enumerate() {
            assert_eq!(e.0 as usize, i, "{} out of order", e.1);
        }
        assert_eq!(TABLE.len(), Fault::DeletedResourceRemains as usize + 1);
    }

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for f in Fault::all() {
            assert!(seen.insert(f.name()));
            assert_eq!(Fault::from_name(f.name()), Some(f));
            assert_eq!(Fault::from_name(&f.name().to_uppercase()), Some(f));
            assert!(!f.rules().is_empty());
            assert!(!f.description().is_empty());
        }
        assert_eq!(Fault::from_name("no-such-fault"), None);
    }

    #[test]
    fn rule_ids_look_like_ids() {
        for f in Fault::all() {
            for r in f.rules() {
                let (prefix, num) = r.split_once('-').expect("PREFIX-NN");
                assert!(prefix.chars().all(|c| c.is_ascii_uppercase()), "{r}");
                assert_eq!(num.len(), 2, "{r}");
                assert!(num.chars().all(|c| c.is_ascii_digit()), "{r}");
            }
        }
    }
}
