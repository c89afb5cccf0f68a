//! Tells V8 how much native memory a table or window holds. V8 schedules its
//! collections by the heap it sees: a default table is about 1.5 MB of
//! slots behind a few hundred bytes of JavaScript objects, so without this
//! report thousands of dropped clients pile up gigabytes before any
//! collection finds them. Reported when the storage is allocated, taken back
//! when its last owner is finalized.

use std::sync::Arc;

use napi::sys;
use sds_core::Slot;

use sds_shm::AnyTable;

/// The bytes a table of `capacity` slots owns on the native heap.
pub fn table_bytes(capacity: usize) -> i64 {
    (capacity * std::mem::size_of::<Slot>()) as i64
}

/// Adds `bytes` (negative: frees) to what V8 counts as external memory.
pub fn adjust(env: sys::napi_env, bytes: i64) {
    let mut total = 0;
    // A failure only leaves V8's estimate off; nothing to report it to.
    let _ = unsafe { sys::napi_adjust_external_memory(env, bytes, &mut total) };
}

/// Drops one share of `table`; the last share frees it and says so to V8.
/// (A running console agent holds a share of its own: a table its client
/// dropped is freed, and reported, by the agent's `close`.)
pub fn release_table(env: sys::napi_env, table: Arc<AnyTable>) {
    if let Some(table) = Arc::into_inner(table) {
        let bytes = table_bytes(table.capacity());
        drop(table);
        adjust(env, -bytes);
    }
}
