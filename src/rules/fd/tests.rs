//! FD's failing and passing cases (the catalogue walk runs them) and what the family must not
//! judge: traffic that did not come through the front door.

use serde_json::{Value, json};

use crate::http::Exchange;
use crate::rules::Outcome;
use crate::rules::testing::{
    Case, ambient, exchange, failing, numbered, passing, with_request_headers,
};

const URL: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";
const PUBLIC: &str = "https://management.rpconform.invalid/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w?api-version=2024-05-01";
const LIST: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets?api-version=2024-05-01";
const PUBLIC_LIST: &str = "https://management.rpconform.invalid/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets?api-version=2024-05-01";
const OP_PUBLIC: &str = "https://management.rpconform.invalid/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/op1?api-version=2024-05-01";
const OP_OWN: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/op1?api-version=2024-05-01";

/// `method URL` as the front door passes it (a Referer on ARM's public host), answered so.
fn fronted(
    method: &str,
    url: &str,
    public: &str,
    status: u16,
    h: &[(&str, &str)],
    body: Value,
) -> Exchange {
    let mut headers = vec![("x-ms-request-id", "r-1")];
    headers.extend_from_slice(h);
    with_request_headers(
        exchange(method, url, status, &headers, body),
        &[("Referer", public)],
    )
}

fn widget(extra: Value) -> Value {
    let mut w = json!({"id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w",
        "name": "w", "type": "Microsoft.Contoso/widgets", "location": "eastus",
        "properties": {"provisioningState": "Succeeded"}});
    if let (Some(o), Some(e)) = (w.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    w
}

fn sd(by: &str, at: &str) -> Value {
    json!({"createdBy": by, "createdByType": "User", "createdAt": at,
           "lastModifiedBy": by, "lastModifiedByType": "User", "lastModifiedAt": at})
}

/// A write carrying the front door's system-data header.
fn write(method: &str, status: u16, header: &Value, body: Value) -> Exchange {
    with_request_headers(
        exchange(method, URL, status, &[("x-ms-request-id", "r-w")], body),
        &[
            ("Referer", PUBLIC),
            ("x-ms-arm-resource-system-data", &header.to_string()),
        ],
    )
}

fn get(shown: Value) -> Exchange {
    fronted(
        "GET",
        URL,
        PUBLIC,
        200,
        &[],
        widget(json!({"systemData": shown})),
    )
}

const T1: &str = "2026-12-02T10:00:00.001Z";
const T2: &str = "2026-12-02T10:00:05.002Z";

pub(crate) const CASES: &[Case] = &[
    failing(
        "FD-01",
        "an Azure-AsyncOperation built from the RP's own host",
        || {
            ambient(
                "FD-01",
                &[fronted(
                    "PUT",
                    URL,
                    PUBLIC,
                    201,
                    &[("Azure-AsyncOperation", OP_OWN)],
                    widget(json!({})),
                )],
            )
            .0
        },
    ),
    passing(
        "FD-01",
        "an Azure-AsyncOperation on the Referer's host",
        || {
            ambient(
                "FD-01",
                &[fronted(
                    "PUT",
                    URL,
                    PUBLIC,
                    201,
                    &[("Azure-AsyncOperation", OP_PUBLIC)],
                    widget(json!({})),
                )],
            )
            .0
        },
    ),
    failing("FD-02", "a nextLink on the RP's own host", || {
        let body = json!({"value": [], "nextLink": format!("{LIST}&$skipToken=2")});
        ambient(
            "FD-02",
            &[fronted("GET", LIST, PUBLIC_LIST, 200, &[], body)],
        )
        .0
    }),
    passing("FD-02", "a nextLink built on the Referer", || {
        let body = json!({"value": [], "nextLink": format!("{PUBLIC_LIST}&$skipToken=2")});
        ambient(
            "FD-02",
            &[fronted("GET", LIST, PUBLIC_LIST, 200, &[], body)],
        )
        .0
    }),
    failing("FD-03", "the endpoint's host in a body field", || {
        ambient(
            "FD-03",
            &[fronted(
                "GET",
                URL,
                PUBLIC,
                200,
                &[],
                widget(json!({"properties": {"endpoint": "http://h/data"}})),
            )],
        )
        .0
    }),
    passing("FD-03", "an answer that names only the public host", || {
        ambient(
            "FD-03",
            &[fronted(
                "GET",
                URL,
                PUBLIC,
                200,
                &[],
                widget(
                    json!({"properties": {"endpoint": "https://management.rpconform.invalid/x"}}),
                ),
            )],
        )
        .0
    }),
    failing("FD-04", "systemData of the RP's own making", || {
        let h = sd("rpconform@contoso.invalid", T1);
        ambient(
            "FD-04",
            &numbered(vec![
                write("PUT", 201, &h, widget(json!({}))),
                get(sd("someone-else", T1)),
            ]),
        )
        .0
    }),
    passing("FD-04", "systemData from ARM's header", || {
        let h = sd("rpconform@contoso.invalid", T1);
        ambient(
            "FD-04",
            &numbered(vec![
                write("PUT", 201, &h, widget(json!({}))),
                get(sd(
                    "rpconform@contoso.invalid",
                    "2026-12-02T10:00:00.0010000+00:00",
                )),
            ]),
        )
        .0
    }),
    failing("FD-05", "created* overwritten by a later write", || {
        let (a, b) = (
            sd("rpconform@contoso.invalid", T1),
            sd("rpconform@contoso.invalid", T2),
        );
        ambient(
            "FD-05",
            &numbered(vec![
                write("PUT", 201, &a, widget(json!({}))),
                write("PATCH", 200, &b, widget(json!({}))),
                get(b.clone()),
            ]),
        )
        .0
    }),
    passing("FD-05", "created* kept, lastModified* taken", || {
        let (a, b) = (
            sd("rpconform@contoso.invalid", T1),
            sd("rpconform@contoso.invalid", T2),
        );
        let mut shown = b.clone();
        shown["createdAt"] = json!(T1);
        ambient(
            "FD-05",
            &numbered(vec![
                write("PUT", 201, &a, widget(json!({}))),
                write("PATCH", 200, &b, widget(json!({}))),
                get(shown),
            ]),
        )
        .0
    }),
    failing("FD-08", "no answer within 60 s: ARM answered 504", || {
        let mut ex = fronted(
            "GET",
            URL,
            PUBLIC,
            504,
            &[],
            json!({"error": {"code": "GatewayTimeout", "message": "m"}}),
        );
        ex.front_door = Some(
            "ARM answered 504 itself: the resource provider did not answer within 60 s".into(),
        );
        ambient("FD-08", &[ex]).0
    }),
    passing("FD-08", "an answer in time", || {
        ambient(
            "FD-08",
            &[fronted("GET", URL, PUBLIC, 200, &[], widget(json!({})))],
        )
        .0
    }),
    failing(
        "FD-09",
        "a failure cause that is not client or service",
        || {
            let h = [("x-ms-failurecause", "user")];
            ambient(
                "FD-09",
                &[fronted(
                    "PUT",
                    URL,
                    PUBLIC,
                    400,
                    &h,
                    json!({"error": {"code": "Bad", "message": "m"}}),
                )],
            )
            .0
        },
    ),
    passing("FD-09", "client:Validation", || {
        let h = [("x-ms-failurecause", "client:Validation")];
        ambient(
            "FD-09",
            &[fronted(
                "PUT",
                URL,
                PUBLIC,
                400,
                &h,
                json!({"error": {"code": "Bad", "message": "m"}}),
            )],
        )
        .0
    }),
];

#[test]
fn the_family_judges_only_what_the_front_door_passed() {
    // Through ARM (no Referer, or one on the host called): nothing here applies.
    let own = exchange(
        "PUT",
        URL,
        201,
        &[("x-ms-request-id", "r"), ("Azure-AsyncOperation", OP_OWN)],
        widget(json!({})),
    );
    assert_eq!(
        ambient("FD-01", std::slice::from_ref(&own)).0,
        Outcome::NotJudged
    );
    let same = with_request_headers(own, &[("Referer", URL)]);
    assert_eq!(ambient("FD-01", &[same]).0, Outcome::NotJudged);
}

#[test]
fn a_link_on_the_own_host_fails_fd_01_alone() {
    // The host is FD-01's: LOC-09 and AAO-03 judge the rest, and FD-03 says nothing more.
    let ex = fronted(
        "DELETE",
        URL,
        PUBLIC,
        202,
        &[("Location", OP_OWN), ("Retry-After", "10")],
        Value::Null,
    );
    assert_eq!(
        ambient("FD-01", std::slice::from_ref(&ex)).0,
        Outcome::Failed
    );
    assert_eq!(
        ambient("LOC-09", std::slice::from_ref(&ex)).0,
        Outcome::Passed
    );
    assert_ne!(
        ambient("FD-03", std::slice::from_ref(&ex)).0,
        Outcome::Failed
    );
}

#[test]
fn a_refused_write_changes_no_system_data() {
    let (a, b) = (
        sd("rpconform@contoso.invalid", T1),
        sd("rpconform@contoso.invalid", T2),
    );
    let exs = numbered(vec![
        write("PUT", 201, &a, widget(json!({}))),
        write(
            "PUT",
            412,
            &b,
            json!({"error": {"code": "PreconditionFailed", "message": "m"}}),
        ),
        get(b.clone()),
    ]);
    assert_eq!(ambient("FD-05", &exs).0, Outcome::Failed);
    let exs = numbered(vec![
        write("PUT", 201, &a, widget(json!({}))),
        write(
            "PUT",
            412,
            &b,
            json!({"error": {"code": "PreconditionFailed", "message": "m"}}),
        ),
        get(a.clone()),
    ]);
    assert_eq!(ambient("FD-05", &exs).0, Outcome::NotJudged);
    assert_eq!(ambient("FD-04", &exs).0, Outcome::Passed);
}
