//! The one panic boundary every export runs inside, and the failure type the
//! exports' bodies return.
//!
//! A panic must never unwind into C (that is undefined behaviour), so each
//! `extern "C"` body is a closure passed to [`boundary`] (functions that
//! return an `sds_result`) or [`boundary_or`] (infallible functions, which
//! return a fixed value instead). `tests/boundary.rs` fails if an export does
//! not start with one of them.

use core::fmt::{self, Display};
use std::panic::{catch_unwind, AssertUnwindSafe};

use sds_core::ErrorCode;

use crate::result::{last_error_record, sds_result};

/// Why an export failed: its code, once the detail has been recorded as the
/// thread's last error message. Built from the core's errors with `?`.
#[derive(Debug)]
pub struct Failure(pub(crate) sds_result);

impl Failure {
    /// A failure with `code`, recording `detail` as this thread's last error.
    pub(crate) fn new(code: ErrorCode, detail: &dyn Display) -> Failure {
        last_error_record(code, detail);
        Failure(sds_result::of(code))
    }

    /// A required pointer argument was NULL.
    pub(crate) fn null(argument: &'static str) -> Failure {
        Failure::new(
            ErrorCode::NullArgument,
            &format_args!("`{argument}` is NULL"),
        )
    }

    /// An argument outside the values the function accepts.
    pub(crate) fn invalid(detail: &dyn Display) -> Failure {
        Failure::new(ErrorCode::InvalidArgument, detail)
    }
}

impl From<sds_core::Error> for Failure {
    fn from(e: sds_core::Error) -> Failure {
        Failure::new(e.code(), &e)
    }
}

impl From<sds_core::StrategyError> for Failure {
    fn from(e: sds_core::StrategyError) -> Failure {
        Failure::new(e.code(), &e)
    }
}

/// Runs an export's body: its result code, or `SDS_RESULT_PANIC` if it
/// panicked (the panic's message becomes the thread's last error).
pub fn boundary(body: impl FnOnce() -> Result<(), Failure>) -> sds_result {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => sds_result::Ok,
        Ok(Err(Failure(code))) => code,
        Err(payload) => Failure::new(ErrorCode::Panic, &PanicMessage(&*payload)).0,
    }
}

/// Runs an infallible export's body; `on_panic` if it panicked.
pub fn boundary_or<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(on_panic)
}

struct PanicMessage<'a>(&'a (dyn std::any::Any + Send));

impl Display for PanicMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match (
            self.0.downcast_ref::<&str>(),
            self.0.downcast_ref::<String>(),
        ) {
            (Some(s), _) => s,
            (_, Some(s)) => s.as_str(),
            _ => "no message",
        };
        write!(f, "internal error (panic caught): {text}")
    }
}
