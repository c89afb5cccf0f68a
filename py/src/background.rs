//! The life cycle of the binding's background services (the console agent,
//! the cluster sync), written once for both: each runs a Rust thread of its
//! own, at most one per client, and none may be left running when the
//! interpreter finalizes.
//!
//! A service is an `sds_settings::Service` (its status, stop and running
//! state are the crate's) that implements [`Binding`]; [`service_class!`]
//! makes its Python class, which holds a [`Handle`]. [`Owned`] holds a
//! service with the process that started it: a fork child inherits no
//! thread, so there the service is inert and its memory is left alone (its
//! locks may be held by a thread that was not copied). `sds` registers [`_stop_services`] with
//! `atexit`; it stops every service started in this process before
//! finalization.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use sds_core::ErrorCode;
use sds_settings::{Service, Value};
use sds_shm::AnyTable;

use crate::errors;
use crate::settings;
use crate::table::{Inner, Table};

/// What the binding adds to a background service.
pub trait Binding: Service + Sized + 'static {
    /// Its name in messages: "console agent".
    const NAME: &'static str;
    /// The `Client` method that starts one.
    const CONNECT: &'static str;

    /// The client's slot for its running one.
    fn slot(client: &Inner) -> &Slot<Self>;
    /// Starts it on `table` from the caller's settings; a refusal is the
    /// error code and the crate's message.
    fn launch(table: Arc<AnyTable>, settings: Vec<(String, Value)>) -> Result<Self, Refusal>;
}

/// Why a service did not start: an error code and its message.
pub type Refusal = (ErrorCode, String);

/// A client's slot for its service of one kind: the running one, or the
/// last one started (stopped), whose status its metrics show.
pub type Slot<S> = Mutex<Option<Arc<Owned<S>>>>;

/// A service and the process that started it. Stopped with the interpreter
/// released: the join may wait for an agent's thread that logs.
pub struct Owned<S: Binding> {
    /// Never dropped in a fork child (see `Drop`).
    service: ManuallyDrop<S>,
    pid: u32,
}

impl<S: Binding> Owned<S> {
    /// Whether this process started it.
    fn ours(&self) -> bool {
        self.pid == std::process::id()
    }

    /// `work` on the running service: `None` when it is stopped or
    /// inherited (a fork child's copy is never touched).
    pub fn with<T>(&self, work: impl FnOnce(&S) -> T) -> Option<T> {
        (self.ours() && self.service.is_running()).then(|| work(&self.service))
    }
}

impl<S: Binding> Drop for Owned<S> {
    fn drop(&mut self) {
        if !self.ours() {
            // A fork child's copy: stopping would join a thread that does
            // not exist here, and its locks may be held. Leaked.
            return;
        }
        // The client was collected with its service running: the last
        // reference goes in a deallocation, so the interpreter is held;
        // released for the join (the thread may be waiting for it).
        if Python::try_attach(|py| py.detach(|| self.service.stop())).is_none() {
            self.service.stop();
        }
        // SAFETY: dropped once, here, and never used again.
        unsafe { ManuallyDrop::drop(&mut self.service) };
    }
}

/// What [`_stop_services`] stops: every service started in this process.
trait Stop: Send + Sync {
    /// Stops and joins the service with the interpreter released;
    /// idempotent.
    fn stop(&self, py: Python<'_>);
}

impl<S: Binding> Stop for Owned<S> {
    fn stop(&self, py: Python<'_>) {
        if self.ours() {
            py.detach(|| self.service.stop());
        }
    }
}

static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
static LIVE: Mutex<Vec<Weak<dyn Stop>>> = Mutex::new(Vec::new());

/// Whether [`_stop_services`] has run: nothing starts (or logs) any more.
pub fn shutting_down() -> bool {
    SHUTTING_DOWN.load(Ordering::Acquire)
}

/// Stops every background service of this process (joining their threads)
/// and lets no other start or log: `sds` registers it with `atexit`, so no
/// service thread is left when the interpreter finalizes.
#[pyfunction]
pub fn _stop_services(py: Python<'_>) {
    SHUTTING_DOWN.store(true, Ordering::Release);
    let live: Vec<Arc<dyn Stop>> = LIVE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain(..)
        .filter_map(|weak| weak.upgrade())
        .collect();
    for service in live {
        service.stop(py);
    }
}

/// Starts a service into `slot` unless one runs there or the interpreter
/// shuts down. Called with the interpreter released: the slot's lock, a
/// running check and the start may wait.
fn start_in<S: Binding>(
    slot: &Slot<S>,
    start: impl FnOnce() -> Result<S, Refusal>,
) -> Result<Arc<Owned<S>>, Refusal> {
    let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
    let (refused, name) = (|why| Err((ErrorCode::InvalidArgument, why)), S::NAME);
    if slot.as_ref().is_some_and(|c| c.with(|_| ()).is_some()) {
        return refused(format!(
            "this client already has a {name} running: close it first"
        ));
    }
    if shutting_down() {
        return refused(format!(
            "the interpreter is shutting down: no {name} starts"
        ));
    }
    let cell = Arc::new(Owned {
        service: ManuallyDrop::new(start()?),
        pid: std::process::id(),
    });
    // The one it replaces (stopped, kept for the metrics, or a fork
    // parent's) is dropped after the lock is released: a last reference's
    // drop may wait for the interpreter, whose holder may wait for the slot.
    let replaced = slot.replace(cell.clone());
    drop(slot);
    drop(replaced);
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.retain(|weak| weak.strong_count() > 0);
    let stop: Arc<dyn Stop> = cell.clone();
    live.push(Arc::downgrade(&stop));
    Ok(cell)
}

/// What a service's Python object holds: the service, and its client,
/// kept alive while the object exists.
pub struct Handle<S: Binding> {
    pub cell: Arc<Owned<S>>,
    pub client: Py<Table>,
}

impl<S: Binding> Handle<S> {
    /// Starts the service for `client` from `settings`, `(key, value)`
    /// pairs; every refusal is an `sds` error with its reason.
    pub fn start(
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        settings: &Bound<'_, PyAny>,
    ) -> PyResult<Handle<S>> {
        let client = crate::table::client(client, "client")?;
        let pairs = settings::pairs(settings)?;
        let inner: &Inner = &client.get().inner;
        let start = || S::launch(inner.table.clone(), pairs);
        let cell = py
            .detach(|| start_in(S::slot(inner), start))
            .map_err(|(code, message)| errors::raise(py, code, message, None))?;
        let client = client.unbind();
        Ok(Handle { cell, client })
    }

    /// The status as a dict of its fields, in the crate's order; once
    /// stopped, the last one.
    pub fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let status = py.detach(|| self.cell.ours().then(|| self.cell.service.status()));
        settings::fields(py, &status.ok_or_else(|| self.unusable(py))?)
    }

    /// Runs `work` on the running service with the interpreter released;
    /// `None` when stopped or inherited.
    pub fn with<T: Send>(&self, py: Python<'_>, work: impl FnOnce(&S) -> T + Send) -> Option<T> {
        py.detach(|| self.cell.with(work))
    }

    /// [`Handle::with`] for a call that needs the running service: when
    /// stopped or inherited, the error of [`Handle::unusable`].
    pub fn call<T: Send>(&self, py: Python<'_>, work: impl FnOnce(&S) -> T + Send) -> PyResult<T> {
        self.with(py, work).ok_or_else(|| self.unusable(py))
    }

    /// The error of a call that needs the running service: `sds.Closed`
    /// once closed, `sds.InvalidArgument` in a fork child.
    fn unusable(&self, py: Python<'_>) -> PyErr {
        if self.cell.ours() {
            let message = format!("this {} is closed", S::NAME);
            return errors::raise(py, ErrorCode::Closed, message, None);
        }
        errors::argument(
            py,
            format!(
                "this {name} belongs to process {pid}: a fork child inherits no {name}; \
                 call {connect} in the child",
                name = S::NAME,
                pid = self.cell.pid,
                connect = S::CONNECT,
            ),
        )
    }

    /// `close()`: stops the service. The client's slot keeps it, stopped,
    /// until another starts: its metrics show its last status (`_up` 0).
    pub fn close(&self, py: Python<'_>) {
        self.cell.stop(py);
    }
}

/// The state of the service in `slot` for the client's metrics: its
/// status and whether it runs; `None` if none was started, or in a fork
/// child (an inherited service is never touched). Called with the
/// interpreter released (the status may wait for the service's lock).
pub fn state<S: Binding>(slot: &Slot<S>) -> Option<sds_metrics::ServiceState<S::Status>> {
    let cell = slot
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()?;
    cell.ours().then(|| sds_metrics::ServiceState {
        status: cell.service.status(),
        running: cell.service.is_running(),
    })
}

/// Defines a service's Python class (`$class`, holding a [`Handle`] of
/// `$service`): the methods every service has (`new`, `_status`,
/// `running`, `close` with the `$close` doc), then `$extra`, the service's
/// own.
macro_rules! service_class {
    ($(#[$doc:meta])* $class:ident($service:ty); $(#[$close:meta])* fn close; $($extra:tt)*) => {
        $(#[$doc])*
        #[pyclass(frozen, subclass, module = "sds._native")]
        pub struct $class($crate::background::Handle<$service>);

        #[pymethods]
        impl $class {
            /// Starts it for `client`'s table from `settings`, `(key, value)`
            /// pairs (see `sds.Client.connect_admin`, `connect_cluster`).
            #[new]
            fn new(py: Python<'_>, client: &Bound<'_, PyAny>, settings: &Bound<'_, PyAny>) -> PyResult<Self> {
                $crate::background::Handle::start(py, client, settings).map($class)
            }

            fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
                visit.call(&self.0.client)
            }

            /// Its state: the crate's status fields by name; after `close`,
            /// the last one.
            fn _status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                self.0.status(py)
            }

            /// Whether it runs (not closed, and started by this process).
            #[getter]
            fn running(&self, py: Python<'_>) -> bool {
                self.0.with(py, |_| ()).is_some()
            }

            $(#[$close])*
            fn close(&self, py: Python<'_>) {
                self.0.close(py);
            }

            $($extra)*
        }
    };
}
pub(crate) use service_class;
