//! `Strategy::from_json`: SDS's strategy JSON, read without allocating and
//! handed pair by pair to the same [`StrategyBuilder`] the bindings use for
//! their dicts and objects, so JSON text follows the rules of
//! `strategy_input.rs` exactly.
//!
//! The grammar is one flat JSON object (RFC 8259). Keys are decoded
//! (`\u0041` and surrogate pairs included; a lone surrogate is malformed).
//! A number's exact decimal value decides its verdict, however it is written.

use crate::strategy::Strategy;
use crate::strategy_error::{KeyText, StrategyError};
use crate::strategy_input::{StrategyBuilder, Value};

impl Strategy {
    /// Parses and validates a strategy from SDS's JSON names, starting from
    /// the defaults: `{"visitThreshold": 10, "delayTime": 20000}`.
    pub fn from_json(text: &str) -> Result<Strategy, StrategyError> {
        let mut parser = Parser { text, at: 0 };
        let mut builder = StrategyBuilder::new();
        parser.object(&mut builder)?;
        parser.skip_space();
        if parser.at != text.len() {
            return Err(parser.syntax("the end of the text"));
        }
        builder.build()
    }
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

/// Exponents are clamped to this while read: one beyond it outweighs the
/// digits of any text (fewer than 2^62), so that the number is out of
/// range or a fraction either way. (A smaller clamp would not do: `1`, a
/// million zeros and `e-1000000` is 1.)
const EXPONENT_CLAMP: i64 = 1 << 62;

impl Parser<'_> {
    fn syntax(&self, expected: &'static str) -> StrategyError {
        self.syntax_at(self.at, expected)
    }

    fn syntax_at(&self, offset: usize, expected: &'static str) -> StrategyError {
        StrategyError::Syntax { offset, expected }
    }

    /// The text from here (empty off a character boundary, where the reader
    /// never stops).
    fn rest(&self) -> &str {
        self.text.get(self.at..).unwrap_or("")
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), StrategyError> {
        self.skip_space();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.syntax(expected))
        }
    }

    fn object(&mut self, builder: &mut StrategyBuilder) -> Result<(), StrategyError> {
        self.expect(b'{', "'{'")?;
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.skip_space();
            let mut key = KeyText::empty();
            self.string(Some(&mut key))?;
            self.expect(b':', "':'")?;
            let value = self.value()?;
            if key.is_truncated() {
                // No strategy name is that long.
                return Err(StrategyError::UnknownField(key));
            }
            builder.set(key.as_str(), value)?;
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

    /// Reads a string, decoding it into `sink` when given (as far as it
    /// holds); escapes are checked either way.
    fn string(&mut self, mut sink: Option<&mut KeyText>) -> Result<(), StrategyError> {
        if self.peek() != Some(b'"') {
            return Err(self.syntax("a string"));
        }
        self.at += 1;
        loop {
            let c = match self.peek() {
                None => return Err(self.syntax("'\"'")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => self.escape()?,
                Some(b) if b < 0x20 => return Err(self.syntax("no control character")),
                Some(_) => {
                    // `at` only ever stops on character boundaries.
                    let c = self.rest().chars().next();
                    let c = c.ok_or_else(|| self.syntax("a character"))?;
                    self.at += c.len_utf8();
                    c
                }
            };
            if let Some(sink) = sink.as_deref_mut() {
                sink.push(c);
            }
        }
    }

    /// One escape, at its backslash.
    fn escape(&mut self) -> Result<char, StrategyError> {
        let start = self.at;
        self.at += 1;
        let simple = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(start),
            _ => return Err(self.syntax("an escape")),
        };
        self.at += 1;
        Ok(simple)
    }

    /// `\uXXXX`, or a surrogate pair `\uD83D\uDE00`, at its backslash.
    fn unicode_escape(&mut self, start: usize) -> Result<char, StrategyError> {
        self.at += 1;
        let unit = self.hex4()?;
        let code = match unit {
            0xDC00..=0xDFFF => {
                return Err(
                    self.syntax_at(start, "no lone low surrogate (a \\uDC00-\\uDFFF escape)")
                )
            }
            0xD800..=0xDBFF => {
                let low_start = self.at;
                let expected = "a low surrogate escape (\\uDC00-\\uDFFF) after a high one";
                if !self.rest().starts_with("\\u") {
                    return Err(self.syntax_at(low_start, expected));
                }
                self.at += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.syntax_at(low_start, expected));
                }
                0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            }
            _ => unit,
        };
        char::from_u32(code).ok_or_else(|| self.syntax_at(start, "a Unicode scalar value"))
    }

    fn hex4(&mut self) -> Result<u32, StrategyError> {
        let mut unit = 0;
        for _ in 0..4 {
            let digit = self.peek().and_then(|b| (b as char).to_digit(16));
            unit = unit * 16 + digit.ok_or_else(|| self.syntax("four hex digits"))?;
            self.at += 1;
        }
        Ok(unit)
    }

    fn value(&mut self) -> Result<Value, StrategyError> {
        self.skip_space();
        match self.peek() {
            Some(b'"') => self.string(None).map(|()| Value::Text),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'{' | b'[') => {
                self.skip_nested()?;
                Ok(Value::NotAnInteger)
            }
            _ => {
                for (word, value) in [
                    ("null", Value::Null),
                    ("true", Value::from(true)),
                    ("false", Value::from(false)),
                ] {
                    if self.rest().starts_with(word) {
                        self.at += word.len();
                        return Ok(value);
                    }
                }
                Err(self.syntax("a value"))
            }
        }
    }

    /// The digits from here, as a byte range.
    fn digits(&mut self) -> (usize, usize) {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        (start, self.at)
    }

    /// A JSON number, sorted by its exact decimal value (no rounding
    /// through a float): whole within `i128`, beyond it, or a fraction.
    fn number(&mut self) -> Result<Value, StrategyError> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let (int_start, int_end) = self.digits();
        let bytes = self.text.as_bytes();
        if int_start == int_end || (int_end - int_start > 1 && bytes[int_start] == b'0') {
            return Err(self.syntax_at(start, "a JSON number"));
        }
        let (mut frac_start, mut frac_end) = (int_end, int_end);
        if self.peek() == Some(b'.') {
            self.at += 1;
            (frac_start, frac_end) = self.digits();
            if frac_start == frac_end {
                return Err(self.syntax("digits after '.'"));
            }
        }
        let mut exponent: i64 = 0;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            let exp_negative = self.peek() == Some(b'-');
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            let (start, end) = self.digits();
            if start == end {
                return Err(self.syntax("exponent digits"));
            }
            for &d in &bytes[start..end] {
                exponent = exponent
                    .saturating_mul(10)
                    .saturating_add(i64::from(d - b'0'))
                    .min(EXPONENT_CLAMP);
            }
            if exp_negative {
                exponent = -exponent;
            }
        }
        // The value is `digits * 10^scale` with the digits of both parts.
        let digits = bytes[int_start..int_end]
            .iter()
            .chain(&bytes[frac_start..frac_end]);
        let mut scale = exponent.saturating_sub((frac_end - frac_start) as i64);
        let significant = digits.skip_while(|&&d| d == b'0');
        let mut mantissa: i128 = 0;
        let mut trailing_zeros = 0i64;
        let mut overflow = false;
        for &d in significant {
            if d == b'0' {
                // Kept aside: trailing zeros only raise the scale.
                trailing_zeros += 1;
                continue;
            }
            for _ in 0..=trailing_zeros {
                mantissa = match mantissa.checked_mul(10) {
                    Some(m) => m,
                    None => {
                        overflow = true;
                        0
                    }
                };
            }
            trailing_zeros = 0;
            mantissa = match mantissa.checked_add(i128::from(d - b'0')) {
                Some(m) => m,
                None => {
                    overflow = true;
                    0
                }
            };
        }
        scale = scale.saturating_add(trailing_zeros);
        if mantissa == 0 && !overflow {
            return Ok(Value::Integer(0));
        }
        if scale < 0 {
            // The last significant digit is not zero: a fraction remains.
            return Ok(Value::NotAnInteger);
        }
        if overflow {
            return Ok(Value::OutOfRange);
        }
        let mut value = mantissa;
        for _ in 0..scale.min(40) {
            match value.checked_mul(10) {
                Some(v) => value = v,
                None => return Ok(Value::OutOfRange),
            }
        }
        Ok(Value::Integer(if negative { -value } else { value }))
    }

    /// Skips a nested array or object (only to report the field's error).
    fn skip_nested(&mut self) -> Result<(), StrategyError> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return Err(self.syntax("the end of a nested value")),
                Some(b'"') => {
                    self.string(None)?;
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
