//! LOC: 202 Accepted + Location, and Retry-After. LOC-01..04, LOC-09 and LOC-10 are ambient (every ARM
//! answer); LOC-05, LOC-06 and LOC-08 are judged on each followed operation; LOC-07 (a 202
//! create stays invisible) is stated by the suites.

use super::Judge;
use super::flow::{AfterRead, Event, Flow};
use crate::http::{Exchange, Role, cut};
use crate::lro::{Channel, Outcome, is_absolute_uri, path_key, retry_after_secs};

/// What the engine judges of LOC by itself, and on which exchanges (the selection reads it).
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Any,
    &[
        ("LOC-01", super::Shows::Write(None)),
        ("LOC-02", super::Shows::Write(None)),
        ("LOC-03", super::Shows::Write(None)),
        ("LOC-04", super::Shows::Write(None)),
        ("LOC-09", super::Shows::Write(None)),
        ("LOC-10", super::Shows::Write(None)),
        ("LOC-05", super::Shows::Follow(None)),
        ("LOC-06", super::Shows::Follow(None)),
        ("LOC-08", super::Shows::Follow(None)),
    ],
);

/// Is this Location one a client polls? Only a 202's (an initial answer's or a poll's). On a
/// 200/201 it names the resource the answer made (RFC 7231 lets it be relative there), which
/// no client polls (`lro::Strategy::arm`): no LOC rule reads it.
fn drives_an_operation(status: u16) -> bool {
    status == 202
}

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let seq = Some(ex.seq);
    let loc = resp.header("location");
    if resp.status == 202 {
        let aao = resp.header("azure-asyncoperation").is_some();
        j.ledger.check("LOC-01", loc.is_some(), seq, || {
            (
                "a Location header on a 202".into(),
                if aao {
                    "no Location (Azure-AsyncOperation was present: clients that follow it still work, but the contract requires Location)".into()
                } else {
                    "no Location, and no Azure-AsyncOperation: a client has nothing to poll".into()
                },
            )
        });
    }
    if let Some(l) = loc
        && drives_an_operation(resp.status)
    {
        j.ledger.check("LOC-02", is_absolute_uri(l), seq, || {
            ("an absolute Location URI".into(), format!("Location: {l}"))
        });
    }
    let ras = resp.header_all("retry-after");
    for ra in &ras {
        let secs = retry_after_secs(ra);
        j.ledger.check("LOC-03", secs.is_some(), seq, || {
            (
                "Retry-After as whole seconds (digits only)".into(),
                format!("Retry-After: {ra}"),
            )
        });
        if let Some(v) = secs
            && resp.status == 202
        {
            j.ledger.check("LOC-04", (10..=600).contains(&v), seq, || {
                (
                    "Retry-After between 10 and 600 seconds on a 202".into(),
                    format!(
                        "Retry-After: {ra} (Azure SDKs and ARM honour it, but 001 bounds the interval to 10 s..10 min)"
                    ),
                )
            });
        }
    }
    if ras.is_empty() && hands_out_an_operation(ex, resp) {
        if !j.response_stripped("retry-after") {
            no_retry_after(j, resp.status);
        } else if resp.status == 202 {
            j.ledger
                .not_judged("LOC-04", "the recording format strips Retry-After");
        }
    }
    if resp.status == 202
        && let Some(l) = loc
    {
        location_shape(j, ex, l);
    }
    // A 202 read of an operation resource is OPRES-01's failure, not a body out of place. A
    // literal JSON `null` carries nothing either (ASP.NET writes it for an empty result).
    if resp.status == 202 && ex.role != Role::OperationStatus {
        let body = resp.body.trim();
        j.ledger
            .check("LOC-10", body.is_empty() || body == "null", seq, || {
                (
                    "no body on a 202 Accepted".into(),
                    format!(
                        "a {}-byte body: {}",
                        resp.body_bytes,
                        cut(resp.body.trim(), 120)
                    ),
                )
            });
    }
}

/// An answer a client waits on before its next read (a 202, or a write's 200/201 handing out
/// an operation resource to poll), where a Retry-After would be. A Location on a 200/201 is
/// the resource's address, no operation (`drives_an_operation`).
fn hands_out_an_operation(ex: &Exchange, resp: &crate::http::Response) -> bool {
    drives_an_operation(resp.status)
        || (matches!(ex.method.as_str(), "PUT" | "PATCH" | "DELETE" | "POST")
            && matches!(resp.status, 200 | 201)
            && resp.header("azure-asyncoperation").is_some())
}

/// Retry-After is optional (001: "optionally, a Retry-After header"; clients wait their
/// default): an RP that sends none never offers LOC-03's subject (the form of a Retry-After),
/// nor, on its 202s, LOC-04's (the bounds of one). A Retry-After that is sent is judged, and
/// DEL-02 (a SHOULD) still asks one of a DELETE's 202.
fn no_retry_after(j: &mut Judge<'_>, status: u16) {
    j.ledger.not_applicable(
        "LOC-03",
        "no answer that hands out an operation carried Retry-After (optional): LOC-03 judges the form of one that is sent",
    );
    if status == 202 {
        j.ledger.not_applicable(
            "LOC-04",
            "no 202 answer carried Retry-After (optional): LOC-04 bounds one that is sent",
        );
    }
}

/// LOC-09: the Location's host, path and api-version.
fn location_shape(j: &mut Judge<'_>, ex: &Exchange, l: &str) {
    let Some(lu) = crate::lro::resolve(&ex.url, l).and_then(|u| crate::http::parse_url(&u).ok())
    else {
        return;
    };
    let req = crate::http::parse_url(&ex.url).ok();
    let host = |u: &url::Url| u.host_str().map(str::to_ascii_lowercase);
    let want_host = ex
        .request_header("referer")
        .and_then(|r| crate::http::parse_url(r).ok())
        .and_then(|u| host(&u))
        .or_else(|| req.as_ref().and_then(host));
    // Where the run plays ARM's part, the host is FD-01's (strict: the Referer's alone).
    let host_ok = super::fd::fronted(ex).is_some() || host(&lu) == want_host;
    let lp = path_key(lu.as_str());
    let rp = path_key(&ex.url);
    let segs: Vec<&str> = lp.trim_matches('/').split('/').collect();
    let under_request = lp == rp || lp.starts_with(&format!("{rp}/"));
    // A poll answered 202 may hand out the next Location (001: "return 202 again with a
    // Location header"): one beside the URL polled has the shape the first one had.
    let dir = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_string());
    let beside_polled = ex.method == "GET" && dir(&lp).is_some() && dir(&lp) == dir(&rp);
    let subscription_level = segs.len() >= 5
        && segs[0] == "subscriptions"
        && segs[2] == "providers"
        && j.target
            .namespaces
            .iter()
            .any(|n| n.name.eq_ignore_ascii_case(segs[3]));
    let has_version = lu.query_pairs().any(|(k, _)| k == "api-version");
    j.ledger.check(
        "LOC-09",
        host_ok && (under_request || subscription_level || beside_polled) && has_version,
        Some(ex.seq),
        || {
            let mut why = Vec::new();
            if !host_ok {
                why.push("another host than the request's (or its Referer's)");
            }
            if !(under_request || subscription_level || beside_polled) {
                why.push("a path neither under the request URL nor under /subscriptions/{sub}/providers/{namespace}/");
            }
            if !has_version {
                why.push("no api-version");
            }
            (
                "Location on the request's (or Referer's) host, under the request URL or the subscription's provider URL, with api-version".into(),
                format!("Location: {l} ({})", why.join("; ")),
            )
        },
    );
}

/// The last answer of the Location URL once the operation ended, if it was read.
fn final_location_answer(flow: &Flow) -> Option<usize> {
    match flow.channel {
        Some(Channel::Location) if flow.finished().is_some() => flow.polls().last().map(|(i, _)| i),
        Some(Channel::AzureAsyncOperation) => flow.after(AfterRead::Location).last(),
        _ => None,
    }
}

/// The rules judged on a Location's answers, not judged when that Location was never read
/// because it is not an absolute URI (LOC-02 failed on the answer that gave it).
fn location_unread(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    let read = flow.channel == Some(Channel::Location)
        || flow.events.iter().any(|e| {
            matches!(
                e,
                Event::Side {
                    channel: Channel::Location,
                    ..
                } | Event::After {
                    what: AfterRead::Location,
                    ..
                }
            )
        });
    if read {
        return;
    }
    let Some(initial) = exs.get(flow.initial) else {
        return;
    };
    if let Some(cause) = j.ledger.cause_among([initial.seq], &["LOC-02"]) {
        for rule in ["LOC-05", "LOC-06", "LOC-08"] {
            j.ledger.blocked(
                rule,
                &cause,
                "a Location that is not an absolute URI is not followed, so none of its answers was read",
            );
        }
    }
}

/// LOC-05 speaks of a Location read while the operation is unfinished: an operation no read
/// ever showed running offers none.
fn never_unfinished(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    let handed_location = exs
        .get(flow.initial)
        .and_then(|x| x.response.as_ref())
        .is_some_and(|r| r.header("location").is_some());
    if handed_location
        && flow.channel.is_some()
        && let Some(why) = super::flow::never_running(flow, exs)
    {
        j.ledger.not_applicable("LOC-05", why);
    }
}

pub(super) fn flow(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    location_unread(j, flow, exs);
    never_unfinished(j, flow, exs);
    running_location_polls(j, flow, exs);
    side_reads_while_running(j, flow, exs);
    location_is_status_url(j, flow, exs);
    location_stops(j, flow, exs);
    final_answer(j, flow, exs);
}

/// LOC-05: every running answer of a Location poll is 202 with Location again.
fn running_location_polls(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    for e in &flow.events {
        if let Event::Poll {
            ex,
            channel: Channel::Location,
            state,
        } = e
            && state.is_running()
            && let Some(r) = exs[*ex].response.as_ref()
        {
            j.ledger.check(
                "LOC-05",
                r.header("location").is_some(),
                Some(exs[*ex].seq),
                || {
                    (
                        "202 with a Location header while the operation runs".into(),
                        "202 without Location (clients fall back to the previous URL)".into(),
                    )
                },
            );
        }
    }
}

/// LOC-05: a Location read while another channel showed the operation running, before and
/// after it, answers 202.
fn side_reads_while_running(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    let mut pending: Vec<usize> = Vec::new();
    for e in &flow.events {
        match e {
            Event::Side {
                ex,
                channel: Channel::Location,
                ..
            } => pending.push(*ex),
            Event::Poll { state, .. } => {
                for i in pending.drain(..) {
                    if state.is_running() {
                        side_read_answers_202(j, flow, exs, &exs[i]);
                    }
                }
            }
            _ => {}
        }
    }
}

/// LOC-05 on one Location read `x` made while the status showed the operation running.
fn side_read_answers_202(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange], x: &Exchange) {
    let st = x.status();
    // A status that never reached a terminal value (OPRES-03) may have ended.
    if st != Some(202)
        && let Some(c) = j
            .ledger
            .cause_among(flow.polls().map(|(p, _)| exs[p].seq), &["OPRES-03"])
    {
        j.ledger.blocked(
            "LOC-05",
            &c,
            "the operation status never showed a terminal value, so it cannot say the operation was still running",
        );
        return;
    }
    j.ledger.check("LOC-05", st == Some(202), Some(x.seq), || {
        (
            "202 from Location while the operation status says it is still running".into(),
            format!(
                "{} {}",
                st.map(|s| s.to_string()).unwrap_or("no answer".into()),
                x.response
                    .as_ref()
                    .map(|r| cut(&r.body, 160))
                    .unwrap_or_default()
            ),
        )
    });
}

/// LOC-05: a Location that is the operation's status URL itself (the same URL, query and all)
/// is one channel, read as the status; but a client that polls Location reads its 200 as the
/// end, so each read of it that showed the operation running is a Location read answered
/// 200, not 202.
fn location_is_status_url(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    let same_url = exs.get(flow.initial).and_then(|x| {
        let r = x
            .response
            .as_ref()
            .filter(|r| drives_an_operation(r.status))?;
        let l = crate::lro::resolve(&x.url, r.header("location")?)?;
        let a = crate::lro::resolve(&x.url, r.header("azure-asyncoperation")?)?;
        // The whole URL: a query may decide which endpoint answers (`?monitor=true`).
        Some(l.eq_ignore_ascii_case(&a))
    });
    if flow.channel != Some(Channel::AzureAsyncOperation) || same_url != Some(true) {
        return;
    }
    for (i, state) in flow.polls() {
        let x = &exs[i];
        if state.is_running() && x.status().is_some_and(|s| (200..300).contains(&s)) {
            j.ledger.check("LOC-05", x.status() == Some(202), Some(x.seq), || {
                (
                    "202 from Location while the operation runs (its Location is the status URL: a client polling Location reads a 200 as the end)".into(),
                    format!(
                        "{} {}",
                        x.status().unwrap_or(0),
                        x.response.as_ref().map(|r| cut(&r.body, 160)).unwrap_or_default()
                    ),
                )
            });
        }
    }
}

/// LOC-08: Location stops answering 202 within the deadline.
fn location_stops(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    match (flow.channel, &flow.end) {
        (Some(Channel::Location), super::flow::End::TimedOut) => {
            let last = flow.polls().last().map(|(i, _)| exs[i].seq);
            j.ledger.fail(
                "LOC-08",
                format!(
                    "Location to stop answering 202 within the deadline ({} s)",
                    flow.deadline_secs
                ),
                format!(
                    "still 202 after {} polls over {} ms",
                    flow.polls().count(),
                    flow.elapsed_ms
                ),
                last,
                None,
            );
        }
        (Some(Channel::Location), super::flow::End::Finished(_)) => j.ledger.pass("LOC-08"),
        (Some(Channel::AzureAsyncOperation), super::flow::End::Finished(o)) => {
            if let Some(i) = flow.after(AfterRead::Location).last() {
                let x = &exs[i];
                j.ledger
                    .check("LOC-08", x.status() != Some(202), Some(x.seq), || {
                        (
                            "Location to stop answering 202 once the operation status is terminal"
                                .into(),
                            format!("still 202 after the operation ended {o}"),
                        )
                    });
            }
        }
        _ => {}
    }
}

/// LOC-06: the final answer is what the request would have returned synchronously.
fn final_answer(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange]) {
    let (Some(outcome), Some(i)) = (flow.finished(), final_location_answer(flow)) else {
        return;
    };
    let x = &exs[i];
    if x.status().unwrap_or(0) == 202 {
        return;
    }
    match outcome {
        Outcome::Succeeded if matches!(flow.method.as_str(), "PUT" | "PATCH") => {
            final_answer_is_resource(j, flow, exs, x)
        }
        Outcome::Failed | Outcome::Canceled => final_answer_is_error(j, outcome, x),
        _ => {}
    }
}

/// LOC-06 after a write succeeded: 200/201 with the resource.
fn final_answer_is_resource(j: &mut Judge<'_>, flow: &Flow, exs: &[Exchange], x: &Exchange) {
    let st = x.status().unwrap_or(0);
    let body_id = x
        .response
        .as_ref()
        .and_then(|r| r.pointer("/id"))
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let want = flow.resource.as_deref().map(path_key).unwrap_or_default();
    // A wrong id is RES-02's failure, on the resource's answers in this operation.
    if matches!(st, 200 | 201)
        && body_id.as_deref().is_some_and(|b| path_key(b) != want)
        && let Some(c) = j.ledger.cause_among(
            std::iter::once(flow.initial)
                .chain(flow.events.iter().map(Event::ex))
                .filter_map(|i| exs.get(i).map(|e| e.seq)),
            &["RES-02"],
        )
    {
        j.ledger.blocked(
            "LOC-06",
            &c,
            "the final answer is the resource, but its id is not the resource's path",
        );
        return;
    }
    let ok = matches!(st, 200 | 201) && body_id.as_deref().is_some_and(|b| path_key(b) == want);
    j.ledger.check("LOC-06", ok, Some(x.seq), || {
        (
            format!("200/201 with the resource (id {want})"),
            format!(
                "{st} with id {}: {}",
                super::words::text(body_id.as_deref()),
                x.response
                    .as_ref()
                    .map(|r| cut(&r.body, 200))
                    .unwrap_or_default()
            ),
        )
    });
}

/// LOC-06 after the operation failed or was canceled: a 4xx/5xx with the error envelope.
fn final_answer_is_error(j: &mut Judge<'_>, outcome: Outcome, x: &Exchange) {
    let st = x.status().unwrap_or(0);
    let envelope = x
        .response
        .as_ref()
        .and_then(|r| r.pointer("/error/code"))
        .is_some_and(|c| c.as_str().is_some_and(|c| !c.is_empty()));
    // A 4xx/5xx whose envelope is missing is ERR-01's (or ERR-02's) failure.
    if st >= 400
        && !envelope
        && let Some(c) = j.ledger.cause_among([x.seq], &["ERR-01", "ERR-02"])
    {
        j.ledger.blocked(
            "LOC-06",
            &c,
            "the final answer has the failure's status, but its error envelope is broken",
        );
        return;
    }
    j.ledger
        .check("LOC-06", st >= 400 && envelope, Some(x.seq), || {
            (
                format!("the {outcome} operation's 4xx/5xx with the error envelope"),
                format!(
                    "{st} {}",
                    x.response
                        .as_ref()
                        .map(|r| cut(&r.body, 200))
                        .unwrap_or_default()
                ),
            )
        });
}

#[cfg(test)]
#[path = "loc_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
#[path = "loc_causal_tests.rs"]
mod causal_tests;
