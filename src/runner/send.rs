//! Sending: every request of a test goes through [`Exec::send`], which adds the run's standard
//! headers and the api-version, records the exchange, hands it to the rule engine and keeps the
//! cleanup list. `request` is the scenario's plain request step (with `pages: all`).

use std::time::Duration;

use serde_json::Value;

use super::exec::{Exec, StepOut, StepResult};
use crate::http::{OutRequest, Role, Surface};
use crate::scenario::{ApiVersion, Body, RequestSpec};
use crate::target::Addressed;
use crate::template::value_to_text;

/// Most pages `pages: all` follows; a longer list is a runner error, never a partial list
/// (a check against a partial list would blame the RP for what the runner did not read).
const MAX_PAGES: usize = 1000;

/// Most page bytes `pages: all` reads, all pages together. The items are kept for the test to
/// check (parsed, several times their text), so the list a test may hold is bounded, whatever
/// the page count and body cap allow (1000 pages of 16 MiB); like a longer list, a larger one
/// is a runner error that says so. ARM lists hold at most a few MB.
const MAX_LIST_BYTES: usize = 32 * 1024 * 1024;

/// Most memory the items of a `pages: all` list may take once parsed ([`crate::http::json_cost`]):
/// pages of many small values take far more parsed than their bytes.
const MAX_LIST_COST: usize = 32 * 1024 * 1024;

impl Exec<'_> {
    /// Make a URL absolute against the target base.
    /// Did the target take a write to `resource` (a PUT, PATCH or DELETE of it, or a POST
    /// action on it) after exchange `since`? Such a write may start an operation of its own.
    pub(super) fn write_taken_since(&self, since: usize, resource: &str) -> bool {
        let key = crate::lro::path_key(resource);
        self.exchanges.iter().skip(since + 1).any(|x| {
            let path = crate::lro::path_key(&x.url);
            let on_it = match x.method.as_str() {
                "PUT" | "PATCH" | "DELETE" => path == key,
                "POST" => path
                    .strip_prefix(key.as_str())
                    .and_then(|rest| rest.strip_prefix('/'))
                    .is_some_and(|action| !action.contains('/')),
                _ => false,
            };
            on_it && x.status().is_some_and(|s| (200..300).contains(&s))
        })
    }

    pub(super) fn absolute(&self, url: &str) -> String {
        // Anything with a scheme is taken as given (the HTTP layer refuses non-http schemes);
        // only a path is made relative to the target.
        if url.contains("://") {
            url.to_string()
        } else if url.starts_with('/') {
            format!("{}{url}", self.ctx.target.base())
        } else {
            format!("{}/{url}", self.ctx.target.base())
        }
    }

    /// A GET with no extra headers (reads between steps, watch reads).
    pub(super) async fn get(&mut self, url: &str, role: Role) -> StepResult<usize> {
        self.send(
            "GET",
            url,
            Vec::new(),
            None,
            role,
            &ApiVersion::Default,
            None,
        )
        .await
    }

    /// The URL with the api-version the scenario asks for (added only on the target's own
    /// origin; URLs the server handed out are sent as given).
    fn versioned(&self, url: &str, api: &ApiVersion) -> StepResult<url::Url> {
        let mut u = crate::http::parse_url(&self.absolute(url))
            .map_err(|e| format!("invalid URL `{}`: {e}", crate::http::strip_userinfo(url)))?;
        if !self.ctx.target.same_origin(&u) {
            return Ok(u);
        }
        let has = u.query_pairs().any(|(k, _)| k == "api-version");
        match api {
            ApiVersion::AsGiven => {}
            ApiVersion::Default if !has => {
                // A target that declares no api-version for this URL (only `arm_paths`, say)
                // has none to add.
                let v = self.ctx.target.api_version_for(u.as_str()).to_string();
                if !v.is_empty() {
                    u.query_pairs_mut().append_pair("api-version", &v);
                }
            }
            ApiVersion::Default => {}
            ApiVersion::Omit | ApiVersion::Value(_) => {
                let kept: Vec<(String, String)> = u
                    .query_pairs()
                    .filter(|(k, _)| k != "api-version")
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                u.set_query(None);
                if !kept.is_empty() || matches!(api, ApiVersion::Value(_)) {
                    let mut q = u.query_pairs_mut();
                    for (k, v) in &kept {
                        q.append_pair(k, v);
                    }
                    if let ApiVersion::Value(t) = api {
                        q.append_pair("api-version", &t.render(&self.scope)?);
                    }
                }
            }
        }
        Ok(u)
    }

    /// Send one request with the run's standard headers, record it, judge it, remember it.
    /// `surface` is the declared surface it belongs to (None: from what the URL addresses).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn send(
        &mut self,
        method: &str,
        url: &str,
        mut headers: Vec<(String, String)>,
        body: Option<String>,
        role: Role,
        api: &ApiVersion,
        surface: Option<Surface>,
    ) -> StepResult<usize> {
        // A link on ARM's public host goes to the RP's endpoint, as ARM routes it.
        let url = &self.ctx.http.route(url);
        let u = self.versioned(url, api)?;
        // The target's footprint, whatever the suite says: refused before anything is sent.
        if let Some(why) = self.ctx.http.guard_refusal(method, u.as_str()) {
            return Err(why);
        }
        let own = self.ctx.target.same_origin(&u);
        let surface = surface.unwrap_or_else(|| self.ctx.target.surface_of(u.as_str()));
        let mut std_headers = vec![
            ("x-ms-client-request-id".to_string(), super::ids::uuid()),
            (
                "x-ms-correlation-request-id".to_string(),
                self.correlation.clone(),
            ),
        ];
        if own && surface == Surface::Arm {
            std_headers.push(("x-ms-routing-request-id".into(), super::ids::uuid()));
            // Played in front of the RP, ARM's front door adds the Referer (the public URL)
            // and the caller's headers itself (`http::front_door`). Through ARM, the full URL
            // the client called (the HTTP layer drops userinfo).
            if self.ctx.http.front_door().is_none() {
                std_headers.push(("Referer".into(), u.to_string()));
                if let Some((t, c)) = &self.ctx.target.identity {
                    std_headers.push(("x-ms-home-tenant-id".into(), t.clone()));
                    std_headers.push(("x-ms-client-object-id".into(), c.clone()));
                }
            }
        }
        // A scenario's own header replaces the standard one of that name, and so does a
        // header the target file pins (`headers:`, sent by the HTTP layer on its origin).
        let pinned = |k: &str| {
            own && self
                .ctx
                .target
                .headers
                .iter()
                .any(|(h, _)| h.eq_ignore_ascii_case(k))
        };
        std_headers.retain(|(k, _)| {
            let given = headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k));
            !given && !pinned(k)
        });
        std_headers.append(&mut headers);
        // Track what the run may create from the moment the PUT leaves: an answer that never
        // comes (or a 5xx) can still have created it. ARM resources of a declared type, and
        // data-plane resources (a status-monitor PUT creates one).
        let bare = format!("{}{}", u.origin().ascii_serialization(), u.path());
        let addressed_type = match self.ctx.target.address(u.as_str()) {
            Addressed::Resource(t) if own => Some(t),
            _ => None,
        };
        let addressed = addressed_type.is_some();
        if let Some(t) = addressed_type
            && t.names.is_some()
            && matches!(method, "PUT" | "PATCH" | "DELETE")
        {
            self.before_fixed_write(&bare, &u, t.replace_body()).await;
        }
        let trackable = addressed || (own && surface == Surface::DataPlane);
        let put = trackable && method == "PUT";
        if put {
            let api = u
                .query_pairs()
                .find(|(k, _)| k == "api-version")
                .map(|(_, v)| v.into_owned())
                .or_else(|| {
                    addressed.then(|| self.ctx.target.api_version_for(u.as_str()).to_string())
                });
            let kind = if addressed { Surface::Arm } else { surface };
            self.ctx
                .cleanup
                .track(&bare, &self.inst.name, api.as_deref(), kind)?;
        }
        let req = OutRequest {
            surface,
            method: method.to_string(),
            url: u.to_string(),
            headers: std_headers,
            body,
        };
        let exch = self.ctx.http.send(req, role).await;
        self.ctx.observe(&self.inst.name, &exch);
        if !self.judge_later {
            self.judge.exchange(&exch);
        }
        // Cleanup reads these before deleting: a failed PUT may have created nothing, a DELETE
        // that answered success may have removed it (and its children).
        let ok = matches!(exch.status(), Some(200..=299));
        if (put && !ok) || (trackable && method == "DELETE" && ok) {
            self.ctx.cleanup.maybe_gone(&bare);
        }
        self.exchanges.push(exch);
        Ok(self.exchanges.len() - 1)
    }

    /// Before a write to a resource of a fixed-name type: hold its lock until the test ends
    /// (no two tests change it at once) and, the first time in the run, read it, so that a
    /// resource that existed is put back as it was at the end instead of being deleted.
    async fn before_fixed_write(&mut self, bare: &str, versioned: &url::Url, shape: &Value) {
        let key = bare.to_ascii_lowercase();
        if !self.held.iter().any(|(k, _)| *k == key) {
            let lock = self.ctx.cleanup.fixed.lock_of(bare);
            let wait = (self.ctx.target.deadline * 4)
                .clamp(Duration::from_secs(60), Duration::from_secs(3600));
            match tokio::time::timeout(wait, lock.lock_owned()).await {
                Ok(guard) => self.held.push((key, guard)),
                Err(_) => self.notes.push(format!(
                    "{bare}: another test kept this fixed-name resource for {} s; writing without waiting longer",
                    wait.as_secs()
                )),
            }
        }
        if !self.ctx.cleanup.fixed.first_write(bare) {
            return;
        }
        let req = OutRequest {
            surface: Surface::Arm,
            method: "GET".into(),
            url: versioned.to_string(),
            headers: Vec::new(),
            body: None,
        };
        let exch = self.ctx.http.send(req, Role::Setup).await;
        if exch.status() == Some(200)
            && let Some(body) = exch.response.as_ref().and_then(|r| r.json.as_ref())
        {
            let full = restorable(body);
            let shaped = project(&full, shape);
            let fallback = (shaped != full).then_some(shaped);
            self.ctx
                .cleanup
                .fixed
                .keep_original(bare, full, fallback, &self.inst.name);
        }
        self.exchanges.push(exch);
    }

    pub(super) async fn request(&mut self, r: &RequestSpec) -> StepResult<StepOut> {
        let method = self.render(&r.method)?.to_ascii_uppercase();
        let url = self.absolute(&self.render(&r.url)?);
        let mut headers = Vec::new();
        for (k, t) in &r.headers {
            let v = t.render_value(&self.scope)?;
            // A null header value means "do not send this header" (table rows use it).
            if v.is_null() {
                continue;
            }
            headers.push((k.clone(), value_to_text(&v)));
        }
        let body = match &r.body {
            None => None,
            Some(Body::Json(jt)) => Some(jt.render(&self.scope)?.to_string()),
            Some(Body::Raw(t)) => Some(self.render(t)?),
        };
        let idx = self
            .send(
                &method,
                &url,
                headers,
                body,
                Role::Step,
                &r.api_version,
                None,
            )
            .await?;
        if self.exchanges[idx].response.is_none() {
            let e = self.exchanges[idx].error.clone().unwrap_or_default();
            return Err(format!(
                "no response from {method} {}: {e}",
                self.exchanges[idx].url
            ));
        }
        let items = if r.all_pages {
            Some(self.all_pages(idx).await?)
        } else {
            None
        };
        Ok(StepOut {
            exchange: Some(idx),
            items,
            url,
            method,
            ..Default::default()
        })
    }

    /// Every page's `value`, following nextLink as given. A page after the first gives its
    /// items up once the engine has judged it (they are moved into the list, not copied; its
    /// recorded body text stays for the report).
    async fn all_pages(&mut self, first: usize) -> StepResult<Vec<Value>> {
        let mut all: Vec<Value> = Vec::new();
        let mut cur = first;
        let mut read = 0usize;
        let mut cost = 0usize;
        for page in 0.. {
            let Some(resp) = self.exchanges[cur]
                .response
                .as_mut()
                .filter(|r| r.status == 200)
            else {
                break;
            };
            read = read.saturating_add(resp.body_bytes);
            if read > MAX_LIST_BYTES {
                return Err(format!(
                    "the list's pages hold more than {} MiB (page {}); stopped following nextLink there: a test keeps at most that much of a list (memory bound)",
                    MAX_LIST_BYTES >> 20,
                    page + 1
                ));
            }
            let taken = if cur == first {
                resp.sent_json().cloned()
            } else {
                let sent = resp.sent.take().and_then(|s| {
                    std::sync::Arc::try_unwrap(s)
                        .unwrap_or_else(|a| crate::http::Sent {
                            headers: None,
                            json: a.json.clone(),
                        })
                        .json
                });
                let json = resp.json.take();
                sent.or(json)
            };
            let Some(mut j) = taken else {
                break;
            };
            if let Some(Value::Array(v)) = j.get_mut("value").map(Value::take) {
                cost = cost.saturating_add(v.iter().map(crate::http::json_cost).sum());
                if cost > MAX_LIST_COST {
                    return Err(format!(
                        "the list's items take more than {} MiB once read (page {}); stopped following nextLink there: a test keeps at most that much of a list (memory bound)",
                        MAX_LIST_COST >> 20,
                        page + 1
                    ));
                }
                all.extend(v);
            }
            let Some(next) = j
                .get("nextLink")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
            else {
                break;
            };
            if page + 1 >= MAX_PAGES {
                return Err(format!(
                    "the list has more than {MAX_PAGES} pages; stopped following nextLink at {next}"
                ));
            }
            let next = self.absolute(&next);
            let surface = self.exchanges[first].surface;
            cur = self
                .send(
                    "GET",
                    &next,
                    Vec::new(),
                    None,
                    Role::NextPage,
                    &ApiVersion::AsGiven,
                    Some(surface),
                )
                .await?;
        }
        Ok(all)
    }
}

/// A GET body as a PUT body that puts the resource back: without the read-only fields.
fn restorable(body: &Value) -> Value {
    let mut b = body.clone();
    if let Some(o) = b.as_object_mut() {
        for k in ["id", "name", "type", "etag", "systemData"] {
            o.remove(k);
        }
        if let Some(p) = o.get_mut("properties").and_then(Value::as_object_mut) {
            p.remove("provisioningState");
        }
    }
    b
}

/// `value` cut to the keys of `shape` (recursively; an empty object in `shape` keeps an empty
/// object): a GET body in the form of the type's PUT body, for servers that accept no other.
fn project(value: &Value, shape: &Value) -> Value {
    match (value, shape) {
        (Value::Object(v), Value::Object(s)) => Value::Object(
            s.iter()
                .filter_map(|(k, sub)| v.get(k).map(|x| (k.clone(), project(x, sub))))
                .collect(),
        ),
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::{project, restorable};
    use serde_json::json;

    #[test]
    fn restorable_drops_read_only_fields() {
        let got = restorable(
            &json!({"id": "/x", "name": "default", "type": "A.B/c", "etag": "\"1\"",
            "systemData": {}, "location": "eastus", "properties": {"provisioningState": "Succeeded", "size": 1}}),
        );
        assert_eq!(
            got,
            json!({"location": "eastus", "properties": {"size": 1}})
        );
        let shaped = project(
            &json!({"location": "eastus", "identity": {"type": "A", "principalId": "p"}, "properties": {"x": 1}}),
            &json!({"location": "westus", "identity": {"type": "B"}, "properties": {}}),
        );
        assert_eq!(
            shaped,
            json!({"location": "eastus", "identity": {"type": "A"}, "properties": {}})
        );
    }
}
