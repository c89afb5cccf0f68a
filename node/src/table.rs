//! `Table`: what a client's calls reach, a private table on the heap or
//! this process's view of a shared table file. Every call goes through
//! [`with_view!`], compiled once per kind, so the private hot path pays one
//! well-predicted branch and nothing else.

use sds_core::{PointTable, Slot};

use sds_shm::SharedTable;

/// A table of this client's own: the slots on the heap.
pub type PrivateTable = PointTable<Box<[Slot]>>;

pub enum Table {
    Private(PrivateTable),
    Shared(SharedTable),
}

/// Runs `$body` with `$t` bound to the core's table of `$table` (a
/// `&Table`): the private one, or this process's view of the shared one
/// (which a fork child must make first, and that may fail: `?` on an
/// `SdsError`; its `enter_point` gives back dead holders' permits after a
/// refusal for concurrency).
macro_rules! with_view {
    ($table:expr, $t:ident => $body:expr) => {
        match $table {
            $crate::table::Table::Private($t) => $body,
            $crate::table::Table::Shared(shared) => {
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

impl Table {
    pub fn capacity(&self) -> usize {
        match self {
            Table::Private(t) => t.capacity(),
            Table::Shared(shared) => shared.capacity(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Table::Private(t) => t.len(),
            Table::Shared(shared) => shared.len(),
        }
    }
}
