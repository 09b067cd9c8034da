//! Content fingerprints (FNV-1a, 64 bits): stable identities for what a report must name to be
//! reproduced — the rule catalogue, a target file — and for hash partitions. An identity, not
//! a security hash.

/// FNV-1a over `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Twelve hex digits, as the suite set's identity is shown.
pub fn short(bytes: &[u8]) -> String {
    format!("{:012x}", fnv1a(bytes) >> 16)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        assert_eq!(super::fnv1a(b""), 0xcbf29ce484222325);
        assert_eq!(super::fnv1a(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(super::short(b"a").len(), 12);
    }
}
