//! # sds-agent: a point table managed by the SDS console
//!
//! [`Agent::start`] runs the protocol of SDS's console (`sds-admin`) for one
//! table on a thread of its own: it pulls the app's strategies at start and
//! every 5 s and applies the whole set, and at second 5 of every 10 s cycle
//! it uploads the last whole cycle's statistics, when this process is the
//! host's reporter. It never touches `enter`/`exit`; with the console down
//! the table keeps deciding with the strategies it has. See README.md for
//! the protocol decisions, the roles and the status.
//!
//! ```no_run
//! use std::sync::Arc;
//! use sds_agent::{Agent, AgentConfig};
//! use sds_shm::AnyTable;
//!
//! let table = Arc::new(AnyTable::private(1024)?);
//! let agent = Agent::start(table.clone(), AgentConfig::new("http://admin:8887", "group", "app"))?;
//! println!("{:?}", agent.status());
//! agent.stop();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod agent;
mod apply;
mod config;
mod http;
mod identity;
mod protocol;
mod settings;
mod status;
#[cfg(feature = "test-hooks")]
pub mod testing;
mod tls;
mod worker;

pub use agent::Agent;
pub use config::{
    AgentConfig, Clock, Level, LogFn, StartError, SystemClock, DEFAULT_PULL_INTERVAL_MS,
    DEFAULT_TIMEOUT_MS, MAX_CONFIG_FILE_BYTES, MAX_IP_LEN, MAX_RESPONSE_BYTES, MAX_TIMEOUT_MS,
};
pub use identity::{detect_hostname, detect_ip};
pub use settings::SETTINGS;
pub use status::Status;
