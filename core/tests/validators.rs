//! The validators bindings share: times, flags, outcomes, window parameters;
//! and the stats table. One rule and one message each, from the core.

use sds_core::window::check_parameters;
use sds_core::{
    time, ArgumentRule, CycleStats, Entry, Error, ErrorCode, Flags, Outcome, Stats, Value,
    WindowRule,
};

const BAD_TIME: Error = Error::InvalidArgument(ArgumentRule::Time);

#[test]
fn a_time_is_a_whole_number_of_ms_from_zero() {
    assert_eq!(time::from_i64(0), Ok(0));
    assert_eq!(time::from_i64(1_700_000_000_000), Ok(1_700_000_000_000));
    assert_eq!(time::from_i64(i64::MAX), Ok(i64::MAX as u64));
    assert_eq!(time::from_i64(-1), Err(BAD_TIME));
    assert_eq!(time::from_i64(i64::MIN), Err(BAD_TIME));

    assert_eq!(time::from_f64(0.0), Ok(0));
    assert_eq!(time::from_f64(-0.0), Ok(0));
    assert_eq!(time::from_f64(1_700_000_000_000.0), Ok(1_700_000_000_000));
    assert_eq!(time::from_f64(2f64.powi(60)), Ok(1 << 60));
    assert_eq!(time::from_f64(2f64.powi(63)), Ok(1 << 63));
    assert_eq!(time::from_f64(2f64.powi(64) - 4096.0), Ok(u64::MAX - 4095));
    assert_eq!(time::from_f64(2f64.powi(64)), Err(BAD_TIME));
    for bad in [
        -1.0,
        -0.5,
        0.5,
        1.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        assert_eq!(time::from_f64(bad), Err(BAD_TIME), "{bad}");
    }

    assert_eq!(time::from_value(Value::Integer(5)), Ok(5));
    assert_eq!(time::from_value(Value::from(u64::MAX)), Ok(u64::MAX));
    assert_eq!(time::from_value(Value::Integer(1 << 64)), Err(BAD_TIME));
    assert_eq!(time::from_value(Value::Integer(-1)), Err(BAD_TIME));
    for bad in [
        Value::OutOfRange,
        Value::NotAnInteger,
        Value::Text,
        Value::Null,
    ] {
        assert_eq!(time::from_value(bad), Err(BAD_TIME), "{bad:?}");
    }

    assert_eq!(BAD_TIME.code(), ErrorCode::InvalidArgument);
    assert_eq!(BAD_TIME.as_str(), "SDS_INVALID_ARGUMENT");
    assert_eq!(
        BAD_TIME.to_string(),
        "time must be a whole number of ms within 0..2^64"
    );
}

#[test]
fn flags_with_unknown_bits_are_rejected() {
    assert_eq!(Flags::from_known_bits(0), Ok(Flags::NONE));
    assert_eq!(Flags::from_known_bits(1), Ok(Flags::PRESSURE_TEST));
    let bad = Error::InvalidArgument(ArgumentRule::UnknownFlags);
    for bits in [2, 3, 0x80, u32::MAX, -1i32 as u32] {
        assert_eq!(Flags::from_known_bits(bits), Err(bad), "{bits:#x}");
    }
    assert_eq!(bad.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        bad.to_string(),
        "flags may only hold the pressure-test bit (1)"
    );
    // The lenient form stays for callers that mask on purpose.
    assert_eq!(Flags::from_bits(3), Flags::PRESSURE_TEST);
}

#[test]
fn outcomes_are_zero_one_or_two() {
    assert_eq!(Outcome::from_code(0), Ok(Outcome::Ok));
    assert_eq!(Outcome::from_code(1), Ok(Outcome::Error));
    assert_eq!(Outcome::from_code(2), Ok(Outcome::Abandoned));
    let bad = Error::InvalidArgument(ArgumentRule::UnknownOutcome);
    for code in [3, -1, i64::from(u32::MAX), i64::MIN] {
        assert_eq!(Outcome::from_code(code), Err(bad), "{code}");
    }
    assert_eq!(bad.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        bad.to_string(),
        "outcome must be 0 (ok), 1 (error) or 2 (abandoned)"
    );
}

#[test]
fn window_parameters_are_checked_before_any_storage_exists() {
    // A const fn of the ring length alone: a binding calls it before it
    // allocates `ring` buckets.
    const TOO_LONG: Result<(), Error> = check_parameters(1000, 10, 1 << 31);
    assert_eq!(TOO_LONG, Err(Error::InvalidWindow(WindowRule::RingTooLong)));
    assert_eq!(check_parameters(1000, 10, 20), Ok(()));
    assert_eq!(
        check_parameters(1000, 10, 19),
        Err(Error::InvalidWindow(WindowRule::RingTooShort))
    );
}

#[test]
fn the_hot_path_result_stays_in_registers() {
    // `Error` carries no text (only a field, a rule or a capacity) so that
    // `Result<Entry, Error>` stays small.
    assert_eq!(core::mem::size_of::<Error>(), 8);
    assert_eq!(core::mem::size_of::<Result<Entry, Error>>(), 16);
}

#[test]
fn stats_are_one_named_table() {
    let stats = Stats {
        visit: 1,
        exception: 2,
        timeout: 3,
        downgrade: 4,
        concurrent: 5,
        adaptive_limit: 11,
        adaptive_min_rtt_us: 12,
        adaptive_rtt_us: 13,
        adaptive_long_rtt_us: 14,
        last_cycle: CycleStats {
            visit_num: 6,
            exception_num: 7,
            timeout_num: 8,
            downgrade_num: 9,
            concurrent_num: 10,
        },
    };
    assert_eq!(
        stats.fields(),
        [
            ("visit", 1),
            ("exception", 2),
            ("timeout", 3),
            ("downgrade", 4),
            ("concurrent", 5),
            ("adaptiveLimit", 11),
            ("adaptiveMinRttUs", 12),
            ("adaptiveRttUs", 13),
            ("adaptiveLongRttUs", 14)
        ]
    );
    assert_eq!(Stats::LAST_CYCLE, "lastCycle");
    assert_eq!(
        stats.last_cycle.fields(),
        [
            ("visitNum", 6),
            ("exceptionNum", 7),
            ("timeoutNum", 8),
            ("downgradeNum", 9),
            ("concurrentNum", 10)
        ]
    );
    assert_eq!(stats.fields().map(|(n, _)| n), Stats::NAMES);
    let keys = sds_core::keyed::KeyTableStats {
        capacity: 1,
        resident: 2,
        evictions: 3,
        lossy_evictions: 4,
        admitted: 5,
        refused: 6,
    };
    assert_eq!(
        keys.fields(),
        [
            ("capacity", 1),
            ("resident", 2),
            ("evictions", 3),
            ("lossyEvictions", 4),
            ("admitted", 5),
            ("refused", 6)
        ]
    );
    assert_eq!(stats.last_cycle.fields().map(|(n, _)| n), CycleStats::NAMES);
}

#[test]
fn every_error_of_the_core_goes_through_question_mark_into_box_dyn_error() {
    use sds_core::keyed::{KeyError, KeyRuleBuilder, KeyRuleKind};
    use sds_core::Strategy;
    use std::error::Error as StdError;

    fn strategy() -> Result<Strategy, Box<dyn StdError>> {
        Ok(Strategy::from_json("{\"downgradeRate\": 101}")?)
    }
    fn key_rule() -> Result<(), Box<dyn StdError>> {
        KeyRuleBuilder::new(KeyRuleKind::Rate).build()?;
        Ok(())
    }
    fn time() -> Result<u64, Box<dyn StdError>> {
        Ok(time::from_i64(-1)?)
    }
    fn key() -> Result<(), Box<dyn StdError>> {
        Err(KeyError::ZeroCost)?
    }
    fn units() -> Result<u32, Box<dyn StdError>> {
        Ok(sds_core::keyed::units_from_i128(-1, "cost")?)
    }
    let messages = [
        strategy().unwrap_err().to_string(),
        key_rule().unwrap_err().to_string(),
        time().unwrap_err().to_string(),
        key().unwrap_err().to_string(),
        units().unwrap_err().to_string(),
    ];
    assert_eq!(
        messages[0],
        Strategy::from_json("{\"downgradeRate\": 101}")
            .unwrap_err()
            .to_string()
    );
    assert!(
        messages[0].starts_with("invalid strategy: downgradeRate"),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].starts_with("invalid key rule"),
        "{}",
        messages[1]
    );
    assert_eq!(messages[2], BAD_TIME.to_string());
    assert_eq!(messages[3], KeyError::ZeroCost.to_string());
    assert_eq!(messages[4], "cost must be an integer from 1 to 4294967295");
    assert!(strategy().unwrap_err().source().is_none());
}
