//! FD: the RP as ARM calls it, where the run plays ARM's front door in front of the RP's own
//! endpoint (`http::front_door`). A request the front door passed on carries a `Referer` on
//! ARM's public host, not the host the RP was called on; that is what this family reads, so it
//! judges nothing of traffic that went through ARM itself (no such Referer) or of a recording.
//!
//! - FD-01: operation links (a Location that drives an operation, Azure-AsyncOperation) on the
//!   Referer's scheme and host; FD-02: a `nextLink` on the Referer's URL; FD-03: no header or
//!   body names the endpoint's host (not judged where FD-01 or FD-02 failed on that answer).
//! - FD-04, FD-05: `systemData` from ARM's `x-ms-arm-resource-system-data` header: each write's
//!   values remembered per resource (a write refused synchronously remembers nothing), answers
//!   that carry systemData compared with them.
//! - FD-08: the answer within 60 s (the front door answered 504 itself otherwise); FD-09: the
//!   `x-ms-failurecause` grammar. FD-06 and FD-07 are stated by the `front-door` suite.

use std::collections::HashMap;

use serde_json::Value;

use super::Judge;
use crate::http::Exchange;

/// Every rule here is judged by the engine on any answer the front door passed, but FD-06 and
/// FD-07, which the front-door suite states.
pub(super) const SHOWS: (super::Shows, &[(&str, super::Shows)]) = (
    super::Shows::Any,
    &[
        ("FD-06", super::Shows::Stated),
        ("FD-07", super::Shows::Stated),
    ],
);

/// The Referer of a request the front door passed on: a URL on another host than the one the
/// RP was called on (ARM's public host).
pub(crate) fn fronted(ex: &Exchange) -> Option<url::Url> {
    let r = crate::http::parse_url(ex.request_header("referer")?).ok()?;
    let own = crate::http::parse_url(&ex.url).ok()?;
    let other = !r
        .host_str()?
        .eq_ignore_ascii_case(own.host_str().unwrap_or(""));
    other.then_some(r)
}

/// The endpoint's authority as the RP was called on it (`127.0.0.1:8080`, `rp.example`).
fn endpoint_authority(ex: &Exchange) -> Option<String> {
    let u = crate::http::parse_url(&ex.url).ok()?;
    let host = u.host_str()?.to_ascii_lowercase();
    Some(match u.port() {
        Some(p) => format!("{host}:{p}"),
        None => host,
    })
}

/// What a write told the RP its system data is, per resource (path key): the creating write's
/// `created*`, and the `lastModified*` of every write accepted since.
#[derive(Debug, Default, Clone)]
pub(crate) struct SystemData {
    resources: HashMap<String, Written>,
}

#[derive(Debug, Default, Clone)]
struct Written {
    created: Option<Value>,
    modified: Vec<Value>,
    /// What writes refused synchronously carried: none of it may show.
    refused: Vec<Value>,
    /// A write has been accepted since the creating one.
    written_again: bool,
}

impl SystemData {
    /// What a judge of steps that ran beside this one's saw (its resources' writes).
    pub(crate) fn absorb(&mut self, other: SystemData) {
        for (k, w) in other.resources {
            match self.resources.get_mut(&k) {
                Some(mine) => {
                    if mine.created.is_none() {
                        mine.created = w.created;
                    }
                    mine.modified.extend(w.modified);
                    mine.refused.extend(w.refused);
                    mine.written_again |= w.written_again;
                }
                None => {
                    self.resources.insert(k, w);
                }
            }
        }
    }
}

/// The header's value, as the request carried it.
fn header_values(ex: &Exchange) -> Option<Value> {
    serde_json::from_str(ex.request_header("x-ms-arm-resource-system-data")?).ok()
}

/// The answer an engine rule judges first: ARM's own answer to a request it never passed on.
pub(super) fn front_door_answered(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(why) = &ex.front_door else { return };
    if ex.status() == Some(504) {
        j.ledger.fail(
            "FD-08",
            "an answer from the RP within 60 s",
            format!(
                "{} {} got none: {why}",
                ex.method,
                crate::http::cut(&ex.url, 200)
            ),
            Some(ex.seq),
            None,
        );
    }
}

pub(super) fn ambient(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(resp) = &ex.response else { return };
    let Some(referer) = fronted(ex) else { return };
    j.ledger.pass("FD-08");
    failure_cause(j, ex);
    links(j, ex, &referer);
    next_link(j, ex, &referer);
    own_host_named(j, ex);
    let _ = resp;
}

/// FD-04, FD-05 on an answer the front door passed: after the envelope (RES-06) and spec
/// (SPEC-07) rules, whose failure on the same answer says what is wrong with its systemData.
pub(super) fn after_others(j: &mut Judge<'_>, ex: &Exchange) {
    if let (Some(resp), Some(_)) = (&ex.response, fronted(ex)) {
        system_data(j, ex, resp.status);
    }
}

/// FD-01: operation links on the Referer's scheme and host.
fn links(j: &mut Judge<'_>, ex: &Exchange, referer: &url::Url) {
    let Some(resp) = &ex.response else { return };
    // A Location on a 201/200 names the created resource, not an operation (LOC-02's reading).
    let location = (resp.status == 202)
        .then(|| resp.header("location"))
        .flatten();
    let links = [
        ("Location", location),
        ("Azure-AsyncOperation", resp.header("azure-asyncoperation")),
    ];
    for (name, value) in links {
        let Some(v) = value else { continue };
        // A relative or broken link is LOC-02's or AAO-01's to fail.
        let Ok(u) = crate::http::parse_url(v.trim()) else {
            continue;
        };
        let same = u.scheme().eq_ignore_ascii_case(referer.scheme())
            && u.host_str().map(str::to_ascii_lowercase)
                == referer.host_str().map(str::to_ascii_lowercase)
            && u.port_or_known_default() == referer.port_or_known_default();
        j.ledger.check("FD-01", same, Some(ex.seq), || {
            (
                format!(
                    "{name} on the Referer's {}://{} (ARM's public host)",
                    referer.scheme(),
                    referer.host_str().unwrap_or("")
                ),
                format!("{name}: {}", crate::http::cut(v, 300)),
            )
        });
    }
}

/// FD-02: a nextLink built on the Referer's URL.
fn next_link(j: &mut Judge<'_>, ex: &Exchange, referer: &url::Url) {
    let Some(next) = ex
        .response
        .as_ref()
        .and_then(|r| r.pointer("/nextLink"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    else {
        return;
    };
    // A nextLink that is no absolute URL is RES-05's to fail.
    let Ok(u) = crate::http::parse_url(next.trim()) else {
        return;
    };
    let same_origin = u.scheme().eq_ignore_ascii_case(referer.scheme())
        && u.host_str().map(str::to_ascii_lowercase)
            == referer.host_str().map(str::to_ascii_lowercase)
        && u.port_or_known_default() == referer.port_or_known_default();
    let path = |x: &url::Url| crate::lro::path_key(&format!("https://h{}", x.path()));
    let same_path = path(&u) == path(referer);
    j.ledger
        .check("FD-02", same_origin && same_path, Some(ex.seq), || {
            (
                format!(
                    "a nextLink on the Referer's URL ({}://{}{})",
                    referer.scheme(),
                    referer.host_str().unwrap_or(""),
                    referer.path()
                ),
                format!("nextLink: {}", crate::http::cut(next, 300)),
            )
        });
}

/// FD-03: the endpoint's host named nowhere in the answer (where FD-01 or FD-02 failed on it,
/// that says it).
fn own_host_named(j: &mut Judge<'_>, ex: &Exchange) {
    let (Some(resp), Some(own)) = (&ex.response, endpoint_authority(ex)) else {
        return;
    };
    let named = |s: &str| names_host(&s.to_ascii_lowercase(), &own).is_some();
    let header = resp
        .headers
        .iter()
        .find(|(_, v)| named(v))
        .map(|(k, v)| format!("{k}: {}", crate::http::cut(v, 200)));
    let body = named(&resp.body).then(|| {
        let at = names_host(&resp.body.to_ascii_lowercase(), &own).unwrap_or(0);
        let from = resp.body.floor_char_boundary(at.saturating_sub(40));
        format!("body: …{}…", crate::http::cut(&resp.body[from..], 120))
    });
    let Some(seen) = header.or(body) else {
        j.ledger.pass("FD-03");
        return;
    };
    if let Some(c) = j.ledger.cause_among([ex.seq], &["FD-01", "FD-02"]) {
        j.ledger.blocked(
            "FD-03",
            &c,
            "the endpoint's host is named in a link that rule judges",
        );
        return;
    }
    j.ledger.fail(
        "FD-03",
        format!(
            "no header or body naming the endpoint's host `{own}` (ARM's clients never see it)"
        ),
        seen,
        Some(ex.seq),
        None,
    );
}

/// Where `text` (lower case) names the host `own` as a host, not inside a longer name or word:
/// neither side touches a letter, digit, `-` or `.`.
fn names_host(text: &str, own: &str) -> Option<usize> {
    let part =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    text.match_indices(own).map(|(i, _)| i).find(|&i| {
        !part(text[..i].chars().next_back()) && !part(text[i + own.len()..].chars().next())
    })
}

/// FD-09: `client` or `service`, then optionally `:` and a category of at most 100 characters.
fn failure_cause(j: &mut Judge<'_>, ex: &Exchange) {
    let Some(v) = ex
        .response
        .as_ref()
        .and_then(|r| r.header("x-ms-failurecause"))
    else {
        // The header is the RP's choice: an RP that never sends it offers nothing to judge.
        j.ledger.not_judged(
            "FD-09",
            "not applicable: the RP sends no x-ms-failurecause (it is optional)",
        );
        return;
    };
    let (party, category) = match v.trim().split_once(':') {
        Some((p, c)) => (p, Some(c)),
        None => (v.trim(), None),
    };
    let ok = matches!(party, "client" | "service")
        && category.is_none_or(|c| !c.is_empty() && c.chars().count() <= 100);
    j.ledger.check("FD-09", ok, Some(ex.seq), || {
        (
            "`client` or `service`, optionally `:` and a category of at most 100 characters".into(),
            format!("x-ms-failurecause: {}", crate::http::cut(v, 200)),
        )
    });
}

/// The resource a request writes or reads: its URL (an action's parent), as a path key.
fn resource_key(ex: &Exchange) -> Option<String> {
    crate::lro::resource_of(&ex.method, &ex.url)
        .or_else(|| (ex.method == "GET").then(|| ex.url.clone()))
        .map(|u| crate::lro::path_key(&u))
}

/// FD-04, FD-05: remember what each write told the RP; compare what an answer shows.
fn system_data(j: &mut Judge<'_>, ex: &Exchange, status: u16) {
    let Some(key) = resource_key(ex) else { return };
    let write = matches!(ex.method.as_str(), "PUT" | "PATCH");
    if ex.method == "DELETE" && (200..300).contains(&status) {
        j.history.system_data.resources.remove(&key);
        return;
    }
    // A refused write of a resource whose creation this test did not see tells nothing.
    let known = j.history.system_data.resources.contains_key(&key);
    if write
        && let Some(h) = header_values(ex)
        && (known || (200..300).contains(&status))
    {
        let w = j
            .history
            .system_data
            .resources
            .entry(key.clone())
            .or_default();
        match status {
            // A create (201, or 202 for an asynchronous one) of a resource not yet known; a 200
            // may replace one made before the test (a fixed name): its creation is unknown.
            201 | 202 if w.created.is_none() && ex.method == "PUT" => w.created = Some(h.clone()),
            200..=299 => w.written_again = w.created.is_some(),
            400..=499 => {
                w.refused.push(h);
                return;
            }
            _ => return,
        }
        w.modified.push(h);
    }
    if !(200..300).contains(&status) || !matches!(ex.method.as_str(), "GET" | "PUT" | "PATCH") {
        return;
    }
    let Some(shown) = ex
        .response
        .as_ref()
        .and_then(|r| r.pointer("/systemData"))
        .cloned()
    else {
        return;
    };
    // Judged only where the test saw the resource created: its earlier writes are known.
    let Some(w) = j.history.system_data.resources.get(&key).cloned() else {
        return;
    };
    if w.created.is_none() || w.modified.is_empty() {
        return;
    }
    judge_system_data(j, ex, &shown, &w);
}

fn same_value(field: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a.and_then(Value::as_str), b.and_then(Value::as_str)) {
        (Some(x), Some(y)) if field.ends_with("At") => {
            let (a, b) = (super::iso8601::parse(x), super::iso8601::parse(y));
            a.is_some() && a == b
        }
        (Some(x), Some(y)) if field.ends_with("ByType") => x.eq_ignore_ascii_case(y),
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn matches_half(shown: &Value, sent: &Value, half: &str) -> bool {
    ["By", "ByType", "At"].iter().all(|s| {
        let f = format!("{half}{s}");
        same_value(&f, shown.get(&f), sent.get(&f))
    })
}

fn judge_system_data(j: &mut Judge<'_>, ex: &Exchange, shown: &Value, w: &Written) {
    let seq = Some(ex.seq);
    // Malformed times (RES-06) or a value the request set (SPEC-07) already say it.
    if let Some(c) = j.ledger.cause_among([ex.seq], &["RES-06", "SPEC-07"]) {
        for rule in ["FD-04", "FD-05"] {
            j.ledger
                .blocked(rule, &c, "the answer's systemData is that rule's failure");
        }
        return;
    }
    let brief = |v: &Value, half: &str| {
        format!(
            "{half}By {}, {half}At {}",
            v.get(format!("{half}By")).unwrap_or(&Value::Null),
            v.get(format!("{half}At")).unwrap_or(&Value::Null)
        )
    };
    // Values a refused write carried: the RP took what it should have ignored (FD-05).
    if let Some(r) = w
        .refused
        .iter()
        .find(|r| matches_half(shown, r, "lastModified") || matches_half(shown, r, "created"))
    {
        j.ledger.fail(
            "FD-05",
            "systemData unchanged by a write refused synchronously",
            format!("{} (the refused write's)", brief(r, "lastModified")),
            seq,
            None,
        );
        return;
    }
    let modified_ok = w
        .modified
        .iter()
        .any(|m| matches_half(shown, m, "lastModified"));
    j.ledger.check("FD-04", modified_ok, seq, || {
        (
            format!(
                "systemData.lastModified* as a write's x-ms-arm-resource-system-data carried them (the last: {})",
                w.modified.last().map(|m| brief(m, "lastModified")).unwrap_or_default()
            ),
            brief(shown, "lastModified"),
        )
    });
    let Some(created) = &w.created else { return };
    let created_ok = matches_half(shown, created, "created");
    // created* a later write carried: the RP did not keep the creating write's (FD-05);
    // values no write carried: the RP does not take ARM's header at all (FD-04).
    let overwritten = !created_ok
        && w.modified
            .iter()
            .skip(1)
            .any(|m| matches_half(shown, m, "created"));
    let rule = if overwritten { "FD-05" } else { "FD-04" };
    if w.written_again && created_ok {
        j.ledger.pass("FD-05");
    }
    j.ledger.check(rule, created_ok, seq, || {
        (
            format!(
                "systemData.created* of the creating write ({})",
                brief(created, "created")
            ),
            brief(shown, "created"),
        )
    });
}

#[cfg(test)]
pub(crate) mod tests;
