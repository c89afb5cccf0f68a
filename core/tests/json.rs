//! `Strategy::from_json`: the JSON text form of the strategy input path.

use sds_core::{Error, ErrorCode, Field, Rule, Strategy, StrategyError};

fn err(text: &str) -> StrategyError {
    Strategy::from_json(text).unwrap_err()
}

fn visit(text: &str) -> Result<i64, StrategyError> {
    Strategy::from_json(text).map(|s| s.visit_threshold)
}

fn invalid(field: Field, rule: Rule) -> StrategyError {
    StrategyError::Invalid(Error::InvalidStrategy { field, rule })
}

#[test]
fn parses_sds_names_and_skips_the_point() {
    let s = Strategy::from_json(
        " {\"point\": \"order.pay\", \"visitThreshold\": 10,\n \"delayTime\": 20000, \"retryInterval\": 1000, \"downgradeRate\": -1} ",
    )
    .unwrap();
    assert_eq!(s.visit_threshold, 10);
    assert_eq!(s.delay_time, 20_000);
    assert_eq!(s.retry_interval, 1000);
    assert_eq!(s.downgrade_rate, -1);
    assert_eq!(s.concurrent_threshold, -1);
    assert_eq!(Strategy::from_json("{}").unwrap(), Strategy::DEFAULT);
}

#[test]
fn each_value_gets_one_verdict() {
    let not_an_integer = invalid(Field::VisitThreshold, Rule::NotAnInteger);
    let out_of_range = invalid(Field::VisitThreshold, Rule::OutOfRange);
    assert_eq!(visit("{\"visitThreshold\": 9007199254740992}"), Ok(1 << 53));
    assert_eq!(
        visit("{\"visitThreshold\": 9007199254740993}"),
        Ok((1 << 53) + 1)
    );
    assert_eq!(
        visit("{\"visitThreshold\": 1152921504606846976}"),
        Ok(1 << 60)
    );
    assert_eq!(
        visit("{\"visitThreshold\": 9223372036854775807}"),
        Ok(i64::MAX)
    );
    assert_eq!(
        visit("{\"visitThreshold\": -9223372036854775808}"),
        Ok(i64::MIN)
    );
    assert_eq!(
        visit("{\"visitThreshold\": 9223372036854775808}"),
        Err(out_of_range)
    );
    assert_eq!(
        visit("{\"visitThreshold\": -9223372036854775809}"),
        Err(out_of_range)
    );
    assert_eq!(
        visit("{\"visitThreshold\": 18446744073709551616}"),
        Err(out_of_range)
    );
    assert_eq!(
        visit("{\"visitThreshold\": 99999999999999999999999999999999999999999999}"),
        Err(out_of_range)
    );
    assert_eq!(visit("{\"visitThreshold\": 1e400}"), Err(out_of_range));
    assert_eq!(visit("{\"visitThreshold\": -1}"), Ok(-1));
    assert_eq!(visit("{\"visitThreshold\": 1.5}"), Err(not_an_integer));
    assert_eq!(visit("{\"visitThreshold\": \"10\"}"), Err(not_an_integer));
    assert_eq!(visit("{\"visitThreshold\": true}"), Err(not_an_integer));
    assert_eq!(visit("{\"visitThreshold\": false}"), Err(not_an_integer));
    assert_eq!(
        visit("{\"visitThreshold\": [1, {\"a\": \"]\"}]}"),
        Err(not_an_integer)
    );
    assert_eq!(
        visit("{\"visitThreshold\": null}"),
        Ok(-1),
        "null: the default"
    );
}

#[test]
fn a_number_is_its_exact_decimal_value() {
    for (text, want) in [
        ("10.0", 10),
        ("1e3", 1000),
        ("1E+3", 1000),
        ("1.5e1", 15),
        ("150e-1", 15),
        ("10e-1", 1),
        ("0.00", 0),
        ("-0", 0),
        ("-0.0e5", 0),
        ("0e-99999999999999999999", 0),
        ("0.0000000000000000000000000000000000000000000001e46", 1),
        ("-9.223372036854775808e18", i64::MIN),
    ] {
        assert_eq!(
            visit(&format!("{{\"visitThreshold\": {text}}}")),
            Ok(want),
            "{text}"
        );
    }
    for text in ["1e-3", "0.5", "1.05e1", "1e-99999999999999999999", "-1.5"] {
        assert_eq!(
            visit(&format!("{{\"visitThreshold\": {text}}}")),
            Err(invalid(Field::VisitThreshold, Rule::NotAnInteger)),
            "{text}"
        );
    }
    for text in [
        "1e19",
        "9.3e18",
        "1e99999999999999999999",
        "12345678901234567890123456789012345678901234567890.5e10",
    ] {
        assert_eq!(
            visit(&format!("{{\"visitThreshold\": {text}}}")),
            Err(invalid(Field::VisitThreshold, Rule::OutOfRange)),
            "{text}"
        );
    }
}

#[test]
fn point_must_be_a_string_or_null() {
    assert_eq!(visit("{\"point\": \"a\", \"visitThreshold\": 1}"), Ok(1));
    assert_eq!(visit("{\"point\": null}"), Ok(-1));
    for bad in ["5", "true", "[\"a\"]", "{}"] {
        let e = err(&format!("{{\"point\": {bad}}}"));
        assert_eq!(e, StrategyError::PointNotAString, "{bad}");
        assert_eq!(e.code(), ErrorCode::InvalidStrategy);
        assert_eq!(
            e.to_string(),
            "invalid strategy: \"point\" must be a string or null"
        );
    }
}

#[test]
fn keys_are_decoded() {
    assert_eq!(visit("{\"visit\\u0054hreshold\": 3}"), Ok(3));
    assert_eq!(visit("{\"\\u0076isitThreshold\": 3}"), Ok(3));
    assert_eq!(visit("{\"visit\\u0054hreshol\\u0064\": 3}"), Ok(3));
    let e = err("{\"a\\n\\\"\\\\\\/\\u00e9\\ud83d\\ude00\": 1}");
    assert_eq!(e.key(), Some("a\n\"\\/é😀"));
    assert_eq!(e.to_string(), "unknown strategy field \"a\n\"\\/é😀\"");
    let e = err("{\"\\uD83D\\uDE00\": 1}");
    assert_eq!(e.key(), Some("😀"), "upper-case hex too");
}

#[test]
fn lone_surrogates_are_malformed() {
    let e = err("{\"\\ud800\": 1}");
    assert_eq!(
        e,
        StrategyError::Syntax {
            offset: 8,
            expected: "a low surrogate escape (\\uDC00-\\uDFFF) after a high one"
        }
    );
    assert_eq!(e.code(), ErrorCode::InvalidJson);
    assert_eq!(
        e.to_string(),
        "malformed JSON at byte 8: expected a low surrogate escape (\\uDC00-\\uDFFF) after a high one"
    );
    // A high surrogate followed by another high one, or by a plain escape.
    assert_eq!(
        err("{\"\\ud800\\ud800\": 1}").code(),
        ErrorCode::InvalidJson
    );
    assert_eq!(
        err("{\"\\ud800\\u0041\": 1}").code(),
        ErrorCode::InvalidJson
    );
    assert_eq!(err("{\"\\ud800\\n\": 1}").code(), ErrorCode::InvalidJson);
    let e = err("{\"point\": \"\\udc00\"}");
    assert_eq!(
        e.to_string(),
        "malformed JSON at byte 11: expected no lone low surrogate (a \\uDC00-\\uDFFF escape)"
    );
}

#[test]
fn repeated_keys_are_rejected_naming_them() {
    let e = err("{\"visitThreshold\": 1, \"visitThreshold\": 2}");
    assert_eq!(e.code(), ErrorCode::InvalidStrategy);
    assert_eq!(e.key(), Some("visitThreshold"));
    assert_eq!(
        e.to_string(),
        "invalid strategy: \"visitThreshold\" is given twice"
    );
    // Even when written differently, or with a null first.
    let e = err("{\"visitThreshold\": null, \"visit\\u0054hreshold\": 2}");
    assert_eq!(
        e.to_string(),
        "invalid strategy: \"visitThreshold\" is given twice"
    );
    let e = err("{\"point\": \"a\", \"point\": \"b\"}");
    assert_eq!(e.to_string(), "invalid strategy: \"point\" is given twice");
}

#[test]
fn syntax_errors_say_where_and_what() {
    let cases = [
        ("", 0, "'{'"),
        ("[]", 0, "'{'"),
        ("{", 1, "a string"),
        ("{\"a\" 1}", 5, "':'"),
        ("{\"visitThreshold\": 1,}", 21, "a string"),
        ("{} x", 3, "the end of the text"),
        ("{\"visitThreshold\": 01}", 19, "a JSON number"),
        ("{\"visitThreshold\": -}", 19, "a JSON number"),
        ("{\"visitThreshold\": 1.}", 21, "digits after '.'"),
        ("{\"visitThreshold\": 1e}", 21, "exponent digits"),
        ("{\"visitThreshold\": NaN}", 19, "a value"),
        ("{\"visitThreshold\": 1", 20, "',' or '}'"),
        ("{\"a\\x\": 1}", 4, "an escape"),
        ("{\"a\\u12\": 1}", 7, "four hex digits"),
        ("{\"a\tb\": 1}", 3, "no control character"),
        ("{\"point\": \"abc", 14, "'\"'"),
        (
            "{\"visitThreshold\": [1, 2",
            24,
            "the end of a nested value",
        ),
    ];
    for (text, offset, expected) in cases {
        assert_eq!(
            err(text),
            StrategyError::Syntax { offset, expected },
            "{text:?}"
        );
    }
    assert_eq!(
        err("{\"a\" 1}").to_string(),
        "malformed JSON at byte 5: expected ':'"
    );
}

#[test]
fn unknown_keys_are_named() {
    let e = err("{\"visitThresold\": 1}");
    assert_eq!(e.code(), ErrorCode::UnknownField);
    assert_eq!(e.to_string(), "unknown strategy field \"visitThresold\"");
    let long = format!("{{\"{}\": 1}}", "k".repeat(41));
    assert_eq!(
        err(&long).to_string(),
        format!("unknown strategy field \"{}...\"", "k".repeat(40))
    );
}

#[test]
fn the_whole_is_validated() {
    assert_eq!(
        err("{\"delayTime\": 5000}"),
        invalid(Field::DelayTime, Rule::DelayTooShort)
    );
    assert_eq!(
        err("{\"downgradeRate\": 101}").to_string(),
        "invalid strategy: downgradeRate must be within 0..=100 (or negative: off)"
    );
}

#[test]
fn never_panics_on_any_prefix() {
    let text = "{\"point\":\"a\\u00e9\\\"b\\ud83d\\ude00\",\"visitThreshold\":[1,{\"x\":\"é\"}],\"delayTime\":1.25e3}";
    for end in 0..=text.len() {
        if text.is_char_boundary(end) {
            let _ = Strategy::from_json(&text[..end]);
        }
    }
    assert_eq!(
        Strategy::from_json(text).unwrap_err().code(),
        ErrorCode::InvalidStrategy
    );
}
