//! The one conversion between Python's values and the services' settings
//! and statuses (`sds_settings`): no code here knows a setting or a field.
//! Which keys exist, which types they take and the message for a wrong one
//! are the crates' (`AgentConfig::from_settings`, `Config::from_settings`).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use sds_core::ErrorCode;
use sds_settings::{FieldValue, Fields, Value};

use crate::args;
use crate::errors;

/// `(key, value)` pairs, in the order given: what `Client.connect_*`
/// passes (its arguments, then its keyword arguments).
pub fn pairs(settings: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Value)>> {
    let mut pairs = Vec::new();
    for pair in settings.try_iter()? {
        let (key, v): (Bound<'_, PyString>, Bound<'_, PyAny>) = pair?.extract()?;
        let key = text(&key, "a setting's name")?;
        let value = value(&v, &key)?;
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// A Python value as a setting's value: `None` is null (the default); a
/// `bool` is tested before `int` (`True` is an `int`); an `int` is any
/// within 128 bits, one beyond is refused by its type name (no setting
/// takes such a number); a `str` and an `os.PathLike` (its `os.fspath`) are
/// text; a `list` or `tuple` is a list; anything else is its type name,
/// for the crate's message. `key` names the setting in messages.
pub fn value(v: &Bound<'_, PyAny>, key: &str) -> PyResult<Value> {
    Ok(if v.is_none() {
        Value::Null
    } else if let Ok(b) = v.cast::<PyBool>() {
        Value::Bool(b.is_true())
    } else if let Ok(int) = v.cast::<PyInt>() {
        int.extract::<i128>()
            .map_or_else(|_| Value::Other(args::type_name(v)), Value::Int)
    } else if let Ok(float) = v.cast::<PyFloat>() {
        Value::Float(float.value())
    } else if let Ok(s) = v.cast::<PyString>() {
        Value::Text(text(s, key)?)
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: PyResult<Vec<Value>> = v.try_iter()?.map(|item| value(&item?, key)).collect();
        Value::List(items?)
    } else if v.get_type().hasattr("__fspath__")? {
        fspath(v, key)?
    } else {
        Value::Other(args::type_name(v))
    })
}

/// An `os.PathLike` as text: its `os.fspath`, a `str` or UTF-8 `bytes`.
fn fspath(v: &Bound<'_, PyAny>, key: &str) -> PyResult<Value> {
    let path = v.py().import("os")?.getattr("fspath")?.call1((v,))?;
    if let Ok(s) = path.cast::<PyString>() {
        return Ok(Value::Text(text(s, key)?));
    }
    match std::str::from_utf8(path.cast::<PyBytes>()?.as_bytes()) {
        Ok(text) => Ok(Value::Text(text.to_string())),
        Err(_) => Err(errors::argument(
            v.py(),
            format!(
                "{key}: os.fspath of the {} gives bytes that are not UTF-8; give the path as a str",
                args::type_name(v)
            ),
        )),
    }
}

/// The UTF-8 text of a `str` (one with a lone surrogate is refused).
fn text(s: &Bound<'_, PyString>, what: &str) -> PyResult<String> {
    Ok(args::utf8(s, what, ErrorCode::InvalidArgument)?.into_owned())
}

/// A status as a dict of its fields (`Fields::NAMES` to their values),
/// which `sds.AgentStatus(**d)` and `sds.ClusterStatus(**d)` take.
pub fn fields<'py, F: Fields>(py: Python<'py>, status: &F) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, value) in F::NAMES.iter().zip(status.values()) {
        match value {
            FieldValue::Bool(b) => dict.set_item(name, b),
            FieldValue::U64(n) => dict.set_item(name, n),
            FieldValue::I64(n) => dict.set_item(name, n),
            FieldValue::Text(s) => dict.set_item(name, s),
            FieldValue::OptionalText(s) => dict.set_item(name, s),
        }?;
    }
    Ok(dict)
}
