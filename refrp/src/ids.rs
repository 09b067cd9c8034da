//! Fresh identifiers: request ids, operation ids and ETags.
//!
//! Randomness comes from std's `RandomState` (randomly keyed SipHash) over a process-wide
//! counter, so no extra dependency is needed and two values never repeat in practice.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn random_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

/// A random (version 4 layout) UUID in lowercase hyphenated form.
pub fn uuid() -> String {
    uuid_of(random_u64(), random_u64())
}

/// The same UUID-shaped id every time for one key (the `operation-id-reused` fault).
pub fn of_key(key: &str) -> String {
    let hash = |salt: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        h.write(key.as_bytes());
        h.write_u8(salt);
        h.finish()
    };
    uuid_of(hash(1), hash(2))
}

fn uuid_of(hi: u64, lo: u64) -> String {
    let hi = (hi & !0xF000) | 0x4000; // version 4
    let lo = (lo & !(0xC000 << 48)) | (0x8000 << 48); // RFC 4122 variant
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

/// A new strong, quoted entity-tag.
pub fn etag() -> String {
    // The counter part keeps ETags distinct even if two random values ever collided.
    format!(
        "\"{:x}-{:016x}\"",
        COUNTER.fetch_add(1, Ordering::Relaxed),
        random_u64()
    )
}

/// A new weak entity-tag (`W/"…"`).
pub fn weak_etag() -> String {
    format!("W/{}", etag())
}

/// An `x-ms-request-id` in the Event Hubs shape `{guid}_M5SN1_M5SN1` (still unique).
pub fn suffixed_request_id() -> String {
    format!("{}_M5SN1_M5SN1", uuid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_well_formed_and_distinct() {
        let a = uuid();
        let b = uuid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        assert_eq!(a.matches('-').count(), 4);
    }

    #[test]
    fn etags_are_quoted_and_distinct() {
        let a = etag();
        assert!(a.starts_with('"') && a.ends_with('"'));
        assert_ne!(a, etag());
        assert!(weak_etag().starts_with("W/\""));
        assert!(suffixed_request_id().ends_with("_M5SN1_M5SN1"));
    }
}
