//! The two background services ([`crate::background`]) and their classes:
//! `Agent` (the base of `sds.AdminAgent`), the SDS console agent
//! (`sds-agent`), whose log lines go to `logging` and whose console return
//! values reach `guard`; `Cluster` (the base of `sds.ClusterSync`), cluster
//! points whose counts `sds_cluster::Cluster` syncs with Redis, with
//! `sync_now` and exact decisions (a Redis failure is `sds.Unavailable`, a
//! `ConnectionError`).
//!
//! Both threads are Rust threads. The agent's attaches to the interpreter
//! only to log, and never once `_stop_services` has run (at `atexit`,
//! before finalization starts); the syncer never touches it. Every call
//! that may wait (a round trip, a join) runs with the interpreter released.

use std::sync::{Arc, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyString;
use sds_agent::{Agent as RustAgent, AgentConfig, Level};
use sds_cluster::{Cluster as RustCluster, Config, Error};
use sds_core::ErrorCode;
use sds_settings::Value;
use sds_shm::AnyTable;

use crate::args::{self, Time};
use crate::background::{self, service_class, Binding, Refusal, Slot};
use crate::entry::reason_name;
use crate::errors;
use crate::table::Inner;

impl Binding for RustAgent {
    const NAME: &'static str = "console agent";
    const CONNECT: &'static str = "connect_admin";

    fn slot(client: &Inner) -> &Slot<Self> {
        &client.admin
    }

    fn launch(table: Arc<AnyTable>, settings: Vec<(String, Value)>) -> Result<Self, Refusal> {
        let refused = |e: sds_agent::StartError| (ErrorCode::InvalidArgument, e.to_string());
        let mut config = AgentConfig::from_settings(settings).map_err(refused)?;
        config.log = Some(Arc::new(log_line));
        RustAgent::start(table, config).map_err(refused)
    }
}

impl Binding for RustCluster {
    const NAME: &'static str = "cluster sync";
    const CONNECT: &'static str = "connect_cluster";

    fn slot(client: &Inner) -> &Slot<Self> {
        &client.cluster
    }

    fn launch(table: Arc<AnyTable>, settings: Vec<(String, Value)>) -> Result<Self, Refusal> {
        let refused = |e: Error| (e.code(), e.to_string());
        let config = Config::from_settings(settings).map_err(refused)?;
        RustCluster::start(table, config).map_err(refused)
    }
}

/// An agent log line as a `logging` record of the logger `sds.admin`.
fn log_line(level: Level, line: &str) {
    if background::shutting_down() {
        return;
    }
    // try_attach: never blocks on, or attaches to, an interpreter shutting
    // down (the atexit hook has joined the agents before that anyway).
    let _ = Python::try_attach(|py| {
        let level = match level {
            Level::Info => 20,
            Level::Warn => 30,
        };
        let logged = py
            .import("logging")
            .and_then(|logging| logging.call_method1("getLogger", ("sds.admin",)))
            .and_then(|logger| logger.call_method1("log", (level, "%s", line)));
        if let Err(err) = logged {
            err.write_unraisable(py, None);
        }
    });
}

/// A point name argument as text.
fn point_text(point: &Bound<'_, PyAny>) -> PyResult<String> {
    let name = args::utf8(args::name(point)?, "point name", ErrorCode::InvalidArgument)?;
    Ok(name.into_owned())
}

service_class!(
    /// The console agent of a client (the base of `sds.AdminAgent`).
    Agent(RustAgent);
    /// Stops the agent and joins its thread; idempotent. The table keeps
    /// the strategies in force.
    fn close;

    /// The console's `returnValueStr` for `point`, or `None` (also once
    /// closed).
    fn return_value(&self, py: Python<'_>, point: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let name = point_text(point)?;
        Ok(self.0.with(py, |agent| agent.return_value(&name)).flatten())
    }
);

service_class!(
    /// The cluster sync of a client (the base of `sds.ClusterSync`).
    Cluster(RustCluster);
    /// Stops the sync and joins its thread (within about one round trip's
    /// timeout); idempotent. The points stay cluster points; their remote
    /// counts leave the window within 10 s.
    fn close;

    /// One sync now on the calling thread (after the thread's sync in
    /// progress, if any); `sds.Unavailable` (a `ConnectionError`) when
    /// Redis fails.
    fn sync_now(&self, py: Python<'_>) -> PyResult<()> {
        self.0.call(py, RustCluster::sync_now)?.map_err(|e| error(py, e))
    }

    /// Exact mode: `(admitted, reason, exact)` of one request on the
    /// cluster point `point`, decided in Redis (one round trip), or
    /// locally when Redis cannot be reached (`exact` false).
    #[pyo3(signature = (point, now_ms = None))]
    fn _enter_exact(
        &self,
        py: Python<'_>,
        point: &Bound<'_, PyAny>,
        now_ms: Option<Time>,
    ) -> PyResult<(bool, Option<Py<PyString>>, bool)> {
        let (name, now) = (point_text(point)?, args::time_or_now(now_ms));
        let d = self.0.call(py, |c| c.enter_exact(&name, now))?;
        let d = d.map_err(|e| error(py, e))?;
        Ok((d.admitted, reason_name(py, d.reason), d.exact))
    }
);

/// A `sds_cluster::Error` as its Python exception.
fn error(py: Python<'_>, e: Error) -> PyErr {
    errors::raise(py, e.code(), e.to_string(), None)
}

impl Inner {
    /// The console's return value for `point` when an agent manages this
    /// client and has one. Called with the interpreter held, so it never
    /// waits for an agent being closed.
    pub fn console_return_value(&self, point: &Bound<'_, PyString>) -> Option<String> {
        let admin = self.admin.lock().unwrap_or_else(PoisonError::into_inner);
        let cell = admin.clone()?;
        drop(admin);
        let name = point.to_cow().ok()?;
        cell.with(|agent| agent.return_value(&name)).flatten()
    }
}
