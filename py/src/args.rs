//! Conversions of the values Python hands in. A strategy value or a time is
//! sorted into the core's `Value` and judged by the core; names and the
//! other arguments are checked here. Every wrong type or range becomes an
//! `sds` error (`InvalidArgument` is a `TypeError` and `ValueError`), never
//! a panic.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use sds_core::{Error, ErrorCode, Flags, Value, MAX_NAME_LEN};

use crate::errors;

pub fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// `v` is of the wrong type: `InvalidArgument`, "`{expected}`, not `{type}`".
#[cold]
pub fn wrong(v: &Bound<'_, PyAny>, expected: &str) -> PyErr {
    errors::argument(v.py(), format!("{expected}, not {}", type_name(v)))
}

/// A Python value as the core's strategy and time rules see it: `None` is
/// null, a `bool` is no integer (tested first: `True` is an `int`), an
/// `int` of any size and a `float` are numbers, a `str` is text.
pub fn value(v: &Bound<'_, PyAny>) -> Value {
    if v.is_none() {
        Value::Null
    } else if v.is_instance_of::<PyBool>() {
        Value::from(true)
    } else if let Ok(int) = v.cast::<PyInt>() {
        match int.extract::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => int.extract::<i128>().map_or(Value::OutOfRange, Value::from),
        }
    } else if let Ok(float) = v.cast::<PyFloat>() {
        Value::from_f64(float.value())
    } else if v.is_instance_of::<PyString>() {
        Value::Text
    } else {
        Value::NotAnInteger
    }
}

/// A `now_ms` argument: a whole number of ms within `0..2**64`, by the
/// core's one rule (`sds_core::time`). `Option<Time>` leaves `None` to the
/// wall clock.
#[derive(Copy, Clone)]
pub struct Time(pub u64);

impl<'a, 'py> FromPyObject<'a, 'py> for Time {
    type Error = PyErr;

    fn extract(v: Borrowed<'a, 'py, PyAny>) -> PyResult<Time> {
        // The common case first: a plain int that fits in 64 bits.
        if v.is_exact_instance_of::<PyInt>() {
            if let Ok(ms) = v.extract::<u64>() {
                return Ok(Time(ms));
            }
        }
        sds_core::time::from_value(value(&v))
            .map(Time)
            .map_err(|e| errors::core(v.py(), e))
    }
}

/// An optional `now_ms` as given: `None` (absent or `None`) leaves it to
/// the wall clock, which the core then reads only if it needs it.
#[inline]
pub fn optional_time(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Time>> {
    match v {
        Some(v) if !v.is_none() => v.extract().map(Some),
        _ => Ok(None),
    }
}

/// The given time, or the wall clock.
#[inline]
pub fn time_or_now(t: Option<Time>) -> u64 {
    t.map_or_else(sds_clock::now_ms, |t| t.0)
}

/// The flags of `pressure_test`: absent is false, else a `bool` (a `None`
/// is none).
#[inline]
pub fn flags(pressure_test: Option<&Bound<'_, PyAny>>) -> PyResult<Flags> {
    let Some(v) = pressure_test else {
        return Ok(Flags::NONE);
    };
    match v.cast::<PyBool>() {
        Ok(b) if b.is_true() => Ok(Flags::PRESSURE_TEST),
        Ok(_) => Ok(Flags::NONE),
        Err(_) => Err(wrong(v, "pressure_test must be a bool")),
    }
}

/// A Python `int` (not `bool`).
pub fn int<'py>(v: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyInt>> {
    match v.cast::<PyInt>() {
        Ok(int) if !v.is_instance_of::<PyBool>() => Ok(int.clone()),
        _ => Err(wrong(v, &format!("{what} must be an int"))),
    }
}

/// A non-negative integer that fits in 64 bits (window parameters, counts).
pub fn u64_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    int(v, what)?
        .extract::<u64>()
        .map_err(|_| errors::argument(v.py(), format!("{what} must be within 0..2**64")))
}

/// A point name: a `str`.
pub fn name<'a, 'py>(v: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyString>> {
    v.cast::<PyString>()
        .map_err(|_| wrong(v, "point must be a str"))
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

/// A file path as `open` takes it: a `str`, or an `os.PathLike` whose
/// `__fspath__` gives one (bytes paths are refused, as everywhere in `sds`);
/// else `InvalidArgument` naming `what`.
pub fn path_text<'py>(v: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyString>> {
    let py = v.py();
    let text = if v.is_instance_of::<PyString>() {
        v.clone()
    } else {
        let fspath = py.import("os")?.getattr("fspath")?;
        fspath.call1((v,)).unwrap_or_else(|_| v.clone())
    };
    let expected = format!("{what} must be a str or an os.PathLike of one");
    text.cast_into::<PyString>()
        .map_err(|_| wrong(v, &expected))
}

/// A table's `shared` and `mode` arguments (`None` values are absent): the
/// shared file's name or path (`path_text`) with the mode to create it
/// with, 0o600 unless given (one that is no u32 reads as 0, which the open
/// refuses like any other); or `None` for a table of this process alone,
/// which takes no mode: a `mode` without `shared` is refused, naming
/// `opener`, the call that opens a shared table.
pub fn shared_file<'py>(
    shared: Option<&Bound<'py, PyAny>>,
    mode: Option<&Bound<'py, PyAny>>,
    opener: &str,
) -> PyResult<Option<(Bound<'py, PyString>, u32)>> {
    let mode = mode.filter(|m| !m.is_none());
    let Some(name_or_path) = shared.filter(|s| !s.is_none()) else {
        return match mode {
            Some(m) => Err(errors::argument(
                m.py(),
                format!("mode is only for a shared table ({opener})"),
            )),
            None => Ok(None),
        };
    };
    let path = path_text(name_or_path, "shared")?;
    let mode = match mode {
        Some(m) => int(m, "mode")?.extract::<u32>().unwrap_or(0),
        None => 0o600,
    };
    Ok(Some((path, mode)))
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
    let at = || -> PyResult<(u32, usize)> {
        let start: usize = err.getattr("start")?.extract()?;
        let ch = err.getattr("object")?.get_item(start)?;
        let ord = err.py().import("builtins")?.getattr("ord")?;
        Ok((ord.call1((ch,))?.extract()?, start))
    };
    at().ok()
}
