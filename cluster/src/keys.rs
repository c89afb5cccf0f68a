//! Redis keys: one hash per cluster point and second,
//! `{<prefix>:<point>}:<second>`, fields `v`, `d`, `e`, `t` (visits,
//! downgrades, exceptions, timeouts of every instance together), and the
//! same four per syncer, `v:<id>` ... (what that syncer pushed: each syncer
//! reads its own back, so it sees exactly what Redis lost of it). The hash
//! tag puts all of a point's seconds on one Redis Cluster node; every
//! command names a single key, so a batch never spans slots.

use sds_core::RING_SECONDS;

/// The hash fields, in the order of [`crate::pushed::Counts`].
pub(crate) const FIELDS: [&str; 4] = ["v", "d", "e", "t"];

/// The fields of one syncer, named by its random instance id.
pub(crate) fn own_fields(id: &str) -> [String; 4] {
    FIELDS.map(|f| format!("{f}:{id}"))
}

/// The key of `point`'s second `second`.
pub(crate) fn second_key(prefix: &str, point: &[u8], second: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + point.len() + 16);
    key.push(b'{');
    key.extend_from_slice(prefix.as_bytes());
    key.push(b':');
    key.extend_from_slice(point);
    key.extend_from_slice(b"}:");
    key.extend_from_slice(second.to_string().as_bytes());
    key
}

/// When the key of `second` expires (Unix ms): once the local rings of
/// every instance have moved past it, so that a delta held through an
/// outage still finds its key.
pub(crate) fn expires_at_ms(second: u64) -> u64 {
    (second + 1 + RING_SECONDS) * 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_the_points_hash_tag() {
        assert_eq!(
            second_key("sds", b"order.pay", 1_700_000_000),
            b"{sds:order.pay}:1700000000".to_vec()
        );
        assert_eq!(expires_at_ms(100), 131_000);
        assert_eq!(own_fields("ab12"), ["v:ab12", "d:ab12", "e:ab12", "t:ab12"]);
    }
}
