//! A client's table over a table file shared by every process of the host
//! (`sds_shm::SharedTable`, which also gives each process, fork children
//! included, its own view): opening it from what JavaScript gives, and
//! shm's errors as JavaScript errors.
//!
//! `SharedFile::open` keeps one attachment per file per process, so the
//! clients of several worker threads (or several clients of one thread) on
//! one file share it: one process slot, one owner id, the same counts.

use std::path::{Path, PathBuf};

use sds_shm::{Error, Options, SharedTable};

use crate::errors::{invalid_argument, js_error, SdsError};

/// Where a bare name (no `/`) is put: the tmpfs every Linux host mounts.
const SHM_DIR: &str = "/dev/shm";

/// Opens (creating if needed) the table file `name_or_path` for `capacity`
/// points; `mode` is 0o600 or 0o660 (group read and write).
pub fn open(name_or_path: &str, capacity: usize, mode: u32) -> Result<SharedTable, SdsError> {
    let path = file_path(name_or_path)?;
    let group = match mode {
        0o600 => false,
        0o660 => true,
        _ => {
            return Err(invalid_argument(format!(
                "mode must be 0o600 or 0o660, got 0o{mode:o}"
            )))
        }
    };
    let options = Options::new().group_access(group);
    SharedTable::open(&path, capacity, &options).map_err(|e| from_shm(&e))
}

/// The file of `name_or_path`: a bare name (no `/`) is a file under
/// `/dev/shm`; anything else is the path itself.
pub fn file_path(name_or_path: &str) -> Result<PathBuf, SdsError> {
    if name_or_path.contains('\0') {
        return Err(invalid_argument(
            "shared: a path cannot hold a NUL character",
        ));
    }
    if name_or_path.contains('/') {
        return Ok(PathBuf::from(name_or_path));
    }
    match name_or_path {
        "" => Err(invalid_argument("shared: the name is empty")),
        "." | ".." => Err(invalid_argument(format!(
            "shared: {name_or_path:?} is not a file name"
        ))),
        name => Ok(Path::new(SHM_DIR).join(name)),
    }
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

    #[test]
    fn a_bare_name_is_a_file_under_dev_shm() {
        assert_eq!(file_path("app.sds").unwrap(), Path::new("/dev/shm/app.sds"));
        assert_eq!(file_path("./app.sds").unwrap(), Path::new("./app.sds"));
        assert_eq!(file_path("/tmp/x").unwrap(), Path::new("/tmp/x"));
    }

    #[test]
    fn an_empty_dot_or_nul_name_is_refused() {
        for bad in ["", ".", "..", "a\0b"] {
            let e = file_path(bad).unwrap_err();
            assert_eq!(e.status, "SDS_INVALID_ARGUMENT", "{bad:?}");
        }
    }

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
