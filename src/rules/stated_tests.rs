//! The rules only the suites state (ETAG tables, ACT, NEST, SKU, PROP, API, most of OPS...):
//! each shown failing and passing by the suite's own expectation, read from `suites/*.yaml`
//! and judged as the runner judges it ([`testing::stated`]) on a hand-built answer.

use serde_json::{Value, json};

use super::Outcome;
use super::expect::Subject;
use super::testing::{At, Case, WIDGET, answered, exchange, failing, passing, stated, widget};
use crate::http::Exchange;

/// An answer with this status: the widget for a 2xx, the error envelope otherwise.
fn answer(status: u16) -> Exchange {
    let body = if (200..300).contains(&status) {
        widget("Succeeded")
    } else {
        json!({"error": {"code": "Refused", "message": "refused"}})
    };
    exchange("GET", WIDGET, status, &[], body)
}

/// The expectations at `at` on an answer with this status.
fn status(rule: &str, at: At, scope: Value, code: u16) -> Outcome {
    stated(rule, at, scope, &answered(&answer(code)))
}

/// The expectations at `at` on an answer with this body.
fn body(rule: &str, at: At, scope: Value, status: u16, b: Value) -> Outcome {
    let ex = exchange("GET", WIDGET, status, &[], b);
    stated(rule, at, scope, &answered(&ex))
}

/// The expectations at `at` on an answer with these headers.
fn headers(rule: &str, at: At, scope: Value, status: u16, h: &[(&str, &str)]) -> Outcome {
    let ex = exchange("GET", WIDGET, status, h, widget("Succeeded"));
    stated(rule, at, scope, &answered(&ex))
}

/// The expectations at `at` on a followed operation that ended so, its last answer `code`.
fn ended(rule: &str, at: At, scope: Value, outcome: &str, code: u16) -> Outcome {
    let ex = answer(code);
    let subject = Subject {
        exchange: Some(&ex),
        items: None,
        outcome: Some(outcome),
    };
    stated(rule, at, scope, &subject)
}

/// A widget body in this provisioning state.
fn state(s: &str) -> Value {
    widget(s)
}

fn row(status: Value, rule: &str) -> Value {
    json!({"row": {"status": status, "rule": rule}})
}

const PUT_TABLE: At = ("etag.yaml", "put-table", "put");
const PATCH_TABLE: At = ("etag.yaml", "patch-table", "patch");
const DELETE_TABLE: At = ("etag.yaml", "delete-table", "delete");

/// The ETag tables and the ETag rules around them.
pub(crate) const ETAG: &[Case] = &[
    failing("ETAG-01", "a create without If-Match answered 200", || {
        status("ETAG-01", PUT_TABLE, row(json!([201, 202]), "ETAG-01"), 200)
    }),
    passing("ETAG-01", "a create without If-Match answered 201", || {
        status("ETAG-01", PUT_TABLE, row(json!([201, 202]), "ETAG-01"), 201)
    }),
    passing("ETAG-01", "a create without If-Match answered 202", || {
        status("ETAG-01", PUT_TABLE, row(json!([201, 202]), "ETAG-01"), 202)
    }),
    failing("ETAG-02", "a replace without If-Match answered 201", || {
        status("ETAG-02", PUT_TABLE, row(json!([200, 202]), "ETAG-02"), 201)
    }),
    passing("ETAG-02", "a replace without If-Match answered 200", || {
        status("ETAG-02", PUT_TABLE, row(json!([200, 202]), "ETAG-02"), 200)
    }),
    failing(
        "ETAG-03",
        "If-Match: * on a missing name answered 201",
        || status("ETAG-03", PUT_TABLE, row(json!(412), "ETAG-03"), 201),
    ),
    passing(
        "ETAG-03",
        "If-Match: * on a missing name answered 412",
        || status("ETAG-03", PUT_TABLE, row(json!(412), "ETAG-03"), 412),
    ),
    failing(
        "ETAG-04",
        "If-Match: * on an existing resource answered 412",
        || status("ETAG-04", PUT_TABLE, row(json!([200, 202]), "ETAG-04"), 412),
    ),
    passing(
        "ETAG-04",
        "If-Match: * on an existing resource answered 200",
        || status("ETAG-04", PUT_TABLE, row(json!([200, 202]), "ETAG-04"), 200),
    ),
    failing(
        "ETAG-05",
        "a specific If-Match on a missing name answered 201",
        || status("ETAG-05", PUT_TABLE, row(json!(412), "ETAG-05"), 201),
    ),
    passing(
        "ETAG-05",
        "a specific If-Match on a missing name answered 412",
        || status("ETAG-05", PUT_TABLE, row(json!(412), "ETAG-05"), 412),
    ),
    failing("ETAG-06", "the current ETag answered 412", || {
        status(
            "ETAG-06",
            ("etag.yaml", "put-if-match-current-and-stale", "put-current"),
            json!({}),
            412,
        )
    }),
    passing("ETAG-06", "the current ETag answered 200", || {
        status(
            "ETAG-06",
            ("etag.yaml", "put-if-match-current-and-stale", "put-current"),
            json!({}),
            200,
        )
    }),
    failing("ETAG-07", "a stale ETag answered 200", || {
        status(
            "ETAG-07",
            ("etag.yaml", "put-if-match-current-and-stale", "put-stale"),
            json!({}),
            200,
        )
    }),
    passing("ETAG-07", "a stale ETag answered 412", || {
        status(
            "ETAG-07",
            ("etag.yaml", "put-if-match-current-and-stale", "put-stale"),
            json!({}),
            412,
        )
    }),
    failing(
        "ETAG-08",
        "If-None-Match: * on a missing name answered 412",
        || status("ETAG-08", PUT_TABLE, row(json!([201, 202]), "ETAG-08"), 412),
    ),
    passing(
        "ETAG-08",
        "If-None-Match: * on a missing name answered 201",
        || status("ETAG-08", PUT_TABLE, row(json!([201, 202]), "ETAG-08"), 201),
    ),
    failing(
        "ETAG-09",
        "If-None-Match: * on an existing resource answered 200",
        || status("ETAG-09", PUT_TABLE, row(json!(412), "ETAG-09"), 200),
    ),
    passing(
        "ETAG-09",
        "If-None-Match: * on an existing resource answered 412",
        || status("ETAG-09", PUT_TABLE, row(json!(412), "ETAG-09"), 412),
    ),
    failing("ETAG-10", "a PATCH of a missing name answered 201", || {
        status("ETAG-10", PATCH_TABLE, row(json!(404), "ETAG-10"), 201)
    }),
    passing("ETAG-10", "a PATCH of a missing name answered 404", || {
        status("ETAG-10", PATCH_TABLE, row(json!(404), "ETAG-10"), 404)
    }),
    failing("ETAG-11", "a PATCH without If-Match answered 412", || {
        status(
            "ETAG-11",
            PATCH_TABLE,
            row(json!([200, 202]), "ETAG-11"),
            412,
        )
    }),
    passing("ETAG-11", "a PATCH without If-Match answered 202", || {
        status(
            "ETAG-11",
            PATCH_TABLE,
            row(json!([200, 202]), "ETAG-11"),
            202,
        )
    }),
    failing(
        "ETAG-12",
        "PATCH If-Match: * of a missing name answered 412",
        || status("ETAG-12", PATCH_TABLE, row(json!(404), "ETAG-12"), 412),
    ),
    passing(
        "ETAG-12",
        "PATCH If-Match: * of a missing name answered 404",
        || status("ETAG-12", PATCH_TABLE, row(json!(404), "ETAG-12"), 404),
    ),
    failing(
        "ETAG-13",
        "PATCH If-Match: * of an existing resource answered 412",
        || {
            status(
                "ETAG-13",
                PATCH_TABLE,
                row(json!([200, 202]), "ETAG-13"),
                412,
            )
        },
    ),
    passing(
        "ETAG-13",
        "PATCH If-Match: * of an existing resource answered 200",
        || {
            status(
                "ETAG-13",
                PATCH_TABLE,
                row(json!([200, 202]), "ETAG-13"),
                200,
            )
        },
    ),
    failing(
        "ETAG-14",
        "a specific If-Match on a missing name answered 412, not 404",
        || status("ETAG-14", PATCH_TABLE, row(json!(404), "ETAG-14"), 412),
    ),
    passing(
        "ETAG-14",
        "a specific If-Match on a missing name answered 404",
        || status("ETAG-14", PATCH_TABLE, row(json!(404), "ETAG-14"), 404),
    ),
    failing(
        "ETAG-15",
        "PATCH with the current ETag answered 412",
        || {
            status(
                "ETAG-15",
                (
                    "etag.yaml",
                    "patch-if-match-current-and-stale",
                    "patch-current",
                ),
                json!({}),
                412,
            )
        },
    ),
    passing(
        "ETAG-15",
        "PATCH with the current ETag answered 200",
        || {
            status(
                "ETAG-15",
                (
                    "etag.yaml",
                    "patch-if-match-current-and-stale",
                    "patch-current",
                ),
                json!({}),
                200,
            )
        },
    ),
    failing("ETAG-16", "PATCH with a stale ETag answered 200", || {
        status(
            "ETAG-16",
            (
                "etag.yaml",
                "patch-if-match-current-and-stale",
                "patch-stale",
            ),
            json!({}),
            200,
        )
    }),
    passing("ETAG-16", "PATCH with a stale ETag answered 412", || {
        status(
            "ETAG-16",
            (
                "etag.yaml",
                "patch-if-match-current-and-stale",
                "patch-stale",
            ),
            json!({}),
            412,
        )
    }),
    failing("ETAG-17", "a DELETE of a missing name answered 404", || {
        status("ETAG-17", DELETE_TABLE, row(json!(204), "ETAG-17"), 404)
    }),
    passing("ETAG-17", "a DELETE of a missing name answered 204", || {
        status("ETAG-17", DELETE_TABLE, row(json!(204), "ETAG-17"), 204)
    }),
    failing(
        "ETAG-18",
        "a DELETE of an existing resource answered 204",
        || {
            status(
                "ETAG-18",
                DELETE_TABLE,
                row(json!([200, 202]), "ETAG-18"),
                204,
            )
        },
    ),
    passing(
        "ETAG-18",
        "a DELETE of an existing resource answered 202",
        || {
            status(
                "ETAG-18",
                DELETE_TABLE,
                row(json!([200, 202]), "ETAG-18"),
                202,
            )
        },
    ),
    failing(
        "ETAG-19",
        "DELETE If-Match: * of a missing name answered 412",
        || status("ETAG-19", DELETE_TABLE, row(json!(204), "ETAG-19"), 412),
    ),
    passing(
        "ETAG-19",
        "DELETE If-Match: * of a missing name answered 204",
        || status("ETAG-19", DELETE_TABLE, row(json!(204), "ETAG-19"), 204),
    ),
    failing(
        "ETAG-20",
        "DELETE If-Match: * of an existing resource answered 412",
        || {
            status(
                "ETAG-20",
                DELETE_TABLE,
                row(json!([200, 202]), "ETAG-20"),
                412,
            )
        },
    ),
    passing(
        "ETAG-20",
        "DELETE If-Match: * of an existing resource answered 200",
        || {
            status(
                "ETAG-20",
                DELETE_TABLE,
                row(json!([200, 202]), "ETAG-20"),
                200,
            )
        },
    ),
    failing(
        "ETAG-21",
        "a specific If-Match on a missing name answered 412, not 204",
        || status("ETAG-21", DELETE_TABLE, row(json!(204), "ETAG-21"), 412),
    ),
    passing(
        "ETAG-21",
        "a specific If-Match on a missing name answered 204",
        || status("ETAG-21", DELETE_TABLE, row(json!(204), "ETAG-21"), 204),
    ),
    failing(
        "ETAG-22",
        "DELETE with the current ETag answered 412",
        || {
            status(
                "ETAG-22",
                ("etag.yaml", "delete-if-match-current", "delete"),
                json!({}),
                412,
            )
        },
    ),
    passing(
        "ETAG-22",
        "DELETE with the current ETag answered 202",
        || {
            status(
                "ETAG-22",
                ("etag.yaml", "delete-if-match-current", "delete"),
                json!({}),
                202,
            )
        },
    ),
    failing("ETAG-23", "DELETE with a stale ETag answered 200", || {
        status("ETAG-23", DELETE_TABLE, row(json!(412), "ETAG-23"), 200)
    }),
    failing(
        "ETAG-23",
        "the resource gone after a refused DELETE",
        || {
            status(
                "ETAG-23",
                ("etag.yaml", "delete-table", "still-there"),
                row(json!(412), "ETAG-23"),
                404,
            )
        },
    ),
    passing("ETAG-23", "DELETE with a stale ETag answered 412", || {
        status("ETAG-23", DELETE_TABLE, row(json!(412), "ETAG-23"), 412)
    }),
    passing(
        "ETAG-23",
        "the resource still there after a refused DELETE",
        || {
            status(
                "ETAG-23",
                ("etag.yaml", "delete-table", "still-there"),
                row(json!(412), "ETAG-23"),
                200,
            )
        },
    ),
    failing("ETAG-25", "the ETag changed between two reads", || {
        headers(
            "ETAG-25",
            ("etag.yaml", "etag-changes-on-write", "get2"),
            json!({"get1": {"etag": "\"1\""}}),
            200,
            &[("ETag", "\"2\"")],
        )
    }),
    passing("ETAG-25", "the ETag stable between two reads", || {
        headers(
            "ETAG-25",
            ("etag.yaml", "etag-changes-on-write", "get2"),
            json!({"get1": {"etag": "\"1\""}}),
            200,
            &[("ETag", "\"1\"")],
        )
    }),
    failing("ETAG-25", "the ETag unchanged by a write", || {
        headers(
            "ETAG-25",
            ("etag.yaml", "etag-changes-on-write", "get3"),
            json!({"get1": {"etag": "\"1\""}}),
            200,
            &[("ETag", "\"1\"")],
        )
    }),
    passing("ETAG-25", "the ETag changed by a write", || {
        headers(
            "ETAG-25",
            ("etag.yaml", "etag-changes-on-write", "get3"),
            json!({"get1": {"etag": "\"1\""}}),
            200,
            &[("ETag", "\"2\"")],
        )
    }),
    failing(
        "ETAG-26",
        "a refused create left the resource behind",
        || {
            status(
                "ETAG-26",
                ("etag.yaml", "put-table", "unchanged"),
                json!({"before": {"status": 404}}),
                200,
            )
        },
    ),
    passing("ETAG-26", "a refused create left nothing", || {
        status(
            "ETAG-26",
            ("etag.yaml", "put-table", "unchanged"),
            json!({"before": {"status": 404}}),
            404,
        )
    }),
    failing("ETAG-26", "a refused replace changed the ETag", || {
        let scope = json!({"before": {"etag": "\"1\"", "body": {"properties": widget("Succeeded")["properties"]}}});
        headers(
            "ETAG-26",
            ("etag.yaml", "put-table", "compare-body"),
            scope,
            200,
            &[("ETag", "\"2\"")],
        )
    }),
    passing("ETAG-26", "a refused replace changed nothing", || {
        let scope = json!({"before": {"etag": "\"1\"", "body": {"properties": widget("Succeeded")["properties"]}}});
        headers(
            "ETAG-26",
            ("etag.yaml", "put-table", "compare-body"),
            scope,
            200,
            &[("ETag", "\"1\"")],
        )
    }),
];

const ASYNC: &str = "async-put.yaml";
const LIFE: &str = "operations-lifecycle.yaml";
const HE: &str = "headers-and-errors.yaml";
const L202: &str = "location-202.yaml";
const PROP: &str = "propagation.yaml";

/// PUT, PATCH, ACT, LOC, PSTATE, RGDEL and RETRY rules the suites state.
pub(crate) const WRITES: &[Case] = &[
    failing("PUT-05", "a settled resource read Updating later", || {
        body(
            "PUT-05",
            (ASYNC, "create-then-replace", "get2"),
            json!({"state1": "Succeeded"}),
            200,
            state("Updating"),
        )
    }),
    passing("PUT-05", "a settled resource read the same later", || {
        body(
            "PUT-05",
            (ASYNC, "create-then-replace", "get2"),
            json!({"state1": "Succeeded"}),
            200,
            state("Succeeded"),
        )
    }),
    failing("PATCH-01", "a PATCH answered 201", || {
        status(
            "PATCH-01",
            (ASYNC, "patch-applies-and-merges", "patch"),
            json!({}),
            201,
        )
    }),
    passing("PATCH-01", "a PATCH answered 200", || {
        status(
            "PATCH-01",
            (ASYNC, "patch-applies-and-merges", "patch"),
            json!({}),
            200,
        )
    }),
    passing("PATCH-01", "a PATCH answered 202", || {
        status(
            "PATCH-01",
            (ASYNC, "patch-applies-and-merges", "patch"),
            json!({}),
            202,
        )
    }),
    failing("PATCH-03", "a tag the PATCH dropped is still there", || {
        let mut b = widget("Succeeded");
        b["tags"] = json!({"rpconform-put-only": "x", "rpconform": "patched"});
        body(
            "PATCH-03",
            (LIFE, "tags-persisted", "#1"),
            json!({}),
            200,
            b,
        )
    }),
    passing("PATCH-03", "the tags replaced whole", || {
        let mut b = widget("Succeeded");
        b["tags"] = json!({"rpconform": "patched"});
        body(
            "PATCH-03",
            (LIFE, "tags-persisted", "#1"),
            json!({}),
            200,
            b,
        )
    }),
    failing(
        "ACT-01",
        "a long-running action answered 200 without Location",
        || status("ACT-01", (L202, "action-flow", "act"), json!({}), 200),
    ),
    passing(
        "ACT-01",
        "a long-running action answered 202 with Location",
        || {
            headers(
                "ACT-01",
                (L202, "action-flow", "act"),
                json!({}),
                202,
                &[("Location", super::testing::OP_RESULT)],
            )
        },
    ),
    failing("ACT-02", "an action that ended Failed", || {
        let scope =
            json!({"row": {"action": {"result_status": 200, "result_pointer": "/properties"}}});
        ended(
            "ACT-02",
            (L202, "action-flow", "done"),
            scope,
            "Failed",
            200,
        )
    }),
    passing(
        "ACT-02",
        "an action that ended with its declared result",
        || {
            let scope =
                json!({"row": {"action": {"result_status": 200, "result_pointer": "/properties"}}});
            ended(
                "ACT-02",
                (L202, "action-flow", "done"),
                scope,
                "Succeeded",
                200,
            )
        },
    ),
    failing(
        "ACT-03",
        "an action on a missing resource answered 202",
        || status("ACT-03", (L202, "action-on-missing", "#1"), json!({}), 202),
    ),
    passing(
        "ACT-03",
        "an action on a missing resource answered 404",
        || status("ACT-03", (L202, "action-on-missing", "#1"), json!({}), 404),
    ),
    failing(
        "LOC-07",
        "a create answered 202 readable before its end",
        || {
            status(
                "LOC-07",
                (L202, "create-answered-202-stays-hidden", "#1"),
                json!({}),
                200,
            )
        },
    ),
    passing(
        "LOC-07",
        "a create answered 202 hidden until its end",
        || {
            status(
                "LOC-07",
                (L202, "create-answered-202-stays-hidden", "#1"),
                json!({}),
                404,
            )
        },
    ),
    failing(
        "PSTATE-03",
        "the current provisioningState echoed back refused",
        || {
            status(
                "PSTATE-03",
                ("provisioning-state.yaml", "echo-current-value", "put"),
                json!({}),
                400,
            )
        },
    ),
    passing(
        "PSTATE-03",
        "the current provisioningState echoed back accepted",
        || {
            status(
                "PSTATE-03",
                ("provisioning-state.yaml", "echo-current-value", "put"),
                json!({}),
                200,
            )
        },
    ),
    failing("PSTATE-04", "another provisioningState accepted", || {
        status(
            "PSTATE-04",
            ("provisioning-state.yaml", "echo-other-value", "put"),
            json!({}),
            200,
        )
    }),
    passing("PSTATE-04", "another provisioningState refused", || {
        status(
            "PSTATE-04",
            ("provisioning-state.yaml", "echo-other-value", "put"),
            json!({}),
            400,
        )
    }),
    failing(
        "RGDEL-01",
        "a DELETE refused because of a dependant answered 500",
        || {
            status(
                "RGDEL-01",
                (
                    "resource-group-delete.yaml",
                    "refused-then-accepted",
                    "refused",
                ),
                json!({}),
                500,
            )
        },
    ),
    passing(
        "RGDEL-01",
        "a DELETE refused because of a dependant answered 409",
        || {
            status(
                "RGDEL-01",
                (
                    "resource-group-delete.yaml",
                    "refused-then-accepted",
                    "refused",
                ),
                json!({}),
                409,
            )
        },
    ),
    failing("RGDEL-02", "the repeated DELETE refused again", || {
        status(
            "RGDEL-02",
            (
                "resource-group-delete.yaml",
                "refused-then-accepted",
                "retry",
            ),
            json!({}),
            409,
        )
    }),
    passing("RGDEL-02", "the repeated DELETE accepted", || {
        status(
            "RGDEL-02",
            (
                "resource-group-delete.yaml",
                "refused-then-accepted",
                "retry",
            ),
            json!({}),
            202,
        )
    }),
    failing("RETRY-02", "a replayed PUT answered 201", || {
        status(
            "RETRY-02",
            (ASYNC, "replayed-put", "replay"),
            json!({}),
            201,
        )
    }),
    passing("RETRY-02", "a replayed PUT answered 200", || {
        status(
            "RETRY-02",
            (ASYNC, "replayed-put", "replay"),
            json!({}),
            200,
        )
    }),
    failing(
        "RETRY-03",
        "a DELETE repeated while the first runs answered 500",
        || {
            status(
                "RETRY-03",
                (L202, "delete-repeated-while-running", "second"),
                json!({}),
                500,
            )
        },
    ),
    passing(
        "RETRY-03",
        "a DELETE repeated while the first runs answered 202",
        || {
            status(
                "RETRY-03",
                (L202, "delete-repeated-while-running", "second"),
                json!({}),
                202,
            )
        },
    ),
];

fn listing(ids: &[&str]) -> Value {
    json!({"value": ids.iter().map(|i| json!({"id": i})).collect::<Vec<_>>()})
}

const C1: &str =
    "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/p1/gadgets/c1";
const C2: &str =
    "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/p1/gadgets/c2";
const OTHER: &str =
    "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/p2/gadgets/o";

fn nest_02(ids: &[&str]) -> Outcome {
    let scope = json!({"c1": {"id": C1}, "c2": {"id": C2}, "other": {"id": OTHER}});
    body(
        "NEST-02",
        (HE, "nested-lists-per-parent", "#1"),
        scope,
        200,
        listing(ids),
    )
}

/// SKU-02/03: `/skus` of an existing resource listing this one item.
fn skus(rule: &str, item: Value) -> Outcome {
    body(
        rule,
        (HE, "skus", "#1"),
        json!({}),
        200,
        json!({"value": [item]}),
    )
}

fn sku_with(capacity: Value) -> Value {
    json!({"resourceType": "widgets", "sku": {"name": "S1"}, "capacity": capacity})
}

/// NEST, SKU and API: requests of their own, stated by the suites.
pub(crate) const SHAPES: &[Case] = &[
    failing("NEST-01", "a child PUT answered 404", || {
        status(
            "NEST-01",
            (HE, "nested-create-and-read", "child"),
            json!({}),
            404,
        )
    }),
    passing("NEST-01", "a child PUT answered 201", || {
        status(
            "NEST-01",
            (HE, "nested-create-and-read", "child"),
            json!({}),
            201,
        )
    }),
    failing(
        "NEST-02",
        "a parent's list with another parent's child",
        || nest_02(&[C1, C2, OTHER]),
    ),
    failing("NEST-02", "a parent's list without its child", || {
        nest_02(&[C1])
    }),
    passing("NEST-02", "a parent's list with its children only", || {
        nest_02(&[C1, C2])
    }),
    failing("NEST-03", "a child PATCH answered 404", || {
        status(
            "NEST-03",
            (HE, "nested-patch-and-delete", "patch"),
            json!({}),
            404,
        )
    }),
    passing("NEST-03", "a child PATCH answered 200", || {
        status(
            "NEST-03",
            (HE, "nested-patch-and-delete", "patch"),
            json!({}),
            200,
        )
    }),
    failing(
        "NEST-04",
        "a child of a missing parent answered 200",
        || {
            status(
                "NEST-04",
                (HE, "nested-under-missing-parent", "#1"),
                json!({}),
                200,
            )
        },
    ),
    passing(
        "NEST-04",
        "a child of a missing parent answered 404",
        || {
            status(
                "NEST-04",
                (HE, "nested-under-missing-parent", "#1"),
                json!({}),
                404,
            )
        },
    ),
    failing(
        "NEST-05",
        "a child readable after its parent's delete",
        || {
            status(
                "NEST-05",
                (HE, "parent-delete-deletes-children", "#2"),
                json!({}),
                200,
            )
        },
    ),
    passing("NEST-05", "a child gone with its parent", || {
        status(
            "NEST-05",
            (HE, "parent-delete-deletes-children", "#2"),
            json!({}),
            404,
        )
    }),
    failing("SKU-01", "/skus answered 404", || {
        status("SKU-01", (HE, "skus", "#1"), json!({}), 404)
    }),
    failing("SKU-01", "/skus without value", || {
        body(
            "SKU-01",
            (HE, "skus", "#1"),
            json!({}),
            200,
            json!({"skus": []}),
        )
    }),
    passing("SKU-01", "/skus with a value array", || {
        body(
            "SKU-01",
            (HE, "skus", "#1"),
            json!({}),
            200,
            json!({"value": []}),
        )
    }),
    failing("SKU-02", "a SKU without a name", || {
        skus(
            "SKU-02",
            json!({"resourceType": "widgets", "sku": {"tier": "Standard"}}),
        )
    }),
    failing("SKU-02", "a SKU without resourceType", || {
        skus("SKU-02", json!({"sku": {"name": "S1"}}))
    }),
    passing("SKU-02", "resourceType and sku.name", || {
        skus(
            "SKU-02",
            json!({"resourceType": "widgets", "sku": {"name": "S1", "tier": "Standard"}}),
        )
    }),
    failing("SKU-03", "a manual capacity without bounds", || {
        skus("SKU-03", sku_with(json!({"scaleType": "Manual"})))
    }),
    failing("SKU-03", "an unknown scaleType", || {
        skus("SKU-03", sku_with(json!({"scaleType": "elastic"})))
    }),
    passing("SKU-03", "a manual capacity with its bounds", || {
        skus(
            "SKU-03",
            sku_with(json!({"scaleType": "Manual", "minimum": 1, "maximum": 5, "default": 1})),
        )
    }),
    passing("SKU-03", "scaleType none, no bounds", || {
        skus("SKU-03", sku_with(json!({"scaleType": "None"})))
    }),
    failing("SKU-04", "/skus of a missing resource answered 200", || {
        status(
            "SKU-04",
            (HE, "skus-of-missing-resource", "#1"),
            json!({}),
            200,
        )
    }),
    passing("SKU-04", "/skus of a missing resource answered 404", || {
        status(
            "SKU-04",
            (HE, "skus-of-missing-resource", "#1"),
            json!({}),
            404,
        )
    }),
    failing(
        "SKU-05",
        "/skus of a resource without alternatives listing one",
        || {
            body(
                "SKU-05",
                (HE, "skus-none-valid", "#1"),
                json!({}),
                200,
                json!({"value": [{"resourceType": "widgets", "sku": {"name": "S1"}}]}),
            )
        },
    ),
    failing(
        "SKU-05",
        "/skus of a resource without alternatives answered 404",
        || status("SKU-05", (HE, "skus-none-valid", "#1"), json!({}), 404),
    ),
    passing(
        "SKU-05",
        "/skus of a resource without alternatives empty",
        || {
            body(
                "SKU-05",
                (HE, "skus-none-valid", "#1"),
                json!({}),
                200,
                json!({"value": []}),
            )
        },
    ),
    failing("API-01", "a request without api-version served", || {
        status("API-01", (HE, "api-version-missing", "#1"), json!({}), 200)
    }),
    passing("API-01", "a request without api-version refused", || {
        status("API-01", (HE, "api-version-missing", "#1"), json!({}), 400)
    }),
    failing("API-02", "an unsupported api-version served", || {
        status(
            "API-02",
            (HE, "api-version-unsupported", "#1"),
            json!({}),
            200,
        )
    }),
    passing("API-02", "an unsupported api-version refused", || {
        status(
            "API-02",
            (HE, "api-version-unsupported", "#1"),
            json!({}),
            400,
        )
    }),
    failing(
        "API-03",
        "a missing api-version refused with another code",
        || {
            body(
                "API-03",
                (HE, "api-version-missing", "#1"),
                json!({}),
                400,
                json!({"error": {"code": "BadRequest", "message": "m"}}),
            )
        },
    ),
    passing(
        "API-03",
        "a missing api-version refused with MissingApiVersionParameter (any case)",
        || {
            body(
                "API-03",
                (HE, "api-version-missing", "#1"),
                json!({}),
                400,
                json!({"error": {"code": "missingapiversionparameter", "message": "m"}}),
            )
        },
    ),
    passing(
        "API-03",
        "an unsupported api-version refused with NoRegisteredProviderFound",
        || {
            body(
                "API-03",
                (HE, "api-version-unsupported", "#1"),
                json!({}),
                400,
                json!({"error": {"code": "NoRegisteredProviderFound", "message": "m"}}),
            )
        },
    ),
];

fn prop(rule: &str, at: At, scope: Value, s: &str) -> Outcome {
    body(rule, at, scope, 200, state(s))
}

fn before(step: &str, s: &str) -> Value {
    json!({ step: {"body": {"properties": {"provisioningState": s}}} })
}

/// PROP: propagation through a hierarchy, stated by the suites.
pub(crate) const PROPAGATION: &[Case] = &[
    failing(
        "PROP-01",
        "the parent not Updating while its update runs",
        || {
            prop(
                "PROP-01",
                (PROP, "parent-update", "p-during"),
                json!({}),
                "Succeeded",
            )
        },
    ),
    passing(
        "PROP-01",
        "the parent Updating while its update runs (any case)",
        || {
            prop(
                "PROP-01",
                (PROP, "parent-update", "p-during"),
                json!({}),
                "updating",
            )
        },
    ),
    failing("PROP-02", "a descendant not in its parent's state", || {
        prop(
            "PROP-02",
            (PROP, "parent-update", "#1"),
            before("p-during", "Updating"),
            "Succeeded",
        )
    }),
    passing("PROP-02", "a descendant in its parent's state", || {
        prop(
            "PROP-02",
            (PROP, "parent-update", "#1"),
            before("p-during", "Updating"),
            "Updating",
        )
    }),
    failing(
        "PROP-03",
        "an ancestor not Updating while a child updates",
        || {
            prop(
                "PROP-03",
                (PROP, "child-update", "#1"),
                json!({}),
                "Succeeded",
            )
        },
    ),
    passing(
        "PROP-03",
        "an ancestor Updating while a child updates",
        || {
            prop(
                "PROP-03",
                (PROP, "child-update", "#1"),
                json!({}),
                "Updating",
            )
        },
    ),
    failing("PROP-04", "a sibling marked Updating", || {
        prop(
            "PROP-04",
            (PROP, "child-update", "#1"),
            before("sib-before", "Succeeded"),
            "Updating",
        )
    }),
    passing("PROP-04", "a sibling untouched", || {
        prop(
            "PROP-04",
            (PROP, "child-update", "#1"),
            before("sib-before", "Succeeded"),
            "Succeeded",
        )
    }),
    failing("PROP-05", "a deleted child not Deleting", || {
        prop(
            "PROP-05",
            (PROP, "child-delete", "#1"),
            json!({}),
            "Succeeded",
        )
    }),
    passing("PROP-05", "a deleted child Deleting", || {
        prop(
            "PROP-05",
            (PROP, "child-delete", "#1"),
            json!({}),
            "Deleting",
        )
    }),
    failing(
        "PROP-06",
        "a dependant that follows its dependency's update",
        || {
            prop(
                "PROP-06",
                (PROP, "dependency-update", "#2"),
                before("x-before", "Succeeded"),
                "Updating",
            )
        },
    ),
    passing("PROP-06", "a dependant that keeps its state", || {
        prop(
            "PROP-06",
            (PROP, "dependency-update", "#2"),
            before("x-before", "Succeeded"),
            "Succeeded",
        )
    }),
];

const MON_OP: &str = "http://h/dataplane/operations/rpc-u1?api-version=2024-05-01";

fn repeated(second: &str, echoed: &str) -> Outcome {
    let scope = json!({
        "unique": "u1",
        "first": {"monitor": MON_OP},
        "second": {"monitor": second},
        "monitor": {"operation_id_header": "Operation-Id"},
    });
    headers(
        "MON-08",
        ("lro-patterns.yaml", "operation-id-repeated", "#2"),
        scope,
        202,
        &[("Operation-Id", echoed)],
    )
}

fn op_body(status: &str, error: Option<&str>) -> Value {
    let mut b = json!({"status": status});
    if let Some(c) = error {
        b["error"] = json!({"code": c, "message": "m"});
    }
    b
}

/// MON-08 and the OPS rules the suites state.
pub(crate) const OPERATIONS: &[Case] = &[
    failing(
        "MON-08",
        "a repeated operation id started a second operation",
        || {
            repeated(
                "http://h/dataplane/operations/op-2?api-version=2024-05-01",
                "rpc-u1",
            )
        },
    ),
    failing("MON-08", "a repeated operation id not echoed", || {
        repeated(MON_OP, "server-made")
    }),
    passing(
        "MON-08",
        "a repeated operation id answered the same monitor",
        || repeated(MON_OP, "rpc-u1"),
    ),
    failing("OPS-01", "a write during an operation accepted", || {
        headers(
            "OPS-01",
            (HE, "conflict-during-operation", "#1"),
            json!({}),
            201,
            &[("Azure-AsyncOperation", super::testing::OP_STATUS)],
        )
    }),
    passing(
        "OPS-01",
        "a write during an operation refused with 409",
        || {
            status(
                "OPS-01",
                (HE, "conflict-during-operation", "#1"),
                json!({}),
                409,
            )
        },
    ),
    failing("OPS-02", "a DELETE during a PUT refused", || {
        status(
            "OPS-02",
            (LIFE, "delete-cancels-running-operation", "#1"),
            json!({}),
            409,
        )
    }),
    passing("OPS-02", "a DELETE during a PUT accepted", || {
        status(
            "OPS-02",
            (LIFE, "delete-cancels-running-operation", "#1"),
            json!({}),
            202,
        )
    }),
    failing("OPS-03", "the superseded operation Succeeded", || {
        body(
            "OPS-03",
            (LIFE, "delete-cancels-running-operation", "#1"),
            json!({}),
            200,
            op_body("Succeeded", None),
        )
    }),
    failing(
        "OPS-03",
        "the superseded operation Canceled without error",
        || {
            body(
                "OPS-03",
                (LIFE, "delete-cancels-running-operation", "#1"),
                json!({}),
                200,
                op_body("Canceled", None),
            )
        },
    ),
    passing(
        "OPS-03",
        "the superseded operation Canceled with an error code",
        || {
            body(
                "OPS-03",
                (LIFE, "delete-cancels-running-operation", "#1"),
                json!({}),
                200,
                op_body("canceled", Some("Canceled")),
            )
        },
    ),
    failing(
        "OPS-04",
        "a child readable after its parent's delete",
        || {
            status(
                "OPS-04",
                (LIFE, "parent-delete-cancels-child", "#2"),
                json!({}),
                200,
            )
        },
    ),
    passing("OPS-04", "a child gone after its parent's delete", || {
        status(
            "OPS-04",
            (LIFE, "parent-delete-cancels-child", "#2"),
            json!({}),
            404,
        )
    }),
    failing("OPS-05", "another tenant reads the operation", || {
        status(
            "OPS-05",
            (LIFE, "status-scoped-to-caller", "#2"),
            json!({}),
            200,
        )
    }),
    passing("OPS-05", "another tenant refused", || {
        status(
            "OPS-05",
            (LIFE, "status-scoped-to-caller", "#2"),
            json!({}),
            403,
        )
    }),
    failing("OPS-05", "the caller refused its own operation", || {
        status(
            "OPS-05",
            (LIFE, "status-scoped-to-caller", "#1"),
            json!({}),
            403,
        )
    }),
    passing("OPS-05", "the caller reads its own operation", || {
        status(
            "OPS-05",
            (LIFE, "status-scoped-to-caller", "#1"),
            json!({}),
            200,
        )
    }),
    failing("OPS-06", "an unknown operation id answered 200", || {
        status(
            "OPS-06",
            ("operation-resource.yaml", "unknown-operation-id", "#1"),
            json!({}),
            200,
        )
    }),
    passing("OPS-06", "an unknown operation id answered 404", || {
        status(
            "OPS-06",
            ("operation-resource.yaml", "unknown-operation-id", "#1"),
            json!({}),
            404,
        )
    }),
    failing("OPS-09", "the system data header not stored", || {
        let mut b = widget("Succeeded");
        b["systemData"] = json!({"createdBy": "someone-else"});
        body(
            "OPS-09",
            (LIFE, "system-data-persisted", "put"),
            json!({"created": {"createdBy": "rpconform"}}),
            200,
            b,
        )
    }),
    passing("OPS-09", "the system data header stored", || {
        let mut b = widget("Succeeded");
        b["systemData"] = json!({"createdBy": "rpconform", "createdAt": "2026-01-01T10:00:00Z"});
        body(
            "OPS-09",
            (LIFE, "system-data-persisted", "put"),
            json!({"created": {"createdBy": "rpconform"}}),
            200,
            b,
        )
    }),
    failing("OPS-10", "the tags sent not stored", || {
        body(
            "OPS-10",
            (LIFE, "tags-persisted", "put"),
            json!({"unique": "u1"}),
            200,
            widget("Succeeded"),
        )
    }),
    passing("OPS-10", "the tags sent stored", || {
        let mut b = widget("Succeeded");
        b["tags"] = json!({"rpconform": "put-u1"});
        body(
            "OPS-10",
            (LIFE, "tags-persisted", "put"),
            json!({"unique": "u1"}),
            200,
            b,
        )
    }),
    failing("OPS-11", "an invalid body accepted", || {
        status("OPS-11", (LIFE, "static-validation", "put"), json!({}), 201)
    }),
    passing("OPS-11", "an invalid body refused with 400", || {
        status("OPS-11", (LIFE, "static-validation", "put"), json!({}), 400)
    }),
    failing("OPS-12", "a re-cased path not found", || {
        status(
            "OPS-12",
            (LIFE, "case-insensitive-ids", "#1"),
            json!({}),
            404,
        )
    }),
    passing("OPS-12", "a re-cased path found", || {
        status(
            "OPS-12",
            (LIFE, "case-insensitive-ids", "#1"),
            json!({}),
            200,
        )
    }),
    failing("OPS-13", "id in the casing of the latest request", || {
        // Created as `w`, read as `W`: the answer took the read's casing.
        let mut b = widget("Succeeded");
        b["id"] = json!(super::testing::WIDGET_ID.replace("widgets/w", "widgets/W"));
        b["name"] = json!("W");
        body(
            "OPS-13",
            (LIFE, "id-keeps-creation-casing", "#1"),
            json!({"r": {"path": super::testing::WIDGET_ID, "name": "w"}}),
            200,
            b,
        )
    }),
    passing("OPS-13", "id in the casing it was created with", || {
        body(
            "OPS-13",
            (LIFE, "id-keeps-creation-casing", "#1"),
            json!({"r": {"path": super::testing::WIDGET_ID, "name": "w"}}),
            200,
            widget("Succeeded"),
        )
    }),
];

#[test]
fn stated_cases_show_what_they_say() {
    for cases in [ETAG, WRITES, SHAPES, PROPAGATION, OPERATIONS] {
        super::testing::run_cases(cases);
    }
}
