//! The one path from user input to a `Strategy`. JSON text, a Python dict
//! or keywords, a JavaScript object and a Java builder all hand their
//! (key, value) pairs to a [`StrategyBuilder`], so one value gets one verdict
//! and one message everywhere.
//!
//! The rules (SEMANTICS.md §3 names the fields):
//! - A value is taken when it is a whole number within the 64-bit range,
//!   however the language holds it: `10`, `2**60`, a JavaScript `2 ** 60`,
//!   JSON `1e3` or `10.0`. The number decides, not its spelling, because a
//!   JavaScript object cannot tell `10.0` from `10` and JSON readers give
//!   both the same number.
//! - A whole number beyond the 64-bit range (2^63, 2^64, a JavaScript
//!   `Infinity`) breaks [`Rule::OutOfRange`].
//! - A fraction, NaN, a string (even `"10"`), a boolean, an array or an
//!   object breaks [`Rule::NotAnInteger`]. (The reference's JSON reader
//!   coerces some of these; we name the field instead.)
//! - Null (Python `None`, JavaScript `null` and `undefined`) means the key is
//!   omitted: the field keeps its default.
//! - `"point"`, which SDS's strategy objects carry, is skipped when its value
//!   is a string or null, and rejected otherwise.
//! - A key that is no field name is rejected, naming it; so is a key given
//!   twice (only JSON text and builders can repeat one).
//! - The strategy as a whole is validated once, by [`StrategyBuilder::build`].

use crate::error::{Error, Rule};
use crate::strategy::{Field, Strategy, POINT_KEY};
use crate::strategy_error::{KeyText, StrategyError};

/// A value as the rules of strategy input see it. Bindings sort their
/// language's value into one of these; the core decides what each means.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A whole number (Python `int`, Java `long`, a JSON integer, a float
    /// whose value is whole: see [`Value::from_f64`]).
    Integer(i128),
    /// A whole number beyond `i128` (a huge Python `int`), or an infinity.
    OutOfRange,
    /// A fraction, NaN, an array, an object, or any other type that is not
    /// a string or a boolean.
    NotAnInteger,
    /// A boolean (Python `bool`, JavaScript `boolean`, JSON `true`): no
    /// integer for a strategy; a key rule's flags take it as 0 or 1.
    Bool(bool),
    /// A string (accepted only for `"point"`).
    Text,
    /// Null, `None`, `undefined`: the key counts as omitted.
    Null,
}

impl Value {
    /// A floating-point number (a JavaScript number, a Python `float`): a
    /// whole value is an [`Value::Integer`], an infinity or a whole value
    /// beyond `i128` is [`Value::OutOfRange`], a fraction or NaN is
    /// [`Value::NotAnInteger`].
    pub fn from_f64(v: f64) -> Value {
        const TWO_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
        if v.is_nan() {
            Value::NotAnInteger
        } else if !(-TWO_127..TWO_127).contains(&v) {
            Value::OutOfRange
        } else if v as i128 as f64 == v {
            // `as` drops the fraction: only whole numbers survive the trip.
            Value::Integer(v as i128)
        } else {
            Value::NotAnInteger
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Integer(v as i128)
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::Integer(v as i128)
    }
}

impl From<i128> for Value {
    fn from(v: i128) -> Value {
        Value::Integer(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::from_f64(v)
    }
}

/// A boolean is not an integer, even where the language says it is one
/// (Python's `True`): bindings test for booleans before integers.
impl From<bool> for Value {
    fn from(flag: bool) -> Value {
        Value::Bool(flag)
    }
}

/// Builds a [`Strategy`] from (key, value) pairs, starting from the
/// defaults; see the module's rules. Each `set` checks its pair at once (the
/// first error is reported); `build` validates the whole.
///
/// ```
/// use sds_core::{Strategy, StrategyBuilder, Value};
///
/// let mut builder = StrategyBuilder::new();
/// builder.set("visitThreshold", Value::from_f64(1e3)).unwrap();
/// builder.set("point", Value::Text).unwrap();
/// assert_eq!(builder.build().unwrap().visit_threshold, 1000);
/// let e = Strategy::from_json(r#"{"visitThreshold": 1, "visitThreshold": 2}"#).unwrap_err();
/// assert_eq!(e.to_string(), r#"invalid strategy: "visitThreshold" is given twice"#);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StrategyBuilder {
    strategy: Strategy,
    /// Bit `Field::index` for each field given, [`POINT_BIT`] for `"point"`.
    given: u32,
}

const POINT_BIT: u32 = 1 << Field::COUNT;
const _: () = assert!(Field::COUNT < 32);

impl Default for StrategyBuilder {
    fn default() -> StrategyBuilder {
        StrategyBuilder::new()
    }
}

impl StrategyBuilder {
    /// A builder holding the defaults.
    pub const fn new() -> StrategyBuilder {
        StrategyBuilder {
            strategy: Strategy::DEFAULT,
            given: 0,
        }
    }

    /// Sets the field with SDS JSON name `key` (`"visitThreshold"`), or
    /// checks and skips `"point"`.
    pub fn set(&mut self, key: &str, value: Value) -> Result<(), StrategyError> {
        self.set_named(key, Field::from_json_name(key), value)
    }

    /// Sets the field with snake_case name `key` (`"visit_threshold"`, as
    /// Python keywords name it), or checks and skips `"point"`.
    pub fn set_snake(&mut self, key: &str, value: Value) -> Result<(), StrategyError> {
        self.set_named(key, Field::from_snake_name(key), value)
    }

    /// Sets `field` (a binding that maps names itself, such as Java's
    /// builder through [`Field::index`]); errors name its SDS JSON name.
    pub fn set_field(&mut self, field: Field, value: Value) -> Result<(), StrategyError> {
        self.set_named(field.json_name(), Some(field), value)
    }

    fn set_named(
        &mut self,
        key: &str,
        field: Option<Field>,
        value: Value,
    ) -> Result<(), StrategyError> {
        let field = match field {
            Some(field) => field,
            None if key == POINT_KEY => return self.set_point(value),
            None => return Err(StrategyError::UnknownField(KeyText::new(key))),
        };
        self.mark_given(1 << field.index(), key)?;
        let rule = match value {
            Value::Null => return Ok(()),
            Value::Integer(v) => match i64::try_from(v) {
                Ok(v) => {
                    self.strategy.set(field, v);
                    return Ok(());
                }
                Err(_) => Rule::OutOfRange,
            },
            Value::OutOfRange => Rule::OutOfRange,
            Value::NotAnInteger | Value::Bool(_) | Value::Text => Rule::NotAnInteger,
        };
        Err(StrategyError::Invalid(Error::InvalidStrategy {
            field,
            rule,
        }))
    }

    fn set_point(&mut self, value: Value) -> Result<(), StrategyError> {
        self.mark_given(POINT_BIT, POINT_KEY)?;
        match value {
            Value::Text | Value::Null => Ok(()),
            _ => Err(StrategyError::PointNotAString),
        }
    }

    fn mark_given(&mut self, bit: u32, key: &str) -> Result<(), StrategyError> {
        if self.given & bit != 0 {
            return Err(StrategyError::DuplicateField(KeyText::new(key)));
        }
        self.given |= bit;
        Ok(())
    }

    /// The strategy, once [`Strategy::validate`] accepts it.
    pub fn build(&self) -> Result<Strategy, StrategyError> {
        self.strategy.validate()?;
        Ok(self.strategy)
    }
}

impl Strategy {
    /// A validated strategy from (SDS JSON name, value) pairs, through
    /// [`StrategyBuilder`].
    pub fn from_entries<'k>(
        entries: impl IntoIterator<Item = (&'k str, Value)>,
    ) -> Result<Strategy, StrategyError> {
        let mut builder = StrategyBuilder::new();
        for (key, value) in entries {
            builder.set(key, value)?;
        }
        builder.build()
    }
}
