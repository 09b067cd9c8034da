//! PSTATE: provisioningState. PSTATE-01 and PSTATE-05 are ambient; PSTATE-02 (settled means
//! terminal) is judged when an operation has ended; PSTATE-03/04 (the echo) are stated by the
//! suites.

use super::Judge;
use super::flow::{AfterRead, Flow};
use crate::http::Exchange;
use crate::lro::{provisioning_state, resource_state};
use crate::target::Addressed;

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
                        "provisioningState {:?}",
                        provisioning_state(r.json.as_ref())
                    ),
                )
            },
        );
    }
}
