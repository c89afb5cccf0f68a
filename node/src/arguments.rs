//! The arguments of the native functions arrive as `Unknown` and are checked
//! here: napi-rs's own conversions would throw its statuses
//! (`NumberExpected`, ...), which are no codes of the core, and would turn a
//! lone surrogate into U+FFFD, so that `'\ud800'` and `'\ufffd'` named one
//! point. Every refusal is `SDS_INVALID_ARGUMENT` naming the argument.

use napi::bindgen_prelude::{Object, Unknown};
use napi::{JsString, ValueType};

use crate::errors::{invalid_argument, SdsError};
use crate::time::whole_up_to;

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

/// A JavaScript number (any: the callers check its range and say how).
pub fn number(value: Unknown, what: &str) -> Result<f64, SdsError> {
    if !is(&value, ValueType::Number) {
        return Err(wrong_type(what, "a number", &value));
    }
    // SAFETY: the value is a number.
    unsafe { value.cast::<f64>() }.map_err(|_| wrong_type(what, "a number", &value))
}

/// A point id: an integer that fits 32 bits (the table says whether it
/// names a point).
pub fn point_id(value: Unknown) -> Result<u32, SdsError> {
    let n = number(value, "point id")?;
    match whole_up_to(n, u32::MAX as f64) {
        Some(id) => Ok(id as u32),
        None => Err(invalid_argument(format!(
            "point id must be an integer from 0 to 2^32 - 1, got {n}"
        ))),
    }
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
