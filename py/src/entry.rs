//! `Entry`: one request between `enter` and `exit`, holding the core's `Copy`
//! entry (start time, permit, probe) so it stays correct across `await` and
//! thread hops. Built here rather than in Python: one small native object is
//! the cheapest thing a caller can hold (see README, "Performance").

use std::ffi::CString;
use std::ptr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyBaseException, PyException, PyResourceWarning};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use sds_core::{Outcome, Reason};

use crate::args::{self, Time};
use crate::errors;
use crate::table::Inner;

const FAILED: u8 = 1;
const EXITED: u8 = 2;
/// `enter` was given `now_ms`: the entry lives on the caller's timeline,
/// which the binding cannot read, so an exit without a time (`exit()`,
/// `with`, the finaliser) is at its start, not at the wall clock (which
/// would count a timeout of that timeline's distance to now).
const GIVEN_TIME: u8 = 4;
/// Collected without `exit`: exited with the core's `Outcome::Abandoned`.
const ABANDONED: u8 = 8;

static REASON_NAMES: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();

static TIME_SLEEP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ASYNC_HELPERS: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();

/// Sleeps `ms` with `time.sleep` (the GIL released, interruptible by a
/// signal's exception): how the sync sugar waits for a paced entry.
#[cold]
#[inline(never)]
pub fn sleep_ms(py: Python<'_>, ms: u64) -> PyResult<()> {
    let sleep = TIME_SLEEP.get_or_try_init(py, || {
        py.import("time")?.getattr("sleep").map(Bound::unbind)
    })?;
    sleep.bind(py).call1((ms as f64 / 1000.0,))?;
    Ok(())
}

/// `sds._pacing.enter_async` and `exit_async`: the coroutines of `async with`.
fn async_helpers(py: Python<'_>) -> PyResult<&(Py<PyAny>, Py<PyAny>)> {
    ASYNC_HELPERS.get_or_try_init(py, || {
        let module = py.import("sds._pacing")?;
        Ok((
            module.getattr("enter_async")?.unbind(),
            module.getattr("exit_async")?.unbind(),
        ))
    })
}

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
/// `Exception` raised in its body and always exits. Collected without
/// `exit`, it exits then as failed (unless downgraded) and warns
/// (`ResourceWarning`). It belongs to the process that entered it: in a
/// fork child the parent's entries exit as nothing (no permit returned,
/// nothing counted, no warning).
#[pyclass(frozen, module = "sds._native")]
pub struct Entry {
    inner: Arc<Inner>,
    entry: sds_core::Entry,
    marks: AtomicU8,
    /// The fork epoch (`sds_shm::fork_epoch`) of `enter`: an entry belongs
    /// to the process that entered it, so a fork child's inherited copy
    /// exits as nothing (its parent still serves the request and exits it).
    epoch: u64,
}

impl Entry {
    /// `given_time`: whether `enter` was given `now_ms`.
    pub fn new(inner: Arc<Inner>, entry: sds_core::Entry, given_time: bool) -> Entry {
        Entry {
            inner,
            entry,
            marks: AtomicU8::new(if given_time { GIVEN_TIME } else { 0 }),
            epoch: sds_shm::fork_epoch(),
        }
    }

    /// `now`: the exit time, or `None` for the entry's own clock: its start
    /// when `enter` was given a time, else the wall clock, read only when
    /// the exit uses it (see `sds_core::Point::exit_with`). `extra` marks are
    /// added in the same atomic step.
    fn settle(&self, py: Python<'_>, now: Option<u64>, extra: u8) -> PyResult<()> {
        let before = self.marks.fetch_or(EXITED | extra, Ordering::AcqRel);
        if before & EXITED != 0 || self.inherited() {
            return Ok(());
        }
        let marks = before | extra;
        let outcome = if marks & ABANDONED != 0 {
            Outcome::Abandoned
        } else if marks & FAILED != 0 {
            Outcome::Error
        } else {
            Outcome::Ok
        };
        let start = self.entry.start_ms();
        let clock = || match now {
            Some(now) => now,
            None if before & GIVEN_TIME != 0 => start,
            None => sds_clock::now_ms(),
        };
        self.inner.exit_with(py, &self.entry, outcome, clock)
    }

    /// Whether this is a fork child's copy of its parent's entry.
    fn inherited(&self) -> bool {
        sds_shm::fork_epoch() != self.epoch
    }

    /// Marks the request failed by `exc` (an exception instance), unless it
    /// is the library's own `Downgraded` (a fallback signal, not a failure of
    /// the protected code).
    fn mark(&self, py: Python<'_>, exc: &Bound<'_, PyAny>) {
        if !errors::is_downgraded(py, exc) {
            self.marks.fetch_or(FAILED, Ordering::AcqRel);
        }
    }

    /// An entry collected without `exit`: exits it, so its permit comes
    /// back, and warns as an unclosed file does. Runs inside the object's
    /// deallocation, where no exception may escape and the one in flight (if
    /// any) must survive. Out of line, so `drop` stays a load and a branch.
    #[cold]
    #[inline(never)]
    fn abandoned(&self) {
        if self.inherited() {
            // The parent's request, not abandoned: nothing to exit or warn.
            return;
        }
        Python::attach(|py| self.abandoned_attached(py));
    }

    fn abandoned_attached(&self, py: Python<'_>) {
        let (mut kind, mut value, mut traceback) =
            (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        // SAFETY: attached to the interpreter; the three references taken
        // here are handed back to `PyErr_Restore` below.
        unsafe { ffi::PyErr_Fetch(&mut kind, &mut value, &mut traceback) };
        // Reported "in" the class: the instance is being destroyed.
        let class = py.get_type::<Entry>();
        // The core counts it failed unless it was downgraded (then it ran
        // nothing that could fail), and takes no time from it.
        if let Err(err) = self.settle(py, None, ABANDONED) {
            err.write_unraisable(py, Some(class.as_any()));
        }
        let counted = if !self.entry.downgraded() {
            " as failed, so its permit is returned"
        } else {
            ""
        };
        let message = format!(
            "sds.Entry of point {} was never exited; exited now{counted}",
            self.inner.point_name(py, self.entry.point())
        );
        let message = CString::new(message).unwrap_or_default();
        let category = py.get_type::<PyResourceWarning>();
        if let Err(err) = PyErr::warn(py, &category, &message, 1) {
            // A warnings filter of "error" turned it into an exception, which
            // cannot propagate out of a deallocation.
            err.write_unraisable(py, Some(class.as_any()));
        }
        // SAFETY: the references `PyErr_Fetch` gave (possibly null).
        unsafe { ffi::PyErr_Restore(kind, value, traceback) };
    }
}

impl Drop for Entry {
    #[inline]
    fn drop(&mut self) {
        // The hot path: an exited entry costs this one load.
        if *self.marks.get_mut() & EXITED != 0 {
            return;
        }
        self.abandoned();
    }
}

#[pymethods]
impl Entry {
    /// Whether the caller must skip the real work and use its fallback.
    #[getter]
    pub(crate) fn downgraded(&self) -> bool {
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

    /// The ms to wait before running the request: a paced point
    /// (`maxQueueingTimeMs`) spaces its requests evenly at its rate. 0 for
    /// every other entry (and for a downgraded one). `with` and `async with`
    /// wait it before their body; a caller of `enter` waits it itself.
    #[getter]
    pub(crate) fn wait_ms(&self) -> u64 {
        self.entry.wait_ms()
    }

    /// Whether `exit` already ran.
    #[getter]
    fn exited(&self) -> bool {
        self.marks.load(Ordering::Acquire) & EXITED != 0
    }

    /// Marks the request as failed by `exc`; the exception is counted by
    /// `exit`. `None` and `sds.Downgraded` are never counted; after `exit`
    /// nothing changes.
    fn error(&self, py: Python<'_>, exc: &Bound<'_, PyAny>) -> PyResult<()> {
        if exc.is_none() {
            return Ok(());
        }
        if !exc.is_instance_of::<PyBaseException>() {
            return Err(args::wrong(
                exc,
                "error() takes an exception instance or None",
            ));
        }
        self.mark(py, exc);
        Ok(())
    }

    /// Waits `wait_ms` (`time.sleep`) before the body runs. Interrupted
    /// (`KeyboardInterrupt`...), it exits the entry and raises: the body
    /// never runs, so `__exit__` would not.
    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        let wait = slf.get().entry.wait_ms();
        if wait > 0 {
            slf.get().wait(slf.py(), wait)?;
        }
        Ok(slf)
    }

    /// `async with`: a coroutine that waits `wait_ms` with `asyncio.sleep`
    /// (the loop runs meanwhile) and gives the entry; cancelled while
    /// waiting, it exits the entry.
    fn __aenter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let (enter, _) = async_helpers(slf.py())?;
        enter.bind(slf.py()).call1((slf,))
    }

    /// `async with`'s end: `__exit__` in a coroutine.
    #[pyo3(signature = (exc_type=None, exc=None, traceback=None))]
    fn __aexit__<'py>(
        slf: &Bound<'py, Self>,
        exc_type: Option<Bound<'py, PyAny>>,
        exc: Option<Bound<'py, PyAny>>,
        traceback: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (_, exit) = async_helpers(slf.py())?;
        exit.bind(slf.py()).call1((slf, exc_type, exc, traceback))
    }

    fn __repr__(&self) -> String {
        match (self.entry.reason(), self.entry.wait_ms()) {
            (Some(r), _) => format!("Entry(downgraded, reason={:?})", r.as_str()),
            (None, 0) => "Entry(passed)".to_string(),
            (None, wait) => format!("Entry(passed, wait_ms={wait})"),
        }
    }
}

/// Called by the fast methods (fast.rs), which parse the arguments.
impl Entry {
    /// Sleeps `ms` before the request runs; if the sleep raises, exits the
    /// entry first (at its own clock, not failed: nothing ran).
    pub(crate) fn wait(&self, py: Python<'_>, ms: u64) -> PyResult<()> {
        sleep_ms(py, ms).inspect_err(|_| {
            let _ = self.settle(py, None, 0);
        })
    }

    /// Settles the request: returns its permit, counts its exception and its
    /// timeout. Only the first call counts. Without `now_ms`, at the wall
    /// clock, or at the start when `enter` was given `now_ms`.
    pub(crate) fn exit(&self, py: Python<'_>, now_ms: Option<Time>) -> PyResult<()> {
        self.settle(py, now_ms.map(|t| t.0), 0)
    }

    /// Exits as failed without an exception to count (a web response of
    /// 5xx, or none at all), at the entry's own clock.
    pub(crate) fn exit_failed(&self, py: Python<'_>) -> PyResult<()> {
        self.settle(py, None, FAILED)
    }

    /// `__exit__`: marks `exc` if the body raised an `Exception` (not a
    /// cancellation or exit: `CancelledError`, `KeyboardInterrupt`,
    /// `SystemExit`, `GeneratorExit` are `BaseException`s only), and exits;
    /// never suppresses the exception.
    pub(crate) fn context_exit(
        &self,
        py: Python<'_>,
        exc: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        // `None` first: the body's normal end, checked without a type walk.
        if let Some(e) = exc.filter(|e| !e.is_none() && e.is_instance_of::<PyException>()) {
            self.mark(py, e);
        }
        self.settle(py, None, 0)?;
        Ok(false)
    }
}
