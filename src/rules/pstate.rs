//! PSTATE: provisioningState. PSTATE-01 and PSTATE-05 are ambient; PSTATE-02 (settled means
//! terminal) is judged when an operation has ended; PSTATE-03/04 (the echo) are stated by the
//! suites.

use super::Judge;
use super::flow::{AfterRead, Flow};
use crate::http::Exchange;
use crate::lro::{provisioning_state, resource_state};
use crate::target::Addressed;

/// What the engine judges of PSTATE by itself, and on which exchanges (the selection reads
/// it): PSTATE-02 on a followed operation, the rest on any answer.
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Any,
    &[("PSTATE-02", super::Shows::Follow(None))],
);

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    if !matches!(ex.method.as_str(), "GET" | "PUT" | "PATCH") || !matches!(resp.status, 200 | 201) {
        return;
    }
    let Addressed::Resource(ty) = j.target.address(&ex.url) else {
        return;
    };
    let Some(body) = resp.json.as_ref() else {
        return;
    };
    let seq = Some(ex.seq);
    let ps = body.pointer("/properties/provisioningState");
    if body.get("provisioningState").is_some() && ps.is_none() {
        j.ledger.fail(
            "PSTATE-01",
            "provisioningState under `properties`",
            "a top-level provisioningState",
            seq,
            None,
        );
    } else if let Some(v) = ps {
        j.ledger.check("PSTATE-01", v.is_string(), seq, || {
            (
                "properties.provisioningState as a string".into(),
                v.to_string(),
            )
        });
    }
    if ty.provisioning_state && ex.method == "GET" && resp.status == 200 {
        j.ledger.check("PSTATE-05", ps.is_some(), seq, || {
            (
                "properties.provisioningState on every GET".into(),
                "absent".into(),
            )
        });
    }
    if let Some(s) = provisioning_state(Some(body)) {
        super::opres::casing(j, ex, s, "provisioningState");
    }
}

pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.finished().is_none() || !matches!(flow.method.as_str(), "PUT" | "PATCH" | "POST") {
        return;
    }
    for i in flow.after(AfterRead::Resource) {
        let x = &exs[i];
        let Some(r) = x.response.as_ref().filter(|r| r.status == 200) else {
            continue;
        };
        j.ledger.check(
            "PSTATE-02",
            !resource_state(r.json.as_ref()).is_running(),
            Some(x.seq),
            || {
                (
                    "a terminal (or absent) provisioningState once the operation ended".into(),
                    format!(
                        "provisioningState {}",
                        super::words::text(provisioning_state(r.json.as_ref()))
                    ),
                )
            },
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::lro::{Channel, Outcome as Op};
    use crate::rules::Outcome;
    use crate::rules::flow::{AfterRead, End, Event};
    use crate::rules::testing::{
        Case, OP_STATUS, WIDGET, ambient, exchange, failing, flow, flow_outcome, op_read,
        op_status, passing, poll, run_cases, widget,
    };
    use serde_json::{Value, json};

    fn got(rule: &str, body: Value) -> Outcome {
        ambient(
            rule,
            &[exchange("GET", WIDGET, 200, &[("ETag", "\"1\"")], body)],
        )
        .0
    }

    /// A PUT followed to its end, then the resource read in `state`.
    fn settled_as(state: &str) -> Outcome {
        let put = exchange(
            "PUT",
            WIDGET,
            201,
            &[("Azure-AsyncOperation", OP_STATUS)],
            widget("Creating"),
        );
        let after = exchange("GET", WIDGET, 200, &[], widget(state));
        flow_outcome(
            "PSTATE-02",
            vec![put, op_read(op_status("Succeeded")), after],
            |exs| {
                flow(
                    exs,
                    Some(Channel::AzureAsyncOperation),
                    vec![
                        poll(1, Channel::AzureAsyncOperation, false),
                        Event::After {
                            ex: 2,
                            what: AfterRead::Resource,
                        },
                    ],
                    End::Finished(Op::Succeeded),
                )
            },
        )
    }

    /// PSTATE-01, 02 and 05 (03 and 04 are stated by the suites), failing and passing.
    pub(crate) const CASES: &[Case] = &[
        failing("PSTATE-01", "a top-level provisioningState", || {
            let mut b = widget("Succeeded");
            b["provisioningState"] = json!("Succeeded");
            b["properties"] = json!({"size": 3});
            got("PSTATE-01", b)
        }),
        failing(
            "PSTATE-01",
            "a provisioningState that is not a string",
            || {
                let mut b = widget("Succeeded");
                b["properties"]["provisioningState"] = json!(3);
                got("PSTATE-01", b)
            },
        ),
        passing("PSTATE-01", "properties.provisioningState", || {
            got("PSTATE-01", widget("Succeeded"))
        }),
        failing("PSTATE-02", "Updating once the operation ended", || {
            settled_as("Updating")
        }),
        passing("PSTATE-02", "Succeeded once the operation ended", || {
            settled_as("Succeeded")
        }),
        passing("PSTATE-02", "Failed once the operation ended", || {
            settled_as("Failed")
        }),
        failing("PSTATE-05", "a GET without provisioningState", || {
            got(
                "PSTATE-05",
                json!({"id": crate::rules::testing::WIDGET_ID, "name": "w", "type": "Microsoft.Contoso/widgets", "location": "eastus", "properties": {"size": 3}}),
            )
        }),
        passing("PSTATE-05", "a GET with provisioningState", || {
            got("PSTATE-05", widget("Creating"))
        }),
    ];

    #[test]
    fn pstate_cases_show_what_they_say() {
        run_cases(CASES);
    }
}
