//! Cells are plain data a hostile or torn file may fill with anything:
//! every bit pattern must decide without a panic (debug overflow checks
//! included) and answer within the quota.

use std::vec::Vec;

use proptest::prelude::*;

use super::cell::{KeyBucket, BUCKET_CELLS};
use super::hash::{fingerprint, hash};
use super::{KeyError, KeyRule, KeyRuleKind, KeyTable, NEVER};
use crate::sync::Ordering;
use crate::Value;

proptest! {
    /// A debt's fraction takes a 64-bit division for the usual sizes: the
    /// same quotient as the 128-bit one, at and around every bound.
    #[test]
    fn a_fraction_divides_in_64_bits_as_in_128(
        part in prop_oneof![0u128..1 << 33, any::<u64>().prop_map(u128::from), Just((1 << 32) - 1)],
        whole in prop_oneof![0u128..1 << 33, any::<u64>().prop_map(u128::from), Just(u64::MAX as u128 + 1)],
    ) {
        let wide = match part {
            0 => 0,
            _ => ((part << 32) / whole.max(1)).clamp(1, u64::MAX as u128) as u64,
        };
        prop_assert_eq!(super::decision::fraction(part, whole), wide);
    }

    #[test]
    fn any_bit_pattern_decides_within_the_quota(
        kind in prop::sample::select(KeyRuleKind::ALL.to_vec()),
        words in prop::collection::vec(any::<u64>(), 2 * 2 * BUCKET_CELLS),
        limit in prop_oneof![1i64..65_536, 1i64..(1 << 24)],
        flags in (0i64..2, 0i64..2),
        period in prop_oneof![1i64..100_000, 1i64..(1 << 40)],
        calls in prop::collection::vec(
            (0u8..8, any::<u64>(), prop_oneof![1u32..4, 1u32..u32::MAX]),
            1..40,
        ),
    ) {
        let period = match kind {
            KeyRuleKind::InFlight => Value::Null,
            _ => Value::from(period),
        };
        let fixed = |flag| match kind {
            KeyRuleKind::FixedWindow => Value::from(flag),
            _ => Value::Null,
        };
        let rule = KeyRule::from_entries(
            kind,
            [
                ("limit", Value::from(limit)),
                ("periodMs", period),
                ("windowFromFirstHit", fixed(flags.0)),
                ("countRefused", fixed(flags.1)),
            ],
        );
        // A rate above one unit per µs is refused (tests/keyed.rs).
        prop_assume!(rule.is_ok());
        let rule = rule.unwrap();
        let buckets: Vec<KeyBucket> = (0..2).map(|_| KeyBucket::new()).collect();
        let cells = buckets.iter().flat_map(|b| b.cells.iter());
        for (i, (cell, pair)) in cells.zip(words.chunks(2)).enumerate() {
            let (mut key, mut state) = (pair[0], pair[1]);
            if i % 2 == 0 {
                // Half the cells hold a called key, with a state of its
                // generation: random payloads are read, not skipped.
                key = fingerprint(hash(&[i as u8 / 2])) << 16 | (key & 0xffff);
                state = (key & 0x3ff) << 54 | (state & ((1 << 54) - 1));
            }
            cell.key.store(key, Ordering::Relaxed);
            cell.state.store(state, Ordering::Relaxed);
        }
        let table = KeyTable::new(buckets, rule).unwrap();
        for (key, now, cost) in calls {
            if kind == KeyRuleKind::InFlight && now % 2 == 0 {
                let _ = table.release(&[key], cost);
            }
            let d = match table.decide(&[key], now, cost) {
                Ok(d) => d,
                // Every candidate holds units (random states do).
                Err(e) => {
                    prop_assert_eq!(e, KeyError::TableFull);
                    continue;
                }
            };
            prop_assert!(d.remaining <= d.limit, "{:?}", d);
            // A refused in-flight call waits for a release, not for time.
            let waits = d.retry_after_ms > 0 || kind == KeyRuleKind::InFlight;
            prop_assert!(d.admitted || waits, "{:?}", d);
            prop_assert!(!d.admitted || d.retry_after_ms == 0);
            if cost as u64 > d.limit as u64 {
                prop_assert!(!d.admitted && d.retry_after_ms == NEVER);
            }
            let peek = table.peek(&[key], now);
            prop_assert!(peek.remaining <= peek.limit);
            let counts = [
                table.count(&[key], now),
                table.decrement(&[key], now, cost),
                table.increment(&[key], now, cost),
            ];
            for c in counts {
                match c {
                    Ok(c) => prop_assert!(c.reset_ms <= period_ms(&table)),
                    Err(e) => prop_assert!(e == KeyError::NotWindow || e == KeyError::TableFull),
                }
            }
        }
        let stats = table.stats();
        prop_assert!(stats.capacity == 8);
    }
}

fn period_ms(t: &KeyTable<Vec<KeyBucket>>) -> u64 {
    t.rule().period_ms()
}

/// A window rule of `limit` units a `period_ms`.
fn window_rule(kind: KeyRuleKind, limit: i64, period_ms: i64) -> KeyRule {
    let entries = [
        ("limit", Value::from(limit)),
        ("periodMs", Value::from(period_ms)),
    ];
    KeyRule::from_entries(kind, entries).unwrap()
}

/// Sliding limits below 2^16 keep version 1's encoding: a 22-bit lap and
/// two 16-bit counts.
#[test]
fn small_sliding_limits_keep_the_16_bit_encoding() {
    let rule = window_rule(KeyRuleKind::SlidingWindow, 65_535, 1000);
    let q = rule.quota_of(1);
    let step = super::window::sliding_step(q, 7 << 32 | 3 << 16 | 5, 7_500, 2);
    assert_eq!(step.payload, 7 << 32 | 3 << 16 | 7);
}

/// Two first calls of a key claimed two cells, and calls decided in the
/// later one (found before the earlier was claimed): settling gives up the
/// earlier, fresh one, so no decision is lost.
#[test]
fn settling_a_key_claimed_twice_keeps_the_cell_that_holds_decisions() {
    use super::cell::taken;
    use super::table::Found;
    let rule = window_rule(KeyRuleKind::FixedWindow, 100, 60_000);
    let table = KeyTable::new((0..2).map(|_| KeyBucket::new()).collect::<Vec<_>>(), rule).unwrap();
    let (fp, candidates) = table.candidates(b"k");
    for _ in 0..5 {
        assert!(table.decide(b"k", 0, 1).unwrap().admitted);
    }
    // Move the key's cell from the first candidate to the fifth (the
    // second bucket's first), then claim the first again for it.
    let (first, fifth) = (candidates.cell(0), candidates.cell(BUCKET_CELLS));
    fifth
        .key
        .store(first.key.load(Ordering::Relaxed), Ordering::Relaxed);
    fifth
        .state
        .store(first.state.load(Ordering::Relaxed), Ordering::Relaxed);
    let word = taken(first.key.load(Ordering::Relaxed), fp);
    first.key.store(word, Ordering::Relaxed);
    assert!(table
        .settle(candidates, fp, Found { at: 0, word })
        .is_none());
    assert_eq!(
        first.key.load(Ordering::Relaxed) >> 16,
        0,
        "the fresh cell is emptied"
    );
    assert_eq!(table.count(b"k", 0).unwrap().count, 5);
    assert_eq!(table.decide(b"k", 0, 1).unwrap().remaining, 94);
    // Both holding decisions: both stay, and the earlier decides.
    let word = taken(first.key.load(Ordering::Relaxed), fp);
    first.key.store(word, Ordering::Relaxed);
    first
        .state
        .store(super::cell::state_word(word, 2), Ordering::Relaxed);
    assert!(table
        .settle(candidates, fp, Found { at: 0, word })
        .is_some());
    assert_eq!(fifth.key.load(Ordering::Relaxed) >> 16, fp);
}

#[test]
fn a_counting_rule_is_as_wide_as_its_window_allows_and_its_cap_is_what_increment_stops_at() {
    use super::{KeyRule, KeyRuleBuilder, KeyRuleKind};
    use crate::Value;
    let counting = |period_ms: u64| {
        let limit = KeyRule::counting_limit(period_ms)?;
        let mut b = KeyRuleBuilder::new(KeyRuleKind::FixedWindow);
        b.set("limit", Value::from(i64::from(limit))).unwrap();
        b.set("periodMs", Value::from(period_ms as i64)).unwrap();
        b.set("windowFromFirstHit", Value::Bool(true)).unwrap();
        Some(b.build().expect("a counting limit builds"))
    };
    let minute = counting(60_000).unwrap();
    assert_eq!(minute.limit(), (1 << 20) - 1);
    assert_eq!(minute.count_cap(), Some((1 << 21) - 1));
    // Past 2^29 ms the window's start takes the count's bits.
    let long = counting(1 << 30).unwrap();
    assert_eq!(long.limit(), (1 << 18) - 1);
    assert_eq!(KeyRule::counting_limit(1 << 38), None);
    assert_eq!(KeyRule::counting_limit(0), None);
    assert!(counting((1 << 38) - 1).is_some());
    // increment stops at the cap.
    let table = super::KeyTable::new(
        (0..4)
            .map(|_| super::KeyBucket::new())
            .collect::<std::vec::Vec<_>>(),
        minute,
    )
    .unwrap();
    let cap = minute.count_cap().unwrap();
    let mut count = 0;
    for _ in 0..3 {
        count = table.increment(b"k", 1_000, u32::MAX).unwrap().count;
    }
    assert_eq!(count, cap);
}
