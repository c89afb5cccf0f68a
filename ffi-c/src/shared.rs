//! `sds_table_open_shared`: an `sds_table` over a table file that every
//! process of the host may open (crate `sds-shm`), and the mapping of that
//! crate's errors to result codes and messages.

use std::ffi::OsStr;
use std::ops::Deref;
use std::os::raw::c_char;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use sds_core::ErrorCode;
use sds_shm::{Error, Options, SharedFile, Table};

use crate::args::{bytes, into_box};
use crate::boundary::{boundary, Failure};
use crate::result::{sds_result, SDS_MESSAGE_MAX};
use crate::table::{sds_table, Inner};

/// `sds_table_open_shared` flag: create the file with mode 0660 instead of
/// 0600, and accept an existing file that grants its group read and write.
pub const SDS_SHARED_GROUP: u32 = 1;
const KNOWN_SHARED_FLAGS: u32 = SDS_SHARED_GROUP;

/// This process's attachment to a table file, and its views of the table.
///
/// A view holds the owner id and the ledger row (where its permits are
/// counted) of the process it was made in, so a fork child must not use its
/// parent's. The view made at open serves the process that
/// opened (one load and a compare of the fork epoch per call); a fork child
/// of it makes its own view once, on its first call, and keeps it; a process
/// further down (a child of a child that already had made its view) makes
/// one per call.
pub(crate) struct SharedTable {
    // The views are declared before `file` so they are dropped first: they
    // borrow the mapping that `file` keeps alive.
    view: Table<'static>,
    /// `sds_shm::fork_epoch()` when `view` was made.
    epoch: u64,
    /// Boxed: a fork child's view, rarely made, kept out of the struct.
    child: OnceLock<Box<(u64, Table<'static>)>>,
    file: SharedFile,
}

/// A view of the shared table for one call: kept, or made for the call.
pub(crate) enum View<'a> {
    Kept(&'a Table<'a>),
    /// Boxed: the common case stays one pointer wide.
    Made(Box<Table<'a>>),
}

impl<'a> Deref for View<'a> {
    type Target = Table<'a>;

    #[inline(always)]
    fn deref(&self) -> &Table<'a> {
        match self {
            View::Kept(view) => view,
            View::Made(view) => view,
        }
    }
}

impl SharedTable {
    fn open(path: &Path, capacity: usize, flags: u32) -> Result<SharedTable, Failure> {
        let options = Options::new().group_access(flags & SDS_SHARED_GROUP != 0);
        let file = SharedFile::open(path, capacity, &options).map_err(|e| failure(path, &e))?;
        let view = file.table().map_err(|e| failure(path, &e))?;
        let epoch = sds_shm::fork_epoch();
        Ok(SharedTable {
            // SAFETY: see `forever`.
            view: unsafe { forever(view) },
            epoch,
            child: OnceLock::new(),
            file,
        })
    }

    /// This process's view of the table: a fork child registers in its own
    /// process slot before its first call.
    #[inline(always)]
    pub(crate) fn view(&self) -> Result<View<'_>, Failure> {
        if sds_shm::fork_epoch() == self.epoch {
            Ok(View::Kept(&self.view))
        } else {
            self.forked_view()
        }
    }

    #[cold]
    #[inline(never)]
    fn forked_view(&self) -> Result<View<'_>, Failure> {
        let epoch = sds_shm::fork_epoch();
        let made = || self.file.table().map_err(|e| failure(self.file.path(), &e));
        if let Some((at, view)) = self.child.get().map(|kept| &**kept) {
            return if *at == epoch {
                Ok(View::Kept(view))
            } else {
                made().map(|view| View::Made(Box::new(view)))
            };
        }
        let view = made()?;
        // SAFETY: see `forever`.
        let view = unsafe { forever(view) };
        // Another thread of this child may have set it first: then the
        // same process's view, as good as this one.
        let (at, kept) = &**self.child.get_or_init(|| Box::new((epoch, view)));
        if *at == epoch {
            Ok(View::Kept(kept))
        } else {
            made().map(|view| View::Made(Box::new(view)))
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.file.capacity()
    }

    /// A request was refused for its concurrency threshold at `now_ms`: the
    /// permits of processes that died holding some come back (at most one
    /// scan of the process slots per second per table, host-wide).
    #[cold]
    #[inline(never)]
    pub(crate) fn on_refused(&self, now_ms: u64) {
        self.file.on_refused(now_ms);
    }

    pub(crate) fn len(&self) -> usize {
        // The length is the table's, whichever process's view reads it.
        self.view.len()
    }
}

/// A view of `SharedTable`'s file at `'static`, to be kept beside it.
///
/// # Safety
/// The view borrows the state and slots of the file's mapping and the
/// attachment, both owned by the `Arc` behind the `SharedFile` (moving the
/// `SharedFile` does not move them) and freed only when its last clone
/// drops. The caller keeps the view in the same `SharedTable` as the file,
/// declared before it (dropped first); the `'static` never leaks: `view()`
/// hands views out at the lifetime of `&self`.
unsafe fn forever(view: Table<'_>) -> Table<'static> {
    // SAFETY: the caller's contract.
    unsafe { std::mem::transmute::<Table<'_>, Table<'static>>(view) }
}

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
        into_box(out, || {
            let path = file_path(bytes(path, path_len, "path")?)?;
            if flags & !KNOWN_SHARED_FLAGS != 0 {
                return Err(Failure::invalid(&format_args!(
                    "unknown flag bits {:#x} (only SDS_SHARED_GROUP is known)",
                    flags & !KNOWN_SHARED_FLAGS
                )));
            }
            let shared = SharedTable::open(path, capacity, flags)?;
            Ok(sds_table {
                inner: Inner::Shared(shared),
            })
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

/// The result code of a shared-table error.
fn code(e: &Error) -> ErrorCode {
    match e {
        Error::InvalidCapacity { .. } => ErrorCode::InvalidCapacity,
        Error::WrongVersion { .. } | Error::LayoutMismatch { .. } => ErrorCode::LayoutMismatch,
        Error::Core(e) => e.code(),
        // The file at the path is refused, or could not be opened.
        Error::Io { .. }
        | Error::Symlink { .. }
        | Error::NotRegularFile { .. }
        | Error::WrongOwner { .. }
        | Error::ModeTooWide { .. }
        | Error::InitTimeout { .. }
        | Error::NotATable { .. }
        | Error::Truncated { .. }
        | Error::Oversized { .. }
        | Error::NoProcessSlot { .. }
        | Error::Corrupt { .. } => ErrorCode::InvalidArgument,
        _ => ErrorCode::InvalidArgument,
    }
}

/// Records a shared-table error: its code, and its message (which names
/// the path and what is wrong with the file).
fn failure(path: &Path, e: &Error) -> Failure {
    let code = code(e);
    Failure::new(
        code,
        &message(path, e, SDS_MESSAGE_MAX - code.as_str().len() - 2),
    )
}

/// The message of `e` in at most about `room` bytes. Every message but the
/// core's starts with the path; a path too long for the room is cut to its
/// last characters, so that what is wrong with the file is never cut off.
fn message(path: &Path, e: &Error, room: usize) -> String {
    let shown = path.display().to_string();
    let text = match e {
        Error::Core(core) => format!("{shown}: {core}"),
        _ => e.to_string(),
    };
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
    use std::io;
    use std::path::PathBuf;
    use std::time::Duration;

    fn path() -> PathBuf {
        PathBuf::from("/dev/shm/app.sds")
    }

    #[test]
    fn every_error_names_the_path_and_what_is_wrong() {
        let p = path;
        let cases: Vec<(Error, ErrorCode, &str)> = vec![
            (
                Error::InvalidCapacity { capacity: 0 },
                ErrorCode::InvalidCapacity,
                "capacity 0 is out of range (1 to 1048576)",
            ),
            (
                Error::Io {
                    path: p(),
                    action: "open",
                    source: io::Error::from_raw_os_error(2),
                },
                ErrorCode::InvalidArgument,
                "/dev/shm/app.sds: open failed: No such file or directory (os error 2)",
            ),
            (
                Error::WrongOwner {
                    path: p(),
                    owner: 0,
                    euid: 1000,
                },
                ErrorCode::InvalidArgument,
                "/dev/shm/app.sds: owned by uid 0, not by this process's uid 1000 (refused)",
            ),
            (
                Error::ModeTooWide {
                    path: p(),
                    mode: 0o644,
                    allowed: 0o600,
                },
                ErrorCode::InvalidArgument,
                "/dev/shm/app.sds: mode 0644 grants more than the 0600 asked for (refused)",
            ),
            (
                Error::InitTimeout {
                    path: p(),
                    waited: Duration::from_millis(5000),
                },
                ErrorCode::InvalidArgument,
                "/dev/shm/app.sds: another process kept initialising the table for 5000 ms",
            ),
            (
                Error::LayoutMismatch {
                    path: p(),
                    field: sds_core::LayoutField::SlotSize,
                    ours: 1728,
                    theirs: 1600,
                },
                ErrorCode::LayoutMismatch,
                "/dev/shm/app.sds: table layout differs in slot_size: the file has 1600, this process needs 1728",
            ),
            (
                Error::WrongVersion {
                    path: p(),
                    ours: 1,
                    theirs: 2,
                },
                ErrorCode::LayoutMismatch,
                "/dev/shm/app.sds: table layout version 2, this build reads version 1",
            ),
            (
                Error::NoProcessSlot { path: p(), max: 256 },
                ErrorCode::InvalidArgument,
                "/dev/shm/app.sds: all 256 process slots are held by live processes",
            ),
            (
                Error::Core(sds_core::Error::InvalidCapacity),
                ErrorCode::InvalidCapacity,
                "/dev/shm/app.sds: ",
            ),
        ];
        for (e, want_code, want_start) in cases {
            assert_eq!(code(&e), want_code, "{e:?}");
            let text = message(&path(), &e, 200);
            assert!(text.starts_with(want_start), "{text}");
        }
    }

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
