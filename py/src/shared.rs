//! `Client.shared`: a table in a file every process of the host may open
//! (`sds_shm::SharedTable`, which also gives each process, fork children
//! included, its own view), from a name or path, and that crate's errors as
//! the Python exceptions of the core's codes.

use pyo3::prelude::*;
use sds_shm::{table_path, Error, Options, SharedTable};

use crate::errors;

/// Opens (creating if needed) the table of `name_or_path` (a bare name is a
/// file under /dev/shm) for `capacity` points, with `mode` 0o600 or 0o660,
/// and makes this process's view of it.
pub fn open(
    py: Python<'_>,
    name_or_path: &str,
    capacity: usize,
    mode: u32,
) -> PyResult<SharedTable> {
    let path = table_path(name_or_path).map_err(|e| shm(py, &e))?;
    let options = Options::of_mode(mode).map_err(|e| shm(py, &e))?;
    // Opening may wait for another process initialising the file.
    py.detach(|| SharedTable::open(&path, capacity, &options))
        .map_err(|e| shm(py, &e))
}

/// A shared-table error as the Python exception of its code, with shm's
/// message (which names the path and what is wrong with the file).
#[cold]
#[inline(never)]
pub fn shm(py: Python<'_>, e: &Error) -> PyErr {
    errors::raise(py, e.code(), e.to_string(), None)
}
