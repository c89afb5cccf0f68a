//! [`Error`]: why a cluster could not start or a call failed.

use std::fmt;

/// An error of [`crate::Cluster`]. Sync failures are not errors of any call:
/// they show in [`crate::Status`].
#[derive(Debug)]
pub enum Error {
    /// A configuration value is out of range (names the field and why).
    InvalidConfig(String),
    /// The table refused (a point name, a full table, a shared file): the
    /// core's code of the refusal, and its message.
    Table(sds_core::ErrorCode, String),
    /// Redis failed or could not be reached (exact mode, `sync_now`).
    Redis(String),
    /// The background thread could not be started.
    Thread(String),
    /// A call after [`crate::Cluster::stop`] (a binding's `close()`): one
    /// message and code for every binding.
    Closed,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig(m) => write!(f, "invalid cluster configuration: {m}"),
            Error::Table(_, m) => write!(f, "cluster table: {m}"),
            Error::Redis(m) => write!(f, "redis: {m}"),
            Error::Thread(m) => write!(f, "cluster thread: {m}"),
            Error::Closed => f.write_str("this cluster sync is closed"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The core's code for this error: the table's own code for a table
    /// refusal, `Unavailable` for Redis, `Closed` after close, an invalid
    /// argument for the rest.
    pub fn code(&self) -> sds_core::ErrorCode {
        match self {
            Error::Table(code, _) => *code,
            Error::Redis(_) => sds_core::ErrorCode::Unavailable,
            Error::Closed => sds_core::ErrorCode::Closed,
            _ => sds_core::ErrorCode::InvalidArgument,
        }
    }

    pub(crate) fn shm(e: &sds_shm::Error) -> Error {
        Error::Table(e.code(), e.to_string())
    }
}
