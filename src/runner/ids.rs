//! Identifiers the runner makes: the run id, unique resource names, request ids, all from
//! random version-4 UUIDs; and a seeded generator for the shuffles a run must be able to
//! repeat.

/// A random UUID (version 4), lowercase and hyphenated: `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`.
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A short lowercase run id (6 base-36 characters).
pub fn run_id() -> String {
    let mut n = uuid::Uuid::new_v4().as_u128();
    let mut s = String::new();
    for _ in 0..6 {
        let d = (n % 36) as u32;
        s.push(char::from_digit(d, 36).unwrap_or('x'));
        n /= 36;
    }
    s
}

/// A tiny seeded generator for reproducible shuffles (resource-group sweeps).
pub struct Seeded(u64);

impl Seeded {
    pub fn new(seed: u64) -> Self {
        Seeded(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_unique_and_shaped() {
        let a = super::uuid();
        let b = super::uuid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        // Version 4, RFC 9562 variant, lowercase hex: what `x-ms-client-request-id` carries.
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"));
        assert!(
            a.chars()
                .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
        );
        let r = super::run_id();
        assert_eq!(r.len(), 6);
        assert!(
            r.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
        );
        assert_ne!(super::run_id(), super::run_id());
        let mut v = vec![1, 2, 3, 4, 5];
        super::Seeded::new(7).shuffle(&mut v);
        let mut w = vec![1, 2, 3, 4, 5];
        super::Seeded::new(7).shuffle(&mut w);
        assert_eq!(v, w);
    }
}
