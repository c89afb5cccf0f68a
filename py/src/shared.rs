//! `Client.shared`: a table in a file every process of the host may open
//! (crate `sds-shm`), this process's view of it, and the mapping of that
//! crate's errors to the Python exceptions of the core's codes.

use std::ffi::OsStr;
use std::ops::Deref;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pyo3::prelude::*;
use sds_core::ErrorCode;
use sds_shm::{Error, Options, SharedFile, Table};

use crate::errors;

/// Where a bare name (no `/`) puts its file.
const SHM_DIR: &str = "/dev/shm";
/// The two modes a table file may be created with.
const PRIVATE_MODE: u32 = 0o600;
const GROUP_MODE: u32 = 0o660;

/// This process's attachment to a table file, and its views of the table.
///
/// A view holds the owner id of the process that made it, so a fork child
/// must not use its parent's. `sds_shm::fork_epoch()` changes in every fork
/// child (shm's `pthread_atfork` handler): the view made at open serves the
/// opening process (one load and a compare per call); a fork child (a
/// gunicorn or multiprocessing worker) makes its own view on its first call,
/// which registers it in its own process slot, and keeps it; a process
/// further down (a child of such a child) makes one per call.
pub struct SharedTable {
    // Declared before `file`, so dropped first: they borrow its mapping.
    view: Table<'static>,
    /// `sds_shm::fork_epoch()` when `view` was made.
    epoch: u64,
    /// A fork child's own view, with the epoch it was made at.
    child: OnceLock<Box<(u64, Table<'static>)>>,
    file: SharedFile,
}

/// A view of the shared table for one call: kept, or made for the call.
pub enum View<'a> {
    Kept(&'a Table<'a>),
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
    /// Opens (creating if needed) the table of `name_or_path` for
    /// `capacity` points, with `mode` 0o600 or 0o660.
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
        let file = py
            .detach(|| SharedFile::open(&path, capacity, &options))
            .map_err(|e| shm(py, &e))?;
        let view = file.table().map_err(|e| shm(py, &e))?;
        Ok(SharedTable {
            // SAFETY: see `forever`.
            view: unsafe { forever(view) },
            epoch: sds_shm::fork_epoch(),
            child: OnceLock::new(),
            file,
        })
    }

    /// This process's view of the table (a fork child registers first).
    #[inline(always)]
    pub fn view(&self, py: Python<'_>) -> PyResult<View<'_>> {
        if sds_shm::fork_epoch() == self.epoch {
            Ok(View::Kept(&self.view))
        } else {
            self.forked_view(py)
        }
    }

    #[cold]
    #[inline(never)]
    fn forked_view(&self, py: Python<'_>) -> PyResult<View<'_>> {
        let epoch = sds_shm::fork_epoch();
        let made = || self.file.table().map_err(|e| shm(py, &e));
        let (at, kept) = match self.child.get() {
            Some(kept) => &**kept,
            None => {
                // SAFETY: see `forever`.
                let view = unsafe { forever(made()?) };
                // Another thread of this child may have set it first: then
                // that view is this same process's, as good as ours.
                &**self.child.get_or_init(|| Box::new((epoch, view)))
            }
        };
        if *at == epoch {
            Ok(View::Kept(kept))
        } else {
            made().map(|view| View::Made(Box::new(view)))
        }
    }

    pub fn capacity(&self) -> usize {
        self.file.capacity()
    }

    /// How many points the table holds (the same from every process).
    pub fn len(&self) -> usize {
        self.view.len()
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

/// A view of `SharedTable`'s file at `'static`, to be kept beside it.
///
/// # Safety
/// The view borrows the mapping and the attachment, owned by the `Arc`
/// behind the `SharedFile` (moving the `SharedFile` does not move them) and
/// freed only when its last clone drops. The caller keeps the view in the
/// same `SharedTable` as the file, declared before it (dropped first), and
/// hands it out only at the lifetime of `&self`.
unsafe fn forever(view: Table<'_>) -> Table<'static> {
    // SAFETY: the caller's contract.
    unsafe { std::mem::transmute::<Table<'_>, Table<'static>>(view) }
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

/// The core's code of a shared-table error.
fn code(e: &Error) -> ErrorCode {
    match e {
        Error::InvalidCapacity { .. } => ErrorCode::InvalidCapacity,
        Error::WrongVersion { .. } | Error::LayoutMismatch { .. } => ErrorCode::LayoutMismatch,
        Error::Core(e) => e.code(),
        // The file at the path is refused, or could not be opened.
        _ => ErrorCode::InvalidArgument,
    }
}

/// A shared-table error as the Python exception of its code, with shm's
/// message (which names the path and what is wrong with the file).
fn shm(py: Python<'_>, e: &Error) -> PyErr {
    let message = match e {
        Error::Core(core) => format!("{core}"),
        _ => e.to_string(),
    };
    errors::raise(py, code(e), message, None)
}
