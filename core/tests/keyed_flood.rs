//! A flood of new keys through a small key table does not reset a key that
//! is over its limit: eviction gives up the least indebted state first.

use sds_core::keyed::{KeyBucket, KeyRule, KeyRuleKind, KeyTable};
use sds_core::Value;

/// 5 per minute, with the fixed window's `flags` set.
fn table(kind: KeyRuleKind, buckets: usize, flags: &[&str]) -> KeyTable<Vec<KeyBucket>> {
    let entries = [("limit", 5i64), ("periodMs", 60_000)]
        .into_iter()
        .chain(flags.iter().map(|&flag| (flag, 1)))
        .map(|(name, v)| (name, Value::from(v)));
    let rule = KeyRule::from_entries(kind, entries).unwrap();
    KeyTable::new((0..buckets).map(|_| KeyBucket::new()).collect(), rule).unwrap()
}

/// Puts "abuser" over its limit, floods `n` distinct keys over `span_ms`
/// (each admitted once), and returns whether "abuser" is still refused.
fn abuser_survives(kind: KeyRuleKind, flags: &[&str], n: u64, span_ms: u64) -> bool {
    let t = table(kind, 256, flags);
    let start = 1_700_000_000_000;
    for _ in 0..5 {
        assert!(t.decide(b"abuser", start, 1).unwrap().admitted);
    }
    assert!(!t.decide(b"abuser", start, 1).unwrap().admitted);
    for i in 0..n {
        let now = start + i * span_ms / n;
        let d = t.decide(format!("flood-{i}").as_bytes(), now, 1).unwrap();
        assert!(d.admitted, "a new key is admitted");
    }
    let s = t.stats();
    assert_eq!(s.resident, s.capacity, "the table is full, never larger");
    assert!(s.evictions >= n - s.capacity, "{s:?}");
    assert!(
        s.lossy_evictions > 0,
        "a full table of live keys loses some"
    );
    !t.decide(b"abuser", start + span_ms, 1).unwrap().admitted
}

#[test]
fn a_flood_does_not_reset_an_abuser_of_a_rate() {
    assert!(abuser_survives(KeyRuleKind::Rate, &[], 200_000, 1_000));
}

#[test]
fn a_flood_does_not_reset_an_abuser_of_a_fixed_window() {
    assert!(abuser_survives(
        KeyRuleKind::FixedWindow,
        &[],
        200_000,
        1_000
    ));
}

#[test]
fn a_flood_does_not_reset_an_abuser_of_a_store_window() {
    let store = ["windowFromFirstHit", "countRefused"];
    assert!(abuser_survives(
        KeyRuleKind::FixedWindow,
        &store,
        200_000,
        1_000
    ));
}

#[test]
fn a_flood_does_not_reset_an_abuser_of_a_sliding_window() {
    assert!(abuser_survives(
        KeyRuleKind::SlidingWindow,
        &[],
        200_000,
        1_000
    ));
}

#[test]
#[ignore = "10^6 keys: run with --ignored (a few seconds in debug)"]
fn a_million_keys_do_not_reset_an_abuser() {
    for kind in [KeyRuleKind::Rate, KeyRuleKind::SlidingWindow] {
        assert!(abuser_survives(kind, &[], 1_000_000, 10_000));
    }
}

#[test]
fn keys_that_drained_are_taken_without_loss() {
    // Rounds of 400 keys (of 1 024 cells), each used once and drained by
    // the time the next round comes: every eviction takes a drained key.
    let t = table(KeyRuleKind::Rate, 256, &[]);
    for round in 0..8u64 {
        for i in 0..400 {
            let key = format!("r{round}-{i}");
            assert!(
                t.decide(key.as_bytes(), round * 60_000, 1)
                    .unwrap()
                    .admitted
            );
        }
    }
    let s = t.stats();
    assert_eq!(s.lossy_evictions, 0, "{s:?}");
    assert!(s.evictions > 0);
}
