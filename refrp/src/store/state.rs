//! [`Store::shown_state`]: the provisioningState a resource shows, derived from the running
//! operations on it, its ancestors, its descendants and (under a fault) its dependencies.

use serde_json::Value;

use super::relations::{are_siblings, is_ancestor};
use super::{OpKind, State, Store};
use crate::path::Kind;

impl Store {
    /// The provisioningState `key` shows now (call [`Store::advance`] first).
    pub fn shown_state(&self, key: &str) -> State {
        let mut best: Option<(u8, u64, State)> = None;
        for op in self.running_ops() {
            let Some(own) = op.kind.shown() else { continue };
            let candidate = if op.target == key {
                Some((3, own))
            } else if is_ancestor(&op.target, key) {
                if op.kind == OpKind::Delete {
                    Some((2, State::Deleting))
                } else if self.knobs.no_propagation {
                    None
                } else {
                    Some((2, own))
                }
            } else if (self.knobs.delete_keeps_ancestors
                && op.kind == OpKind::Delete
                && is_ancestor(key, &op.target))
                || self.untouched_grandparent(&op.target, op.kind).as_deref() == Some(key)
            {
                // Under a fault, an ancestor the operation leaves alone.
                None
            } else if self.knobs.dependant_follows
                && op.kind.updates()
                && self.depends_on(key, &op.target)
            {
                Some((1, State::Updating))
            } else if is_ancestor(key, &op.target)
                || (self.knobs.siblings && op.kind.updates() && are_siblings(key, &op.target))
            {
                // Ancestors of the target show Updating (and, under a fault, its siblings).
                Some((1, State::Updating))
            } else {
                None
            };
            if let Some((rank, state)) = candidate
                && best.is_none_or(|(r, s, _)| (rank, op.seq) > (r, s))
            {
                best = Some((rank, op.seq, state));
            }
        }
        match best {
            Some((_, _, state)) => state,
            None => self
                .resources
                .get(key)
                .map_or(State::Succeeded, |r| r.settled),
        }
    }

    /// Whether resource `key` is a link whose `widgetId` names the resource `target`.
    fn depends_on(&self, key: &str, target: &str) -> bool {
        self.resources.get(key).is_some_and(|r| {
            r.kind == Kind::Link
                && r.properties
                    .get("widgetId")
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.trim().trim_end_matches('/').eq_ignore_ascii_case(target))
        })
    }
}
