//! `Guarded`: what `guard` returns for a plain (not async) function. The
//! whole protected call runs here: enter, the call, the error check and exit
//! in one native call, with no `Entry` object and no Python frame of ours.
//! (Async functions keep the entry across `await` in `sds/guard.py`.)

use std::sync::Arc;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use sds_core::{Flags, Outcome, PointId};

use crate::entry::{reason_name, sleep_ms};
use crate::errors;
use crate::table::{Inner, PointHandle, Table};

static METHOD_TYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A function protected by a point. `functools.update_wrapper` fills its
/// `__dict__` (`__name__`, `__doc__`, `__wrapped__`...).
#[pyclass(frozen, dict, module = "sds._native")]
pub struct Guarded {
    inner: Arc<Inner>,
    id: PointId,
    name: Py<PyString>,
    func: Py<PyAny>,
    fallback: Option<Py<PyAny>>,
    errors: Py<PyTuple>,
    ignore: Py<PyTuple>,
    /// Keeps the client (and its listeners) alive, as a handle does.
    client: Py<Table>,
}

impl Guarded {
    /// Whether `err` counts as the point's exception: an `Exception` (not a
    /// cancellation or exit) of `errors`, not of `ignore`, not `Downgraded`.
    fn counts(&self, py: Python<'_>, err: &PyErr) -> bool {
        let value = err.value(py);
        value.is_instance_of::<PyException>()
            && value
                .is_instance(self.errors.bind(py).as_any())
                .unwrap_or(false)
            && !value
                .is_instance(self.ignore.bind(py).as_any())
                .unwrap_or(false)
            && !errors::is_downgraded(py, value)
    }
}

#[pymethods]
impl Guarded {
    #[new]
    fn new(
        handle: &Bound<'_, PointHandle>,
        func: Bound<'_, PyAny>,
        fallback: Option<Bound<'_, PyAny>>,
        errors: Bound<'_, PyTuple>,
        ignore: Bound<'_, PyTuple>,
    ) -> Guarded {
        let h = handle.get();
        Guarded {
            inner: h.inner.clone(),
            id: h.id,
            name: h.name.clone_ref(handle.py()),
            func: func.unbind(),
            fallback: fallback.map(Bound::unbind),
            errors: errors.unbind(),
            ignore: ignore.unbind(),
            client: h.client.clone_ref(handle.py()),
        }
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let name = self.name.bind(py);
        let start = sds_clock::now_ms();
        let entry = self.inner.enter_at(py, self.id, name, start, Flags::NONE)?;
        if entry.downgraded() {
            let _ = self.inner.exit_with(py, &entry, Outcome::Ok, || start);
            return match &self.fallback {
                Some(fallback) => Ok(fallback.bind(py).call(args, kwargs)?.unbind()),
                None => match self.inner.console_return_value(name) {
                    // The console's return value for the point: its raw text.
                    Some(value) => Ok(PyString::new(py, &value).into_any().unbind()),
                    None => Err(errors::downgraded(
                        py,
                        name,
                        reason_name(py, entry.reason()),
                    )),
                },
            };
        }
        let wait = entry.wait_ms();
        if wait > 0 {
            // A paced point: wait before the call (`time.sleep`). Interrupted,
            // the entry exits unfailed (nothing ran) and the exception rises.
            if let Err(err) = sleep_ms(py, wait) {
                self.inner
                    .exit_with(py, &entry, Outcome::Ok, sds_clock::now_ms)?;
                return Err(err);
            }
        }
        let result = self.func.bind(py).call(args, kwargs);
        let outcome = match &result {
            Err(err) if self.counts(py, err) => Outcome::Error,
            _ => Outcome::Ok,
        };
        self.inner
            .exit_with(py, &entry, outcome, sds_clock::now_ms)?;
        Ok(result?.unbind())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.client)?;
        visit.call(&self.func)?;
        visit.call(&self.fallback)?;
        visit.call(&self.errors)?;
        visit.call(&self.ignore)
    }

    /// Binds like a function, so a guarded method receives `self`.
    fn __get__(
        slf: Bound<'_, Self>,
        obj: Option<Bound<'_, PyAny>>,
        _owner: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        match obj {
            None => Ok(slf.into_any().unbind()),
            Some(obj) => {
                let method_type = METHOD_TYPE.get_or_try_init(py, || {
                    py.import("types")?.getattr("MethodType").map(Bound::unbind)
                })?;
                Ok(method_type.bind(py).call1((slf, obj))?.unbind())
            }
        }
    }
}
