//! What a client's calls reach: an `sds_shm::AnyTable`, a private table on
//! the heap or this process's view of a table file shared by every process
//! of the host (`sds_shm::SharedTable`, which also gives each process, fork
//! children included, its own view), held in an `Arc` so the background
//! services (`service.rs`) can hold it too. Every call goes through
//! [`with_view!`], compiled once per kind, so the private hot path pays one
//! well-predicted branch and nothing else (an `Arc` derefs like the `Rc` it
//! replaced: one pointer).
//!
//! `SharedFile::open` keeps one attachment per file per process, so the
//! clients of several worker threads (or several clients of one thread) on
//! one file share it: one process slot, one owner id, the same counts.

use sds_shm::{table_path, AnyTable, Error, Options, SharedTable};

use crate::errors::{js_error, SdsError};

/// Runs `$body` with `$t` bound to the core's table of `$table` (an
/// `&AnyTable`): the private one, or this process's view of the shared one
/// (which a fork child must make first, and that may fail: `?` on an
/// `SdsError`; its `enter_point` gives back dead holders' permits after a
/// refusal for concurrency).
macro_rules! with_view {
    ($table:expr, $t:ident => $body:expr) => {
        match $table {
            sds_shm::AnyTable::Private($t) => $body,
            sds_shm::AnyTable::Shared(shared) => {
                let view = shared.view().map_err(|e| $crate::table::from_shm(&e))?;
                let $t = &view;
                $body
            }
        }
    };
}
pub(crate) use with_view;

/// How many points exist.
pub fn point_count(table: &AnyTable) -> usize {
    match table {
        AnyTable::Private(t) => t.len(),
        AnyTable::Shared(shared) => shared.len(),
    }
}

/// Opens (creating if needed) the table file `name_or_path` (a bare name is
/// a file under /dev/shm) for `capacity` points; `mode` is 0o600 or 0o660
/// (group read and write).
pub fn open(name_or_path: &str, capacity: usize, mode: u32) -> Result<SharedTable, SdsError> {
    let path = table_path(name_or_path).map_err(|e| from_shm(&e))?;
    let options = Options::of_mode(mode).map_err(|e| from_shm(&e))?;
    SharedTable::open(&path, capacity, &options).map_err(|e| from_shm(&e))
}

/// A shm error as thrown to JavaScript: its code, and shm's message (which
/// names the path and what is wrong).
#[cold]
#[inline(never)]
pub fn from_shm(e: &Error) -> SdsError {
    js_error(e.code(), e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn shm_errors_keep_their_code_and_message() {
        let path = Path::new("/dev/shm/app.sds");
        let e = from_shm(&Error::LayoutMismatch {
            path: path.into(),
            field: sds_core::LayoutField::Capacity,
            ours: 8,
            theirs: 16,
        });
        assert_eq!(e.status, "SDS_LAYOUT_MISMATCH");
        assert!(e.reason.starts_with("/dev/shm/app.sds: "), "{}", e.reason);
        let e = from_shm(&Error::InvalidCapacity { capacity: 0 });
        assert_eq!(e.status, "SDS_INVALID_CAPACITY");
        let e = from_shm(&Error::Core {
            path: path.into(),
            source: sds_core::Error::InvalidCapacity,
        });
        assert!(e.reason.starts_with("/dev/shm/app.sds: "), "{}", e.reason);
    }
}
