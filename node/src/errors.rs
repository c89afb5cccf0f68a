//! Every error thrown to JavaScript is an `Error` whose `.code` is the core's
//! `ErrorCode::as_str()` and whose message is the core's `Display`, which
//! names the field or argument.

use napi_derive::napi;
use sds_core::{Error, ErrorCode, StrategyError};

/// What native functions return: the status string becomes `err.code`.
pub type SdsError = napi::Error<&'static str>;

pub fn js_error(code: ErrorCode, message: impl ToString) -> SdsError {
    napi::Error::new(code.as_str(), message)
}

pub fn from_core(error: Error) -> SdsError {
    js_error(error.code(), error)
}

/// The core's error about the argument `what` (the core's sentence does
/// not know the JavaScript name).
pub fn from_core_about(what: &str, error: Error) -> SdsError {
    js_error(error.code(), format!("{what}: {error}"))
}

pub fn from_strategy(error: StrategyError) -> SdsError {
    js_error(error.code(), error)
}

pub fn invalid_argument(message: impl ToString) -> SdsError {
    js_error(ErrorCode::InvalidArgument, message)
}

/// A failure of N-API itself while building a result (out of memory, a
/// pending exception): reported with the status's own text.
pub fn internal(error: napi::Error) -> SdsError {
    js_error(ErrorCode::Panic, error.reason)
}

/// The codes the JavaScript half throws itself, read once at load so its
/// errors carry the core's names without a native call per error.
#[napi(object, object_from_js = false, namespace = "native")]
pub struct ErrorCodes {
    /// Every code name of the core, in numeric order.
    pub all: Vec<&'static str>,
    /// `SDS_INVALID_ARGUMENT`: a wrong option, function or strategy type.
    pub invalid_argument: &'static str,
    /// `SDS_DOWNGRADED`: `run` downgraded without a fallback.
    pub downgraded: &'static str,
}

/// The core's code table.
#[napi(namespace = "native")]
pub fn error_codes() -> ErrorCodes {
    ErrorCodes {
        all: ErrorCode::ALL.iter().map(|c| c.as_str()).collect(),
        invalid_argument: ErrorCode::InvalidArgument.as_str(),
        downgraded: ErrorCode::Downgraded.as_str(),
    }
}
