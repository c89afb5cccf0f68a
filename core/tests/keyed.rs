//! The key table's rules at explicit times, its rule builder, and its
//! eviction order (core/src/keyed/mod.rs states the semantics).

use sds_core::keyed::{
    KeyBucket, KeyCell, KeyDecision, KeyError, KeyField, KeyRule, KeyRuleBreak, KeyRuleBuilder,
    KeyRuleError, KeyRuleKind, KeyTable, KeyTableState, NEVER,
};
use sds_core::{ErrorCode, Value};

fn rule(kind: KeyRuleKind, limit: i64, period_ms: i64, burst: Option<i64>) -> KeyRule {
    let mut entries = vec![
        ("limit", Value::from(limit)),
        ("periodMs", Value::from(period_ms)),
    ];
    if let Some(burst) = burst {
        entries.push(("burst", Value::from(burst)));
    }
    KeyRule::from_entries(kind, entries).unwrap()
}

fn table(buckets: usize, rule: KeyRule) -> KeyTable<Vec<KeyBucket>> {
    KeyTable::new((0..buckets).map(|_| KeyBucket::new()).collect(), rule).unwrap()
}

/// (admitted, remaining, reset_ms, retry_after_ms) of one call.
fn call(t: &KeyTable<Vec<KeyBucket>>, key: &str, now: u64, cost: u32) -> (bool, u32, u64, u64) {
    let d = t.decide(key.as_bytes(), now, cost).unwrap();
    (d.admitted, d.remaining, d.reset_ms, d.retry_after_ms)
}

#[test]
fn cells_are_16_bytes_and_a_bucket_is_one_line() {
    assert_eq!(std::mem::size_of::<KeyCell>(), 16);
    assert_eq!(std::mem::size_of::<KeyBucket>(), 64);
    assert_eq!(std::mem::align_of::<KeyBucket>(), 64);
    // A line of table counters, then 8 lines of decision counts.
    assert_eq!(std::mem::size_of::<KeyTableState>(), 9 * 64);
}

#[test]
fn once_counting_every_decision_is_counted_admitted_or_refused_across_threads() {
    let t = table(64, rule(KeyRuleKind::FixedWindow, 50, 60_000, None));
    let now = 1_700_000_000_000;
    t.decide(b"before", now, 1).unwrap();
    assert_eq!(
        (t.stats().admitted, t.stats().refused),
        (0, 0),
        "not counted yet"
    );
    t.count_decisions();
    std::thread::scope(|s| {
        for thread in 0..4 {
            let t = &t;
            s.spawn(move || {
                for i in 0..1000u32 {
                    let key = format!("k{}", (i + thread) % 10);
                    t.decide(key.as_bytes(), now, 1).unwrap();
                }
            });
        }
    });
    let stats = t.stats();
    // 10 keys of 50 each: 500 admitted of 4 000.
    assert_eq!((stats.admitted, stats.refused), (500, 3500));
    t.peek(b"k1", now);
    t.increment(b"k1", now, 1).unwrap();
    assert_eq!(
        (t.stats().admitted, t.stats().refused),
        (500, 3500),
        "only decide counts"
    );
}

#[test]
fn rate_admits_the_burst_at_once_then_one_unit_per_interval() {
    // 10 per second is one unit per 100 ms; a burst of 5 is 500 ms of debt.
    let t = table(16, rule(KeyRuleKind::Rate, 10, 1000, Some(5)));
    let now = 1_700_000_000_000;
    assert_eq!(call(&t, "a", now, 1), (true, 4, 100, 0));
    for left in (0..4).rev() {
        assert_eq!(
            call(&t, "a", now, 1),
            (true, left, 500 - 100 * left as u64, 0)
        );
    }
    assert_eq!(call(&t, "a", now, 1), (false, 0, 500, 100));
    assert_eq!(call(&t, "a", now + 99, 1), (false, 0, 401, 1));
    assert_eq!(call(&t, "a", now + 100, 1), (true, 0, 500, 0));
    // Costs: 3 units are 300 ms of debt; more than the burst is never admitted.
    assert_eq!(call(&t, "b", now, 3), (true, 2, 300, 0));
    assert_eq!(call(&t, "b", now, 3), (false, 2, 300, 100));
    assert_eq!(call(&t, "b", now, 6).3, NEVER);
    let d = t.decide(b"b", now, 1).unwrap();
    assert_eq!((d.limit, d.window_ms), (5, 500));
    // The whole debt drains: 500 ms after the last call the key is fresh.
    assert_eq!(call(&t, "a", now + 600, 5), (true, 0, 500, 0));
}

#[test]
fn rate_burst_defaults_to_the_limit_and_a_step_back_waits_one_burst_at_most() {
    let t = table(16, rule(KeyRuleKind::Rate, 2, 1000, None));
    let now = 10_000_000;
    assert_eq!(call(&t, "a", now, 2), (true, 0, 1000, 0));
    // The clock steps back an hour: the debt reads as one whole burst.
    assert_eq!(call(&t, "a", now - 3_600_000, 1), (false, 0, 1000, 500));
    assert_eq!(call(&t, "a", now - 3_600_000 + 500, 1), (true, 0, 1000, 0));
}

#[test]
fn fixed_window_counts_per_aligned_window() {
    let t = table(16, rule(KeyRuleKind::FixedWindow, 3, 1000, None));
    assert_eq!(call(&t, "a", 1500, 1), (true, 2, 500, 0));
    assert_eq!(call(&t, "a", 1600, 2), (true, 0, 400, 0));
    assert_eq!(call(&t, "a", 1999, 1), (false, 0, 1, 1));
    // The edge: 2000 starts a new window.
    assert_eq!(call(&t, "a", 2000, 1), (true, 2, 1000, 0));
    assert_eq!(call(&t, "a", 2000, 3), (false, 2, 1000, 1000));
    assert_eq!(call(&t, "a", 2000, 4).3, NEVER);
    let d = t.peek(b"a", 2500);
    assert_eq!(
        (d.admitted, d.remaining, d.limit, d.window_ms),
        (true, 2, 3, 1000)
    );
}

#[test]
fn sliding_window_weighs_the_previous_window_by_its_overlap() {
    let t = table(16, rule(KeyRuleKind::SlidingWindow, 10, 1000, None));
    for _ in 0..10 {
        assert!(call(&t, "a", 500, 1).0);
    }
    // Reset: 10 in the next window weigh nothing from e = 901 (10 × 99/1000 < 1).
    assert_eq!(call(&t, "a", 999, 1), (false, 0, 902, 2));
    // At 1000 the previous 10 still weigh fully: floor(10 × 1000/1000) = 10.
    assert_eq!(call(&t, "a", 1000, 1), (false, 0, 901, 1));
    // At 1001 they weigh floor(10 × 999/1000) = 9: one more fits.
    assert_eq!(call(&t, "a", 1001, 1), (true, 0, 1000, 0));
    // At 1500: floor(10 × 500/1000) + 1 = 6 used, 4 left.
    assert_eq!(call(&t, "a", 1500, 4), (true, 0, 1301, 0));
    assert!(!call(&t, "a", 1500, 1).0);
    // The window after next: only this window's 5 weigh, floor(5 × 1000/1000).
    assert_eq!(call(&t, "a", 2000, 5), (true, 0, 1801, 0));
    // Two windows on, nothing weighs.
    assert_eq!(call(&t, "a", 4000, 10), (true, 0, 1901, 0));
    assert_eq!(call(&t, "a", 4000, 11).3, NEVER);
}

#[test]
fn a_clock_one_window_behind_counts_in_the_window_the_key_is_in() {
    // Callers read their clocks before deciding: around a boundary a call
    // from window 999 can land after one from window 1 000.
    for kind in [KeyRuleKind::FixedWindow, KeyRuleKind::SlidingWindow] {
        let t = table(16, rule(kind, 2, 1000, None));
        assert!(call(&t, "k", 1_000_000, 1).0);
        let late = call(&t, "k", 999_999, 1);
        assert!(
            late.0,
            "{kind:?}: the late call fits the window's second unit"
        );
        assert_eq!(late.1, 0, "{kind:?}: and is counted there");
        assert!(
            !call(&t, "k", 1_000_001, 1).0,
            "{kind:?}: a third call in a window of 2"
        );
        // Further behind than one window: a clock step back, the counts restart.
        assert!(call(&t, "k", 998_500, 1).0, "{kind:?}");
    }
}

#[test]
fn sliding_retry_after_is_when_the_same_call_fits() {
    let t = table(16, rule(KeyRuleKind::SlidingWindow, 4, 1000, None));
    assert!(call(&t, "a", 100, 4).0);
    let (admitted, _, _, retry) = call(&t, "a", 100, 2);
    assert!(!admitted);
    // Next window, prev = 4: floor(4 × (1000 − e)/1000) ≤ 2 from e = 251.
    assert_eq!(retry, 1151);
    assert!(!call(&t, "a", 100 + retry - 1, 2).0);
    assert!(call(&t, "a", 100 + retry, 2).0);
}

#[test]
fn named_keys_have_their_own_limit() {
    let mut b = sds_core::keyed::KeyRuleBuilder::new(KeyRuleKind::FixedWindow);
    b.set("limit", Value::from(2i64)).unwrap();
    b.set("periodMs", Value::from(1000i64)).unwrap();
    b.except(b"vip", Value::from(5i64)).unwrap();
    let t = table(16, b.build().unwrap());
    let admitted = |key: &str| (0..10).filter(|_| call(&t, key, 0, 1).0).count();
    assert_eq!((admitted("vip"), admitted("someone")), (5, 2));
    assert_eq!(t.peek(b"vip", 0).limit, 5);
}

#[test]
fn rate_exceptions_scale_the_burst() {
    let mut b = sds_core::keyed::KeyRuleBuilder::new(KeyRuleKind::Rate);
    b.set("limit", Value::from(10i64)).unwrap();
    b.set("periodMs", Value::from(1000i64)).unwrap();
    b.set("burst", Value::from(20i64)).unwrap();
    b.except(b"slow", Value::from(1i64)).unwrap();
    let t = table(16, b.build().unwrap());
    let d = t.decide(b"slow", 0, 1).unwrap();
    assert_eq!((d.limit, d.remaining, d.reset_ms), (2, 1, 1000));
}

fn build_error(kind: KeyRuleKind, entries: &[(&str, Value)]) -> KeyRuleError {
    KeyRule::from_entries(kind, entries.iter().copied()).unwrap_err()
}

#[test]
fn rule_input_gets_one_verdict_naming_the_field() {
    let ok = [
        ("limit", Value::from(5i64)),
        ("periodMs", Value::from(1000i64)),
    ];
    let invalid = |field, rule| KeyRuleError::Invalid { field, rule };
    type Case<'a> = (KeyRuleKind, Vec<(&'a str, Value)>, KeyRuleError);
    let cases: Vec<Case> = vec![
        (
            KeyRuleKind::Rate,
            vec![ok[1]],
            invalid(KeyField::Limit, KeyRuleBreak::Missing),
        ),
        (
            KeyRuleKind::Rate,
            vec![ok[0]],
            invalid(KeyField::PeriodMs, KeyRuleBreak::Missing),
        ),
        (
            KeyRuleKind::Rate,
            vec![("limit", Value::from(0i64)), ok[1]],
            invalid(KeyField::Limit, KeyRuleBreak::BelowOne),
        ),
        (
            KeyRuleKind::Rate,
            vec![("limit", Value::from_f64(1.5)), ok[1]],
            invalid(KeyField::Limit, KeyRuleBreak::NotAnInteger),
        ),
        (
            KeyRuleKind::Rate,
            vec![
                ("limit", Value::from(1001i64)),
                ("periodMs", Value::from(1i64)),
            ],
            invalid(KeyField::Limit, KeyRuleBreak::RateTooFast),
        ),
        (
            KeyRuleKind::FixedWindow,
            vec![ok[0], ok[1], ("burst", Value::from(3i64))],
            invalid(KeyField::Burst, KeyRuleBreak::NotForKind),
        ),
        (
            KeyRuleKind::SlidingWindow,
            vec![("limit", Value::from(1i64 << 21)), ok[1]],
            invalid(KeyField::Limit, KeyRuleBreak::AboveCounts),
        ),
        (
            KeyRuleKind::FixedWindow,
            vec![ok[0], ("periodMs", Value::OutOfRange)],
            invalid(KeyField::PeriodMs, KeyRuleBreak::TooLarge),
        ),
    ];
    for (kind, entries, expected) in cases {
        assert_eq!(build_error(kind, &entries), expected, "{entries:?}");
        assert_eq!(expected.code(), ErrorCode::InvalidStrategy);
    }
    let unknown = build_error(KeyRuleKind::Rate, &[("windowMs", Value::from(1i64))]);
    assert_eq!(unknown.code(), ErrorCode::UnknownField);
    assert_eq!(unknown.to_string(), r#"unknown key rule field "windowMs""#);
    let twice = build_error(KeyRuleKind::Rate, &[ok[0], ok[0]]);
    assert_eq!(
        twice.to_string(),
        r#"invalid key rule: "limit" is given twice"#
    );
    assert_eq!(
        invalid(KeyField::Burst, KeyRuleBreak::NotForKind).to_string(),
        "invalid key rule: burst does not apply to this kind (burst: rate only; periodMs: not \
         inFlight; windowFromFirstHit, countRefused: fixedWindow only)"
    );
    // Null leaves a field unset.
    let r = KeyRule::from_entries(KeyRuleKind::Rate, [ok[0], ok[1], ("burst", Value::Null)]);
    assert_eq!(r.unwrap().burst(), 5);
}

#[test]
fn exceptions_are_bounded_and_distinct() {
    let mut b = sds_core::keyed::KeyRuleBuilder::new(KeyRuleKind::Rate);
    for i in 0..8 {
        b.except(format!("k{i}").as_bytes(), Value::from(1i64))
            .unwrap();
    }
    let full = b.except(b"k8", Value::from(1i64)).unwrap_err();
    assert_eq!(full.key(), "exceptions");
    let mut b = sds_core::keyed::KeyRuleBuilder::new(KeyRuleKind::Rate);
    b.except(b"k", Value::from(1i64)).unwrap();
    assert!(b.except(b"k", Value::from(2i64)).is_err());
    assert!(b.except(b"j", Value::from(0i64)).is_err());
}

#[test]
fn zero_cost_and_zero_buckets_are_refused() {
    let r = rule(KeyRuleKind::Rate, 1, 1000, None);
    assert_eq!(
        KeyTable::new(Vec::<KeyBucket>::new(), r).err(),
        Some(KeyError::InvalidCapacity)
    );
    let t = table(1, r);
    assert_eq!(t.decide(b"a", 0, 0), Err(KeyError::ZeroCost));
    assert_eq!(KeyError::ZeroCost.code(), ErrorCode::InvalidArgument);
}

#[test]
fn peek_takes_nothing_and_reset_forgets() {
    let t = table(4, rule(KeyRuleKind::FixedWindow, 2, 1000, None));
    let fresh = t.peek(b"a", 0);
    assert_eq!((fresh.remaining, fresh.reset_ms), (2, 0));
    assert_eq!(t.stats().resident, 0);
    assert!(call(&t, "a", 0, 2).0);
    assert!(!call(&t, "a", 0, 1).0);
    assert_eq!(t.stats().resident, 1);
    assert!(t.reset(b"a"));
    assert!(!t.reset(b"a"));
    assert_eq!(t.stats().resident, 0);
    assert_eq!(call(&t, "a", 0, 1), (true, 1, 1000, 0));
}

/// Keys that share the single bucket of a one-bucket table.
fn decide_all(
    t: &KeyTable<Vec<KeyBucket>>,
    keys: &[&str],
    now: u64,
    cost: u32,
) -> Vec<KeyDecision> {
    keys.iter()
        .map(|k| t.decide(k.as_bytes(), now, cost).unwrap())
        .collect()
}

#[test]
fn eviction_takes_a_fresh_state_first_then_the_least_debt() {
    // One bucket: four cells, every key a candidate of every cell.
    let t = table(1, rule(KeyRuleKind::Rate, 10, 1000, None));
    decide_all(&t, &["a", "b", "c", "d"], 0, 1);
    assert_eq!(t.stats().resident, 4);
    // At 100 ms, "a", "b", "c" have drained; "d" takes 5 more.
    decide_all(&t, &["d"], 100, 5);
    decide_all(&t, &["e"], 100, 1);
    let s = t.stats();
    assert_eq!((s.resident, s.evictions, s.lossy_evictions), (4, 1, 0));
    // Now every cell owes something: the least indebted goes, "d" stays.
    decide_all(&t, &["b", "c"], 100, 2);
    decide_all(&t, &["f"], 100, 1);
    let s = t.stats();
    assert_eq!((s.evictions, s.lossy_evictions), (2, 1));
    assert_eq!(t.peek(b"d", 100).remaining, 5);
    // "e" (1 unit) was evicted: it is fresh again.
    assert_eq!(t.peek(b"e", 100).remaining, 10);
}

fn in_flight(limit: i64, buckets: usize) -> KeyTable<Vec<KeyBucket>> {
    table(
        buckets,
        KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(limit))]).unwrap(),
    )
}

#[test]
fn in_flight_holds_units_until_released() {
    let t = in_flight(2, 16);
    assert_eq!(call(&t, "a", 0, 1), (true, 1, 0, 0));
    assert_eq!(call(&t, "a", 5, 1), (true, 0, 0, 0));
    assert_eq!(call(&t, "a", 9, 1), (false, 0, 0, 0));
    assert_eq!(call(&t, "a", 9, 3).3, NEVER);
    assert_eq!(t.release(b"a", 1), Ok(true));
    assert_eq!(call(&t, "a", 10, 1), (true, 0, 0, 0));
    assert_eq!(t.release(b"a", 5), Ok(true), "at most what it holds");
    assert_eq!(t.release(b"a", 1), Ok(false));
    assert_eq!(t.release(b"never", 1), Ok(false));
    assert_eq!(t.release(b"a", 0), Err(KeyError::ZeroCost));
    let rate = table(1, rule(KeyRuleKind::Rate, 1, 1000, None));
    assert_eq!(rate.release(b"a", 1), Err(KeyError::NotInFlight));
    // A count of 0 is judged first, as by decide, increment and decrement
    // (and by every binding before its call): C's release of 0 on a rate
    // said NotInFlight where the others said ZeroCost.
    assert_eq!(rate.release(b"a", 0), Err(KeyError::ZeroCost));
    let period = build_error(
        KeyRuleKind::InFlight,
        &[
            ("limit", Value::from(1i64)),
            ("periodMs", Value::from(1i64)),
        ],
    );
    assert_eq!(
        period,
        KeyRuleError::Invalid {
            field: KeyField::PeriodMs,
            rule: KeyRuleBreak::NotForKind
        }
    );
}

#[test]
fn units_held_are_never_evicted_and_a_full_table_says_so() {
    // One bucket: four keys hold a unit each; a fifth key finds no cell.
    let t = in_flight(1, 1);
    for key in ["a", "b", "c", "d"] {
        assert!(call(&t, key, 0, 1).0);
    }
    assert_eq!(t.decide(b"e", 0, 1), Err(KeyError::TableFull));
    assert_eq!(KeyError::TableFull.code(), ErrorCode::TableFull);
    // "b" gives its unit back: its cell is free, and "e" takes it losslessly.
    assert_eq!(t.release(b"b", 1), Ok(true));
    assert!(call(&t, "e", 0, 1).0);
    for key in ["a", "c", "d", "e"] {
        assert!(!call(&t, key, 0, 1).0, "{key} still holds its unit");
    }
    let s = t.stats();
    assert_eq!((s.evictions, s.lossy_evictions), (1, 0));
}

#[test]
fn the_kind_is_read_by_the_core_and_its_message_names_every_kind() {
    use sds_core::keyed::KindInput;
    assert_eq!(
        KeyRuleBuilder::for_kind(KindInput::Text("slidingWindow")).map(|b| b.build().is_err()),
        Ok(true),
        "a known kind gives its builder (empty: limit is required)"
    );
    for input in [
        KindInput::Text("token"),
        KindInput::Text("Rate"),
        KindInput::Other,
    ] {
        let e = KeyRuleBuilder::for_kind(input).unwrap_err();
        assert_eq!(e, KeyRuleError::UnknownKind);
        let names = KeyRuleKind::ALL.map(KeyRuleKind::as_str).join(", ");
        assert_eq!(
            e.to_string(),
            format!("invalid key rule: kind must be one of {names}")
        );
        assert_eq!((e.code(), e.key()), (ErrorCode::InvalidStrategy, "kind"));
    }
    let e = KeyRuleBuilder::for_kind(KindInput::Absent).unwrap_err();
    assert_eq!(e.to_string(), "invalid key rule: kind is required");
    assert_eq!(
        KeyRuleBuilder::not_pairs().to_string(),
        "invalid key rule: exceptions must be a list of [key, limit] pairs"
    );
}

#[test]
fn a_flag_takes_a_boolean_as_0_or_1_and_a_number_does_not() {
    let fixed = |flag: Value| {
        let mut b = KeyRuleBuilder::new(KeyRuleKind::FixedWindow);
        b.set("limit", Value::from(10i64)).unwrap();
        b.set("periodMs", Value::from(1000i64)).unwrap();
        b.set("countRefused", flag)
            .map(|()| b.build().unwrap().count_refused())
    };
    assert_eq!(fixed(Value::from(true)), Ok(true));
    assert_eq!(fixed(Value::from(false)), Ok(false));
    assert_eq!(fixed(Value::from(1i64)), Ok(true));
    let mut b = KeyRuleBuilder::new(KeyRuleKind::Rate);
    let e = b.set("limit", Value::from(true)).unwrap_err();
    assert_eq!(e.to_string(), "invalid key rule: limit must be an integer");
}

#[test]
fn a_first_call_refused_on_a_fresh_state_takes_no_cell_and_evicts_nobody() {
    let t = table(1, rule(KeyRuleKind::Rate, 10, 1000, None));
    for key in ["a", "b", "c", "d"] {
        assert!(call(&t, key, 1000, 5).0, "{key} fills a cell");
    }
    let refused = call(&t, "new", 1000, 11);
    assert_eq!((refused.0, refused.3), (false, NEVER), "above the quota");
    let stats = t.stats();
    assert_eq!((stats.resident, stats.evictions), (4, 0));
    assert!(
        call(&t, "new", 1000, 1).0,
        "an admitted call then claims one"
    );
    assert_eq!(t.stats().evictions, 1);
}
