//! `io.sdsnative.Client.openShared`'s natives: a client's table over a
//! table file every process of the host may open (`sds_shm::SharedTable`,
//! which also gives each process its own view), and the file's path.
//!
//! `SharedFile::open` keeps one attachment per file per process, so several
//! clients of one JVM on one file share it: one process slot, one owner id.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use jni::objects::{JByteArray, JObject, JString};
use jni::sys::{jint, jlong};
use sds_core::ErrorCode;
use sds_shm::{table_path, Options, SharedTable};

use crate::boundary::{setup_native, Fail};
use crate::handle::{borrow, into_handle};
use crate::table::Table;

/// The modes a table file may be created with (Java's `0600` and `0660`).
const PRIVATE_MODE: jint = 0o600;
const GROUP_MODE: jint = 0o660;

/// The options of `mode`: 0600, or 0660 for the user's group too.
fn options(mode: jint) -> Result<Options, Fail> {
    match mode {
        PRIVATE_MODE => Ok(Options::new()),
        GROUP_MODE => Ok(Options::new().group_access(true)),
        _ => Err(Fail::Sds(
            ErrorCode::InvalidArgument,
            format!("mode must be 0600 or 0660, not 0{mode:o}"),
        )),
    }
}

setup_native! {
    /// Opens (creating if needed) the table file of `name_or_path` (UTF-8
    /// bytes; a bare name is a file under /dev/shm) for `capacity` points,
    /// created with `mode`, and attaches this process to it.
    fn Java_io_sdsnative_Native_tableOpenShared(
        env,
        name_or_path: JByteArray<'l>,
        capacity: jint,
        mode: jint,
    ) -> jlong {
        use jni::refs::Reference;
        if name_or_path.is_null() {
            return Err(Fail::code(ErrorCode::NullArgument));
        }
        let bytes = env.convert_byte_array(&name_or_path)?;
        let path = table_path(OsStr::from_bytes(&bytes))?;
        let options = options(mode)?;
        // A negative capacity reads as 0, which shm refuses too.
        let capacity = usize::try_from(capacity).unwrap_or(0);
        let shared = SharedTable::open(&path, capacity, &options)?;
        Ok(into_handle(Table::Shared(shared)))
    }

    /// The path of a shared table's file; `null` for a private table.
    fn Java_io_sdsnative_Native_tableSharedPath(
        env,
        handle: jlong,
        _owner: JObject<'l>,
    ) -> JString<'l> {
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = unsafe { borrow::<Table>(handle) }.map_err(Fail::code)?;
        Ok(match table {
            Table::Private(_) => JString::null(),
            Table::Shared(shared) => env.new_string(shared.path().to_string_lossy())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_two_modes_are_taken() {
        assert_eq!(options(0o600).ok().map(|o| o.mode()), Some(0o600));
        assert_eq!(options(0o660).ok().map(|o| o.mode()), Some(0o660));
        match options(0o644) {
            Err(Fail::Sds(code, message)) => {
                assert_eq!(code, ErrorCode::InvalidArgument);
                assert_eq!(message, "mode must be 0600 or 0660, not 0644");
            }
            _ => panic!("0644 was taken"),
        }
    }
}
