//! The point tables of this JavaScript thread, by small integer handle.
//!
//! The hot-path functions take a handle number instead of a class instance:
//! unwrapping a napi-rs class costs a type-tag check and borrow bookkeeping
//! on every call, more than the whole decision. A `NativeTable` object owns
//! its handle and frees the table when it is collected. Tables are
//! thread-local because a JavaScript object never leaves its thread (each
//! worker has its own), so no lock is needed.
//!
//! Never call into JavaScript while holding a table: a collection could run
//! a finalizer that frees a table (see [`with_table`]).

use std::cell::RefCell;

use sds_core::{ErrorCode, PointTable, Slot};

use crate::errors::{js_error, SdsError};

pub type Table = PointTable<Box<[Slot]>>;

struct Registry {
    tables: Vec<Option<Table>>,
    free: Vec<u32>,
}

thread_local! {
    // `const`: no lazy-initialisation check on every hot-path access.
    static REGISTRY: RefCell<Registry> = const {
        RefCell::new(Registry { tables: Vec::new(), free: Vec::new() })
    };
}

/// Keeps `table` and returns its handle.
pub fn register(table: Table) -> u32 {
    REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        match r.free.pop() {
            Some(handle) => {
                r.tables[handle as usize] = Some(table);
                handle
            }
            None => {
                r.tables.push(Some(table));
                (r.tables.len() - 1) as u32
            }
        }
    })
}

/// Frees the table of `handle`.
pub fn unregister(handle: u32) {
    REGISTRY.with(|r| {
        // A finalizer can run while a table is borrowed only if someone broke
        // the rule above; leaking the table then beats a panic in a finalizer.
        if let Ok(mut r) = r.try_borrow_mut() {
            if let Some(slot @ Some(_)) = r.tables.get_mut(handle as usize) {
                *slot = None;
                r.free.push(handle);
            }
        }
    })
}

/// Runs `f` on the table of `handle`; `SDS_CLOSED` when there is none.
#[inline]
pub fn with_table<R>(
    handle: u32,
    f: impl FnOnce(&Table) -> Result<R, SdsError>,
) -> Result<R, SdsError> {
    REGISTRY.with(|r| {
        let r = r.borrow();
        match r.tables.get(handle as usize) {
            Some(Some(table)) => f(table),
            _ => Err(js_error(
                ErrorCode::Closed,
                format!("no point table with handle {handle} on this thread"),
            )),
        }
    })
}
