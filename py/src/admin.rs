//! `Agent` (the base of `sds.AdminAgent`): the SDS console agent
//! (`sds-agent`) for a client's table. The translation only: the config from
//! Python values, `StartError` as `sds.InvalidArgument`, the status as a
//! tuple (`sds.AgentStatus` names it), log lines to `logging`.
//!
//! The agent's thread is a Rust thread. It attaches to the interpreter only
//! to log, and never while the interpreter shuts down: `sds` registers
//! [`_stop_agents`] with `atexit`, which runs before finalization starts,
//! and it stops (joins) every agent of the process. A fork child inherits no
//! agent thread, so an agent is only ever touched by the process that
//! started it (`pid`); in a child it is inert and its memory is left alone.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use sds_agent::{Agent as RustAgent, AgentConfig, Level};

use crate::args;
use crate::errors;
use crate::table::{Inner, Table};

/// Set by [`_stop_agents`]: no agent logs or starts any more.
static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
/// Every agent started in this process, for [`_stop_agents`].
static LIVE: Mutex<Vec<Weak<AdminCell>>> = Mutex::new(Vec::new());

/// A running agent and the process that started it.
pub struct AdminCell {
    // Dropped only in the process that started it (see `Drop`).
    agent: ManuallyDrop<RustAgent>,
    pid: u32,
}

impl AdminCell {
    /// The agent, unless this is a fork child of the process that started
    /// it: there its thread does not exist and its locks may be held by a
    /// thread that was not copied.
    fn agent(&self) -> Option<&RustAgent> {
        (self.pid == std::process::id()).then_some(&*self.agent)
    }

    /// The console's `returnValueStr` for `point`.
    pub fn return_value(&self, point: &str) -> Option<String> {
        self.agent().and_then(|agent| agent.return_value(point))
    }

    fn running(&self) -> bool {
        self.agent().is_some_and(RustAgent::is_running)
    }

    /// Stops and joins the agent with the interpreter released: its thread
    /// may be waiting for the interpreter to log a line.
    fn stop(&self, py: Python<'_>) {
        if let Some(agent) = self.agent() {
            py.detach(|| agent.stop());
        }
    }
}

impl Drop for AdminCell {
    fn drop(&mut self) {
        if self.pid != std::process::id() {
            // A fork child's copy: stopping would join a thread that does
            // not exist here. Leaked (the agent and its table reference).
            return;
        }
        if self.agent.is_running() {
            // The client was collected with its agent running: the last
            // reference goes in a deallocation, so the interpreter is held.
            let stopped = Python::try_attach(|py| py.detach(|| self.agent.stop()));
            if stopped.is_none() {
                self.agent.stop();
            }
        }
        // SAFETY: dropped once, here; the agent is stopped (its drop's stop
        // returns at once).
        unsafe { ManuallyDrop::drop(&mut self.agent) };
    }
}

/// An agent log line as a `logging` record of the logger `sds.admin`.
fn log_line(level: Level, line: &str) {
    if SHUTTING_DOWN.load(Ordering::Acquire) {
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
        ip = None, hostname = None, pull_interval_ms, timeout_ms
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
        config.log = Some(Arc::new(log_line));
        let inner: &Arc<Inner> = &client.get().inner;
        let mut admin = inner.admin.lock().unwrap_or_else(PoisonError::into_inner);
        if admin.as_ref().is_some_and(|cell| cell.running()) {
            return Err(errors::argument(
                py,
                "this client is already managed by a console agent: close it first".to_string(),
            ));
        }
        if SHUTTING_DOWN.load(Ordering::Acquire) {
            return Err(errors::argument(
                py,
                "the interpreter is shutting down: no console agent starts".to_string(),
            ));
        }
        let agent = RustAgent::start(inner.table.clone(), config)
            .map_err(|e| errors::argument(py, e.to_string()))?;
        let cell = Arc::new(AdminCell {
            agent: ManuallyDrop::new(agent),
            pid: std::process::id(),
        });
        *admin = Some(cell.clone());
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|weak| weak.strong_count() > 0);
        live.push(Arc::downgrade(&cell));
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
        let Some(agent) = self.cell.agent() else {
            return Err(errors::argument(
                py,
                format!(
                    "this console agent belongs to process {}: a fork child inherits no agent; \
                     call connect_admin in the child",
                    self.cell.pid
                ),
            ));
        };
        let s = agent.status();
        (
            s.last_pull_ms,
            s.last_pull_ok,
            s.last_upload_ms,
            s.last_upload_ok,
            s.version,
            s.is_reporter,
            s.server,
            s.last_error,
            s.pull_failures,
            s.upload_failures,
            s.uploads,
        )
            .into_pyobject(py)
    }

    /// The console's `returnValueStr` for `point`, or `None`.
    fn return_value(&self, point: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let name = args::name(point)?;
        let name = args::utf8(name, "point name", sds_core::ErrorCode::InvalidArgument)?;
        Ok(self.cell.return_value(&name))
    }

    /// Whether the agent runs (not closed, and started by this process).
    #[getter]
    fn running(&self) -> bool {
        self.cell.running()
    }

    /// Stops the agent and joins its thread; idempotent. The table keeps the
    /// strategies in force.
    fn close(&self, py: Python<'_>) {
        self.cell.stop(py);
        let inner = &self.client.get().inner;
        let mut admin = inner.admin.lock().unwrap_or_else(PoisonError::into_inner);
        if admin.as_ref().is_some_and(|c| Arc::ptr_eq(c, &self.cell)) {
            *admin = None;
        }
    }
}

/// Stops every agent of this process (joining their threads) and lets no
/// other start or log: `sds` registers it with `atexit`, so no agent thread
/// is left when the interpreter finalizes.
#[pyfunction]
pub fn _stop_agents(py: Python<'_>) {
    SHUTTING_DOWN.store(true, Ordering::Release);
    let cells: Vec<Arc<AdminCell>> = LIVE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain(..)
        .filter_map(|weak| weak.upgrade())
        .collect();
    for cell in cells {
        cell.stop(py);
    }
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
        cell.return_value(&point.to_cow().ok()?)
    }
}
