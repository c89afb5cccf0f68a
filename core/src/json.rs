//! `Strategy::from_json`: SDS's strategy JSON, parsed without allocating.
//!
//! Every binding that takes a JSON string (C, Python, Node, Java) calls this,
//! so they accept and reject exactly the same texts. The grammar is a flat
//! JSON object: keys are SDS JSON names with integer values; the `"point"`
//! key (a string or null) names the point and is skipped; any other key is an
//! error naming it. Repeated keys: the last one wins, as in most JSON readers.

use core::fmt;

use crate::error::{Error, ErrorCode, Rule};
use crate::strategy::{Field, Strategy, POINT_KEY};

/// Why a strategy JSON text was rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum JsonError<'a> {
    /// Not well-formed JSON (or not one flat object).
    Syntax {
        /// Byte offset of the problem.
        offset: usize,
        /// What the parser expected there.
        expected: &'static str,
    },
    /// A key that is no SDS strategy name (as written, escapes included).
    UnknownField(&'a str),
    /// A value the strategy rejects (not an integer, out of range, or a rule
    /// of [`Strategy::validate`]).
    Strategy(Error),
}

impl JsonError<'_> {
    /// The stable code of this error.
    pub const fn code(&self) -> ErrorCode {
        match self {
            JsonError::Syntax { .. } => ErrorCode::InvalidJson,
            JsonError::UnknownField(_) => ErrorCode::UnknownField,
            JsonError::Strategy(e) => e.code(),
        }
    }
}

impl fmt::Display for JsonError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Syntax { offset, expected } => {
                write!(f, "malformed JSON at byte {offset}: expected {expected}")
            }
            JsonError::UnknownField(key) => write!(f, "unknown strategy field \"{key}\""),
            JsonError::Strategy(e) => e.fmt(f),
        }
    }
}

impl From<Error> for JsonError<'_> {
    fn from(e: Error) -> Self {
        JsonError::Strategy(e)
    }
}

impl Strategy {
    /// Sets the field named `key` (an SDS JSON name) from a binding's
    /// dict/object entry; the error names an unknown key, as
    /// [`Strategy::from_json`]'s does. (Bindings skip [`POINT_KEY`] first.)
    pub fn set_key<'k>(&mut self, key: &'k str, value: i64) -> Result<(), JsonError<'k>> {
        let field = Field::from_json_name(key).ok_or(JsonError::UnknownField(key))?;
        self.set(field, value);
        Ok(())
    }

    /// Parses and validates a strategy from SDS's JSON names, starting from
    /// the defaults: `{"visitThreshold": 10, "delayTime": 20000}`.
    pub fn from_json(text: &str) -> Result<Strategy, JsonError<'_>> {
        let mut parser = Parser { text, at: 0 };
        let mut strategy = Strategy::DEFAULT;
        parser.object(&mut strategy)?;
        parser.skip_space();
        if parser.at != text.len() {
            return Err(parser.syntax("the end of the text"));
        }
        strategy.validate()?;
        Ok(strategy)
    }
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

/// A value, as far as a strategy cares.
enum Value {
    Integer(i64),
    OutOfRange,
    NotAnInteger,
    Null,
    Text,
}

impl<'a> Parser<'a> {
    fn syntax(&self, expected: &'static str) -> JsonError<'a> {
        JsonError::Syntax {
            offset: self.at,
            expected,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), JsonError<'a>> {
        self.skip_space();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.syntax(expected))
        }
    }

    fn object(&mut self, strategy: &mut Strategy) -> Result<(), JsonError<'a>> {
        self.expect(b'{', "'{'")?;
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.skip_space();
            let key = self.string()?;
            self.expect(b':', "':'")?;
            let value = self.value()?;
            apply(strategy, key, value)?;
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.syntax("',' or '}'")),
            }
        }
    }

    /// A string's raw contents (escapes kept as written).
    fn string(&mut self) -> Result<&'a str, JsonError<'a>> {
        if self.peek() != Some(b'"') {
            return Err(self.syntax("a string"));
        }
        self.at += 1;
        let start = self.at;
        loop {
            match self.peek() {
                None => return Err(self.syntax("'\"'")),
                Some(b'"') => break,
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1
                        }
                        Some(b'u') => {
                            self.at += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|b| b.is_ascii_hexdigit()) {
                                    return Err(self.syntax("four hex digits"));
                                }
                                self.at += 1;
                            }
                        }
                        _ => return Err(self.syntax("an escape")),
                    }
                }
                Some(b) if b < 0x20 => return Err(self.syntax("no control character")),
                Some(_) => self.at += 1,
            }
        }
        let raw = &self.text[start..self.at];
        self.at += 1;
        Ok(raw)
    }

    fn value(&mut self) -> Result<Value, JsonError<'a>> {
        self.skip_space();
        match self.peek() {
            Some(b'"') => self.string().map(|_| Value::Text),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'{' | b'[') => {
                self.skip_nested()?;
                Ok(Value::NotAnInteger)
            }
            _ => {
                for (word, value) in [
                    ("null", Value::Null),
                    ("true", Value::NotAnInteger),
                    ("false", Value::NotAnInteger),
                ] {
                    if self.text[self.at..].starts_with(word) {
                        self.at += word.len();
                        return Ok(value);
                    }
                }
                Err(self.syntax("a value"))
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Result<Value, JsonError<'a>> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let int_start = self.at;
        let n = self.digits();
        if n == 0 || (n > 1 && self.text.as_bytes()[int_start] == b'0') {
            return Err(self.syntax("a JSON number"));
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.syntax("digits after '.'"));
            }
            integral = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.syntax("exponent digits"));
            }
            integral = false;
        }
        if !integral {
            return Ok(Value::NotAnInteger);
        }
        Ok(match self.text[start..self.at].parse::<i64>() {
            Ok(v) => Value::Integer(v),
            Err(_) => Value::OutOfRange,
        })
    }

    /// Skips a nested array or object (only to report the field's error).
    fn skip_nested(&mut self) -> Result<(), JsonError<'a>> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return Err(self.syntax("the end of a nested value")),
                Some(b'"') => {
                    self.string()?;
                    continue;
                }
                Some(b'{' | b'[') => depth += 1,
                Some(b'}' | b']') => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        return Ok(());
                    }
                }
                Some(_) => {}
            }
            self.at += 1;
        }
    }
}

fn apply<'a>(strategy: &mut Strategy, key: &'a str, value: Value) -> Result<(), JsonError<'a>> {
    if key == POINT_KEY {
        return match value {
            Value::Text | Value::Null => Ok(()),
            _ => Err(JsonError::Syntax {
                offset: 0,
                expected: "a string for \"point\"",
            }),
        };
    }
    let field = Field::from_json_name(key).ok_or(JsonError::UnknownField(key))?;
    let invalid = |rule| JsonError::Strategy(Error::InvalidStrategy { field, rule });
    match value {
        Value::Integer(v) => {
            strategy.set(field, v);
            Ok(())
        }
        Value::OutOfRange => Err(invalid(Rule::OutOfRange)),
        _ => Err(invalid(Rule::NotAnInteger)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn names_what_is_wrong() {
        let code = |t: &str| Strategy::from_json(t).unwrap_err().code().as_str();
        assert_eq!(code("{\"visitThresold\": 1}"), "SDS_UNKNOWN_FIELD");
        assert_eq!(code("{\"visitThreshold\": 1.5}"), "SDS_INVALID_STRATEGY");
        assert_eq!(code("{\"visitThreshold\": \"10\"}"), "SDS_INVALID_STRATEGY");
        assert_eq!(
            code("{\"visitThreshold\": 99999999999999999999}"),
            "SDS_INVALID_STRATEGY"
        );
        assert_eq!(code("{\"delayTime\": 5000}"), "SDS_INVALID_STRATEGY");
        for bad in [
            "",
            "{",
            "{\"a\" 1}",
            "{\"visitThreshold\": 1,}",
            "[]",
            "{} x",
            "{\"visitThreshold\": 01}",
            "{\"visitThreshold\": -}",
            "{\"point\": 5}",
        ] {
            assert_eq!(code(bad), "SDS_INVALID_JSON", "{bad:?}");
        }
        let e = Strategy::from_json("{\"visitThresold\": 1}").unwrap_err();
        assert_eq!(
            std::format!("{e}"),
            "unknown strategy field \"visitThresold\""
        );
        let e = Strategy::from_json("{\"downgradeRate\": true}").unwrap_err();
        assert_eq!(
            std::format!("{e}"),
            "invalid strategy: downgradeRate must be an integer"
        );
    }

    #[test]
    fn set_key_names_an_unknown_key() {
        let mut s = Strategy::DEFAULT;
        assert_eq!(s.set_key("tokenBucketSize", 9), Ok(()));
        assert_eq!(s.token_bucket_size, 9);
        let e = s.set_key("tokenBucketSise", 9).unwrap_err();
        assert_eq!(e, JsonError::UnknownField("tokenBucketSise"));
        assert_eq!(
            std::format!("{e}"),
            "unknown strategy field \"tokenBucketSise\""
        );
    }

    #[test]
    fn never_panics_on_any_prefix() {
        let text =
            "{\"point\":\"a\\u00e9\\\"b\",\"visitThreshold\":[1,{\"x\":2}],\"delayTime\":1e3}";
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
}
