//! `KeyRule`: what a key table limits, built from (camelCase name, value)
//! pairs through [`KeyRuleBuilder`], one verdict per input (the fields and
//! errors: rule_input.rs).

use crate::strategy_error::KeyText;
use crate::strategy_input::Value;

use super::hash::{fingerprint, hash, FINGERPRINT_BITS};
use super::rule_input::{KeyField, KeyRuleBreak, KeyRuleError, KindInput};

/// The most named keys with a limit of their own in one rule.
pub const MAX_EXCEPTIONS: usize = 8;
/// The longest period or window, in ms (about 34 years).
pub const MAX_PERIOD_MS: u64 = 1 << 40;
/// The largest burst of a rate, in µs of debt (`burst × periodMs × 1000 /
/// limit`): 2^53 µs, about 285 years.
const MAX_CAPACITY_US: u64 = 1 << 53;

/// What a rule counts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyRuleKind {
    /// `"rate"`: `limit` per `periodMs`, up to `burst` at once (GCRA).
    Rate,
    /// `"fixedWindow"`: `limit` per window of `periodMs`, windows aligned
    /// to multiples of `periodMs` (or, `windowFromFirstHit`, starting at a
    /// key's first hit).
    FixedWindow,
    /// `"slidingWindow"`: the sliding-window counter, `limit` per
    /// `periodMs` with the previous window weighted by its overlap.
    SlidingWindow,
    /// `"inFlight"`: at most `limit` units held at once per key (nginx
    /// `limit_conn`), taken by a decision and given back by
    /// [`crate::keyed::KeyTable::release`]; no period.
    InFlight,
}

impl KeyRuleKind {
    /// Every kind.
    pub const ALL: [KeyRuleKind; 4] = [
        KeyRuleKind::Rate,
        KeyRuleKind::FixedWindow,
        KeyRuleKind::SlidingWindow,
        KeyRuleKind::InFlight,
    ];

    /// The camelCase name bindings and JSON use.
    pub const fn as_str(self) -> &'static str {
        match self {
            KeyRuleKind::Rate => "rate",
            KeyRuleKind::FixedWindow => "fixedWindow",
            KeyRuleKind::SlidingWindow => "slidingWindow",
            KeyRuleKind::InFlight => "inFlight",
        }
    }

    /// The kind with this name.
    pub fn from_name(name: &str) -> Option<KeyRuleKind> {
        KeyRuleKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The largest `limit` the kind's state holds.
    pub const fn max_limit(self) -> u32 {
        match self {
            KeyRuleKind::Rate | KeyRuleKind::InFlight => u32::MAX,
            KeyRuleKind::FixedWindow => (1 << 24) - 1,
            KeyRuleKind::SlidingWindow => (1 << MAX_SLIDING_COUNT_BITS) - 1,
        }
    }
}

/// Bits of a sliding window's count at most: its lap keeps 12 bits.
const MAX_SLIDING_COUNT_BITS: u32 = 21;

/// The limits one key decides by: the rule's, or its exception's.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Quota {
    pub(crate) limit: u32,
    pub(crate) burst: u32,
    pub(crate) period_ms: u64,
    /// Rate: µs between two units (T).
    pub(crate) emission_us: u64,
    /// Rate: µs of debt a full burst is (burst × T).
    pub(crate) capacity_us: u64,
    /// Windows counted in a width of their own (fixed from the first hit,
    /// sliding): the bits of one count (window.rs).
    pub(crate) count_bits: u32,
    /// Fixed windows: `windowFromFirstHit`.
    pub(crate) from_first_hit: bool,
    /// Fixed windows: `countRefused`.
    pub(crate) count_refused: bool,
}

/// Bits of `v` (`bits(0) = 0`).
const fn bits(v: u64) -> u32 {
    u64::BITS - v.leading_zeros()
}

impl Quota {
    fn new(
        kind: KeyRuleKind,
        limit: u32,
        burst: u32,
        period_ms: u64,
        flags: [bool; 2],
    ) -> Result<Quota, Misfit> {
        let emission_us = period_ms * 1000 / limit as u64;
        let capacity_us = emission_us.saturating_mul(burst as u64);
        let [from_first_hit, count_refused] = flags;
        let count_bits = match kind {
            KeyRuleKind::FixedWindow if from_first_hit => (bits(limit as u64) + 1).max(12),
            KeyRuleKind::SlidingWindow => bits(limit as u64).max(16),
            _ => 0,
        };
        let misfit = match kind {
            KeyRuleKind::Rate if emission_us < 1 => Some(Misfit::Limit(KeyRuleBreak::RateTooFast)),
            KeyRuleKind::Rate if capacity_us > MAX_CAPACITY_US => Some(Misfit::Burst),
            KeyRuleKind::Rate | KeyRuleKind::InFlight => None,
            _ if limit > kind.max_limit() => Some(Misfit::Limit(KeyRuleBreak::AboveCounts)),
            // 2^t ≥ 16 W: t time bits beside the count (window.rs).
            KeyRuleKind::FixedWindow if from_first_hit && count_bits + bits(period_ms) + 4 > 54 => {
                Some(Misfit::Limit(KeyRuleBreak::FirstHitTooWide))
            }
            _ => None,
        };
        if let Some(misfit) = misfit {
            return Err(misfit);
        }
        Ok(Quota {
            limit,
            burst,
            period_ms,
            emission_us,
            capacity_us,
            count_bits,
            from_first_hit,
            count_refused,
        })
    }
}

/// Why a quota does not fit its kind's state, and whose value is to blame.
enum Misfit {
    /// The limit (or the exception's), for this reason.
    Limit(KeyRuleBreak),
    /// The burst: a rate's debt above 2^53 µs.
    Burst,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct Exception {
    /// The key's fingerprint (hash.rs): cells name keys by it.
    fingerprint: u64,
    quota: Quota,
}

/// A named key of a rule as the rule keeps it: the key's fingerprint (the
/// table keeps no key bytes; [`key_fingerprint`]) and its own limit. Given
/// back to [`KeyRuleBuilder::except_fingerprint`], it rebuilds the rule
/// (a process reading a rule back from a shared file).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeyException {
    /// The key's 48-bit fingerprint (never 0).
    pub fingerprint: u64,
    /// Its own `limit`.
    pub limit: u32,
}

/// The fingerprint a table and a rule know `key` by: 48 bits, never 0.
pub fn key_fingerprint(key: &[u8]) -> u64 {
    fingerprint(hash(key))
}

/// A validated rule: its kind, the default quota, and up to
/// [`MAX_EXCEPTIONS`] named keys with their own `limit` (their burst scaled
/// in proportion, at least 1). `Copy` plain data.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeyRule {
    kind: KeyRuleKind,
    quota: Quota,
    exceptions: [Option<Exception>; MAX_EXCEPTIONS],
}

impl KeyRule {
    /// The kind.
    pub const fn kind(&self) -> KeyRuleKind {
        self.kind
    }

    /// `limit`.
    pub const fn limit(&self) -> u32 {
        self.quota.limit
    }

    /// `periodMs`.
    pub const fn period_ms(&self) -> u64 {
        self.quota.period_ms
    }

    /// `burst` (windows: the limit).
    pub const fn burst(&self) -> u32 {
        self.quota.burst
    }

    /// `windowFromFirstHit` (fixed windows).
    pub const fn window_from_first_hit(&self) -> bool {
        self.quota.from_first_hit
    }

    /// `countRefused` (fixed windows).
    pub const fn count_refused(&self) -> bool {
        self.quota.count_refused
    }

    /// Where `increment` stops a key's count (it stays there until its
    /// window ends): `2^c − 1` for the count's `c` bits (mod.rs, "Counts,
    /// as stores keep them"); `None` for a rate or in flight.
    pub const fn count_cap(&self) -> Option<u64> {
        match self.kind {
            KeyRuleKind::FixedWindow if !self.quota.from_first_hit => {
                Some(KeyRuleKind::FixedWindow.max_limit() as u64)
            }
            KeyRuleKind::FixedWindow | KeyRuleKind::SlidingWindow => {
                Some((1 << self.quota.count_bits) - 1)
            }
            KeyRuleKind::Rate | KeyRuleKind::InFlight => None,
        }
    }

    /// The `limit` of a `fixedWindow` with `windowFromFirstHit` of
    /// `period_ms` that only counts for a store (Python `limits`,
    /// express-rate-limit, @fastify/rate-limit: the library compares the
    /// count with its own limit): `2^20 − 1`, so counts go to `2^21 − 1`,
    /// or less for windows longer than `2^29` ms (6 days), whose start
    /// needs more of the state's bits; `None` when no limit fits (a window
    /// of `2^38` ms or more).
    pub const fn counting_limit(period_ms: u64) -> Option<u32> {
        // c = max(12, bits(L) + 1) count bits and c + bits(W) + 4 <= 54
        // (Quota::new): bits(L) <= 49 - bits(W), and 12 + bits(W) + 4 <= 54.
        let room = 49 - bits(period_ms) as i64;
        let limit_bits = if room < 20 { room } else { 20 };
        if limit_bits < 11 || period_ms == 0 || period_ms > MAX_PERIOD_MS {
            return None;
        }
        Some((1 << limit_bits) - 1)
    }

    /// The named keys with a limit of their own, in the order given.
    pub fn exceptions(&self) -> impl Iterator<Item = KeyException> + '_ {
        self.exceptions.iter().map_while(|e| {
            e.map(|e| KeyException {
                fingerprint: e.fingerprint,
                limit: e.quota.limit,
            })
        })
    }

    /// A rule from (camelCase name, value) pairs, through [`KeyRuleBuilder`].
    pub fn from_entries<'k>(
        kind: KeyRuleKind,
        entries: impl IntoIterator<Item = (&'k str, Value)>,
    ) -> Result<KeyRule, KeyRuleError> {
        let mut builder = KeyRuleBuilder::new(kind);
        for (key, value) in entries {
            builder.set(key, value)?;
        }
        builder.build()
    }

    /// The quota of the key with this fingerprint.
    #[inline]
    pub(crate) fn quota_of(&self, fingerprint: u64) -> &Quota {
        self.exceptions
            .iter()
            .map_while(Option::as_ref)
            .find(|e| e.fingerprint == fingerprint)
            .map_or(&self.quota, |e| &e.quota)
    }
}

/// Builds a [`KeyRule`] of one kind from (camelCase name, value) pairs and
/// named exceptions; each call checks its input at once, `build` the whole.
///
/// ```
/// use sds_core::keyed::{KeyRuleBuilder, KeyRuleKind};
/// use sds_core::Value;
///
/// let mut builder = KeyRuleBuilder::new(KeyRuleKind::Rate);
/// builder.set("limit", Value::from(10i64)).unwrap();
/// builder.set("periodMs", Value::from(1000i64)).unwrap();
/// builder.set("burst", Value::from(20i64)).unwrap();
/// builder.except(b"partner-42", Value::from(100i64)).unwrap();
/// let rule = builder.build().unwrap();
/// assert_eq!((rule.limit(), rule.burst()), (10, 20));
/// let e = builder.set("limit", Value::from_f64(1.5)).unwrap_err();
/// assert_eq!(e.to_string(), r#"invalid key rule: "limit" is given twice"#);
/// ```
#[derive(Copy, Clone, Debug)]
pub struct KeyRuleBuilder {
    kind: KeyRuleKind,
    /// By `KeyField as usize` (`exceptions` unused).
    values: [Option<i64>; KeyField::ALL.len()],
    given: u8,
    exceptions: [Option<(u64, i64)>; MAX_EXCEPTIONS],
}

impl KeyRuleBuilder {
    /// A builder for the kind a rule's `kind` member names, as a binding
    /// read it from its language's values (one verdict for a missing,
    /// unknown or non-text kind in every binding).
    pub fn for_kind(kind: KindInput<'_>) -> Result<KeyRuleBuilder, KeyRuleError> {
        match kind {
            KindInput::Absent => Err(KeyRuleError::KindMissing),
            KindInput::Text(name) => KeyRuleKind::from_name(name)
                .map(KeyRuleBuilder::new)
                .ok_or(KeyRuleError::UnknownKind),
            KindInput::Other => Err(KeyRuleError::UnknownKind),
        }
    }

    /// The error a binding reports for `exceptions` that are not a list of
    /// `[key, limit]` pairs.
    pub const fn not_pairs() -> KeyRuleError {
        KeyRuleError::Invalid {
            field: KeyField::Exceptions,
            rule: KeyRuleBreak::NotPairs,
        }
    }

    /// A builder for a rule of `kind`, no field given.
    pub const fn new(kind: KeyRuleKind) -> KeyRuleBuilder {
        KeyRuleBuilder {
            kind,
            values: [None; KeyField::ALL.len()],
            given: 0,
            exceptions: [None; MAX_EXCEPTIONS],
        }
    }

    /// Sets the field with camelCase name `key` (`limit`, `periodMs`,
    /// `burst`, and the flags `windowFromFirstHit`, `countRefused`); null
    /// leaves it unset.
    pub fn set(&mut self, key: &str, value: Value) -> Result<(), KeyRuleError> {
        let field = match KeyField::from_json_name(key) {
            Some(KeyField::Exceptions) | None => {
                return Err(KeyRuleError::UnknownField(KeyText::new(key)))
            }
            Some(field) => field,
        };
        let bit = 1 << field as u8;
        if self.given & bit != 0 {
            return Err(KeyRuleError::DuplicateField(KeyText::new(key)));
        }
        self.given |= bit;
        let applies = match field {
            KeyField::Burst => self.kind == KeyRuleKind::Rate,
            KeyField::PeriodMs => self.kind != KeyRuleKind::InFlight,
            _ if field.is_flag() => self.kind == KeyRuleKind::FixedWindow,
            _ => true,
        };
        if !applies && value != Value::Null {
            return Err(invalid(field, KeyRuleBreak::NotForKind));
        }
        self.values[field as usize] = match field.is_flag() {
            true => flag(field, value)?,
            false => positive(field, value)?,
        };
        Ok(())
    }

    /// Gives the key `key` a `limit` of its own (Sentinel's
    /// `paramFlowItemList`).
    pub fn except(&mut self, key: &[u8], limit: Value) -> Result<(), KeyRuleError> {
        self.except_fingerprint(key_fingerprint(key), limit)
    }

    /// Gives the key whose fingerprint is `fingerprint` (see
    /// [`KeyRule::exceptions`]) a `limit` of its own.
    pub fn except_fingerprint(&mut self, fp: u64, limit: Value) -> Result<(), KeyRuleError> {
        let field = KeyField::Exceptions;
        let limit = positive(field, limit)?.ok_or(invalid(field, KeyRuleBreak::Missing))?;
        match fp {
            0 => return Err(invalid(field, KeyRuleBreak::BelowOne)),
            fp if fp >> FINGERPRINT_BITS != 0 => {
                return Err(invalid(field, KeyRuleBreak::TooLarge))
            }
            _ => {}
        }
        let free = self
            .exceptions
            .iter_mut()
            .find(|e| e.is_none_or(|(f, _)| f == fp))
            .filter(|e| e.is_none())
            .ok_or(invalid(field, KeyRuleBreak::TooManyOrRepeated))?;
        *free = Some((fp, limit));
        Ok(())
    }

    /// The rule, once the whole is valid.
    pub fn build(&self) -> Result<KeyRule, KeyRuleError> {
        let [limit, period, burst, _, from_first_hit, count_refused] = self.values;
        let flags = [from_first_hit == Some(1), count_refused == Some(1)];
        let limit = limit.ok_or(invalid(KeyField::Limit, KeyRuleBreak::Missing))?;
        let period = match self.kind {
            KeyRuleKind::InFlight => 0,
            _ => period.ok_or(invalid(KeyField::PeriodMs, KeyRuleBreak::Missing))?,
        };
        let burst = burst.unwrap_or(limit);
        let too_large = |field| invalid(field, KeyRuleBreak::TooLarge);
        if period as u64 > MAX_PERIOD_MS {
            return Err(too_large(KeyField::PeriodMs));
        }
        // A burst's fault is the burst's when it is a field of its own (an
        // exception's scaled burst is the exception's).
        let burst_field = |field| match field {
            KeyField::Limit => KeyField::Burst,
            other => other,
        };
        let quota = |limit: i64, burst: i64, field| {
            let l = u32::try_from(limit).map_err(|_| too_large(field))?;
            let b = u32::try_from(burst).map_err(|_| too_large(burst_field(field)))?;
            Quota::new(self.kind, l, b, period as u64, flags).map_err(|misfit| match misfit {
                Misfit::Limit(why) => invalid(field, why),
                Misfit::Burst => invalid(burst_field(field), KeyRuleBreak::BurstTooLong),
            })
        };
        let default = quota(limit, burst, KeyField::Limit)?;
        let mut rule = KeyRule {
            kind: self.kind,
            quota: default,
            exceptions: [None; MAX_EXCEPTIONS],
        };
        let given = self.exceptions.iter().map_while(|e| *e);
        for (slot, (fingerprint, own)) in rule.exceptions.iter_mut().zip(given) {
            let own_burst = (burst as i128 * own as i128 / limit as i128).max(1) as i64;
            let quota = quota(own, own_burst, KeyField::Exceptions)?;
            *slot = Some(Exception { fingerprint, quota });
        }
        Ok(rule)
    }
}

fn invalid(field: KeyField, rule: KeyRuleBreak) -> KeyRuleError {
    KeyRuleError::Invalid { field, rule }
}

/// A flag: 0 or 1 (`None` for null).
fn flag(field: KeyField, value: Value) -> Result<Option<i64>, KeyRuleError> {
    match value {
        Value::Null => Ok(None),
        Value::Integer(v @ (0 | 1)) => Ok(Some(v as i64)),
        Value::Bool(on) => Ok(Some(on as i64)),
        _ => Err(invalid(field, KeyRuleBreak::NotAFlag)),
    }
}

/// A value of 1 or more (`None` for null).
fn positive(field: KeyField, value: Value) -> Result<Option<i64>, KeyRuleError> {
    match value {
        Value::Null => Ok(None),
        Value::Integer(v) if v < 1 => Err(invalid(field, KeyRuleBreak::BelowOne)),
        Value::Integer(v) => i64::try_from(v)
            .map(Some)
            .map_err(|_| invalid(field, KeyRuleBreak::TooLarge)),
        Value::OutOfRange => Err(invalid(field, KeyRuleBreak::TooLarge)),
        Value::NotAnInteger | Value::Bool(_) | Value::Text => {
            Err(invalid(field, KeyRuleBreak::NotAnInteger))
        }
    }
}
