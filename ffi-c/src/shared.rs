//! `sds_table_open_shared`: an `sds_table` over a table file that every
//! process of the host may open (`sds_shm::SharedTable`), and that crate's
//! errors as result codes and messages that fit the message buffer.

use std::ffi::OsStr;
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sds_core::check_capacity;
use sds_shm::{AnyTable, Error, Options, SharedTable};

use crate::args::bytes;
use crate::boundary::{boundary, Failure};
use crate::result::{sds_result, SDS_MESSAGE_MAX};
use crate::table::{sds_table, table_output};

/// `sds_table_open_shared` flag: create the file with mode 0660 instead of
/// 0600, and accept an existing file that grants its group read and write.
pub const SDS_SHARED_GROUP: u32 = 1;
const KNOWN_SHARED_FLAGS: u32 = SDS_SHARED_GROUP;

/// Opens the table file at `path` (`path_len` bytes, no NUL), creating and
/// initialising it if it does not exist, attaches this process to it, and
/// writes the table to `*out`. Every process that opens the same file
/// shares its points: visits, permits, strategies and delays are host-wide.
/// All `sds_table_*`, `sds_enter*`, `sds_exit` and `sds_stats_get` calls
/// work on it; `sds_table_free` detaches (the file stays).
///
/// A new file is created with mode 0600 (0660 with `SDS_SHARED_GROUP`),
/// never through a symbolic link; an existing one must be a regular file
/// owned by this process's user, granting no more than that mode, and laid
/// out for exactly `capacity` points by a compatible build. A process that
/// forks after opening may use the table in the child, which registers
/// itself on its first call. Opening a file this process has already
/// opened shares the same attachment.
///
/// Returns `SDS_RESULT_INVALID_CAPACITY` for a capacity of 0 or above
/// `SDS_MAX_CAPACITY`; `SDS_RESULT_LAYOUT_MISMATCH` for a table of another
/// layout version, layout or capacity (the message names the first field
/// that differs, this process's value and the file's);
/// `SDS_RESULT_INVALID_ARGUMENT` for unknown `flags` bits, a path that is
/// empty or holds a NUL, and for every other file that is refused
/// (symbolic link, another owner, a wider mode, not a table, truncated,
/// still being initialised after 5 s, no free process slot, a system call
/// failing); the last error message names the path and what is wrong. `SDS_RESULT_NULL_ARGUMENT` if
/// `path` or `out` is NULL.
///
/// # Safety
/// `path` must point to `path_len` readable bytes and `out` to a writable
/// `sds_table *`.
#[no_mangle]
pub unsafe extern "C" fn sds_table_open_shared(
    path: *const c_char,
    path_len: usize,
    capacity: usize,
    flags: u32,
    out: *mut *mut sds_table,
) -> sds_result {
    boundary(|| {
        table_output(out, || {
            let path = file_path(bytes(path, path_len, "path")?)?;
            if flags & !KNOWN_SHARED_FLAGS != 0 {
                return Err(Failure::invalid(&format_args!(
                    "unknown flag bits {:#x} (only SDS_SHARED_GROUP is known)",
                    flags & !KNOWN_SHARED_FLAGS
                )));
            }
            // The core's verdict and message, as for a private table.
            check_capacity(capacity)?;
            let options = Options::new().group_access(flags & SDS_SHARED_GROUP != 0);
            let shared =
                SharedTable::open(path, capacity, &options).map_err(|e| failure(path, &e))?;
            Ok(AnyTable::Shared(shared))
        })
    })
}

/// The path of `bytes`: any bytes but NUL, which no OS path can hold.
fn file_path(bytes: &[u8]) -> Result<&Path, Failure> {
    if bytes.is_empty() {
        return Err(Failure::invalid(&"`path` is empty"));
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(Failure::invalid(&format_args!(
            "`path` holds a NUL byte at offset {at}"
        )));
    }
    Ok(Path::new(OsStr::from_bytes(bytes)))
}

/// Records a shared-table error: its code, and its message (which names
/// the path and what is wrong with the file).
#[cold]
#[inline(never)]
pub(crate) fn failure(path: &Path, e: &Error) -> Failure {
    let code = e.code();
    Failure::new(
        code,
        &message(path, e, SDS_MESSAGE_MAX - code.as_str().len() - 2),
    )
}

/// The message of `e` in at most about `room` bytes. Every message but a
/// bad capacity's starts with the path; a path too long for the room is cut
/// to its last characters, so that what is wrong with the file is never cut
/// off.
fn message(path: &Path, e: &Error, room: usize) -> String {
    let shown = path.display().to_string();
    let text = e.to_string();
    let Some(rest) = text.strip_prefix(shown.as_str()) else {
        return text;
    };
    if text.len() <= room {
        return text;
    }
    let keep = room.saturating_sub(rest.len() + 3).max(24);
    let mut cut = shown.len().saturating_sub(keep);
    while !shown.is_char_boundary(cut) {
        cut += 1;
    }
    format!("...{}{rest}", &shown[cut..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_long_path_is_cut_at_its_start_so_the_cause_stays() {
        let long = PathBuf::from(format!("/tmp/{}/table.sds", "d".repeat(400)));
        let e = Error::Truncated {
            path: long.clone(),
            expected: 12288,
            found: 100,
        };
        let text = message(&long, &e, 200);
        assert!(text.len() <= 200, "{}", text.len());
        assert!(text.starts_with("...ddd"), "{text}");
        assert!(
            text.ends_with("/table.sds: truncated: 100 bytes, the table needs 12288"),
            "{text}"
        );
    }
}
