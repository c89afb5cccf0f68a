//! `sds_result`: the core's error codes as C numbers, and their text written
//! into caller buffers (no allocation, nothing to free).

use core::cell::RefCell;
use core::fmt::{self, Display, Write};
use std::os::raw::c_char;

use sds_core::ErrorCode;

use crate::args::{append_fitting, TextWriter};
use crate::boundary::{boundary, Failure};

/// The result of every fallible function. The values are the core's error
/// codes (`ErrorCode::as_u32`): stable, appended to, never renumbered.
// Kept here, not generated from the core's `ErrorCode`, because C needs the
// `Ok = 0` that `Result::Ok` stands for in Rust; the checks below and
// `tests/tables.rs` hold it to the core's codes and names.
#[repr(u32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum sds_result {
    /// Success.
    Ok = 0,
    /// A strategy field has a value its rule rejects.
    InvalidStrategy = 1,
    /// A strategy key is not one of the SDS JSON names.
    UnknownField = 2,
    /// Window parameters that cannot form a window.
    InvalidWindow = 3,
    /// A point name of zero bytes.
    EmptyName = 4,
    /// A point name longer than `SDS_MAX_NAME_LEN` bytes.
    NameTooLong = 5,
    /// The point table has no free slot for a new name.
    TableFull = 6,
    /// A table capacity of 0 or above `SDS_MAX_CAPACITY`, or memory for it
    /// could not be allocated.
    InvalidCapacity = 7,
    /// An entry that does not belong to this table.
    InvalidEntry = 8,
    /// Text that is not well-formed JSON (or not UTF-8).
    InvalidJson = 9,
    /// An argument outside the values the function accepts (unknown flag
    /// bits or outcome, a zero-length buffer, an unknown code).
    InvalidArgument = 10,
    /// A required pointer was NULL.
    NullArgument = 11,
    /// Reserved (bindings with an explicit close); libsds does not return it.
    Closed = 12,
    /// A bug: a panic was caught at the boundary.
    Panic = 13,
    /// Reserved (bindings' "downgraded without a fallback"); libsds reports
    /// a downgrade in the `sds_entry`, never as a result.
    Downgraded = 14,
    /// `sds_table_open_shared`: a table file of another layout or capacity;
    /// the message names the field that differs.
    LayoutMismatch = 15,
    /// Reserved (bindings' "a server the call needs failed", e.g. a
    /// cluster's sync now); no libsds call waits on a server: cluster syncs
    /// fail in `sds_cluster_status`, exact mode falls back to the local
    /// decision.
    Unavailable = 16,
}

impl sds_result {
    /// The C result of a core code. Exhaustive: a code added to the core
    /// does not build until it has a C name.
    pub(crate) const fn from_code(code: ErrorCode) -> sds_result {
        match code {
            ErrorCode::InvalidStrategy => sds_result::InvalidStrategy,
            ErrorCode::UnknownField => sds_result::UnknownField,
            ErrorCode::InvalidWindow => sds_result::InvalidWindow,
            ErrorCode::EmptyName => sds_result::EmptyName,
            ErrorCode::NameTooLong => sds_result::NameTooLong,
            ErrorCode::TableFull => sds_result::TableFull,
            ErrorCode::InvalidCapacity => sds_result::InvalidCapacity,
            ErrorCode::InvalidEntry => sds_result::InvalidEntry,
            ErrorCode::InvalidJson => sds_result::InvalidJson,
            ErrorCode::InvalidArgument => sds_result::InvalidArgument,
            ErrorCode::NullArgument => sds_result::NullArgument,
            ErrorCode::Closed => sds_result::Closed,
            ErrorCode::Panic => sds_result::Panic,
            ErrorCode::Downgraded => sds_result::Downgraded,
            ErrorCode::LayoutMismatch => sds_result::LayoutMismatch,
            ErrorCode::Unavailable => sds_result::Unavailable,
        }
    }
}

// Every core code keeps its number in C.
const _: () = {
    let mut i = 0;
    while i < ErrorCode::ALL.len() {
        let code = ErrorCode::ALL[i];
        assert!(sds_result::from_code(code) as u32 == code.as_u32());
        i += 1;
    }
};

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

#[cfg(test)]
pub(crate) fn last_error_text() -> String {
    LAST_ERROR.with(|c| String::from_utf8(c.borrow().text[..c.borrow().len].to_vec()).unwrap())
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
        let mut writer = TextWriter::new(buf, len, written)?;
        if code == 0 {
            let _ = writer.write_str("SDS_OK: success");
        } else {
            let known = ErrorCode::from_u32(code)
                .ok_or_else(|| Failure::invalid(&format_args!("{code} is not an sds_result")))?;
            let _ = write!(writer, "{}: {}", known.as_str(), known.description());
        }
        writer.finish();
        Ok(())
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
            return Err(Failure(sds_result::NullArgument));
        }
        if len == 0 {
            return Err(Failure(sds_result::InvalidArgument));
        }
        let mut writer = TextWriter::new(buf, len, written)?;
        LAST_ERROR.with(|cell| match cell.try_borrow() {
            // Only whole characters are ever recorded, so this is UTF-8.
            Ok(last) => {
                let _ =
                    writer.write_str(core::str::from_utf8(&last.text[..last.len]).unwrap_or(""));
                Ok(())
            }
            Err(_) => Err(Failure::invalid(&"last error is being written")),
        })?;
        writer.finish();
        Ok(())
    })
}
