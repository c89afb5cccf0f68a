//! `io.sdsnative.Client.openShared`'s natives: a client's table over a
//! table file every process of the host may open (`sds_shm::SharedTable`,
//! which also gives each process its own view), and the file's path.
//!
//! `SharedFile::open` keeps one attachment per file per process, so several
//! clients of one JVM on one file share it: one process slot, one owner id.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use jni::objects::{JByteArray, JObject, JString};
use jni::sys::{jint, jlong};
use sds_core::{capacity_from_i128, ErrorCode};
use sds_shm::{table_path, AnyTable, Options};

use crate::boundary::{setup_native, Fail};
use crate::handle::arc_into_handle;
use crate::handle::borrow;

/// The name or path of a shared table's file (point or key table), as
/// Java passes it: its UTF-8 bytes, not null.
pub(crate) fn file_name(env: &jni::Env, name_or_path: &JByteArray) -> Result<OsString, Fail> {
    use jni::refs::Reference;
    if name_or_path.is_null() {
        return Err(Fail::code(ErrorCode::NullArgument));
    }
    let bytes = env.convert_byte_array(name_or_path)?;
    Ok(OsString::from_vec(bytes))
}

setup_native! {
    /// Opens (creating if needed) the table file of `name_or_path` (UTF-8
    /// bytes; a bare name is a file under /dev/shm) for `capacity` points,
    /// created with `mode`, and attaches this process to it.
    fn Java_io_sdsnative_Native_tableOpenShared(
        env, name_or_path: JByteArray<'l>, capacity: jint, mode: jint,
    ) -> jlong {
        let path = table_path(&file_name(env, &name_or_path)?)?;
        // A negative mode keeps its bits, and is refused like any other.
        let options = Options::of_mode(mode as u32)?;
        // The core's verdict and message, as for a private table.
        let capacity = capacity_from_i128(capacity.into())?;
        Ok(arc_into_handle(AnyTable::shared(&path, capacity, &options)?))
    }

    /// The path of a shared table's file; `null` for a private table.
    fn Java_io_sdsnative_Native_tableSharedPath(
        env, handle: jlong, _owner: JObject<'l>,
    ) -> JString<'l> {
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = unsafe { borrow::<AnyTable>(handle) }.map_err(Fail::code)?;
        Ok(match table {
            AnyTable::Private(_) => JString::null(),
            AnyTable::Shared(shared) => env.new_string(shared.path().to_string_lossy())?,
        })
    }
}
