//! Name, description, source and real-RP evidence of every [`Variant`], in declaration order.

use super::Variant;

/// One row: the variant, its name, what the RP does, where the contract sources allow it,
/// the real-RP evidence in `shared/contract/real-rps.md` (if any), and the SHOULD-level (or
/// disputed) rules of `shared/contract/rules.md` the behaviour departs from (usually none).
pub(super) struct Row {
    pub variant: Variant,
    pub name: &'static str,
    pub description: &'static str,
    pub source: &'static str,
    pub evidence: Option<&'static str>,
    pub departs_from: &'static [&'static str],
}

macro_rules! row {
    ($v:ident, $name:expr, $desc:expr, $src:expr, $ev:expr, $dep:expr $(,)?) => {
        Row {
            variant: Variant::$v,
            name: $name,
            description: $desc,
            source: $src,
            evidence: $ev,
            departs_from: $dep,
        }
    };
}

pub(super) const TABLE: &[Row] = &[
    row!(
        SyncPatch,
        "sync-patch",
        "PATCH completes synchronously: 200 with provisioningState Succeeded and no Azure-AsyncOperation, Location or Retry-After (a PATCH setting simulateFailure answers 400 ProvisioningFailed and changes nothing); PUT and DELETE stay asynchronous",
        "001-arm-rp-contract.txt § ETags for Resources (PATCH table: 200 OK); rules.md PATCH-01",
        None,
        &[],
    ),
    row!(
        PutProvisioningStateOnly,
        "put-provisioning-state-only",
        "PUT answers 201 (create) / 200 (replace) with a non-terminal provisioningState and no Azure-AsyncOperation, Location or Retry-After; clients poll the resource (its GETs count for complete_after_reads)",
        "001-arm-rp-contract.txt § Creating or Updating Resources (Azure-AsyncOperation is optional; clients poll the resource until terminal)",
        Some(
            "Event Hubs PUT 200 `Created`, Key Vault PUT 200 `RegisteringDns`, Web PUT 201 `InProgress`, all without AAO/Location"
        ),
        &[],
    ),
    row!(
        DeleteLocationOnly,
        "delete-location-only",
        "DELETE answers 202 with Location and Retry-After but no Azure-AsyncOperation",
        "001-arm-rp-contract.txt § Delete Resource (Location MUST, Azure-AsyncOperation optional)",
        Some(
            "async DELETE 202 with Location only: resource groups, Redis, ACR, Event Hubs namespaces, Solutions"
        ),
        &[],
    ),
    row!(
        Put202Location,
        "put-202-location",
        "a creating PUT answers 202 with Location and Retry-After only (no Azure-AsyncOperation, no body); the resource is invisible (GET 404, left out of lists, its children 404) until the operation ends; the Location URL then answers 201 with the resource (or the error). Replaces stay 200 + Azure-AsyncOperation + Location",
        "001-arm-rp-contract.txt § 202 Accepted and Location Headers (a 202 create keeps the resource invisible); rules.md LOC-07",
        None,
        &[],
    ),
    row!(
        OpStatusStatusOnly,
        "opstatus-status-only",
        "the operation resource is only {\"status\"} plus `error` when Failed/Canceled: no id, name, startTime, endTime, percentComplete or properties",
        "001-arm-rp-contract.txt § Operation Resource format (id, name, times, percentComplete and properties are optional)",
        Some(
            "206 of 210 operation resources have no id, 111 neither id nor name (Network, Cosmos DB, ACR, Resources send status only)"
        ),
        &["OPRES-04"],
    ),
    row!(
        CustomRunningStates,
        "custom-running-states",
        "RP-specific running values: operation status NotStarted, then Dequeued, then provisioningResources; a create shows provisioningState Accepted (widgets and their configurations), Created (gadgets), InProgress (sprockets), RegisteringDns (links, subscription widgets); Updating and Deleting keep the state-diagram names the PROP rules need",
        "001-arm-rp-contract.txt § ProvisioningState property (RP-defined transitioning states); § Operation Resource format (transient values are service specific)",
        Some(
            "provisioningState Created (Event Hubs), Accepted (Event Hubs DR, Resources, Solutions), RegisteringDns (Key Vault), InProgress (Web); operation status Dequeued, provisioningResources, NotStarted"
        ),
        &[],
    ),
    row!(
        NoRetryAfter,
        "no-retry-after",
        "no Retry-After on any asynchronous answer (initial 200/201/202 and Location polls); clients wait their 60 s default",
        "001-arm-rp-contract.txt § 202 Accepted and Location Headers (\"optionally, a Retry-After header\"; default 60 seconds)",
        Some("7 of 33 DELETE 202 answers lack Retry-After (Compute)"),
        &["DEL-02"],
    ),
    row!(
        NewLocationPerPoll,
        "new-location-per-poll",
        "every 202 answer to a Location poll carries a new Location URL (`.../operationResults/{id}.{n}`) for the next poll; older URLs keep answering 202 until the operation ends, then every one answers the final result",
        "001-arm-rp-contract.txt § 202 Accepted and Location Headers (if not complete, return 202 again with a Location header)",
        None,
        &[],
    ),
    row!(
        AaoAsyncOperations,
        "aao-asyncoperations",
        "Azure-AsyncOperation URLs are `/subscriptions/{s}/providers/Microsoft.Contoso/locations/{l}/asyncoperations/{id}` (the operation resource's id follows)",
        "001-arm-rp-contract.txt § Asynchronous Operations (only an absolute URI is required of Azure-AsyncOperation)",
        Some(
            "43 of 145 operation URLs use `<x>operations`/`operationStatuses`/`asyncoperations` path words (Compute, Storage, Web, Solutions)"
        ),
        &[],
    ),
    row!(
        OperationsMonitorTrue,
        "operations-monitor-true",
        "Compute style: Azure-AsyncOperation `.../locations/{l}/operations/{id}` and Location the same path plus `?monitor=true` (the query alone decides which endpoint answers)",
        "001-arm-rp-contract.txt § Asynchronous Operations (Location and Azure-AsyncOperation must be absolute; the path shape is a recommendation)",
        Some(
            "Compute Location URLs `.../operations/{id}?monitor=true` (LOC-09 calibration: only 61 of 145 use the literal operationresults shape)"
        ),
        &["LOC-09"],
    ),
    row!(
        LocationUnderResource,
        "location-under-resource",
        "Location URLs sit under the original request URL: `{request path}/operationresults/{id}` (a DELETE's under the deleted resource, a restart's under `.../restart`); Azure-AsyncOperation unchanged",
        "001-arm-rp-contract.txt § 202 Accepted and Location Headers (\"either underneath the original request\" or subscription level)",
        None,
        &[],
    ),
    row!(
        FractionalTimestamps,
        "fractional-timestamps",
        "operation startTime/endTime carry 7 fractional digits and a +00:00 offset (2024-05-01T10:00:00.1234567+00:00)",
        "001-arm-rp-contract.txt § Operation Resource format (DateLiteral per ISO 8601)",
        Some(
            "OPRES-06 calibration: accept 7-digit fractions and +00:00 (0 of 446 timestamps violated ISO 8601)"
        ),
        &[],
    ),
    row!(
        FractionalPercent,
        "fractional-percent",
        "percentComplete is a fractional number (for example 37.5; 100.0 when done)",
        "001-arm-rp-contract.txt § Operation Resource format (percentComplete: double between 0 and 100)",
        None,
        &[],
    ),
    row!(
        WeakEtags,
        "weak-etags",
        "ETags are weak (`W/\"…\"`); If-Match and If-None-Match compare the opaque tags as ARM RPs do, so the stored value matches with or without `W/`; stale tags still fail",
        "001-arm-rp-contract.txt § ETags for Resources; rules.md ETAG-24 (optionally prefixed W/)",
        Some("Network sends weak `W/\"guid\"` ETags (80 of 82)"),
        &[],
    ),
    row!(
        EtagInBody,
        "etag-in-body",
        "resource bodies also carry the ETag as a top-level `etag` property",
        "001-arm-rp-contract.txt § Designing Resources (general resource format; extra envelope fields are allowed by RES-01)",
        Some("Network puts `etag` in every resource body (185 of 185)"),
        &[],
    ),
    row!(
        RichErrors,
        "rich-errors",
        "error objects carry `target`, `details[]`, `innererror` and `additionalInfo[]` (in error answers and in Failed/Canceled operation resources)",
        "001-arm-rp-contract.txt § Operation Resource format (OData v4 error with optional inner errors and details); rules.md ERR-03",
        None,
        &[],
    ),
    row!(
        PageSize1,
        "page-size-1",
        "collection lists answer one item a page, with an absolute nextLink while more remain",
        "rules.md RES-05 (value + nextLink paging, common ARM practice)",
        None,
        &[],
    ),
    row!(
        LowercaseTerminalStatus,
        "lowercase-terminal-status",
        "the operation resource's terminal status is lower case: succeeded, failed, canceled",
        "rules.md Ambiguities in the sources (state names are compared case-insensitively)",
        Some("Resources deploymentScripts reported status `failed`"),
        // OPRES-09 (SHOULD) asks for the exact spelling; clients compare case-insensitively.
        &["OPRES-09"],
    ),
    row!(
        AaoOnlyPut,
        "aao-only-put",
        "PUT answers 201/200 with Azure-AsyncOperation and Retry-After but no Location",
        "001-arm-rp-contract.txt § Creating or Updating Resources (only Azure-AsyncOperation is mentioned, and it is optional)",
        Some("247 Azure-AsyncOperation headers were seen, only 121 of them beside a Location"),
        &[],
    ),
    row!(
        DeleteSync200,
        "delete-sync-200",
        "DELETE of an existing resource completes at once: 200 with no body (running operations on it and its descendants end Canceled); 204 when missing",
        "001-arm-rp-contract.txt § ETags for Resources (DELETE table: 200 OK); rules.md DEL-01",
        Some(
            "synchronous DELETE answers 200 (27: Storage, Key Vault, Event Hubs children, SQL children, Redis children)"
        ),
        &[],
    ),
    row!(
        DeleteFinal200,
        "delete-final-200",
        "a finished DELETE's Location URL answers 200 with no body instead of 204",
        "001-arm-rp-contract.txt § Delete Resource (the Location URL returns 200 OK or 204 NoContent)",
        Some(
            "final Location answers for DELETE: 200 with no body (Redis, ACR, Event Hubs, Resources)"
        ),
        &[],
    ),
    row!(
        DeleteHidesAtOnce,
        "delete-hides-at-once",
        "while an asynchronous DELETE of a top-level resource runs, GET answers 404 and lists leave it out (its children answer 404 too); nested resources still show Deleting as PROP-05 needs",
        "001-arm-rp-contract.txt § Delete Resource; rules.md DEL-03 (200 with a non-terminal state, or 404)",
        None,
        &[],
    ),
    row!(
        FastOperations,
        "fast-operations",
        "every ARM operation ends before its first answer: PUT/PATCH answer 201/200 with provisioningState Succeeded and an Azure-AsyncOperation whose first read says Succeeded; DELETE and restart answer 202 whose Location already gives the final answer (overrides complete_after_reads on the ARM surface)",
        "001-arm-rp-contract.txt § Creating or Updating Resources; § Operation Resource format",
        Some(
            "10 of 99 PUT/PATCH 200/201 answers carrying AAO already said Succeeded (Network NIC, load balancer, virtual WAN/hub; Compute gallery PATCH; .NET Bastion PUT)"
        ),
        &["PUT-02"],
    ),
    row!(
        ShortRetryAfterOn2xx,
        "short-retry-after-on-2xx",
        "Retry-After: 2 on the 200/201 answers that start an operation (202 answers keep the configured 10..600 value)",
        "rules.md Ambiguities in the sources (Retry-After on a 200/201 is a polling hint and is not flagged)",
        Some("below-10 Retry-After values are common on 201/200 (21 of 43 on Network)"),
        &[],
    ),
    row!(
        RequestIdFormat,
        "request-id-format",
        "x-ms-request-id values are not GUIDs but `{guid}_M5SN1_M5SN1` (still unique per response)",
        "001-arm-rp-contract.txt § Instrumentation and Tracing across services (x-ms-request-id maps to the RP's activity id; no format is given)",
        Some("Event Hubs request ids look like `guid_M5SN1_M5SN1`"),
        &[],
    ),
    row!(
        Patch202,
        "patch-202",
        "PATCH answers 202 with Azure-AsyncOperation, Location and Retry-After and no body; the resource shows Updating; the Location URL ends with 200 and the resource",
        "rules.md PATCH-01 (or 202 Accepted under the LOC rules) and the ETAG notes (a PATCH may answer 202)",
        None,
        &[],
    ),
    row!(
        OperationExtraFields,
        "operation-extra-fields",
        "the operation resource also carries `resourceId` and `lastTransitionTime` (startTime while running, endTime once terminal)",
        "003-aro-hcp-async-operations.md § Cosmos DB Data Model › Asynchronous Operations (lastTransitionTime)",
        None,
        &[],
    ),
    row!(
        MonRetryAfter1,
        "mon-retry-after-1",
        "data plane: every status-monitor read carries Retry-After: 1",
        "002-typespec-lro.txt § Status Monitor Types in Azure.Core (headers that suggest polling retry intervals)",
        None,
        &[],
    ),
    row!(
        MonNoOperationId,
        "mon-no-operation-id",
        "data plane: no Operation-Id response header (a client Operation-Id is still honoured); legal ONLY when the target declares the operation-id header absent, since MON-07 checks the declared header",
        "002-typespec-lro.txt § Status Monitor Types in Azure.Core; rules.md Ambiguities (the operation-id header is declared by the target)",
        None,
        &[],
    ),
    row!(
        MonPutLocation,
        "mon-put-location",
        "data plane: a widget PUT also answers `Location` with the widget's own URL (final-state-via stays operation-location)",
        "002-typespec-lro.txt introduction (a Location header is often provided with a Url for the resource Get endpoint)",
        None,
        &[],
    ),
    row!(
        QuotedEmptyIfMatchAbsent,
        "quoted-empty-if-match-absent",
        "`If-Match: \"\"` (two quote characters) is read as an empty value, the seed table's `If-Match = \"\" / absent` row, instead of an entity tag that matches nothing",
        "001-arm-rp-contract.txt § ETags for Resources (row `If-Match = \"\" / absent`); rules.md, rules for running the rows (both readings are conformant)",
        None,
        &[],
    ),
    row!(
        LocationChangeIgnored,
        "location-change-ignored",
        "a PUT or PATCH of an existing resource that names another location is accepted and the location left as it was, instead of being refused with 400 InvalidResourceLocation",
        "public RPC resource-api-reference.md § Put Resource (\"The geo region of a resource never changes after it is created\") and § Patch Resource (location is immutable): refusing and ignoring both keep it",
        None,
        &[],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_a_seed_or_the_catalogue() {
        for r in TABLE {
            assert!(
                r.source.starts_with("001-arm-rp-contract.txt")
                    || r.source.starts_with("00")
                    || r.source.starts_with("public RPC")
                    || r.source.starts_with("rules.md"),
                "{}",
                r.name
            );
        }
    }
}
