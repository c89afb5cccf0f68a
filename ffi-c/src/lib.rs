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
mod result;
mod service;
mod shared;
mod stats;
#[doc(hidden)]
pub mod status;
mod strategy;
mod table;
mod window;

pub use agent::{
    sds_agent, sds_agent_log_fn, sds_agent_return_value, sds_agent_start, sds_agent_status,
    sds_agent_status_get, sds_agent_stop, SDS_AGENT_LOG_INFO, SDS_AGENT_LOG_WARN,
    SDS_AGENT_TEXT_LEN,
};
pub use clock::{sds_now_ms, sds_version};
pub use cluster::{
    sds_cluster, sds_cluster_decision, sds_cluster_enter_exact, sds_cluster_start,
    sds_cluster_state, sds_cluster_status, sds_cluster_stop,
};
pub use entry::{
    sds_enter, sds_enter_point, sds_entry_downgraded, sds_entry_reason, sds_exit, sds_flag,
    sds_reason, sds_reason_name,
};
pub use result::{sds_last_error_message, sds_result, sds_result_message, SDS_MESSAGE_MAX};
pub use shared::{sds_table_open_shared, SDS_SHARED_GROUP};
pub use stats::sds_stats_get;
pub use strategy::{sds_strategy_default, sds_strategy_from_json};
pub use table::{
    sds_table, sds_table_capacity, sds_table_free, sds_table_len, sds_table_new, sds_table_point,
    sds_table_remove_strategy, sds_table_set_strategy, sds_table_set_strategy_json,
    SDS_MAX_CAPACITY, SDS_MAX_NAME_LEN,
};
pub use window::{
    sds_window, sds_window_add, sds_window_add_at, sds_window_bucket, sds_window_clear_next_cycle,
    sds_window_fetch_max, sds_window_free, sds_window_last_whole_cycle, sds_window_new,
    sds_window_set, sds_window_sum,
};
