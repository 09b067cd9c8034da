//! ARM path templates → scope, namespace and the chain of resource types.
//!
//! `/subscriptions/{s}/resourceGroups/{rg}/providers/NS/t1/{n1}/t2/default` reads as scope
//! resource group, namespace `NS`, chain `t1/{n1}` → `t2/default` (a fixed name: a
//! singleton). The provider segment used is the last `providers/<literal>` of the path, so an
//! extension path (`/{resourceUri}/providers/NS/...`, or one under another provider's
//! resource) is read as the extension's own namespace with the prefix as its scope.

/// One path segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Lit(String),
    Param(String),
}

/// How an instance is named in the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Name {
    /// `{widgetName}`.
    Param(String),
    /// A fixed word: `default`.
    Fixed(String),
}

/// Where a top-level resource lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    ResourceGroup,
    Subscription,
    /// `/subscriptions/{s}/providers/NS/locations/{location}/...`.
    Location,
    Tenant,
    /// Under something else: `{resourceUri}`, `{scope}`, another provider's resource, a
    /// management group. The prefix segments say what.
    Extension(Vec<Seg>),
}

impl Scope {
    pub fn word(&self) -> &'static str {
        match self {
            Scope::ResourceGroup => "resource_group",
            Scope::Subscription => "subscription",
            Scope::Location => "location",
            Scope::Tenant => "tenant",
            Scope::Extension(_) => "extension",
        }
    }
}

/// A parsed ARM path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ArmPath {
    pub scope: Scope,
    pub namespace: String,
    /// (type segment, instance name) pairs after the namespace.
    pub chain: Vec<(String, Name)>,
    /// What follows the last complete pair (a collection segment, an action name).
    pub tail: Vec<Seg>,
    /// Something about the scope prefix the format cannot say (for a TODO).
    pub note: Option<String>,
}

pub(crate) fn segments(path: &str) -> Vec<Seg> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s.starts_with('{') && s.ends_with('}') && s.len() > 2 {
                Seg::Param(s[1..s.len() - 1].to_string())
            } else {
                Seg::Lit(s.to_string())
            }
        })
        .collect()
}

fn lit_is(seg: Option<&Seg>, word: &str) -> bool {
    matches!(seg, Some(Seg::Lit(s)) if s.eq_ignore_ascii_case(word))
}

/// Parse a path template (or a concrete resource id). `None` when it has no
/// `providers/<Namespace>` segment.
pub(crate) fn parse(path: &str) -> Option<ArmPath> {
    let segs = segments(path.split('?').next().unwrap_or(path));
    let at = (0..segs.len().saturating_sub(1))
        .rev()
        .find(|&i| lit_is(segs.get(i), "providers") && matches!(segs[i + 1], Seg::Lit(_)))?;
    let Seg::Lit(namespace) = &segs[at + 1] else {
        return None;
    };
    let prefix = &segs[..at];
    let mut rest = &segs[at + 2..];
    let mut note = None;
    let is_sub = prefix.len() == 2 && lit_is(prefix.first(), "subscriptions");
    let is_rg = prefix.len() == 4
        && lit_is(prefix.first(), "subscriptions")
        && lit_is(prefix.get(2), "resourceGroups");
    let mut scope = if prefix.is_empty() {
        Scope::Tenant
    } else if is_rg {
        Scope::ResourceGroup
    } else if is_sub {
        Scope::Subscription
    } else {
        Scope::Extension(prefix.to_vec())
    };
    if lit_is(rest.first(), "locations")
        && matches!(rest.get(1), Some(Seg::Param(_)))
        && rest.len() > 2
    {
        match scope {
            Scope::Subscription => {
                scope = Scope::Location;
                rest = &rest[2..];
            }
            _ => {
                note = Some(format!(
                    "the path has `locations/{{location}}` under scope {}; the target format has no such scope",
                    scope.word()
                ))
            }
        }
    }
    let mut chain = Vec::new();
    let mut i = 0;
    while i + 1 < rest.len() {
        match (&rest[i], &rest[i + 1]) {
            (Seg::Lit(t), Seg::Param(p)) => chain.push((t.clone(), Name::Param(p.clone()))),
            (Seg::Lit(t), Seg::Lit(n)) => chain.push((t.clone(), Name::Fixed(n.clone()))),
            _ => break,
        }
        i += 2;
    }
    Some(ArmPath {
        scope,
        namespace: namespace.clone(),
        chain,
        tail: rest[i..].to_vec(),
        note,
    })
}

impl ArmPath {
    /// Identity of the resource type at chain depth `depth` (1-based): scope shape,
    /// namespace and type segments with fixed names, case-insensitive; parameter names do not
    /// matter (`{name}` and `{widgetName}` are the same type).
    pub fn type_key(&self, depth: usize) -> String {
        let mut k = format!(
            "{}|{}",
            scope_key(&self.scope),
            self.namespace.to_ascii_lowercase()
        );
        for (t, n) in &self.chain[..depth] {
            k.push('|');
            k.push_str(&t.to_ascii_lowercase());
            if let Name::Fixed(f) = n {
                k.push('=');
                k.push_str(&f.to_ascii_lowercase());
            }
        }
        k
    }
}

fn scope_key(scope: &Scope) -> String {
    match scope {
        Scope::Extension(prefix) => prefix
            .iter()
            .map(|s| match s {
                Seg::Lit(l) => l.to_ascii_lowercase(),
                Seg::Param(_) => "{}".into(),
            })
            .collect::<Vec<_>>()
            .join("/"),
        other => other.word().into(),
    }
}

/// The resource types named by a concrete resource id (`/subscriptions/x/.../NS/a/n1/b/n2`):
/// namespace and type segments, for matching ids in example bodies to types.
pub(crate) fn id_types(id: &str) -> Option<(String, Vec<String>)> {
    if !id.starts_with('/') || id.contains('{') || id.contains(char::is_whitespace) {
        return None;
    }
    let p = parse(id)?;
    if p.chain.is_empty() || !p.tail.is_empty() {
        return None;
    }
    Some((p.namespace, p.chain.into_iter().map(|(t, _)| t).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> ArmPath {
        parse(s).unwrap()
    }

    #[test]
    fn scopes() {
        let a =
            p("/subscriptions/{subscriptionId}/resourceGroups/{rg}/providers/NS/t1/{n1}/t2/{n2}");
        assert_eq!(a.scope, Scope::ResourceGroup);
        assert_eq!(a.namespace, "NS");
        assert_eq!(a.chain.len(), 2);
        assert_eq!(a.chain[1], ("t2".into(), Name::Param("n2".into())));
        assert_eq!(
            p("/subscriptions/{s}/providers/NS/t/{n}").scope,
            Scope::Subscription
        );
        let l = p("/subscriptions/{s}/providers/NS/locations/{location}/t/{n}");
        assert_eq!(l.scope, Scope::Location);
        assert_eq!(l.chain, vec![("t".into(), Name::Param("n".into()))]);
        assert_eq!(p("/providers/NS/t/{n}").scope, Scope::Tenant);
        assert!(matches!(
            p("/{resourceUri}/providers/NS/t/{n}").scope,
            Scope::Extension(_)
        ));
        assert!(matches!(
            p("/{scope}/providers/NS/t/{n}").scope,
            Scope::Extension(_)
        ));
        let mg = p("/providers/Microsoft.Management/managementGroups/{mg}/providers/NS/t/{n}");
        assert_eq!(mg.namespace, "NS");
        assert!(matches!(mg.scope, Scope::Extension(ref v) if v.len() == 4));
    }

    #[test]
    fn singletons_actions_and_keys() {
        let s = p(
            "/subscriptions/{s}/resourceGroups/{rg}/providers/NS/servers/{n}/configurations/default",
        );
        assert_eq!(s.chain[1].1, Name::Fixed("default".into()));
        let a = p("/subscriptions/{s}/resourceGroups/{rg}/providers/NS/servers/{n}/restart");
        assert_eq!(a.chain.len(), 1);
        assert_eq!(a.tail, vec![Seg::Lit("restart".into())]);
        let b = p(
            "/subscriptions/{s}/resourceGroups/{resourceGroupName}/providers/ns/Servers/{serverName}",
        );
        assert_eq!(a.type_key(1), b.type_key(1));
        assert_ne!(
            s.type_key(2),
            p("/subscriptions/{s}/resourceGroups/{rg}/providers/NS/servers/{n}/configurations/{c}")
                .type_key(2)
        );
        assert!(parse("/subscriptions/{s}/resourceGroups/{rg}").is_none());
    }

    #[test]
    fn ids() {
        assert_eq!(
            id_types(
                "/subscriptions/0/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w1/gadgets/g"
            ),
            Some((
                "Microsoft.Contoso".into(),
                vec!["widgets".into(), "gadgets".into()]
            ))
        );
        assert_eq!(id_types("/subscriptions/0/resourceGroups/rg"), None);
        assert_eq!(id_types("not an id"), None);
    }
}
