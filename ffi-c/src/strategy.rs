//! The core's `Strategy` (C's `sds_strategy`): its defaults, and JSON text
//! read by the core's `Strategy::from_json`, so every binding accepts the
//! same texts with the same messages.

use std::os::raw::c_char;

use sds_core::{ErrorCode, Strategy};

use crate::args::bytes;
use crate::boundary::{boundary, boundary_or, Failure};
use crate::result::sds_result;

/// The reference's defaults: every rule off, `downgrade_rate` 100. Infallible.
#[no_mangle]
pub extern "C" fn sds_strategy_default() -> Strategy {
    boundary_or(Strategy::DEFAULT, || Strategy::DEFAULT)
}

/// Parses `json_len` bytes of SDS strategy JSON (a flat object of SDS JSON
/// names with integer values, e.g. `{"visitThreshold": 10}`; a `"point"` key
/// is skipped), starting from the defaults, validates it and writes it to
/// `*out`.
///
/// Returns `SDS_RESULT_INVALID_JSON` for malformed or non-UTF-8 text,
/// `SDS_RESULT_UNKNOWN_FIELD` for another key, `SDS_RESULT_INVALID_STRATEGY`
/// for a value its rule rejects, `SDS_RESULT_NULL_ARGUMENT` for a NULL
/// pointer. `sds_last_error_message` then names the field or the offset.
///
/// # Safety
/// `json` must point to `json_len` readable bytes; `out` to a writable struct.
#[no_mangle]
pub unsafe extern "C" fn sds_strategy_from_json(
    json: *const c_char,
    json_len: usize,
    out: *mut Strategy,
) -> sds_result {
    boundary(|| {
        let text = bytes(json, json_len, "json")?;
        let out = crate::args::out(out, "out")?;
        out.write(parse(text)?);
        Ok(())
    })
}

/// The strategy in `text`, through the core's reader; its error's message
/// becomes the last error.
pub(crate) fn parse(text: &[u8]) -> Result<Strategy, Failure> {
    let text = core::str::from_utf8(text).map_err(|e| {
        Failure::new(
            ErrorCode::InvalidJson,
            &format_args!("JSON text is not UTF-8 (byte {})", e.valid_up_to()),
        )
    })?;
    Ok(Strategy::from_json(text)?)
}
