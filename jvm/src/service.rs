//! The native side of a background service a Java class owns through a
//! handle (`AdminAgent`'s agent, `ClusterSync`'s cluster): borrowing it for
//! a call, stopping it, freeing it. Both crates' services stop and join
//! their thread when dropped.

use std::sync::{PoisonError, RwLock};

use jni::sys::jlong;
use sds_agent::Agent;
use sds_cluster::Cluster;
use sds_core::ErrorCode;

use crate::boundary::Fail;
use crate::handle::{borrow, free, into_handle};

/// What the handles need of a service: its state, and a stop that joins
/// its thread and gives the last state.
pub(crate) trait Service {
    type Status: Clone + Default;
    fn status(&self) -> Self::Status;
    fn stop(self) -> Self::Status;
}

impl Service for Agent {
    type Status = sds_agent::Status;
    fn status(&self) -> Self::Status {
        Agent::status(self)
    }
    fn stop(self) -> Self::Status {
        Agent::stop(&self);
        Agent::status(&self)
    }
}

impl Service for Cluster {
    type Status = sds_cluster::Status;
    fn status(&self) -> Self::Status {
        Cluster::status(self)
    }
    fn stop(self) -> Self::Status {
        Cluster::stop(self)
    }
}

/// A service behind a handle: `Ok` while it runs, its last state once
/// stopped. `stop` takes it out under the write lock, so it waits for the
/// calls running on it; the calls after it fail with `CLOSED`, except the
/// status, which gives the last state.
pub(crate) struct JvmService<S: Service>(RwLock<Result<S, S::Status>>);

/// Moves a started service behind a new handle.
pub(crate) fn service_handle<S: Service>(service: S) -> jlong {
    into_handle(JvmService(RwLock::new(Ok(service))))
}

/// Runs `f` on the service of a live handle; `CLOSED` once stopped.
///
/// # Safety
/// The Java class passes its own handle and itself as owner, which keeps it
/// reachable, so the service is not freed during the call.
pub(crate) unsafe fn with_service<S: Service, T>(
    handle: jlong,
    f: impl FnOnce(&S) -> Result<T, Fail>,
) -> Result<T, Fail> {
    // SAFETY: see the function's contract.
    let jvm = unsafe { borrow::<JvmService<S>>(handle) }.map_err(Fail::code)?;
    let guard = jvm.0.read().map_err(|_| Fail::code(ErrorCode::Panic))?;
    f(guard.as_ref().map_err(|_| Fail::code(ErrorCode::Closed))?)
}

/// The service's state now; once stopped, its last state.
///
/// # Safety
/// As for [`with_service`].
pub(crate) unsafe fn service_status<S: Service>(handle: jlong) -> Result<S::Status, Fail> {
    // SAFETY: see the function's contract.
    let jvm = unsafe { borrow::<JvmService<S>>(handle) }.map_err(Fail::code)?;
    let guard = jvm.0.read().map_err(|_| Fail::code(ErrorCode::Panic))?;
    Ok(match &*guard {
        Ok(service) => service.status(),
        Err(last) => last.clone(),
    })
}

/// Stops the service and joins its thread, keeping its last state;
/// idempotent. The join runs without the lock: the service's own thread
/// may read the status meanwhile (a log handler), and gets the state as of
/// the stop's start until the join ends.
///
/// # Safety
/// As for [`with_service`].
pub(crate) unsafe fn stop_service<S: Service>(handle: jlong) -> Result<(), Fail> {
    // SAFETY: see the function's contract.
    let jvm = unsafe { borrow::<JvmService<S>>(handle) }.map_err(Fail::code)?;
    let lock = || jvm.0.write().unwrap_or_else(PoisonError::into_inner);
    let service = {
        let mut guard = lock();
        let now = match &*guard {
            Ok(service) => service.status(),
            Err(_) => return Ok(()),
        };
        std::mem::replace(&mut *guard, Err(now))
    };
    if let Ok(service) = service {
        let last = service.stop();
        *lock() = Err(last);
    }
    Ok(())
}

/// Frees a stopped service (0: nothing to do); a panic is caught, as no
/// exception can be thrown from the free.
///
/// # Safety
/// Called once per service, by its `NativeHandle` once no call is using it.
pub(crate) unsafe fn free_service<S: Service>(handle: jlong) {
    // SAFETY: see the function's contract.
    let _ = std::panic::catch_unwind(|| unsafe { free::<JvmService<S>>(handle) });
}
