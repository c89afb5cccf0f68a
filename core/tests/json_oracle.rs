//! `Strategy::from_json` against an oracle: serde_json says whether a text is
//! JSON and what its members are, and the builder (`Strategy::from_entries`)
//! says what those members mean. A number's verdict comes from its exact
//! decimal value, worked out here on its text (serde_json would round it
//! through an `f64`).
//!
//! The properties run `PROPTEST_CASES` cases each (a few hundred by
//! default); run them long with e.g. `PROPTEST_CASES=100000`.

use proptest::prelude::*;
use sds_core::{Error, Field, Rule, Strategy as Rules, StrategyError, Value};
use sds_testkit::{json_nesting, json_object, mutate, proptest_config as config, JSON_PIECES};

/// The exact decimal value of a JSON number's `text` (already checked as
/// JSON), as a strategy value: worked out on the digits as text.
fn exact(text: &str) -> Value {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, "0"),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let exp_negative = exponent.starts_with('-');
    let exp_digits = exponent
        .trim_start_matches(['+', '-'])
        .trim_start_matches('0');
    // Beyond 10^30 nothing changes: any non-zero digit is out of range or a
    // fraction long before.
    let exp_abs: i128 = if exp_digits.len() > 30 {
        10i128.pow(30)
    } else if exp_digits.is_empty() {
        0
    } else {
        exp_digits.parse().unwrap()
    };
    let mut scale = if exp_negative { -exp_abs } else { exp_abs } - frac.len() as i128;
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return Value::Integer(0);
    }
    scale += (digits.len() - significant.len()) as i128;
    if scale < 0 {
        return Value::NotAnInteger;
    }
    // i128 has 39 digits at most.
    if significant.len() as i128 + scale > 39 {
        return Value::OutOfRange;
    }
    let whole = format!("{significant}{}", "0".repeat(scale as usize));
    match whole.parse::<i128>() {
        Ok(v) => Value::Integer(if negative { -v } else { v }),
        Err(_) => Value::OutOfRange,
    }
}

/// What the oracle says of a text.
#[derive(Debug)]
enum Oracle {
    /// Not JSON, or not an object: it must be refused.
    Refused,
    /// An object: its members, in order, repeats included.
    Members(Vec<(String, Value)>),
}

const JSON_SPACE: [char; 4] = [' ', '\t', '\n', '\r'];

fn oracle(text: &str) -> Oracle {
    let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
        return Oracle::Refused;
    };
    if !json.is_object() {
        return Oracle::Refused;
    }
    // Member by member, to keep repeats and each value's text.
    let mut rest = text
        .trim_start_matches(JSON_SPACE)
        .strip_prefix('{')
        .unwrap();
    let mut members = Vec::new();
    loop {
        rest = rest.trim_start_matches(JSON_SPACE);
        if rest.starts_with('}') {
            return Oracle::Members(members);
        }
        rest = rest.strip_prefix(',').unwrap_or(rest);
        let (key, _, after) = next_value(rest);
        let after = after
            .trim_start_matches(JSON_SPACE)
            .strip_prefix(':')
            .unwrap();
        let (value, raw, after) = next_value(after);
        let value = match value {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::String(_) => Value::Text,
            serde_json::Value::Array(_) | serde_json::Value::Object(_) => Value::NotAnInteger,
            serde_json::Value::Number(_) => exact(raw),
        };
        members.push((key.as_str().unwrap().to_string(), value));
        rest = after;
    }
}

/// The JSON value at the start of `text` (after spaces), its text, and the
/// text after it.
fn next_value(text: &str) -> (serde_json::Value, &str, &str) {
    let text = text.trim_start_matches(JSON_SPACE);
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
    let value = stream.next().unwrap().unwrap();
    let end = stream.byte_offset();
    (value, &text[..end], &text[end..])
}

/// Checks `from_json(text)` against the oracle.
fn check(text: &str) -> Result<(), TestCaseError> {
    let got = Rules::from_json(text);
    if let Err(StrategyError::Syntax { offset, .. }) = got {
        prop_assert!(offset <= text.len(), "offset {offset} beyond the text");
    }
    match oracle(text) {
        Oracle::Refused => prop_assert!(got.is_err(), "serde_json refuses {text:?}, we took it"),
        Oracle::Members(members) => {
            let want = Rules::from_entries(members.iter().map(|(k, v)| (k.as_str(), *v)));
            prop_assert_eq!(got, want, "{:?}: members {:?}", text, members);
        }
    }
    Ok(())
}

/// Names the builder knows (with ranges of their own), `point`, and keys it
/// does not.
const NAMES: &[&str] = &[
    "visitThreshold",
    "concurrentThreshold",
    "delayTime",
    "retryInterval",
    "downgradeRate",
    "tokenBucketSize",
    "coldFactor",
    "point",
];

/// `s` as a JSON string, each character written plainly or escaped as
/// `seeds` choose.
fn render_string(s: &str, seeds: &[u8]) -> String {
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        let seed = seeds.get(i % seeds.len().max(1)).copied().unwrap_or(0);
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' if seed % 4 == 1 => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        let must_escape = (c as u32) < 0x20 || c == '"' || c == '\\';
        match (seed % 4, short) {
            (0 | 1, Some(short)) => out.push_str(short),
            (0 | 1, None) if !must_escape => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    if seed % 2 == 0 {
                        out.push_str(&format!("\\u{unit:04x}"));
                    } else {
                        out.push_str(&format!("\\u{unit:04X}"));
                    }
                }
            }
        }
    }
    out.push('"');
    out
}

fn key_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(NAMES).prop_map(str::to_string),
        1 => "[a-zA-Z\u{e9}\u{1F600}\"\\\\/\n\u{1}\\[\\]{}]{0,6}",
        1 => "[k\u{e9}\u{1F600}]{38,44}",
    ]
}

fn json_string() -> impl Strategy<Value = String> {
    (key_text(), prop::collection::vec(any::<u8>(), 1..8))
        .prop_map(|(s, seeds)| render_string(&s, &seeds))
}

/// A JSON number for `±digits × 10^pow10`, written as `seed` chooses: the
/// point moved, the exponent shifted, trailing zeros added.
fn spell(negative: bool, digits: &str, pow10: i64, seed: u64) -> String {
    let shift = (seed % 9) as i64 - 4;
    let zeros = ((seed >> 4) % 3) as usize;
    let exp_form = (seed >> 8) % 6;
    let pad = ((seed >> 12) % 3) as usize;
    let q = pow10 - shift;
    let (int, mut frac) = if q >= 0 {
        (format!("{digits}{}", "0".repeat(q as usize)), String::new())
    } else {
        let n = (-q) as usize;
        if digits.len() > n {
            let (i, f) = digits.split_at(digits.len() - n);
            (i.to_string(), f.to_string())
        } else {
            (
                "0".to_string(),
                format!("{}{digits}", "0".repeat(n - digits.len())),
            )
        }
    };
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    frac.push_str(&"0".repeat(zeros));
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    out.push_str(int);
    if !frac.is_empty() {
        out.push('.');
        out.push_str(&frac);
    }
    if shift != 0 || exp_form >= 3 {
        out.push(if exp_form % 2 == 0 { 'e' } else { 'E' });
        if shift < 0 {
            out.push('-');
        } else if exp_form % 3 == 1 {
            out.push('+');
        } else if exp_form % 3 == 2 && shift == 0 {
            out.push('-'); // -0
        }
        out.push_str(&"0".repeat(pad));
        out.push_str(&shift.abs().to_string());
    }
    out
}

/// A number and the value it has: a whole one or a fraction.
fn number() -> impl Strategy<Value = (String, Value)> {
    let whole = prop_oneof![
        -5i128..=5,
        any::<i64>().prop_map(i128::from),
        (0i128..4).prop_map(|d| i128::from(i64::MAX) - 1 + d),
        (0i128..4).prop_map(|d| i128::from(i64::MIN) + 1 - d),
        any::<i128>(),
        1i128..100_000,
    ];
    let whole = (whole, any::<u64>()).prop_map(|(v, seed)| {
        let digits = v.unsigned_abs().to_string();
        let negative = v < 0 || (v == 0 && seed % 5 == 0);
        (spell(negative, &digits, 0, seed), Value::Integer(v))
    });
    let fraction = (any::<bool>(), "[0-9]{0,20}[1-9]", 1i64..30, any::<u64>()).prop_map(
        |(negative, digits, k, seed)| {
            let digits = digits.trim_start_matches('0');
            (spell(negative, digits, -k, seed), Value::NotAnInteger)
        },
    );
    // Long digit strings and big exponents: the oracle works them out.
    let huge = (any::<bool>(), "[0-9]{1,60}", -90i64..90, any::<u64>()).prop_map(
        |(negative, digits, pow, seed)| {
            let digits = digits.trim_start_matches('0');
            let digits = if digits.is_empty() { "0" } else { digits };
            let text = spell(negative, digits, pow, seed);
            let value = exact(&text);
            (text, value)
        },
    );
    prop_oneof![4 => whole, 2 => fraction, 1 => huge]
}

/// Any valid JSON value as text.
fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        number().prop_map(|(text, _)| text),
        json_string(),
    ];
    let nested = json_nesting(leaf.clone(), json_string);
    let deep = (1usize..300, any::<bool>()).prop_map(|(depth, array)| {
        if array {
            format!("{}{}", "[".repeat(depth), "]".repeat(depth))
        } else {
            format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
        }
    });
    prop_oneof![12 => leaf, 4 => nested, 1 => deep]
}

proptest! {
    #![proptest_config(config(256))]

    /// Text serde_json reads as an object gives the builder's verdict on
    /// its members, whatever their spelling.
    #[test]
    fn objects_agree_with_the_oracle(text in json_object(json_string(), json_value())) {
        // The generator writes JSON: serde_json only refuses what nests
        // deeper than its limit (128 with the outer object).
        let deep = text.contains(&"[".repeat(127)) || text.contains(&"{\"a\":".repeat(127));
        prop_assert!(deep || !matches!(oracle(&text), Oracle::Refused), "not JSON: {}", text);
        check(&text)?;
    }

    /// A number's exact value decides: `1e3`, `1000`, `1000.0`, `0.1E+4`.
    #[test]
    fn a_number_is_its_value_however_written(
        key in prop::sample::select(&NAMES[..NAMES.len() - 1]),
        (text, value) in number(),
    ) {
        prop_assert_eq!(exact(&text), value, "oracle on {}", text);
        let got = Rules::from_json(&format!("{{\"{key}\": {text}}}"));
        prop_assert_eq!(got, Rules::from_entries([(key, value)]), "{}", text);
    }

    /// Broken objects: refused when serde_json refuses them, never a panic.
    #[test]
    fn broken_objects_agree_with_the_oracle(
        text in json_object(json_string(), json_value()),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<usize>()), 1..4),
    ) {
        check(&mutate(&text, &edits, JSON_PIECES))?;
    }


    /// Any text at all.
    #[test]
    fn any_text_agrees_with_the_oracle(
        text in prop_oneof![
            any::<String>(),
            "[{}\\[\\]\":,\\\\u0-9a-fA-FeE+\\-. \t\n\r\u{0}-\u{1f}\u{80}-\u{10ffff}]{0,40}",
        ],
    ) {
        check(&text)?;
    }
}

proptest! {
    // Each case checks every prefix: fewer cases.
    #![proptest_config(config(24))]

    /// Every prefix of an object is refused (or, whole, agrees).
    #[test]
    fn prefixes_agree_with_the_oracle(text in json_object(json_string(), json_value())) {
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            check(&text[..end])?;
        }
    }
}

/// Found by reading the parser while writing the oracle: exponents were
/// clamped at a million, which a number with a million digits outweighs.
#[test]
fn a_long_number_outweighs_a_large_exponent() {
    let zeros = "0".repeat(1_000_001);
    for (text, want) in [
        (format!("1{zeros}e-1000001"), Ok(1)),
        (format!("0.{zeros}1e1000003"), Ok(10)),
        (format!("-0.{zeros}5e1000002"), Ok(-5)),
        (format!("1{zeros}e-1000002"), Err(Rule::NotAnInteger)),
        (
            format!("0.{zeros}1e99999999999999999999"),
            Err(Rule::OutOfRange),
        ),
        (
            format!("1{zeros}e-99999999999999999999"),
            Err(Rule::NotAnInteger),
        ),
    ] {
        let got = Rules::from_json(&format!("{{\"visitThreshold\": {text}}}"));
        let want = want.map_err(|rule| {
            StrategyError::Invalid(Error::InvalidStrategy {
                field: Field::VisitThreshold,
                rule,
            })
        });
        assert_eq!(got.map(|s| s.visit_threshold), want, "{}...", &text[..8]);
    }
}
