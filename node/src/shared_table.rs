//! A client's table over a table file shared by every process of the host
//! (crate `sds-shm`): opening it from what JavaScript gives, this process's
//! view of it, and shm's errors as JavaScript errors.
//!
//! `SharedFile::open` keeps one attachment per file per process, so the
//! clients of several worker threads (or several clients of one thread) on
//! one file share it: one process slot, one owner id, the same counts.

use std::path::{Path, PathBuf};

use sds_core::ErrorCode;
use sds_shm::{Error, Options, SharedFile};

use crate::errors::{invalid_argument, js_error, SdsError};

/// The core's table over the file's mapping, as this process.
pub type View<'a> = sds_shm::Table<'a>;

/// Where a bare name (no `/`) is put: the tmpfs every Linux host mounts.
const SHM_DIR: &str = "/dev/shm";

/// This process's attachment to a table file and its view of the table.
pub struct SharedTable {
    // Declared before `file` so it is dropped first: it borrows the mapping
    // and attachment that `file` keeps alive.
    view: View<'static>,
    /// `sds_shm::fork_epoch()` when `view` was made.
    epoch: u64,
    file: SharedFile,
}

/// A view for one call: the one kept, or one made for the call.
pub enum ViewRef<'a> {
    Kept(&'a View<'a>),
    Made(Box<View<'a>>),
}

impl<'a> std::ops::Deref for ViewRef<'a> {
    type Target = View<'a>;

    #[inline(always)]
    fn deref(&self) -> &View<'a> {
        match self {
            ViewRef::Kept(view) => view,
            ViewRef::Made(view) => view,
        }
    }
}

impl SharedTable {
    /// Opens (creating if needed) the table file `name_or_path` for
    /// `capacity` points; `mode` is 0o600 or 0o660 (group read and write).
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
        let file = SharedFile::open(&path, capacity, &options).map_err(|e| from_shm(&path, &e))?;
        let view = file.table().map_err(|e| from_shm(&path, &e))?;
        Ok(SharedTable {
            // SAFETY: see `forever`.
            view: unsafe { forever(view) },
            epoch: sds_shm::fork_epoch(),
            file,
        })
    }

    /// This process's view: the one made at open, unless this process is a
    /// fork child of the one that opened (a native addon may fork), which
    /// registers itself and gets a view of its own per call.
    #[inline(always)]
    pub fn view(&self) -> Result<ViewRef<'_>, SdsError> {
        if sds_shm::fork_epoch() == self.epoch {
            Ok(ViewRef::Kept(&self.view))
        } else {
            self.forked_view()
        }
    }

    #[cold]
    #[inline(never)]
    fn forked_view(&self) -> Result<ViewRef<'_>, SdsError> {
        let view = self
            .file
            .table()
            .map_err(|e| from_shm(self.file.path(), &e))?;
        Ok(ViewRef::Made(Box::new(view)))
    }

    pub fn capacity(&self) -> usize {
        self.file.capacity()
    }

    /// How many points the file holds (whichever process made them).
    pub fn len(&self) -> usize {
        self.view.len()
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

/// The view at `'static`, to be kept beside its file.
///
/// # Safety
/// The view borrows the mapping and the attachment behind the `SharedFile`'s
/// `Arc` (moving the `SharedFile` does not move them), freed only when its
/// last clone drops. The caller keeps the view in the same `SharedTable` as
/// the file, declared before it; `view()` lends it at `&self`'s lifetime.
unsafe fn forever(view: View<'_>) -> View<'static> {
    // SAFETY: the caller's contract.
    unsafe { std::mem::transmute::<View<'_>, View<'static>>(view) }
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

/// The core's code of a shm error: a bad capacity and a layout that differs
/// have their own; every other refusal of the file is an invalid argument.
fn code(e: &Error) -> ErrorCode {
    match e {
        Error::InvalidCapacity { .. } => ErrorCode::InvalidCapacity,
        Error::WrongVersion { .. } | Error::LayoutMismatch { .. } => ErrorCode::LayoutMismatch,
        Error::Core(e) => e.code(),
        _ => ErrorCode::InvalidArgument,
    }
}

/// A shm error as thrown to JavaScript: its code, and shm's message (which
/// names the path; the core's own errors get the path put in front).
pub fn from_shm(path: &Path, e: &Error) -> SdsError {
    let message = match e {
        Error::Core(core) => format!("{}: {core}", path.display()),
        _ => e.to_string(),
    };
    js_error(code(e), message)
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
        let e = from_shm(
            path,
            &Error::LayoutMismatch {
                path: path.into(),
                field: sds_core::LayoutField::Capacity,
                ours: 8,
                theirs: 16,
            },
        );
        assert_eq!(e.status, "SDS_LAYOUT_MISMATCH");
        assert!(e.reason.starts_with("/dev/shm/app.sds: "), "{}", e.reason);
        let e = from_shm(path, &Error::InvalidCapacity { capacity: 0 });
        assert_eq!(e.status, "SDS_INVALID_CAPACITY");
        let e = from_shm(path, &Error::Core(sds_core::Error::InvalidCapacity));
        assert!(e.reason.starts_with("/dev/shm/app.sds: "), "{}", e.reason);
    }
}
