//! # sds-core
//!
//! The engine of SDS (Service Degrade System) as plain, allocation-free data:
//! per named **point** it counts visits, requests in flight, exceptions,
//! timeouts and downgrades in lock-free sliding windows, and decides for each
//! request whether to run it or **downgrade** it to a fallback.
//!
//! - [`SlidingWindow`]: a ring of epoch-tagged atomic buckets. SDS's counters,
//!   Sentinel's LeapArray and Hystrix's rolling number are instances of it.
//! - [`Strategy`]: a point's thresholds, named as SDS's JSON names them;
//!   [`StrategyBuilder`] is the one path from user input (JSON text, dicts,
//!   objects, builders) to a strategy, [`StrategyError`] its errors.
//! - [`Point`]: the counters, strategy and delay of one point; [`Point::enter`]
//!   returns an [`Entry`] that [`Point::exit`] settles.
//! - [`PointTable`]: names to points in caller-provided storage, private or
//!   [`Shared`] between processes ([`TableState`], [`LayoutDescriptor`],
//!   [`Owner`], [`Liveness`], and the permit ledger of [`Held`] counters).
//! - [`Error`], [`ErrorCode`], [`Reason`]: the one table of codes and names that
//!   every binding maps from.
//! - [`keyed`]: per-key limits with a hard memory bound ([`keyed::KeyTable`]:
//!   a rate, fixed or sliding windows, or in-flight units per key, in
//!   16-byte cells over caller storage, evicting losslessly first). Rust
//!   only so far: the shared file, the C ABI and the bindings come next.
//! - [`adaptive`]: an in-flight limit found from latency ([`AdaptiveLimit`]:
//!   AIMD, Vegas and Gradient2 as Netflix concurrency-limits defines them,
//!   Envoy's gradient controller, and Knee, ours, which settles 4 % above
//!   the knee), lock-free plain data like the rest.
//!
//! ```
//! use sds_core::{Flags, Outcome, PointTable, Slot, Strategy};
//!
//! let table = PointTable::new((0..1024).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
//! let strategy = Strategy::from_json(r#"{"visitThreshold": 100, "concurrentThreshold": 10}"#).unwrap();
//! table.set_strategy(b"orderService.process", &strategy).unwrap();
//!
//! let now_ms = 1_700_000_000_000; // the core never reads a clock: bindings pass it
//! let entry = table.enter(b"orderService.process", now_ms, Flags::NONE).unwrap();
//! if entry.downgraded() {
//!     // fallback; entry.reason() says why (VISIT, CONCURRENT, ...)
//! }
//! table.exit(&entry, now_ms + 12, Outcome::Ok).unwrap(); // permit back, timeouts and exceptions counted
//! let stats = table.stats(b"orderService.process", now_ms + 12).unwrap();
//! assert_eq!((stats.visit, stats.concurrent), (1, 0));
//! ```
//!
//! Time is a parameter: every operation takes `now_ms`, and the core never
//! reads a clock. Nothing allocates, blocks on the hot path, or panics on any
//! input. The crate is `no_std` and `forbid(unsafe_code)`.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Under loom the spin loops ask about a dead holder at every turn (a period
// of 1, see owner.rs and delay.rs), which clippy reads as a useless modulo.
#![cfg_attr(loom, allow(clippy::modulo_one))]

#[cfg(test)]
extern crate std;

pub mod adaptive;
mod check;
mod counters;
mod delay;
mod entry;
mod error;
mod in_flight;
mod json;
pub mod keyed;
mod layout;
mod ledger;
mod owner;
mod peak;
mod point;
mod reason;
mod remote;
mod shaping;
mod stats_fields;
mod strategy;
mod strategy_cell;
mod strategy_error;
mod strategy_input;
mod sum_cache;
mod sync;
mod table;
mod tags;
pub mod time;
pub mod window;

pub use adaptive::{AdaptiveLimit, AdaptiveParams, AdaptiveStats, Algorithm};
pub use entry::{packed, Entry, EntryParts, Flags, Outcome};
pub use error::{ArgumentRule, Error, ErrorCode, Rule, WindowRule};
pub use layout::{LayoutDescriptor, LayoutField, LAYOUT_VERSION};
pub use ledger::Held;
pub use owner::{AlwaysAlive, Liveness, Owner};
#[cfg(any(loom, feature = "test-hooks"))]
pub use owner::{Checkpoint, Transition};
pub use point::{CycleStats, Point, Stats, Totals};
pub use reason::Reason;
pub use remote::{SecondCounts, REMOTE_RING, RING_SECONDS, SECOND_MS, WINDOW_SECONDS};
pub use strategy::{
    Field, Strategy, MAX_ADAPTIVE_LIMIT, MAX_QUEUEING_MS, MIN_DELAY_MS, MIN_RETRY_MS, POINT_KEY,
};
pub use strategy_error::{KeyText, StrategyError};
pub use strategy_input::{StrategyBuilder, Value};
pub use table::{
    capacity_from_i128, check_capacity, PointId, PointName, PointTable, Points, Shared, Slot,
    TableState, TableStorage, MAX_CAPACITY, MAX_NAME_LEN,
};
pub use window::{Bucket, SlidingWindow, Tally};
