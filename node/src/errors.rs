//! Every error thrown to JavaScript is an `Error` whose `.code` is the core's
//! `ErrorCode::as_str()` and whose message is the core's `Display`, which
//! names the field or argument.

use napi::bindgen_prelude::Unknown;
use napi_derive::napi;
use sds_core::{Error, ErrorCode, StrategyError};

/// What native functions return: the status string becomes `err.code`.
pub type SdsError = napi::Error<&'static str>;

pub fn js_error(code: ErrorCode, message: impl ToString) -> napi::Error<&'static str> {
    napi::Error::new(code.as_str(), message)
}

pub fn from_core(error: Error) -> napi::Error<&'static str> {
    js_error(error.code(), error)
}

pub fn from_json(error: StrategyError) -> napi::Error<&'static str> {
    js_error(error.code(), error)
}

pub fn invalid_argument(message: impl ToString) -> napi::Error<&'static str> {
    js_error(ErrorCode::InvalidArgument, message)
}

/// Throws `SDS_INVALID_ARGUMENT` with `message`: the JavaScript half calls it
/// so its own argument errors come from the core's code table too.
#[napi(namespace = "native", ts_args_type = "message: string")]
pub fn throw_invalid_argument(message: Unknown) -> Result<(), SdsError> {
    Err(invalid_argument(crate::arguments::text(
        message, "message",
    )?))
}

/// Every error code name of the core, in numeric order.
#[napi(namespace = "native")]
pub fn error_codes() -> Vec<&'static str> {
    ErrorCode::ALL.iter().map(|c| c.as_str()).collect()
}
