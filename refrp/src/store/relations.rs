//! How store keys relate: containment (deletion cascades), the nested parent/child relation
//! that propagation follows (extension resources are contained in the resource they extend
//! but are not its children), parents and siblings.

/// Collection segments of nested types (as they appear in keys).
const CHILD_SEGMENTS: &[&str] = &["gadgets", "sprockets", "configurations"];

/// `b` lies strictly under `a` (a nested child, an extension resource, or a resource in a
/// group): deleting `a` deletes `b`.
pub fn within(a: &str, b: &str) -> bool {
    b.len() > a.len() && b.starts_with(a) && b.as_bytes()[a.len()] == b'/'
}

/// `a` is a strict ancestor of `b` in the nested parent/child tree of propagation.
pub fn is_ancestor(a: &str, b: &str) -> bool {
    within(a, b) && !b[a.len()..].contains("/providers/")
}

/// The parent resource key of a nested resource.
pub fn parent_key(key: &str) -> Option<&str> {
    let (rest, _name) = key.rsplit_once('/')?;
    let (parent, segment) = rest.rsplit_once('/')?;
    CHILD_SEGMENTS.contains(&segment).then_some(parent)
}

/// Two different nested resources with the same parent and type.
pub fn are_siblings(a: &str, b: &str) -> bool {
    let segment = |k: &str| k.rsplit('/').nth(1).map(str::to_string);
    a != b && parent_key(a).is_some() && parent_key(a) == parent_key(b) && segment(a) == segment(b)
}

/// The key's type segment is `sprockets` (the third level).
pub fn is_sprocket(key: &str) -> bool {
    key.rsplit('/').nth(1) == Some("sprockets")
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: &str = "/subscriptions/s/resourcegroups/rg/providers/microsoft.contoso/widgets/w";

    #[test]
    fn key_relations() {
        assert!(is_ancestor(W, &format!("{W}/gadgets/g")));
        assert!(!is_ancestor(W, &format!("{W}x/gadgets/g")));
        assert!(!is_ancestor(W, W));
        let annotation = format!("{W}/providers/microsoft.contoso/annotations/a");
        assert!(within(W, &annotation) && !is_ancestor(W, &annotation));
        assert_eq!(parent_key(W), None);
        assert_eq!(parent_key(&annotation), None);
        assert_eq!(parent_key(&format!("{W}/gadgets/g")), Some(W));
        assert_eq!(parent_key(&format!("{W}/configurations/default")), Some(W));
        assert_eq!(
            parent_key(
                "/subscriptions/s/providers/microsoft.contoso/locations/l/regionalwidgets/n"
            ),
            None
        );
        assert!(are_siblings(
            &format!("{W}/gadgets/a"),
            &format!("{W}/gadgets/b")
        ));
        assert!(!are_siblings(
            &format!("{W}/gadgets/a"),
            &format!("{W}/configurations/default")
        ));
        assert!(is_sprocket(&format!("{W}/gadgets/g/sprockets/s")));
    }
}
