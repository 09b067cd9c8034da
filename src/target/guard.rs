//! What a run may send, whatever a suite says: the guard below the scenario language. A
//! request that changes a subscription, moves resources, or writes to a subscription or a
//! resource group other than the target's is sent only when the target declares the profile
//! that needs it (`subscription-lifecycle`, `resource-move`). RP teams point rpconform at ARM
//! with a real token and "Contributor on one disposable group": nothing else may be touched.
//!
//! The decision is taken on the URL as it will be sent (the URL standard's reading: dot
//! segments resolved, `%2e` included) and again on that path fully percent-decoded (`%2F` and
//! `%5C` as separators, dot segments resolved once more), letter case aside, after the base
//! URL's path prefix: a server that decodes more than the standard does reaches no more.
//! Reads (GET, HEAD) of another subscription change nothing and stay allowed: OPRES-11 reads
//! an operation URL under a subscription the run made up.

use super::{Extends, Profile, Scope, Target};

/// The facts of a target the guard decides by (taken once, when a connection is made).
#[derive(Debug, Clone)]
pub struct Guard {
    base_path: String,
    subscription: String,
    group: String,
    /// Groups a declared type extends by a fixed id (writes under them are the type's own).
    fixed_groups: Vec<String>,
    profiles: Vec<Profile>,
}

/// Why a request needs a profile.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reach {
    /// A subscription notification: a write to `/subscriptions/{id}` itself.
    ChangesSubscription,
    /// A write under a subscription other than the target's.
    OtherSubscription,
    /// `moveResources` / `validateMoveResources`.
    Moves,
    /// A write to (or under) a resource group other than the target's.
    OtherGroup,
}

impl Reach {
    fn profile(self) -> Profile {
        match self {
            Reach::ChangesSubscription | Reach::OtherSubscription => Profile::SubscriptionLifecycle,
            Reach::Moves | Reach::OtherGroup => Profile::ResourceMove,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Reach::ChangesSubscription => "changes a subscription (a lifecycle notification)",
            Reach::OtherSubscription => "writes to a subscription other than the target's",
            Reach::Moves => "moves resources",
            Reach::OtherGroup => "writes to a resource group other than the target's",
        }
    }
}

impl Guard {
    /// The guard of a target as it is now (its run's resource group named).
    pub fn of(target: &Target) -> Guard {
        let fixed_groups = target
            .types
            .iter()
            .filter_map(|t| match &t.scope {
                Scope::Extension(Extends::Id(id)) => group_of(id),
                _ => None,
            })
            .collect();
        Guard {
            base_path: target.base_path().to_string(),
            subscription: target.subscription.clone(),
            group: target.resource_group.name.clone(),
            fixed_groups,
            profiles: target.profiles.clone(),
        }
    }

    /// Does a declared type name this resource group by a fixed extension id?
    pub fn names_group(&self, group: &str) -> bool {
        self.fixed_groups
            .iter()
            .any(|g| g.eq_ignore_ascii_case(group))
    }

    /// `Some(why)` when `method url` must not be sent to this target.
    pub fn refusal(&self, method: &str, url: &url::Url) -> Option<String> {
        let reach = self.reach(method, url)?;
        let p = reach.profile();
        if self.profiles.contains(&p) {
            return None;
        }
        Some(format!(
            "not sent: {} {} {}; only a target that declares the `{}` profile sends such a request (`profiles:` in the target file)",
            method.to_ascii_uppercase(),
            crate::http::strip_userinfo(url.as_str()),
            reach.what(),
            p.name()
        ))
    }

    fn reach(&self, method: &str, url: &url::Url) -> Option<Reach> {
        let read = method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD");
        let raw = url.path().to_string();
        let decoded = resolve_dots(
            &percent_encoding::percent_decode_str(&raw)
                .decode_utf8_lossy()
                .replace('\\', "/"),
        );
        [raw, decoded]
            .iter()
            .filter_map(|p| self.reach_of_path(read, p))
            .next()
    }

    fn reach_of_path(&self, read: bool, path: &str) -> Option<Reach> {
        let rel = strip_prefix_ci(path, &self.base_path);
        let segs: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
        if segs.iter().any(|s| {
            s.eq_ignore_ascii_case("moveResources")
                || s.eq_ignore_ascii_case("validateMoveResources")
        }) && !read
        {
            return Some(Reach::Moves);
        }
        if read
            || !segs
                .first()
                .is_some_and(|s| s.eq_ignore_ascii_case("subscriptions"))
        {
            return None;
        }
        let sub = segs.get(1)?;
        if segs.len() == 2 {
            return Some(Reach::ChangesSubscription);
        }
        if !sub.eq_ignore_ascii_case(&self.subscription) {
            return Some(Reach::OtherSubscription);
        }
        let in_group = segs
            .get(2)
            .is_some_and(|s| s.eq_ignore_ascii_case("resourceGroups"));
        match segs.get(3) {
            Some(g) if in_group && !g.eq_ignore_ascii_case(&self.group) && !self.names_group(g) => {
                Some(Reach::OtherGroup)
            }
            _ => None,
        }
    }
}

/// The resource group a fixed extension id names (`/subscriptions/s/resourceGroups/g...`).
fn group_of(id: &str) -> Option<String> {
    let segs: Vec<&str> = id.split('/').filter(|s| !s.is_empty()).collect();
    (segs.len() >= 4 && segs[2].eq_ignore_ascii_case("resourceGroups")).then(|| segs[3].to_string())
}

/// `path` without `prefix` at a segment boundary (letter case aside); as it is otherwise.
fn strip_prefix_ci<'p>(path: &'p str, prefix: &str) -> &'p str {
    match path.get(..prefix.len()) {
        Some(head)
            if !prefix.is_empty()
                && head.eq_ignore_ascii_case(prefix)
                && matches!(path.as_bytes().get(prefix.len()), None | Some(b'/')) =>
        {
            &path[prefix.len()..]
        }
        _ => path,
    }
}

/// RFC 3986 §5.2.4 on a decoded path: `.` and `..` segments removed.
fn resolve_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "." | "" => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUB: &str = "00000000-0000-0000-0000-000000000001";

    fn guard(profiles: &[Profile], prefix: &str) -> Guard {
        Guard {
            base_path: prefix.into(),
            subscription: SUB.into(),
            group: "rg-run".into(),
            fixed_groups: vec!["shared-notes".into()],
            profiles: profiles.to_vec(),
        }
    }

    fn refused(g: &Guard, method: &str, url: &str) -> Option<String> {
        g.refusal(method, &url::Url::parse(url).unwrap())
    }

    #[test]
    fn arm_only_targets_send_only_their_own_footprint() {
        let g = guard(&[Profile::Arm], "");
        let h = "http://h";
        let own = format!("{h}/subscriptions/{SUB}/resourceGroups/rg-run/providers/N/w/a");
        for (m, u) in [
            ("PUT", own.as_str()),
            ("DELETE", own.as_str()),
            ("POST", &format!("{own}/restart")),
            ("GET", &format!("{h}/subscriptions/{SUB}")),
            (
                "GET",
                &format!(
                    "{h}/subscriptions/11111111-1111-1111-1111-111111111111/providers/N/locations/l/operationStatuses/x"
                ),
            ),
            (
                "PUT",
                &format!("{h}/subscriptions/{SUB}/resourceGroups/shared-notes/providers/N/notes/a"),
            ),
            ("PUT", &format!("{h}/providers/N/tenantWidgets/a")),
            (
                "PUT",
                &format!("{h}/subscriptions/{SUB}/providers/N/subWidgets/a"),
            ),
        ] {
            assert_eq!(refused(&g, m, u), None, "{m} {u}");
        }
        for (m, u, profile) in [
            (
                "PUT",
                format!("{h}/subscriptions/{SUB}?api-version=2.0"),
                "subscription-lifecycle",
            ),
            (
                "PUT",
                format!("{h}/subscriptions/22222222-2222-2222-2222-222222222222"),
                "subscription-lifecycle",
            ),
            (
                "PUT",
                format!("{h}/subscriptions/22222222-2222-2222-2222-222222222222/resourceGroups/g"),
                "subscription-lifecycle",
            ),
            (
                "POST",
                format!("{h}/subscriptions/{SUB}/resourceGroups/rg-run/moveResources"),
                "resource-move",
            ),
            (
                "POST",
                format!("{h}/subscriptions/{SUB}/resourceGroups/rg-run/validateMoveResources"),
                "resource-move",
            ),
            (
                "PUT",
                format!("{h}/subscriptions/{SUB}/resourceGroups/rg-other"),
                "resource-move",
            ),
            (
                "DELETE",
                format!("{h}/subscriptions/{SUB}/resourceGroups/rg-other/providers/N/w/a"),
                "resource-move",
            ),
        ] {
            let why = refused(&g, m, &u).unwrap_or_else(|| panic!("{m} {u} was allowed"));
            assert!(why.contains(&format!("`{profile}`")), "{why}");
            assert!(why.starts_with(&format!("not sent: {m} ")), "{why}");
        }
    }

    #[test]
    fn declared_profiles_allow_their_requests() {
        let g = guard(
            &[
                Profile::Arm,
                Profile::SubscriptionLifecycle,
                Profile::ResourceMove,
            ],
            "",
        );
        for (m, u) in [
            ("PUT", format!("http://h/subscriptions/{SUB}")),
            (
                "PUT",
                "http://h/subscriptions/22222222-2222-2222-2222-222222222222".to_string(),
            ),
            (
                "POST",
                format!("http://h/subscriptions/{SUB}/resourceGroups/rg-run/moveResources"),
            ),
            (
                "PUT",
                format!("http://h/subscriptions/{SUB}/resourceGroups/rg-run-moved-x"),
            ),
        ] {
            assert_eq!(refused(&g, m, &u), None, "{m} {u}");
        }
    }

    #[test]
    fn the_url_is_read_as_it_will_be_sent() {
        let g = guard(&[Profile::Arm], "/rp/v1");
        let base = format!("http://h/rp/v1/subscriptions/{SUB}/resourceGroups/rg-run");
        for u in [
            // dot segments, literal and encoded
            format!("{base}/../../../subscriptions/{SUB}"),
            format!("{base}/%2e%2e/%2E%2E/%2e%2e/subscriptions/{SUB}"),
            // encoded slashes a server may decode
            format!("{base}/..%2F..%2F..%2Fsubscriptions%2F{SUB}"),
            format!("{base}/..%5C..%5C..%5Csubscriptions%5C{SUB}"),
            // letter case and escaped letters
            format!("http://h/RP/V1/SUBSCRIPTIONS/{SUB}"),
            format!("http://h/rp/v1/%73ubscriptions/{SUB}"),
            format!("{base}/providers/N/w/a/%6DoveResources"),
            format!("{base}/providers/N/w/a/MOVERESOURCES"),
        ] {
            assert!(refused(&g, "POST", &u).is_some(), "{u} was allowed");
        }
        // The prefix is the base's: a path without it is read as it is.
        assert!(refused(&g, "PUT", &format!("http://h/subscriptions/{SUB}")).is_some());
        assert_eq!(refused(&g, "PUT", &format!("{base}/providers/N/w/a")), None);
    }
}
