//! `NativeAgent`: the SDS console agent (`sds-agent`) for one client's
//! table. The translation only: what the agent does, and which configs it
//! refuses, is the agent crate's; `lib/agent.js` builds `AdminAgent` on it.
//!
//! Log lines reach JavaScript through a threadsafe function that is
//! - weak (unref'd): it never keeps the event loop alive, so a process or a
//!   worker thread with a running agent ends when its work does;
//! - called non-blocking into a bounded queue: the agent's thread never
//!   waits for JavaScript; a line that finds the queue full (an event loop
//!   blocked for that many lines) is dropped, and one sent while the
//!   thread's environment shuts down goes nowhere.

use std::sync::Arc;

use napi::bindgen_prelude::{FnArgs, ObjectFinalize, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status as NapiStatus};
use napi_derive::napi;
use sds_agent::{Agent, AgentConfig, Level, DEFAULT_PULL_INTERVAL_MS, DEFAULT_TIMEOUT_MS};
use sds_shm::AnyTable;

use crate::arguments;
use crate::errors::{invalid_argument, SdsError};
use crate::external_memory::release_table;
use crate::tables::NativeTable;

/// Log lines waiting for the JavaScript thread before new ones are dropped.
const LOG_QUEUE: usize = 256;

/// `(level, message)` to JavaScript: weak, not callee-handled, bounded.
type LogArgs = FnArgs<(String, String)>;
type LogFunction = ThreadsafeFunction<LogArgs, (), LogArgs, NapiStatus, false, true, LOG_QUEUE>;

/// An agent's state (`sds_agent::Status`). Times are UTC ms, 0 for never.
#[napi(object, object_from_js = false, namespace = "native")]
pub struct AgentStatus {
    /// When the last pull finished (or failed).
    pub last_pull_ms: f64,
    /// Whether that pull succeeded.
    pub last_pull_ok: bool,
    /// When the last upload finished (or failed).
    pub last_upload_ms: f64,
    /// Whether that upload succeeded.
    pub last_upload_ok: bool,
    /// The strategy version held: 0 until the first applied set; -1 when
    /// the console's version is null (every pull brings the whole set, and
    /// one that differs from the set in force is applied).
    pub version: f64,
    /// Whether this process uploads for the host (always on a private table).
    pub is_reporter: bool,
    /// The server the next request goes to.
    pub server: String,
    /// The last failure's text; empty if none yet.
    pub last_error: String,
    /// Pulls that failed since start.
    pub pull_failures: f64,
    /// Uploads that failed since start.
    pub upload_failures: f64,
    /// Uploads delivered since start.
    pub uploads: f64,
    /// Strategies of the set in force waiting for room: their points are not
    /// in the table, and the console may create points only while it is at
    /// most half full. Tried again at each pull.
    pub strategies_waiting: f64,
    /// Points left out of every upload because the console cannot store
    /// their names (over 164 characters); the log names each once.
    pub points_left_out: f64,
}

/// The console agent of one table.
#[napi(namespace = "native", custom_finalize)]
pub struct NativeAgent {
    agent: Agent,
    // This object's share of the table, given back (and, when it is the
    // last, the table's memory reported freed to V8) on this JS thread once
    // the agent's thread has stopped.
    table: Option<Arc<AnyTable>>,
}

impl NativeAgent {
    fn stop(&mut self, env: &Env) {
        self.agent.stop();
        if let Some(table) = self.table.take() {
            release_table(env.raw(), table);
        }
    }
}

impl ObjectFinalize for NativeAgent {
    // Runs when the environment ends (the process, a worker thread) with the
    // agent still running: the thread is stopped and joined there.
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        self.stop(&env);
        Ok(())
    }
}

#[napi(namespace = "native")]
impl NativeAgent {
    /// Starts the agent of `table`'s points; `undefined` options take the
    /// agent's defaults (the detected ip and host name, 5000 ms, 1000 ms,
    /// the system's roots for `https://` servers, no client certificate).
    /// `log(level, message)` gets its lines ("info" / "warn").
    #[allow(clippy::too_many_arguments)]
    #[napi(
        constructor,
        ts_args_type = "table: native.NativeTable, servers: string, appGroup: string, appName: string, ip: string | undefined, hostname: string | undefined, pullIntervalMs: number | undefined, timeoutMs: number | undefined, tlsCaFile: string | undefined, tlsCertFile: string | undefined, tlsKeyFile: string | undefined, log: (level: string, message: string) => void"
    )]
    pub fn new(
        table: &NativeTable,
        servers: Unknown,
        app_group: Unknown,
        app_name: Unknown,
        ip: Unknown,
        hostname: Unknown,
        pull_interval_ms: Unknown,
        timeout_ms: Unknown,
        tls_ca_file: Unknown,
        tls_cert_file: Unknown,
        tls_key_file: Unknown,
        log: LogFunction,
    ) -> Result<NativeAgent, SdsError> {
        let mut config = AgentConfig::new(
            arguments::text(servers, "servers")?,
            arguments::text(app_group, "appGroup")?,
            arguments::text(app_name, "appName")?,
        );
        config.ip = arguments::optional_text(ip, "ip")?;
        config.hostname = arguments::optional_text(hostname, "hostname")?;
        config.pull_interval_ms = arguments::optional_count(pull_interval_ms, "pullIntervalMs")?
            .unwrap_or(DEFAULT_PULL_INTERVAL_MS);
        config.timeout_ms =
            arguments::optional_count(timeout_ms, "timeoutMs")?.unwrap_or(DEFAULT_TIMEOUT_MS);
        config.tls_ca_file = arguments::optional_path(tls_ca_file, "tlsCaFile")?;
        config.tls_cert_file = arguments::optional_path(tls_cert_file, "tlsCertFile")?;
        config.tls_key_file = arguments::optional_path(tls_key_file, "tlsKeyFile")?;
        config.log = Some(Arc::new(move |level: Level, line: &str| {
            // Never waits: a full queue or a closing environment drops the line.
            let _ = log.call(
                FnArgs::from((level.as_str().to_string(), line.to_string())),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        }));
        let agent = Agent::start(Arc::clone(&table.table), config)
            .map_err(|e| invalid_argument(e.to_string()))?;
        Ok(NativeAgent {
            agent,
            table: Some(Arc::clone(&table.table)),
        })
    }

    /// A snapshot of the agent's state.
    #[napi]
    pub fn status(&self) -> AgentStatus {
        let s = self.agent.status();
        AgentStatus {
            last_pull_ms: s.last_pull_ms as f64,
            last_pull_ok: s.last_pull_ok,
            last_upload_ms: s.last_upload_ms as f64,
            last_upload_ok: s.last_upload_ok,
            version: s.version as f64,
            is_reporter: s.is_reporter,
            server: s.server,
            last_error: s.last_error,
            pull_failures: s.pull_failures as f64,
            upload_failures: s.upload_failures as f64,
            uploads: s.uploads as f64,
            strategies_waiting: s.strategies_waiting as f64,
            points_left_out: s.points_left_out as f64,
        }
    }

    /// The console's `returnValueStr` for `point`; `null` when it has none.
    #[napi(ts_args_type = "point: string", ts_return_type = "string | null")]
    pub fn return_value(&self, point: Unknown) -> Result<Option<String>, SdsError> {
        Ok(self.agent.return_value(&arguments::name(point)?))
    }

    /// Stops the agent and joins its thread (within one request timeout).
    /// Idempotent.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.stop(&env);
    }

    /// Whether `close` has not been called yet.
    #[napi(getter)]
    pub fn running(&self) -> bool {
        self.agent.is_running()
    }
}
