//! `Client.shared`: a table in a file every process of the host may open
//! (`sds_shm::SharedTable`, which also gives each process, fork children
//! included, its own view), from a name or path, and that crate's errors as
//! the Python exceptions of the core's codes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use sds_shm::{Error, Options, SharedTable};

use crate::errors;

/// Where a bare name (no `/`) puts its file.
const SHM_DIR: &str = "/dev/shm";
/// The two modes a table file may be created with.
const PRIVATE_MODE: u32 = 0o600;
const GROUP_MODE: u32 = 0o660;

/// Opens (creating if needed) the table of `name_or_path` for `capacity`
/// points, with `mode` 0o600 or 0o660, and makes this process's view of it.
pub fn open(
    py: Python<'_>,
    name_or_path: &str,
    capacity: usize,
    mode: u32,
) -> PyResult<SharedTable> {
    let path = file_path(py, name_or_path)?;
    let options = match mode {
        PRIVATE_MODE => Options::new(),
        GROUP_MODE => Options::new().group_access(true),
        _ => {
            return Err(errors::argument(
                py,
                format!("mode must be 0o600 or 0o660, not {mode:#o}"),
            ))
        }
    };
    // Opening may wait for another process initialising the file.
    py.detach(|| SharedTable::open(&path, capacity, &options))
        .map_err(|e| shm(py, &e))
}

/// The file of `name_or_path`: a bare name (no `/`) is a file under
/// `/dev/shm`; anything with a `/` is a path, used as given.
fn file_path(py: Python<'_>, name_or_path: &str) -> PyResult<PathBuf> {
    let bad = |why: &str| errors::argument(py, format!("shared table name {name_or_path:?} {why}"));
    if name_or_path.contains('\0') {
        return Err(bad("holds a NUL character"));
    }
    if name_or_path.contains('/') {
        return Ok(PathBuf::from(OsStr::from_bytes(name_or_path.as_bytes())));
    }
    match name_or_path {
        "" => Err(bad("is empty")),
        "." | ".." => Err(bad("is no file name")),
        name => Ok(Path::new(SHM_DIR).join(name)),
    }
}

/// A shared-table error as the Python exception of its code, with shm's
/// message (which names the path and what is wrong with the file).
#[cold]
#[inline(never)]
pub fn shm(py: Python<'_>, e: &Error) -> PyErr {
    errors::raise(py, e.code(), e.to_string(), None)
}
