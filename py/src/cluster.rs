//! `Cluster` (the base of `sds.ClusterSync`): cluster points of a client's
//! table, their counts synced with Redis by `sds_cluster::Cluster` on a
//! thread of its own. The translation only: the config from Python values,
//! `sds_cluster::Error` by its code (`sds.InvalidArgument`, `sds.TableFull`,
//! ...; for Redis failures `sds.Unavailable`, a `ConnectionError`); the status and an exact
//! decision as tuples (`sds.ClusterStatus`, `sds.ExactDecision` name them).
//!
//! The syncer thread never touches the interpreter. Every call that may
//! wait (a round trip, a join, a lock the thread or another caller holds)
//! runs with the interpreter released. `sds` registers [`_stop_clusters`]
//! with `atexit`, which stops (joins) every syncer of the process before
//! finalization. A fork child inherits no syncer thread: there a cluster
//! sync is inert (see [`crate::background`]).

use std::sync::{Arc, PoisonError, RwLock};

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use sds_cluster::{Cluster as RustCluster, Config, Error, Status};

use crate::args::{self, Time};
use crate::background::{Owned, Refused, Registry, Service};
use crate::entry::reason_name;
use crate::errors;
use crate::table::{Inner, Table};

/// Every cluster sync started in this process, for [`_stop_clusters`];
/// once that ran, none starts any more.
static SYNCS: Registry<Syncer> = Registry::new();

/// A cluster sync: `Ok` while it runs, its last state once closed.
/// Readers: status, sync_now, enter_exact (which may wait a round trip);
/// the writer: close. Only locked with the interpreter released.
pub struct Syncer(RwLock<Result<RustCluster, Status>>);

impl Service for Syncer {
    fn stop(&self) {
        let mut live = self.0.write().unwrap_or_else(PoisonError::into_inner);
        let last = match std::mem::replace(&mut *live, Err(Status::default())) {
            Ok(cluster) => cluster.stop(),
            Err(last) => last,
        };
        *live = Err(last);
    }

    fn is_running(&self) -> bool {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_ok()
    }
}

/// A cluster sync and the process that started it.
pub type ClusterCell = Owned<Syncer>;

/// The cluster sync of a client (the base of `sds.ClusterSync`).
#[pyclass(frozen, subclass, module = "sds._native")]
pub struct Cluster {
    cell: Arc<ClusterCell>,
    /// Keeps the client alive while its cluster object exists.
    client: Py<Table>,
}

/// A `str` argument.
fn text(v: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let s = v.cast::<PyString>().map_err(|_| {
        errors::argument(
            v.py(),
            format!("{what} must be a str, not {}", args::type_name(v)),
        )
    })?;
    Ok(args::utf8(s, what, sds_core::ErrorCode::InvalidArgument)?.into_owned())
}

/// A `str`, or an iterable of them (not bytes).
fn texts(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    if v.is_instance_of::<PyString>() {
        return Ok(vec![text(v, what)?]);
    }
    let not_list = || {
        errors::argument(
            v.py(),
            format!(
                "{what} must be a str or a list of str, not {}",
                args::type_name(v)
            ),
        )
    };
    if v.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(not_list());
    }
    v.try_iter()
        .map_err(|_| not_list())?
        .map(|item| text(&item?, &format!("each of {what}")))
        .collect()
}

/// A `sds_cluster::Error` as its Python exception: the core's code with
/// the message (a Redis failure is `sds.Unavailable`, a `ConnectionError`).
fn error(py: Python<'_>, e: Error) -> PyErr {
    errors::raise(py, e.code(), e.to_string(), None)
}

#[pymethods]
impl Cluster {
    /// Starts the cluster sync of `client`'s table (see
    /// `sds.Client.connect_cluster`, which converts seconds to ms).
    #[new]
    #[pyo3(signature = (
        client, urls, points, *, redis_cluster, sync_ms, timeout_ms, key_prefix,
        tls_ca_file, tls_cert_file, tls_key_file
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        urls: &Bound<'_, PyAny>,
        points: &Bound<'_, PyAny>,
        redis_cluster: &Bound<'_, PyAny>,
        sync_ms: &Bound<'_, PyAny>,
        timeout_ms: &Bound<'_, PyAny>,
        key_prefix: &Bound<'_, PyAny>,
        tls_ca_file: &Bound<'_, PyAny>,
        tls_cert_file: &Bound<'_, PyAny>,
        tls_key_file: &Bound<'_, PyAny>,
    ) -> PyResult<Cluster> {
        let client = client
            .cast::<Table>()
            .map_err(|_| errors::argument(py, "client must be an sds.Client".to_string()))?;
        let mut config = Config::new("");
        config.urls = texts(urls, "urls")?;
        config.points = texts(points, "points")?;
        config.redis_cluster = redis_cluster
            .cast::<pyo3::types::PyBool>()
            .map_err(|_| {
                errors::argument(
                    py,
                    format!(
                        "redis_cluster must be a bool, not {}",
                        args::type_name(redis_cluster)
                    ),
                )
            })?
            .is_true();
        config.sync_ms = args::u64_arg(sync_ms, "sync_ms")?;
        config.timeout_ms = args::u64_arg(timeout_ms, "timeout_ms")?;
        config.key_prefix = text(key_prefix, "key_prefix")?;
        config.tls_ca_file = args::optional_path(tls_ca_file, "tls_ca_file")?;
        config.tls_cert_file = args::optional_path(tls_cert_file, "tls_cert_file")?;
        config.tls_key_file = args::optional_path(tls_key_file, "tls_key_file")?;
        let inner: &Arc<Inner> = &client.get().inner;
        let start =
            || RustCluster::start(inner.table.clone(), config).map(|c| Syncer(RwLock::new(Ok(c))));
        let cell = py
            .detach(|| SYNCS.start(&inner.cluster, start))
            .map_err(|e| match e {
                Refused::Running => errors::argument(
                    py,
                    "this client already syncs cluster points: close its cluster sync first"
                        .to_string(),
                ),
                Refused::ShuttingDown => errors::argument(
                    py,
                    "the interpreter is shutting down: no cluster sync starts".to_string(),
                ),
                Refused::Start(e) => error(py, e),
            })?;
        Ok(Cluster {
            cell,
            client: client.clone().unbind(),
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.client)
    }

    /// The syncer's state as a tuple in `sds_cluster::Status`'s field order;
    /// after `close`, the last one.
    fn _status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let syncer = self.cell.get().ok_or_else(|| self.gone(py))?;
        let s = py.detach(
            || match &*syncer.0.read().unwrap_or_else(PoisonError::into_inner) {
                Ok(cluster) => cluster.status(),
                Err(last) => last.clone(),
            },
        );
        (
            s.connected,
            s.syncing,
            s.last_sync_ms,
            s.lag_ms,
            s.rtt_us,
            s.syncs,
            s.failures,
            s.round_trips,
            s.commands,
            s.last_error,
            s.points,
            s.points_failing,
        )
            .into_pyobject(py)
    }

    /// One sync now on the calling thread (after the thread's sync in
    /// progress, if any); `sds.Unavailable` (a `ConnectionError`) when Redis fails.
    fn sync_now(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, RustCluster::sync_now)
            .ok_or_else(|| self.gone(py))?
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
        let name = text(point, "point")?;
        let now = args::time_or_now(now_ms);
        let d = self
            .with(py, |c| c.enter_exact(&name, now))
            .ok_or_else(|| self.gone(py))?
            .map_err(|e| error(py, e))?;
        (d.admitted, reason_name(py, d.reason), d.exact).into_pyobject(py)
    }

    /// Whether the sync runs (not closed, and started by this process).
    #[getter]
    fn running(&self, py: Python<'_>) -> bool {
        self.with(py, |_| ()).is_some()
    }

    /// Stops the sync and joins its thread (within about one round trip's
    /// timeout); idempotent. The points stay cluster points; their remote
    /// counts leave the window within 10 s.
    fn close(&self, py: Python<'_>) {
        self.cell.close(py, &self.client.get().inner.cluster);
    }
}

impl Cluster {
    /// Runs `work` on the running cluster, with the interpreter released;
    /// `None` when closed or in a fork child.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&RustCluster) -> T + Send,
    ) -> Option<T> {
        let syncer = self.cell.get()?;
        py.detach(|| {
            let cluster = syncer.0.read().unwrap_or_else(PoisonError::into_inner);
            cluster.as_ref().ok().map(work)
        })
    }

    /// The error of a call on a closed or inherited cluster sync.
    fn gone(&self, py: Python<'_>) -> PyErr {
        if self.cell.ours() {
            return error(py, Error::Closed);
        }
        errors::argument(
            py,
            format!(
                "this cluster sync belongs to process {}: a fork child inherits no cluster \
                 sync; call connect_cluster in the child",
                self.cell.pid()
            ),
        )
    }
}

/// Stops every cluster sync of this process (joining their threads) and
/// lets no other start: `sds` registers it with `atexit`, so no syncer
/// thread is left when the interpreter finalizes.
#[pyfunction]
pub fn _stop_clusters(py: Python<'_>) {
    SYNCS.stop_all(py);
}
