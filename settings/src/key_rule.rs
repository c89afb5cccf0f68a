//! A key table's rule from what a binding's caller gave: (name, value)
//! pairs (a Python dict, a JavaScript object, Java builder calls) or one
//! JSON object (C), read once here so that one input gets one verdict and
//! one message in every language.
//!
//! Names are SDS JSON's camelCase (`periodMs`); their snake_case spelling
//! (`period_ms`, Python's) is the same name, so giving both is a repeat.
//! `kind` (`"rate"`, `"fixedWindow"`, `"slidingWindow"`, `"inFlight"`)
//! picks the core's [`KeyRuleBuilder`] wherever it stands; the other
//! members go to it in their order, and `exceptions`, a list of `[key,
//! limit]` pairs (null: none), to its `except`.

use std::fmt;

use sds_core::keyed::{KeyRule, KeyRuleBuilder, KeyRuleError, KindInput};
use sds_core::{ErrorCode, KeyText, Value as Input};

use crate::json::{self, JsonError};
use crate::{camel_case, Value};

/// Why a rule given as JSON text was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyRuleTextError {
    /// Not UTF-8, not JSON, or not one object.
    Json(JsonError),
    /// A rule the core refuses.
    Rule(KeyRuleError),
}

impl KeyRuleTextError {
    /// The error's code: [`ErrorCode::InvalidJson`] for the text, the
    /// core's for the rule.
    pub fn code(&self) -> ErrorCode {
        match self {
            KeyRuleTextError::Json(_) => ErrorCode::InvalidJson,
            KeyRuleTextError::Rule(e) => e.code(),
        }
    }
}

impl fmt::Display for KeyRuleTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyRuleTextError::Json(e) => e.fmt(f),
            KeyRuleTextError::Rule(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for KeyRuleTextError {}

/// The rule of the JSON object `text`.
pub fn key_rule_json(text: &[u8]) -> Result<KeyRule, KeyRuleTextError> {
    let members = json::members(text, "key rule").map_err(KeyRuleTextError::Json)?;
    key_rule(&members).map_err(KeyRuleTextError::Rule)
}

/// The rule of the `(name, value)` pairs, camelCase names as SDS JSON
/// spells them (`limit`, `periodMs`, `burst`, `windowFromFirstHit`,
/// `countRefused`, `exceptions`).
pub fn key_rule(pairs: &[(String, Value)]) -> Result<KeyRule, KeyRuleError> {
    let pairs: Vec<(String, &Value)> = pairs
        .iter()
        .map(|(name, value)| (camel_case(name), value))
        .collect();
    let mut kinds = pairs.iter().filter(|(name, _)| name == "kind");
    let kind = match (kinds.next(), kinds.next()) {
        (_, Some(_)) => return Err(KeyRuleError::DuplicateField(KeyText::new("kind"))),
        (None | Some((_, Value::Null)), None) => KindInput::Absent,
        (Some((_, Value::Text(name))), None) => KindInput::Text(name),
        (Some(_), None) => KindInput::Other,
    };
    let mut builder = KeyRuleBuilder::for_kind(kind)?;
    for (name, value) in &pairs {
        let value: &Value = value;
        match name.as_str() {
            "kind" => {}
            "exceptions" => except(&mut builder, value)?,
            _ => builder.set(name, input(value))?,
        }
    }
    builder.build()
}

/// Gives the builder the exceptions of `value`, a list of `[key, limit]`
/// pairs (null: none).
fn except(builder: &mut KeyRuleBuilder, value: &Value) -> Result<(), KeyRuleError> {
    let items = match value {
        Value::Null => return Ok(()),
        Value::List(items) => items,
        _ => return Err(KeyRuleBuilder::not_pairs()),
    };
    for item in items {
        let Value::List(pair) = item else {
            return Err(KeyRuleBuilder::not_pairs());
        };
        let [Value::Text(key), limit] = pair.as_slice() else {
            return Err(KeyRuleBuilder::not_pairs());
        };
        builder.except(key.as_bytes(), input(limit))?;
    }
    Ok(())
}

/// A value as the core's rule input.
fn input(value: &Value) -> Input {
    match value {
        Value::Null => Input::Null,
        Value::Int(v) => Input::Integer(*v),
        Value::Float(v) => Input::from_f64(*v),
        Value::Text(_) => Input::Text,
        Value::Bool(flag) => Input::Bool(*flag),
        Value::List(_) | Value::Other(_) => Input::NotAnInteger,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::keyed::KeyRuleKind;

    #[test]
    fn pairs_and_text_give_one_rule() {
        let text =
            br#"{"limit": 10, "kind": "rate", "periodMs": 1000, "exceptions": [["vip", 20]]}"#;
        let from_text = key_rule_json(text).unwrap();
        let pairs = [
            ("limit".to_string(), Value::Int(10)),
            ("kind".to_string(), Value::text("rate")),
            ("periodMs".to_string(), Value::Float(1000.0)),
            (
                "exceptions".to_string(),
                Value::List(vec![Value::List(vec![Value::text("vip"), Value::Int(20)])]),
            ),
        ];
        let from_pairs = key_rule(&pairs).unwrap();
        let snake = [
            ("period_ms".to_string(), Value::Int(1000)),
            pairs[0].clone(),
        ];
        let e = key_rule(&[
            ("kind".into(), Value::text("rate")),
            snake[0].clone(),
            pairs[2].clone(),
        ]);
        assert!(matches!(e, Err(KeyRuleError::DuplicateField(_))), "{e:?}");
        assert_eq!(from_text, from_pairs);
        assert_eq!(from_text.kind(), KeyRuleKind::Rate);
        assert_eq!(from_text.exceptions().count(), 1);
    }

    #[test]
    fn each_refusal_has_its_code() {
        let e = key_rule_json(b"[1]").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidJson);
        assert_eq!(e.to_string(), "key rule must be a JSON object");
        let e = key_rule_json(br#"{"kind": "rate", "kind": "rate"}"#).unwrap_err();
        assert!(matches!(
            e,
            KeyRuleTextError::Rule(KeyRuleError::DuplicateField(_))
        ));
        let e = key_rule(&[
            ("kind".into(), Value::text("rate")),
            ("exceptions".into(), Value::Int(1)),
        ])
        .unwrap_err();
        assert_eq!(e, KeyRuleBuilder::not_pairs());
    }
}
