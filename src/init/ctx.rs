//! What building the target document carries from type to type: the inputs, the TODOs
//! collected so far, the api-version written for each namespace, the guessed dependencies.

use std::collections::BTreeMap;

use super::model::Model;
use super::ops::Spec;
use super::spec::Store;

/// The subscription the document names until the user gives theirs.
pub(super) const PLACEHOLDER_SUBSCRIPTION: &str = "00000000-0000-0000-0000-000000000000";

/// Collects TODOs: each is written as a comment and listed in the output.
#[derive(Default)]
pub(crate) struct Todos(pub Vec<String>);

impl Todos {
    /// Record a TODO about `place`; returns the comment text.
    pub fn add(&mut self, place: &str, text: &str) -> String {
        let text = text.strip_prefix("TODO: ").unwrap_or(text);
        self.0.push(format!("{place}: {text}"));
        format!("TODO: {text}")
    }
}

pub(crate) struct Ctx<'a> {
    pub store: &'a Store,
    pub specs: &'a [Spec],
    pub model: &'a Model,
    pub todos: Todos,
    /// Namespace → api-version written for it.
    pub(super) versions: BTreeMap<String, String>,
    /// Type → the type its bodies reference (`depends_on`), guessed from example ids.
    pub depends: BTreeMap<usize, usize>,
}

impl Ctx<'_> {
    pub fn version_of(&self, ns: &str) -> Option<&String> {
        self.versions.get(ns)
    }

    pub fn todo(&mut self, place: &str, text: &str) -> String {
        self.todos.add(place, text)
    }
}

/// An ARM api-version: `YYYY-MM-DD`, optionally with a `-suffix` (`-preview`).
pub(crate) fn is_api_version(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
        && (b.len() == 10
            || (b[10] == b'-'
                && b.len() > 11
                && b[11..]
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b'.')))
}
