//! What earlier exchanges showed about each resource: that it exists (settled or not), that it
//! does not, or nothing certain. DEL-01, DEL-05 and PUT-01 use it to judge a DELETE or PUT
//! against the state the same test (or recording) already showed, and give no verdict when
//! that state is not known.
//!
//! Evidence, per resource path (lower case, no query), in the order exchanges come:
//! - GET 200: exists; settled when its provisioningState is terminal or absent. GET 404: absent.
//! - PUT/PATCH 2xx that a client would not poll (the answer is final): exists and settled.
//! - DELETE 200/204: absent.
//! - A write whose answer starts an operation (a client would poll it: `lro::Strategy`) makes
//!   the state unknown while it runs; reads meanwhile show a passing state and are ignored. When
//!   the followed operation ends ([`Shown::settle`]): a DELETE that succeeded leaves the resource
//!   absent; a PUT/PATCH leaves what the resource read after the end showed (or, without one,
//!   exists and settled when it succeeded); anything else leaves the state unknown.
//! - A DELETE (or a DELETE that starts) forgets everything under the path: children of a deleted
//!   parent answer as NEST-04 says, which is not what DEL-05 judges. A 202 without a link to
//!   follow leaves the state unknown.
//! - POST actions, 4xx and 5xx answers change nothing.
//!
//! Only ARM-shaped paths (`/subscriptions/...`, `/providers/...`) are tracked, and of those the
//! latest shown ([`super::recent`]): a recording of a million resources keeps no record of each
//! (a path forgotten is a state not known, so the rules give no verdict on it, never a wrong
//! one).

use std::collections::HashMap;

use super::recent::Recent;

use super::flow::{AfterRead, End, Flow};
use crate::http::Exchange;
use crate::lro::{Outcome, Strategy, path_key, resource_state};

/// What earlier exchanges showed about one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    Exists { settled: bool },
    Absent,
}

/// The state of every resource earlier exchanges showed.
#[derive(Debug, Default, Clone)]
pub struct Shown {
    /// The latest evidence per path, with the exchange (`seq`) that showed it.
    known: Recent<String, (Known, u64)>,
    /// Operations started on a path and not yet seen to end.
    running: HashMap<String, u32>,
    /// The path (as sent, any case) of the request whose answer is the latest evidence.
    spelled: HashMap<String, String>,
    /// Paths whose resource moved away at this exchange: evidence older than it is stale.
    moved_at: HashMap<String, u64>,
}

/// A URL's path as sent, letter case kept, no query.
fn exact_path(url: &str) -> String {
    crate::lro::url_path(url).trim_end_matches('/').to_string()
}

fn arm_path(url: &str) -> Option<String> {
    let key = path_key(url);
    (key.starts_with("/subscriptions/") || key.starts_with("/providers/")).then_some(key)
}

/// Does this answer start an operation a client would follow?
fn starts_operation(ex: &Exchange) -> bool {
    ex.response.as_ref().is_some_and(|r| {
        (200..300).contains(&r.status)
            && Strategy::arm(&ex.method, &ex.url, r)
                .initial(r)
                .is_running()
    })
}

impl Shown {
    /// What is known about this resource now: `None` while an operation runs on it or when
    /// nothing certain was shown.
    /// nothing certain was shown. With the exchange that showed it.
    pub fn of(&self, url: &str) -> Option<(Known, u64)> {
        let key = arm_path(url)?;
        if self.running.contains_key(&key) {
            return None;
        }
        self.known.get(&key).copied()
    }

    /// The path, as its request spelled it, of the exchange that showed what [`Shown::of`]
    /// says: a path that differs from it only in case names the same resource only on an RP
    /// that matches ids case-insensitively (OPS-12).
    pub fn spelled(&self, url: &str) -> Option<&str> {
        self.spelled.get(&arm_path(url)?).map(String::as_str)
    }

    /// Is an ancestor of this resource (a parent, its group) shown absent or being deleted?
    pub fn ancestor_gone(&self, url: &str) -> bool {
        let Some(key) = arm_path(url) else {
            return false;
        };
        let mut cur = key.as_str();
        while let Some((parent, _)) = cur.rsplit_once('/') {
            if parent.is_empty() {
                break;
            }
            if self
                .known
                .get(parent)
                .is_some_and(|(k, _)| *k == Known::Absent)
                || self.running.contains_key(parent)
            {
                return true;
            }
            cur = parent;
        }
        false
    }

    /// Remember what `key` shows (the oldest paths forgotten past the bound).
    fn remember(&mut self, key: String, v: (Known, u64)) {
        for gone in self.known.insert(key, v) {
            self.spelled.remove(&gone);
        }
    }

    fn forget_under(&mut self, key: &str) {
        let prefix = format!("{key}/");
        self.known.retain(|k, _| !k.starts_with(&prefix));
    }

    /// A `moveResources` that succeeded: the resources it names (and what is under them) left
    /// their group, so nothing known of them at their old address holds any more.
    fn moved(&mut self, ex: &Exchange) {
        let ids: Vec<String> = ex
            .request_body
            .as_deref()
            .and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok())
            .and_then(|b| b.get("resources").cloned())
            .and_then(|r| r.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        for id in ids {
            if let Some(key) = arm_path(&format!("https://h{id}")) {
                self.forget_under(&key);
                self.known.remove(&key);
                self.moved_at.insert(key, ex.seq);
            }
        }
    }

    /// Take in what one exchange shows (after the rules judged it).
    pub fn observe(&mut self, ex: &Exchange) {
        let (Some(r), Some(key)) = (&ex.response, arm_path(&ex.url)) else {
            return;
        };
        let method = ex.method.to_ascii_uppercase();
        if method == "POST" && (200..300).contains(&r.status) && key.ends_with("/moveresources") {
            self.moved(ex);
            return;
        }
        let running = self.running.contains_key(&key);
        let seq = ex.seq;
        let evidence = key.clone();
        match method.as_str() {
            "GET" if running => {}
            "GET" => match r.status {
                200 => {
                    let settled = !resource_state(r.json.as_ref()).is_running();
                    self.remember(key, (Known::Exists { settled }, seq));
                }
                404 => {
                    self.remember(key, (Known::Absent, seq));
                }
                _ => {}
            },
            "PUT" | "PATCH" | "DELETE" if (200..300).contains(&r.status) => {
                if method == "DELETE" {
                    self.forget_under(&key);
                }
                if starts_operation(ex) {
                    *self.running.entry(key.clone()).or_default() += 1;
                    self.known.remove(&key);
                } else if method != "DELETE" {
                    self.remember(key, (Known::Exists { settled: true }, seq));
                } else if matches!(r.status, 200 | 204) {
                    self.remember(key, (Known::Absent, seq));
                } else {
                    self.known.remove(&key);
                }
            }
            _ => {}
        }
        if self.known.get(&evidence).is_some_and(|(_, at)| *at == seq) {
            self.spelled.insert(evidence, exact_path(&ex.url));
        }
    }

    /// A followed PUT, PATCH or DELETE ended: what its end shows.
    pub fn settle(&mut self, flow: &Flow, exs: &[Exchange]) {
        let method = flow.method.to_ascii_uppercase();
        if !matches!(method.as_str(), "PUT" | "PATCH" | "DELETE") {
            return;
        }
        // Only operations `observe` counted as started end here.
        if !exs.get(flow.initial).is_some_and(starts_operation) {
            return;
        }
        let Some(key) = arm_path(flow.resource.as_deref().unwrap_or(&flow.request_url)) else {
            return;
        };
        match self.running.get_mut(&key) {
            Some(n) if *n > 1 => {
                *n -= 1;
                return;
            }
            Some(_) => {
                self.running.remove(&key);
            }
            None => return,
        }
        let after_read = flow
            .after(AfterRead::Resource)
            .last()
            .and_then(|i| exs.get(i));
        let after = after_read.and_then(|x| x.response.as_ref());
        // The exchange that shows the end: the read after it, else the last one of the flow.
        let seq = after_read
            .or_else(|| flow.events.last().and_then(|e| exs.get(e.ex())))
            .map_or(exs[flow.initial].seq, |x| x.seq);
        let shown = match (&flow.end, method.as_str(), after) {
            (End::Finished(Outcome::Succeeded), "DELETE", _) => Some(Known::Absent),
            (End::Finished(_), "PUT" | "PATCH", Some(r)) if r.status == 200 => {
                Some(Known::Exists {
                    settled: !resource_state(r.json.as_ref()).is_running(),
                })
            }
            (End::Finished(_), "PUT" | "PATCH", Some(r)) if r.status == 404 => Some(Known::Absent),
            (End::Finished(Outcome::Succeeded), "PUT" | "PATCH", None) => {
                Some(Known::Exists { settled: true })
            }
            _ => None,
        };
        // An operation judged late (the proxy judges one when its last reads have come) never
        // overrides newer evidence: a read after it, or its resource moving away.
        let newer = self.known.get(&key).is_some_and(|(_, at)| *at > seq)
            || self.moved_at.get(&key).is_some_and(|at| *at > seq);
        if newer {
            return;
        }
        if method == "DELETE" {
            self.forget_under(&key);
        }
        if shown.is_some() {
            let at = exs
                .iter()
                .find(|x| x.seq == seq)
                .unwrap_or(&exs[flow.initial]);
            self.spelled.insert(key.clone(), exact_path(&at.url));
        }
        match shown {
            Some(k) => self.remember(key, (k, seq)),
            None => {
                self.known.remove(&key);
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Surface;
    use serde_json::json;

    const R: &str = "http://h/subscriptions/s/resourceGroups/g/providers/N/w/a?api-version=1";
    const CHILD: &str = "http://h/subscriptions/s/resourceGroups/g/providers/N/w/a/c/b";

    pub(crate) fn ex(method: &str, url: &str, status: u16, headers: &[(&str, &str)]) -> Exchange {
        let body = json!({"properties": {"provisioningState": "Succeeded"}});
        crate::rules::testing::exchange(method, url, status, headers, body)
    }

    #[test]
    fn a_moved_resource_is_no_longer_known_at_its_old_address() {
        let mut s = Shown::default();
        s.observe(&ex("PUT", R, 200, &[]));
        s.observe(&ex("GET", CHILD, 200, &[]));
        let mut mv = ex(
            "POST",
            "http://h/subscriptions/s/resourceGroups/g/moveResources?api-version=1",
            200,
            &[],
        );
        mv.request_body = Some(
            json!({"targetResourceGroup": "/subscriptions/s/resourceGroups/g2",
                   "resources": ["/subscriptions/s/resourceGroups/g/providers/N/w/a"]})
            .to_string(),
        );
        s.observe(&mv);
        assert_eq!(s.of(R), None);
        assert_eq!(s.of(CHILD), None);
    }

    #[test]
    fn reads_and_final_answers_are_evidence() {
        let mut s = Shown::default();
        assert_eq!(s.of(R), None);
        s.observe(&ex("GET", R, 404, &[]));
        assert_eq!(s.of(R), Some((Known::Absent, 1)));
        s.observe(&ex("PUT", R, 200, &[]));
        assert_eq!(s.of(R), Some((Known::Exists { settled: true }, 1)));
        s.observe(&ex("GET", CHILD, 200, &[]));
        s.observe(&ex("DELETE", R, 200, &[]));
        assert_eq!(s.of(R).map(|k| k.0), Some(Known::Absent));
        assert_eq!(
            s.of(CHILD),
            None,
            "children of a deleted parent are forgotten"
        );
        assert!(s.ancestor_gone(CHILD));
        s.observe(&ex("DELETE", R, 400, &[]));
        assert_eq!(s.of(R).map(|k| k.0), Some(Known::Absent));
    }

    #[test]
    fn a_running_operation_hides_the_state_until_it_is_settled() {
        let mut s = Shown::default();
        s.observe(&ex("GET", R, 200, &[]));
        let del = ex("DELETE", R, 202, &[("Location", "http://h/op/1")]);
        s.observe(&del);
        assert_eq!(s.of(R), None);
        s.observe(&ex("GET", R, 404, &[]));
        assert_eq!(s.of(R), None, "a read while it runs is transient");
        let flow = Flow {
            surface: Surface::Arm,
            method: "DELETE".into(),
            request_url: R.into(),
            resource: Some(R.split('?').next().unwrap().into()),
            initial: 0,
            initial_state: crate::lro::State::Running(None),
            channel: Some(crate::lro::Channel::Location),
            declared: None,
            final_state_via: None,
            events: Vec::new(),
            end: End::Finished(Outcome::Succeeded),
            deadline_secs: 1,
            elapsed_ms: 0,
            result: None,
        };
        s.settle(&flow, &[del]);
        assert_eq!(s.of(R).map(|k| k.0), Some(Known::Absent));
        // A 202 with nothing to follow: unknown.
        s.observe(&ex("DELETE", R, 202, &[]));
        assert_eq!(s.of(R), None);
    }
}
