//! AAO: the Azure-AsyncOperation header and its operation resource. AAO-01..03 are ambient;
//! AAO-04 (every channel agrees on the outcome) is judged once an operation has ended.

use serde_json::Value;

use super::Judge;
use super::flow::{AfterRead, Flow};
use crate::http::{Exchange, Role, cut};
use crate::lro::{Channel, Outcome, is_absolute_uri, resource_state};

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
    if let Some(a) = resp.header("azure-asyncoperation") {
        j.ledger.check("AAO-01", is_absolute_uri(a), seq, || {
            let why = if a.chars().any(char::is_whitespace) {
                " (not a URI: it holds a raw space; clients percent-encode it)"
            } else {
                ""
            };
            (
                "an absolute Azure-AsyncOperation URI".into(),
                format!("Azure-AsyncOperation: {a}{why}"),
            )
        });
        if let Some(au) = crate::lro::resolve(&ex.url, a).and_then(|u| url::Url::parse(&u).ok()) {
            let host = |u: &url::Url| u.host_str().map(str::to_ascii_lowercase);
            let want = ex
                .request_header("referer")
                .and_then(|r| url::Url::parse(r).ok())
                .or_else(|| url::Url::parse(&ex.url).ok())
                .and_then(|u| host(&u));
            let last = |u: &url::Url| {
                u.path()
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase()
            };
            let loc = resp.header("location");
            let ids_ok = match loc
                .and_then(|l| crate::lro::resolve(&ex.url, l))
                .and_then(|l| url::Url::parse(&l).ok())
            {
                Some(lu) => last(&lu) == last(&au),
                None => true,
            };
            j.ledger.check("AAO-03", host(&au) == want && ids_ok, seq, || {
                (
                    "Azure-AsyncOperation on the request's host, ending in the same operation id as Location".into(),
                    format!("Azure-AsyncOperation: {a}; Location: {}", loc.unwrap_or("(none)")),
                )
            });
        }
    }
    // A 5xx read is one clients retry (OPRES-01, RETRY-01 judge it); any other answer must be
    // the operation resource.
    if ex.role == Role::OperationStatus && (400..500).contains(&resp.status) {
        // A read refused with a 4xx is OPRES-01's failure; it shows no body to judge.
        if let Some(c) = j.ledger.cause_among([ex.seq], &["OPRES-01"]) {
            j.ledger.blocked(
                "AAO-02",
                &c,
                "the read was refused, so it shows no operation resource to judge",
            );
            return;
        }
    }
    if ex.role == Role::OperationStatus && (200..500).contains(&resp.status) {
        let body = resp.json.as_ref().filter(|j| j.is_object());
        let status = body.and_then(|b| b.get("status")).and_then(Value::as_str);
        j.ledger.check(
            "AAO-02",
            resp.status != 202 && status.is_some(),
            seq,
            || {
                (
                    "an operation resource: a JSON object with a string `status`, not a 202".into(),
                    format!("{} {}", resp.status, cut(&resp.body, 200)),
                )
            },
        );
    }
}

pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.channel == Some(Channel::Location) {
        location_body_agrees(j, flow, exs);
        return;
    }
    if flow.channel != Some(Channel::AzureAsyncOperation) {
        return;
    }
    let Some(outcome) = flow.finished() else {
        return;
    };
    if let Some(i) = flow.after(AfterRead::Location).last() {
        let x = &exs[i];
        let st = x.status().unwrap_or(0);
        if st != 202 && st != 0 {
            let agree = match outcome {
                Outcome::Succeeded => (200..300).contains(&st),
                _ => st >= 400,
            };
            j.ledger.check("AAO-04", agree, Some(x.seq), || {
                (
                    format!("Location's final answer to agree with the operation status {outcome}"),
                    format!(
                        "Location answered {st} {}",
                        x.response
                            .as_ref()
                            .map(|r| cut(&r.body, 160))
                            .unwrap_or_default()
                    ),
                )
            });
        }
    }
    if !matches!(flow.method.as_str(), "PUT" | "PATCH") {
        return;
    }
    if let Some(i) = flow.after(AfterRead::Resource).last() {
        let x = &exs[i];
        let Some(r) = x.response.as_ref().filter(|r| r.status == 200) else {
            return;
        };
        let shown = resource_state(r.json.as_ref());
        j.ledger.check(
            "AAO-04",
            shown.outcome() == Some(outcome),
            Some(x.seq),
            || {
                (
                    format!("provisioningState {outcome}, as the operation status says"),
                    format!(
                        "provisioningState {}",
                        crate::lro::provisioning_state(r.json.as_ref())
                            .unwrap_or("absent (Succeeded)")
                    ),
                )
            },
        );
    }
}

/// A Location flow that ended with a success answer whose body is a resource saying it
/// Failed or was Canceled: the two channels of one answer disagree.
fn location_body_agrees(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    if flow.finished() != Some(Outcome::Succeeded) {
        return;
    }
    let Some((i, _)) = flow.polls().last() else {
        return;
    };
    let x = &exs[i];
    let Some(r) = x
        .response
        .as_ref()
        .filter(|r| matches!(r.status, 200 | 201))
    else {
        return;
    };
    let Some(ps) = crate::lro::provisioning_state(r.json.as_ref()) else {
        return;
    };
    let shown = resource_state(r.json.as_ref());
    j.ledger.check(
        "AAO-04",
        shown.outcome().is_none_or(|o| o == Outcome::Succeeded),
        Some(x.seq),
        || {
            (
                "a Location success answer whose resource does not say Failed or Canceled".into(),
                format!("{} with provisioningState {ps}", r.status),
            )
        },
    );
}

#[cfg(test)]
mod tests {
    use crate::http::{Exchange, Role};
    use crate::rules::testing::{exchange, numbered, target};
    use crate::rules::{Judge, Outcome, Registry, RuleTally};
    use serde_json::json;

    const OP: &str = "http://h/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/1?api-version=1";
    const R: &str = "http://h/subscriptions/s/resourceGroups/g/providers/Microsoft.Contoso/widgets/a?api-version=1";

    fn run(exs: &[Exchange]) -> Vec<RuleTally> {
        let t = target();
        let reg = Registry::default();
        let mut j = Judge::new(&t, &reg);
        for x in exs {
            j.exchange(x);
        }
        j.ledger.tallies()
    }

    fn read(role: Role, status: u16, body: serde_json::Value, seq: u64) -> Exchange {
        let mut x = numbered(exchange("GET", OP, status, &[], body), seq);
        x.role = role;
        x
    }

    fn get<'a>(t: &'a [RuleTally], rule: &str) -> Option<&'a RuleTally> {
        t.iter().find(|x| x.rule == rule)
    }

    #[test]
    fn a_refused_status_read_is_opres_01s_failure_not_aao_02s() {
        let t = run(&[read(
            Role::OperationStatus,
            404,
            json!({"error": {"code": "NotFound", "message": "m"}}),
            3,
        )]);
        assert_eq!(get(&t, "OPRES-01").unwrap().outcome, Outcome::Failed);
        let a = get(&t, "AAO-02").unwrap();
        assert_eq!(a.outcome, Outcome::NotJudged);
        assert!(
            a.not_judged
                .as_deref()
                .unwrap()
                .starts_with("OPRES-01 failed at exchange #3"),
            "{:?}",
            a.not_judged
        );
        // Without that cause, a read that is no operation resource still fails AAO-02.
        let t = run(&[read(Role::OperationStatus, 200, json!({"id": "x"}), 4)]);
        assert_eq!(get(&t, "AAO-02").unwrap().outcome, Outcome::Failed);
    }

    #[test]
    fn a_scenarios_read_of_a_handed_out_status_url_is_a_status_read_for_its_caller_only() {
        let put = numbered(
            exchange(
                "PUT",
                R,
                201,
                &[("Azure-AsyncOperation", OP)],
                json!({"properties": {"provisioningState": "Accepted"}}),
            ),
            1,
        );
        let mine = read(Role::Step, 404, json!({"error": {"code": "NotFound"}}), 2);
        let t = run(&[put.clone(), mine]);
        assert_eq!(get(&t, "OPRES-01").unwrap().outcome, Outcome::Failed);
        let mut theirs = read(Role::Step, 404, json!({"error": {"code": "NotFound"}}), 2);
        theirs
            .request_headers
            .push(("x-ms-home-tenant-id".into(), "another".into()));
        let t = run(&[put, theirs]);
        assert!(get(&t, "OPRES-01").is_none());
    }
}
