//! [`Error`]: why a cluster could not start or a call failed.

use std::fmt;

/// An error of [`crate::Cluster`]. Sync failures are not errors of any call:
/// they show in [`crate::Status`].
#[derive(Debug)]
pub enum Error {
    /// A configuration value is out of range (names the field and why).
    InvalidConfig(String),
    /// The table refused (a point name, a full table, a shared file).
    Table(String),
    /// Redis failed or could not be reached (exact mode, `sync_now`).
    Redis(String),
    /// The background thread could not be started.
    Thread(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig(m) => write!(f, "invalid cluster configuration: {m}"),
            Error::Table(m) => write!(f, "cluster table: {m}"),
            Error::Redis(m) => write!(f, "redis: {m}"),
            Error::Thread(m) => write!(f, "cluster thread: {m}"),
        }
    }
}

impl std::error::Error for Error {}
