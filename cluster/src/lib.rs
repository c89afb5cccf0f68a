//! # sds-cluster: cluster points on Redis
//!
//! A **cluster point** is a point whose thresholds hold for every instance of
//! a service together. Each instance decides locally, at the core's speed,
//! reading its own counts plus the other instances' counts per 1 s bucket as
//! of the last sync. A [`Cluster`] is one background thread per table (one per
//! host on a shared table) that, every `sync_ms`, pushes this table's
//! per-second deltas of each cluster point to Redis and reads the cluster's
//! totals back in one round trip (on a Redis Cluster, one per master), then
//! stores the others' share in the point.
//!
//! ```no_run
//! use std::sync::Arc;
//! use sds_cluster::{Cluster, Config};
//! use sds_shm::AnyTable;
//!
//! let table = Arc::new(AnyTable::private(1024).unwrap());
//! let mut config = Config::new("redis://127.0.0.1:6379");
//! config.points = vec!["checkout".into()];
//! let cluster = Cluster::start(table.clone(), config).unwrap();
//! // table.with_points(...) / the binding's enter and exit as usual
//! println!("{:?}", cluster.status());
//! cluster.stop();
//! ```
//!
//! `README.md` beside this crate explains the sync, the error bound and what
//! a limit means while Redis is unreachable.
#![warn(missing_docs)]

mod cluster;
mod config;
mod conn;
mod error;
mod exact;
mod keys;
mod link;
mod pushed;
mod resp;
mod settings;
mod slots;
mod status;
mod sync;
mod table;
mod tls;

pub use cluster::{Clock, Cluster};
pub use config::{Config, DEFAULT_MAX_BACKOFF_MS, DEFAULT_SYNC_MS, DEFAULT_TIMEOUT_MS};
pub use error::Error;
pub use exact::Decision;
pub use settings::SETTINGS;
pub use status::{Status, MAX_ERROR_BYTES};
pub use table::SyncTable;
