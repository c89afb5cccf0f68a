//! `Entry`: one request between `enter` and `exit`, holding the core's `Copy`
//! entry (start time, permit, probe) so it stays correct across `await` and
//! thread hops. Built here rather than in Python: one small native object is
//! the cheapest thing a caller can hold (see README, "Performance").

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use sds_core::{Outcome, Reason};

use crate::table::Inner;
use crate::{args, errors};

const FAILED: u8 = 1;
const EXITED: u8 = 2;

static REASON_NAMES: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();

/// The interned name of a reason (`"VISIT"`...), or `None`.
pub fn reason_name(py: Python<'_>, reason: Option<Reason>) -> Option<Py<PyString>> {
    let names = REASON_NAMES.get_or_init(py, || {
        Reason::ALL
            .iter()
            .map(|r| PyString::intern(py, r.as_str()).unbind())
            .collect()
    });
    reason.map(|r| names[r.code() as usize - 1].clone_ref(py))
}

/// A request between `enter` and `exit`; a context manager that marks an
/// exception raised in its body and always exits.
#[pyclass(frozen, module = "sds._native")]
pub struct Entry {
    inner: Arc<Inner>,
    entry: sds_core::Entry,
    marks: AtomicU8,
}

impl Entry {
    pub fn new(inner: Arc<Inner>, entry: sds_core::Entry) -> Entry {
        Entry {
            inner,
            entry,
            marks: AtomicU8::new(0),
        }
    }

    /// `now`: the exit time, or `None` for the wall clock, read only when the
    /// exit uses it (see `sds_core::Point::exit_with`).
    fn settle(&self, py: Python<'_>, now: Option<u64>) -> PyResult<()> {
        let before = self.marks.fetch_or(EXITED, Ordering::AcqRel);
        if before & EXITED != 0 {
            return Ok(());
        }
        let outcome = if before & FAILED != 0 {
            Outcome::Error
        } else {
            Outcome::Ok
        };
        self.inner
            .table
            .exit_with(&self.entry, outcome, || {
                now.unwrap_or_else(sds_clock::now_ms)
            })
            .map_err(|e| errors::core(py, e))
    }

    /// Marks the request failed by `exc`, unless `exc` is the library's own
    /// `Downgraded` (a fallback signal, not a failure of the protected code).
    fn mark(&self, py: Python<'_>, exc: Option<&Bound<'_, PyAny>>) {
        if exc.is_some_and(|e| errors::is_downgraded(py, e)) {
            return;
        }
        self.marks.fetch_or(FAILED, Ordering::AcqRel);
    }
}

#[pymethods]
impl Entry {
    /// Whether the caller must skip the real work and use its fallback.
    #[getter]
    fn downgraded(&self) -> bool {
        self.entry.downgraded()
    }

    /// Why it was downgraded (`"VISIT"`, ...), `None` when it was not.
    #[getter]
    fn reason(&self, py: Python<'_>) -> Option<Py<PyString>> {
        reason_name(py, self.entry.reason())
    }

    /// The time of `enter`, in ms.
    #[getter]
    fn start_ms(&self) -> u64 {
        self.entry.start_ms()
    }

    /// Whether `exit` already ran.
    #[getter]
    fn exited(&self) -> bool {
        self.marks.load(Ordering::Acquire) & EXITED != 0
    }

    /// Marks the request as failed; the exception is counted by `exit`.
    /// `sds.Downgraded` is never counted; after `exit` nothing changes.
    #[pyo3(signature = (exc = None))]
    fn error(&self, py: Python<'_>, exc: Option<&Bound<'_, PyAny>>) {
        self.mark(py, exc);
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __repr__(&self) -> String {
        match self.entry.reason() {
            Some(r) => format!("Entry(downgraded, reason={:?})", r.as_str()),
            None => "Entry(passed)".to_string(),
        }
    }
}

/// Called by the fast methods (fast.rs), which parse the arguments.
impl Entry {
    /// Settles the request: returns its permit, counts its exception and its
    /// timeout. Only the first call counts.
    pub(crate) fn exit(&self, py: Python<'_>, now_ms: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.settle(py, args::given_time(now_ms)?)
    }

    /// `__exit__`: marks `exc`, if the body raised one, and exits; never
    /// suppresses the exception.
    pub(crate) fn context_exit(
        &self,
        py: Python<'_>,
        exc: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if let Some(e) = exc {
            self.mark(py, Some(e));
        }
        self.settle(py, None)?;
        Ok(false)
    }
}
