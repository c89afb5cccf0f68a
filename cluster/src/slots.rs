//! [`SlotMap`]: which master of a Redis Cluster serves which hash slot, as
//! `CLUSTER SLOTS` lists it, and [`slot_of`] a key. The syncer uses it only
//! to put the points of one master into one pipeline (`Link::run_each`);
//! the `redis` crate still routes every command by its own map and follows
//! redirections (a stale map: see `link::SLOT_MAP_MAX_AGE`).

use redis::Value;

/// The hash slots of a Redis Cluster.
const SLOTS: u16 = 16384;

/// The hash slot of `key`: CRC16 (XMODEM) of its hash tag (the bytes
/// between the first `{` and the next `}`, when there are some), else of
/// the whole key, modulo 16384.
pub(crate) fn slot_of(key: &[u8]) -> u16 {
    let tag = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        let close = rest.iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &rest[..close])
    });
    crc16(tag.unwrap_or(key)) % SLOTS
}

fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// A master of the map: its index in [`SlotMap::masters`].
pub(crate) type Master = usize;

/// Slot ranges and the master serving each.
#[derive(Debug, Default)]
pub(crate) struct SlotMap {
    /// (first slot, last slot, master), sorted by first slot.
    ranges: Vec<(u16, u16, Master)>,
    /// Per master, its node id (the identity) and `host:port` (for messages).
    masters: Vec<(String, String)>,
}

impl SlotMap {
    /// Reads a `CLUSTER SLOTS` reply: per range `[first, last, [host, port,
    /// id, ...], replicas...]`. `None` when it holds no range.
    pub(crate) fn from_cluster_slots(reply: &Value) -> Option<SlotMap> {
        let Value::Array(items) = reply else {
            return None;
        };
        let mut map = SlotMap::default();
        for item in items {
            let Value::Array(fields) = item else { continue };
            let slot = |i: usize| {
                fields
                    .get(i)
                    .and_then(int)
                    .and_then(|n| u16::try_from(n).ok())
            };
            let (Some(first), Some(last), Some(Value::Array(node))) =
                (slot(0), slot(1), fields.get(2))
            else {
                continue;
            };
            let host = node.first().and_then(text).unwrap_or_default();
            let port = node.get(1).and_then(int).unwrap_or(0);
            let addr = format!("{host}:{port}");
            // Without an id (Redis < 4), the address is the identity.
            let id = node.get(2).and_then(text).unwrap_or_else(|| addr.clone());
            let master = match map.masters.iter().position(|(known, _)| *known == id) {
                Some(m) => m,
                None => {
                    map.masters.push((id, addr));
                    map.masters.len() - 1
                }
            };
            map.ranges.push((first, last, master));
        }
        map.ranges.sort_unstable();
        (!map.ranges.is_empty()).then_some(map)
    }

    /// The master serving `slot`, if the map covers it.
    pub(crate) fn master(&self, slot: u16) -> Option<Master> {
        let after = self.ranges.partition_point(|&(first, _, _)| first <= slot);
        let &(_, last, master) = self.ranges.get(after.checked_sub(1)?)?;
        (slot <= last).then_some(master)
    }

    /// `host:port` of `master`, as the cluster announces it.
    pub(crate) fn addr(&self, master: Master) -> &str {
        self.masters.get(master).map_or("?", |(_, addr)| addr)
    }
}

fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::cluster_routing::Slot;

    #[test]
    fn slots_are_the_redis_crates() {
        let keys: &[&[u8]] = &[
            b"{sds:p0}:0",
            b"{sds:checkout}:1700000000",
            b"{sds:a}b}:5",
            b"{}:7",
            b"no tag",
            b"{open only",
            b"x{sds:\xff\x00}y{z}",
            b"",
        ];
        for key in keys {
            assert_eq!(
                Slot::new(slot_of(key)),
                Some(Slot::for_key(key)),
                "{}",
                String::from_utf8_lossy(key)
            );
        }
        // Known values (`CLUSTER KEYSLOT`).
        assert_eq!(slot_of(b"foo"), 12182);
        assert_eq!(slot_of(b"{user1000}.following"), slot_of(b"user1000"));
    }

    fn node(host: &str, port: i64, id: &str) -> Value {
        Value::Array(vec![
            Value::BulkString(host.into()),
            Value::Int(port),
            Value::BulkString(id.into()),
        ])
    }

    fn range(first: i64, last: i64, master: Value, replicas: Vec<Value>) -> Value {
        let mut fields = vec![Value::Int(first), Value::Int(last), master];
        fields.extend(replicas);
        Value::Array(fields)
    }

    #[test]
    fn a_cluster_slots_reply_maps_each_slot_to_its_master() {
        let reply = Value::Array(vec![
            range(10923, 16383, node("10.0.0.3", 7002, "c"), vec![]),
            range(
                0,
                5460,
                node("10.0.0.1", 7000, "a"),
                vec![node("10.0.0.4", 7003, "d")],
            ),
            range(5461, 10921, node("10.0.0.2", 7001, "b"), vec![]),
            // A master with two ranges: the same master.
            range(10922, 10922, node("10.0.0.1", 7000, "a"), vec![]),
        ]);
        let map = SlotMap::from_cluster_slots(&reply).unwrap();
        let addr = |slot| map.master(slot).map(|m| map.addr(m));
        assert_eq!(addr(0), Some("10.0.0.1:7000"));
        assert_eq!(addr(5460), Some("10.0.0.1:7000"));
        assert_eq!(addr(5461), Some("10.0.0.2:7001"));
        assert_eq!(addr(10922), Some("10.0.0.1:7000"));
        assert_eq!(addr(16383), Some("10.0.0.3:7002"));
        assert_eq!(map.master(0), map.master(10922));
        assert_eq!(map.masters.len(), 3);
    }

    #[test]
    fn slots_without_a_master_and_empty_replies_map_to_none() {
        let reply = Value::Array(vec![range(100, 200, node("h", 1, "a"), vec![])]);
        let map = SlotMap::from_cluster_slots(&reply).unwrap();
        assert_eq!(map.master(99), None);
        assert_eq!(map.master(100), Some(0));
        assert_eq!(map.master(200), Some(0));
        assert_eq!(map.master(201), None);
        assert!(SlotMap::from_cluster_slots(&Value::Array(vec![])).is_none());
        assert!(SlotMap::from_cluster_slots(&Value::Nil).is_none());
    }
}
