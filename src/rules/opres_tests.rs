//! OPRES cases: each rule failing and passing (kept beside `opres.rs`).
use crate::http::Role;
use crate::lro::{Channel, Outcome as Op};
use crate::rules::Outcome;
use crate::rules::flow::End;
use crate::rules::testing::{
    Case, OP_RESULT, OP_STATUS, WIDGET, ambient, exchange, failing, flow, flow_outcome, op_read,
    op_status, passing, poll, run_cases, widget, with_role,
};
use serde_json::{Value, json};

fn read(rule: &str, body: Value) -> Outcome {
    ambient(rule, &[op_read(body)]).0
}

/// `op_status(status)` with `key` set to `v` (removed when null).
fn with(status: &str, key: &str, v: Value) -> Value {
    let mut b = op_status(status);
    match v {
        Value::Null => {
            b.as_object_mut().unwrap().remove(key);
        }
        v => b[key] = v,
    }
    b
}

fn followed(end: End) -> Outcome {
    let put = exchange(
        "PUT",
        WIDGET,
        201,
        &[("Azure-AsyncOperation", OP_STATUS)],
        widget("Creating"),
    );
    flow_outcome(
        "OPRES-03",
        vec![put, op_read(op_status("InProgress"))],
        |exs| {
            flow(
                exs,
                Some(Channel::AzureAsyncOperation),
                vec![poll(1, Channel::AzureAsyncOperation, true)],
                end,
            )
        },
    )
}

/// OPRES-01..10, each shown failing and passing.
pub(crate) const CASES: &[Case] = &[
    failing(
        "OPRES-01",
        "an operation-resource read answered 404",
        || {
            let x = with_role(
                exchange(
                    "GET",
                    OP_STATUS,
                    404,
                    &[],
                    json!({"error": {"code": "NotFound", "message": "gone"}}),
                ),
                Role::OperationStatus,
            );
            ambient("OPRES-01", &[x]).0
        },
    ),
    failing(
        "OPRES-01",
        "an operation-resource read answered 500",
        || {
            let x = with_role(
                exchange("GET", OP_STATUS, 500, &[], Value::Null),
                Role::OperationStatus,
            );
            ambient("OPRES-01", &[x]).0
        },
    ),
    passing(
        "OPRES-01",
        "an operation-resource read answered 200",
        || read("OPRES-01", op_status("InProgress")),
    ),
    failing("OPRES-02", "no status", || {
        read("OPRES-02", with("InProgress", "status", Value::Null))
    }),
    failing("OPRES-02", "an empty body", || {
        let mut x = op_read(Value::Null);
        let r = x.response.as_mut().unwrap();
        r.json = None;
        r.body = String::new();
        ambient("OPRES-02", &[x]).0
    }),
    passing("OPRES-02", "a string status", || {
        read("OPRES-02", op_status("InProgress"))
    }),
    failing("OPRES-03", "still running at the deadline", || {
        followed(End::TimedOut)
    }),
    passing("OPRES-03", "terminal within the deadline", || {
        followed(End::Finished(Op::Succeeded))
    }),
    failing("OPRES-04", "no id", || {
        read("OPRES-04", with("InProgress", "id", Value::Null))
    }),
    failing("OPRES-04", "an id that is not the URL read", || {
        read(
            "OPRES-04",
            with(
                "InProgress",
                "id",
                json!("/subscriptions/s/providers/Microsoft.Contoso/operations/op1"),
            ),
        )
    }),
    passing("OPRES-04", "id and name, id the URL read", || {
        read("OPRES-04", op_status("InProgress"))
    }),
    failing(
        "OPRES-05",
        "name the resource's, not the operation's",
        || read("OPRES-05", with("InProgress", "name", json!("w"))),
    ),
    passing("OPRES-05", "name the last segment of id", || {
        read("OPRES-05", op_status("InProgress"))
    }),
    passing(
        "OPRES-05",
        "an id written as a URL with api-version, its last segment upper-cased",
        || {
            let mut b = op_status("InProgress");
            b["id"] = json!(
                "https://management.azure.com/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/OP1?api-version=2024-05-01"
            );
            read("OPRES-05", b)
        },
    ),
    failing("OPRES-06", "a US-locale startTime", || {
        read(
            "OPRES-06",
            with("InProgress", "startTime", json!("1/1/2026 10:00:00 AM")),
        )
    }),
    failing("OPRES-06", "percentComplete 150", || {
        read(
            "OPRES-06",
            with("InProgress", "percentComplete", json!(150)),
        )
    }),
    passing("OPRES-06", "ISO 8601 times and percentComplete 100", || {
        read("OPRES-06", with("Succeeded", "percentComplete", json!(100)))
    }),
    failing("OPRES-07", "properties while InProgress", || {
        read(
            "OPRES-07",
            with("InProgress", "properties", json!({"size": 3})),
        )
    }),
    passing("OPRES-07", "properties once Succeeded", || {
        read(
            "OPRES-07",
            with("Succeeded", "properties", json!({"size": 3})),
        )
    }),
    failing("OPRES-08", "Failed without error", || {
        read("OPRES-08", with("Failed", "error", Value::Null))
    }),
    failing("OPRES-08", "Failed with an empty error.message", || {
        read(
            "OPRES-08",
            with("Failed", "error", json!({"code": "Boom", "message": ""})),
        )
    }),
    failing("OPRES-08", "Canceled without error", || {
        read("OPRES-08", with("Canceled", "error", Value::Null))
    }),
    passing("OPRES-08", "Failed with code and message", || {
        read("OPRES-08", op_status("Failed"))
    }),
    passing("OPRES-08", "Canceled with a code", || {
        read(
            "OPRES-08",
            with("Canceled", "error", json!({"code": "Canceled"})),
        )
    }),
    failing("OPRES-09", "status `succeeded`", || {
        read("OPRES-09", with("Succeeded", "status", json!("succeeded")))
    }),
    failing("OPRES-09", "provisioningState `SUCCEEDED`", || {
        let x = exchange(
            "GET",
            WIDGET,
            200,
            &[("ETag", "\"1\"")],
            widget("SUCCEEDED"),
        );
        ambient("OPRES-09", &[x]).0
    }),
    passing("OPRES-09", "status `Succeeded`", || {
        read("OPRES-09", op_status("Succeeded"))
    }),
    passing("OPRES-09", "provisioningState `Canceled`", || {
        let x = exchange("GET", WIDGET, 200, &[("ETag", "\"1\"")], widget("Canceled"));
        ambient("OPRES-09", &[x]).0
    }),
    failing(
        "OPRES-10",
        "the operation id handed out is the answer's x-ms-request-id",
        || handed_out("op1"),
    ),
    passing("OPRES-10", "an operation id of its own", || {
        handed_out("5f0c7a1e-0000-4000-8000-000000000001")
    }),
    failing(
        "OPRES-12",
        "an ended operation's URL handed out again reads running",
        || successive(OP_STATUS, "InProgress"),
    ),
    passing(
        "OPRES-12",
        "the second operation gets a URL of its own",
        || {
            successive(
                "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/op2?api-version=2024-05-01",
                "InProgress",
            )
        },
    ),
    passing(
        "OPRES-12",
        "an ended operation's URL handed out again for a repeat still reads Succeeded",
        || successive(OP_STATUS, "Succeeded"),
    ),
];

/// A PATCH handing out `OP_STATUS`, read Succeeded; a second PATCH handing out `second`,
/// which then reads `then`.
fn successive(second: &str, then: &str) -> Outcome {
    let patch = |aao: &str| {
        exchange(
            "PATCH",
            WIDGET,
            202,
            &[("Azure-AsyncOperation", aao), ("Location", OP_RESULT)],
            Value::Null,
        )
    };
    let status_read = |url: &str, st: &str| {
        with_role(
            exchange("GET", url, 200, &[], json!({"status": st})),
            Role::OperationStatus,
        )
    };
    let exs = [
        patch(OP_STATUS),
        status_read(OP_STATUS, "Succeeded"),
        patch(second),
        status_read(second, then),
    ];
    ambient("OPRES-12", &exs).0
}

/// A 201 handing out `OP_STATUS` (operation id op1), answered with this x-ms-request-id.
fn handed_out(request_id: &str) -> Outcome {
    let put = exchange(
        "PUT",
        WIDGET,
        201,
        &[
            ("Azure-AsyncOperation", OP_STATUS),
            ("x-ms-request-id", request_id),
        ],
        widget("Creating"),
    );
    ambient("OPRES-10", &[put]).0
}

#[test]
fn opres_cases_show_what_they_say() {
    run_cases(CASES);
}

#[test]
fn opres_04_compares_decoded_paths_without_case_once_per_operation() {
    use crate::rules::testing::numbered;
    let url = "http://h/subscriptions/s/providers/Microsoft.Web/locations/West%20US/operationResults/abc?api-version=2024-05-01";
    let read_of = |status: &str, id: &str| {
        with_role(
            exchange(
                "GET",
                url,
                200,
                &[],
                json!({"id": id, "name": "abc", "status": status}),
            ),
            Role::OperationStatus,
        )
    };
    let spaced = "/subscriptions/s/providers/Microsoft.Web/locations/West US/operationresults/abc";
    let reads = numbered(vec![
        read_of("InProgress", spaced),
        read_of("InProgress", spaced),
        read_of("Succeeded", spaced),
    ]);
    assert_eq!(ambient("OPRES-04", &reads), (Outcome::Passed, 1, 0));
    // A wrong id fails once for the operation, however often it is read.
    let other = "/subscriptions/s/providers/Microsoft.Web/locations/West US/operationresults/xyz";
    let reads = numbered(vec![
        read_of("InProgress", other),
        read_of("InProgress", other),
        read_of("Succeeded", other),
    ]);
    assert_eq!(ambient("OPRES-04", &reads), (Outcome::Failed, 0, 1));
}

#[test]
fn opres_06_and_07_are_not_judged_without_their_fields() {
    let bare = json!({"id": "/x/op1", "name": "op1", "status": "InProgress"});
    assert_eq!(read("OPRES-06", bare.clone()), Outcome::NotJudged);
    assert_eq!(read("OPRES-07", bare), Outcome::NotJudged);
}

#[test]
fn an_operation_resource_without_the_optional_fields_is_not_applicable_to_opres_05_and_06() {
    use crate::rules::testing::why_not;
    let why = |rule: &str, body: Value| why_not(rule, vec![op_read(body)], None);
    // Status only (the shape most real RPs send).
    let bare = json!({"status": "InProgress"});
    let r5 = why("OPRES-05", bare.clone()).unwrap();
    assert!(
        r5.starts_with("not applicable: the operation resource carries neither `name` nor `id`"),
        "{r5}"
    );
    let r6 = why("OPRES-06", bare).unwrap();
    assert!(r6.starts_with("not applicable: the operation resource carries no startTime, endTime or percentComplete"), "{r6}");
    let named = json!({"name": "op1", "status": "InProgress"});
    assert!(
        why("OPRES-05", named)
            .unwrap()
            .contains("no `id` to compare")
    );
    let with_id = json!({"id": "/x/op1", "status": "InProgress"});
    assert!(
        why("OPRES-05", with_id)
            .unwrap()
            .contains("carries no `name`")
    );
    // Present, they are judged: the name against the id, the times' form.
    assert_eq!(
        read("OPRES-05", with("InProgress", "name", json!("other"))),
        Outcome::Failed
    );
    assert_eq!(read("OPRES-05", op_status("InProgress")), Outcome::Passed);
    assert_eq!(
        read(
            "OPRES-06",
            with("InProgress", "startTime", json!("11/22/2026"))
        ),
        Outcome::Failed
    );
    assert_eq!(read("OPRES-06", op_status("InProgress")), Outcome::Passed);
    // One read with them decides, whatever reads without them said.
    let exs = crate::rules::testing::numbered(vec![
        op_read(json!({"status": "InProgress"})),
        op_read(with("Succeeded", "name", json!("other"))),
    ]);
    assert_eq!(ambient("OPRES-05", &exs).0, Outcome::Failed);
}
