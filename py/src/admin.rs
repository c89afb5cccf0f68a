//! `Agent` (the base of `sds.AdminAgent`): the SDS console agent
//! (`sds-agent`) for a client's table, a background service
//! ([`crate::background`]). What is the agent's own: its log lines go to
//! `logging`, and the console's return values reach `guard`.
//!
//! The agent's thread is a Rust thread. It attaches to the interpreter only
//! to log, and never once `_stop_services` has run (at `atexit`, before
//! finalization starts).

use std::sync::{Arc, PoisonError};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3::{PyTraverseError, PyVisit};
use sds_agent::{Agent as RustAgent, AgentConfig, Level, Status};
use sds_core::ErrorCode;
use sds_settings::Value;
use sds_shm::AnyTable;

use crate::args;
use crate::background::{self, Handle, Service, Slot};
use crate::table::Inner;

impl Service for RustAgent {
    type Status = Status;
    const NAME: &'static str = "console agent";
    const CONNECT: &'static str = "connect_admin";

    fn slot(client: &Inner) -> &Slot<Self> {
        &client.admin
    }

    fn launch(
        table: Arc<AnyTable>,
        settings: Vec<(String, Value)>,
    ) -> Result<Self, (ErrorCode, String)> {
        let refused = |e: sds_agent::StartError| (ErrorCode::InvalidArgument, e.to_string());
        let mut config = AgentConfig::from_settings(settings).map_err(refused)?;
        config.log = Some(Arc::new(log_line));
        RustAgent::start(table, config).map_err(refused)
    }

    fn snapshot(&self) -> Status {
        self.status()
    }

    fn shut_down(self) -> Status {
        self.stop();
        self.status()
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

/// The console agent of a client (the base of `sds.AdminAgent`).
#[pyclass(frozen, subclass, module = "sds._native")]
pub struct Agent(Handle<RustAgent>);

#[pymethods]
impl Agent {
    /// Starts the console agent for `client`'s table from `settings`,
    /// `(key, value)` pairs (see `sds.Client.connect_admin`).
    #[new]
    fn new(
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        settings: &Bound<'_, PyAny>,
    ) -> PyResult<Agent> {
        Handle::start(py, client, settings).map(Agent)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.0.traverse(visit)
    }

    /// The agent's state: `sds_agent::Status`'s fields by name.
    fn _status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.0.status(py)
    }

    /// The console's `returnValueStr` for `point`, or `None` (also once
    /// closed).
    fn return_value(&self, py: Python<'_>, point: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let name = args::name(point)?;
        let name = args::utf8(name, "point name", ErrorCode::InvalidArgument)?;
        Ok(self.0.with(py, |agent| agent.return_value(&name)).flatten())
    }

    /// Whether the agent runs (not closed, and started by this process).
    #[getter]
    fn running(&self, py: Python<'_>) -> bool {
        self.0.running(py)
    }

    /// Stops the agent and joins its thread; idempotent. The table keeps the
    /// strategies in force.
    fn close(&self, py: Python<'_>) {
        self.0.close(py);
    }
}

impl Inner {
    /// The console's return value for `point` when an agent manages this
    /// client and has one. Called with the interpreter held, so it never
    /// waits for an agent being closed.
    pub fn console_return_value(&self, point: &Bound<'_, PyString>) -> Option<String> {
        let cell = self
            .admin
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        let name = point.to_cow().ok()?;
        cell.try_with(|agent| agent.return_value(&name)).flatten()
    }
}
