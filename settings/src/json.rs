//! Settings given as JSON text, as C passes them (like its strategies): the
//! members of one object become `(key, Value)` pairs in their order, repeats
//! included, so [`crate::Parsed`] refuses a setting given twice here as it
//! does from every other language.

use serde_json::Value as Json;

use crate::Value;

message_error!(
    /// Why a settings text is not a JSON object: the text of the message.
    JsonError
);

/// The members of the JSON object `text` as settings. Text that is not
/// UTF-8, not JSON (serde_json's message, with line and column) or not an
/// object is a [`JsonError`].
pub fn pairs(text: &[u8]) -> Result<Vec<(String, Value)>, JsonError> {
    members(text, "settings")
}

/// The members of the JSON object `text` as pairs, in their order, repeats
/// included; `what` names the text in the messages (`settings`, `key rule`).
pub fn members(text: &[u8], what: &str) -> Result<Vec<(String, Value)>, JsonError> {
    let text = std::str::from_utf8(text)
        .map_err(|e| JsonError(format!("{what}: not UTF-8 (byte {})", e.valid_up_to())))?;
    // Read whole first: it checks the text, and its message names the place.
    let json: Json = serde_json::from_str(text).map_err(|e| JsonError(e.to_string()))?;
    if !json.is_object() {
        return Err(JsonError(format!("{what} must be a JSON object")));
    }
    // Then member by member, since a map would fold repeated keys.
    let mut rest = &text.trim_start()[1..];
    let mut pairs = Vec::new();
    while let Some((key, json, raw, after)) = member(rest) {
        pairs.push((key, wide_integer(raw).unwrap_or_else(|| value(&json))));
        rest = after;
    }
    Ok(pairs)
}

/// A JSON value as a setting's value: integers as integers, other numbers
/// as floats, an object as a type no setting takes.
pub fn value(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(flag) => Value::Bool(*flag),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(int), _) => Value::Int(int.into()),
            (None, Some(int)) => Value::Int(int.into()),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(text) => Value::Text(text.clone()),
        Json::Array(items) => Value::List(items.iter().map(value).collect()),
        Json::Object(_) => Value::Other("object".to_string()),
    }
}

/// An integer written in JSON beyond 64 bits that fits an `i128`, as every
/// other language's reader keeps it (Python's `int`, Java's `BigInteger`),
/// so a message quotes `18446744073709551616`, not `1.8446744073709552e19`;
/// `None` for any other text. serde_json reads such a number as a float.
fn wide_integer(raw: &str) -> Option<Value> {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let int: i128 = raw.parse().ok()?;
    let wide = i64::try_from(int).is_err() && u64::try_from(int).is_err();
    wide.then_some(Value::Int(int))
}

/// The next member of an object read up to `rest` (text already checked
/// as JSON), if any: its key, its value, the value's text, and the text
/// after it.
fn member(rest: &str) -> Option<(String, Json, &str, &str)> {
    let rest = rest.trim_start();
    let (key, rest) = next_value(rest.strip_prefix(',').unwrap_or(rest))?;
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let (value, after) = next_value(rest)?;
    let raw = rest[..rest.len() - after.len()].trim_end();
    Some((key.as_str()?.to_string(), value, raw, after))
}

/// The JSON value at the start of `text` and the text after it.
fn next_value(text: &str) -> Option<(Json, &str)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Json>();
    let value = stream.next()?.ok()?;
    Some((value, &text[stream.byte_offset()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_their_order_and_repeats() {
        let got = pairs(br#" {"a": 1, "b": [true, null, 1.5, "x"], "a": {"c": 2}} "#).unwrap();
        assert_eq!(
            got,
            vec![
                ("a".to_string(), Value::Int(1)),
                (
                    "b".to_string(),
                    Value::List(vec![
                        Value::Bool(true),
                        Value::Null,
                        Value::Float(1.5),
                        Value::Text("x".to_string())
                    ])
                ),
                ("a".to_string(), Value::Other("object".to_string())),
            ]
        );
        assert_eq!(pairs(b"{}").unwrap(), vec![]);
    }

    #[test]
    fn integers_beyond_i64_stay_integers() {
        let got = pairs(br#"{"n": 18446744073709551615, "m": -9223372036854775808}"#).unwrap();
        assert_eq!(got[0].1, Value::Int(u64::MAX.into()));
        assert_eq!(got[1].1, Value::Int(i64::MIN.into()));
        let text = format!(
            r#"{{"a": 18446744073709551616 , "b":-{0}, "c": {0}0, "d": 1e20, "e": 2.0}}"#,
            i128::MAX
        );
        let got = pairs(text.as_bytes()).unwrap();
        assert_eq!(got[0].1, Value::Int(1 << 64));
        assert_eq!(got[1].1, Value::Int(-i128::MAX));
        // Beyond i128, and numbers written as floats, stay floats.
        assert_eq!(got[2].1, Value::Float(i128::MAX as f64 * 10.0));
        assert_eq!(got[3].1, Value::Float(1e20));
        assert_eq!(got[4].1, Value::Float(2.0));
    }

    #[test]
    fn text_that_is_not_one_json_object_is_refused() {
        assert_eq!(
            pairs(b"[1]").unwrap_err().0,
            "settings must be a JSON object"
        );
        assert_eq!(
            pairs(b"{\"a\": \"\xff\"}").unwrap_err().0,
            "settings: not UTF-8 (byte 7)"
        );
        let truncated = pairs(br#"{"a": "#).unwrap_err().0;
        assert!(truncated.contains("line 1 column"), "{truncated}");
        assert!(pairs(br#"{"a": 1} x"#).is_err());
    }
}
