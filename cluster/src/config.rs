//! [`Config`]: what a [`crate::Cluster`] syncs, with whom and how often.

use std::path::PathBuf;

/// Sync period when none is given, ms.
pub const DEFAULT_SYNC_MS: u64 = 100;

/// Connect and command timeout when none is given, ms.
pub const DEFAULT_TIMEOUT_MS: u64 = 1_000;

/// Longest wait between two connection attempts while Redis is down, ms.
pub const DEFAULT_MAX_BACKOFF_MS: u64 = 5_000;

/// How a cluster syncs. Plain fields, so every binding fills it from its
/// own keywords or options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Redis URLs, `redis://[user[:password]@]host[:port][/db]` (AUTH and
    /// ACL users through the URL), `rediss://` for TLS. One URL for a single server; for Redis
    /// Cluster ([`Config::redis_cluster`]) one or more seed nodes.
    pub urls: Vec<String>,
    /// Talk to a Redis Cluster (slots, redirections) instead of one server.
    pub redis_cluster: bool,
    /// The names of the points that become cluster points (created in the
    /// table if they do not exist). Other points stay local.
    pub points: Vec<String>,
    /// Sync period, ms (at least 1): one round trip to Redis per period
    /// (on a Redis Cluster, one per master serving a cluster point).
    pub sync_ms: u64,
    /// Connect, read and write timeout of one round trip, ms (at least 1).
    pub timeout_ms: u64,
    /// Longest wait between two connection attempts, ms: the wait starts
    /// at `sync_ms` and doubles up to this.
    pub max_backoff_ms: u64,
    /// The first part of every key and of each point's hash tag
    /// (`{prefix:point}`): services sharing a Redis use different prefixes.
    pub key_prefix: String,
    /// PEM file of the CA(s) that signed the servers' certificates, for a
    /// Redis with its own CA (`rediss://` URLs only). It replaces the
    /// system's roots, which `rediss://` trusts when this is `None`.
    pub tls_ca_file: Option<PathBuf>,
    /// PEM client certificate (chain) for mutual TLS; with `tls_key_file`.
    pub tls_cert_file: Option<PathBuf>,
    /// PEM private key of `tls_cert_file`.
    pub tls_key_file: Option<PathBuf>,
}

impl Config {
    /// One Redis server at `url`, no points yet, the default periods.
    pub fn new(url: impl Into<String>) -> Config {
        Config {
            urls: vec![url.into()],
            redis_cluster: false,
            points: Vec::new(),
            sync_ms: DEFAULT_SYNC_MS,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            max_backoff_ms: DEFAULT_MAX_BACKOFF_MS,
            key_prefix: "sds".to_string(),
            tls_ca_file: None,
            tls_cert_file: None,
            tls_key_file: None,
        }
    }
}
