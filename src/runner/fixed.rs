//! Fixed-name resources (singletons, names a type allows only one of): one lock per URL so two
//! tests never change the same resource at once, and the state each had before the run's first
//! write, so cleanup puts it back as it was instead of deleting it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::tracked::key;

/// A fixed-name resource as the run found it, to restore at the end.
#[derive(Debug, Clone)]
pub struct Original {
    pub url: String,
    pub body: serde_json::Value,
    /// The same values in the shape of the type's own PUT body, for a server that accepts
    /// only exact bodies (tried when `body` is refused).
    pub fallback: Option<serde_json::Value>,
    pub by: String,
}

#[derive(Default)]
pub struct FixedNames {
    /// Every URL the run ever sent a PUT for (deleted or not), by key.
    created: Mutex<HashSet<String>>,
    /// Fixed-name resources as they were before the run's first write.
    originals: Mutex<Vec<Original>>,
    /// Fixed-name URLs whose state before the run is known (read, or absent).
    known: Mutex<HashSet<String>>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

fn guard<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FixedNames {
    /// The run sent a PUT for this key.
    pub(super) fn note_created(&self, k: &str) {
        guard(&self.created).insert(k.to_string());
    }

    /// The lock of a fixed-name URL.
    pub fn lock_of(&self, url: &str) -> Arc<tokio::sync::Mutex<()>> {
        guard(&self.locks).entry(key(url)).or_default().clone()
    }

    /// True the first time a fixed-name URL is about to be written in this run (its state
    /// before the run is still to be read); false ever after.
    pub fn first_write(&self, url: &str) -> bool {
        guard(&self.known).insert(key(url))
    }

    /// The resource at `url` existed before the run with this body: restore it at the end.
    pub fn keep_original(
        &self,
        url: &str,
        body: serde_json::Value,
        fallback: Option<serde_json::Value>,
        by: &str,
    ) {
        guard(&self.originals).push(Original {
            url: url.split('?').next().unwrap_or(url).to_string(),
            body,
            fallback,
            by: by.to_string(),
        });
    }

    /// It existed before the run: restored at the end, never deleted.
    pub fn is_original(&self, url: &str) -> bool {
        let k = key(url);
        guard(&self.originals).iter().any(|o| key(&o.url) == k)
    }

    /// Originals to restore: those under no resource the run created (those go with it).
    pub fn originals(&self) -> Vec<Original> {
        let created = guard(&self.created).clone();
        guard(&self.originals)
            .iter()
            .filter(|o| {
                let k = key(&o.url);
                !created.iter().any(|c| k.starts_with(&format!("{c}/")))
            })
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_original_under_a_created_resource_goes_with_it() {
        let f = FixedNames::default();
        f.keep_original(
            "http://h/a/x/default?api-version=1",
            serde_json::json!({}),
            None,
            "t",
        );
        f.keep_original("http://h/b/default", serde_json::json!({}), None, "t");
        f.note_created("http://h/a/x");
        let left: Vec<String> = f.originals().into_iter().map(|o| o.url).collect();
        assert_eq!(left, vec!["http://h/b/default"]);
        assert!(f.is_original("http://h/A/X/default"));
        assert!(f.first_write("http://h/b/default"));
        assert!(!f.first_write("http://h/B/default/"));
    }
}
