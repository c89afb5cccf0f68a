//! The life cycle both background services (the console agent and the
//! cluster sync) share in C, written once: settings as JSON text, started on
//! a table into a new opaque handle, the status (`sds_settings::Service`)
//! into a C struct, stopped by `unbox` (each service's `Drop` stops and
//! joins its thread).
//!
//! The settings text becomes the `(key, Value)` pairs of `sds-settings` in
//! one generic conversion, and the service's `from_settings` judges them:
//! every language gets the same verdict and message for one input.

use std::os::raw::c_char;
use std::sync::Arc;

use sds_core::ErrorCode;
use sds_settings::{json, Service, Value};
use sds_shm::AnyTable;

use crate::args::{bytes, input, into_box, out};
use crate::boundary::Failure;
use crate::status::{to_c, CStatus};
use crate::table::{sds_table, table_arc, table_input};

/// Starts a service on `table` with `start`, given the settings in the JSON
/// text `(settings, settings_len)`, into `*out` (written only on success).
///
/// # Safety
/// `table` must be NULL or live, `settings` NULL or point to `settings_len`
/// bytes, `out` NULL or writable.
pub(crate) unsafe fn start<S>(
    table: *const sds_table,
    settings: *const c_char,
    settings_len: usize,
    out: *mut *mut S,
    start: impl FnOnce(Arc<AnyTable>, Vec<(String, Value)>) -> Result<S, Failure>,
) -> Result<(), Failure> {
    table_input(table)?;
    let text = bytes(settings, settings_len, "settings")?;
    into_box(out, || start(table_arc(table), pairs(text)?))
}

/// Writes the status of the service in `handle` (its `name` in messages)
/// to `*out`.
///
/// # Safety
/// `handle` must be NULL or live, `out` NULL or writable.
pub(crate) unsafe fn status<H, S: Service, C: CStatus>(
    handle: *const H,
    name: &'static str,
    out: *mut C,
    service: impl FnOnce(&H) -> &S,
) -> Result<(), Failure> {
    let handle = input(handle, name)?;
    let out = self::out(out, "out")?;
    out.write(to_c(&service(handle).status()));
    Ok(())
}

/// The members of the JSON object `text` as settings (`sds_settings::json`,
/// in their order, repeats included); text that is not one is
/// `SDS_RESULT_INVALID_JSON`.
fn pairs(text: &[u8]) -> Result<Vec<(String, Value)>, Failure> {
    json::pairs(text).map_err(|e| Failure::new(ErrorCode::InvalidJson, &e))
}
