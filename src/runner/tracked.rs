//! What the run tracks for cleanup: each resource it may have created ([`Tracked`]), filed under
//! its URL's [`key`] (shared by the cleanup list, the fixed-name registry and the journal).

use crate::http::Surface;

/// How a tracked resource is deleted and read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracked {
    /// Absolute URL without query, as first sent.
    pub url: String,
    /// The api-version its PUT was sent with (sent again on DELETE and GET).
    pub api_version: Option<String>,
    pub surface: Surface,
    /// The test that sent its first PUT.
    pub by: String,
    /// It may not exist (its PUT got no success answer, or a DELETE answered success): read it
    /// before deleting it.
    pub maybe_gone: bool,
    /// Why cleanup could not confirm it gone (set once cleanup tried and gave up).
    pub left: Option<String>,
    /// Cleanup waited its full budget on it: later passes only read it once more.
    pub waited: bool,
}

impl Tracked {
    /// Path depth, for children-first ordering.
    pub fn depth(&self) -> usize {
        self.url.matches('/').count()
    }
}

/// The key a URL is filed under: without its query or a trailing slash, in lowercase.
pub(crate) fn key(url: &str) -> String {
    url.split('?')
        .next()
        .unwrap_or(url)
        .trim_end_matches('/')
        .to_ascii_lowercase()
}
