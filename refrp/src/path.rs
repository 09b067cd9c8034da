//! URL path parsing: turns a request path into a [`Route`], matching fixed segments
//! case-insensitively, and derives resource ids, types and store keys from it.

use crate::NAMESPACE;

/// The resource types of the RP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Widget,
    Gadget,
    Sprocket,
    Link,
}

impl Kind {
    /// The collection segment (`widgets`, ...).
    pub fn segment(self) -> &'static str {
        match self {
            Kind::Widget => "widgets",
            Kind::Gadget => "gadgets",
            Kind::Sprocket => "sprockets",
            Kind::Link => "links",
        }
    }

    /// Tracked types have `location` and `tags`; the others are proxy types.
    pub fn tracked(self) -> bool {
        matches!(self, Kind::Widget | Kind::Link)
    }

    /// The child type nested under this one, if any.
    fn child(self) -> Option<Kind> {
        match self {
            Kind::Widget => Some(Kind::Gadget),
            Kind::Gadget => Some(Kind::Sprocket),
            Kind::Sprocket | Kind::Link => None,
        }
    }

    fn top_level(seg: &str) -> Option<Kind> {
        [Kind::Widget, Kind::Link]
            .into_iter()
            .find(|k| k.segment().eq_ignore_ascii_case(seg))
    }
}

/// `/subscriptions/{sub}/resourceGroups/{rg}` as the request spelled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRef {
    pub sub: String,
    pub rg: String,
}

impl GroupRef {
    pub fn id(&self) -> String {
        format!("/subscriptions/{}/resourceGroups/{}", self.sub, self.rg)
    }

    /// Store key: ARM matches subscription and group names case-insensitively.
    pub fn key(&self) -> String {
        self.id().to_ascii_lowercase()
    }
}

/// One resource: its group and the chain of (type, name) from the top-level resource down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResRef {
    pub group: GroupRef,
    pub chain: Vec<(Kind, String)>,
}

impl ResRef {
    pub fn kind(&self) -> Kind {
        self.chain.last().map_or(Kind::Widget, |c| c.0)
    }

    pub fn name(&self) -> &str {
        self.chain.last().map_or("", |c| c.1.as_str())
    }

    /// The resource id with canonical fixed segments and names as the request spelled them.
    pub fn id(&self) -> String {
        let mut s = format!("{}/providers/{NAMESPACE}", self.group.id());
        for (k, n) in &self.chain {
            s.push('/');
            s.push_str(k.segment());
            s.push('/');
            s.push_str(n);
        }
        s
    }

    /// `Microsoft.Contoso/widgets/gadgets`.
    pub fn type_name(&self) -> String {
        let mut s = NAMESPACE.to_string();
        for (k, _) in &self.chain {
            s.push('/');
            s.push_str(k.segment());
        }
        s
    }

    /// Store key. Names are folded to lowercase unless `case_sensitive` (a fault knob).
    pub fn key(&self, case_sensitive: bool) -> String {
        let mut s = format!(
            "{}/providers/{}",
            self.group.key(),
            NAMESPACE.to_ascii_lowercase()
        );
        for (k, n) in &self.chain {
            s.push('/');
            s.push_str(k.segment());
            s.push('/');
            if case_sensitive {
                s.push_str(n);
            } else {
                s.push_str(&n.to_ascii_lowercase());
            }
        }
        s
    }

    /// The parent resource, for nested types.
    pub fn parent(&self) -> Option<ResRef> {
        (self.chain.len() > 1).then(|| ResRef {
            group: self.group.clone(),
            chain: self.chain[..self.chain.len() - 1].to_vec(),
        })
    }
}

/// A collection: its parent (a resource, or the group itself) and the item type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollRef {
    pub group: GroupRef,
    pub parent: Option<ResRef>,
    pub kind: Kind,
}

impl CollRef {
    /// The key prefix shared by every item: `{parent key or group provider key}/{segment}/`.
    pub fn key_prefix(&self, case_sensitive: bool) -> String {
        let base = match &self.parent {
            Some(p) => p.key(case_sensitive),
            None => format!(
                "{}/providers/{}",
                self.group.key(),
                NAMESPACE.to_ascii_lowercase()
            ),
        };
        format!("{base}/{}/", self.kind.segment())
    }
}

/// Which operation endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpEndpoint {
    Status,
    Result,
}

/// Everything the RP serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Group(GroupRef),
    Resource(ResRef),
    Collection(CollRef),
    /// `POST {widget}/restart`.
    Restart(ResRef),
    Skus(ResRef),
    Operation {
        endpoint: OpEndpoint,
        sub: String,
        location: String,
        op: String,
    },
}

impl Route {
    /// The methods the route answers, for 405 and `Allow`.
    pub fn allowed(&self) -> &'static str {
        match self {
            Route::Group(_) => "GET, HEAD, PUT, DELETE",
            Route::Resource(_) => "GET, HEAD, PUT, PATCH, DELETE",
            Route::Restart(_) => "POST",
            Route::Collection(_) | Route::Skus(_) | Route::Operation { .. } => "GET, HEAD",
        }
    }
}

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

/// Parses a request path (no query). `None`: no such route.
pub fn parse(path: &str) -> Option<Route> {
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
    if s.len() < 4 || !eq(s[0], "subscriptions") {
        return None;
    }
    let sub = s[1].to_string();
    if eq(s[2], "providers") {
        // /subscriptions/{sub}/providers/{ns}/locations/{loc}/operation{Statuses,Results}/{op}
        if s.len() != 8 || !eq(s[3], NAMESPACE) || !eq(s[4], "locations") {
            return None;
        }
        let endpoint = if eq(s[6], "operationStatuses") {
            OpEndpoint::Status
        } else if eq(s[6], "operationResults") {
            OpEndpoint::Result
        } else {
            return None;
        };
        return Some(Route::Operation {
            endpoint,
            sub,
            location: s[5].to_string(),
            op: s[7].to_string(),
        });
    }
    if !eq(s[2], "resourceGroups") {
        return None;
    }
    let group = GroupRef {
        sub,
        rg: s[3].to_string(),
    };
    if s.len() == 4 {
        return Some(Route::Group(group));
    }
    if s.len() < 7 || !eq(s[4], "providers") || !eq(s[5], NAMESPACE) {
        return None;
    }
    parse_provider(group, &s[6..])
}

/// Parses the part after `/providers/Microsoft.Contoso/`.
fn parse_provider(group: GroupRef, s: &[&str]) -> Option<Route> {
    let top = Kind::top_level(s[0])?;
    let mut chain: Vec<(Kind, String)> = Vec::new();
    let mut kind = top;
    let mut i = 0;
    loop {
        // s[i] is the collection segment of `kind`.
        match s.get(i + 1) {
            None => {
                let parent = (!chain.is_empty()).then(|| ResRef {
                    group: group.clone(),
                    chain: chain.clone(),
                });
                return Some(Route::Collection(CollRef {
                    group,
                    parent,
                    kind,
                }));
            }
            Some(name) => chain.push((kind, name.to_string())),
        }
        let res = ResRef {
            group: group.clone(),
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
        let child = kind.child()?;
        if !eq(next, child.segment()) {
            return None;
        }
        kind = child;
        i += 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RG: &str = "/subscriptions/S1/resourceGroups/Rg1";

    #[test]
    fn groups_and_resources() {
        let Some(Route::Group(g)) = parse(RG) else {
            panic!()
        };
        assert_eq!(g.key(), "/subscriptions/s1/resourcegroups/rg1");
        let p = format!("{RG}/providers/microsoft.contoso/WIDGETS/W1/gadgets/g1/sprockets/s1");
        let Some(Route::Resource(r)) = parse(&p) else {
            panic!()
        };
        assert_eq!(r.kind(), Kind::Sprocket);
        assert_eq!(
            r.id(),
            "/subscriptions/S1/resourceGroups/Rg1/providers/Microsoft.Contoso/widgets/W1/gadgets/g1/sprockets/s1"
        );
        assert_eq!(r.type_name(), "Microsoft.Contoso/widgets/gadgets/sprockets");
        assert!(
            r.key(false)
                .ends_with("/widgets/w1/gadgets/g1/sprockets/s1")
        );
        assert!(r.key(true).ends_with("/widgets/W1/gadgets/g1/sprockets/s1"));
        assert_eq!(r.parent().map(|p| p.kind()), Some(Kind::Gadget));
    }

    #[test]
    fn collections_actions_skus() {
        let p = format!("{RG}/providers/Microsoft.Contoso/widgets");
        assert!(
            matches!(parse(&p), Some(Route::Collection(c)) if c.kind == Kind::Widget && c.parent.is_none())
        );
        let p = format!("{RG}/providers/Microsoft.Contoso/widgets/w/gadgets/");
        assert!(matches!(parse(&p), Some(Route::Collection(c)) if c.kind == Kind::Gadget));
        let p = format!("{RG}/providers/Microsoft.Contoso/widgets/w/Restart");
        assert!(matches!(parse(&p), Some(Route::Restart(_))));
        let p = format!("{RG}/providers/Microsoft.Contoso/widgets/w/gadgets/g/skus");
        assert!(matches!(parse(&p), Some(Route::Skus(r)) if r.kind() == Kind::Gadget));
        let p = format!("{RG}/providers/Microsoft.Contoso/links/l1");
        assert!(matches!(parse(&p), Some(Route::Resource(r)) if r.kind() == Kind::Link));
    }

    #[test]
    fn operations() {
        let p =
            "/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationStatuses/abc";
        assert!(matches!(
            parse(p),
            Some(Route::Operation {
                endpoint: OpEndpoint::Status,
                ..
            })
        ));
        let p =
            "/subscriptions/s/providers/Microsoft.Contoso/locations/eastus/operationresults/abc";
        assert!(matches!(
            parse(p),
            Some(Route::Operation {
                endpoint: OpEndpoint::Result,
                ..
            })
        ));
    }

    #[test]
    fn unknown_paths() {
        for p in [
            "",
            "/",
            "/foo",
            "/subscriptions/s",
            "/subscriptions//resourceGroups/rg",
            "/subscriptions/s/resourceGroups/rg/providers/Other.Ns/widgets",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/things",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/links/l/gadgets",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w/restart/x",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w/gadgets/g/sprockets/s/x",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Contoso/widgets/w/gadgets/g/sprockets/s/skus",
            "/subscriptions/s/resourceGroups/%ZZ",
        ] {
            assert_eq!(parse(p), None, "{p}");
        }
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("a%2"), None);
        assert_eq!(percent_decode("%FF"), None);
    }
}
