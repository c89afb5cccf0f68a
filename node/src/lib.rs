//! The native half of the `sds-native` npm package: a thin N-API skin over
//! `sds-core`. The JavaScript half (`lib/*.js`) builds the public API on top
//! of these few functions. The hot path passes only numbers across N-API:
//! point keys in, one packed entry number out (see `entry_bits` and
//! `hot_path`).

// napi-derive compiles its export registration out of unit-test builds, so
// there everything only JavaScript calls looks unused.
#![cfg_attr(test, allow(dead_code))]

mod arguments;
mod entry_bits;
mod errors;
mod external_memory;
mod hot_path;
mod http;
mod keys;
mod metrics;
mod raw;
mod service;
mod settings;
mod strategy_object;
mod table;
mod tables;
mod windows;

pub use http::{NativeClientAddress, NativeRoutePolicies};
pub use keys::NativeKeys;
pub use metrics::NativeMetrics;
pub use service::NativeService;
pub use tables::NativeTable;
pub use windows::NativeWindow;
