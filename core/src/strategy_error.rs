//! `StrategyError`: why strategy input (JSON text, a dict, an object, a
//! builder) was rejected, with the full message every binding shows.

use core::fmt;

use crate::error::{Error, ErrorCode};
use crate::strategy::POINT_KEY;

/// A key as the caller gave it, kept inline so an error can name it without
/// allocating. Keys longer than [`KeyText::CAPACITY`] bytes keep their first
/// bytes (cut at a character boundary) and show `...` after them; no
/// strategy name is that long.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct KeyText {
    bytes: [u8; KeyText::CAPACITY],
    len: u8,
    truncated: bool,
}

impl KeyText {
    /// The most bytes kept.
    pub const CAPACITY: usize = 40;

    /// An empty key (the JSON reader appends decoded characters to it).
    pub(crate) const fn empty() -> KeyText {
        KeyText {
            bytes: [0; KeyText::CAPACITY],
            len: 0,
            truncated: false,
        }
    }

    /// `key`, cut to [`KeyText::CAPACITY`] bytes.
    pub fn new(key: &str) -> KeyText {
        let mut text = KeyText::empty();
        for c in key.chars() {
            if !text.push(c) {
                break;
            }
        }
        text
    }

    /// Appends `c`; `false` (and marked truncated) once it does not fit.
    pub(crate) fn push(&mut self, c: char) -> bool {
        let len = self.len as usize;
        let width = c.len_utf8();
        match self.bytes.get_mut(len..len + width) {
            Some(room) if !self.truncated => {
                c.encode_utf8(room);
                self.len += width as u8;
                true
            }
            _ => {
                self.truncated = true;
                false
            }
        }
    }

    /// The kept text (the whole key unless [`KeyText::is_truncated`]).
    pub fn as_str(&self) -> &str {
        // Only whole characters are ever pushed, so this never fails.
        core::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or_default()
    }

    /// Whether the key was longer than [`KeyText::CAPACITY`] bytes.
    pub const fn is_truncated(&self) -> bool {
        self.truncated
    }
}

impl fmt::Display for KeyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())?;
        if self.truncated {
            f.write_str("...")?;
        }
        Ok(())
    }
}

impl fmt::Debug for KeyText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// Why strategy input was rejected. Its `Display` is the message every
/// binding shows, word for word; [`StrategyError::code`] is the code.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StrategyError {
    /// A value breaks its field's rule (not an integer, out of range) or the
    /// whole breaks [`crate::Strategy::validate`]: from the builder and the
    /// JSON reader always [`Error::InvalidStrategy`].
    Invalid(Error),
    /// A key that is no strategy name (`SDS_UNKNOWN_FIELD`).
    UnknownField(KeyText),
    /// A key given twice (`SDS_INVALID_STRATEGY`).
    DuplicateField(KeyText),
    /// `"point"` with a value that is neither a string nor null
    /// (`SDS_INVALID_STRATEGY`).
    PointNotAString,
    /// JSON text that is not well-formed, or not one flat object
    /// (`SDS_INVALID_JSON`).
    Syntax {
        /// Byte offset of the problem in the text.
        offset: usize,
        /// What the reader expected there.
        expected: &'static str,
    },
}

impl StrategyError {
    /// The stable code of this error.
    pub const fn code(&self) -> ErrorCode {
        match self {
            StrategyError::Invalid(e) => e.code(),
            StrategyError::UnknownField(_) => ErrorCode::UnknownField,
            StrategyError::DuplicateField(_) | StrategyError::PointNotAString => {
                ErrorCode::InvalidStrategy
            }
            StrategyError::Syntax { .. } => ErrorCode::InvalidJson,
        }
    }

    /// The key the error is about, as given (a binding's `field` attribute):
    /// the field's SDS JSON name, the unknown or repeated key, or `"point"`;
    /// `None` for syntax errors and for errors that are not about one key.
    pub fn key(&self) -> Option<&str> {
        match self {
            StrategyError::Invalid(Error::InvalidStrategy { field, .. }) => Some(field.json_name()),
            StrategyError::Invalid(_) | StrategyError::Syntax { .. } => None,
            StrategyError::UnknownField(key) | StrategyError::DuplicateField(key) => {
                Some(key.as_str())
            }
            StrategyError::PointNotAString => Some(POINT_KEY),
        }
    }
}

impl fmt::Display for StrategyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrategyError::Invalid(e) => e.fmt(f),
            StrategyError::UnknownField(key) => write!(f, "unknown strategy field \"{key}\""),
            StrategyError::DuplicateField(key) => {
                write!(f, "invalid strategy: \"{key}\" is given twice")
            }
            StrategyError::PointNotAString => {
                write!(
                    f,
                    "invalid strategy: \"{POINT_KEY}\" must be a string or null"
                )
            }
            StrategyError::Syntax { offset, expected } => {
                write!(f, "malformed JSON at byte {offset}: expected {expected}")
            }
        }
    }
}

/// Its message includes the wrapped error's: no `source`.
impl core::error::Error for StrategyError {}

impl From<Error> for StrategyError {
    fn from(e: Error) -> Self {
        StrategyError::Invalid(e)
    }
}
