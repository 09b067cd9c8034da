//! URL path parsing: turns a request path into a [`Route`]. Fixed segments and namespaces
//! match case-insensitively (nested type segments exactly under `nested-case-sensitive`);
//! names are kept as the request spelled them (percent-decoded).

use super::{
    CollRef, GroupRef, Kind, OpEndpoint, OpRoute, OpShape, ResRef, Route, SINGLETON_NAME, Scope,
};
use crate::{FABRIKAM_NAMESPACE, NAMESPACE};

/// The top-level types that live in resource groups: each also lists at subscription scope.
const GROUP_TYPES: [Kind; 3] = [Kind::Widget, Kind::Link, Kind::Gizmo];

fn eq(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Decodes `%XX` escapes; `None` when the result is not UTF-8 or an escape is broken.
pub fn percent_decode(seg: &str) -> Option<String> {
    let bytes = seg.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = seg.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Parses a request path (no query). `strict_nested`: nested type segments must be spelled
/// exactly (the `nested-case-sensitive` fault). `None`: no such route.
pub fn parse(path: &str, strict_nested: bool) -> Option<Route> {
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    let rest = trimmed.strip_prefix('/')?;
    let segs: Vec<String> = rest
        .split('/')
        .map(percent_decode)
        .collect::<Option<Vec<_>>>()?;
    if segs.iter().any(|s| s.is_empty()) {
        return None;
    }
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let p = Parser { strict_nested };
    // `{request path}/operationresults/{id}`: a Location under the original request URL.
    if s.len() >= 4 && eq(s[s.len() - 2], "operationresults") {
        let origin = &s[..s.len() - 2];
        if let Some(Route::Resource(r) | Route::Restart(r)) = p.route(origin) {
            let (op, generation) = op_id(s[s.len() - 1]);
            return Some(Route::Operation(OpRoute {
                endpoint: OpEndpoint::Result,
                shape: OpShape::UnderRequest,
                op,
                generation,
                sub: r.sub().unwrap_or_default().to_string(),
                location: None,
                origin: Some(format!("/{}", origin.join("/"))),
            }));
        }
    }
    p.route(&s)
}

/// `{uuid}.{n}` → (uuid, n); anything else is an id with generation 0.
fn op_id(seg: &str) -> (String, u64) {
    match seg.split_once('.') {
        Some((id, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (id.to_string(), n.parse().unwrap_or(u64::MAX))
        }
        _ => (seg.to_string(), 0),
    }
}

struct Parser {
    strict_nested: bool,
}

impl Parser {
    fn route(&self, s: &[&str]) -> Option<Route> {
        match s {
            [p, ns, ops] if eq(p, "providers") && eq(ops, "operations") => {
                [NAMESPACE, FABRIKAM_NAMESPACE]
                    .into_iter()
                    .find(|n| eq(n, ns))
                    .map(Route::ProviderOperations)
            }
            [p, ns, rest @ ..] if eq(p, "providers") && eq(ns, NAMESPACE) => {
                self.top(Scope::Tenant, &[Kind::TenantWidget], rest)
            }
            [subs, sub, p, ns, rest @ ..] if eq(subs, "subscriptions") && eq(p, "providers") => {
                if let [seg] = rest
                    && let Some(kind) = GROUP_TYPES
                        .iter()
                        .copied()
                        .find(|k| eq(k.namespace(), ns) && eq(k.segment(), seg))
                {
                    return Some(Route::Across {
                        sub: sub.to_string(),
                        kind,
                    });
                }
                if !eq(ns, NAMESPACE) {
                    return None;
                }
                self.subscription(sub, rest)
            }
            [subs, sub] if eq(subs, "subscriptions") => Some(Route::Subscription(sub.to_string())),
            [subs, sub, rgs, rg, mv]
                if eq(subs, "subscriptions")
                    && eq(rgs, "resourceGroups")
                    && eq(mv, "moveResources") =>
            {
                Some(Route::Move(GroupRef {
                    sub: sub.to_string(),
                    rg: rg.to_string(),
                }))
            }
            [subs, sub, rgs, rg, rest @ ..]
                if eq(subs, "subscriptions") && eq(rgs, "resourceGroups") =>
            {
                let group = GroupRef {
                    sub: sub.to_string(),
                    rg: rg.to_string(),
                };
                match rest {
                    [] => Some(Route::Group(group)),
                    [p, ns, rest @ ..] if eq(p, "providers") && eq(ns, NAMESPACE) => {
                        self.top(Scope::Group(group), &[Kind::Widget, Kind::Link], rest)
                    }
                    [p, ns, rest @ ..] if eq(p, "providers") && eq(ns, FABRIKAM_NAMESPACE) => {
                        self.top(Scope::Group(group), &[Kind::Gizmo], rest)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The part after `/subscriptions/{sub}/providers/Microsoft.Contoso/`.
    fn subscription(&self, sub: &str, s: &[&str]) -> Option<Route> {
        match s {
            [locs, location, kind, rest @ ..] if eq(locs, "locations") => {
                if let [id] = rest
                    && let Some(shape) = op_shape(kind)
                {
                    let (op, generation) = op_id(id);
                    let endpoint = match shape {
                        OpShape::Results => OpEndpoint::Result,
                        _ => OpEndpoint::Status,
                    };
                    return Some(Route::Operation(OpRoute {
                        endpoint,
                        shape,
                        op,
                        generation,
                        sub: sub.to_string(),
                        location: Some(location.to_string()),
                        origin: None,
                    }));
                }
                let scope = Scope::Location {
                    sub: sub.to_string(),
                    location: location.to_string(),
                };
                self.top(scope, &[Kind::RegionalWidget], &s[2..])
            }
            _ => self.top(
                Scope::Subscription(sub.to_string()),
                &[Kind::SubscriptionWidget],
                s,
            ),
        }
    }

    /// `{type}[/{name}[/{child type}/…]]` of the top-level `kinds` of a scope.
    fn top(&self, scope: Scope, kinds: &[Kind], s: &[&str]) -> Option<Route> {
        let first = *s.first()?;
        let kind = kinds.iter().copied().find(|k| eq(k.segment(), first))?;
        let mut chain: Vec<(Kind, String)> = Vec::new();
        let mut kind = kind;
        let mut i = 0;
        loop {
            // s[i] is the collection segment of `kind`.
            let Some(name) = s.get(i + 1) else {
                let parent = (!chain.is_empty()).then(|| ResRef {
                    scope: scope.clone(),
                    chain: chain.clone(),
                });
                return Some(Route::Collection(CollRef {
                    scope,
                    parent,
                    kind,
                }));
            };
            chain.push((kind, name.to_string()));
            let res = ResRef {
                scope: scope.clone(),
                chain: chain.clone(),
            };
            let Some(next) = s.get(i + 2) else {
                return Some(Route::Resource(res));
            };
            let is_last = i + 3 == s.len();
            if is_last && eq(next, "skus") && matches!(kind, Kind::Widget | Kind::Gadget) {
                return Some(Route::Skus(res));
            }
            if is_last && eq(next, "restart") && kind == Kind::Widget {
                return Some(Route::Restart(res));
            }
            if kind == Kind::Widget && eq(next, "providers") && chain.len() == 1 {
                // An extension type on a widget: `{widget}/providers/Microsoft.Contoso/annotations`.
                let ns = s.get(i + 3)?;
                if !eq(ns, NAMESPACE) || !matches!(scope, Scope::Group(_)) {
                    return None;
                }
                return self.top(
                    Scope::Extension(Box::new(res)),
                    &[Kind::Annotation],
                    &s[i + 4..],
                );
            }
            let child = kind.children().iter().copied().find(|c| {
                if self.strict_nested {
                    c.segment() == *next
                } else {
                    eq(c.segment(), next)
                }
            })?;
            kind = child;
            i += 2;
        }
    }
}

fn op_shape(seg: &str) -> Option<OpShape> {
    [
        ("operationStatuses", OpShape::Statuses),
        ("asyncoperations", OpShape::AsyncOperations),
        ("operationResults", OpShape::Results),
        ("operations", OpShape::Operations),
    ]
    .into_iter()
    .find(|(name, _)| eq(name, seg))
    .map(|(_, shape)| shape)
}

/// Whether `name` is the singleton's name (matched case-insensitively).
pub fn is_singleton_name(name: &str) -> bool {
    eq(name, SINGLETON_NAME)
}

#[cfg(test)]
mod tests {
    use super::super::Fold;
    use super::*;

    const RG: &str = "/subscriptions/S1/resourceGroups/Rg1";

    fn p(path: &str) -> Option<Route> {
        parse(path, false)
    }

    #[test]
    fn groups_and_resources() {
        let Some(Route::Group(g)) = p(RG) else {
            panic!()
        };
        assert_eq!(g.key(), "/subscriptions/s1/resourcegroups/rg1");
        let path = format!("{RG}/providers/microsoft.contoso/WIDGETS/W1/gadgets/g1/sprockets/s1");
        let Some(Route::Resource(r)) = p(&path) else {
            panic!()
        };
        assert_eq!(r.kind(), Kind::Sprocket);
        assert_eq!(
            r.id(),
            "/subscriptions/S1/resourceGroups/Rg1/providers/Microsoft.Contoso/widgets/W1/gadgets/g1/sprockets/s1"
        );
        assert_eq!(r.type_name(), "Microsoft.Contoso/widgets/gadgets/sprockets");
        let fold = Fold::default();
        assert!(r.key(fold).ends_with("/widgets/w1/gadgets/g1/sprockets/s1"));
        let cs = Fold {
            names: true,
            nested: false,
        };
        assert!(r.key(cs).ends_with("/widgets/W1/gadgets/g1/sprockets/s1"));
        let nested = Fold {
            names: false,
            nested: true,
        };
        let path = format!("{RG}/providers/Microsoft.Contoso/widgets/W1/gadgets/G1");
        let Some(Route::Resource(g)) = p(&path) else {
            panic!()
        };
        assert!(g.key(nested).ends_with("/widgets/w1/gadgets/G1"));
        assert_eq!(r.parent().map(|p| p.kind()), Some(Kind::Gadget));
        assert_eq!(r.root().kind(), Kind::Widget);
    }

    #[test]
    fn collections_actions_skus() {
        let path = format!("{RG}/providers/Microsoft.Contoso/widgets");
        assert!(
            matches!(p(&path), Some(Route::Collection(c)) if c.kind == Kind::Widget && c.parent.is_none())
        );
        let path = format!("{RG}/providers/Microsoft.Contoso/widgets/w/gadgets/");
        assert!(matches!(p(&path), Some(Route::Collection(c)) if c.kind == Kind::Gadget));
        let path = format!("{RG}/providers/Microsoft.Contoso/widgets/w/Restart");
        assert!(matches!(p(&path), Some(Route::Restart(_))));
        let path = format!("{RG}/providers/Microsoft.Contoso/widgets/w/gadgets/g/skus");
        assert!(matches!(p(&path), Some(Route::Skus(r)) if r.kind() == Kind::Gadget));
        let path = format!("{RG}/providers/Microsoft.Contoso/links/l1");
        assert!(matches!(p(&path), Some(Route::Resource(r)) if r.kind() == Kind::Link));
    }

    #[test]
    fn new_shapes() {
        let path = format!("{RG}/providers/Microsoft.Contoso/widgets/w/Configurations/Default");
        let Some(Route::Resource(c)) = p(&path) else {
            panic!()
        };
        assert_eq!(c.type_name(), "Microsoft.Contoso/widgets/configurations");
        assert!(is_singleton_name(c.name()));
        let path = "/subscriptions/s/providers/Microsoft.Contoso/subscriptionWidgets/n";
        let Some(Route::Resource(r)) = p(path) else {
            panic!()
        };
        assert_eq!(
            (r.kind(), r.id().as_str(), r.sub()),
            (Kind::SubscriptionWidget, path, Some("s"))
        );
        assert!(r.group().is_none());
        let path =
            "/subscriptions/s/providers/microsoft.contoso/LOCATIONS/EastUS/regionalwidgets/n";
        let Some(Route::Resource(r)) = p(path) else {
            panic!()
        };
        assert_eq!(
            r.id(),
            "/subscriptions/s/providers/Microsoft.Contoso/locations/EastUS/regionalWidgets/n"
        );
        assert_eq!(r.type_name(), "Microsoft.Contoso/locations/regionalWidgets");
        assert_eq!(
            r.key(Fold::default()),
            "/subscriptions/s/providers/microsoft.contoso/locations/eastus/regionalwidgets/n"
        );
        let path = "/providers/Microsoft.Contoso/tenantWidgets";
        assert!(
            matches!(p(path), Some(Route::Collection(c)) if c.kind == Kind::TenantWidget && c.scope == Scope::Tenant)
        );
        let path = format!(
            "{RG}/providers/Microsoft.Contoso/widgets/W/providers/Microsoft.Contoso/annotations/a1"
        );
        let Some(Route::Resource(a)) = p(&path) else {
            panic!()
        };
        assert_eq!(a.id(), path);
        assert_eq!(a.type_name(), "Microsoft.Contoso/annotations");
        assert!(
            a.key(Fold::default())
                .ends_with("/widgets/w/providers/microsoft.contoso/annotations/a1")
        );
        assert_eq!(a.group().map(|g| g.rg.as_str()), Some("Rg1"));
        let path = format!("{RG}/providers/Microsoft.Fabrikam/gizmos/z");
        let Some(route) = p(&path) else { panic!() };
        assert_eq!(route.namespace(), Some(FABRIKAM_NAMESPACE));
        let Route::Resource(z) = route else { panic!() };
        assert_eq!(z.type_name(), "Microsoft.Fabrikam/gizmos");
    }

    #[test]
    fn operations() {
        let path =
            "/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/abc";
        assert!(matches!(
            p(path),
            Some(Route::Operation(OpRoute {
                endpoint: OpEndpoint::Status,
                shape: OpShape::Statuses,
                ..
            }))
        ));
        let path =
            "/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationresults/abc.3";
        let Some(Route::Operation(o)) = p(path) else {
            panic!()
        };
        assert_eq!(
            (o.endpoint, o.op.as_str(), o.generation),
            (OpEndpoint::Result, "abc", 3)
        );
        let path = "/subscriptions/s/providers/Microsoft.Contoso/locations/x/asyncOperations/a";
        assert!(
            matches!(p(path), Some(Route::Operation(o)) if o.shape == OpShape::AsyncOperations)
        );
        let path = "/subscriptions/s/providers/Microsoft.Contoso/locations/x/operations/a";
        assert!(matches!(p(path), Some(Route::Operation(o)) if o.shape == OpShape::Operations));
        let path = format!("{RG}/providers/Microsoft.Contoso/widgets/w/restart/operationresults/i");
        let Some(Route::Operation(o)) = p(&path) else {
            panic!()
        };
        assert_eq!(o.shape, OpShape::UnderRequest);
        assert_eq!(
            o.origin.as_deref(),
            Some(&path[..path.len() - "/operationresults/i".len()])
        );
        assert_eq!(o.sub, "S1");
    }

    #[test]
    fn strict_nested_segments() {
        let path = format!("{RG}/providers/Microsoft.Contoso/WIDGETS/w/GADGETS/g");
        assert!(parse(&path, false).is_some());
        assert!(parse(&path, true).is_none());
        let path = format!("{RG}/providers/Microsoft.Contoso/WIDGETS/w/gadgets/g");
        assert!(parse(&path, true).is_some());
    }

    #[test]
    fn lifecycle_move_operations_api_and_subscription_lists() {
        assert!(matches!(p("/subscriptions/S1"), Some(Route::Subscription(s)) if s == "S1"));
        assert!(
            matches!(p("/subscriptions/s/resourceGroups/rg/moveResources"), Some(Route::Move(g)) if g.rg == "rg")
        );
        assert!(matches!(
            p("/providers/microsoft.fabrikam/operations"),
            Some(Route::ProviderOperations(ns)) if ns == FABRIKAM_NAMESPACE
        ));
        assert!(matches!(
            p("/subscriptions/s/providers/Microsoft.Contoso/widgets"),
            Some(Route::Across {
                kind: Kind::Widget,
                ..
            })
        ));
        assert!(matches!(
            p("/subscriptions/s/providers/Microsoft.Fabrikam/gizmos"),
            Some(Route::Across {
                kind: Kind::Gizmo,
                ..
            })
        ));
    }

    #[test]
    fn unknown_paths() {
        for path in [
            "",
            "/",
            "/foo",
            "/subscriptions//resourceGroups/rg",
            "/subscriptions/s/resourceGroups/rg/providers/Other.Ns/widgets",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/things",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/links/l/gadgets",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w/restart/x",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w/gadgets/g/sprockets/s/x",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w/gadgets/g/sprockets/s/skus",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Fabrikam/widgets/w",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/gizmos/w",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w/providers/Other/annotations/a",
            "/subscriptions/s/providers/Microsoft.Fabrikam/subscriptionWidgets/a",
            "/subscriptions/s/providers/Microsoft.Contoso/locations/l/operationStatuses/a/b",
            "/providers/Microsoft.Contoso/widgets/w",
            "/subscriptions/s/resourceGroups/%ZZ",
        ] {
            assert_eq!(p(path), None, "{path}");
        }
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("a%2"), None);
        assert_eq!(percent_decode("%FF"), None);
    }
}
