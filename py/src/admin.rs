//! `Agent` (the base of `sds.AdminAgent`): the SDS console agent
//! (`sds-agent`) for a client's table. The translation only: the config from
//! Python values (the CA, certificate and key files as paths `open` takes,
//! as `connect_cluster` takes them), `StartError` as
//! `sds.InvalidArgument`, the status as a tuple (`sds.AgentStatus` names
//! it), log lines to `logging`.
//!
//! The agent's thread is a Rust thread. It attaches to the interpreter only
//! to log, and never while the interpreter shuts down: `sds` registers
//! [`_stop_agents`] with `atexit`, which runs before finalization starts,
//! and it stops (joins) every agent of the process. A fork child inherits no
//! agent thread: there an agent is inert (see [`crate::background`]).

use std::path::PathBuf;
use std::sync::{Arc, PoisonError};

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use pyo3::{PyTraverseError, PyVisit};
use sds_agent::{Agent as RustAgent, AgentConfig, Level};

use crate::args;
use crate::background::{Owned, Refused, Registry, Service};
use crate::errors;
use crate::table::{Inner, Table};

/// Every agent started in this process, for [`_stop_agents`]; once that
/// ran, no agent logs or starts any more.
static AGENTS: Registry<RustAgent> = Registry::new();

impl Service for RustAgent {
    fn stop(&self) {
        RustAgent::stop(self);
    }

    fn is_running(&self) -> bool {
        RustAgent::is_running(self)
    }
}

/// A running agent and the process that started it.
pub type AdminCell = Owned<RustAgent>;

/// The console's `returnValueStr` for `point`.
fn return_value(cell: &AdminCell, point: &str) -> Option<String> {
    cell.get().and_then(|agent| agent.return_value(point))
}

/// An agent log line as a `logging` record of the logger `sds.admin`.
fn log_line(level: Level, line: &str) {
    if AGENTS.shutting_down() {
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
pub struct Agent {
    cell: Arc<AdminCell>,
    /// Keeps the client alive while its agent object exists.
    client: Py<Table>,
}

/// An optional `str` argument.
fn text(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<String>> {
    match v.filter(|v| !v.is_none()) {
        None => Ok(None),
        Some(v) => {
            let s = v.cast::<PyString>().map_err(|_| {
                errors::argument(
                    v.py(),
                    format!("{what} must be a str, not {}", args::type_name(v)),
                )
            })?;
            let utf8 = args::utf8(s, what, sds_core::ErrorCode::InvalidArgument)?;
            Ok(Some(utf8.into_owned()))
        }
    }
}

/// An optional file argument, converted as `connect_cluster`'s are.
fn path(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<PathBuf>> {
    v.map_or(Ok(None), |v| args::optional_path(v, what))
}

fn required(v: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    Ok(text(Some(v), what)?.unwrap_or_default())
}

#[pymethods]
impl Agent {
    /// Starts the console agent for `client`'s table (see
    /// `sds.Client.connect_admin`, which converts seconds to ms).
    #[new]
    #[pyo3(signature = (
        client, servers, app_group, app_name, *,
        ip = None, hostname = None, pull_interval_ms, timeout_ms,
        tls_ca_file = None, tls_cert_file = None, tls_key_file = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        servers: &Bound<'_, PyAny>,
        app_group: &Bound<'_, PyAny>,
        app_name: &Bound<'_, PyAny>,
        ip: Option<&Bound<'_, PyAny>>,
        hostname: Option<&Bound<'_, PyAny>>,
        pull_interval_ms: &Bound<'_, PyAny>,
        timeout_ms: &Bound<'_, PyAny>,
        tls_ca_file: Option<&Bound<'_, PyAny>>,
        tls_cert_file: Option<&Bound<'_, PyAny>>,
        tls_key_file: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Agent> {
        let client = client
            .cast::<Table>()
            .map_err(|_| errors::argument(py, "client must be an sds.Client".to_string()))?;
        let mut config = AgentConfig::new(
            required(servers, "servers")?,
            required(app_group, "app_group")?,
            required(app_name, "app_name")?,
        );
        config.ip = text(ip, "ip")?;
        config.hostname = text(hostname, "hostname")?;
        config.pull_interval_ms = args::u64_arg(pull_interval_ms, "pull_interval_ms")?;
        config.timeout_ms = args::u64_arg(timeout_ms, "timeout_ms")?;
        // Whether the files belong together is the agent's to judge.
        config.tls_ca_file = path(tls_ca_file, "tls_ca_file")?;
        config.tls_cert_file = path(tls_cert_file, "tls_cert_file")?;
        config.tls_key_file = path(tls_key_file, "tls_key_file")?;
        config.log = Some(Arc::new(log_line));
        let inner: &Arc<Inner> = &client.get().inner;
        let cell = AGENTS
            .start(&inner.admin, || {
                RustAgent::start(inner.table.clone(), config)
            })
            .map_err(|e| match e {
                Refused::Running => errors::argument(
                    py,
                    "this client is already managed by a console agent: close it first".to_string(),
                ),
                Refused::ShuttingDown => errors::argument(
                    py,
                    "the interpreter is shutting down: no console agent starts".to_string(),
                ),
                Refused::Start(e) => errors::argument(py, e.to_string()),
            })?;
        Ok(Agent {
            cell,
            client: client.clone().unbind(),
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.client)
    }

    /// The agent's state as a tuple in `sds_agent::Status`'s field order.
    fn _status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let Some(agent) = self.cell.get() else {
            return Err(errors::argument(
                py,
                format!(
                    "this console agent belongs to process {}: a fork child inherits no agent; \
                     call connect_admin in the child",
                    self.cell.pid()
                ),
            ));
        };
        let s = agent.status();
        // 13 fields: more than pyo3's tuple conversions take (12).
        let fields = [
            s.last_pull_ms.into_bound_py_any(py)?,
            s.last_pull_ok.into_bound_py_any(py)?,
            s.last_upload_ms.into_bound_py_any(py)?,
            s.last_upload_ok.into_bound_py_any(py)?,
            s.version.into_bound_py_any(py)?,
            s.is_reporter.into_bound_py_any(py)?,
            s.server.into_bound_py_any(py)?,
            s.last_error.into_bound_py_any(py)?,
            s.pull_failures.into_bound_py_any(py)?,
            s.upload_failures.into_bound_py_any(py)?,
            s.uploads.into_bound_py_any(py)?,
            s.strategies_waiting.into_bound_py_any(py)?,
            s.points_left_out.into_bound_py_any(py)?,
        ];
        PyTuple::new(py, fields)
    }

    /// The console's `returnValueStr` for `point`, or `None`.
    fn return_value(&self, point: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let name = args::name(point)?;
        let name = args::utf8(name, "point name", sds_core::ErrorCode::InvalidArgument)?;
        Ok(return_value(&self.cell, &name))
    }

    /// Whether the agent runs (not closed, and started by this process).
    #[getter]
    fn running(&self) -> bool {
        self.cell.running()
    }

    /// Stops the agent and joins its thread; idempotent. The table keeps the
    /// strategies in force.
    fn close(&self, py: Python<'_>) {
        self.cell.close(py, &self.client.get().inner.admin);
    }
}

/// Stops every agent of this process (joining their threads) and lets no
/// other start or log: `sds` registers it with `atexit`, so no agent thread
/// is left when the interpreter finalizes.
#[pyfunction]
pub fn _stop_agents(py: Python<'_>) {
    AGENTS.stop_all(py);
}

impl Inner {
    /// The console's return value for `point` when an agent manages this
    /// client and has one.
    pub fn console_return_value(&self, point: &Bound<'_, PyString>) -> Option<String> {
        let cell = self
            .admin
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()?;
        return_value(&cell, &point.to_cow().ok()?)
    }
}
