//! `json::pairs` against an oracle: serde_json's own reader, visited member
//! by member (a map would fold repeated keys), says what an object's
//! members are; anything it refuses must be refused.
//!
//! The properties run `PROPTEST_CASES` cases each (a few hundred by
//! default); run them long with e.g. `PROPTEST_CASES=100000`.

use std::fmt;

use proptest::prelude::*;
use sds_settings::json::pairs;
use sds_settings::Value;
use sds_testkit::{json_nesting, json_object, mutate, proptest_config as config, JSON_PIECES};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A value as the oracle reads it: what serde_json's reader hands a visitor.
struct Oracle(Value);

/// The top of a text: an object's members in order, or something else.
enum Top {
    Object(Vec<(String, Value)>),
    Other,
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Oracle;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Oracle, E> {
        Ok(Oracle(Value::Null))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Oracle, E> {
        Ok(Oracle(Value::Bool(b)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Oracle, E> {
        Ok(Oracle(Value::Int(v.into())))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Oracle, E> {
        Ok(Oracle(Value::Int(v.into())))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Oracle, E> {
        Ok(Oracle(Value::Float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Oracle, E> {
        Ok(Oracle(Value::Text(v.to_string())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Oracle, A::Error> {
        let mut items = Vec::new();
        while let Some(Oracle(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Oracle(Value::List(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Oracle, A::Error> {
        // Read, not skipped: serde_json skips a number without its range
        // check (`1e400`).
        while map.next_entry::<String, Oracle>()?.is_some() {}
        Ok(Oracle(Value::Other("object".to_string())))
    }
}

impl<'de> Deserialize<'de> for Oracle {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Oracle, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut members = Vec::new();
        while let Some((key, Oracle(value))) = map.next_entry::<String, Oracle>()? {
            members.push((key, value));
        }
        Ok(Top::Object(members))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top, A::Error> {
        while seq.next_element::<Oracle>()?.is_some() {}
        Ok(Top::Other)
    }
    fn visit_unit<E>(self) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
        Ok(Top::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Top, E> {
        Ok(Top::Other)
    }
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Top, D::Error> {
        d.deserialize_any(TopVisitor)
    }
}

/// Checks `pairs(text)` against the oracle.
fn check(text: &[u8]) -> Result<(), TestCaseError> {
    let got = pairs(text);
    let Ok(utf8) = std::str::from_utf8(text) else {
        prop_assert!(got.is_err(), "not UTF-8, taken: {:?}", text);
        return Ok(());
    };
    match serde_json::from_str::<Top>(utf8) {
        Ok(Top::Object(members)) => {
            // serde_json reads an integer beyond 64 bits as a float; `pairs`
            // keeps a top-level one that fits an i128 whole (the float is
            // that integer, rounded).
            let got = got.map(|pairs| {
                let wide = |v: &Value| matches!(v, Value::Int(i) if i64::try_from(*i).is_err() && u64::try_from(*i).is_err());
                pairs.into_iter().map(|(k, v)| match v {
                    Value::Int(i) if wide(&v) => (k, Value::Float(i as f64)),
                    v => (k, v),
                }).collect::<Vec<_>>()
            });
            prop_assert_eq!(got, Ok(members), "{:?}", utf8)
        }
        Ok(Top::Other) => prop_assert_eq!(
            got.map_err(|e| e.0),
            Err("settings must be a JSON object".to_string()),
            "{:?}",
            utf8
        ),
        Err(_) => prop_assert!(got.is_err(), "serde_json refuses {:?}, taken", utf8),
    }
    Ok(())
}

/// `s` as a JSON string, each character written plainly or escaped as
/// `seed` chooses.
fn render_string(s: &str, seed: u64) -> String {
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        let choice = (seed >> (i % 32 * 2)) & 3;
        let must_escape = (c as u32) < 0x20 || c == '"' || c == '\\';
        if choice == 0 && !must_escape {
            out.push(c);
        } else if choice == 1 && matches!(c, '"' | '\\' | '/' | '\n' | '\t') {
            out.push('\\');
            out.push(match c {
                '\n' => 'n',
                '\t' => 't',
                c => c,
            });
        } else if choice == 2 && !must_escape {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04X}"));
            }
        }
    }
    out.push('"');
    out
}

fn json_string() -> impl Strategy<Value = String> {
    let text = prop_oneof![
        3 => prop::sample::select(&["url", "timeoutMs", "a", "tls", "servers"][..]).prop_map(str::to_string),
        1 => "[a-z\u{e9}\u{1F600}\"\\\\/\n\t\u{1}]{0,8}",
    ];
    (text, any::<u64>()).prop_map(|(s, seed)| render_string(&s, seed))
}

fn json_number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i128>().prop_map(|v| v.to_string()),
        "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,2})?",
        Just("-0".to_string()),
        Just("18446744073709551616".to_string()),
        Just("-9223372036854775809".to_string()),
    ]
}

fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        json_number(),
        json_string(),
    ];
    json_nesting(leaf, json_string)
}

proptest! {
    #![proptest_config(config(256))]

    /// An object's members, in order, repeats included, each value as the
    /// oracle reads it.
    #[test]
    fn objects_agree_with_the_oracle(text in json_object(json_string(), json_value())) {
        prop_assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok(), "not JSON: {}", text);
        check(text.as_bytes())?;
    }

    /// Broken objects are refused when serde_json refuses them.
    #[test]
    fn broken_objects_agree_with_the_oracle(
        text in json_object(json_string(), json_value()),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<usize>()), 1..4),
    ) {
        check(mutate(&text, &edits, JSON_PIECES).as_bytes())?;
    }

    /// Any bytes at all (UTF-8 or not).
    #[test]
    fn any_bytes_agree_with_the_oracle(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..40),
            "[{}\\[\\]\":,\\\\u0-9eE+\\-. \t\n\r\u{0}-\u{1f}\u{80}-\u{10ffff}]{0,40}".prop_map(String::into_bytes),
        ],
    ) {
        check(&bytes)?;
    }
}

proptest! {
    #![proptest_config(config(24))]

    /// Every prefix of an object.
    #[test]
    fn prefixes_agree_with_the_oracle(text in json_object(json_string(), json_value())) {
        for end in 0..=text.len() {
            check(&text.as_bytes()[..end])?;
        }
    }
}
