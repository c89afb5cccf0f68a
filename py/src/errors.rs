//! One mapping from the core's error table to Python exceptions.
//!
//! The classes live in Python (`sds/errors.py`, so they can also derive from
//! `ValueError` / `TypeError`); at import it registers them here by code
//! name. Codes, numbers and descriptions all come from `sds_core::ErrorCode`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyType};
use sds_core::{Error, ErrorCode, StrategyError};

static CLASSES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
static DOWNGRADED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Registers the Python classes: `classes` maps code names to classes,
/// `downgraded` is the class a downgraded call raises (never counted as an
/// exception of the protected code).
#[pyfunction]
pub fn _register_errors(
    py: Python<'_>,
    classes: Bound<'_, PyDict>,
    downgraded: Bound<'_, PyType>,
) -> PyResult<()> {
    // A second import (a reload) keeps the first registration.
    let _ = CLASSES.set(py, classes.unbind());
    let _ = DOWNGRADED.set(py, downgraded.unbind());
    Ok(())
}

/// Whether `exc` is the library's own downgrade exception.
pub fn is_downgraded(py: Python<'_>, exc: &Bound<'_, PyAny>) -> bool {
    DOWNGRADED
        .get(py)
        .is_some_and(|cls| exc.is_instance(cls.bind(py)).unwrap_or(false))
}

/// The exception for `code`, with `message` and the strategy field it names.
pub fn raise(py: Python<'_>, code: ErrorCode, message: String, field: Option<&str>) -> PyErr {
    let class = CLASSES
        .get(py)
        .and_then(|d| d.bind(py).get_item(code.as_str()).ok().flatten());
    let Some(class) = class else {
        return PyValueError::new_err(format!("{}: {message}", code.as_str()));
    };
    let build = || -> PyResult<PyErr> {
        let err = class.call1((message.clone(),))?;
        err.setattr("code", code.as_str())?;
        err.setattr("number", code.as_u32())?;
        err.setattr("field", field)?;
        Ok(PyErr::from_value(err))
    };
    build().unwrap_or_else(|e| e)
}

/// A core error as its Python exception.
pub fn core(py: Python<'_>, e: Error) -> PyErr {
    let field = match e {
        Error::InvalidStrategy { field, .. } => Some(field.json_name()),
        _ => None,
    };
    raise(py, e.code(), e.to_string(), field)
}

/// A shared-table error (`sds_shm`) as the Python exception of its code,
/// with its message (which names the path and what is wrong with the file).
#[cold]
#[inline(never)]
pub fn shm(py: Python<'_>, e: &sds_shm::Error) -> PyErr {
    raise(py, e.code(), e.to_string(), None)
}

/// A rejected strategy input as its Python exception: the core's code,
/// message and key.
pub fn strategy(py: Python<'_>, e: StrategyError) -> PyErr {
    raise(py, e.code(), e.to_string(), e.key())
}

/// A value of the wrong type or range at this boundary.
pub fn argument(py: Python<'_>, message: String) -> PyErr {
    raise(py, ErrorCode::InvalidArgument, message, None)
}

/// The core's table of codes: name -> (number, description).
pub fn code_table(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let table = PyDict::new(py);
    for code in ErrorCode::ALL {
        table.set_item(code.as_str(), (code.as_u32(), code.description()))?;
    }
    Ok(table)
}

/// `sds.Downgraded(point, reason)`, raised by a guarded call without fallback.
pub fn downgraded(
    py: Python<'_>,
    point: &Bound<'_, PyString>,
    reason: Option<Py<PyString>>,
) -> PyErr {
    match DOWNGRADED
        .get(py)
        .map(|cls| cls.bind(py).call1((point, reason)))
    {
        Some(Ok(err)) => PyErr::from_value(err),
        Some(Err(e)) => e,
        None => PyValueError::new_err(format!("{point} downgraded")),
    }
}
