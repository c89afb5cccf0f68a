//! [`table_path`]: the one rule for what a binding's user gives as a shared
//! table: a bare name is a file under `/dev/shm`, anything else a path.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::Error;

/// Where a bare name puts its file: the tmpfs every Linux host mounts.
pub const SHM_DIR: &str = "/dev/shm";

/// The file of `name_or_path`: a bare name (no `/`) is a file under
/// [`SHM_DIR`]; anything with a `/` is a path, used as given. An empty
/// name, `.`, `..` and anything holding a NUL byte (which no OS path can
/// hold) are [`Error::InvalidName`].
pub fn table_path(name_or_path: impl AsRef<OsStr>) -> Result<PathBuf, Error> {
    let given = name_or_path.as_ref();
    let bytes = given.as_bytes();
    let bad = |why: &'static str| Error::InvalidName {
        name: given.to_string_lossy().into_owned(),
        why,
    };
    if bytes.contains(&0) {
        return Err(bad("holds a NUL character"));
    }
    if bytes.contains(&b'/') {
        return Ok(PathBuf::from(given));
    }
    match bytes {
        b"" => Err(bad("is empty")),
        b"." | b".." => Err(bad("is not a file name")),
        _ => Ok(Path::new(SHM_DIR).join(given)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::ErrorCode;

    #[test]
    fn a_bare_name_is_a_file_under_dev_shm_and_a_path_is_kept() {
        assert_eq!(
            table_path("app.sds").unwrap(),
            Path::new("/dev/shm/app.sds")
        );
        assert_eq!(table_path("./app.sds").unwrap(), Path::new("./app.sds"));
        assert_eq!(table_path("/tmp/x/").unwrap(), Path::new("/tmp/x/"));
        assert_eq!(table_path("..x").unwrap(), Path::new("/dev/shm/..x"));
    }

    #[test]
    fn an_empty_dot_or_nul_name_is_refused_with_a_message_naming_it() {
        for (bad, message) in [
            ("", r#"shared table name "" is empty"#),
            (".", r#"shared table name "." is not a file name"#),
            ("..", r#"shared table name ".." is not a file name"#),
            ("a\0b", r#"shared table name "a\0b" holds a NUL character"#),
            (
                "/tmp/a\0b",
                r#"shared table name "/tmp/a\0b" holds a NUL character"#,
            ),
        ] {
            let e = table_path(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad:?}");
            assert_eq!(e.to_string(), message);
        }
    }

    #[test]
    fn only_modes_0600_and_0660_are_taken_and_others_are_named() {
        assert_eq!(crate::Options::of_mode(0o600).unwrap().mode(), 0o600);
        assert_eq!(crate::Options::of_mode(0o660).unwrap().mode(), 0o660);
        let e = crate::Options::of_mode(0o644).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(e.to_string(), "mode must be 0600 or 0660 (octal), not 0644");
    }
}
