//! The life cycle both background services (the console agent and the
//! cluster sync) share in C, written once: settings as JSON text, started on
//! a table into a new opaque handle, the status into a C struct, stopped by
//! `unbox` (each service's `Drop` stops and joins its thread).
//!
//! The settings text becomes the `(key, Value)` pairs of `sds-settings` in
//! one generic conversion, and the service's `from_settings` judges them:
//! every language gets the same verdict and message for one input.

use std::os::raw::c_char;
use std::sync::Arc;

use sds_core::ErrorCode;
use sds_settings::{Fields, Value};
use sds_shm::AnyTable;
use serde_json::Value as Json;

use crate::args::{bytes, input, into_box, out};
use crate::boundary::Failure;
use crate::status::{to_c, CStatus};
use crate::table::{sds_table, table_arc, table_input};

/// Starts a service on `table` with `start`, given the settings in the JSON
/// text `(settings, settings_len)`, into `*out` (written only on success).
///
/// # Safety
/// `table` must be NULL or live, `settings` NULL or point to `settings_len`
/// bytes, `out` NULL or writable.
pub(crate) unsafe fn start<S>(
    table: *const sds_table,
    settings: *const c_char,
    settings_len: usize,
    out: *mut *mut S,
    start: impl FnOnce(Arc<AnyTable>, Vec<(String, Value)>) -> Result<S, Failure>,
) -> Result<(), Failure> {
    table_input(table)?;
    let text = bytes(settings, settings_len, "settings")?;
    into_box(out, || start(table_arc(table), pairs(text)?))
}

/// Writes the status of `service` (a `handle` in messages) to `*out`.
///
/// # Safety
/// `service` must be NULL or live, `out` NULL or writable.
pub(crate) unsafe fn status<S, F: Fields, C: CStatus>(
    service: *const S,
    handle: &'static str,
    out: *mut C,
    status: impl FnOnce(&S) -> F,
) -> Result<(), Failure> {
    let service = input(service, handle)?;
    let out = self::out(out, "out")?;
    out.write(to_c(&status(service)));
    Ok(())
}

/// The members of a JSON object, in their order and repeats included (the
/// settings refuse a setting given twice), as settings.
fn pairs(text: &[u8]) -> Result<Vec<(String, Value)>, Failure> {
    let malformed = |detail: &dyn std::fmt::Display| Failure::new(ErrorCode::InvalidJson, &detail);
    let text = std::str::from_utf8(text).map_err(|e| {
        malformed(&format_args!(
            "settings: not UTF-8 (byte {})",
            e.valid_up_to()
        ))
    })?;
    // Read whole first: serde_json's message names the line and column.
    let json: Json = serde_json::from_str(text).map_err(|e| malformed(&e))?;
    if !json.is_object() {
        return Err(malformed(&"settings must be a JSON object"));
    }
    let mut rest = &text.trim_start()[1..];
    let mut pairs = Vec::new();
    while let Some((key, value, after)) = member(rest) {
        pairs.push((key, setting(value)));
        rest = after;
    }
    Ok(pairs)
}

/// The next member of an object read up to `rest` (valid JSON), if any,
/// and the text after it.
fn member(rest: &str) -> Option<(String, Json, &str)> {
    let rest = rest.trim_start();
    let (key, rest) = next_value(rest.strip_prefix(',').unwrap_or(rest))?;
    let (value, rest) = next_value(rest.trim_start().strip_prefix(':')?)?;
    Some((key.as_str()?.to_string(), value, rest))
}

/// The JSON value at the start of `text` and the text after it.
fn next_value(text: &str) -> Option<(Json, &str)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Json>();
    let value = stream.next()?.ok()?;
    Some((value, &text[stream.byte_offset()..]))
}

/// A JSON value as the setting's value: integers as integers, other
/// numbers as floats, an object as a type no setting takes.
fn setting(json: Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(flag) => Value::Bool(flag),
        Json::Number(n) => match n.as_i64().map(i128::from) {
            Some(int) => Value::Int(int),
            None => n.as_u64().map_or_else(
                || Value::Float(n.as_f64().unwrap_or(f64::NAN)),
                |u| Value::Int(u.into()),
            ),
        },
        Json::String(text) => Value::Text(text),
        Json::Array(items) => Value::List(items.into_iter().map(setting).collect()),
        Json::Object(_) => Value::Other("object".to_string()),
    }
}
