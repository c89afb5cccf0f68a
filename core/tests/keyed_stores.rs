//! What stores of Python `limits` and express-rate-limit need of a key
//! table (core/src/keyed/mod.rs, "Counts, as stores keep them"): fixed
//! windows from the first hit, refused calls counted, increment, decrement
//! and count, at explicit times; the largest sliding limit; a rule's
//! exceptions read back.

use sds_core::keyed::{
    key_fingerprint, KeyBucket, KeyCount, KeyError, KeyException, KeyField, KeyRule, KeyRuleBreak,
    KeyRuleBuilder, KeyRuleError, KeyRuleKind, KeyTable, NEVER,
};
use sds_core::Value;

type Table = KeyTable<Vec<KeyBucket>>;

fn rule(kind: KeyRuleKind, limit: i64, period_ms: i64, flags: &[&str]) -> KeyRule {
    let mut b = KeyRuleBuilder::new(kind);
    b.set("limit", Value::from(limit)).unwrap();
    b.set("periodMs", Value::from(period_ms)).unwrap();
    for flag in flags {
        b.set(flag, Value::from(1i64)).unwrap();
    }
    b.build().unwrap()
}

fn table(rule: KeyRule) -> Table {
    KeyTable::new((0..16).map(|_| KeyBucket::new()).collect(), rule).unwrap()
}

/// (admitted, remaining, reset_ms, retry_after_ms) of one call.
fn call(t: &Table, key: &str, now: u64, cost: u32) -> (bool, u32, u64, u64) {
    let d = t.decide(key.as_bytes(), now, cost).unwrap();
    (d.admitted, d.remaining, d.reset_ms, d.retry_after_ms)
}

/// (count, reset_ms) of a fixed window's key.
fn count(t: &Table, key: &str, now: u64) -> (u64, u64) {
    let c = t.count(key.as_bytes(), now).unwrap();
    (c.count, c.reset_ms)
}

const FROM_FIRST_HIT: &str = "windowFromFirstHit";
const COUNT_REFUSED: &str = "countRefused";

#[test]
fn a_window_from_the_first_hit_lasts_period_ms_from_that_hit() {
    let t = table(rule(KeyRuleKind::FixedWindow, 3, 1000, &[FROM_FIRST_HIT]));
    assert_eq!(call(&t, "a", 1500, 1), (true, 2, 1000, 0));
    assert_eq!(call(&t, "a", 1600, 2), (true, 0, 900, 0));
    assert_eq!(call(&t, "a", 2499, 1), (false, 0, 1, 1));
    // 2500 = 1500 + W: the window is over (limits and express alike), the
    // hit starts the next one (aligned, 2000 would have).
    assert_eq!(call(&t, "a", 2500, 1), (true, 2, 1000, 0));
    // A clock less than W behind the start counts in the window, at its start.
    assert_eq!(call(&t, "a", 2400, 1), (true, 1, 1000, 0));
    // Further behind: a clock step back, the window restarts there.
    assert_eq!(call(&t, "a", 1400, 1), (true, 2, 1000, 0));
    assert_eq!(count(&t, "a", 1900), (1, 500));
    assert_eq!(count(&t, "a", 2400), (0, 0), "over: no window");
    assert_eq!(count(&t, "never", 0), (0, 0));
    let d = t.peek(b"a", 1400);
    assert_eq!((d.remaining, d.reset_ms, d.window_ms), (2, 1000, 1000));
}

#[test]
fn counting_refused_calls_keeps_a_caller_over_its_limit_refused() {
    for flags in [&[COUNT_REFUSED][..], &[COUNT_REFUSED, FROM_FIRST_HIT]] {
        let t = table(rule(KeyRuleKind::FixedWindow, 2, 1000, flags));
        assert_eq!(call(&t, "a", 0, 1), (true, 1, 1000, 0), "{flags:?}");
        assert_eq!(call(&t, "a", 0, 1), (true, 0, 1000, 0));
        assert_eq!(call(&t, "a", 10, 1), (false, 0, 990, 990));
        assert_eq!(count(&t, "a", 10), (3, 990), "the refused call counted");
        // One taken off: 2 left counted, still no room.
        assert_eq!(t.decrement(b"a", 20, 1).unwrap().count, 2);
        assert_eq!(call(&t, "a", 20, 1), (false, 0, 980, 980));
        assert_eq!(call(&t, "a", 1000, 1), (true, 1, 1000, 0));
        // A cost above the limit is never admitted, and counts.
        assert_eq!(call(&t, "b", 0, 5), (false, 0, 1000, NEVER));
        assert_eq!(count(&t, "b", 0), (5, 1000));
    }
    // Without the flag a refused call counts nothing.
    let t = table(rule(KeyRuleKind::FixedWindow, 2, 1000, &[FROM_FIRST_HIT]));
    assert_eq!(call(&t, "b", 0, 5), (false, 2, 0, NEVER));
    assert_eq!(count(&t, "b", 0), (0, 0));
}

#[test]
fn increment_counts_whatever_the_limit_and_decrement_keeps_the_window() {
    let t = table(rule(KeyRuleKind::FixedWindow, 2, 60_000, &[FROM_FIRST_HIT]));
    let now = 1_700_000_000_123;
    let at = |dt: u64, c: KeyCount| (c.count, now + dt + c.reset_ms);
    // express: {totalHits, resetTime = first hit + windowMs}.
    for hits in 1..=5 {
        let c = t.increment(b"ip", now + hits, 1).unwrap();
        assert_eq!(at(hits, c), (hits, now + 1 + 60_000));
    }
    assert_eq!(t.increment(b"ip", now + 6, 3).unwrap().count, 8);
    for left in (0..8).rev() {
        assert_eq!(t.decrement(b"ip", now + 7, 1).unwrap().count, left);
    }
    // Never below 0, and the window stays: the next hit counts in it.
    assert_eq!(t.decrement(b"ip", now + 8, 1).unwrap().count, 0);
    let c = t.increment(b"ip", now + 9, 1).unwrap();
    assert_eq!(at(9, c), (1, now + 1 + 60_000));
    // A decrement never starts a window.
    let none = t.decrement(b"other", now, 1).unwrap();
    assert_eq!(none, KeyCount::default());
    assert_eq!(t.stats().resident, 1, "and takes no cell");
    // At the reset time the window is over: the count restarts.
    let c = t.increment(b"ip", now + 1 + 60_000, 1).unwrap();
    assert_eq!(at(1 + 60_000, c), (1, now + 1 + 120_000));
    assert!(t.reset(b"ip"));
    assert_eq!(count(&t, "ip", now + 60_002), (0, 0));
    // resetAll: every key forgotten, and how many there were.
    for key in ["x", "y", "z"] {
        t.increment(key.as_bytes(), now, 1).unwrap();
    }
    assert_eq!((t.reset_all(), t.stats().resident), (3, 0));
    assert_eq!(count(&t, "x", now), (0, 0));
    assert_eq!(t.reset_all(), 0);
    assert_eq!(t.increment(b"ip", now, 0), Err(KeyError::ZeroCost));
}

#[test]
fn a_count_saturates_at_its_cap_and_stays_until_the_window_ends() {
    // From the first hit, limit 3: c = max(12, bits(3) + 1) = 12 bits.
    let t = table(rule(KeyRuleKind::FixedWindow, 3, 1000, &[FROM_FIRST_HIT]));
    assert_eq!(t.increment(b"a", 0, u32::MAX).unwrap().count, 4095);
    assert_eq!(t.increment(b"a", 1, 1).unwrap().count, 4095);
    assert_eq!(t.decrement(b"a", 2, 4000).unwrap().count, 4095);
    assert!(!t.decide(b"a", 3, 1).unwrap().admitted);
    assert_eq!(t.increment(b"a", 1000, 1).unwrap().count, 1);
    // Aligned: 24 bits.
    let t = table(rule(KeyRuleKind::FixedWindow, 3, 1000, &[]));
    assert_eq!(t.increment(b"a", 0, u32::MAX).unwrap().count, (1 << 24) - 1);
}

#[test]
fn sliding_counts_are_the_previous_and_current_aligned_windows() {
    let t = table(rule(KeyRuleKind::SlidingWindow, 10, 1000, &[]));
    for _ in 0..4 {
        assert!(t.decide(b"a", 500, 1).unwrap().admitted);
    }
    let c = t.count(b"a", 1250).unwrap();
    // limits' get_sliding_window: (previous, W − e, current, W − e + W).
    assert_eq!((c.previous, c.count, c.reset_ms), (4, 0, 750));
    assert_eq!(t.increment(b"a", 1250, 2).unwrap().count, 2);
    assert_eq!(t.decrement(b"a", 1300, 1).unwrap().count, 1);
    // floor(4 × 700 / 1000) + 1 = 3 used.
    assert_eq!(t.peek(b"a", 1300).remaining, 7);
    assert_eq!(
        t.count(b"a", 3000).unwrap(),
        KeyCount {
            count: 0,
            previous: 0,
            reset_ms: 1000
        }
    );
}

#[test]
fn counts_are_for_window_rules_only() {
    let rate = table(rule(KeyRuleKind::Rate, 1, 1000, &[]));
    assert_eq!(rate.increment(b"a", 0, 1), Err(KeyError::NotWindow));
    assert_eq!(rate.decrement(b"a", 0, 1), Err(KeyError::NotWindow));
    assert_eq!(rate.count(b"a", 0), Err(KeyError::NotWindow));
    assert_eq!(
        KeyError::NotWindow.to_string(),
        "only a window rule counts hits"
    );
}

#[test]
fn the_largest_sliding_limit_is_2_to_the_21_minus_1() {
    let largest = (1i64 << 21) - 1;
    let t = table(rule(KeyRuleKind::SlidingWindow, largest, 3_600_000, &[]));
    let l = largest as u32;
    // Fresh again when floor(prev × (W − e) / W) = 0 next window: e = W − 1.
    assert_eq!(call(&t, "a", 0, l - 1), (true, 1, 7_199_999, 0));
    assert_eq!(call(&t, "a", 1, 1), (true, 0, 7_199_998, 0));
    let (admitted, _, _, retry) = call(&t, "a", 2, 1);
    assert!(!admitted);
    // Next window, prev = L: floor(L × (W − e) / W) ≤ L − 1 from e = 1.
    assert_eq!(retry, 3_600_000 - 2 + 1);
    assert!(!call(&t, "a", 3_600_000, 1).0);
    assert!(call(&t, "a", 3_600_001, 1).0);
    assert_eq!(t.count(b"a", 3_600_001).unwrap().previous, largest as u64);
    // 100 000 per hour, the common case the 16-bit counts refused.
    let t = table(rule(KeyRuleKind::SlidingWindow, 100_000, 3_600_000, &[]));
    assert!(call(&t, "b", 10, 60_000).0 && call(&t, "b", 20, 40_000).0);
    assert!(!call(&t, "b", 30, 1).0);
    let too_large = KeyRule::from_entries(
        KeyRuleKind::SlidingWindow,
        [
            ("limit", Value::from(largest + 1)),
            ("periodMs", Value::from(1000i64)),
        ],
    );
    assert_eq!(
        too_large,
        Err(invalid(KeyField::Limit, KeyRuleBreak::AboveCounts))
    );
}

fn invalid(field: KeyField, rule: KeyRuleBreak) -> KeyRuleError {
    KeyRuleError::Invalid { field, rule }
}

#[test]
fn flags_are_0_or_1_for_fixed_windows_and_bound_the_limit() {
    let set = |kind, name, value| {
        let mut b = KeyRuleBuilder::new(kind);
        b.set(name, value).map(|_| b)
    };
    let fixed = KeyRuleKind::FixedWindow;
    for name in [FROM_FIRST_HIT, COUNT_REFUSED] {
        let field = KeyField::from_json_name(name).unwrap();
        assert!(field.is_flag());
        let not_a_flag = Some(invalid(field, KeyRuleBreak::NotAFlag));
        assert_eq!(set(fixed, name, Value::from(2i64)).err(), not_a_flag);
        assert_eq!(set(fixed, name, Value::from(-1i64)).err(), not_a_flag);
        assert!(set(fixed, name, Value::from(0i64)).is_ok());
        assert!(
            set(fixed, name, Value::from(true)).is_ok(),
            "a boolean is 0 or 1"
        );
        let rate = set(KeyRuleKind::Rate, name, Value::from(1i64)).err();
        assert_eq!(rate, Some(invalid(field, KeyRuleBreak::NotForKind)));
    }
    assert!(!KeyField::Limit.is_flag());
    let zero = rule(KeyRuleKind::FixedWindow, 3, 1000, &[]);
    assert!(!zero.window_from_first_hit() && !zero.count_refused());
    let both = rule(
        KeyRuleKind::FixedWindow,
        3,
        1000,
        &[FROM_FIRST_HIT, COUNT_REFUSED],
    );
    assert!(both.window_from_first_hit() && both.count_refused());
    assert_ne!(zero, both);
    // From the first hit: bits(limit) + bits(periodMs) <= 49.
    let day = 86_400_000i64; // 27 bits
    let from_first_hit = |limit: i64| {
        let entries = [("limit", limit), ("periodMs", day), (FROM_FIRST_HIT, 1)];
        KeyRule::from_entries(fixed, entries.map(|(name, v)| (name, Value::from(v))))
    };
    assert!(from_first_hit((1 << 22) - 1).is_ok());
    let e = from_first_hit(1 << 22).unwrap_err();
    assert_eq!(e, invalid(KeyField::Limit, KeyRuleBreak::FirstHitTooWide));
}

#[test]
fn a_rules_exceptions_read_back_rebuild_it() {
    /// A rate rule of `fields`, then the exceptions `(fingerprint, limit)`.
    fn rebuilt(fields: [(&str, u64); 3], exceptions: &[(u64, u64)]) -> KeyRuleBuilder {
        let mut b = KeyRuleBuilder::new(KeyRuleKind::Rate);
        for (name, v) in fields {
            b.set(name, Value::from(v)).unwrap();
        }
        for &(fp, limit) in exceptions {
            b.except_fingerprint(fp, Value::from(limit)).unwrap();
        }
        b
    }
    let (vip, slow) = (key_fingerprint(b"vip"), key_fingerprint(b"slow"));
    let fields = [("limit", 10), ("periodMs", 1000), ("burst", 20)];
    let mut by_key = rebuilt(fields, &[]);
    by_key.except(b"vip", Value::from(100i64)).unwrap();
    by_key.except(b"slow", Value::from(1i64)).unwrap();
    let rule = by_key.build().unwrap();
    let listed: Vec<KeyException> = rule.exceptions().collect();
    let expected =
        [(vip, 100), (slow, 1)].map(|(fingerprint, limit)| KeyException { fingerprint, limit });
    assert_eq!(listed, expected);
    // What a second process reads (a shared file's header) rebuilds it.
    let read = [
        ("limit", u64::from(rule.limit())),
        ("periodMs", rule.period_ms()),
        ("burst", u64::from(rule.burst())),
    ];
    let pairs: Vec<_> = listed
        .iter()
        .map(|e| (e.fingerprint, u64::from(e.limit)))
        .collect();
    let again = rebuilt(read, &pairs);
    assert_eq!(again.build().unwrap(), rule);
    let exceptions = KeyField::Exceptions;
    let bad = |fp| {
        let mut b = again;
        b.except_fingerprint(fp, Value::from(1i64)).unwrap_err()
    };
    assert_eq!(bad(0), invalid(exceptions, KeyRuleBreak::BelowOne));
    assert_eq!(bad(1 << 48), invalid(exceptions, KeyRuleBreak::TooLarge));
    let repeated = invalid(exceptions, KeyRuleBreak::TooManyOrRepeated);
    assert_eq!(bad(vip), repeated);
}
