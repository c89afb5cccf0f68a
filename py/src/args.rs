//! Checks of the values Python hands in: every wrong type or range becomes
//! `sds.InvalidArgument` (a `TypeError` and `ValueError`), never a panic.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};
use sds_core::{Error, ErrorCode, MAX_NAME_LEN};

use crate::errors;

pub fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// A Python `int` (not `bool`), or `None`.
pub fn int<'py>(v: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyInt>> {
    if v.is_instance_of::<PyBool>() {
        return Err(errors::argument(
            v.py(),
            format!("{what} must be an int, not bool"),
        ));
    }
    v.cast::<PyInt>().cloned().map_err(|_| {
        errors::argument(
            v.py(),
            format!("{what} must be an int, not {}", type_name(v)),
        )
    })
}

/// A non-negative integer that fits in 64 bits.
pub fn u64_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    int(v, what)?
        .extract::<u64>()
        .map_err(|_| errors::argument(v.py(), format!("{what} must be within 0..2**64")))
}

/// `now_ms`: the given time, or the wall clock for `None`.
#[inline]
pub fn time(v: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    Ok(given_time(v)?.unwrap_or_else(sds_clock::now_ms))
}

/// An optional time argument as given: `None` when the caller left it to
/// the wall clock, which the core then reads only if it needs it.
#[inline]
pub fn given_time(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    match v {
        Some(v) if !v.is_none() => u64_arg(v, "now_ms").map(Some),
        _ => Ok(None),
    }
}

/// A `bool` flag; not given means false (a Python `None` is no bool).
#[inline]
pub fn flag(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<bool> {
    match v {
        None => Ok(false),
        Some(v) => match v.cast::<PyBool>() {
            Ok(b) => Ok(b.is_true()),
            Err(_) => Err(errors::argument(
                v.py(),
                format!("{what} must be a bool, not {}", type_name(v)),
            )),
        },
    }
}

/// A point name: a `str`.
pub fn name<'a, 'py>(v: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyString>> {
    v.cast::<PyString>()
        .map_err(|_| errors::argument(v.py(), format!("point must be a str, not {}", type_name(v))))
}

/// A point name's UTF-8 bytes (a `str` with lone surrogates is rejected).
pub fn name_bytes(v: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    // More characters than the byte limit is too long whatever the encoding:
    // rejected before a huge name is encoded.
    if v.len()? > MAX_NAME_LEN {
        return Err(errors::core(v.py(), Error::NameTooLong));
    }
    Ok(utf8(v, "point name", ErrorCode::InvalidArgument)?
        .as_bytes()
        .to_vec())
}

/// The UTF-8 text of a `str`; one with a lone surrogate (which no UTF-8
/// encodes) raises `code`, naming `what`, the surrogate and where it is.
pub fn utf8<'a>(v: &'a Bound<'_, PyString>, what: &str, code: ErrorCode) -> PyResult<Cow<'a, str>> {
    v.to_cow().map_err(|err| {
        let py = v.py();
        let detail = surrogate_at(err.value(py).as_any()).map_or_else(String::new, |(c, i)| {
            format!(": lone surrogate \\u{c:04x} at index {i}")
        });
        errors::raise(
            py,
            code,
            format!("{what} must be valid Unicode text{detail}"),
            None,
        )
    })
}

/// The code point and index of the lone surrogate a `UnicodeEncodeError`
/// reports.
fn surrogate_at(err: &Bound<'_, PyAny>) -> Option<(u32, usize)> {
    let start: usize = err.getattr("start").ok()?.extract().ok()?;
    let text = err.getattr("object").ok()?;
    let ch = text.get_item(start).ok()?;
    let code: u32 = ch
        .py()
        .import("builtins")
        .ok()?
        .call_method1("ord", (ch,))
        .ok()?
        .extract()
        .ok()?;
    Some((code, start))
}
