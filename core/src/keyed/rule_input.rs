//! A key rule's input: its fields by camelCase name, and why a value was
//! refused (one verdict per input, errors naming the field, as
//! `StrategyBuilder`'s do for points).

use core::fmt;

use crate::error::{write_invalid, ErrorCode};
use crate::strategy_error::KeyText;

/// A field of a key rule.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyField {
    /// `limit`: units per period (rate) or per window.
    Limit,
    /// `periodMs`: the rate's period or the window's length, in ms.
    PeriodMs,
    /// `burst`: units a fresh key may take at once (rate only; default
    /// `limit`).
    Burst,
    /// `exceptions`: named keys with a limit of their own.
    Exceptions,
    /// `windowFromFirstHit` (fixed windows; a flag): a key's window starts
    /// at its first hit that finds none live, instead of at a multiple of
    /// `periodMs`.
    WindowFromFirstHit,
    /// `countRefused` (fixed windows; a flag): a refused call counts too.
    CountRefused,
}

impl KeyField {
    /// Every field.
    pub const ALL: [KeyField; 6] = [
        KeyField::Limit,
        KeyField::PeriodMs,
        KeyField::Burst,
        KeyField::Exceptions,
        KeyField::WindowFromFirstHit,
        KeyField::CountRefused,
    ];

    /// The camelCase name.
    pub const fn json_name(self) -> &'static str {
        match self {
            KeyField::Limit => "limit",
            KeyField::PeriodMs => "periodMs",
            KeyField::Burst => "burst",
            KeyField::Exceptions => "exceptions",
            KeyField::WindowFromFirstHit => "windowFromFirstHit",
            KeyField::CountRefused => "countRefused",
        }
    }

    /// Whether the field is a flag: 0 or 1, or a boolean ([`Value::Bool`](crate::Value::Bool),
    /// which bindings make of their language's booleans).
    pub const fn is_flag(self) -> bool {
        matches!(self, KeyField::WindowFromFirstHit | KeyField::CountRefused)
    }

    /// The field with this camelCase name.
    pub fn from_json_name(name: &str) -> Option<KeyField> {
        KeyField::ALL.into_iter().find(|f| f.json_name() == name)
    }
}

/// Why a key rule's value was rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyRuleBreak {
    /// Not a whole number (a fraction, NaN, a string, a boolean, ...).
    NotAnInteger,
    /// Below 1.
    BelowOne,
    /// Beyond what any rule takes (64-bit values, 2^32 - 1 units,
    /// `periodMs` above 2^40, a fingerprint above 48 bits).
    TooLarge,
    /// A rate of more than one unit per µs (`limit > 1000 × periodMs`).
    RateTooFast,
    /// A rate's burst of more than 2^53 µs of debt.
    BurstTooLong,
    /// Above the kind's counts (fixed window 2^24 - 1, sliding 2^21 - 1).
    AboveCounts,
    /// A window from the first hit whose start and count do not fit the
    /// cell together.
    FirstHitTooWide,
    /// Not given, and the rule needs it.
    Missing,
    /// Given to a kind that has no such field (`burst`: rates only;
    /// `periodMs`: not in flight).
    NotForKind,
    /// More than [`MAX_EXCEPTIONS`](super::MAX_EXCEPTIONS) exceptions, or one
    /// key twice.
    TooManyOrRepeated,
    /// A flag that is not 0 or 1 (`false` or `true`).
    NotAFlag,
    /// `exceptions` that is not a list of `[key, limit]` pairs (the shape a
    /// binding reads from its language's values).
    NotPairs,
}

impl KeyRuleBreak {
    /// The rule as a sentence fragment that follows the field's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            KeyRuleBreak::NotAnInteger => "must be an integer",
            KeyRuleBreak::BelowOne => "must be >= 1",
            KeyRuleBreak::TooLarge => "is too large (units < 2^32, periodMs <= 2^40)",
            KeyRuleBreak::RateTooFast => {
                "is too large for a rate: at most one unit per µs (limit <= 1000 × periodMs)"
            }
            KeyRuleBreak::BurstTooLong => {
                "is too large for a rate: burst × periodMs × 1000 / limit <= 2^53"
            }
            KeyRuleBreak::AboveCounts => {
                "is too large for the kind's counts (fixedWindow < 2^24, slidingWindow < 2^21)"
            }
            KeyRuleBreak::FirstHitTooWide => {
                "is too large for a window from the first hit: \
                 max(11, bits(limit)) + bits(periodMs) <= 49"
            }
            KeyRuleBreak::Missing => "is required",
            KeyRuleBreak::NotForKind => {
                "does not apply to this kind (burst: rate only; periodMs: not inFlight; \
                 windowFromFirstHit, countRefused: fixedWindow only)"
            }
            KeyRuleBreak::TooManyOrRepeated => "holds at most 8 distinct keys",
            KeyRuleBreak::NotAFlag => "must be 0 or 1 (false or true)",
            KeyRuleBreak::NotPairs => "must be a list of [key, limit] pairs",
        }
    }
}

/// Why key rule input was rejected; `Display` is the message every binding
/// shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyRuleError {
    /// A field's value breaks its rule (`SDS_INVALID_STRATEGY`).
    Invalid {
        /// The field.
        field: KeyField,
        /// The rule it breaks.
        rule: KeyRuleBreak,
    },
    /// A name that is no field (`SDS_UNKNOWN_FIELD`).
    UnknownField(KeyText),
    /// A field given twice (`SDS_INVALID_STRATEGY`).
    DuplicateField(KeyText),
    /// A rule without a `kind` (`SDS_INVALID_STRATEGY`).
    KindMissing,
    /// A `kind` that names no kind, or is not text (`SDS_INVALID_STRATEGY`).
    UnknownKind,
}

/// A rule's `kind` member as a binding found it, for
/// [`KeyRuleBuilder::for_kind`](super::KeyRuleBuilder::for_kind).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KindInput<'a> {
    /// No `kind` member, or null.
    Absent,
    /// Text: a kind's name (`rate`, `fixedWindow`, `slidingWindow`,
    /// `inFlight`) or not.
    Text(&'a str),
    /// A value of another type.
    Other,
}

impl KeyRuleError {
    /// The stable code.
    pub const fn code(&self) -> ErrorCode {
        match self {
            KeyRuleError::UnknownField(_) => ErrorCode::UnknownField,
            _ => ErrorCode::InvalidStrategy,
        }
    }

    /// The field or key the error names (a binding's `field` attribute).
    pub fn key(&self) -> &str {
        match self {
            KeyRuleError::Invalid { field, .. } => field.json_name(),
            KeyRuleError::UnknownField(key) | KeyRuleError::DuplicateField(key) => key.as_str(),
            KeyRuleError::KindMissing | KeyRuleError::UnknownKind => "kind",
        }
    }
}

impl fmt::Display for KeyRuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyRuleError::Invalid { field, rule } => {
                write_invalid(f, "key rule", field.json_name(), rule.as_str())
            }
            KeyRuleError::UnknownField(key) => write!(f, "unknown key rule field \"{key}\""),
            KeyRuleError::DuplicateField(key) => {
                write!(f, "invalid key rule: \"{key}\" is given twice")
            }
            KeyRuleError::KindMissing => f.write_str("invalid key rule: kind is required"),
            KeyRuleError::UnknownKind => f.write_str(
                "invalid key rule: kind must be one of rate, fixedWindow, slidingWindow, inFlight",
            ),
        }
    }
}

impl core::error::Error for KeyRuleError {}
