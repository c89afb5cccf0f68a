//! The native side of a background service a Java class owns through a
//! handle (`AdminAgent`'s agent, `ClusterSync`'s cluster): borrowing it for
//! a call, stopping it, freeing it. Both crates' services stop and join
//! their thread when dropped.

use std::sync::RwLock;

use jni::sys::jlong;
use sds_core::ErrorCode;

use crate::boundary::Fail;
use crate::handle::{borrow, free, into_handle};

/// A service behind a handle. `stop` takes it out (dropping it stops and
/// joins its thread) under the write lock, so it waits for the calls running
/// on it; the calls after it fail with `CLOSED`.
pub(crate) struct JvmService<S>(RwLock<Option<S>>);

/// Moves a started service behind a new handle.
pub(crate) fn service_handle<S>(service: S) -> jlong {
    into_handle(JvmService(RwLock::new(Some(service))))
}

/// Runs `f` on the service of a live handle; `CLOSED` once stopped.
///
/// # Safety
/// The Java class passes its own handle and itself as owner, which keeps it
/// reachable, so the service is not freed during the call.
pub(crate) unsafe fn with_service<S, T>(
    handle: jlong,
    f: impl FnOnce(&S) -> Result<T, Fail>,
) -> Result<T, Fail> {
    // SAFETY: see the function's contract.
    let jvm = unsafe { borrow::<JvmService<S>>(handle) }.map_err(Fail::code)?;
    let guard = jvm.0.read().map_err(|_| Fail::code(ErrorCode::Panic))?;
    f(guard.as_ref().ok_or(Fail::code(ErrorCode::Closed))?)
}

/// Stops the service and joins its thread; idempotent.
///
/// # Safety
/// As for [`with_service`].
pub(crate) unsafe fn stop_service<S>(handle: jlong) -> Result<(), Fail> {
    // SAFETY: see the function's contract.
    let jvm = unsafe { borrow::<JvmService<S>>(handle) }.map_err(Fail::code)?;
    let service = match jvm.0.write() {
        Ok(mut guard) => guard.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    drop(service);
    Ok(())
}

/// Frees a stopped service (0: nothing to do); a panic is caught, as no
/// exception can be thrown from the free.
///
/// # Safety
/// Called once per service, by its `NativeHandle` once no call is using it.
pub(crate) unsafe fn free_service<S>(handle: jlong) {
    // SAFETY: see the function's contract.
    let _ = std::panic::catch_unwind(|| unsafe { free::<JvmService<S>>(handle) });
}
