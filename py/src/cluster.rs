//! `Cluster` (the base of `sds.ClusterSync`): cluster points of a client's
//! table, their counts synced with Redis by `sds_cluster::Cluster` on a
//! thread of its own, a background service ([`crate::background`]). What
//! is the cluster's own: `sync_now` and exact decisions, errors by their
//! code (a Redis failure is `sds.Unavailable`, a `ConnectionError`).
//!
//! The syncer thread never touches the interpreter; every call that may
//! wait (a round trip, a join) runs with the interpreter released.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use sds_cluster::{Cluster as RustCluster, Config, Error, Status};
use sds_core::ErrorCode;
use sds_settings::Value;
use sds_shm::AnyTable;

use crate::args::{self, Time};
use crate::background::{Handle, Service, Slot};
use crate::entry::reason_name;
use crate::errors;
use crate::table::Inner;

impl Service for RustCluster {
    type Status = Status;
    const NAME: &'static str = "cluster sync";
    const CONNECT: &'static str = "connect_cluster";

    fn slot(client: &Inner) -> &Slot<Self> {
        &client.cluster
    }

    fn launch(
        table: Arc<AnyTable>,
        settings: Vec<(String, Value)>,
    ) -> Result<Self, (ErrorCode, String)> {
        let refused = |e: Error| (e.code(), e.to_string());
        let config = Config::from_settings(settings).map_err(refused)?;
        RustCluster::start(table, config).map_err(refused)
    }

    fn snapshot(&self) -> Status {
        self.status()
    }

    fn shut_down(self) -> Status {
        self.stop()
    }
}

/// A `sds_cluster::Error` as its Python exception.
fn error(py: Python<'_>, e: Error) -> PyErr {
    errors::raise(py, e.code(), e.to_string(), None)
}

/// The cluster sync of a client (the base of `sds.ClusterSync`).
#[pyclass(frozen, subclass, module = "sds._native")]
pub struct Cluster(Handle<RustCluster>);

#[pymethods]
impl Cluster {
    /// Starts the cluster sync of `client`'s table from `settings`,
    /// `(key, value)` pairs (see `sds.Client.connect_cluster`).
    #[new]
    fn new(
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        settings: &Bound<'_, PyAny>,
    ) -> PyResult<Cluster> {
        Handle::start(py, client, settings).map(Cluster)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.0.traverse(visit)
    }

    /// The syncer's state: `sds_cluster::Status`'s fields by name; after
    /// `close`, the last one.
    fn _status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.0.status(py)
    }

    /// One sync now on the calling thread (after the thread's sync in
    /// progress, if any); `sds.Unavailable` (a `ConnectionError`) when Redis fails.
    fn sync_now(&self, py: Python<'_>) -> PyResult<()> {
        self.0
            .with(py, RustCluster::sync_now)
            .ok_or_else(|| self.0.unusable(py))?
            .map_err(|e| error(py, e))
    }

    /// Exact mode: `(admitted, reason, exact)` of one request on the cluster
    /// point `point`, decided in Redis (one round trip), or locally when
    /// Redis cannot be reached (`exact` false).
    #[pyo3(signature = (point, now_ms = None))]
    fn _enter_exact<'py>(
        &self,
        py: Python<'py>,
        point: &Bound<'py, PyAny>,
        now_ms: Option<Time>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let name = args::name(point)?;
        let name = args::utf8(name, "point", ErrorCode::InvalidArgument)?;
        let now = args::time_or_now(now_ms);
        let d = self
            .0
            .with(py, |c| c.enter_exact(&name, now))
            .ok_or_else(|| self.0.unusable(py))?
            .map_err(|e| error(py, e))?;
        (d.admitted, reason_name(py, d.reason), d.exact).into_pyobject(py)
    }

    /// Whether the sync runs (not closed, and started by this process).
    #[getter]
    fn running(&self, py: Python<'_>) -> bool {
        self.0.running(py)
    }

    /// Stops the sync and joins its thread (within about one round trip's
    /// timeout); idempotent. The points stay cluster points; their remote
    /// counts leave the window within 10 s.
    fn close(&self, py: Python<'_>) {
        self.0.close(py);
    }
}
