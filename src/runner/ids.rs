//! Identifiers the runner makes: the run id, unique resource names, request ids. No external
//! randomness is needed: a time-seeded xorshift with a counter is unique enough per run.

use std::sync::atomic::{AtomicU64, Ordering};

static STATE: AtomicU64 = AtomicU64::new(0);

fn next() -> u64 {
    let mut cur = STATE.load(Ordering::Relaxed);
    loop {
        let s = if cur == 0 {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1);
            (t ^ (std::process::id() as u64).rotate_left(32)) | 1
        } else {
            cur
        };
        let mut x = s;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        match STATE.compare_exchange(cur, x, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return x.wrapping_mul(0x2545F4914F6CDD1D),
            Err(now) => cur = now,
        }
    }
}

/// A UUID-shaped random string (version 4 layout).
pub fn uuid() -> String {
    let a = next();
    let b = next();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        (a & 0xfff) as u16,
        8 + (b >> 62) as u8,
        ((b >> 48) & 0xfff) as u16,
        b & 0xffff_ffff_ffff
    )
}

/// A short lowercase run id (6 base-36 characters).
pub fn run_id() -> String {
    let mut n = next();
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
        assert_eq!(super::run_id().len(), 6);
        let mut v = vec![1, 2, 3, 4, 5];
        super::Seeded::new(7).shuffle(&mut v);
        let mut w = vec![1, 2, 3, 4, 5];
        super::Seeded::new(7).shuffle(&mut w);
        assert_eq!(v, w);
    }
}
