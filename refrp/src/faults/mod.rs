//! Fault knobs: each [`Fault`] makes the reference RP break the named contract rules of
//! `shared/contract/rules.md` on purpose, and changes nothing else.
//!
//! The ARM knobs act on the ARM surface only; the `mon-*` knobs act on the data-plane surface
//! (`/dataplane`) and the task knobs on the task surface (`/v1`).
//!
//! A knob is identified by its kebab-case [`Fault::name`]; [`Fault::rules`] lists the rule IDs
//! it trips and [`Fault::description`] says in one line what the RP does instead.

mod table;

use table::TABLE;

/// One deliberate deviation from the ARM RP contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// LOC-02: Location headers are bare paths instead of absolute URIs.
    RelativeLocation,
    /// LOC-03: Retry-After is sent as an HTTP-date instead of whole seconds.
    RetryAfterDate,
    /// LOC-04: Retry-After is 5 seconds, below the contract's 10..600 range.
    RetryAfterOutOfRange,
    /// LOC-01: a DELETE answered 202 carries no Location header (DEL-01 restates it).
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
    /// OPRES-03, OPRES-07: a finished operation reports status `Completed` instead of `Succeeded`.
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
    /// DEL-05: DELETE of a missing resource answers 404 (ETAG-17/19/21 restate it).
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
    /// OPS-05, FD-06, FD-07: operation reads do not check the caller's identity headers.
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
    /// PATCH-03: a PATCH's `tags` are merged into the old ones instead of replacing them.
    PatchMergesTags,
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
    /// MON-10: data-plane monitor links are handed out without `api-version`.
    MonLinkNoApiVersion,
    /// MON-09, OPS-07: a succeeded data-plane operation reads Failed on its second terminal read.
    MonTerminalFlips,
    /// MON-05: a data-plane monitor reporting failure has no error field.
    MonFailedWithoutError,
    /// MON-03: the export monitor reports `Succeeded` instead of its declared `Completed`.
    MonDefaultNamesOnCustom,
    /// MON-07, MON-08: a client `Operation-Id` is not echoed; a server-made id is used instead.
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
    /// PROP-03, PROP-05: a sprocket update or delete leaves its grandparent widget untouched.
    GrandparentNotUpdating,
    /// OPS-01: a PUT during a running operation is accepted (PATCH is still refused).
    PutDuringOperationAccepted,
    /// OPS-05: status reads of operations on nested types ignore the identity headers.
    NestedStatusAnyTenant,
    /// OPS-09: `x-ms-arm-resource-system-data` is not stored on nested types.
    NestedSystemDataDropped,
    /// OPS-12: nested type segments and names are matched case-sensitively.
    NestedCaseSensitive,
    /// OPS-13: `id` and `name` take the casing of the latest request.
    IdRecased,
    /// PROP-02: after a failed parent update, descendants keep their old terminal state.
    FailedUpdateChildrenStale,
    /// LOC-01: PATCH answers 202 without Location.
    Patch202NoLocation,
    /// DEL-01: DELETE of an existing nested resource answers 204 (ETAG-18/20/22, NEST-03 restate it).
    ChildDeleteSync204,
    /// NEST-05, OPS-04: deleting a widget leaves its gadgets readable.
    ParentDeleteOrphans,
    /// RES-02: subscription-level widgets answer an `id` without the subscription.
    SubscriptionLevelWrongId,
    /// RES-02: annotations (extension type) answer type `Microsoft.Contoso/widgets/annotations`.
    ExtensionWrongType,
    /// HDR-01: responses of the location-based type carry no `x-ms-request-id`.
    LocationTypeNoRequestId,
    /// API-02: Microsoft.Fabrikam routes also accept Microsoft.Contoso's api-versions.
    NamespaceApiVersionMixup,
    /// HDR-04: JSON bodies on the ARM surface are declared `Content-Type: text/plain`.
    ContentTypeText,
    /// HDR-05: the `Date` header is ISO 8601 instead of RFC 1123.
    DateIso8601,
    /// ERR-04: error codes are snake_case (`resource_not_found`); the api-version codes API-03
    /// reads are left as they are.
    ErrorCodeSnakeCase,
    /// ERR-05: errors carry `additionalInfo` as one object instead of an array.
    ErrorAdditionalInfoObject,
    /// OPRES-10: an answer that hands out an operation URL carries its operation id as its
    /// `x-ms-request-id`.
    OperationIdIsRequestId,
    /// RES-06: resources ARM sent no system data for carry a `systemData` whose `createdAt` is
    /// a US-locale time.
    SystemDataBadTime,
    /// LOC-10: ARM-surface 202 answers carry a body (`{"status": "Accepted"}`).
    AcceptedWithBody,
    /// PUT-06: a PUT on an existing resource with another `location` moves it there.
    PutMovesLocation,
    /// PATCH-04: a PATCH with another `location` moves the resource there.
    PatchMovesLocation,
    /// PUT-07: a create whose `location` has capitals or spaces is refused.
    LocationCaseSensitive,
    /// RES-07: the subscription-scope list of a resource-group type is always empty.
    ListOmitsSubscriptionScope,
    /// OPRES-11: an operation URL answers under any subscription id.
    OperationAnySubscription,
    /// OPRES-12: every operation on one resource gets the same operation id.
    OperationIdReused,
    /// OPS-14: resource bodies spell the resource's name with a capital first letter.
    NameUppercased,
    /// RES-08: resource bodies repeat `location` inside `properties`.
    PropertiesRepeatLocation,
    /// HDR-06: a widget's `/skus` answer is padded past 8 MB.
    OversizedSkus,
    /// PROV-01: the operations API lists its operations without `display`.
    OperationsApiNoDisplay,
    /// PROV-02: the operations API leaves out `{ns}/register/action`.
    OperationsApiNoRegister,
    /// PUT-08, RES-02: a replacing PUT whose body names the resource otherwise renames it in
    /// answers.
    NameFromBody,
    /// RES-09: more than 15 tags are refused.
    TagsLimit15,
    /// SUB-01: a notification for a subscription the RP has never seen answers 404.
    LifecycleUnknown404,
    /// SUB-02: writes go on while the subscription is Warned or Suspended.
    SuspendedAllowsWrites,
    /// MOVE-01: a move copies the resources and leaves them in the source group too.
    MoveLeavesSource,
    /// MOVE-02: a move naming a resource that does not exist answers 200 and does nothing.
    MoveMissing200,
    /// SPEC-01 (the spec, not the RP): the widget DELETE's 202 is not declared.
    SpecDrops202,
    /// SPEC-02: the widget PATCH is not declared long-running.
    SpecNotLongRunning,
    /// SPEC-03: the widget PATCH declares `final-state-via: operation-location`.
    SpecFinalStateOperationLocation,
    /// SPEC-04: the widget's `properties.size` is declared a string.
    SpecSizeIsString,
    /// SPEC-05: the widget GET declares an `Operation-Location` response header.
    SpecDeclaresOperationLocation,
    /// SPEC-06: the widget's `properties.size` is declared `x-ms-secret`.
    SpecSecretSize,
    /// SPEC-07: a write takes the body's `systemData` members over ARM's header.
    SystemDataFromBody,
    /// SPEC-07 (the spec, not the RP): the widget's `properties.description` is declared
    /// readOnly.
    SpecReadOnlyDescription,
    /// FD-01: Location and Azure-AsyncOperation are built from the Host the RP was called on,
    /// not the Referer (ARM's public host).
    LinksFromHost,
    /// FD-02: a list's nextLink is built from the Host the RP was called on.
    NextLinkFromHost,
    /// FD-03: every ARM answer names the endpoint's host in an `x-ms-served-by` header.
    EndpointInHeader,
    /// FD-04, OPS-09: systemData holds the RP's own values, not those of ARM's header.
    SystemDataOwnValues,
    /// FD-05: a later write's header replaces `created*` too.
    SystemDataCreatedOverwritten,
    /// FD-06, OPS-05: operation reads answer another tenant (the caller's object id is still
    /// checked).
    OpStatusOtherTenant,
    /// FD-09: error answers carry `x-ms-failurecause: user`.
    FailureCauseMalformed,
    /// FD-08: a resource's SKU list answers after 61 s.
    SlowSkus,
    /// SUB-03: an Unregistered subscription's resources can still be written and deleted.
    UnregisteredAllowsWrites,
    /// SUB-04: a Deleted subscription's resources are kept.
    DeletedKeepsResources,
}

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

    /// Does a run with this knob mostly wait out a timeout? An SKU list slower than the played
    /// front door's 60 s, operations that never end or whose status cannot be read while they
    /// run (each poll runs to the deadline). Runners that start many runs start these first, so
    /// the waits overlap other work; nothing is judged on it.
    pub fn waits_out_a_timeout(self) -> bool {
        matches!(
            self,
            Fault::SlowSkus
                | Fault::UnknownTerminalStatus
                | Fault::OpStatus404WhileRunning
                | Fault::OpStatus500WhileRunning
        )
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
        assert_eq!(TABLE.len(), Fault::DeletedKeepsResources as usize + 1);
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
