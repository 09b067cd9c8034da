//! The ETag precondition tables of the ARM contract (PUT, PATCH, DELETE), as pure functions
//! over the parsed `If-Match` / `If-None-Match` headers and the resource's current ETag.

/// A parsed `If-Match` or `If-None-Match` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cond {
    /// Header absent, empty, or `""`.
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
        if raw.is_empty() || raw == "\"\"" {
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

    /// Strong comparison (RFC 7232): a weak tag never matches.
    fn matches(&self, current: &str) -> bool {
        match self {
            Cond::Absent => false,
            Cond::Any => true,
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

/// PUT: `current` is the ETag of the existing resource, `None` when it does not exist.
pub fn put(if_match: &Cond, if_none_match: &Cond, current: Option<&str>) -> Verdict {
    let by_match = match (current, if_match) {
        (_, Cond::Absent) => Verdict::Proceed,
        (None, _) => Verdict::Failed,
        (Some(cur), c) if c.matches(cur) => Verdict::Proceed,
        (Some(_), _) => Verdict::Failed,
    };
    if by_match != Verdict::Proceed {
        return by_match;
    }
    none_match(if_none_match, current)
}

/// PATCH: never creates; a missing resource is 404 whatever the headers say.
pub fn patch(if_match: &Cond, if_none_match: &Cond, current: Option<&str>) -> Verdict {
    let Some(cur) = current else {
        return Verdict::NotFound;
    };
    match if_match {
        Cond::Absent | Cond::Any => {}
        c if c.matches(cur) => {}
        _ => return Verdict::Failed,
    }
    none_match(if_none_match, current)
}

/// DELETE: a missing resource is 204 whatever `If-Match` says.
pub fn delete(if_match: &Cond, current: Option<&str>) -> Verdict {
    let Some(cur) = current else {
        return Verdict::NoContent;
    };
    match if_match {
        Cond::Absent | Cond::Any => Verdict::Proceed,
        c if c.matches(cur) => Verdict::Proceed,
        _ => Verdict::Failed,
    }
}

fn none_match(if_none_match: &Cond, current: Option<&str>) -> Verdict {
    match (if_none_match, current) {
        (Cond::Absent, _) | (_, None) => Verdict::Proceed,
        (c, Some(cur)) if c.matches(cur) => Verdict::Failed,
        _ => Verdict::Proceed,
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

    #[test]
    fn parsing() {
        assert_eq!(Cond::parse(None), Cond::Absent);
        assert_eq!(c(""), Cond::Absent);
        assert_eq!(c("\"\""), Cond::Absent);
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
        assert_eq!(put(&c("\"\""), &absent, None), Proceed);
        assert_eq!(put(&c("*"), &absent, None), Failed);
        assert_eq!(put(&c("\"xyz\""), &absent, None), Failed);
        assert_eq!(put(&absent, &c("*"), None), Proceed);
        // exists
        assert_eq!(put(&absent, &absent, Some(CUR)), Proceed);
        assert_eq!(put(&c("*"), &absent, Some(CUR)), Proceed);
        assert_eq!(put(&c(CUR), &absent, Some(CUR)), Proceed);
        assert_eq!(put(&c("\"xyz\""), &absent, Some(CUR)), Failed);
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
    }
}
