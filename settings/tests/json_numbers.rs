//! Numbers in settings given as JSON text (C) are the doubles every
//! language's JSON reader gives for the same text: the nearest to the
//! decimal, as Rust's `f64::from_str` reads it. Without serde_json's
//! `float_roundtrip`, `9007199254740993.0` (halfway between 2^53 and
//! 2^53 + 2) was read as 2^53 + 2 where Python, JavaScript and Java read
//! 2^53, and the messages quoting it differed (found by the differential
//! sweep of the four bindings).

use sds_settings::{json, Value};

#[test]
fn a_number_is_the_double_nearest_its_decimal() {
    let decimals = [
        "9007199254740993.0",
        "9007199254740995.0",
        "0.1",
        "0.30000000000000004",
        "2.2250738585072011e-308",
        "1.7976931348623157e308",
        "5e-324",
        "123456789012345678901234567890.0",
        "-0.0",
        "1e-7",
        "0.0005",
    ];
    for decimal in decimals {
        let text = format!(r#"{{"timeout": {decimal}}}"#);
        let pairs = json::pairs(text.as_bytes()).unwrap();
        let want: f64 = decimal.parse().unwrap();
        match pairs[0].1 {
            Value::Float(got) => assert_eq!(got.to_bits(), want.to_bits(), "{decimal}: {got:?}"),
            ref other => panic!("{decimal}: {other:?}"),
        }
    }
}
