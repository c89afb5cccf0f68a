//! What an agent is started with: the console's servers, the instance's
//! identity, the intervals, the clock and the log.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How often strategies are pulled unless configured: SDS's 5 s.
pub const DEFAULT_PULL_INTERVAL_MS: u64 = 5_000;
/// Connect and read timeout of one request unless configured: SDS's 1000 ms.
pub const DEFAULT_TIMEOUT_MS: u64 = 1_000;
/// Timeouts above this (about 1.1 years) are taken as this one: a larger
/// one would overflow the deadlines computed from it.
pub const MAX_TIMEOUT_MS: u64 = 1 << 35;
/// The largest response body read; a longer one fails the request.
pub const MAX_RESPONSE_BYTES: u64 = 4 << 20;
/// The largest file a config may name (a CA bundle, a certificate, a
/// key), as for the cluster's: a longer one, or one that is not a regular
/// file (a FIFO, a device), is refused at start.
pub use sds_tls::MAX_CONFIG_FILE_BYTES;
/// The console's `ip` column is 16 characters.
pub const MAX_IP_LEN: usize = 16;

/// How serious a log line is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// A change applied (a new strategy version, the reporter role taken).
    Info = 0,
    /// A failure the agent recovers from (a server down, a strategy refused).
    Warn = 1,
}

impl Level {
    /// `"info"` or `"warn"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
        }
    }
}

/// Receives the agent's log lines, on the agent's thread; never again once
/// [`crate::Agent::stop`] was called (also from the callback itself).
pub type LogFn = Arc<dyn Fn(Level, &str) + Send + Sync>;

/// The time the agent schedules by and reports with: UTC milliseconds, as
/// the table's bindings read it. Tests inject a faster or a manual clock
/// (feature `test-hooks`).
pub trait Clock: Send + Sync {
    /// Now, in UTC milliseconds.
    fn now_ms(&self) -> u64;
    /// How long to sleep for this clock to advance `clock_ms`.
    fn real_wait(&self, clock_ms: u64) -> Duration {
        Duration::from_millis(clock_ms)
    }
}

/// The wall clock every binding reads (`sds_clock::now_ms`).
#[derive(Copy, Clone, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        sds_clock::now_ms()
    }
}

/// An agent's settings. [`AgentConfig::new`] fills the defaults.
#[derive(Clone)]
pub struct AgentConfig {
    /// Comma-separated base URLs (`http://host:8887`, `https://host`),
    /// shuffled at start.
    pub servers: String,
    /// PEM file of the CA(s) that `https://` servers' certificates must
    /// chain to, instead of the system's roots (a console with a CA of its
    /// own); `None`: the system's roots. Read at start; refused without an
    /// `https://` server.
    pub tls_ca_file: Option<PathBuf>,
    /// PEM file of the client certificate (chain) shown to `https://`
    /// servers that ask for one (mutual TLS); with `tls_key_file`. Read at
    /// start; refused without an `https://` server.
    pub tls_cert_file: Option<PathBuf>,
    /// PEM file of the private key of `tls_cert_file` (PKCS#8, SEC1 or
    /// PKCS#1).
    pub tls_key_file: Option<PathBuf>,
    /// The app group, as created in the console.
    pub app_group: String,
    /// The app, as created in the console.
    pub app_name: String,
    /// This instance's IPv4 address; `None`: the last non-loopback IPv4
    /// address of the host's interfaces (as SDS's client picks it).
    pub ip: Option<String>,
    /// This instance's host name; `None`: the system's.
    pub hostname: Option<String>,
    /// Milliseconds between pulls; 0 is refused. Any value is safe: the
    /// schedule saturates (`u64::MAX`: one pull at start, then none).
    pub pull_interval_ms: u64,
    /// Connect-and-read timeout of one request, in milliseconds; 0 is
    /// refused; above [`MAX_TIMEOUT_MS`] it is that.
    pub timeout_ms: u64,
    /// The clock; [`SystemClock`] unless a test injects one.
    pub clock: Arc<dyn Clock>,
    /// Where log lines go; `None`: nowhere (the status still tells).
    pub log: Option<LogFn>,
}

impl AgentConfig {
    /// A config with the defaults: the system's roots for `https://`,
    /// detected ip and host name, 5 s pulls, 1000 ms timeouts, the system
    /// clock, no log.
    pub fn new(
        servers: impl Into<String>,
        app_group: impl Into<String>,
        app_name: impl Into<String>,
    ) -> AgentConfig {
        AgentConfig {
            servers: servers.into(),
            tls_ca_file: None,
            tls_cert_file: None,
            tls_key_file: None,
            app_group: app_group.into(),
            app_name: app_name.into(),
            ip: None,
            hostname: None,
            pull_interval_ms: DEFAULT_PULL_INTERVAL_MS,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            clock: Arc::new(SystemClock),
            log: None,
        }
    }
}

impl fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentConfig")
            .field("servers", &self.servers)
            .field("tls_ca_file", &self.tls_ca_file)
            .field("tls_cert_file", &self.tls_cert_file)
            .field("tls_key_file", &self.tls_key_file)
            .field("app_group", &self.app_group)
            .field("app_name", &self.app_name)
            .field("ip", &self.ip)
            .field("hostname", &self.hostname)
            .field("pull_interval_ms", &self.pull_interval_ms)
            .field("timeout_ms", &self.timeout_ms)
            .field("log", &self.log.is_some())
            .finish()
    }
}

/// Why [`crate::Agent::start`] refused: a config it cannot run with, or no thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartError(pub String);

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot start the SDS agent: {}", self.0)
    }
}

impl std::error::Error for StartError {}
