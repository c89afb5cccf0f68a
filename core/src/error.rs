//! The one table of error codes. Every binding maps from it: C returns the
//! numbers, Python raises a subclass per code, Node sets `.code` to the name,
//! Java fills its code enum. Numbers and names are stable: append, never
//! renumber.

use core::fmt;

use crate::layout::LayoutField;
use crate::strategy::Field;

/// Stable identity of an error, shared by every binding: C's `sds_result`
/// (which adds 0 for success), Python's exception classes, Node's and
/// Java's codes. Stable: appended to, never renumbered.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ErrorCode {
    /// A strategy field has a value its rule rejects.
    InvalidStrategy = 1,
    /// A strategy key is not one of the SDS JSON names.
    UnknownField = 2,
    /// Window parameters that cannot form a window.
    InvalidWindow = 3,
    /// A point name of zero bytes.
    EmptyName = 4,
    /// A point name longer than `MAX_NAME_LEN` (256) bytes.
    NameTooLong = 5,
    /// The point table has no free slot for a new name.
    TableFull = 6,
    /// A table capacity of 0 or above `MAX_CAPACITY`, or memory for it
    /// that could not be allocated.
    InvalidCapacity = 7,
    /// An entry that does not belong to this table.
    InvalidEntry = 8,
    /// Text that is not well-formed JSON (or not UTF-8), or JSON of another
    /// shape than asked for.
    InvalidJson = 9,
    /// An argument of the wrong type or outside the values the function
    /// accepts (unknown flag bits or outcome, a zero-length buffer, an
    /// unknown code, settings a service refuses).
    InvalidArgument = 10,
    /// A required pointer or reference was null (C ABI).
    NullArgument = 11,
    /// The object was closed or freed (bindings with an explicit close;
    /// libsds never returns it).
    Closed = 12,
    /// A bug: a panic was caught at the boundary.
    Panic = 13,
    /// A request was downgraded and the caller gave no fallback (the
    /// bindings' `Downgraded` errors; the core itself reports downgrades in
    /// the entry, never as an error).
    Downgraded = 14,
    /// Shared table memory laid out by another build (a different layout
    /// version, capacity, slot size, byte order, ...): never reinterpreted;
    /// the message names the field that differs.
    LayoutMismatch = 15,
    /// A server the call needs (Redis for a cluster's sync now) could not
    /// be reached or failed; nothing was wrong with the arguments (libsds
    /// never waits on a server: a cluster's sync fails in its status).
    Unavailable = 16,
}

/// Writes a stable code table's `ALL` (every value, in code order) and
/// `as_str` (its stable name) from one list, so the two cannot drift.
macro_rules! names {
    ($ty:ident { $($variant:ident => $name:literal),* $(,)? }) => {
        impl $ty {
            /// Every value, in code order.
            pub const ALL: [$ty; [$($name),*].len()] = [$($ty::$variant),*];

            /// The stable name, as every binding shows it (C's constants,
            /// Node's and Python's `code`, SDS's reports).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),*
                }
            }
        }
    };
}
pub(crate) use names;

names!(ErrorCode {
    InvalidStrategy => "SDS_INVALID_STRATEGY",
    UnknownField => "SDS_UNKNOWN_FIELD",
    InvalidWindow => "SDS_INVALID_WINDOW",
    EmptyName => "SDS_EMPTY_NAME",
    NameTooLong => "SDS_NAME_TOO_LONG",
    TableFull => "SDS_TABLE_FULL",
    InvalidCapacity => "SDS_INVALID_CAPACITY",
    InvalidEntry => "SDS_INVALID_ENTRY",
    InvalidJson => "SDS_INVALID_JSON",
    InvalidArgument => "SDS_INVALID_ARGUMENT",
    NullArgument => "SDS_NULL_ARGUMENT",
    Closed => "SDS_CLOSED",
    Panic => "SDS_PANIC",
    Downgraded => "SDS_DOWNGRADED",
    LayoutMismatch => "SDS_LAYOUT_MISMATCH",
    Unavailable => "SDS_UNAVAILABLE",
});

impl ErrorCode {
    /// The stable number (C's `sds_result`; 0 is reserved for success).
    pub const fn as_u32(self) -> u32 {
        self as u32
    }

    /// A one-line description of the code, for messages without details.
    pub const fn description(self) -> &'static str {
        match self {
            ErrorCode::InvalidStrategy => "invalid strategy",
            ErrorCode::UnknownField => "unknown strategy field",
            ErrorCode::InvalidWindow => "invalid window parameters",
            ErrorCode::EmptyName => "point name is empty",
            ErrorCode::NameTooLong => "point name is too long",
            ErrorCode::TableFull => "point table is full",
            ErrorCode::InvalidCapacity => "invalid table capacity",
            ErrorCode::InvalidEntry => "entry does not belong to this table",
            ErrorCode::InvalidJson => "malformed JSON",
            ErrorCode::InvalidArgument => "invalid argument",
            ErrorCode::NullArgument => "null argument",
            ErrorCode::Closed => "used after close",
            ErrorCode::Panic => "internal error (panic caught)",
            ErrorCode::Downgraded => "request downgraded, no fallback given",
            ErrorCode::LayoutMismatch => "shared table has another layout",
            ErrorCode::Unavailable => "a server the call needs is unreachable or failed",
        }
    }

    /// The code with this number, if any.
    pub fn from_u32(n: u32) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_u32() == n)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a strategy field's value was rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// `delayTime` between 0 and 9 999 ms.
    DelayTooShort,
    /// `retryInterval` between 1 and 999 ms.
    RetryTooShort,
    /// `retryInterval` longer than `delayTime`, or set without a delay.
    RetryBeyondDelay,
    /// A percentage above 100 (negative turns the rule off).
    PercentOutOfRange,
    /// A 0/1 switch with another value.
    NotAFlag,
    /// A value that is not an integer (bindings: floats, NaN, strings).
    NotAnInteger,
    /// An integer beyond the range the field can hold.
    OutOfRange,
    /// `slowCallRateThreshold` set without a `timeoutThreshold` > 0 (the bound of a slow call).
    SlowCallWithoutTimeout,
    /// `coldFactor` of 1 or less.
    ColdFactorTooSmall,
    /// `warmUpPeriodSec` of 0.
    ZeroWarmUp,
    /// `maxQueueingTimeMs` above [`crate::strategy::MAX_QUEUEING_MS`].
    QueueTooLong,
    /// Warm-up or pacing without the token-bucket rate they shape.
    ShapingWithoutRate,
    /// A `tokenBucketSize` above the rate with warm-up or pacing, which have no burst.
    BurstWithShaping,
    /// An `adaptiveConcurrency` code that names no algorithm.
    UnknownAlgorithm,
    /// `concurrentThreshold` set together with `adaptiveConcurrency`.
    ThresholdWithAdaptive,
    /// An adaptive limit bound set without `adaptiveConcurrency`.
    NeedsAdaptive,
    /// An adaptive limit of 0.
    LimitBelowOne,
    /// An adaptive limit above [`crate::strategy::MAX_ADAPTIVE_LIMIT`].
    LimitTooLarge,
    /// `adaptiveMaxLimit` below the minimum.
    MaxBelowMin,
    /// `adaptiveInitialLimit` outside the minimum and maximum.
    InitialOutsideLimits,
}

impl Rule {
    /// The rule as a sentence fragment that follows the field's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Rule::DelayTooShort => "must be >= 10000 ms (or negative: no delay)",
            Rule::RetryTooShort => "must be >= 1000 ms when > 0",
            Rule::RetryBeyondDelay => "must be <= delayTime (and needs a delayTime)",
            Rule::PercentOutOfRange => "must be within 0..=100 (or negative: off)",
            Rule::NotAFlag => "must be 0 or 1",
            Rule::NotAnInteger => "must be an integer",
            Rule::OutOfRange => "is out of the 64-bit integer range",
            Rule::SlowCallWithoutTimeout => {
                "needs a timeoutThreshold > 0: the time above which a call is slow"
            }
            Rule::ColdFactorTooSmall => "must be > 1",
            Rule::ZeroWarmUp => "must be >= 1 s (or negative: no warm-up)",
            Rule::QueueTooLong => "must be <= 65535 ms (or negative: no pacing)",
            Rule::ShapingWithoutRate => {
                "needs tokenBucketGeneratedTokensInSecond: the rate it shapes (>= 1 to warm up)"
            }
            Rule::BurstWithShaping => {
                "must not exceed the rate with warmUpPeriodSec or maxQueueingTimeMs (they have no burst)"
            }
            Rule::UnknownAlgorithm => {
                "must be 1 (AIMD), 2 (VEGAS), 3 (GRADIENT2), 4 (GRADIENT) or 5 (KNEE), or negative: off"
            }
            Rule::ThresholdWithAdaptive => {
                "must be negative with adaptiveConcurrency (the limit is found from latency)"
            }
            Rule::NeedsAdaptive => "needs adaptiveConcurrency",
            Rule::LimitBelowOne => "must be >= 1 (or negative: the algorithm's default)",
            Rule::LimitTooLarge => "must be <= 1000000",
            Rule::MaxBelowMin => "must be >= the minimum limit",
            Rule::InitialOutsideLimits => "must be within the minimum and maximum limits",
        }
    }
}

/// Why window parameters were rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WindowRule {
    /// A bucket width of 0 ms.
    ZeroBucketWidth,
    /// A window of 0 buckets.
    ZeroBuckets,
    /// A ring shorter than two windows: the last whole cycle could not be read.
    RingTooShort,
    /// A ring longer than [`crate::window::MAX_RING`] buckets.
    RingTooLong,
}

impl WindowRule {
    /// The rule as a sentence.
    pub const fn as_str(self) -> &'static str {
        match self {
            WindowRule::ZeroBucketWidth => "bucket width must be >= 1 ms",
            WindowRule::ZeroBuckets => "a window needs >= 1 bucket",
            WindowRule::RingTooShort => "the ring must hold >= 2 windows of buckets",
            WindowRule::RingTooLong => "the ring must hold <= 65536 buckets",
        }
    }
}

/// Why an argument at a binding's boundary was rejected. The core owns the
/// rule and its sentence, so every binding reports it alike.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArgumentRule {
    /// A time that is not a whole number of ms within `0..2^64`
    /// ([`crate::time`]).
    Time,
    /// Flag bits that are no [`crate::Flags`] ([`crate::Flags::from_known_bits`]).
    UnknownFlags,
    /// An outcome code other than 0, 1 or 2 ([`crate::Outcome::from_code`]).
    UnknownOutcome,
    /// A ledger row whose length is not the table's capacity
    /// ([`crate::Shared::ledger`], [`crate::PointTable::reclaim`]).
    LedgerRowLength,
}

impl ArgumentRule {
    /// The rule as a sentence.
    pub const fn as_str(self) -> &'static str {
        match self {
            ArgumentRule::Time => "time must be a whole number of ms within 0..2^64",
            ArgumentRule::UnknownFlags => "flags may only hold the pressure-test bit (1)",
            ArgumentRule::UnknownOutcome => "outcome must be 0 (ok), 1 (error) or 2 (abandoned)",
            ArgumentRule::LedgerRowLength => {
                "a ledger row must hold one counter per slot (its length is the capacity)"
            }
        }
    }
}

/// Every error the core returns. `Copy`, allocation-free, and total: each
/// carries enough to name what went wrong. It stays two bytes, so that
/// `Result<Entry, Error>` of the hot path returns in registers; the errors
/// of strategy input, which carry the key's text, are
/// [`crate::StrategyError`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// A field's value breaks its rule.
    InvalidStrategy {
        /// The offending field.
        field: Field,
        /// The rule it breaks.
        rule: Rule,
    },
    /// A key that is not an SDS strategy name (the binding names the key).
    UnknownField,
    /// Window parameters that break a rule.
    InvalidWindow(WindowRule),
    /// A point name of zero bytes.
    EmptyName,
    /// A point name longer than [`crate::MAX_NAME_LEN`] bytes.
    NameTooLong,
    /// No free slot for a new point name among the slots it may take.
    TableFull {
        /// The table's capacity.
        capacity: u32,
    },
    /// A table capacity of zero or above [`crate::MAX_CAPACITY`].
    InvalidCapacity,
    /// An entry from another table (its point index is out of range).
    InvalidEntry,
    /// An argument a binding passed breaks its rule (times, flags, outcomes).
    InvalidArgument(ArgumentRule),
    /// Shared table memory whose layout descriptor differs in this field
    /// (see [`crate::LayoutDescriptor::first_difference`] for the values).
    LayoutMismatch(LayoutField),
}

impl Error {
    /// The stable code of this error.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidStrategy { .. } => ErrorCode::InvalidStrategy,
            Error::UnknownField => ErrorCode::UnknownField,
            Error::InvalidWindow(_) => ErrorCode::InvalidWindow,
            Error::EmptyName => ErrorCode::EmptyName,
            Error::NameTooLong => ErrorCode::NameTooLong,
            Error::TableFull { .. } => ErrorCode::TableFull,
            Error::InvalidCapacity => ErrorCode::InvalidCapacity,
            Error::InvalidEntry => ErrorCode::InvalidEntry,
            Error::InvalidArgument(_) => ErrorCode::InvalidArgument,
            Error::LayoutMismatch(_) => ErrorCode::LayoutMismatch,
        }
    }

    /// The stable name of this error's code.
    pub const fn as_str(&self) -> &'static str {
        self.code().as_str()
    }
}

/// The message of a field that breaks its rule, in a strategy or a key
/// rule: "invalid {what}: {field} {rule}".
pub(crate) fn write_invalid(
    f: &mut fmt::Formatter<'_>,
    what: &str,
    field: &str,
    rule: &str,
) -> fmt::Result {
    write!(f, "invalid {what}: {field} {rule}")
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidStrategy { field, rule } => {
                write_invalid(f, "strategy", field.json_name(), rule.as_str())
            }
            Error::InvalidWindow(rule) => write!(f, "invalid window: {}", rule.as_str()),
            Error::InvalidArgument(rule) => f.write_str(rule.as_str()),
            Error::LayoutMismatch(field) => {
                write!(
                    f,
                    "shared table has another layout: {} differs",
                    field.as_str()
                )
            }
            Error::NameTooLong => write!(
                f,
                "point name is too long (at most {} bytes)",
                crate::MAX_NAME_LEN
            ),
            Error::TableFull { capacity } => {
                write!(f, "point table is full (capacity {capacity})")
            }
            Error::InvalidCapacity => write!(
                f,
                "table capacity must be within 1..={}",
                crate::MAX_CAPACITY
            ),
            other => f.write_str(other.code().description()),
        }
    }
}

impl core::error::Error for Error {}
