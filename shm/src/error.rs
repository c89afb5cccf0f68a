//! What opening a shared table can fail with. Each case names the file and,
//! where two sides disagree, ours and theirs.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a shared table could not be opened or used. Its message (`Display`)
/// names the path (but for a bad capacity or name) and what is wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A name or path no table file can have (`table_path`): empty, `.`,
    /// `..`, or holding a NUL.
    InvalidName { name: String, why: &'static str },
    /// A file mode other than 0600 and 0660.
    InvalidMode { mode: u32 },
    /// The capacity is 0 or above the core's `MAX_CAPACITY`.
    InvalidCapacity { capacity: usize },
    /// A system call failed (`action` says which step).
    Io {
        path: PathBuf,
        action: &'static str,
        source: io::Error,
    },
    /// The path's last component is a symbolic link (refused, never followed).
    Symlink { path: PathBuf },
    /// The path is not a regular file (`kind`: "directory", "socket", ...).
    NotRegularFile { path: PathBuf, kind: &'static str },
    /// The file belongs to another user (and, when a group mode was asked
    /// for, to `group`, which this process is not in).
    WrongOwner {
        path: PathBuf,
        owner: u32,
        euid: u32,
        group: Option<u32>,
    },
    /// The file grants permissions beyond the mode asked for.
    ModeTooWide {
        path: PathBuf,
        mode: u32,
        allowed: u32,
    },
    /// Another process held the initialisation lock for the whole wait.
    InitTimeout { path: PathBuf, waited: Duration },
    /// The file does not start with the table's magic: not a table.
    NotATable { path: PathBuf },
    /// A table file of another kind than asked for (a point table opened
    /// as a key table, or the other way round).
    OtherKind {
        path: PathBuf,
        theirs: &'static str,
        ours: &'static str,
    },
    /// A table of another layout version.
    WrongVersion {
        path: PathBuf,
        ours: u64,
        theirs: u64,
    },
    /// A table whose layout differs: `field` is the first field of the
    /// core's `LayoutDescriptor` that does (the capacity included), with
    /// this process's value and the file's.
    LayoutMismatch {
        path: PathBuf,
        field: sds_core::LayoutField,
        ours: u64,
        theirs: u64,
    },
    /// A key table file whose `what` ("layout" or "rule") differs from
    /// this process's in `field` (the first that does), with the file's
    /// value and this process's.
    KeyMismatch {
        path: PathBuf,
        what: &'static str,
        field: &'static str,
        ours: String,
        theirs: String,
    },
    /// The core refused the key table (its capacity).
    Key {
        path: PathBuf,
        source: sds_core::keyed::KeyError,
    },
    /// The file is shorter than its layout needs.
    Truncated {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    /// The file is longer than its layout needs.
    Oversized {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    /// Every process slot is held by a live process.
    NoProcessSlot { path: PathBuf, max: usize },
    /// The mapped file does not hold what its header promised (changed
    /// under us after it was checked).
    Corrupt { path: PathBuf, what: &'static str },
    /// The core refused the table.
    Core {
        path: PathBuf,
        source: sds_core::Error,
    },
}

/// What turns a failed system call `action` on `path` into an [`Error::Io`].
pub(crate) fn io_error<'a>(
    path: &'a Path,
    action: &'static str,
) -> impl FnOnce(io::Error) -> Error + 'a {
    move |source| Error::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

impl Error {
    /// The core's code of the error: a bad capacity and a layout (or rule,
    /// or kind of file) that differs have their own; every other refusal
    /// of the file (or a system call failing on it) is an invalid argument.
    pub fn code(&self) -> sds_core::ErrorCode {
        use sds_core::ErrorCode;
        match self {
            Error::InvalidCapacity { .. } => ErrorCode::InvalidCapacity,
            Error::WrongVersion { .. }
            | Error::LayoutMismatch { .. }
            | Error::KeyMismatch { .. }
            | Error::OtherKind { .. } => ErrorCode::LayoutMismatch,
            Error::Core { source, .. } => source.code(),
            Error::Key { source, .. } => source.code(),
            Error::InvalidName { .. }
            | Error::InvalidMode { .. }
            | Error::Io { .. }
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
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidName { name, why } => write!(f, "shared table name {name:?} {why}"),
            // Octal, written without a language's prefix: every binding
            // shows the same text.
            Error::InvalidMode { mode } => {
                write!(f, "mode must be 0600 or 0660 (octal), not 0{mode:o}")
            }
            Error::InvalidCapacity { capacity } => write!(
                f,
                "capacity {capacity} is out of range (1 to {})",
                sds_core::MAX_CAPACITY
            ),
            Error::Io {
                path,
                action,
                source,
            } => write!(f, "{}: {action} failed: {source}", path.display()),
            Error::Symlink { path } => {
                write!(f, "{}: is a symbolic link (refused)", path.display())
            }
            Error::NotRegularFile { path, kind } => {
                write!(f, "{}: is a {kind}, not a regular file", path.display())
            }
            Error::WrongOwner {
                path,
                owner,
                euid,
                group: None,
            } => write!(
                f,
                "{}: owned by uid {owner}, not by this process's uid {euid} (refused)",
                path.display()
            ),
            Error::WrongOwner {
                path,
                owner,
                euid,
                group: Some(gid),
            } => write!(
                f,
                "{}: owned by uid {owner} and group {gid}: neither this process's uid \
                 {euid} nor one of its groups (refused)",
                path.display()
            ),
            Error::ModeTooWide {
                path,
                mode,
                allowed,
            } => write!(
                f,
                "{}: mode {mode:04o} grants more than the {allowed:04o} asked for (refused)",
                path.display()
            ),
            Error::InitTimeout { path, waited } => write!(
                f,
                "{}: another process kept initialising the table for {} ms",
                path.display(),
                waited.as_millis()
            ),
            Error::NotATable { path } => write!(
                f,
                "{}: not an SDS table (wrong magic), left untouched",
                path.display()
            ),
            Error::OtherKind { path, theirs, ours } => write!(
                f,
                "{}: holds a {theirs}, not a {ours} (refused)",
                path.display()
            ),
            Error::KeyMismatch {
                path,
                what,
                field,
                ours,
                theirs,
            } => write!(
                f,
                "{}: key table {what} differs in {field}: the file has {theirs}, this process \
                 needs {ours}",
                path.display()
            ),
            Error::Key { path, source } => write!(f, "{}: {source}", path.display()),
            Error::WrongVersion { path, ours, theirs } => write!(
                f,
                "{}: table layout version {theirs}, this build reads version {ours}",
                path.display()
            ),
            Error::LayoutMismatch {
                path,
                field,
                ours,
                theirs,
            } => write!(
                f,
                "{}: table layout differs in {}: the file has {theirs}, this process needs {ours}",
                path.display(),
                field.as_str()
            ),
            Error::Truncated {
                path,
                expected,
                found,
            } => write!(
                f,
                "{}: truncated: {found} bytes, the table needs {expected}",
                path.display()
            ),
            Error::Oversized {
                path,
                expected,
                found,
            } => write!(
                f,
                "{}: {found} bytes, more than the {expected} the table needs",
                path.display()
            ),
            Error::NoProcessSlot { path, max } => write!(
                f,
                "{}: all {max} process slots are held by live processes",
                path.display()
            ),
            Error::Corrupt { path, what } => {
                write!(f, "{}: corrupt table: {what}", path.display())
            }
            Error::Core { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::ErrorCode;

    fn path() -> PathBuf {
        PathBuf::from("/dev/shm/app.sds")
    }

    #[test]
    fn every_error_has_its_code_and_names_the_path_and_what_is_wrong() {
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
                    group: None,
                },
                ErrorCode::InvalidArgument,
                "/dev/shm/app.sds: owned by uid 0, not by this process's uid 1000 (refused)",
            ),
            (
                Error::WrongOwner {
                    path: p(),
                    owner: 0,
                    euid: 1000,
                    group: Some(50),
                },
                ErrorCode::InvalidArgument,
                "/dev/shm/app.sds: owned by uid 0 and group 50: neither this process's uid \
                 1000 nor one of its groups (refused)",
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
                Error::Core {
                    path: p(),
                    source: sds_core::Error::InvalidCapacity,
                },
                ErrorCode::InvalidCapacity,
                "/dev/shm/app.sds: ",
            ),
        ];
        for (e, want_code, want_start) in cases {
            assert_eq!(e.code(), want_code, "{e:?}");
            let text = e.to_string();
            assert!(text.starts_with(want_start), "{text}");
        }
    }
}
