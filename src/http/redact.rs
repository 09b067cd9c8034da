//! Secret scrubbing at the HTTP boundary: nothing that leaves `http/` (exchanges, transcripts,
//! reports, console lines) carries a credential.
//!
//! Secrets are removed by header name (Authorization, Cookie, headers the target marks
//! secret), by value (every token and secret header value registered at run time, wherever
//! it appears: a hostile target may echo it in a body or another header), and by shape
//! (JWT-like strings).

use regex::Regex;
use std::sync::{OnceLock, RwLock};

pub const MASK: &str = "[REDACTED]";

#[derive(Debug, Default)]
pub struct Redactor {
    names: Vec<String>,
    values: RwLock<Vec<String>>,
}

fn jwt() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*").expect("valid regex")
    })
}

impl Redactor {
    pub fn new(secret_headers: &[String]) -> Self {
        let mut names: Vec<String> = [
            "authorization",
            "proxy-authorization",
            "cookie",
            "set-cookie",
            "x-ms-authorization-auxiliary",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(secret_headers.iter().map(|s| s.to_ascii_lowercase()));
        Redactor {
            names,
            values: RwLock::new(Vec::new()),
        }
    }

    /// Remember a secret value (a token); short values are ignored to avoid scrubbing noise.
    pub fn register(&self, value: &str) {
        let v = value.trim();
        if v.len() < 6 {
            return;
        }
        let mut vals = self.values.write().unwrap_or_else(|e| e.into_inner());
        let mut parts = vec![v];
        // A JWT's claims and signature segments are secret on their own too: a target may
        // echo one segment, which the JWT shape alone no longer matches.
        if jwt().is_match(v) {
            parts.extend(v.split('.').skip(1).filter(|p| p.len() >= 16));
        }
        for p in parts {
            if !vals.iter().any(|x| x == p) {
                vals.push(p.to_string());
            }
        }
        // Longest first, so a token is removed before any of its parts or prefixes.
        vals.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    pub fn is_secret_header(&self, name: &str) -> bool {
        let n = name.to_ascii_lowercase();
        self.names.contains(&n)
    }

    /// Scrub a free text (body, URL, header value).
    pub fn text(&self, s: &str) -> String {
        let mut out = s.to_string();
        for v in self.values.read().unwrap_or_else(|e| e.into_inner()).iter() {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), MASK);
            }
        }
        if jwt().is_match(&out) {
            out = jwt().replace_all(&out, MASK).into_owned();
        }
        out
    }

    /// Scrub one header: by name first, then by value.
    pub fn header(&self, name: &str, value: &str) -> String {
        if self.is_secret_header(name) {
            if let Some(rest) = value.strip_prefix("Bearer ") {
                let _ = rest;
                return format!("Bearer {MASK}");
            }
            return MASK.to_string();
        }
        self.text(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_by_name_value_and_shape() {
        let r = Redactor::new(&["x-api-key".into()]);
        r.register("s3cr3t-token-value");
        assert_eq!(
            r.header("Authorization", "Bearer s3cr3t-token-value"),
            "Bearer [REDACTED]"
        );
        assert_eq!(r.header("X-Api-Key", "abc"), MASK);
        assert_eq!(r.text("echo: s3cr3t-token-value!"), "echo: [REDACTED]!");
        let jwt = "eyJhbGciOi.eyJzdWIiOiIx.sig-part_1";
        assert_eq!(r.text(&format!("t={jwt}")), "t=[REDACTED]");
        assert_eq!(r.text("plain"), "plain");
    }

    #[test]
    fn a_jwt_segment_alone_is_scrubbed() {
        let r = Redactor::new(&[]);
        let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzZWdtZW50LXRlc3QifQ.c2lnbmF0dXJlLXNlZ21lbnQ";
        r.register(token);
        let (claims, sig) = ("eyJzdWIiOiJzZWdtZW50LXRlc3QifQ", "c2lnbmF0dXJlLXNlZ21lbnQ");
        assert_eq!(r.text(&format!("claims={claims}")), "claims=[REDACTED]");
        assert_eq!(r.text(&format!("sig {sig}.")), "sig [REDACTED].");
        assert_eq!(r.text(&format!("t={token}")), "t=[REDACTED]");
        // A short, common header segment is not a secret of its own.
        assert_eq!(r.text("eyJhbGciOiJSUzI1NiJ9"), "eyJhbGciOiJSUzI1NiJ9");
    }
}
