//! RES: the resource envelope and lists, on every ARM answer that carries a resource (RES-01..04)
//! or a collection (RES-05).

use serde_json::Value;

use super::Judge;
use crate::http::{Exchange, Role, cut};
use crate::target::{Addressed, Kind, Target};

/// RES-03 speaks of tracked bodies, RES-04 of proxy ones: a target that declares no type of
/// that kind never offers the rule's subject.
pub(super) fn undeclared(t: &Target) -> Vec<(&'static str, String)> {
    [("RES-03", Kind::Tracked, "tracked"), ("RES-04", Kind::Proxy, "proxy")]
        .into_iter()
        .filter(|(_, kind, _)| !t.types.iter().any(|ty| ty.kind == *kind))
        .map(|(rule, _, name)| {
            (
                rule,
                format!("no type in the target has: kind {name} ({rule} is judged on {name} resource bodies)"),
            )
        })
        .collect()
}

/// What an answer whose body gave no JSON showed: why it was not read (too deep, too many
/// values, not JSON), naming the exchange, and how the body begins.
fn unread(ex: &Exchange, resp: &crate::http::Response) -> String {
    match &resp.json_error {
        Some(why) => format!(
            "{} at exchange #{}: {why} (body: {})",
            resp.status,
            ex.seq,
            cut(&resp.body, 80)
        ),
        None => format!("{} with body {}", resp.status, cut(&resp.body, 120)),
    }
}

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
    match j.target.address(&ex.url) {
        Addressed::Resource(ty)
            if matches!(ex.method.as_str(), "GET" | "PUT" | "PATCH")
                && matches!(resp.status, 200 | 201) =>
        {
            let Some(body) = resp.json.as_ref() else {
                j.ledger.fail(
                    "RES-01",
                    "the resource as a JSON object",
                    unread(ex, resp),
                    seq,
                    None,
                );
                return;
            };
            // A recording's types are inferred from the URLs it holds: a `value` list with no
            // `id` answered at what looked like a resource (a status list, a metrics query) is
            // a collection there, not a resource to hold to the envelope.
            let listish =
                body.get("id").is_none() && body.get("value").is_some_and(Value::is_array);
            if listish && j.stripped.recorded {
                for rule in ["RES-01", "RES-02"] {
                    j.ledger.not_judged(
                        rule,
                        "the answer is a list (a `value` array, no `id`) at a URL the recording's inferred types read as a resource",
                    );
                }
                return;
            }
            envelope(j, ex, body, ty.kind);
            let path = crate::lro::url_path(&ex.url)
                .trim_end_matches('/')
                .to_string();
            let id = body.get("id").and_then(Value::as_str);
            let ty_s = body.get("type").and_then(Value::as_str);
            let want_type = j.target.arm_type_of(&ex.url).unwrap_or_default();
            j.ledger.check(
                "RES-02",
                // The same address: case-folded and percent-decoded (`$default` and
                // `%24default` are one name), but a path, never a URL.
                id.is_some_and(|i| {
                    i.starts_with('/') && crate::lro::path_key(i) == crate::lro::path_key(&ex.url)
                }) && ty_s.is_some_and(|t| t.eq_ignore_ascii_case(&want_type)),
                seq,
                || {
                    (
                        format!("id = {path}, type = {want_type} (any case)"),
                        format!(
                            "id = {}, type = {}",
                            super::words::text(id),
                            super::words::text(ty_s)
                        ),
                    )
                },
            );
        }
        Addressed::Collection(ty)
            if ex.method == "GET" && resp.status == 200 || ex.role == Role::NextPage =>
        {
            if resp.status != 200 {
                return;
            }
            let Some(body) = resp.json.as_ref() else {
                j.ledger.fail(
                    "RES-05",
                    "a JSON object with a `value` array",
                    unread(ex, resp),
                    seq,
                    None,
                );
                return;
            };
            // In a recording the collection is inferred from the URL: an answer with members
            // besides the list (`cost`, `timespan`, `interval`: a metrics query) is a query
            // result there, not a list of resources.
            let query_members = body.as_object().is_some_and(|o| {
                o.keys()
                    .any(|k| !matches!(k.as_str(), "value" | "nextLink") && !k.starts_with('@'))
            });
            if query_members && j.stripped.recorded {
                j.ledger.not_judged(
                    "RES-05",
                    "the answer holds more than a list (a query result) at a URL the recording's inferred types read as a collection",
                );
                return;
            }
            let value = body.get("value").and_then(Value::as_array);
            let next = body.get("nextLink").filter(|n| !n.is_null());
            let next_ok = next.is_none_or(|n| n.as_str().is_some_and(crate::lro::is_absolute_uri));
            j.ledger
                .check("RES-05", value.is_some() && next_ok, seq, || {
                    (
                        "`value` array; nextLink absent, null or an absolute URI".into(),
                        format!(
                            "value: {}, nextLink: {}",
                            value
                                .map(|v| format!("{} items", v.len()))
                                .unwrap_or("missing".into()),
                            super::words::json(next)
                        ),
                    )
                });
            for item in value.into_iter().flatten() {
                envelope(j, ex, item, ty.kind);
            }
        }
        _ => {}
    }
}

/// RES-01, RES-03, RES-04 on one resource body.
/// The identity kinds a `systemData` names (the RPC's example and its table differ in case:
/// both read).
const IDENTITY_TYPES: [&str; 4] = ["User", "Application", "ManagedIdentity", "Key"];

/// RES-06: `systemData`, when present, as the public RPC describes it.
fn system_data(j: &mut Judge<'_>, seq: Option<u64>, sd: &Value) {
    let mut why = Vec::new();
    match sd.as_object() {
        None => why.push(format!("systemData is {sd}, not an object")),
        Some(o) => {
            for k in ["createdByType", "lastModifiedByType"] {
                if let Some(v) = o.get(k).filter(|v| !v.is_null()) {
                    let ok = v
                        .as_str()
                        .is_some_and(|s| IDENTITY_TYPES.iter().any(|t| t.eq_ignore_ascii_case(s)));
                    if !ok {
                        why.push(format!("{k} = {v}"));
                    }
                }
            }
            for k in ["createdAt", "lastModifiedAt"] {
                if let Some(v) = o.get(k).filter(|v| !v.is_null())
                    && v.as_str().and_then(super::iso8601::parse).is_none()
                {
                    why.push(format!("{k} = {v}"));
                }
            }
        }
    }
    j.ledger.check("RES-06", why.is_empty(), seq, || {
        (
            "systemData: *ByType one of User, Application, ManagedIdentity, Key; *At ISO 8601"
                .into(),
            why.join("; "),
        )
    });
}

/// The members of the resource envelope the RPC names as never repeated inside `properties`:
/// present there in any form (any letter case, any value), they are a second copy.
const NEVER_REPEATED: [&str; 4] = ["id", "name", "location", "tags"];

/// The other envelope members: repeated only when `properties` holds the same value (a
/// `properties.type` naming an extension's handler, or a discriminator, is the type's own
/// property, not the ARM type again).
const NOT_AGAIN: [&str; 9] = [
    "type",
    "sku",
    "kind",
    "etag",
    "identity",
    "plan",
    "managedBy",
    "zones",
    "systemData",
];

/// RES-08: what the envelope holds is not repeated inside `properties`.
fn not_repeated(j: &mut Judge<'_>, seq: Option<u64>, body: &Value) {
    let Some(props) = body.get("properties").and_then(Value::as_object) else {
        return;
    };
    let outer = |k: &str| body.get(k).filter(|v| !v.is_null());
    let inner = |k: &str| {
        props
            .iter()
            .find(|(pk, pv)| pk.eq_ignore_ascii_case(k) && !pv.is_null())
            .map(|(_, v)| v)
    };
    let repeated: Vec<&str> = NEVER_REPEATED
        .iter()
        .copied()
        .filter(|k| outer(k).is_some() && inner(k).is_some())
        .chain(
            NOT_AGAIN
                .iter()
                .copied()
                .filter(|k| outer(k).is_some() && outer(k) == inner(k)),
        )
        .collect();
    j.ledger.check("RES-08", repeated.is_empty(), seq, || {
        (
            "envelope members (name, location, tags...) not repeated inside properties".into(),
            format!("properties repeats {}", repeated.join(", ")),
        )
    });
}

fn envelope(j: &mut Judge<'_>, ex: &Exchange, body: &Value, kind: Kind) {
    let seq = Some(ex.seq);
    if let Some(sd) = body.get("systemData").filter(|v| !v.is_null()) {
        system_data(j, seq, sd);
    }
    not_repeated(j, seq, body);
    let s = |k: &str| body.get(k).and_then(Value::as_str);
    let (id, name, ty) = (s("id"), s("name"), s("type"));
    let last = id.map(|i| i.trim_end_matches('/').rsplit('/').next().unwrap_or(""));
    let props_ok = body
        .get("properties")
        .is_none_or(|p| p.is_object() || p.is_null());
    j.ledger.check(
        "RES-01",
        id.is_some() && ty.is_some() && name.is_some() && name == last && props_ok,
        seq,
        || {
            (
                "string id, name and type; name = last segment of id; properties an object".into(),
                format!(
                    "id = {}, name = {}, type = {}, properties object: {props_ok}",
                    super::words::text(id),
                    super::words::text(name),
                    super::words::text(ty)
                ),
            )
        },
    );
    let tags_ok = body.get("tags").is_none_or(|t| {
        t.is_null()
            || t.as_object()
                .is_some_and(|m| m.values().all(Value::is_string))
    });
    match kind {
        Kind::Tracked => {
            let loc_ok = s("location").is_some_and(|l| !l.trim().is_empty());
            j.ledger.check("RES-03", loc_ok && tags_ok, seq, || {
                (
                    "a non-empty string location; tags an object of strings".into(),
                    format!(
                        "location = {}, tags = {}",
                        super::words::json(body.get("location")),
                        super::words::json(body.get("tags"))
                    ),
                )
            });
        }
        Kind::Proxy => {
            // A member set to null is absent (the catalogue reads null so everywhere).
            let absent = |k: &str| body.get(k).is_none_or(Value::is_null);
            let ok = absent("tags") && absent("location");
            j.ledger.check("RES-04", ok, seq, || {
                (
                    "no tags and no location on a proxy resource".into(),
                    format!(
                        "location = {}, tags = {}",
                        super::words::json(body.get("location")),
                        super::words::json(body.get("tags"))
                    ),
                )
            });
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::rules::Outcome;
    use crate::rules::testing::{
        Case, GADGET, WIDGET, WIDGETS, ambient, exchange, failing, passing, run_cases, widget,
    };
    use serde_json::{Value, json};

    fn got(rule: &str, url: &str, body: Value) -> Outcome {
        ambient(
            rule,
            &[exchange("GET", url, 200, &[("ETag", "\"1\"")], body)],
        )
        .0
    }

    fn widget_with(key: &str, v: Value) -> Value {
        let mut b = widget("Succeeded");
        match v {
            Value::Null => {
                b.as_object_mut().unwrap().remove(key);
            }
            v => b[key] = v,
        }
        b
    }

    fn gadget() -> Value {
        json!({
            "id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/w/gadgets/g",
            "name": "g",
            "type": "Microsoft.Contoso/widgets/gadgets",
            "properties": {"provisioningState": "Succeeded"}
        })
    }

    fn listed(body: Value) -> Outcome {
        got("RES-05", WIDGETS, body)
    }

    /// RES-01..05, each shown failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("RES-01", "name not the last segment of id", || {
            got("RES-01", WIDGET, widget_with("name", json!("x")))
        }),
        failing("RES-01", "no type", || {
            got("RES-01", WIDGET, widget_with("type", Value::Null))
        }),
        failing("RES-01", "properties an array", || {
            got("RES-01", WIDGET, widget_with("properties", json!([])))
        }),
        failing("RES-01", "a resource answer that is not JSON", || {
            let mut x = exchange("GET", WIDGET, 200, &[], Value::Null);
            let r = x.response.as_mut().unwrap();
            r.json = None;
            r.body = "<html/>".into();
            ambient("RES-01", &[x]).0
        }),
        passing("RES-01", "the envelope", || {
            got("RES-01", WIDGET, widget("Succeeded"))
        }),
        failing("RES-02", "another type", || {
            got(
                "RES-02",
                WIDGET,
                widget_with("type", json!("Microsoft.Contoso/gadgets")),
            )
        }),
        failing("RES-02", "an id without the resource group", || {
            got(
                "RES-02",
                WIDGET,
                widget_with(
                    "id",
                    json!("/subscriptions/s/providers/Microsoft.Contoso/widgets/w"),
                ),
            )
        }),
        passing("RES-02", "id and type of the URL, in another case", || {
            let b = widget_with("type", json!("microsoft.contoso/WIDGETS"));
            got("RES-02", WIDGET, b)
        }),
        failing("RES-03", "a tracked resource without location", || {
            got("RES-03", WIDGET, widget_with("location", Value::Null))
        }),
        failing("RES-03", "tags with a number", || {
            got("RES-03", WIDGET, widget_with("tags", json!({"n": 1})))
        }),
        passing("RES-03", "location and string tags", || {
            got("RES-03", WIDGET, widget("Succeeded"))
        }),
        failing("RES-04", "a proxy resource with location", || {
            let mut b = gadget();
            b["location"] = json!("eastus");
            got("RES-04", GADGET, b)
        }),
        failing("RES-04", "a proxy resource with tags", || {
            let mut b = gadget();
            b["tags"] = json!({});
            got("RES-04", GADGET, b)
        }),
        passing(
            "RES-08",
            "properties.type naming an extension's handler",
            || {
                let mut b = widget("Succeeded");
                b["properties"]["type"] = json!("CustomScriptExtension");
                got("RES-08", WIDGET, b)
            },
        ),
        failing("RES-08", "properties repeats the ARM type", || {
            let mut b = widget("Succeeded");
            b["properties"]["type"] = b["type"].clone();
            got("RES-08", WIDGET, b)
        }),
        failing("RES-08", "properties repeats location", || {
            let mut b = widget_with("location", json!("eastus"));
            b["properties"]["location"] = json!("eastus");
            got("RES-08", WIDGET, b)
        }),
        failing("RES-08", "properties repeats Name in another case", || {
            let mut b = widget("Succeeded");
            b["properties"]["Name"] = json!("w");
            got("RES-08", WIDGET, b)
        }),
        passing(
            "RES-08",
            "properties.sku of a type with no top-level sku",
            || {
                let mut b = widget_with("location", json!("eastus"));
                b["properties"]["sku"] = json!({"name": "standard"});
                got("RES-08", WIDGET, b)
            },
        ),
        failing("RES-06", "systemData.createdAt in a US locale", || {
            let b = widget_with(
                "systemData",
                json!({"createdBy": "a", "createdByType": "User", "createdAt": "11/26/2026 6:00:00 PM"}),
            );
            got("RES-06", WIDGET, b)
        }),
        failing("RES-06", "systemData.lastModifiedByType Human", || {
            let b = widget_with("systemData", json!({"lastModifiedByType": "Human"}));
            got("RES-06", WIDGET, b)
        }),
        passing(
            "RES-06",
            "systemData as the RPC shows it (either case)",
            || {
                let b = widget_with(
                    "systemData",
                    json!({"createdBy": "a", "createdByType": "managedIdentity",
                       "createdAt": "2026-11-26T18:00:00.1234567Z",
                       "lastModifiedByType": "Application", "lastModifiedAt": "2026-11-26T18:00:00Z"}),
                );
                got("RES-06", WIDGET, b)
            },
        ),
        passing(
            "RES-04",
            "a proxy resource with location and tags null",
            || {
                let mut b = gadget();
                b["location"] = serde_json::Value::Null;
                b["tags"] = serde_json::Value::Null;
                got("RES-04", GADGET, b)
            },
        ),
        passing("RES-04", "a proxy resource without either", || {
            got("RES-04", GADGET, gadget())
        }),
        failing("RES-05", "a bare-path nextLink", || {
            listed(
                json!({"value": [], "nextLink": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets?api-version=2024-05-01&$skiptoken=2"}),
            )
        }),
        failing("RES-05", "no value array", || listed(json!({"items": []}))),
        passing("RES-05", "a value array and an absolute nextLink", || {
            listed(
                json!({"value": [widget("Succeeded")], "nextLink": "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets?api-version=2024-05-01&$skiptoken=2"}),
            )
        }),
        passing("RES-05", "a value array and a null nextLink", || {
            listed(json!({"value": [], "nextLink": null}))
        }),
        failing("RES-01", "a listed item without name", || {
            got(
                "RES-01",
                WIDGETS,
                json!({"value": [widget_with("name", Value::Null)]}),
            )
        }),
    ];

    #[test]
    fn res_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn in_a_recording_lists_and_query_results_are_not_held_to_the_resource_shapes() {
        use crate::rules::testing::recorded;
        let list = json!({"value": [{"a": 1}]});
        let query =
            json!({"cost": 0, "timespan": "x", "value": [{"id": "/x", "name": {"value": "n"}}]});
        // Live, the target declared these URLs: the answers are judged.
        assert_eq!(got("RES-01", WIDGET, list.clone()), Outcome::Failed);
        assert_eq!(listed(query.clone()), Outcome::Passed);
        // Recorded, the types were inferred from the URLs: not judged.
        let at = |url: &str, body: Value| vec![exchange("GET", url, 200, &[], body)];
        assert_eq!(recorded("RES-01", &at(WIDGET, list)), Outcome::NotJudged);
        assert_eq!(recorded("RES-05", &at(WIDGETS, query)), Outcome::NotJudged);
    }
}
