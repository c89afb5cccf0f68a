//! Where the addon checks what JavaScript hands it (the services' options
//! are only converted, in `settings.rs`, and judged by their crates, with
//! [`text`] and [`own_entries`] from here). Arguments arrive as `Unknown`:
//! napi-rs's own conversions would throw its statuses
//! (`NumberExpected`, ...), which are no codes of the core, and would turn a
//! lone surrogate into U+FFFD, so that `'\ud800'` and `'\ufffd'` named one
//! point. A JavaScript value is sorted into the core's [`Value`] once
//! ([`value`]); strategies and times take the core's verdict on it. Every
//! refusal here is `SDS_INVALID_ARGUMENT` naming the argument.

use std::ptr;

use napi::bindgen_prelude::{BigInt, JsObjectValue, Object, Unknown};
use napi::{sys, JsString, JsValue, ValueType};
use sds_core::{capacity_from_i128, time, Value};

use crate::errors::{from_core, from_core_about, invalid_argument, SdsError};

fn type_name(value: &Unknown) -> &'static str {
    match value.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Object) => "an object",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::BigInt) => "a bigint",
        _ => "a value of another type",
    }
}

fn wrong_type(what: &str, expected: &str, value: &Unknown) -> SdsError {
    invalid_argument(format!(
        "{what} must be {expected}, got {}",
        type_name(value)
    ))
}

fn is(value: &Unknown, expected: ValueType) -> bool {
    matches!(value.get_type(), Ok(t) if t == expected)
}

/// Whether an optional argument was left out.
pub fn is_undefined(value: &Unknown) -> bool {
    is(value, ValueType::Undefined)
}

/// `value` as the core's strategy and time rules see it: a number by its
/// value ([`Value::from_f64`]), `undefined` and `null` as omitted, a string
/// as text, anything else (a boolean, a bigint, an object) as no integer.
pub fn value(value: &Unknown) -> Value {
    match value.get_type() {
        // SAFETY: the value is a number.
        Ok(ValueType::Number) => {
            unsafe { value.cast::<f64>() }.map_or(Value::NotAnInteger, Value::from_f64)
        }
        Ok(ValueType::Undefined | ValueType::Null) => Value::Null,
        Ok(ValueType::String) => Value::Text,
        _ => Value::NotAnInteger,
    }
}

/// A time in ms by the core's rule (`sds_core::time`).
#[inline]
pub fn time_number(ms: f64, what: &str) -> Result<u64, SdsError> {
    time::from_f64(ms).map_err(|e| from_core_about(what, e))
}

/// A time in ms, or the addon's clock when it is `undefined`: every call
/// that defaults the time reads this one clock.
pub fn time_or_now(ms: Unknown, what: &str) -> Result<u64, SdsError> {
    if is_undefined(&ms) {
        return Ok(sds_clock::now_ms());
    }
    time::from_value(value(&ms)).map_err(|e| from_core_about(what, e))
}

/// A time in ms that must be given (no clock default), by the core's rule.
pub fn time(ms: Unknown, what: &str) -> Result<u64, SdsError> {
    time::from_value(value(&ms)).map_err(|e| from_core_about(what, e))
}

/// A table capacity: any whole number is judged by the core, so a negative
/// or huge one (2 ** 60, `Infinity`) is `SDS_INVALID_CAPACITY` as 0 is, with
/// the core's message, in every binding; anything else is no integer.
pub fn capacity(n: Unknown) -> Result<usize, SdsError> {
    let whole = match value(&n) {
        Value::Integer(v) => v,
        Value::OutOfRange => i128::MAX,
        _ => return Err(invalid_argument("capacity must be an integer")),
    };
    capacity_from_i128(whole).map_err(from_core)
}

/// A non-negative integer that fits 64 bits (a count, a width).
pub fn count(n: Unknown, what: &str) -> Result<u64, SdsError> {
    match value(&n) {
        Value::Integer(v) if v >= 0 => u64::try_from(v).map_err(|_| not_a_count(what)),
        _ => Err(not_a_count(what)),
    }
}

/// A count of `0..2^64` that may be large: a number as for [`count`] (exact
/// up to 2^53, like every JavaScript number) or a BigInt, which holds any
/// value of the range exactly.
pub fn big_count(n: Unknown, what: &str) -> Result<u64, SdsError> {
    if !is(&n, ValueType::BigInt) {
        return count(n, what);
    }
    // SAFETY: the value is a BigInt.
    let big = unsafe { n.cast::<BigInt>() }.map_err(|_| not_a_big_count(what))?;
    match big.get_u64() {
        (false, v, true) => Ok(v),
        _ => Err(not_a_big_count(what)),
    }
}

fn not_a_big_count(what: &str) -> SdsError {
    invalid_argument(format!(
        "{what} must be a non-negative integer below 2^64 (a number or a BigInt)"
    ))
}

fn not_a_count(what: &str) -> SdsError {
    invalid_argument(format!("{what} must be a non-negative integer"))
}

/// A string that is well-formed UTF-16, as UTF-8: a lone surrogate has no
/// UTF-8 form, and replacing it would merge distinct names.
pub fn text(value: Unknown, what: &str) -> Result<String, SdsError> {
    if !is(&value, ValueType::String) {
        return Err(wrong_type(what, "a string", &value));
    }
    // SAFETY: the value is a string.
    let units = unsafe { value.cast::<JsString>() }
        .and_then(JsString::into_utf16)
        .map_err(|e| invalid_argument(format!("{what}: {}", e.reason)))?;
    // The buffer ends with the terminating NUL.
    let units = units.as_slice();
    let units = units.strip_suffix(&[0]).unwrap_or(units);
    char::decode_utf16(units.iter().copied())
        .collect::<Result<String, _>>()
        .map_err(|e| {
            invalid_argument(format!(
                "{what} must be well-formed UTF-16, got a lone surrogate U+{:04X}",
                e.unpaired_surrogate()
            ))
        })
}

/// The `shared` and `mode` options of a table (points or keys): `None` for
/// a private one, which takes no mode; else the file's name or path and its
/// mode (0o600 unless given; one beyond u32 is refused by the file's open).
pub fn shared_file(shared: Unknown, mode: Unknown) -> Result<Option<(String, u32)>, SdsError> {
    if is_undefined(&shared) {
        if !is_undefined(&mode) {
            return Err(invalid_argument(
                "mode applies to a shared table only (give `shared` too)",
            ));
        }
        return Ok(None);
    }
    let name = text(shared, "shared")?;
    let mode = if is_undefined(&mode) {
        0o600
    } else {
        u32::try_from(count(mode, "mode")?).unwrap_or(u32::MAX)
    };
    Ok(Some((name, mode)))
}

/// A point name (see [`text`]).
pub fn name(value: Unknown) -> Result<String, SdsError> {
    text(value, "point name")
}

/// An object (not a function, not a primitive).
pub fn object<'env>(value: Unknown<'env>, what: &str) -> Result<Object<'env>, SdsError> {
    if !is(&value, ValueType::Object) {
        return Err(wrong_type(what, "an object", &value));
    }
    // SAFETY: the value is an object.
    unsafe { value.cast::<Object>() }.map_err(|_| wrong_type(what, "an object", &value))
}

/// The own enumerable string-keyed properties of `object` in its key order,
/// as `Object.entries` lists them (a strategy, a service's options). A
/// getter that throws leaves its exception pending: the call throws that.
pub fn own_entries<'env>(
    object: &Object<'env>,
    what: &str,
) -> Result<Vec<(String, Unknown<'env>)>, SdsError> {
    let failed = |step: &str| invalid_argument(format!("{what}: {step} failed"));
    let env = object.value().env;
    let mut keys = ptr::null_mut();
    // SAFETY: `object` is a live object of `env`. (napi-rs's own call takes
    // one key filter, not two.)
    let listed = unsafe {
        sys::napi_get_all_property_names(
            env,
            object.value().value,
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut keys,
        )
    };
    if listed != sys::Status::napi_ok {
        return Err(failed("listing its keys"));
    }
    let keys = Object::from_raw(env, keys);
    let len = keys
        .get_array_length_unchecked()
        .map_err(|_| failed("listing its keys"))?;
    (0..len)
        .map(|i| {
            let key: Unknown = keys.get_element(i).map_err(|_| failed("reading a key"))?;
            let value = object
                .get_property_unchecked(key)
                .map_err(|_| failed("reading a value"))?;
            // SAFETY: the keys listed are strings.
            let key = unsafe { key.cast::<String>() }.map_err(|_| failed("reading a key"))?;
            Ok((key, value))
        })
        .collect()
}
