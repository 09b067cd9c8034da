//! What an ARM URL addresses: a resource of a declared type, a collection, an action or
//! `/skus` under a resource, or something else. Matching is case-insensitive, as ARM's is.

use crate::target::{ResourceType, Target};

#[derive(Debug, Clone)]
pub enum PathKind<'t> {
    Resource(&'t ResourceType),
    Collection(&'t ResourceType),
    /// `{resource}/skus` or `{resource}/{action}`.
    SubResource(&'t ResourceType, String),
    Other,
}

/// Is this path on the ARM surface (`/subscriptions/...`)?
pub fn is_arm(path: &str) -> bool {
    path.to_ascii_lowercase().starts_with("/subscriptions/")
}

pub fn classify<'t>(path: &str, target: &'t Target) -> PathKind<'t> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let Some(pi) = segs
        .iter()
        .position(|s| s.eq_ignore_ascii_case("providers"))
    else {
        return PathKind::Other;
    };
    if pi < 4
        || !segs[0].eq_ignore_ascii_case("subscriptions")
        || !segs[2].eq_ignore_ascii_case("resourceGroups")
    {
        return PathKind::Other;
    }
    let Some(ns) = segs.get(pi + 1) else {
        return PathKind::Other;
    };
    if !ns.eq_ignore_ascii_case(&target.namespace) {
        return PathKind::Other;
    }
    let rest = &segs[pi + 2..];
    let mut parent: Option<&ResourceType> = None;
    let mut i = 0;
    while i < rest.len() {
        let seg = rest[i];
        let ty = target.types.iter().find(|t| {
            t.segment.eq_ignore_ascii_case(seg)
                && t.parent.as_deref() == parent.map(|p| p.name.as_str())
        });
        match (ty, rest.get(i + 1)) {
            (Some(t), None) => return PathKind::Collection(t),
            (Some(t), Some(_)) => {
                if i + 2 == rest.len() {
                    return PathKind::Resource(t);
                }
                parent = Some(t);
                i += 2;
            }
            (None, _) => {
                return match parent {
                    Some(p) if i + 1 == rest.len() => PathKind::SubResource(p, seg.to_string()),
                    _ => PathKind::Other,
                };
            }
        }
    }
    PathKind::Other
}

/// The ARM `type` a path implies: `Namespace/t1/t2`.
pub fn arm_type_of(path: &str) -> Option<String> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let pi = segs
        .iter()
        .position(|s| s.eq_ignore_ascii_case("providers"))?;
    let ns = segs.get(pi + 1)?;
    let types: Vec<&str> = segs[pi + 2..].iter().step_by(2).copied().collect();
    Some(format!("{ns}/{}", types.join("/")))
}
