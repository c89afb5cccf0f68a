//! The life cycle both background services (the console agent and the
//! cluster sync) share in C, written once: start from a config struct on a
//! table into a new opaque handle, the status into a C struct, stop and free.
//! Each service's exports are one call here inside the panic boundary.

use std::sync::Arc;

use sds_settings::Fields;
use sds_shm::AnyTable;

use crate::args::{input, into_box, out, unbox};
use crate::boundary::Failure;
use crate::status::{to_c, CStatus};
use crate::table::{sds_table, table_arc, table_input};

/// A service behind an opaque C handle.
pub(crate) trait Service: Sized {
    /// The handle's argument name in messages (`` `agent` is NULL``).
    const HANDLE: &'static str;
    /// Its C config struct.
    type Config;
    /// Its status as fields.
    type Status: Fields;
    /// Its C status struct.
    type CStatus: CStatus;

    /// Starts the service for `table`.
    ///
    /// # Safety
    /// `config`'s pointers as its C struct's documentation says.
    unsafe fn start(table: Arc<AnyTable>, config: &Self::Config) -> Result<Self, Failure>;

    /// Its status now.
    fn status(&self) -> Self::Status;
}

/// Starts `S` for `table` from `*config` into `*out` (written only on
/// success). Stopping is dropping the handle: each service's `Drop` stops
/// and joins its thread.
///
/// # Safety
/// `table` must be NULL or live, `config` NULL or readable, `out` NULL or
/// writable.
pub(crate) unsafe fn start<S: Service>(
    table: *const sds_table,
    config: *const S::Config,
    out: *mut *mut S,
) -> Result<(), Failure> {
    table_input(table)?;
    let config = input(config, "config")?;
    into_box(out, || S::start(table_arc(table), config))
}

/// Writes the status of `service` to `*out`.
///
/// # Safety
/// `service` must be NULL or live, `out` NULL or writable.
pub(crate) unsafe fn status<S: Service>(
    service: *const S,
    out: *mut S::CStatus,
) -> Result<(), Failure> {
    let service = input(service, S::HANDLE)?;
    let out = self::out(out, "out")?;
    out.write(to_c(&service.status()));
    Ok(())
}

/// Stops and frees `service`; NULL is a no-op.
///
/// # Safety
/// `service` must be NULL or come from [`start`], not stopped yet.
pub(crate) unsafe fn stop<S: Service>(service: *mut S) {
    unbox(service)
}
