//! A map that remembers only its latest [`MAX_RECENT`] keys: what the engine keeps per
//! resource or per operation across a stream (a recording, a proxy session) would otherwise
//! grow with every resource or operation the stream ever named. A key forgotten is a state not
//! known, on which the rules give no verdict, never a wrong one.

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;

/// Keys remembered per map (each costs some hundreds of bytes).
pub const MAX_RECENT: usize = 5_000;

/// A `HashMap` forgetting its oldest keys past a bound (see the module docs).
#[derive(Debug, Clone)]
pub struct Recent<K, V> {
    map: HashMap<K, V>,
    /// Keys in the order they were first inserted (oldest forgotten first); keys removed
    /// since stay until the next compaction.
    order: VecDeque<K>,
    cap: usize,
}

impl<K, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent {
            map: HashMap::new(),
            order: VecDeque::new(),
            cap: MAX_RECENT,
        }
    }
}

impl<K: Hash + Eq + Clone, V> Recent<K, V> {
    /// A map remembering at most `cap` keys.
    #[cfg(test)]
    pub fn with_cap(cap: usize) -> Self {
        Recent {
            cap: cap.max(1),
            ..Default::default()
        }
    }

    pub fn get<Q: ?Sized + Hash + Eq>(&self, k: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.map.get(k)
    }

    pub fn get_mut<Q: ?Sized + Hash + Eq>(&mut self, k: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.map.get_mut(k)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }

    pub fn remove<Q: ?Sized + Hash + Eq>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.map.remove(k)
    }

    pub fn retain(&mut self, keep: impl FnMut(&K, &mut V) -> bool) {
        self.map.retain(keep);
    }

    /// Insert; the keys forgotten to make room (oldest first).
    pub fn insert(&mut self, k: K, v: V) -> Vec<K> {
        if !self.map.contains_key(&k) {
            self.order.push_back(k.clone());
        }
        self.map.insert(k, v);
        self.trim()
    }

    /// The value of `k`, inserted as the default when absent.
    pub fn or_default(&mut self, k: K) -> &mut V
    where
        V: Default,
    {
        if !self.map.contains_key(&k) {
            self.insert(k.clone(), V::default());
        }
        self.map.entry(k).or_default()
    }

    /// Take in another map's entries (its values win).
    pub fn extend(&mut self, other: Recent<K, V>) {
        let Recent { mut map, order, .. } = other;
        for k in order {
            if let Some(v) = map.remove(&k) {
                self.insert(k, v);
            }
        }
    }

    /// Forget the oldest keys past the bound, and now and then the keys removed since.
    fn trim(&mut self) -> Vec<K> {
        let mut gone = Vec::new();
        while self.map.len() > self.cap {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if self.map.remove(&old).is_some() {
                gone.push(old);
            }
        }
        if self.order.len() > 2 * self.cap {
            let mut seen = HashSet::new();
            let map = &self.map;
            self.order
                .retain(|k| map.contains_key(k) && seen.insert(k.clone()));
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_keys_go_first_and_the_order_stays_bounded() {
        let mut r: Recent<u32, u32> = Recent::with_cap(3);
        for k in 0..3 {
            assert!(r.insert(k, k).is_empty());
        }
        // Updating a key does not make it new.
        r.insert(0, 10);
        assert_eq!(r.insert(3, 3), vec![0]);
        assert_eq!(r.get(&0), None);
        assert_eq!(r.get(&1), Some(&1));
        // Keys inserted and removed over and over never grow the order past its bound.
        for k in 100..10_000 {
            r.insert(k, k);
            r.remove(&k);
        }
        assert!(r.order.len() <= 6, "{}", r.order.len());
        *r.or_default(7) += 5;
        assert_eq!(r.get(&7), Some(&5));
        assert!(r.len() <= 3);
    }
}
