//! SPEC: the RP against its own OpenAPI spec (the target's `openapi:` files). Every answer the
//! spec describes is judged as it happens: its status is declared (SPEC-01), a long-running
//! answer belongs to an operation declared long-running and one declared so answers as one
//! (SPEC-02), the header its `final-state-via` names is handed out (SPEC-03), its body
//! validates against the declared schema (SPEC-04), the declared polling headers are sent
//! (SPEC-05), `x-ms-secret` properties never come back (SPEC-06), and readOnly members a
//! request sets are ignored or refused, never taken (SPEC-07). Findings name the spec
//! file and line of the operation; reports list them apart ("your RP breaks its own spec"),
//! since the fix is often in the spec.

use serde_json::Value;

use super::Judge;
use crate::http::Exchange;
use crate::spec::schema::READ_ONLY_PROBE;
use crate::spec::{Found, Operation};
use crate::target::Target;

/// SPEC-06 speaks of properties the spec marks `x-ms-secret`: a spec that marks none never
/// offers its subject. (Without a spec the openapi profile is not declared at all.)
pub(super) fn undeclared(t: &Target) -> Vec<(&'static str, String)> {
    let Some(specs) = &t.specs else {
        return Vec::new();
    };
    if specs.operations().iter().any(|op| !op.secrets.is_empty()) {
        return Vec::new();
    }
    vec![(
        "SPEC-06",
        "the spec marks no property `x-ms-secret: true` (SPEC-06 is judged on the answers of operations whose schema has one)".into(),
    )]
}

/// What the engine judges of SPEC by itself: every answer, on every surface its spec describes;
/// SPEC-07 only where a test sends the probe (no client sends it by itself).
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) =
    (super::Shows::Every, &[("SPEC-07", super::Shows::Stated)]);

/// The headers SPEC-05 holds a response to when its operation declares them: the ones clients
/// poll and wait by.
const POLLING_HEADERS: [&str; 4] = [
    "location",
    "azure-asyncoperation",
    "operation-location",
    "retry-after",
];

/// The contract rules that judge, on the same answer, what a SPEC rule reads there: when one
/// of them already failed on it, the answer's drift from its spec is that failure's (its spec
/// describes the contract), not judged again — one defect, one failed rule.
fn related(spec: &str, rule: &str) -> bool {
    let family = rule.split('-').next().unwrap_or("");
    match spec {
        "SPEC-01" => {
            matches!(family, "PUT" | "PATCH" | "DEL" | "ACT" | "ETAG")
                || matches!(rule, "OPRES-01" | "AAO-02" | "LOC-05" | "TASK-05")
        }
        "SPEC-02" => matches!(rule, "LOC-01" | "ACT-01" | "DEL-01" | "PATCH-01" | "MON-01"),
        "SPEC-03" | "SPEC-05" => matches!(
            rule,
            "LOC-01"
                | "LOC-02"
                | "LOC-03"
                | "LOC-04"
                | "AAO-01"
                | "DEL-01"
                | "DEL-02"
                | "ACT-01"
                | "MON-01"
                | "RETRY-01"
        ),
        "SPEC-04" => {
            matches!(
                family,
                "ERR" | "RES" | "OPRES" | "PSTATE" | "SKU" | "TASK" | "MON"
            ) || rule == "PUT-02"
        }
        _ => false,
    }
}

/// Is `spec` left unjudged on this answer because a related contract rule failed on it?
fn already_failed(j: &mut Judge<'_>, ex: &Exchange, spec: &'static str) -> bool {
    match j.ledger.failed_here(ex.seq, |r| related(spec, r)) {
        Some(cause) => {
            j.ledger.blocked(
                spec,
                &cause,
                "the answer already breaks the contract there; its drift from its spec is that failure's",
            );
            true
        }
        None => false,
    }
}

/// Skip schema validation of bodies larger than this (HDR-06's limit: ARM drops them).
const MAX_VALIDATED_BYTES: usize = 8 * 1024 * 1024;

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(specs) = j.target.specs.clone() else {
        return;
    };
    let Some(resp) = &ex.response else { return };
    let found = match specs.find(&ex.method, &ex.url) {
        Found::Operation(op) => Some(op),
        _ => None,
    };
    // Before anything else returns: an echo of the probe may come on any answer (an
    // operation's result too, which a spec need not describe).
    read_only(j, ex, found);
    let Some(op) = found else {
        return;
    };
    let seq = Some(ex.seq);
    let Some(declared) = op.response(resp.status) else {
        if already_failed(j, ex, "SPEC-01") {
            return;
        }
        j.ledger.fail(
            "SPEC-01",
            format!("a status `{}` declares ({})", op.id, op.declared()),
            format!(
                "{} (not declared; `default` covers errors only)",
                resp.status
            ),
            seq,
            Some(&op.pos),
        );
        return;
    };
    j.ledger.pass("SPEC-01");
    long_running(j, ex, op);
    if declared.schema.is_some()
        && resp.json.is_none()
        && let Some(why) = &resp.json_error
        && !already_failed(j, ex, "SPEC-04")
    {
        j.ledger
            .not_judged("SPEC-04", format!("exchange #{}: {why}", ex.seq));
    }
    if let Some(schema) = &declared.schema
        && let Some(body) = &resp.json
        && resp.body_bytes <= MAX_VALIDATED_BYTES
        && !already_failed(j, ex, "SPEC-04")
    {
        use crate::spec::schema::Validity;
        match schema.check(body) {
            Validity::Valid => j.ledger.pass("SPEC-04"),
            // Bounded matching decided nothing: never a failure the RP's string may not earn.
            Validity::Undecided(why) => j.ledger.not_judged(
                "SPEC-04",
                format!("exchange #{}: the body could not be checked against `{}` in bounded time: {why}", ex.seq, schema.name),
            ),
            Validity::Invalid(errors) => j.ledger.fail(
                "SPEC-04",
                format!(
                    "a body valid against `{}` ({} {})",
                    schema.name, op.id, resp.status
                ),
                errors.join("; "),
                seq,
                Some(&op.pos),
            ),
        }
    }
    let missing: Vec<&str> = declared
        .headers
        .iter()
        .map(String::as_str)
        .filter(|h| POLLING_HEADERS.contains(h))
        .filter(|h| resp.header(h).is_none() && !j.response_stripped(h))
        .collect();
    if !missing.is_empty() && already_failed(j, ex, "SPEC-05") {
        // The contract failure on this answer says it.
    } else if !missing.is_empty() {
        j.ledger.fail(
            "SPEC-05",
            format!("the headers `{}` declares on {}", op.id, resp.status),
            format!("no {}", missing.join(", ")),
            seq,
            Some(&op.pos),
        );
    } else if declared
        .headers
        .iter()
        .any(|h| POLLING_HEADERS.contains(&h.as_str()))
    {
        j.ledger.pass("SPEC-05");
    }
    secrets(j, ex, op);
}

/// SPEC-02 and SPEC-03, on the answer to a write.
fn long_running(j: &mut Judge<'_>, ex: &Exchange, op: &Operation) {
    let Some(resp) = &ex.response else { return };
    if matches!(ex.method.as_str(), "GET" | "HEAD") || !(200..300).contains(&resp.status) {
        return;
    }
    let seq = Some(ex.seq);
    let polling = ["azure-asyncoperation", "operation-location"]
        .into_iter()
        .find(|h| resp.header(h).is_some())
        .or_else(|| {
            (resp.status == 202 && resp.header("location").is_some()).then_some("location")
        });
    let drifts = match polling {
        Some(_) => !op.long_running,
        None => op.long_running && resp.status == 202,
    };
    if drifts && already_failed(j, ex, "SPEC-02") {
        return;
    }
    match polling {
        Some(h) if !op.long_running => j.ledger.fail(
            "SPEC-02",
            format!("`{}` declared x-ms-long-running-operation, as its answers are", op.id),
            format!("{} handing out {h}, but the spec does not declare it long-running (generated clients will not poll)", resp.status),
            seq,
            Some(&op.pos),
        ),
        None if op.long_running && resp.status == 202 => j.ledger.fail(
            "SPEC-02",
            format!("`{}`, declared long-running, handing out where to poll", op.id),
            "202 with no Location, Azure-AsyncOperation or Operation-Location",
            seq,
            Some(&op.pos),
        ),
        Some(_) => j.ledger.pass("SPEC-02"),
        None => {}
    }
    let (Some(_), Some(fsv)) = (polling, op.final_state_via.as_deref()) else {
        return;
    };
    let header = match fsv {
        "location" => "location",
        "azure-async-operation" => "azure-asyncoperation",
        "operation-location" => "operation-location",
        // original-uri: the result is the operation's own URL, always there.
        _ => {
            j.ledger.pass("SPEC-03");
            return;
        }
    };
    if resp.header(header).is_some() {
        j.ledger.pass("SPEC-03");
    } else if !already_failed(j, ex, "SPEC-03") {
        j.ledger.fail(
            "SPEC-03",
            format!(
                "`{}` declares final-state-via {fsv}: the final result is read from its {header}",
                op.id
            ),
            format!(
                "{} without {header}: a generated client has nowhere to read the result",
                resp.status
            ),
            seq,
            Some(&op.pos),
        );
    }
}

/// SPEC-06: no `x-ms-secret` property in a successful answer's body.
fn secrets(j: &mut Judge<'_>, ex: &Exchange, op: &Operation) {
    let Some(resp) = &ex.response else { return };
    if op.secrets.is_empty() || !(200..300).contains(&resp.status) {
        return;
    }
    let Some(body) = &resp.json else { return };
    let shown: Vec<&str> = op
        .secrets
        .iter()
        .filter(|s| s.shown_in(body))
        .map(|s| s.pointer.as_str())
        .collect();
    if shown.is_empty() {
        j.ledger.pass("SPEC-06");
    } else {
        j.ledger.fail(
            "SPEC-06",
            format!("no x-ms-secret property of `{}` in its answer", op.id),
            format!("{} returned at {}", shown.len(), shown.join(", ")),
            Some(ex.seq),
            Some(&op.pos),
        );
    }
}

/// A write that set readOnly members to [`READ_ONLY_PROBE`] and was taken (2xx).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Probed {
    /// The resource it wrote (path key).
    key: String,
    /// The members it set.
    pointers: Vec<String>,
    /// The operation, as findings name it.
    op: String,
    pos: crate::diag::Pos,
}

/// SPEC-07: readOnly members a request sets are ignored or the request refused, never taken.
/// Judged only on the value rpconform makes up for them ([`READ_ONLY_PROBE`], which no server
/// would choose): a value a client sends back (a GET's body PUT again) may be the true one, so
/// seeing it again proves nothing.
fn read_only(j: &mut Judge<'_>, ex: &Exchange, op: Option<&Operation>) {
    let Some(resp) = &ex.response else { return };
    // Most answers come with no probe sent and none before: nothing to do.
    let sends = ex
        .request_body
        .as_deref()
        .is_some_and(|b| b.contains(READ_ONLY_PROBE));
    if !sends && j.history.read_only.is_empty() {
        return;
    }
    let key = crate::lro::path_key(&ex.url);
    if let Some(op) = op
        && matches!(ex.method.as_str(), "PUT" | "PATCH")
        && sends
        && let Some(Ok(sent)) = ex
            .request_body
            .as_deref()
            .map(serde_json::from_str::<Value>)
    {
        let probe = Value::from(READ_ONLY_PROBE);
        let pointers: Vec<String> = op
            .read_only_text
            .iter()
            .filter(|m| sent.pointer(&m.pointer) == Some(&probe))
            .map(|m| m.pointer.clone())
            .collect();
        if !pointers.is_empty() {
            match resp.status {
                200..=299 => j.history.read_only.push(Probed {
                    key: key.clone(),
                    pointers,
                    op: op.id.clone(),
                    pos: op.pos.clone(),
                }),
                // Refused: the reading the public RPC gives for a provisioningState that is
                // not the server's.
                400 => j.ledger.pass("SPEC-07"),
                _ => {}
            }
        }
    }
    if j.history.read_only.is_empty() || !(200..300).contains(&resp.status) {
        return;
    }
    let Some(body) = resp.json.as_ref().filter(|b| b.is_object()) else {
        return;
    };
    // Taken, even if stored changed (quoted, recased, trimmed of nothing): the probe is in it.
    let shows = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.to_ascii_lowercase().contains(READ_ONLY_PROBE))
    };
    let mut echoed: Vec<(&str, &Probed)> = j
        .history
        .read_only
        .iter()
        .flat_map(|p| p.pointers.iter().map(move |ptr| (ptr.as_str(), p)))
        .filter(|(ptr, _)| body.pointer(ptr).is_some_and(shows))
        .collect();
    let mut once = std::collections::HashSet::new();
    echoed.retain(|(ptr, _)| once.insert(*ptr));
    if let Some((_, first)) = echoed.first() {
        let (op, pos) = (first.op.clone(), first.pos.clone());
        let at: Vec<&str> = echoed.iter().map(|(ptr, _)| *ptr).collect();
        let at = at.join(", ");
        j.ledger.fail(
            "SPEC-07",
            format!(
                "the members `{op}` marks readOnly, sent as `{READ_ONLY_PROBE}`, ignored (or the request refused with 400)"
            ),
            format!("{} {} shows them as set at {at}", ex.method, resp.status),
            Some(ex.seq),
            Some(&pos),
        );
    } else if matches!(ex.method.as_str(), "GET" | "PUT" | "PATCH")
        && j.history.read_only.iter().any(|p| p.key == key)
    {
        // The resource as the RP holds it, without them.
        j.ledger.pass("SPEC-07");
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{Value, json};

    use crate::http::Exchange;
    use crate::rules::Outcome;
    use crate::rules::testing::{Case, WIDGET, exchange, failing, passing, run_cases, widget};
    use rpconform_refrp::{Fault, Settings};

    /// `rule`'s outcome on these exchanges, judged against the embedded RP's spec for
    /// `settings` (its spec-drift faults change the spec only).
    fn judged(rule: &str, settings: &Settings, exs: &[Exchange]) -> Outcome {
        let mut t = crate::rules::testing::target();
        let specs = crate::target::embedded_specs(settings).expect("the embedded spec loads");
        t.attach_specs(std::sync::Arc::new(specs), "test");
        crate::rules::testing::judged_on(&t, rule, exs, false).0
    }

    fn clean(rule: &str, ex: Exchange) -> Outcome {
        judged(rule, &Settings::default(), &[ex])
    }

    const AAO: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/op1?api-version=2024-05-01";
    const LOC: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationResults/op1?api-version=2024-05-01";
    const REGIONAL: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/regionalWidgets/r1?api-version=2024-05-01";

    fn regional() -> Value {
        json!({"id": "/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/regionalWidgets/r1",
               "name": "r1", "type": "Microsoft.Contoso/locations/regionalWidgets",
               "properties": {"provisioningState": "Succeeded"}})
    }

    /// A PUT of the widget setting its readOnly systemData names to `sent`, answered `status`
    /// with `answer`.
    fn probing(sent: &str, status: u16, answer: Value) -> Exchange {
        let mut ex = exchange("PUT", WIDGET, status, &[], answer);
        let mut body = widget("Succeeded");
        body["systemData"] = json!({"createdBy": sent, "lastModifiedBy": sent});
        ex.request_body = Some(body.to_string());
        ex
    }

    fn echoing(sent: &str) -> Value {
        let mut b = widget("Succeeded");
        b["systemData"] = json!({"createdBy": sent});
        b
    }

    const PROBE: &str = crate::spec::schema::READ_ONLY_PROBE;

    /// SPEC-01..07, each shown failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing(
            "SPEC-01",
            "a GET answered 201, which it does not declare",
            || {
                let h = [("x-ms-request-id", "r-1"), ("ETag", "\"1\"")];
                clean(
                    "SPEC-01",
                    exchange("GET", WIDGET, 201, &h, widget("Succeeded")),
                )
            },
        ),
        passing("SPEC-01", "a GET answered 200; a 404 under default", || {
            let e = json!({"error": {"code": "ResourceNotFound", "message": "no"}});
            judged(
                "SPEC-01",
                &Settings::default(),
                &[
                    exchange("GET", WIDGET, 200, &[], widget("Succeeded")),
                    exchange("GET", WIDGET, 404, &[], e),
                ],
            )
        }),
        failing(
            "SPEC-02",
            "a synchronous PUT handing out Azure-AsyncOperation",
            || {
                let h = [("Azure-AsyncOperation", AAO)];
                clean("SPEC-02", exchange("PUT", REGIONAL, 201, &h, regional()))
            },
        ),
        passing(
            "SPEC-02",
            "a long-running PUT handing out Azure-AsyncOperation",
            || {
                let h = [("Azure-AsyncOperation", AAO), ("Location", LOC)];
                clean(
                    "SPEC-02",
                    exchange("PUT", WIDGET, 201, &h, widget("Creating")),
                )
            },
        ),
        failing("SPEC-03", "final-state-via location, no Location", || {
            let h = [
                ("x-ms-request-id", "r-1"),
                ("ETag", "\"1\""),
                ("Azure-AsyncOperation", AAO),
            ];
            clean(
                "SPEC-03",
                exchange("PATCH", WIDGET, 200, &h, widget("Updating")),
            )
        }),
        passing("SPEC-03", "final-state-via location, with Location", || {
            let h = [("Azure-AsyncOperation", AAO), ("Location", LOC)];
            clean("SPEC-03", exchange("PATCH", WIDGET, 202, &h, Value::Null))
        }),
        failing("SPEC-04", "a widget whose size is text", || {
            let mut b = widget("Succeeded");
            b["properties"]["size"] = json!("three");
            clean("SPEC-04", exchange("GET", WIDGET, 200, &[], b))
        }),
        passing("SPEC-04", "a widget as the spec describes it", || {
            clean(
                "SPEC-04",
                exchange("GET", WIDGET, 200, &[], widget("Succeeded")),
            )
        }),
        failing(
            "SPEC-05",
            "a PUT without the Location and Retry-After it declares",
            || {
                let h = [("Azure-AsyncOperation", AAO)];
                clean(
                    "SPEC-05",
                    exchange("PUT", WIDGET, 201, &h, widget("Creating")),
                )
            },
        ),
        passing(
            "SPEC-05",
            "a PUT with every polling header it declares",
            || {
                let h = [
                    ("Azure-AsyncOperation", AAO),
                    ("Location", LOC),
                    ("Retry-After", "10"),
                ];
                clean(
                    "SPEC-05",
                    exchange("PUT", WIDGET, 201, &h, widget("Creating")),
                )
            },
        ),
        failing("SPEC-06", "a property marked x-ms-secret returned", || {
            let s = Settings::default().with_fault(Fault::SpecSecretSize);
            judged(
                "SPEC-06",
                &s,
                &[exchange("GET", WIDGET, 200, &[], widget("Succeeded"))],
            )
        }),
        passing("SPEC-06", "the secret property left out", || {
            let s = Settings::default().with_fault(Fault::SpecSecretSize);
            let mut b = widget("Succeeded");
            b["properties"].as_object_mut().map(|p| p.remove("size"));
            judged("SPEC-06", &s, &[exchange("GET", WIDGET, 200, &[], b)])
        }),
        failing(
            "SPEC-07",
            "readOnly systemData names set by a PUT come back in a later GET",
            || {
                let exs = crate::rules::testing::numbered(vec![
                    probing(PROBE, 202, Value::Null),
                    exchange("GET", WIDGET, 200, &[], echoing(PROBE)),
                ]);
                judged("SPEC-07", &Settings::default(), &exs)
            },
        ),
        passing(
            "SPEC-07",
            "readOnly members set by a PUT ignored: its answer and a GET leave them out",
            || {
                let exs = crate::rules::testing::numbered(vec![
                    probing(PROBE, 200, widget("Succeeded")),
                    exchange("GET", WIDGET, 200, &[], widget("Succeeded")),
                ]);
                judged("SPEC-07", &Settings::default(), &exs)
            },
        ),
        passing(
            "SPEC-07",
            "readOnly members set by a PUT refused with 400",
            || {
                let e = json!({"error": {"code": "InvalidRequestContent", "message": "readOnly"}});
                clean("SPEC-07", probing(PROBE, 400, e))
            },
        ),
    ];

    #[test]
    fn a_read_only_value_a_client_sends_back_is_not_judged() {
        // A GET's body PUT again carries the server's own values: seeing them proves nothing.
        let exs = crate::rules::testing::numbered(vec![
            probing("alice@contoso.com", 200, echoing("alice@contoso.com")),
            exchange("GET", WIDGET, 200, &[], echoing("alice@contoso.com")),
        ]);
        assert_eq!(
            judged("SPEC-07", &Settings::default(), &exs),
            Outcome::NotJudged
        );
    }

    #[test]
    fn a_member_the_spec_does_not_mark_read_only_is_not_probed() {
        // The probe value in a writable member is the user's to set.
        let mut ex = exchange("PUT", WIDGET, 200, &[], widget("Succeeded"));
        let mut body = widget("Succeeded");
        body["properties"]["description"] = json!(PROBE);
        ex.request_body = Some(body.to_string());
        let mut answer = widget("Succeeded");
        answer["properties"]["description"] = json!(PROBE);
        ex.response.as_mut().unwrap().json = Some(answer.clone());
        assert_eq!(clean("SPEC-07", ex.clone()), Outcome::NotJudged);
        // Marked readOnly (the spec-drift knob), the same exchange breaks it.
        let drift = Settings::default().with_fault(Fault::SpecReadOnlyDescription);
        assert_eq!(judged("SPEC-07", &drift, &[ex]), Outcome::Failed);
    }

    #[test]
    fn spec_cases_show_what_they_say() {
        run_cases(CASES);
    }

    #[test]
    fn an_answer_that_broke_the_contract_is_not_reported_again_as_spec_drift() {
        // A flat error body breaks ERR-01 and would break the declared ErrorResponse too.
        let flat = exchange(
            "GET",
            WIDGET,
            404,
            &[("x-ms-request-id", "r-1")],
            json!({"code": "NotFound", "message": "no"}),
        );
        assert_eq!(clean("SPEC-04", flat.clone()), Outcome::NotJudged);
        assert_eq!(clean("ERR-01", flat), Outcome::Failed);
    }

    #[test]
    fn an_answer_for_another_api_version_is_not_judged() {
        let url = WIDGET.replace("2024-05-01", "2021-01-01");
        assert_eq!(
            clean(
                "SPEC-01",
                exchange("GET", &url, 201, &[], widget("Succeeded"))
            ),
            Outcome::NotJudged
        );
    }
}
