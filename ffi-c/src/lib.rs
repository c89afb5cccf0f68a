//! # libsds: the C ABI of sds-core
//!
//! Every export is named `sds_<type>_<verb>` (or `sds_enter` / `sds_exit` on
//! the hot path), returns an [`sds_result`] or is documented as infallible,
//! writes its outputs only on success, and runs inside the one panic boundary
//! of [`boundary`]. `include/sds.h` is generated from this crate by cbindgen;
//! `ffi-c/README.md` is the C user's guide.
//!
//! The translation only: behaviour, argument rules and messages live in
//! `sds-core`, and the plain structs the exports take (`Strategy`, `Stats`,
//! `EntryParts`, `Tally`) are the core's own, renamed for C by cbindgen.
#![warn(missing_docs)]
// C names (`sds_table`, `sds_result`) are the ABI, not Rust style slips.
#![allow(non_camel_case_types)]

mod agent;
mod args;
pub mod boundary;
mod clock;
mod cluster;
mod entry;
mod keyed;
mod metrics;
mod result;
mod service;
mod shared;
mod stats;
#[doc(hidden)]
pub mod status;
mod strategy;
mod table;
mod window;

// Each module's `pub` items are exactly its part of the C ABI (`sds_*`,
// `SDS_*`): what cbindgen writes to the header.
pub use {
    agent::*, clock::*, cluster::*, entry::*, keyed::*, metrics::*, result::*, shared::*, stats::*,
    strategy::*, table::*, window::*,
};
