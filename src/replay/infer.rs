//! A target inferred from recordings, for `replay` without `--target`: what the rules need to
//! know about the RPs in the traffic (their namespaces, resource types, tracked or proxy,
//! provisioningState, ETags), taken from what the recordings show. Profiles: `arm` only.
//!
//! Heuristics, each from the ARM exchanges of every recording in the set (polls excluded):
//! - **Base URL, subscription, resource group, location**: the most frequent host
//!   (`scheme://host`), `/subscriptions/{id}`, `/resourceGroups/{name}` and body `location`.
//! - **Namespaces**: every last `/providers/{namespace}` of a path, spelled as first seen, each
//!   with its most frequent `api-version`; the most frequent namespace is the default.
//! - **Resource types**: a path `{scope}/providers/{ns}/{t1}/{n1}[/{t2}/{n2}...]` is a resource
//!   of type `ns/t1/t2...` when the traffic treats it as one: a PUT, PATCH or DELETE of it, a
//!   GET answered 200 whose body `id` is that path, or an item of a listed collection with
//!   such an `id`. Every prefix of the chain is a type too (the parents). The scope comes from
//!   what precedes `/providers/`: nothing (tenant), `/subscriptions/{s}` (subscription, or
//!   location when followed by `locations/{l}/`), `.../resourceGroups/{g}` (resource group),
//!   anything else (an extension of that resource). Operation-status URLs never become types:
//!   they are read as polls, and polls are not evidence.
//! - **Tracked or proxy**: tracked when a body of the type carries a string `location`, else
//!   proxy (tags alone do not make a resource tracked).
//! - **provisioningState**: declared when a body of the type shows
//!   `properties.provisioningState`.
//! - **ETag**: declared only when an answer about the type carries an `ETag` header or a body
//!   `etag`; other types are not judged by ETAG-24.
//! - **Long-running patterns** (per PUT, PATCH, DELETE): Azure-AsyncOperation and/or Location
//!   headers, a running provisioningState, or synchronous, as answered; `any` when answers
//!   differ or none was seen. `final-state-via` is left to the SDK default.
//!
//! Types are named by their ARM type (`Microsoft.Network/virtualNetworks/subnets`), with the
//! scope appended when one type appears under two scopes.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Recording;
use crate::http::{Exchange, Role};
use crate::lro::{Strategy, provisioning_state};
use crate::rules::Profile;
use crate::target::{
    Auth, Extends, Kind, Lro, Namespace, OpDecl, OpPattern, ResourceGroup, ResourceType, Scope,
    Target,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum ScopeKey {
    ResourceGroup,
    Subscription,
    Location,
    Tenant,
    Extension,
}

/// A path split at its last `/providers/{namespace}`.
struct Parsed<'p> {
    scope: ScopeKey,
    prefix: String,
    ns: &'p str,
    types: Vec<&'p str>,
    resource: bool,
}

fn parse(path: &str) -> Option<Parsed<'_>> {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let pi = segs
        .iter()
        .rposition(|s| s.eq_ignore_ascii_case("providers"))?;
    let ns = *segs.get(pi + 1)?;
    let prefix = &segs[..pi];
    let mut rest = &segs[pi + 2..];
    let is = |i: usize, w: &str| prefix.get(i).is_some_and(|s| s.eq_ignore_ascii_case(w));
    let scope = match prefix.len() {
        0 => ScopeKey::Tenant,
        2 if is(0, "subscriptions") => {
            if rest.len() >= 3 && rest[0].eq_ignore_ascii_case("locations") {
                rest = &rest[2..];
                ScopeKey::Location
            } else {
                ScopeKey::Subscription
            }
        }
        4 if is(0, "subscriptions") && is(2, "resourcegroups") => ScopeKey::ResourceGroup,
        _ => ScopeKey::Extension,
    };
    if rest.is_empty() {
        return None;
    }
    Some(Parsed {
        scope,
        prefix: format!("/{}", prefix.join("/")),
        ns,
        types: rest.iter().step_by(2).copied().collect(),
        resource: rest.len().is_multiple_of(2),
    })
}

fn url_path(url: &str) -> String {
    crate::http::parse_url(url).map_or_else(
        |_| url.split('?').next().unwrap_or(url).to_string(),
        |u| u.path().to_string(),
    )
}

fn bump(m: &mut BTreeMap<String, usize>, k: &str) {
    *m.entry(k.to_string()).or_default() += 1;
}

fn most(m: &BTreeMap<String, usize>) -> Option<&str> {
    m.iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(k, _)| k.as_str())
}

/// What was seen of one resource type.
#[derive(Debug, Clone)]
struct TypeSeen {
    scope: ScopeKey,
    extends: String,
    ns: String,
    segments: Vec<String>,
    evidence: bool,
    with_location: usize,
    with_state: usize,
    etag: bool,
    versions: BTreeMap<String, usize>,
    /// Patterns seen per PUT, PATCH, DELETE; `None` inside: answers differed.
    lro: [Option<Option<OpPattern>>; 3],
}

/// Observations of a recording set, folded into a [`Target`].
#[derive(Debug, Default)]
pub struct Inference {
    recordings: usize,
    hosts: BTreeMap<String, usize>,
    subscriptions: BTreeMap<String, usize>,
    groups: BTreeMap<String, usize>,
    locations: BTreeMap<String, usize>,
    /// Lower-case namespace -> (spelling, api-versions seen).
    namespaces: BTreeMap<String, (String, BTreeMap<String, usize>)>,
    types: BTreeMap<(ScopeKey, String), TypeSeen>,
}

/// The pattern an answer to a write shows.
fn pattern_of(ex: &Exchange) -> Option<OpPattern> {
    let r = ex
        .response
        .as_ref()
        .filter(|r| (200..300).contains(&r.status))?;
    let aao = r.header("azure-asyncoperation").is_some();
    let strategy = Strategy::arm(&ex.method, &ex.url, r);
    Some(match strategy {
        Strategy::Operation { location, .. } if aao && location.is_some() => {
            OpPattern::AzureAsyncOperationAndLocation
        }
        Strategy::Operation { .. } => OpPattern::AzureAsyncOperation,
        Strategy::Location { .. } => OpPattern::Location,
        Strategy::Body { .. } if strategy.initial(r).is_running() => OpPattern::ProvisioningState,
        _ => OpPattern::Sync,
    })
}

impl Inference {
    pub fn new() -> Self {
        Inference::default()
    }

    /// Take in one recording's ARM exchanges.
    pub fn add(&mut self, rec: &Recording) {
        self.begin();
        for (ex, meta) in rec.entries.iter().zip(&rec.meta) {
            self.entry(ex, meta);
        }
    }

    /// One more recording, whose entries follow one at a time ([`Inference::entry`]).
    pub fn begin(&mut self) {
        self.recordings += 1;
    }

    /// One entry of the recording begun last, paired (its poll role set).
    pub fn entry(&mut self, ex: &Exchange, meta: &super::EntryMeta) {
        if meta.arm && !ex.foreign {
            self.exchange(ex);
        }
    }

    fn exchange(&mut self, ex: &Exchange) {
        let Ok(u) = crate::http::parse_url(&ex.url) else {
            return;
        };
        if let Some(h) = u.host_str() {
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            bump(&mut self.hosts, &format!("{}://{h}{port}", u.scheme()));
        }
        if matches!(
            ex.role,
            Role::OperationStatus | Role::LocationPoll | Role::MonitorPoll
        ) {
            return;
        }
        let path = u.path().to_string();
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        if segs.len() >= 2 && segs[0].eq_ignore_ascii_case("subscriptions") {
            bump(&mut self.subscriptions, segs[1]);
            if segs.len() >= 4 && segs[2].eq_ignore_ascii_case("resourcegroups") {
                bump(&mut self.groups, segs[3]);
            }
        }
        let Some(p) = parse(&path) else { return };
        let version = u
            .query_pairs()
            .find(|(k, _)| k == "api-version")
            .map(|(_, v)| v.into_owned());
        let ns = self
            .namespaces
            .entry(p.ns.to_ascii_lowercase())
            .or_insert_with(|| (p.ns.to_string(), BTreeMap::new()));
        if let Some(v) = &version {
            bump(&mut ns.1, v);
        }
        let Some(resp) = ex.response.as_ref() else {
            return;
        };
        let method = ex.method.to_ascii_uppercase();
        let body = resp.json.as_ref().filter(|b| b.is_object());
        let ok = matches!(resp.status, 200 | 201);
        if let Some(l) = body.and_then(|b| b.get("location")).and_then(Value::as_str) {
            bump(&mut self.locations, l);
        }
        if p.resource {
            let id_matches = body
                .and_then(|b| b.get("id"))
                .and_then(Value::as_str)
                .is_some_and(|id| {
                    url_path(id)
                        .trim_end_matches('/')
                        .eq_ignore_ascii_case(path.trim_end_matches('/'))
                });
            // A body too deep to read is judged where a live run would judge it: at the
            // resource its URL names (it cannot show itself a list).
            let unread = body.is_none()
                && resp
                    .json_error
                    .as_deref()
                    .is_some_and(crate::http::is_too_deep);
            let write = matches!(method.as_str(), "PUT" | "PATCH" | "DELETE");
            if !(write || (method == "GET" && resp.status == 200 && (id_matches || unread))) {
                return;
            }
            let t = self.chain(&p, version.as_deref());
            if ok && (id_matches || matches!(method.as_str(), "PUT" | "PATCH")) {
                Self::body(t, body);
            }
            t.etag |= resp.header("etag").is_some();
            if let (Some(slot), Some(pat)) = (
                ["PUT", "PATCH", "DELETE"].iter().position(|m| *m == method),
                pattern_of(ex),
            ) {
                t.lro[slot] = match t.lro[slot] {
                    None => Some(Some(pat)),
                    Some(Some(prev)) if prev == pat => Some(Some(pat)),
                    _ => Some(None),
                };
            }
        } else if method == "GET" && resp.status == 200 {
            let items = body
                .and_then(|b| b.get("value"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for item in &items {
                let Some(id) = item.get("id").and_then(Value::as_str) else {
                    continue;
                };
                let ipath = url_path(id);
                if let Some(ip) = parse(&ipath).filter(|ip| ip.resource) {
                    let t = self.chain(&ip, None);
                    Self::body(t, Some(item));
                }
            }
        }
    }

    /// Register a resource's type and its parents; the type itself.
    fn chain(&mut self, p: &Parsed<'_>, version: Option<&str>) -> &mut TypeSeen {
        let mut key = String::new();
        for (n, seg) in p.types.iter().enumerate() {
            key = format!("{}/{}", p.ns.to_ascii_lowercase(), {
                let lower: Vec<String> = p.types[..=n]
                    .iter()
                    .map(|s| s.to_ascii_lowercase())
                    .collect();
                lower.join("/")
            });
            let t = self
                .types
                .entry((p.scope, key.clone()))
                .or_insert_with(|| TypeSeen {
                    scope: p.scope,
                    extends: p.prefix.clone(),
                    ns: p.ns.to_string(),
                    segments: p.types[..n].iter().map(|s| s.to_string()).collect(),
                    evidence: false,
                    with_location: 0,
                    with_state: 0,
                    etag: false,
                    versions: BTreeMap::new(),
                    lro: [None; 3],
                });
            if t.segments.len() == n {
                t.segments.push(seg.to_string());
            }
            t.evidence = true;
        }
        let t = self
            .types
            .get_mut(&(p.scope, key))
            .expect("registered above");
        if let Some(v) = version {
            bump(&mut t.versions, v);
        }
        t
    }

    fn body(t: &mut TypeSeen, body: Option<&Value>) {
        let Some(b) = body else { return };
        if b.get("location").is_some_and(Value::is_string) {
            t.with_location += 1;
        }
        if provisioning_state(Some(b)).is_some() {
            t.with_state += 1;
        }
        if b.get("etag").is_some_and(Value::is_string) {
            t.etag = true;
        }
    }

    fn ns_version(&self, ns: &str) -> String {
        self.namespaces
            .get(&ns.to_ascii_lowercase())
            .and_then(|(_, v)| most(v))
            .unwrap_or("")
            .to_string()
    }

    /// Type names: the ARM type, with the scope when the same type has several.
    fn names(&self) -> BTreeMap<(ScopeKey, String), String> {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, k) in self.types.keys() {
            *count.entry(k.as_str()).or_default() += 1;
        }
        self.types
            .iter()
            .map(|((scope, k), t)| {
                let base = format!("{}/{}", t.ns, t.segments.join("/"));
                let name = if count[k.as_str()] > 1 {
                    format!("{base} ({scope:?})")
                } else {
                    base
                };
                ((*scope, k.clone()), name)
            })
            .collect()
    }

    /// The inferred target.
    pub fn target(&self) -> Target {
        let base = most(&self.hosts).unwrap_or("https://management.azure.com");
        let base_url = crate::http::parse_url(base).unwrap_or_else(|_| {
            crate::http::parse_url("https://management.azure.com").expect("valid")
        });
        let mut namespaces: Vec<(usize, Namespace)> = self
            .namespaces
            .values()
            .map(|(name, v)| {
                (
                    v.values().sum(),
                    Namespace {
                        name: name.clone(),
                        api_version: most(v).unwrap_or("").to_string(),
                    },
                )
            })
            .collect();
        namespaces.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.name.cmp(&b.1.name)));
        let namespaces: Vec<Namespace> = namespaces.into_iter().map(|(_, n)| n).collect();
        let default = namespaces.first().cloned().unwrap_or(Namespace {
            name: "Microsoft.Resources".into(),
            api_version: String::new(),
        });
        let names = self.names();
        let types = self
            .types
            .iter()
            .filter(|(_, t)| t.evidence)
            .map(|((scope, key), t)| {
                let parent = key
                    .rsplit_once('/')
                    .filter(|_| t.segments.len() > 1)
                    .and_then(|(p, _)| names.get(&(*scope, p.to_string())).cloned());
                let decl = |i: usize| {
                    OpDecl::of(match t.lro[i] {
                        Some(Some(p)) => p,
                        _ => OpPattern::Any,
                    })
                };
                ResourceType {
                    name: names[&(*scope, key.clone())].clone(),
                    segment: t.segments.last().cloned().unwrap_or_default(),
                    namespace: t.ns.clone(),
                    api_version: most(&t.versions)
                        .map(str::to_string)
                        .unwrap_or_else(|| self.ns_version(&t.ns)),
                    scope: match t.scope {
                        ScopeKey::ResourceGroup => Scope::ResourceGroup,
                        ScopeKey::Subscription => Scope::Subscription,
                        ScopeKey::Location => Scope::Location,
                        ScopeKey::Tenant => Scope::Tenant,
                        ScopeKey::Extension => Scope::Extension(Extends::Id(t.extends.clone())),
                    },
                    parent,
                    depends_on: None,
                    kind: if t.with_location > 0 {
                        Kind::Tracked
                    } else {
                        Kind::Proxy
                    },
                    names: None,
                    deletable: true,
                    etag: t.etag,
                    provisioning_state: t.with_state > 0,
                    propagation: false,
                    skus: false,
                    skus_empty: false,
                    lro: Lro {
                        put: decl(0),
                        patch: decl(1),
                        delete: decl(2),
                    },
                    create_body: json!({}),
                    update_body: None,
                    replace_body: None,
                    tags_body: None,
                    failing_body: None,
                    failing_update_body: None,
                    invalid_bodies: Vec::new(),
                    echoes: None,
                    actions: Vec::new(),
                    cost: Default::default(),
                    line: 0,
                }
            })
            .collect();
        Target {
            label: format!(
                "inferred from {} recording{}",
                self.recordings,
                if self.recordings == 1 { "" } else { "s" }
            ),
            base_url,
            auth: Auth::None,
            secret_headers: Vec::new(),
            headers: Vec::new(),
            arm_paths: Vec::new(),
            specs: None,
            subject: None,
            front_door: None,
            subscription: most(&self.subscriptions)
                .unwrap_or("00000000-0000-0000-0000-000000000000")
                .to_string(),
            resource_group: ResourceGroup {
                name: most(&self.groups).unwrap_or("rg").to_string(),
                create: false,
                disposable: false,
                api_version: "2021-04-01".into(),
            },
            profiles: vec![Profile::Arm],
            implied_profiles: Vec::new(),
            profiles_declared: false,
            namespace: default.name.clone(),
            api_version: default.api_version.clone(),
            namespaces,
            location: most(&self.locations).unwrap_or("eastus").to_string(),
            deadline: std::time::Duration::from_secs(300),
            identity: None,
            types,
            monitors: Vec::new(),
            tasks: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Addressed;

    #[test]
    fn scopes_nesting_kind_and_features_come_from_the_traffic() {
        let sub = "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000";
        let vnet = format!("{sub}/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/v");
        let text = serde_json::json!({"Entries": [
            {"RequestUri": format!("{vnet}?api-version=2023-01-01"), "RequestMethod": "PUT",
             "StatusCode": 200, "ResponseHeaders": {"ETag": "W/\"1\""},
             "ResponseBody": {"id": "/x", "location": "eastus", "properties": {"provisioningState": "Succeeded"}}},
            {"RequestUri": format!("{vnet}/subnets/a?api-version=2023-01-01"), "RequestMethod": "GET",
             "StatusCode": 200, "ResponseHeaders": {},
             "ResponseBody": {"id": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/g/providers/Microsoft.Network/virtualNetworks/v/subnets/a", "properties": {}}},
            {"RequestUri": format!("{sub}/providers/Microsoft.Network/locations/eastus/usages?api-version=2023-01-01"),
             "RequestMethod": "GET", "StatusCode": 200, "ResponseHeaders": {}, "ResponseBody": {"value": []}},
        ], "Variables": {}})
        .to_string();
        let rec = super::super::read_recording_from(
            std::path::Path::new("t.json"),
            text.as_bytes(),
            &Default::default(),
        )
        .unwrap();
        let mut inf = Inference::new();
        inf.add(&rec);
        let t = inf.target();
        assert_eq!(t.base(), "https://management.azure.com");
        assert_eq!(t.namespace, "Microsoft.Network");
        assert_eq!(t.api_version, "2023-01-01");
        let v = t.type_named("Microsoft.Network/virtualNetworks").unwrap();
        assert_eq!(
            (v.kind, v.etag, v.provisioning_state),
            (Kind::Tracked, true, true)
        );
        assert_eq!(v.scope, Scope::ResourceGroup);
        let s = t
            .type_named("Microsoft.Network/virtualNetworks/subnets")
            .unwrap();
        assert_eq!(
            s.parent.as_deref(),
            Some("Microsoft.Network/virtualNetworks")
        );
        assert_eq!((s.kind, s.etag), (Kind::Proxy, false));
        assert!(
            matches!(t.address(&format!("{vnet}/subnets/b")), Addressed::Resource(x) if x.name == s.name)
        );
        // A collection read with no items is no evidence of a type.
        assert_eq!(t.types.len(), 2);
        let yaml = super::super::target_yaml(&t);
        if let Err(r) = crate::target::parse_target(std::path::Path::new("i.yaml"), &yaml, "i") {
            panic!("{}\n{yaml}", r.render());
        }
    }
}
