//! `sds_result`: the core's error codes as C numbers, and their text written
//! into caller buffers (no allocation, nothing to free).

use core::cell::RefCell;
use core::fmt::{self, Display, Write};
use std::os::raw::c_char;

use sds_core::ErrorCode;

use crate::args::{append_fitting, write_text};
use crate::boundary::{boundary, Failure};

/// The result of every fallible function: `SDS_RESULT_OK` (0) or the number
/// of one of the core's error codes. The header's `enum sds_result` is the
/// core's `ErrorCode` itself, renamed by cbindgen (`cbindgen.toml` adds the
/// 0), so there is one table of codes.
#[repr(transparent)]
#[derive(Copy, Clone, PartialEq, Eq)]
#[must_use]
pub struct sds_result(pub u32);

impl sds_result {
    /// Success.
    #[allow(non_upper_case_globals)]
    pub const Ok: sds_result = sds_result(0);

    /// The C result of a core code.
    pub const fn of(code: ErrorCode) -> sds_result {
        sds_result(code.as_u32())
    }

    /// The core code, `None` for success.
    pub fn code(self) -> Option<ErrorCode> {
        ErrorCode::from_u32(self.0)
    }
}

impl PartialEq<ErrorCode> for sds_result {
    fn eq(&self, code: &ErrorCode) -> bool {
        self.0 == code.as_u32()
    }
}

impl fmt::Debug for sds_result {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code() {
            Some(code) => f.write_str(code.as_str()),
            None => f.write_str("SDS_OK"),
        }
    }
}

/// The longest message libsds writes, in bytes, without its NUL: a buffer of
/// `SDS_MESSAGE_MAX + 1` bytes never truncates.
pub const SDS_MESSAGE_MAX: usize = 255;

/// The detail of this thread's last failure, kept in a fixed buffer so that
/// recording it never allocates.
struct LastError {
    text: [u8; SDS_MESSAGE_MAX],
    len: usize,
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> =
        const { RefCell::new(LastError { text: [0; SDS_MESSAGE_MAX], len: 0 }) };
}

impl Write for LastError {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        append_fitting(&mut self.text, &mut self.len, s)
    }
}

/// Records `code: detail` as this thread's last error (truncated to fit).
pub(crate) fn last_error_record(code: ErrorCode, detail: &dyn Display) {
    // A thread being torn down has no slot left: the code alone still says it.
    let _ = LAST_ERROR.try_with(|cell| {
        if let Ok(mut last) = cell.try_borrow_mut() {
            last.len = 0;
            let _ = write!(last, "{}: {}", code.as_str(), detail);
        }
    });
}

/// Writes the name and description of result `code` (e.g. `SDS_TABLE_FULL:
/// point table is full`) into `buf` as a NUL-terminated string of at most
/// `len - 1` bytes, truncated to fit, and its length without the NUL into
/// `*written`. Never allocates.
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for a `code` that is no
/// `sds_result` or a `len` of 0, `SDS_RESULT_NULL_ARGUMENT` if `buf` or
/// `written` is NULL; nothing is written then.
///
/// # Safety
/// `buf` must point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn sds_result_message(
    code: u32,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> sds_result {
    boundary(|| {
        write_text(buf, len, written, |w| {
            let _ = match ErrorCode::from_u32(code) {
                _ if code == 0 => w.write_str("SDS_OK: success"),
                Some(known) => write!(w, "{}: {}", known.as_str(), known.description()),
                None => {
                    return Err(Failure::invalid(&format_args!(
                        "{code} is not an sds_result"
                    )))
                }
            };
            Ok(())
        })
    })
}

/// Writes the detail of the last failure on the calling thread (e.g.
/// `SDS_UNKNOWN_FIELD: unknown strategy field "visitThreshol"`) like
/// `sds_result_message`; an empty string if no call has failed on this
/// thread yet. Successful calls leave it unchanged, so read it right after
/// the failing call. Never allocates.
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for a `len` of 0,
/// `SDS_RESULT_NULL_ARGUMENT` if `buf` or `written` is NULL; these failures
/// keep the message they could not deliver.
///
/// # Safety
/// `buf` must point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn sds_last_error_message(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> sds_result {
    boundary(|| {
        // Checked here without recording, so a bad call keeps the message.
        if buf.is_null() || written.is_null() {
            return Err(Failure(sds_result::of(ErrorCode::NullArgument)));
        }
        if len == 0 {
            return Err(Failure(sds_result::of(ErrorCode::InvalidArgument)));
        }
        write_text(buf, len, written, |w| {
            LAST_ERROR.with(|cell| match cell.try_borrow() {
                // Only whole characters are ever recorded, so this is UTF-8.
                Ok(last) => {
                    let _ = w.write_str(core::str::from_utf8(&last.text[..last.len]).unwrap_or(""));
                    Ok(())
                }
                Err(_) => Err(Failure::invalid(&"last error is being written")),
            })
        })
    })
}
