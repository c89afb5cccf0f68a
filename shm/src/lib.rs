//! A host-wide SDS point table in a shared file mapping.
//!
//! [`SharedFile::open`] opens or creates the table file (0600, no symbolic
//! link, this user's), checks or writes its layout header under a POSIX
//! record lock, maps it shared, and registers this process in one of its
//! process slots. Every process that opens the same file sees the same
//! slots. See the README for the layout, the protocol and the rules
//! (one descriptor per file per process, fork children register again).
//!
//! [`SharedKeyTable::open`] does the same for the core's key table (per-key
//! limits), in a file of its own that also holds the table's rule.
//!
//! This crate is the only place with `unsafe` for the mapping: `sys.rs`
//! (the system calls) and `mapping.rs` (bytes to typed references).

mod any_keys;
mod any_table;
mod core_table;
mod error;
mod fork_lock;
#[cfg(feature = "test-hooks")]
pub mod hooks;
mod keyed_layout;
mod layout;
mod mapping;
mod name;
mod open;
mod processes;
mod registry;
mod roles;
mod shared_file;
mod shared_keys;
mod shared_table;
mod sys;

pub use any_keys::{AnyKeys, PrivateKeyTable};
pub use any_table::{AnyTable, PrivateTable, RoleHold};
pub use core_table::{Slot, Table, TableState};
pub use error::Error;
pub use keyed_layout::{KEY_FIELDS, KEY_LAYOUT_VERSION, RULE_FIELDS};
pub use layout::{LAYOUT_VERSION, MAX_PROCESSES};
pub use name::{table_path, SHM_DIR};
pub use processes::{Registration, GENERATIONS};
pub use roles::{Role, RoleGuard};
pub use shared_file::{fork_epoch, Attachment, Options, SharedFile, SCAN_INTERVAL_MS};
pub use shared_keys::SharedKeyTable;
pub use shared_table::{SharedTable, View};
