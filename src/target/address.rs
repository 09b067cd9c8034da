//! Addresses: the URL of each declared type (by its scope, parent or extended resource), and
//! the other way round, which declaration a URL addresses and so which surface it is on.
//! Matching is case-insensitive, as ARM's is.

use std::sync::Arc;

use regex::Regex;

use super::{Extends, ResourceType, Scope, Target};
use crate::http::Surface;

/// What a URL addresses among the target's declarations.
#[derive(Debug, Clone)]
pub enum Addressed<'t> {
    /// One resource of a declared type.
    Resource(&'t ResourceType),
    /// The collection of a declared type.
    Collection(&'t ResourceType),
    /// `{resource}/skus`, `{resource}/{action}`: something under one resource.
    Sub(&'t ResourceType, String),
    /// The run's resource group (or another group of the subscription).
    ResourceGroup,
    /// Under a declared namespace, but none of the above (operation status endpoints...).
    Provider,
    /// Nothing the target declares on its ARM surface.
    Other,
}

impl Addressed<'_> {
    pub fn is_arm(&self) -> bool {
        !matches!(self, Addressed::Other)
    }
}

fn segments(path: &str) -> Vec<&str> {
    path.split('?')
        .next()
        .unwrap_or("")
        .split('/')
        .filter(|s| !s.is_empty())
        .collect()
}

fn path_of(url: &str) -> String {
    crate::lro::url_path(url).into_owned()
}

/// `path` without `prefix` (no trailing slash), when it starts with it at a segment boundary
/// (letter case aside, as ARM reads paths); `path` as it is otherwise.
fn strip_prefix_ci<'p>(path: &'p str, prefix: &str) -> &'p str {
    if prefix.is_empty() {
        return path;
    }
    match path.get(..prefix.len()) {
        Some(head)
            if head.eq_ignore_ascii_case(prefix)
                && matches!(path.as_bytes().get(prefix.len()), None | Some(b'/')) =>
        {
            &path[prefix.len()..]
        }
        _ => path,
    }
}

/// Is this a GUID (8-4-4-4-12 hex digits)?
pub fn is_guid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A path template (`/v1/things/${id}`) as an anchored regex over paths.
fn template_regex(t: &str) -> Option<Arc<Regex>> {
    // Every request asks which surface it addresses: compile each template once per process,
    // and share it (a cloned `Regex` starts with empty match caches).
    static CACHE: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, Option<Arc<Regex>>>>,
    > = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(t) {
        return hit.clone();
    }
    let re = compile_template(t).map(Arc::new);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(t.to_string(), re.clone());
    re
}

fn compile_template(t: &str) -> Option<Regex> {
    let path = path_of(t);
    let mut re = String::from("(?i)^");
    let mut rest = path.as_str();
    while let Some(i) = rest.find("${") {
        re.push_str(&regex::escape(&rest[..i]));
        let end = rest[i..].find('}').map(|j| i + j + 1).unwrap_or(rest.len());
        re.push_str("[^/]+");
        rest = &rest[end..];
    }
    re.push_str(&regex::escape(rest.trim_end_matches('/')));
    re.push_str("/?$");
    Regex::new(&re).ok()
}

impl Target {
    /// The base URL's path (`/rp/v1` behind a gateway), without a trailing slash; empty when
    /// the base is a bare origin.
    pub fn base_path(&self) -> &str {
        self.base_url.path().trim_end_matches('/')
    }

    /// The path of a URL (or of a path) as the target's declarations read it: the base URL's
    /// path prefix taken off when it has it. An ARM resource id is such a path.
    pub fn rel_path(&self, url: &str) -> String {
        let path = path_of(url);
        let rel = strip_prefix_ci(&path, self.base_path());
        if rel.is_empty() {
            "/".to_string()
        } else {
            rel.to_string()
        }
    }

    /// The URL a path of the target is sent to: the base URL (with its path prefix) and the
    /// path. An absolute URL is taken as given.
    pub fn url_for(&self, path: &str) -> String {
        if path.contains("://") {
            path.to_string()
        } else if path.starts_with('/') {
            format!("{}{path}", self.base())
        } else {
            format!("{}/{path}", self.base())
        }
    }

    /// The collection URL of a type: under its parent's URL for a nested type, under the
    /// extended resource for an extension type, else by its scope.
    pub fn collection_url(
        &self,
        ty: &ResourceType,
        parent_url: Option<&str>,
    ) -> Result<String, String> {
        let ns = &ty.namespace;
        let base = self.base();
        let sub = format!("{base}/subscriptions/{}", self.subscription);
        if ty.parent.is_some() {
            let p = parent_url.ok_or_else(|| format!("type `{}` needs its parent", ty.name))?;
            return Ok(format!("{}/{}", p.trim_end_matches('/'), ty.segment));
        }
        Ok(match &ty.scope {
            Scope::ResourceGroup => format!("{}/providers/{ns}/{}", self.rg_url(), ty.segment),
            Scope::Subscription => format!("{sub}/providers/{ns}/{}", ty.segment),
            Scope::Location => format!(
                "{sub}/providers/{ns}/locations/{}/{}",
                self.location, ty.segment
            ),
            Scope::Tenant => format!("{base}/providers/{ns}/{}", ty.segment),
            Scope::Extension(ext) => {
                let host = match (ext, parent_url) {
                    (_, Some(p)) => p.trim_end_matches('/').to_string(),
                    (Extends::Id(id), None) => format!("{base}{id}"),
                    (Extends::Type(t), None) => {
                        return Err(format!(
                            "type `{}` extends a `{t}` resource: it needs one",
                            ty.name
                        ));
                    }
                };
                format!("{host}/providers/{ns}/{}", ty.segment)
            }
        })
    }

    /// A URL one resource of `ty` could have (every name `x`, or the type's fixed one), with
    /// its api-version: what maps a type to its operations in the RP's spec before the run.
    pub fn sample_url(&self, ty: &ResourceType) -> Option<String> {
        Some(format!(
            "{}?api-version={}",
            self.sample_path(ty, 0)?,
            ty.api_version
        ))
    }

    fn sample_path(&self, ty: &ResourceType, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        let mut chain = vec![ty];
        while let Some(p) = chain.last()?.parent.as_deref() {
            chain.push(self.type_named(p)?);
            if chain.len() > 16 {
                return None;
            }
        }
        let name = |t: &ResourceType| t.names.as_ref().map_or("x".to_string(), |n| n[0].clone());
        let mut url: Option<String> = None;
        for t in chain.iter().rev() {
            let host = match (&t.scope, &url) {
                (Scope::Extension(Extends::Type(e)), None) => {
                    Some(self.sample_path(self.type_named(e)?, depth + 1)?)
                }
                _ => url.clone(),
            };
            url = Some(format!(
                "{}/{}",
                self.collection_url(t, host.as_deref()).ok()?,
                name(t)
            ));
        }
        url
    }

    /// What this URL (or path) addresses among the ARM declarations.
    pub fn address(&self, url: &str) -> Addressed<'_> {
        let path = self.rel_path(url);
        let segs = segments(&path);
        let is_ns = |s: &str| {
            self.namespaces
                .iter()
                .any(|n| n.name.eq_ignore_ascii_case(s))
        };
        let Some(pi) = (0..segs.len().saturating_sub(1))
            .rev()
            .find(|&i| segs[i].eq_ignore_ascii_case("providers") && is_ns(segs[i + 1]))
        else {
            let rg = segs.len() == 4
                && segs[0].eq_ignore_ascii_case("subscriptions")
                && segs[2].eq_ignore_ascii_case("resourcegroups");
            return if rg {
                Addressed::ResourceGroup
            } else {
                Addressed::Other
            };
        };
        let ns = segs[pi + 1];
        let prefix = &segs[..pi];
        let mut rest = &segs[pi + 2..];
        let sub = prefix.len() == 2 && prefix[0].eq_ignore_ascii_case("subscriptions");
        let rg = prefix.len() == 4
            && prefix[0].eq_ignore_ascii_case("subscriptions")
            && prefix[2].eq_ignore_ascii_case("resourcegroups");
        let located = sub && rest.len() >= 3 && rest[0].eq_ignore_ascii_case("locations");
        let scope_fits = |t: &ResourceType, in_location: bool| match &t.scope {
            Scope::ResourceGroup => rg,
            Scope::Subscription => sub && !in_location,
            Scope::Location => in_location,
            Scope::Tenant => prefix.is_empty(),
            // A fixed extended id (a group, a subscription, `/` for the tenant): exactly it.
            Scope::Extension(Extends::Id(id)) => {
                let want = segments(id);
                want.len() == prefix.len()
                    && want
                        .iter()
                        .zip(prefix)
                        .all(|(a, b)| a.eq_ignore_ascii_case(b))
            }
            Scope::Extension(Extends::Type(_)) => !prefix.is_empty() && !sub && !rg,
        };
        let top = |rest: &[&str], in_location: bool| {
            rest.first().and_then(|seg| {
                self.types.iter().find(|t| {
                    t.parent.is_none()
                        && t.namespace.eq_ignore_ascii_case(ns)
                        && t.segment.eq_ignore_ascii_case(seg)
                        && scope_fits(t, in_location)
                })
            })
        };
        let mut first = top(rest, false);
        if first.is_none() && located {
            first = top(&rest[2..], true);
            if first.is_some() {
                rest = &rest[2..];
            }
        }
        let Some(mut ty) = first else {
            return Addressed::Provider;
        };
        let mut i = 0;
        loop {
            match rest.len() - i {
                1 => return Addressed::Collection(ty),
                2 => return Addressed::Resource(ty),
                _ => {}
            }
            let seg = rest[i + 2];
            let child = self.types.iter().find(|t| {
                t.parent.as_deref() == Some(ty.name.as_str()) && t.segment.eq_ignore_ascii_case(seg)
            });
            match child {
                Some(c) => {
                    ty = c;
                    i += 2;
                }
                None if rest.len() - i == 3 => return Addressed::Sub(ty, seg.to_string()),
                None => return Addressed::Provider,
            }
        }
    }

    /// The declared type of the resource this URL addresses, if any.
    pub fn type_for(&self, url: &str) -> Option<&ResourceType> {
        match self.address(url) {
            Addressed::Resource(t) => Some(t),
            _ => None,
        }
    }

    /// Which declared surface a request to this URL belongs to: a task API or monitor URL it
    /// matches, the ARM types and groups, or none. Never decided by a path prefix alone.
    pub fn surface_of(&self, url: &str) -> Surface {
        if let Ok(u) = crate::http::parse_url(url)
            && !self.same_origin(&u)
        {
            return Surface::Other;
        }
        let path = self.rel_path(url);
        if let Some(t) = &self.tasks {
            let mut templates = vec![&t.create.url, &t.delete.url, &t.task_url, &t.resource_url];
            templates.extend(t.update.as_ref().map(|u| &u.url));
            templates.extend(t.tasks_url.as_ref());
            if templates
                .iter()
                .filter_map(|t| template_regex(t))
                .any(|re| re.is_match(&path))
            {
                return Surface::Task;
            }
        }
        if self
            .monitors
            .iter()
            .filter_map(|m| template_regex(&m.request.url))
            .any(|re| re.is_match(&path))
        {
            return Surface::DataPlane;
        }
        let declared = self.arm_paths.iter().any(|p| {
            let p = p.trim_end_matches('/');
            path.get(..p.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(p))
                && (p.is_empty() || matches!(path.as_bytes().get(p.len()), None | Some(b'/')))
        });
        if declared
            || !matches!(
                self.address(&path),
                Addressed::ResourceGroup | Addressed::Other
            )
        {
            // Resource groups are ARM's own (Microsoft.Resources), not the RP's.
            Surface::Arm
        } else {
            Surface::Other
        }
    }

    /// The declared status-monitor operation a request of this method to this URL starts.
    pub fn monitor_for(&self, method: &str, url: &str) -> Option<&super::Monitor> {
        let path = self.rel_path(url);
        self.monitors.iter().find(|m| {
            m.request.method.eq_ignore_ascii_case(method)
                && template_regex(&m.request.url).is_some_and(|re| re.is_match(&path))
        })
    }

    /// The api-version a request to this URL carries when the scenario does not say.
    pub fn api_version_for(&self, url: &str) -> &str {
        match self.address(url) {
            Addressed::Resource(t) | Addressed::Collection(t) | Addressed::Sub(t, _) => {
                &t.api_version
            }
            Addressed::ResourceGroup => &self.resource_group.api_version,
            _ => {
                let path = self.rel_path(url);
                let segs = segments(&path);
                segs.iter()
                    .rposition(|s| s.eq_ignore_ascii_case("providers"))
                    .and_then(|i| segs.get(i + 1))
                    .map(|ns| self.api_version_of(ns))
                    .unwrap_or(&self.api_version)
            }
        }
    }

    /// The ARM type a path implies: `Namespace/t1/t2` (`Namespace/locations/t` for a
    /// location-based type), from the path's last provider segment.
    pub fn arm_type_of(&self, url: &str) -> Option<String> {
        let path = self.rel_path(url);
        let segs = segments(&path);
        let pi = segs
            .iter()
            .rposition(|s| s.eq_ignore_ascii_case("providers"))?;
        let ns = segs.get(pi + 1)?;
        let rest = &segs[pi + 2..];
        let located = pi == 2
            && rest.len() >= 4
            && rest[0].eq_ignore_ascii_case("locations")
            && matches!(self.address(url), Addressed::Resource(t) | Addressed::Collection(t) if self.top_of(t).scope == Scope::Location);
        let (lead, rest) = if located {
            (Some("locations"), &rest[2..])
        } else {
            (None, rest)
        };
        let types: Vec<&str> = lead
            .into_iter()
            .chain(rest.iter().step_by(2).copied())
            .collect();
        Some(format!("{ns}/{}", types.join("/")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = r#"
base_url: http://h
subscription: 00000000-0000-0000-0000-000000000001
resource_group: {name: rg}
namespace: Microsoft.Contoso
api_version: "2024-05-01"
namespaces: {Microsoft.Fabrikam: {api_version: "2023-07-01"}}
location: westus
tasks:
  create: {method: POST, url: "/subscriptions/s/databases"}
  delete: {method: DELETE, url: "/subscriptions/s/databases/${resource_id}"}
  task_url: "/tasks/${task_id}"
  resource_url: "/subscriptions/s/databases/${resource_id}"
types:
  widgets: {create_body: {location: x}}
  gadgets: {parent: widgets, kind: proxy, create_body: {}}
  config: {parent: widgets, path: configurations, singleton: default, kind: proxy, create_body: {}}
  subs: {scope: subscription, path: subscriptionWidgets, create_body: {location: x}}
  regional: {scope: location, path: regionalWidgets, kind: proxy, create_body: {}}
  tenant: {scope: tenant, path: tenantWidgets, kind: proxy, create_body: {}}
  notes: {scope: extension, extends: widgets, path: annotations, kind: proxy, create_body: {}}
  gizmos: {namespace: Microsoft.Fabrikam, create_body: {location: x}}
  rgnotes: {scope: extension, extends: /subscriptions/s/resourceGroups/rg, path: rgNotes, kind: proxy, create_body: {}}
  tenantnotes: {scope: extension, extends: /, path: tenantNotes, kind: proxy, create_body: {}}
"#;

    fn target() -> Target {
        super::super::parse_target(std::path::Path::new("t.yaml"), T, "t")
            .map_err(|r| r.render())
            .unwrap()
    }

    fn name(a: Addressed<'_>) -> String {
        match a {
            Addressed::Resource(t) => format!("resource {}", t.name),
            Addressed::Collection(t) => format!("collection {}", t.name),
            Addressed::Sub(t, s) => format!("sub {} {s}", t.name),
            Addressed::ResourceGroup => "group".into(),
            Addressed::Provider => "provider".into(),
            Addressed::Other => "other".into(),
        }
    }

    #[test]
    fn a_sample_url_is_one_the_type_answers_at() {
        let t = target();
        for ty in &t.types {
            let url = t.sample_url(ty).expect(&ty.name);
            assert!(
                url.ends_with(&format!("?api-version={}", ty.api_version)),
                "{url}"
            );
            assert!(
                matches!(t.address(&url), Addressed::Resource(r) if r.name == ty.name),
                "{} at {url}",
                ty.name
            );
        }
        let config = t.type_named("config").unwrap();
        assert!(
            t.sample_url(config)
                .unwrap()
                .contains("/widgets/x/configurations/default?")
        );
    }

    #[test]
    fn every_scope_is_addressed() {
        let t = target();
        let rg = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso";
        for (path, want) in [
            (format!("{rg}/widgets/w"), "resource widgets"),
            (format!("{rg}/WIDGETS"), "collection widgets"),
            (format!("{rg}/widgets/w/gadgets/g"), "resource gadgets"),
            (
                format!("{rg}/widgets/w/configurations/default"),
                "resource config",
            ),
            (format!("{rg}/widgets/w/skus"), "sub widgets skus"),
            (format!("{rg}/widgets/w/restart"), "sub widgets restart"),
            (
                "/subscriptions/s/providers/Microsoft.Contoso/subscriptionWidgets/x".into(),
                "resource subs",
            ),
            (
                "/subscriptions/s/providers/Microsoft.Contoso/locations/westus/regionalWidgets/x"
                    .into(),
                "resource regional",
            ),
            (
                "/subscriptions/s/providers/Microsoft.Contoso/locations/westus/operationStatuses/1"
                    .into(),
                "provider",
            ),
            (
                "/providers/Microsoft.Contoso/tenantWidgets/x".into(),
                "resource tenant",
            ),
            (
                format!("{rg}/widgets/w/providers/Microsoft.Contoso/annotations/n"),
                "resource notes",
            ),
            (
                "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Fabrikam/gizmos/z".into(),
                "resource gizmos",
            ),
            ("/subscriptions/s/resourceGroups/rg".into(), "group"),
            (
                "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/rgNotes/n".into(),
                "resource rgnotes",
            ),
            (
                "/providers/Microsoft.Contoso/tenantNotes/n".into(),
                "resource tenantnotes",
            ),
            (
                "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Other/x/y".into(),
                "other",
            ),
        ] {
            assert_eq!(name(t.address(&path)), want, "{path}");
        }
    }

    #[test]
    fn urls_types_and_versions_follow_the_scope() {
        let t = target();
        let ty = |n: &str| t.type_named(n).unwrap();
        assert_eq!(
            t.collection_url(ty("regional"), None).unwrap(),
            "http://h/subscriptions/00000000-0000-0000-0000-000000000001/providers/Microsoft.Contoso/locations/westus/regionalWidgets"
        );
        assert_eq!(
            t.collection_url(ty("tenant"), None).unwrap(),
            "http://h/providers/Microsoft.Contoso/tenantWidgets"
        );
        assert_eq!(
            t.collection_url(ty("notes"), Some("http://h/x/widgets/w"))
                .unwrap(),
            "http://h/x/widgets/w/providers/Microsoft.Contoso/annotations"
        );
        assert!(t.collection_url(ty("notes"), None).is_err());
        assert_eq!(
            ty("regional").arm_type(&t),
            "Microsoft.Contoso/locations/regionalWidgets"
        );
        assert_eq!(
            t.arm_type_of(
                "/subscriptions/s/providers/Microsoft.Contoso/locations/westus/regionalWidgets/x"
            )
            .as_deref(),
            Some("Microsoft.Contoso/locations/regionalWidgets")
        );
        assert_eq!(
            t.api_version_for(
                "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Fabrikam/gizmos/z"
            ),
            "2023-07-01"
        );
        assert_eq!(t.surface_of("http://h/tasks/abc"), Surface::Task);
        assert_eq!(
            t.surface_of("http://h/subscriptions/s/databases/9"),
            Surface::Task
        );
        assert_eq!(
            t.surface_of(
                "http://h/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w"
            ),
            Surface::Arm
        );
        assert_eq!(t.surface_of("http://other/x"), Surface::Other);
        assert_eq!(t.surface_of("http://h/lro/put/200"), Surface::Other);
        let mut t2 = t.clone();
        t2.arm_paths = vec!["/lro".into()];
        assert_eq!(t2.surface_of("http://h/lro/put/200"), Surface::Arm);
        assert_eq!(t2.surface_of("http://h/LRO"), Surface::Arm);
        assert_eq!(t2.surface_of("http://h/lrox/put"), Surface::Other);
        t2.arm_paths = vec!["/".into()];
        assert_eq!(t2.surface_of("http://h/anything"), Surface::Arm);
        assert!(is_guid("00000000-0000-0000-0000-000000000001"));
        assert!(!is_guid("s"));
    }
}
