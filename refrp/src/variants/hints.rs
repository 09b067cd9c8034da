//! [`target_hints`]: what a target file for the reference RP must declare differently, or what
//! a tester must expect, with a set of variants on. The tester's embedded target file is
//! generated on the tester side; it reads these hints instead of knowing every variant.

use std::collections::BTreeSet;

use super::Variant;

/// The declarations and expectations a set of variants changes. `Default` is the RP with no
/// variant on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetHints {
    /// Items per list page the RP serves when a variant fixes it (`page-size-1`: `Some(1)`);
    /// `None`: `Settings::page_size`.
    pub page_size: Option<usize>,
    /// The data-plane operation-id response header: `Some("Operation-Id")`, or `None` when
    /// the RP sends none (`mon-no-operation-id`); the target must then declare it absent.
    pub dataplane_operation_id_header: Option<&'static str>,
    /// ETags are weak (`W/"…"`); the types stay ETag-capable.
    pub weak_etags: bool,
    /// A creating PUT answers 202 + Location and the resource stays invisible until done.
    pub create_answers_202: bool,
    /// PUTs carry no operation URL: the resource itself must be polled.
    pub put_polls_the_resource: bool,
    /// PATCH completes synchronously on every type.
    pub patch_synchronous: bool,
    /// DELETE of an existing resource completes synchronously (200).
    pub delete_synchronous: bool,
    /// Asynchronous answers carry no Retry-After (clients wait their 60 s default).
    pub no_retry_after: bool,
    /// Operations end before their first answer: no running state can be observed on the
    /// ARM surface.
    pub operations_end_at_once: bool,
    /// One line per variant that changes a declaration or an expectation.
    pub notes: Vec<String>,
}

impl Default for TargetHints {
    fn default() -> Self {
        TargetHints {
            page_size: None,
            dataplane_operation_id_header: Some("Operation-Id"),
            weak_etags: false,
            create_answers_202: false,
            put_polls_the_resource: false,
            patch_synchronous: false,
            delete_synchronous: false,
            no_retry_after: false,
            operations_end_at_once: false,
            notes: Vec::new(),
        }
    }
}

/// The hints for `variants` (conflicting sets give the hints of each variant anyway).
pub fn target_hints(variants: &BTreeSet<Variant>) -> TargetHints {
    let mut h = TargetHints::default();
    for v in variants {
        let note = match v {
            Variant::PageSize1 => {
                h.page_size = Some(1);
                "lists: 1 item a page (declare page size 1 where the target file has one)"
            }
            Variant::MonNoOperationId => {
                h.dataplane_operation_id_header = None;
                "data-plane monitors: declare the operation-id header absent (MON-07 then has nothing to check)"
            }
            Variant::WeakEtags => {
                h.weak_etags = true;
                "ETags are weak W/\"…\"; If-Match compares opaque tags"
            }
            Variant::Put202Location => {
                h.create_answers_202 = true;
                "creating PUTs answer 202 + Location (LOC-07): the resource is invisible until done, the final Location answer is 201"
            }
            Variant::PutProvisioningStateOnly => {
                h.put_polls_the_resource = true;
                "PUT answers carry no operation URL: poll the resource's provisioningState"
            }
            Variant::SyncPatch => {
                h.patch_synchronous = true;
                "PATCH is synchronous (200 Succeeded): propagation is seen through PUT and DELETE only"
            }
            Variant::DeleteSync200 => {
                h.delete_synchronous = true;
                "DELETE of an existing resource answers 200 at once"
            }
            Variant::NoRetryAfter => {
                h.no_retry_after = true;
                "no Retry-After: pollers wait the 60 s default (scale time accordingly)"
            }
            Variant::FastOperations => {
                h.operations_end_at_once = true;
                "operations end before their first answer: rules judged while an operation runs get no verdict"
            }
            Variant::OpStatusStatusOnly => {
                "operation resources have no id/name (OPRES-04, a SHOULD, fails)"
            }
            Variant::OperationsMonitorTrue => {
                "Location is `.../operations/{id}?monitor=true` (LOC-09's path shape, a SHOULD, fails)"
            }
            Variant::DeleteHidesAtOnce => {
                "a top-level resource answers 404 as soon as its DELETE is accepted (DEL-03 allows it)"
            }
            _ => continue,
        };
        h.notes.push(format!("{}: {note}", v.name()));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_follow_the_variants() {
        assert_eq!(target_hints(&BTreeSet::new()), TargetHints::default());
        let set: BTreeSet<Variant> = [
            Variant::PageSize1,
            Variant::MonNoOperationId,
            Variant::LowercaseTerminalStatus,
        ]
        .into_iter()
        .collect();
        let h = target_hints(&set);
        assert_eq!(h.page_size, Some(1));
        assert_eq!(h.dataplane_operation_id_header, None);
        assert_eq!(h.notes.len(), 2);
        assert!(h.notes[0].starts_with("page-size-1: "));
    }
}
