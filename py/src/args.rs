//! Checks of the values Python hands in: every wrong type or range becomes
//! `sds.InvalidArgument` (a `TypeError` and `ValueError`), never a panic.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};
use sds_core::{Error, MAX_NAME_LEN};

use crate::errors;

fn type_name(v: &Bound<'_, PyAny>) -> String {
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

/// A `bool` flag; `None` means false.
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
    match v.to_cow() {
        Ok(s) => Ok(s.as_bytes().to_vec()),
        Err(_) => Err(errors::argument(
            v.py(),
            "point must be encodable as UTF-8".to_string(),
        )),
    }
}
