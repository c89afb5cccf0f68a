//! Threads deciding on one key count exactly; threads churning many keys
//! through a small table keep it consistent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use sds_core::keyed::{KeyBucket, KeyRule, KeyRuleKind, KeyTable};
use sds_core::Value;

mod common;
use common::Holders;

const THREADS: u64 = 4;

fn table(kind: KeyRuleKind, limit: i64, buckets: usize) -> KeyTable<Vec<KeyBucket>> {
    let rule = KeyRule::from_entries(
        kind,
        [
            ("limit", Value::from(limit)),
            ("periodMs", Value::from(60_000i64)),
        ],
    )
    .unwrap();
    KeyTable::new((0..buckets).map(|_| KeyBucket::new()).collect(), rule).unwrap()
}

/// `THREADS` threads each try `tries` calls of `cost` on one new key at
/// one time; returns the units admitted.
fn admitted_units(t: &KeyTable<Vec<KeyBucket>>, tries: u64, cost: u32) -> u64 {
    let admitted = AtomicU64::new(0);
    thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..tries {
                    if t.decide(b"shared", 1_000_000, cost).unwrap().admitted {
                        admitted.fetch_add(cost as u64, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    admitted.into_inner()
}

#[test]
fn threads_on_one_key_admit_exactly_the_limit() {
    for kind in [
        KeyRuleKind::Rate,
        KeyRuleKind::FixedWindow,
        KeyRuleKind::SlidingWindow,
    ] {
        let t = table(kind, 20_000, 64);
        assert_eq!(admitted_units(&t, 10_000, 1), 20_000, "{kind:?}");
        assert_eq!(t.stats().resident, 1, "one cell for the key: {kind:?}");
        let t = table(kind, 20_001, 64);
        assert_eq!(admitted_units(&t, 10_000, 3), 20_001, "{kind:?} costs of 3");
    }
}

#[test]
fn threads_churning_keys_through_a_small_table_stay_consistent() {
    let t = table(KeyRuleKind::Rate, 3, 4);
    let admitted = AtomicU64::new(0);
    thread::scope(|s| {
        for id in 0..THREADS {
            let (t, admitted) = (&t, &admitted);
            s.spawn(move || {
                for i in 0..20_000u64 {
                    let key = format!("k{}", (i * 7 + id) % 64);
                    if t.decide(key.as_bytes(), 5_000 + i / 100, 1)
                        .unwrap()
                        .admitted
                    {
                        admitted.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let s = t.stats();
    assert!(s.resident <= s.capacity, "{s:?}");
    let held = (0..64)
        .filter(|k| t.peek(format!("k{k}").as_bytes(), 5_200).remaining < 3)
        .count();
    assert!(
        held as u64 <= s.capacity,
        "at most one state per cell: {held}"
    );
    assert!(
        admitted.into_inner() >= 64 * 3,
        "each key admits its burst at least once"
    );
}

#[test]
fn in_flight_threads_never_hold_more_than_the_limit() {
    // Three threads on "shared", two units: the limit binds.
    let rule = KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(2i64))]);
    // Two buckets: the holders share them with a flood of other keys.
    let t = KeyTable::new(
        (0..2).map(|_| KeyBucket::new()).collect::<Vec<_>>(),
        rule.unwrap(),
    )
    .unwrap();
    let holders = Holders::default();
    thread::scope(|s| {
        for id in 0..THREADS {
            let (t, holders) = (&t, &holders);
            s.spawn(move || {
                for i in 0..20_000u64 {
                    if id == 0 {
                        // A flood of one-off keys: each takes and gives back.
                        let key = format!("flood-{i}");
                        if t.decide(key.as_bytes(), i, 1).is_ok_and(|d| d.admitted) {
                            t.release(key.as_bytes(), 1).unwrap();
                        }
                        continue;
                    }
                    if t.decide(b"shared", i, 1).is_ok_and(|d| d.admitted) {
                        holders.hold(|| {});
                        assert_eq!(t.release(b"shared", 1), Ok(true), "its unit is still held");
                    }
                }
            });
        }
    });
    assert!((1..=2).contains(&holders.most()), "never past the limit");
    assert_eq!(t.peek(b"shared", 0).remaining, 2, "every unit came back");
}

#[test]
fn threads_deciding_on_new_keys_at_once_count_every_call() {
    // 4 x the cells: no new key finds its 8 candidates all live, so the
    // only way to lose a count would be a race between first calls.
    const KEYS: u64 = 4_000;
    const CALLS: u64 = 20_000;
    let t = table(
        KeyRuleKind::FixedWindow,
        (1 << 24) - 1,
        (4 * KEYS / 4) as usize,
    );
    thread::scope(|s| {
        for id in 0..THREADS {
            let t = &t;
            s.spawn(move || {
                let mut x = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(id + 1);
                for _ in 0..CALLS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let key = (x % KEYS).to_le_bytes();
                    assert!(t.decide(&key, 1_000_000, 1).unwrap().admitted);
                }
            });
        }
    });
    let counted: u64 = (0..KEYS)
        .map(|k| t.count(&k.to_le_bytes(), 1_000_000).unwrap().count)
        .sum();
    assert_eq!(t.stats().lossy_evictions, 0);
    assert_eq!(counted, THREADS * CALLS);
}
