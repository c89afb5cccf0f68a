//! Point, table, strategy and the code tables through the public API.

use sds_core::{
    Entry, EntryParts, Error, ErrorCode, Field, Flags, Outcome, Point, PointId, PointTable, Reason,
    Rule, Slot, Strategy, MAX_CAPACITY, MAX_NAME_LEN,
};

mod common;
use common::{point, with};

const T: u64 = 1_000_000;

fn table(capacity: usize) -> PointTable<Vec<Slot>> {
    PointTable::new((0..capacity).map(|_| Slot::new()).collect()).unwrap()
}

/// A strategy with only a delay and its retry interval.
fn delayed(delay_time: i64, retry_interval: i64) -> Strategy {
    with(|s| {
        s.delay_time = delay_time;
        s.retry_interval = retry_interval;
    })
}

#[test]
fn table_rejects_bad_names_and_a_full_table_without_changing_anything() {
    let t = table(2);
    assert_eq!(t.enter(b"", T, Flags::NONE), Err(Error::EmptyName));
    let long = vec![b'x'; MAX_NAME_LEN + 1];
    assert_eq!(t.enter(&long, T, Flags::NONE), Err(Error::NameTooLong));
    assert_eq!(
        t.set_strategy(&long, &Strategy::DEFAULT),
        Err(Error::NameTooLong)
    );
    assert!(t.is_empty());
    let longest = vec![b'y'; MAX_NAME_LEN];
    t.enter(&longest, T, Flags::NONE).unwrap();
    t.enter("non-utf8 \u{e9}".as_bytes(), T, Flags::NONE)
        .unwrap();
    assert_eq!(
        t.enter(&[0xff, 0xfe, 0x00], T, Flags::NONE),
        Err(Error::TableFull { capacity: 2 })
    );
    assert_eq!(t.len(), 2);
    assert_eq!(t.insert(b"third"), Err(Error::TableFull { capacity: 2 }));
    let full = t.insert(b"third").unwrap_err();
    assert_eq!(full.code(), ErrorCode::TableFull);
    assert_eq!(full.to_string(), "point table is full (capacity 2)");
    assert_eq!(
        t.set_strategy(b"third", &Strategy::DEFAULT),
        Err(Error::TableFull { capacity: 2 })
    );
    assert_eq!(t.lookup(b"third"), Ok(None));
    assert_eq!(t.len(), 2);
    // Existing names still work in a full table.
    assert_eq!(t.stats(&longest, T).unwrap().visit, 1);
    assert!(t.enter(&longest, T, Flags::NONE).is_ok());
}

#[test]
fn names_are_bytes_and_exact() {
    let t = table(8);
    let a = t.insert(b"order.pay").unwrap();
    assert_eq!(t.insert(b"order.pay").unwrap(), a);
    assert_ne!(t.insert(b"order.pay ").unwrap(), a);
    assert_ne!(t.insert(b"order.pa").unwrap(), a);
    let raw = t.insert(&[0xff, 0x00, 0x80]).unwrap();
    assert_eq!(t.lookup(&[0xff, 0x00, 0x80]).unwrap(), Some(raw));
    assert_eq!(t.lookup(&[0xff, 0x00]).unwrap(), None);
}

#[test]
fn capacity_bounds() {
    assert_eq!(
        PointTable::new(Vec::<Slot>::new()).err(),
        Some(Error::InvalidCapacity)
    );
    assert_eq!(Error::InvalidCapacity.code(), ErrorCode::InvalidCapacity);
    assert_eq!(
        Error::InvalidCapacity.to_string(),
        "table capacity must be within 1..=1048576"
    );
    assert_eq!(MAX_CAPACITY, 1 << 20);
    assert_eq!(table(1).capacity(), 1);
}

#[test]
fn invalid_strategy_leaves_the_old_one() {
    let t = table(4);
    let good = with(|s| s.visit_threshold = 1);
    t.set_strategy(b"p", &good).unwrap();
    let bad = with(|s| s.delay_time = 500);
    assert_eq!(
        t.set_strategy(b"p", &bad),
        Err(Error::InvalidStrategy {
            field: Field::DelayTime,
            rule: Rule::DelayTooShort
        })
    );
    assert_eq!(
        t.point(t.lookup(b"p").unwrap().unwrap())
            .unwrap()
            .strategy(),
        Some(good)
    );
    // A bad strategy for a new name creates no point.
    assert!(t.set_strategy(b"new", &bad).is_err());
    assert_eq!(t.lookup(b"new"), Ok(None));
}

#[test]
fn validate_names_the_field_and_rule() {
    use {Field::*, Rule::*};
    // One row a case.
    #[rustfmt::skip]
    let cases: [(Strategy, Field, Rule); 7] = [
        (with(|s| s.delay_time = 0), DelayTime, DelayTooShort),
        (with(|s| s.delay_time = 9_999), DelayTime, DelayTooShort),
        (delayed(10_000, 999), RetryInterval, RetryTooShort),
        (delayed(10_000, 10_001), RetryInterval, RetryBeyondDelay),
        (with(|s| s.retry_interval = 1_000), RetryInterval, RetryBeyondDelay),
        (with(|s| s.exception_rate_threshold = 101), ExceptionRateThreshold, PercentOutOfRange),
        (with(|s| s.pressure_test_downgrade = 2), PressureTestDowngrade, NotAFlag),
    ];
    for (s, field, rule) in cases {
        assert_eq!(
            s.validate(),
            Err(Error::InvalidStrategy { field, rule }),
            "{s:?}"
        );
    }
    assert_eq!(
        with(|s| s.downgrade_rate = 101)
            .validate()
            .unwrap_err()
            .code(),
        ErrorCode::InvalidStrategy
    );
    for ok in [
        Strategy::DEFAULT,
        delayed(10_000, 10_000),
        delayed(10_000, 0),
        with(|s| s.downgrade_rate = -5),
        with(|s| s.exception_rate_threshold = 100),
        with(|s| s.pressure_test_downgrade = 1),
    ] {
        assert_eq!(ok.validate(), Ok(()), "{ok:?}");
    }
    let e = with(|s| s.delay_time = 1).validate().unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid strategy: delayTime must be >= 10000 ms (or negative: no delay)"
    );
}

#[test]
fn field_table_names_every_field_once() {
    assert_eq!(Field::ALL.len(), 22);
    assert_eq!(Strategy::DEFAULT.cold_factor, 3);
    for f in Field::ALL {
        assert_eq!(Field::from_json_name(f.json_name()), Some(*f));
        assert_eq!(Field::from_snake_name(f.snake_name()), Some(*f));
        assert_eq!(Strategy::DEFAULT.get(*f), f.default_value());
    }
    assert_eq!(
        Field::TokenBucketGeneratedTokensInSecond.snake_name(),
        "token_bucket_generated_tokens_in_second"
    );
    assert_eq!(Strategy::DEFAULT.downgrade_rate, 100);
    assert_eq!(Strategy::DEFAULT.exception_rate_start, 0);
    let mut b = sds_core::StrategyBuilder::new();
    assert_eq!(b.set("visitThreshold", 4i64.into()), Ok(()));
    assert_eq!(b.build().map(|s| s.visit_threshold), Ok(4));
    assert_eq!(
        b.set("visit_threshold", 4i64.into()).map_err(|e| e.code()),
        Err(ErrorCode::UnknownField)
    );
}

#[test]
fn code_tables_are_stable() {
    let reasons: Vec<(u8, &str)> = Reason::ALL.iter().map(|r| (r.code(), r.as_str())).collect();
    assert_eq!(
        reasons,
        [
            (1, "VISIT"),
            (2, "TOKEN_BUCKET"),
            (3, "CONCURRENT"),
            (4, "TIMEOUT"),
            (5, "EXCEPTION"),
            (6, "EXCEPTION_RATE"),
            (7, "PRESSURE_TEST"),
            (8, "DELAY"),
            (9, "SLOW_CALL_RATE")
        ]
    );
    for r in Reason::ALL {
        assert_eq!(Reason::from_code(r.code()), Some(r));
        assert_eq!(Reason::from_name(r.as_str()), Some(r));
    }
    assert_eq!(Reason::from_code(0), None);
    assert_eq!(Reason::from_code(10), None);
    for (i, c) in ErrorCode::ALL.iter().enumerate() {
        assert_eq!(c.as_u32(), i as u32 + 1);
        assert_eq!(ErrorCode::from_u32(c.as_u32()), Some(*c));
        assert!(c.as_str().starts_with("SDS_"));
    }
    assert_eq!(ErrorCode::from_u32(0), None);
    assert_eq!(ErrorCode::TableFull.as_str(), "SDS_TABLE_FULL");
    assert_eq!(ErrorCode::TableFull.as_u32(), 6);
}

#[test]
fn entries_round_trip_through_parts() {
    let p = point(|s| s.visit_threshold = 0);
    let e = p.enter(T, Flags::NONE);
    assert!(e.downgraded() && e.holds_permit() && !e.is_probe());
    assert_eq!(e.reason(), Some(Reason::Visit));
    assert_eq!(e.start_ms(), T);
    let parts = e.into_parts();
    assert_eq!(parts.reason, 1);
    assert_eq!(Entry::from_parts(parts), e);
    let forged = Entry::from_parts(EntryParts {
        state: 0xff,
        reason: 200,
        ..parts
    });
    assert_eq!(forged.reason(), None);
    assert_eq!(forged.into_parts().state, 7);
}

#[test]
fn a_forged_or_foreign_entry_changes_nothing_unsafe() {
    let t = table(2);
    let e = t.enter(b"p", T, Flags::NONE).unwrap();
    t.exit(&e, T, Outcome::Ok).unwrap();
    // Exiting twice (a caller bug) cannot take the count below zero.
    t.exit(&e, T, Outcome::Ok).unwrap();
    assert_eq!(t.stats(b"p", T).unwrap().concurrent, 0);
    let foreign = Entry::from_parts(EntryParts {
        point: 7,
        ..e.into_parts()
    });
    assert_eq!(t.exit(&foreign, T, Outcome::Ok), Err(Error::InvalidEntry));
    let unused = Entry::from_parts(EntryParts {
        point: 1 - e.point().index(),
        ..e.into_parts()
    });
    assert_eq!(t.exit(&unused, T, Outcome::Ok), Err(Error::InvalidEntry));
    assert_eq!(
        t.enter_point(PointId::from_index(5), T, Flags::NONE),
        Err(Error::InvalidEntry)
    );
}

#[test]
fn point_handles_skip_the_lookup() {
    let t = table(4);
    let id = t
        .set_strategy(b"p", &with(|s| s.visit_threshold = 1))
        .unwrap();
    assert!(!t.enter_point(id, T, Flags::NONE).unwrap().downgraded());
    let e = t.enter(b"p", T, Flags::NONE).unwrap();
    assert_eq!(e.point(), id);
    assert!(e.downgraded());
}

#[test]
fn points_can_be_statics() {
    static POINT: Point = Point::new();
    let e = POINT.enter(T, Flags::PRESSURE_TEST);
    POINT.exit(&e, T, Outcome::Error);
    assert_eq!(POINT.stats(T).exception, 1);
    assert_eq!(Flags::from_bits(0xffff_ffff), Flags::PRESSURE_TEST);
}

#[test]
fn delay_state_is_visible() {
    let p = point(|s| {
        s.visit_threshold = 0;
        s.delay_time = 10_000
    });
    assert!(!p.delayed(T));
    p.enter(T, Flags::NONE);
    assert!(p.delayed(T) && p.delayed(T + 10_000) && !p.delayed(T + 10_001));
    p.set_strategy(None).unwrap();
    assert!(!p.delayed(T + 1));
}

#[test]
fn entries_pack_into_43_bits_and_back() {
    use sds_core::packed;
    let p = point(|s| s.visit_threshold = 0);
    let e = p.enter(T, Flags::NONE);
    let bits = e.pack();
    assert!(bits < 1 << 27, "a plain entry is a small integer");
    assert_ne!(bits & packed::DOWNGRADED, 0);
    assert_eq!(
        (bits >> packed::REASON_SHIFT) & packed::REASON_MASK,
        Reason::Visit.code() as u64
    );
    assert_eq!(Entry::unpack(bits, T), Some(e));
    let widest = Entry::from_parts(EntryParts {
        start_ms: 9,
        point: (1 << 20) - 1,
        probe_generation: u16::MAX,
        state: EntryParts::PERMIT | EntryParts::PROBE | EntryParts::DOWNGRADED,
        reason: 9,
        wait_ms: 0,
    });
    assert_eq!(Entry::unpack(widest.pack(), 9), Some(widest));
    assert!(widest.pack() < 1 << packed::BITS);
    // An entry that is no probe keeps its wait in the generation's bits.
    let waiting = Entry::from_parts(EntryParts {
        start_ms: 9,
        point: (1 << 20) - 1,
        probe_generation: 0,
        state: EntryParts::PERMIT,
        reason: 0,
        wait_ms: u16::MAX,
    });
    assert_eq!(waiting.wait_ms(), 65_535);
    assert_eq!(waiting.run_at_ms(), 9 + 65_535);
    assert_eq!(Entry::unpack(waiting.pack(), 9), Some(waiting));
    assert!(waiting.pack() < 1 << packed::BITS);
    assert_eq!(Entry::unpack(1 << packed::BITS, 0), None);
}

#[test]
fn parameters_can_be_checked_before_allocating() {
    use sds_core::window::check_parameters;
    assert_eq!(sds_core::check_capacity(0), Err(Error::InvalidCapacity));
    assert_eq!(
        sds_core::check_capacity(MAX_CAPACITY + 1),
        Err(Error::InvalidCapacity)
    );
    assert_eq!(sds_core::check_capacity(MAX_CAPACITY), Ok(()));
    assert!(check_parameters(1000, 10, 19).is_err());
    assert_eq!(check_parameters(1000, 10, 20), Ok(()));
}

#[test]
fn exit_with_asks_for_the_time_only_when_it_is_used() {
    let p = Point::new();
    let asked = std::cell::Cell::new(0);
    let clock = || {
        asked.set(asked.get() + 1);
        T + 5_000
    };
    let e = p.enter(T, Flags::NONE);
    p.exit_with(&e, Outcome::Ok, clock);
    assert_eq!(asked.get(), 0, "an ok exit without timeouts needs no time");
    assert_eq!(p.in_flight(), 0, "but returns its permit");
    let e = p.enter(T, Flags::NONE);
    p.exit_with(&e, Outcome::Error, clock);
    assert_eq!((asked.get(), p.stats(T).exception), (1, 1));
    p.set_strategy(Some(&with(|s| s.timeout_threshold = 1_000)))
        .unwrap();
    let e = p.enter(T, Flags::NONE);
    p.exit_with(&e, Outcome::Ok, clock);
    assert_eq!(
        (asked.get(), p.stats(T).timeout),
        (2, 1),
        "5 s > 1 s is a timeout"
    );
}

#[test]
fn an_abandoned_entry_returns_its_permit_and_counts_an_exception_but_no_time() {
    let p = point(|s| {
        s.concurrent_threshold = 1;
        s.timeout_threshold = 100;
    });
    let lost = p.enter(T, Flags::NONE);
    let refused = p.enter(T + 1, Flags::NONE);
    assert!(!lost.downgraded() && refused.downgraded());
    // Found by a collector 5 s later: an exception at its start second, no
    // timeout (its end is unknown); a downgraded one ran nothing.
    p.exit(&lost, T + 5_000, Outcome::Abandoned);
    p.exit(&refused, T + 5_000, Outcome::Abandoned);
    assert_eq!(p.in_flight(), 0);
    let stats = p.stats(T + 5_000);
    assert_eq!((stats.exception, stats.timeout), (1, 0));
    assert_eq!(
        p.stats(T + 10_000).exception,
        0,
        "counted at its start second"
    );
    assert_eq!(Outcome::from_code(2), Ok(Outcome::Abandoned));
}

#[test]
fn an_abandoned_entry_is_no_sample_of_an_adaptive_limit() {
    let p = point(|s| {
        s.concurrent_threshold = -1;
        s.adaptive_concurrency = 1;
    });
    let samples = |p: &Point| p.adaptive_stats().unwrap().samples;
    let e = p.enter(T, Flags::NONE);
    p.exit(&e, T + 20, Outcome::Ok);
    assert_eq!(samples(&p), 1);
    let e = p.enter(T + 30, Flags::NONE);
    p.exit(&e, T + 5_000, Outcome::Abandoned);
    assert_eq!((samples(&p), p.in_flight()), (1, 0));
    assert_eq!(p.stats(T + 5_000).exception, 1);
}

#[test]
fn an_abandoned_probe_fails() {
    let p = point(|s| {
        s.visit_threshold = 1;
        s.delay_time = 10_000;
        s.retry_interval = 1_000;
    });
    p.enter(T, Flags::NONE);
    assert_eq!(p.enter(T, Flags::NONE).reason(), Some(Reason::Visit));
    let probe = p.enter(T + 1_000, Flags::NONE);
    assert!(probe.is_probe());
    p.exit(&probe, T + 1_100, Outcome::Abandoned);
    // Not a success: the delay goes on, its next probe a retry later.
    assert!(p.delayed(T + 1_200));
    assert_eq!(
        p.enter(T + 1_200, Flags::NONE).reason(),
        Some(Reason::Delay)
    );
    assert!(p.enter(T + 2_100, Flags::NONE).is_probe());
}
