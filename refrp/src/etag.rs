//! The ETag precondition tables of the ARM contract (PUT, PATCH, DELETE), as pure functions
//! over the parsed `If-Match` / `If-None-Match` headers and the resource's current ETag.

/// A parsed `If-Match` or `If-None-Match` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cond {
    /// Header absent or empty. (`""` is an entity-tag, RFC 7232, that matches nothing.)
    Absent,
    /// `*`.
    Any,
    /// One or more entity-tags, each kept quoted (`"…"` or `W/"…"`).
    Tags(Vec<String>),
}

impl Cond {
    /// Parses a header value; `None` (absent) and unreadable bytes are handled by the caller.
    pub fn parse(raw: Option<&str>) -> Cond {
        let Some(raw) = raw else { return Cond::Absent };
        let raw = raw.trim();
        if raw.is_empty() {
            return Cond::Absent;
        }
        if raw == "*" {
            return Cond::Any;
        }
        let tags = raw
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                // Be lenient with unquoted values: treat `abc` as `"abc"`.
                if t.ends_with('"') && (t.starts_with('"') || t.starts_with("W/\"")) {
                    t.to_string()
                } else {
                    format!("\"{t}\"")
                }
            })
            .collect::<Vec<_>>();
        if tags.is_empty() {
            Cond::Absent
        } else {
            Cond::Tags(tags)
        }
    }

    /// Strong comparison (RFC 7232): a weak tag never matches. With `weak`, the opaque tags
    /// are compared (`W/"a"` matches `"a"`), as ARM RPs with weak ETags do.
    fn matches(&self, current: &str, weak: bool) -> bool {
        let opaque = |t: &str| t.strip_prefix("W/").unwrap_or(t).to_string();
        match self {
            Cond::Absent => false,
            Cond::Any => true,
            Cond::Tags(tags) if weak => tags.iter().any(|t| opaque(t) == opaque(current)),
            Cond::Tags(tags) => tags.iter().any(|t| t == current),
        }
    }
}

/// What a precondition check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Go on with the request.
    Proceed,
    /// 412 Precondition Failed, change nothing.
    Failed,
    /// 404: PATCH of a missing resource.
    NotFound,
    /// 204: DELETE of a missing resource.
    NoContent,
}

/// The preconditions of one request and how tags are compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pre {
    pub if_match: Cond,
    pub if_none_match: Cond,
    /// Compare opaque tags (the `weak-etags` variant).
    pub weak: bool,
}

impl Pre {
    /// PUT: `current` is the ETag of the existing resource, `None` when it does not exist.
    pub fn put(&self, current: Option<&str>) -> Verdict {
        let by_match = match (current, &self.if_match) {
            (_, Cond::Absent) => Verdict::Proceed,
            (None, _) => Verdict::Failed,
            (Some(cur), c) if c.matches(cur, self.weak) => Verdict::Proceed,
            (Some(_), _) => Verdict::Failed,
        };
        if by_match != Verdict::Proceed {
            return by_match;
        }
        self.none_match(current)
    }

    /// PATCH: never creates; a missing resource is 404 whatever the headers say.
    pub fn patch(&self, current: Option<&str>) -> Verdict {
        let Some(cur) = current else {
            return Verdict::NotFound;
        };
        match &self.if_match {
            Cond::Absent | Cond::Any => {}
            c if c.matches(cur, self.weak) => {}
            _ => return Verdict::Failed,
        }
        self.none_match(current)
    }

    /// DELETE: a missing resource is 204 whatever `If-Match` says.
    pub fn delete(&self, current: Option<&str>) -> Verdict {
        let Some(cur) = current else {
            return Verdict::NoContent;
        };
        match &self.if_match {
            Cond::Absent | Cond::Any => Verdict::Proceed,
            c if c.matches(cur, self.weak) => Verdict::Proceed,
            _ => Verdict::Failed,
        }
    }

    fn none_match(&self, current: Option<&str>) -> Verdict {
        match (&self.if_none_match, current) {
            (Cond::Absent, _) | (_, None) => Verdict::Proceed,
            (c, Some(cur)) if c.matches(cur, self.weak) => Verdict::Failed,
            _ => Verdict::Proceed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    const CUR: &str = "\"abc\"";

    fn c(s: &str) -> Cond {
        Cond::parse(Some(s))
    }

    fn pre(im: &Cond, inm: &Cond) -> Pre {
        Pre {
            if_match: im.clone(),
            if_none_match: inm.clone(),
            weak: false,
        }
    }

    fn put(im: &Cond, inm: &Cond, cur: Option<&str>) -> Verdict {
        pre(im, inm).put(cur)
    }

    fn patch(im: &Cond, inm: &Cond, cur: Option<&str>) -> Verdict {
        pre(im, inm).patch(cur)
    }

    fn delete(im: &Cond, cur: Option<&str>) -> Verdict {
        pre(im, &Cond::Absent).delete(cur)
    }

    #[test]
    fn parsing() {
        assert_eq!(Cond::parse(None), Cond::Absent);
        assert_eq!(c(""), Cond::Absent);
        assert_eq!(c("\"\""), Cond::Tags(vec!["\"\"".into()]));
        assert_eq!(c(" * "), Cond::Any);
        assert_eq!(
            c("\"a\", W/\"b\""),
            Cond::Tags(vec!["\"a\"".into(), "W/\"b\"".into()])
        );
        assert_eq!(c("xyz"), Cond::Tags(vec!["\"xyz\"".into()]));
    }

    #[test]
    fn put_table() {
        let absent = Cond::Absent;
        // does not exist
        assert_eq!(put(&absent, &absent, None), Proceed);
        assert_eq!(put(&c(""), &absent, None), Proceed);
        assert_eq!(put(&c("\"\""), &absent, None), Failed);
        assert_eq!(put(&c("*"), &absent, None), Failed);
        assert_eq!(put(&c("\"xyz\""), &absent, None), Failed);
        assert_eq!(put(&absent, &c("*"), None), Proceed);
        // exists
        assert_eq!(put(&absent, &absent, Some(CUR)), Proceed);
        assert_eq!(put(&c("*"), &absent, Some(CUR)), Proceed);
        assert_eq!(put(&c(CUR), &absent, Some(CUR)), Proceed);
        assert_eq!(put(&c("\"xyz\""), &absent, Some(CUR)), Failed);
        assert_eq!(put(&c("\"\""), &absent, Some(CUR)), Failed);
        assert_eq!(put(&c(""), &absent, Some(CUR)), Proceed);
        assert_eq!(put(&c("W/\"abc\""), &absent, Some(CUR)), Failed);
        assert_eq!(put(&absent, &c("*"), Some(CUR)), Failed);
    }

    #[test]
    fn patch_table() {
        let absent = Cond::Absent;
        for h in ["", "\"\"", "*", "\"xyz\""] {
            assert_eq!(patch(&c(h), &absent, None), NotFound, "{h}");
        }
        assert_eq!(patch(&absent, &absent, Some(CUR)), Proceed);
        assert_eq!(patch(&c("*"), &absent, Some(CUR)), Proceed);
        assert_eq!(patch(&c(CUR), &absent, Some(CUR)), Proceed);
        assert_eq!(patch(&c("\"xyz\""), &absent, Some(CUR)), Failed);
        assert_eq!(patch(&c("\"\""), &absent, Some(CUR)), Failed);
        assert_eq!(patch(&c(""), &absent, Some(CUR)), Proceed);
    }

    #[test]
    fn delete_table() {
        for h in ["", "\"\"", "*", "\"xyz\""] {
            assert_eq!(delete(&c(h), None), NoContent, "{h}");
        }
        assert_eq!(delete(&Cond::Absent, Some(CUR)), Proceed);
        assert_eq!(delete(&c("*"), Some(CUR)), Proceed);
        assert_eq!(delete(&c(CUR), Some(CUR)), Proceed);
        assert_eq!(delete(&c("\"xyz\""), Some(CUR)), Failed);
        assert_eq!(delete(&c("\"\""), Some(CUR)), Failed);
        assert_eq!(delete(&c(""), Some(CUR)), Proceed);
    }

    #[test]
    fn weak_comparison_matches_opaque_tags() {
        let weak = |im: &str| Pre {
            if_match: c(im),
            if_none_match: Cond::Absent,
            weak: true,
        };
        let cur = "W/\"abc\"";
        assert_eq!(weak("W/\"abc\"").put(Some(cur)), Proceed);
        assert_eq!(weak("\"abc\"").patch(Some(cur)), Proceed);
        assert_eq!(weak("W/\"xyz\"").delete(Some(cur)), Failed);
        assert_eq!(put(&c("W/\"abc\""), &Cond::Absent, Some(cur)), Proceed);
        assert_eq!(put(&c("\"abc\""), &Cond::Absent, Some(cur)), Failed);
    }
}
