//! What a client's calls reach: an `sds_shm::AnyTable`, a private table on
//! the heap or this process's view of a shared table file, held in an `Arc`
//! so the background services (`service.rs`) can hold it too. Every call
//! goes through [`with_view!`], compiled once per kind, so the private hot
//! path pays one well-predicted branch and nothing else (an `Arc` derefs
//! like the `Rc` it replaced: one pointer).

use sds_shm::AnyTable;

/// Runs `$body` with `$t` bound to the core's table of `$table` (an
/// `&AnyTable`): the private one, or this process's view of the shared one
/// (which a fork child must make first, and that may fail: `?` on an
/// `SdsError`; its `enter_point` gives back dead holders' permits after a
/// refusal for concurrency).
macro_rules! with_view {
    ($table:expr, $t:ident => $body:expr) => {
        match $table {
            sds_shm::AnyTable::Private($t) => $body,
            sds_shm::AnyTable::Shared(shared) => {
                let view = shared
                    .view()
                    .map_err(|e| $crate::shared_table::from_shm(&e))?;
                let $t = &view;
                $body
            }
        }
    };
}
pub(crate) use with_view;

/// How many points exist.
pub fn point_count(table: &AnyTable) -> usize {
    match table {
        AnyTable::Private(t) => t.len(),
        AnyTable::Shared(shared) => shared.len(),
    }
}
