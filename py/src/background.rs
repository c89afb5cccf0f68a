//! The lifecycle shared by the binding's background services (the console
//! agent, the cluster sync): each runs a Rust thread of its own, at most one
//! per client, and none may be left running when the interpreter finalizes.
//!
//! [`Owned`] holds a service with the process that started it: a fork child
//! inherits no thread, so there the service is inert and its memory is left
//! alone (its locks may be held by a thread that was not copied).
//! [`Registry`] knows every service of a kind started in this process: `sds`
//! registers a `_stop_*` function with `atexit` that calls
//! [`Registry::stop_all`], which runs before finalization starts.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use pyo3::prelude::*;

/// A running service with a thread of its own.
pub trait Service: Send + Sync + 'static {
    /// Stops it and joins its thread; idempotent. Called with the
    /// interpreter released (the thread may be waiting for it).
    fn stop(&self);
    /// Whether it has not been stopped; may wait for a lock the service's
    /// callers hold, so called with the interpreter released where those
    /// callers release it.
    fn is_running(&self) -> bool;
}

/// A service and the process that started it.
pub struct Owned<S: Service> {
    // Dropped only in the process that started it (see `Drop`).
    service: ManuallyDrop<S>,
    pid: u32,
}

impl<S: Service> Owned<S> {
    /// The service, unless this is a fork child of the process that started
    /// it.
    pub fn get(&self) -> Option<&S> {
        self.ours().then_some(&*self.service)
    }

    /// Whether this process started it.
    pub fn ours(&self) -> bool {
        self.pid == std::process::id()
    }

    /// The process that started it.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Running, and started by this process.
    pub fn running(&self) -> bool {
        self.get().is_some_and(S::is_running)
    }

    /// Stops and joins the service with the interpreter released.
    pub fn stop(&self, py: Python<'_>) {
        if let Some(service) = self.get() {
            py.detach(|| service.stop());
        }
    }

    /// `close()`: stops the service and, if it is still the client's,
    /// empties the client's `slot`.
    pub fn close(self: &Arc<Self>, py: Python<'_>, slot: &Mutex<Option<Arc<Self>>>) {
        self.stop(py);
        py.detach(|| {
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, self)) {
                *slot = None;
            }
        });
    }
}

impl<S: Service> Drop for Owned<S> {
    fn drop(&mut self) {
        if !self.ours() {
            // A fork child's copy: stopping would join a thread that does
            // not exist here. Leaked (the service and its table reference).
            return;
        }
        if self.service.is_running() {
            // The client was collected with its service running: the last
            // reference goes in a deallocation, so the interpreter is held.
            let stopped = Python::try_attach(|py| py.detach(|| self.service.stop()));
            if stopped.is_none() {
                self.service.stop();
            }
        }
        // SAFETY: dropped once, here, in the process that started it; the
        // service is stopped.
        unsafe { ManuallyDrop::drop(&mut self.service) };
    }
}

/// Why a service did not start.
pub enum Refused<E> {
    /// The client already has a running one.
    Running,
    /// [`Registry::stop_all`] has run.
    ShuttingDown,
    /// The service's own start failed.
    Start(E),
}

/// Every service of one kind started in this process.
pub struct Registry<S: Service> {
    shutting_down: AtomicBool,
    live: Mutex<Vec<Weak<Owned<S>>>>,
}

impl<S: Service> Registry<S> {
    pub const fn new() -> Self {
        Registry {
            shutting_down: AtomicBool::new(false),
            live: Mutex::new(Vec::new()),
        }
    }

    /// Whether [`Registry::stop_all`] has run: nothing starts (or logs) any
    /// more.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    /// Starts a service into a client's `slot`, unless one runs there or
    /// the interpreter shuts down. Call with the interpreter released when
    /// `start`, the slot's lock or [`Service::is_running`] may wait.
    pub fn start<E>(
        &self,
        slot: &Mutex<Option<Arc<Owned<S>>>>,
        start: impl FnOnce() -> Result<S, E>,
    ) -> Result<Arc<Owned<S>>, Refused<E>> {
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|cell| cell.running()) {
            return Err(Refused::Running);
        }
        if self.shutting_down() {
            return Err(Refused::ShuttingDown);
        }
        let cell = Arc::new(Owned {
            service: ManuallyDrop::new(start().map_err(Refused::Start)?),
            pid: std::process::id(),
        });
        *slot = Some(cell.clone());
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|weak| weak.strong_count() > 0);
        live.push(Arc::downgrade(&cell));
        Ok(cell)
    }

    /// Stops every service of this kind (joining their threads) and lets no
    /// other start.
    pub fn stop_all(&self, py: Python<'_>) {
        self.shutting_down.store(true, Ordering::Release);
        let cells: Vec<Arc<Owned<S>>> = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .filter_map(|weak| weak.upgrade())
            .collect();
        for cell in cells {
            cell.stop(py);
        }
    }
}
