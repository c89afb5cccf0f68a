//! The one strategy input path: `StrategyBuilder`, `Value`, `StrategyError`
//! and `Strategy::from_json` on top of them.

use sds_core::{
    Error, ErrorCode, Field, KeyText, Rule, Strategy, StrategyBuilder, StrategyError, Value,
};

fn message(e: StrategyError) -> String {
    e.to_string()
}

#[test]
fn field_index_is_the_position_in_all() {
    assert_eq!(Field::COUNT, 22);
    for (i, &f) in Field::ALL.iter().enumerate() {
        assert_eq!(f.index(), i);
        assert_eq!(Field::from_index(i), Some(f));
    }
    assert_eq!(Field::from_index(22), None);
    assert_eq!(Field::VisitThreshold.index(), 0);
    assert_eq!(Field::PressureTestDowngrade.index(), 12);
    assert_eq!(
        Field::from_json_name("tokenBucketSize"),
        Some(Field::TokenBucketSize)
    );
}

#[test]
fn values_from_floats_are_judged_by_their_number() {
    assert_eq!(Value::from_f64(10.0), Value::Integer(10));
    assert_eq!(Value::from_f64(-0.0), Value::Integer(0));
    assert_eq!(
        Value::from_f64(2f64.powi(60)),
        Value::Integer(1 << 60),
        "a JavaScript 2 ** 60 is exact"
    );
    assert_eq!(Value::from_f64(2f64.powi(64)), Value::Integer(1 << 64));
    assert_eq!(Value::from_f64(2f64.powi(127)), Value::OutOfRange);
    assert_eq!(
        Value::from_f64(-(2f64.powi(127))),
        Value::Integer(i128::MIN)
    );
    assert_eq!(Value::from_f64(f64::INFINITY), Value::OutOfRange);
    assert_eq!(Value::from_f64(f64::NEG_INFINITY), Value::OutOfRange);
    assert_eq!(Value::from_f64(1.5), Value::NotAnInteger);
    assert_eq!(Value::from_f64(f64::NAN), Value::NotAnInteger);
    assert_eq!(Value::from(true), Value::Bool(true));
    assert_eq!(Value::from(u64::MAX), Value::Integer(u64::MAX as i128));
    assert_eq!(Value::from(-1i64), Value::Integer(-1));
}

#[test]
fn the_builder_gives_each_value_one_verdict() {
    let one = |v: Value| {
        let mut b = StrategyBuilder::new();
        b.set("visitThreshold", v)?;
        b.build()
    };
    assert_eq!(
        one(Value::Integer(1 << 53)).unwrap().visit_threshold,
        1 << 53
    );
    assert_eq!(
        one(Value::Integer(1 << 60)).unwrap().visit_threshold,
        1 << 60
    );
    assert_eq!(one(Value::Integer(-1)).unwrap().visit_threshold, -1);
    assert_eq!(
        one(Value::Integer(i64::MIN as i128))
            .unwrap()
            .visit_threshold,
        i64::MIN
    );
    assert_eq!(one(Value::Null).unwrap(), Strategy::DEFAULT);
    let out_of_range = StrategyError::Invalid(Error::InvalidStrategy {
        field: Field::VisitThreshold,
        rule: Rule::OutOfRange,
    });
    let not_an_integer = StrategyError::Invalid(Error::InvalidStrategy {
        field: Field::VisitThreshold,
        rule: Rule::NotAnInteger,
    });
    assert_eq!(one(Value::Integer(1 << 64)), Err(out_of_range));
    assert_eq!(one(Value::Integer(1 << 63)), Err(out_of_range));
    assert_eq!(one(Value::OutOfRange), Err(out_of_range));
    assert_eq!(one(Value::from_f64(1.5)), Err(not_an_integer));
    assert_eq!(one(Value::Text), Err(not_an_integer));
    assert_eq!(one(Value::from(true)), Err(not_an_integer));
    assert_eq!(
        message(out_of_range),
        "invalid strategy: visitThreshold is out of the 64-bit integer range"
    );
    assert_eq!(
        message(not_an_integer),
        "invalid strategy: visitThreshold must be an integer"
    );
    assert_eq!(out_of_range.code(), ErrorCode::InvalidStrategy);
    assert_eq!(out_of_range.key(), Some("visitThreshold"));
}

#[test]
fn unknown_keys_are_named_in_full() {
    let mut b = StrategyBuilder::new();
    let e = b.set("visitThresold", Value::Integer(1)).unwrap_err();
    assert_eq!(
        e,
        StrategyError::UnknownField(KeyText::new("visitThresold"))
    );
    assert_eq!(e.code(), ErrorCode::UnknownField);
    assert_eq!(e.key(), Some("visitThresold"));
    assert_eq!(message(e), "unknown strategy field \"visitThresold\"");
    // A JSON name is no snake_case name and the other way round.
    let e = b
        .set_snake("visitThreshold", Value::Integer(1))
        .unwrap_err();
    assert_eq!(message(e), "unknown strategy field \"visitThreshold\"");
    let e = b.set("visit_threshold", Value::Null).unwrap_err();
    assert_eq!(message(e), "unknown strategy field \"visit_threshold\"");
    // Longer than KeyText::CAPACITY: the first 40 bytes, cut at a character.
    let long = "é".repeat(30);
    let e = b.set(&long, Value::Integer(1)).unwrap_err();
    let kept = "é".repeat(20);
    assert_eq!(e.key(), Some(kept.as_str()));
    assert_eq!(message(e), format!("unknown strategy field \"{kept}...\""));
    assert!(KeyText::new(&long).is_truncated());
    assert!(!KeyText::new(&kept).is_truncated());
    assert_eq!(
        b.build(),
        Ok(Strategy::DEFAULT),
        "failed sets change nothing"
    );
}

#[test]
fn repeated_keys_are_rejected_naming_them() {
    let mut b = StrategyBuilder::new();
    b.set("visitThreshold", Value::Null).unwrap();
    let e = b.set("visitThreshold", Value::Integer(2)).unwrap_err();
    assert_eq!(
        e,
        StrategyError::DuplicateField(KeyText::new("visitThreshold"))
    );
    assert_eq!(e.code(), ErrorCode::InvalidStrategy);
    assert_eq!(
        message(e),
        "invalid strategy: \"visitThreshold\" is given twice"
    );
    // The same field under its other names is the same key.
    let e = b
        .set_snake("visit_threshold", Value::Integer(2))
        .unwrap_err();
    assert_eq!(
        message(e),
        "invalid strategy: \"visit_threshold\" is given twice"
    );
    let e = b
        .set_field(Field::VisitThreshold, Value::Integer(2))
        .unwrap_err();
    assert_eq!(
        message(e),
        "invalid strategy: \"visitThreshold\" is given twice"
    );
    b.set("point", Value::Text).unwrap();
    let e = b.set("point", Value::Text).unwrap_err();
    assert_eq!(message(e), "invalid strategy: \"point\" is given twice");
}

#[test]
fn point_is_skipped_when_a_string_or_null() {
    for value in [Value::Text, Value::Null] {
        let mut b = StrategyBuilder::new();
        b.set("point", value).unwrap();
        assert_eq!(b.build(), Ok(Strategy::DEFAULT));
        let mut b = StrategyBuilder::new();
        b.set_snake("point", value).unwrap();
    }
    for value in [Value::Integer(5), Value::NotAnInteger, Value::OutOfRange] {
        let e = StrategyBuilder::new().set("point", value).unwrap_err();
        assert_eq!(e, StrategyError::PointNotAString);
        assert_eq!(e.code(), ErrorCode::InvalidStrategy);
        assert_eq!(e.key(), Some("point"));
        assert_eq!(
            message(e),
            "invalid strategy: \"point\" must be a string or null"
        );
        let e = StrategyBuilder::new()
            .set_snake("point", value)
            .unwrap_err();
        assert_eq!(e, StrategyError::PointNotAString);
    }
}

#[test]
fn build_validates_the_whole_once() {
    let mut b = StrategyBuilder::new();
    // Each value alone is an integer; only together do they break a rule.
    b.set_snake("retry_interval", Value::Integer(20_000))
        .unwrap();
    b.set_field(Field::DelayTime, Value::Integer(10_000))
        .unwrap();
    let e = b.build().unwrap_err();
    assert_eq!(
        e,
        StrategyError::Invalid(Error::InvalidStrategy {
            field: Field::RetryInterval,
            rule: Rule::RetryBeyondDelay
        })
    );
    assert_eq!(
        message(e),
        "invalid strategy: retryInterval must be <= delayTime (and needs a delayTime)"
    );
    let s = Strategy::from_entries([
        ("visitThreshold", Value::Integer(10)),
        ("point", Value::Text),
        ("downgradeRate", Value::from_f64(50.0)),
    ])
    .unwrap();
    assert_eq!((s.visit_threshold, s.downgrade_rate), (10, 50));
    assert_eq!(s.delay_time, -1);
}

#[test]
fn set_names_an_unknown_key() {
    let mut b = StrategyBuilder::new();
    assert_eq!(b.set("tokenBucketSize", 9i64.into()), Ok(()));
    assert_eq!(b.build().map(|s| s.token_bucket_size), Ok(9));
    let e = b.set("tokenBucketSise", 9i64.into()).unwrap_err();
    assert_eq!(message(e), "unknown strategy field \"tokenBucketSise\"");
}
