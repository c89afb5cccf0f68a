//! Model-checked key table (run with `RUSTFLAGS="--cfg loom"
//! CARGO_TARGET_DIR=target/loom cargo test -p sds-core --release --test
//! keyed_loom`): every interleaving of a decision with the eviction of its
//! own key, of two first calls of one new key, and of two first
//! increments of one.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use sds_core::keyed::{KeyBucket, KeyRule, KeyRuleKind, KeyTable};
use sds_core::Value;

const T: u64 = 1_000_000;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// `buckets` of four cells, one unit per window of 1 s.
fn table(buckets: usize) -> Arc<KeyTable<Vec<KeyBucket>>> {
    let rule = KeyRule::from_entries(
        KeyRuleKind::FixedWindow,
        [
            ("limit", Value::from(1i64)),
            ("periodMs", Value::from(1000i64)),
        ],
    )
    .unwrap();
    Arc::new(KeyTable::new((0..buckets).map(|_| KeyBucket::new()).collect(), rule).unwrap())
}

#[test]
fn a_call_racing_the_eviction_of_its_key_is_kept_or_counted_lossy() {
    model(|| {
        let t = table(1);
        // "a" used a window ago (free now); three others owe their whole limit.
        t.decide(b"a", T - 1000, 1).unwrap();
        for key in [b"k1", b"k2", b"k3"] {
            t.decide(key, T, 1).unwrap();
        }
        let t1 = t.clone();
        let a = thread::spawn(move || t1.decide(b"a", T, 1).unwrap().admitted);
        let b = t.decide(b"b", T, 1).unwrap().admitted;
        let a = a.join().unwrap();
        assert!(a && b, "fresh keys are admitted");
        // Every admitted call is in its key's state, or that state's loss
        // was counted (the four cells are full: one of them had to go).
        let lost = ["a", "b", "k1", "k2", "k3"]
            .iter()
            .filter(|key| t.peek(key.as_bytes(), T).remaining > 0)
            .count();
        let stats = t.stats();
        assert!(
            lost >= 1 && stats.lossy_evictions >= lost as u64,
            "{lost}: {stats:?} {:?}",
            ["a", "b", "k1", "k2", "k3"].map(|key| t.peek(key.as_bytes(), T).remaining)
        );
    });
}

#[test]
fn two_first_calls_of_a_new_key_share_one_state() {
    model(|| {
        let t = table(2);
        let t1 = t.clone();
        let other = thread::spawn(move || t1.decide(b"new", T, 1).unwrap().admitted);
        let mine = t.decide(b"new", T, 1).unwrap().admitted;
        let other = other.join().unwrap();
        assert!(mine ^ other, "exactly the limit (1) admitted");
        assert_eq!(t.stats().resident, 1);
    });
}

#[test]
fn an_in_flight_unit_taken_during_an_eviction_is_never_evicted() {
    model(|| {
        let rule = KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(1i64))]);
        let t = Arc::new(KeyTable::new(vec![KeyBucket::new()], rule.unwrap()).unwrap());
        // "a" held a unit and gave it back (its cell is free); three keys hold theirs.
        t.decide(b"a", T, 1).unwrap();
        t.release(b"a", 1).unwrap();
        for key in [b"k1", b"k2", b"k3"] {
            t.decide(key, T, 1).unwrap();
        }
        let t1 = t.clone();
        let a = thread::spawn(move || t1.decide(b"a", T, 1).is_ok_and(|d| d.admitted));
        let b = t.decide(b"b", T, 1).is_ok_and(|d| d.admitted);
        let a = a.join().unwrap();
        assert!(a ^ b, "one free cell: exactly one of them holds a unit");
        for (key, admitted) in [("a", a), ("b", b)] {
            assert_eq!(
                t.release(key.as_bytes(), 1),
                Ok(admitted),
                "{key}'s unit is kept"
            );
        }
        assert_eq!(t.stats().lossy_evictions, 0);
    });
}

#[test]
fn two_first_in_flight_calls_of_a_new_key_share_one_limit() {
    model(|| {
        let rule = KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(1i64))]);
        let buckets: Vec<KeyBucket> = (0..2).map(|_| KeyBucket::new()).collect();
        let t = Arc::new(KeyTable::new(buckets, rule.unwrap()).unwrap());
        let t1 = t.clone();
        let other = thread::spawn(move || t1.decide(b"new", T, 1).unwrap().admitted);
        let mine = t.decide(b"new", T, 1).unwrap().admitted;
        let other = other.join().unwrap();
        assert!(mine ^ other, "one unit");
        assert_eq!(t.release(b"new", 1), Ok(true));
        assert_eq!(t.release(b"new", 1), Ok(false));
    });
}

#[test]
fn two_first_increments_of_a_new_key_both_count_in_one_window() {
    model(|| {
        let rule = KeyRule::from_entries(
            KeyRuleKind::FixedWindow,
            [
                ("limit", Value::from(1i64)),
                ("periodMs", Value::from(1000i64)),
                ("windowFromFirstHit", Value::from(1i64)),
            ],
        );
        let buckets: Vec<KeyBucket> = (0..2).map(|_| KeyBucket::new()).collect();
        let t = Arc::new(KeyTable::new(buckets, rule.unwrap()).unwrap());
        let t1 = t.clone();
        let other = thread::spawn(move || t1.increment(b"new", T, 1).unwrap().count);
        let mine = t.increment(b"new", T + 1, 1).unwrap().count;
        let other = other.join().unwrap();
        // Each saw its own hit and, in one order, the other's: 1 and 2.
        assert_eq!(mine + other, 3, "{mine} {other}");
        assert_eq!(t.count(b"new", T + 1).unwrap().count, 2);
        assert_eq!(t.stats().resident, 1);
    });
}
