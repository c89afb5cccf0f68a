//! `Table` (the base of `sds.Client`) and `PointHandle` (the base of
//! `sds.Point`): names to points, enter, strategies, stats, listeners.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use pyo3::{PyTraverseError, PyVisit};
use sds_core::{capacity_from_i128, Flags, Outcome, PointId, Points, Stats};
use sds_shm::{table_path, AnyTable, Options};

use crate::args::{self, Time};
use crate::background;
use crate::entry::{reason_name, Entry};
use crate::errors;
use crate::strategy::Strategy;

/// Runs `$body` with `$t` bound to the core's table of `$points` (an
/// `&AnyTable`): the private table, or this process's view of the shared one
/// (a fork child registers first, which may fail). The body is compiled once
/// per kind of table: the private one pays only for the branch.
macro_rules! with_table {
    ($points:expr, $py:expr, $t:ident => $body:expr) => {
        match $points {
            sds_shm::AnyTable::Private($t) => $body,
            sds_shm::AnyTable::Shared(shared) => {
                let view = shared.view().map_err(|e| $crate::errors::shm($py, &e))?;
                let $t = &view;
                $body
            }
        }
    };
}

/// What a client, its point handles and its entries share.
pub struct Inner {
    /// The client's own table or its attachment to a table file shared by
    /// the processes of the host; in an `Arc` so the console agent can hold
    /// it too (`connect_admin`).
    pub table: Arc<AnyTable>,
    /// `str` -> point index: a known name is found by its cached `str` hash,
    /// without reading its text (as fast as the core's lookup of a short
    /// name's UTF-8 bytes, faster for longer ones).
    ids: Py<PyDict>,
    /// Point index -> name, the reverse of `ids`: only read to name the point
    /// of an entry dropped without `exit`, so entries need not hold a name.
    names: Py<PyDict>,
    listeners: Mutex<Vec<Py<PyAny>>>,
    has_listeners: AtomicBool,
    /// The console agent managing this table, if one is connected.
    pub admin: background::Slot<sds_agent::Agent>,
    /// The sync of this table's cluster points, if one was started (at most
    /// one runs per client).
    pub cluster: background::Slot<sds_cluster::Cluster>,
    /// The client's metrics' exporter (its counters never go back).
    pub exporter: sds_metrics::Exporter,
}

impl Inner {
    /// `work` on the core's table, off the hot path (through `dyn Points`).
    fn points<T>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&dyn Points) -> Result<T, sds_core::Error>,
    ) -> PyResult<T> {
        let done = self.table.with_points(work);
        done.map_err(|e| errors::shm(py, &e))?
            .map_err(|e| errors::core(py, e))
    }

    pub fn id_of(&self, py: Python<'_>, name: &Bound<'_, PyString>) -> PyResult<PointId> {
        // Only exact `str` keys: a subclass may redefine `__eq__`/`__hash__`.
        let cacheable = name.is_exact_instance_of::<PyString>();
        let ids = self.ids.bind(py);
        if cacheable {
            if let Some(index) = ids.get_item(name)? {
                return Ok(PointId::from_index(index.extract::<u32>()?));
            }
        }
        let bytes = args::name_bytes(name)?;
        let id = self.points(py, |t| t.insert(&bytes))?;
        if cacheable {
            ids.set_item(name, id.index())?;
        }
        self.remember_name(py, id, name)?;
        Ok(id)
    }

    /// Records `id`'s name for `point_name`. Out of line: it runs only when
    /// a name misses the `ids` cache, and must not grow `id_of`'s hit path.
    #[cold]
    #[inline(never)]
    fn remember_name(
        &self,
        py: Python<'_>,
        id: PointId,
        name: &Bound<'_, PyString>,
    ) -> PyResult<()> {
        let names = self.names.bind(py);
        if !names.contains(id.index())? {
            // A plain `str` copy: a subclass's value is only borrowed here.
            names.set_item(id.index(), PyString::new(py, &name.to_cow()?))?;
        }
        Ok(())
    }

    /// The `repr` of a point's name, for messages.
    pub fn point_name(&self, py: Python<'_>, id: PointId) -> String {
        self.names
            .bind(py)
            .get_item(id.index())
            .ok()
            .flatten()
            .and_then(|name| name.repr().ok().map(|r| r.to_string()))
            .unwrap_or_else(|| format!("#{}", id.index()))
    }

    pub fn enter(
        self: &Arc<Self>,
        py: Python<'_>,
        id: PointId,
        name: &Bound<'_, PyString>,
        now_ms: Option<Time>,
        flags: Flags,
    ) -> PyResult<Entry> {
        let entry = self.enter_at(py, id, name, args::time_or_now(now_ms), flags)?;
        Ok(Entry::new(self.clone(), entry, now_ms.is_some()))
    }

    /// The core's entry, with the listeners told of a downgrade.
    pub fn enter_at(
        &self,
        py: Python<'_>,
        id: PointId,
        name: &Bound<'_, PyString>,
        now: u64,
        flags: Flags,
    ) -> PyResult<sds_core::Entry> {
        let entry = with_table!(&*self.table, py, t => t.enter_point(id, now, flags))
            .map_err(|e| errors::core(py, e))?;
        if entry.downgraded() && self.has_listeners.load(Ordering::Acquire) {
            self.notify(py, name, &entry, now);
        }
        Ok(entry)
    }

    /// The listeners. The lock is only held for a push or a copy, so a
    /// panic while it was held lost nothing: a poisoned lock is used as is.
    fn listeners(&self) -> MutexGuard<'_, Vec<Py<PyAny>>> {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Calls every listener with `(point, reason, time_ms)`. A listener that
    /// raises is reported through `sys.unraisablehook`: it must not turn a
    /// downgrade into a failure of the caller.
    fn notify(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyString>,
        entry: &sds_core::Entry,
        now: u64,
    ) {
        let listeners: Vec<Py<PyAny>> = self.listeners().iter().map(|l| l.clone_ref(py)).collect();
        let reason = reason_name(py, entry.reason());
        for listener in listeners {
            let listener = listener.bind(py);
            if let Err(err) = listener.call1((name, &reason, now)) {
                err.write_unraisable(py, Some(listener));
            }
        }
    }

    /// Settles `entry` with `outcome`, at `clock()` (read only if needed).
    pub fn exit_with(
        &self,
        py: Python<'_>,
        entry: &sds_core::Entry,
        outcome: Outcome,
        clock: impl FnOnce() -> u64,
    ) -> PyResult<()> {
        with_table!(&*self.table, py, t => t.exit_with(entry, outcome, clock))
            .map_err(|e| errors::core(py, e))
    }
}

/// `stats()` as a dict, named and nested by the core's table
/// (`Stats::fields`, `CycleStats::fields` under `Stats::LAST_CYCLE`).
fn stats_dict(py: Python<'_>, s: Stats) -> PyResult<Bound<'_, PyDict>> {
    let cycle = PyDict::new(py);
    for (name, value) in s.last_cycle.fields() {
        cycle.set_item(name, value)?;
    }
    let d = PyDict::new(py);
    for (name, value) in s.fields() {
        d.set_item(name, value)?;
    }
    d.set_item(Stats::LAST_CYCLE, cycle)?;
    Ok(d)
}

/// A capacity the core accepts, checked before the slots are allocated.
fn capacity_arg(v: &Bound<'_, PyAny>) -> PyResult<usize> {
    let py = v.py();
    let n = args::int(v, "capacity")?;
    // Beyond i128 is as huge as i128::MAX: the core's verdict either way.
    let n = n.extract::<i128>().unwrap_or(i128::MAX);
    capacity_from_i128(n).map_err(|e| errors::core(py, e))
}

/// Opens (creating if needed) the table of `path` (a bare name is a file
/// under /dev/shm) for `capacity` points, with `mode` 0o600 or 0o660: this
/// process's view of the table every process of the host may open
/// (`sds_shm`, which also gives each process, fork children included, its
/// own view).
fn open_shared(path: &Bound<'_, PyString>, capacity: usize, mode: u32) -> PyResult<AnyTable> {
    let py = path.py();
    let shm = |e| errors::shm(py, &e);
    let path = table_path(path.to_str()?).map_err(shm)?;
    let options = Options::of_mode(mode).map_err(shm)?;
    // Opening may wait for another process initialising the file.
    py.detach(|| AnyTable::shared(&path, capacity, &options))
        .map_err(shm)
}

/// `v` as the client it must be; `what` names the argument.
pub fn client<'py>(v: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, Table>> {
    let not_client = |_| errors::argument(v.py(), format!("{what} must be an sds.Client"));
    v.cast::<Table>().cloned().map_err(not_client)
}

/// A table of points with a fixed capacity. `sds.Client` extends it.
#[pyclass(frozen, subclass, module = "sds._native")]
pub struct Table {
    pub inner: Arc<Inner>,
}

#[pymethods]
impl Table {
    #[new]
    #[pyo3(
        signature = (capacity = None, *, shared = None, mode = None),
        text_signature = "(capacity=1024, *, shared=None, mode=0o600)"
    )]
    fn new(
        py: Python<'_>,
        capacity: Option<&Bound<'_, PyAny>>,
        shared: Option<&Bound<'_, PyAny>>,
        mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Table> {
        let capacity = capacity.map_or(Ok(1024), capacity_arg)?;
        let table = match args::shared_file(shared, mode, "Client.shared")? {
            Some((path, mode)) => open_shared(&path, capacity, mode)?,
            None => AnyTable::private(capacity).map_err(|e| errors::shm(py, &e))?,
        };
        Ok(Table {
            inner: Arc::new(Inner {
                table: Arc::new(table),
                ids: PyDict::new(py).unbind(),
                names: PyDict::new(py).unbind(),
                listeners: Mutex::new(Vec::new()),
                has_listeners: AtomicBool::new(false),
                admin: Mutex::new(None),
                cluster: Mutex::new(None),
                exporter: sds_metrics::Exporter::new(),
            }),
        })
    }

    /// How many points fit.
    #[getter]
    fn capacity(&self) -> usize {
        self.inner.table.capacity()
    }

    /// The file of a shared table, `None` for a private one.
    #[getter]
    fn shared_path(&self) -> Option<std::path::PathBuf> {
        self.inner.table.path().map(|p| p.to_path_buf())
    }

    /// How many points exist (in the whole file for a shared table).
    fn __len__(&self) -> usize {
        match &*self.inner.table {
            AnyTable::Private(t) => t.len(),
            AnyTable::Shared(shared) => shared.len(),
        }
    }

    /// Sets the strategy of `point`: an `sds.Strategy`, a dict of SDS JSON
    /// names or a JSON string. An invalid one changes nothing.
    fn set_strategy(
        &self,
        py: Python<'_>,
        point: &Bound<'_, PyAny>,
        strategy: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let name = args::name_bytes(args::name(point)?)?;
        let strategy = Strategy::from_any(strategy)?;
        self.inner
            .points(py, |t| t.set_strategy(&name, &strategy.inner))
            .map(drop)
    }

    /// Removes the strategy of `point`; its counters stay.
    fn remove_strategy(&self, py: Python<'_>, point: &Bound<'_, PyAny>) -> PyResult<()> {
        let name = args::name_bytes(args::name(point)?)?;
        self.inner.points(py, |t| t.remove_strategy(&name))
    }

    /// The strategy of `point`, or `None`.
    fn strategy(&self, py: Python<'_>, point: &Bound<'_, PyAny>) -> PyResult<Option<Strategy>> {
        let name = args::name_bytes(args::name(point)?)?;
        let strategy = self.inner.points(py, |t| {
            Ok(t.lookup(&name)?.and_then(|id| t.point(id).ok()?.strategy()))
        })?;
        Ok(strategy.map(|inner| Strategy { inner }))
    }

    /// The sliding values and the last whole cycle of `point`.
    #[pyo3(signature = (point, now_ms = None))]
    fn stats<'py>(
        &self,
        py: Python<'py>,
        point: &Bound<'py, PyAny>,
        now_ms: Option<Time>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let name = args::name_bytes(args::name(point)?)?;
        let now = args::time_or_now(now_ms);
        let stats = self.inner.points(py, |t| match t.lookup(&name)? {
            Some(id) => Ok(t.point(id)?.stats(now)),
            None => Ok(Stats::default()),
        })?;
        stats_dict(py, stats)
    }

    /// Every metric family as `(name, kind, help, label_names, samples)`,
    /// each sample `(label_values, value)`: this table's points, its console
    /// agent and cluster sync if this client started them, and the
    /// process's keyed limits (a shared table's counts are the host's).
    #[pyo3(signature = (now_ms = None))]
    fn metrics<'py>(&self, py: Python<'py>, now_ms: Option<Time>) -> PyResult<Bound<'py, PyList>> {
        crate::metrics::families(py, &self.inner, args::time_or_now(now_ms))
    }

    /// Those metrics as Prometheus text (0.0.4), or OpenMetrics 1.0 text
    /// (ending in `# EOF`).
    #[pyo3(signature = (openmetrics = false, now_ms = None))]
    fn prometheus_text(&self, py: Python<'_>, openmetrics: bool, now_ms: Option<Time>) -> String {
        crate::metrics::text(py, &self.inner, args::time_or_now(now_ms), openmetrics)
    }

    /// The HTTP `Content-Type` of `prometheus_text(openmetrics)`.
    #[staticmethod]
    #[pyo3(signature = (openmetrics = false))]
    fn metrics_content_type(openmetrics: bool) -> &'static str {
        crate::metrics::content_type(openmetrics)
    }

    /// Calls `callback(point, reason, time_ms)` on every downgrade; returns
    /// it, so it can decorate.
    fn on_downgrade<'py>(&self, callback: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if !callback.is_callable() {
            let message = "on_downgrade needs a callable".to_string();
            return Err(errors::argument(callback.py(), message));
        }
        self.inner.listeners().push(callback.clone().unbind());
        self.inner.has_listeners.store(true, Ordering::Release);
        Ok(callback)
    }

    /// The client owns its listeners: a listener that refers back to the
    /// client forms a cycle the garbage collector must see to free it.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // Never contended while the collector runs (the lock is only held
        // for a push or a copy, with no Python code inside).
        if let Ok(list) = self.inner.listeners.try_lock() {
            for listener in list.iter() {
                visit.call(listener)?;
            }
        }
        Ok(())
    }
}

/// One point of a table, found once: `enter` skips the name lookup.
/// `sds.Point` extends it with `guard`.
#[pyclass(frozen, subclass, module = "sds._native")]
pub struct PointHandle {
    pub inner: Arc<Inner>,
    pub id: PointId,
    pub name: Py<PyString>,
    /// Keeps the client (which owns the listeners) alive while the handle
    /// can notify them, visibly to the garbage collector.
    pub client: Py<Table>,
}

#[pymethods]
impl PointHandle {
    #[new]
    fn new(
        py: Python<'_>,
        table: &Bound<'_, PyAny>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<PointHandle> {
        let table = client(table, "table")?;
        let inner = table.get().inner.clone();
        let name = args::name(name)?;
        let id = inner.id_of(py, name)?;
        Ok(PointHandle {
            inner,
            id,
            name: name.clone().unbind(),
            client: table.clone().unbind(),
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.client)
    }

    /// The point's name.
    #[getter]
    fn name(&self, py: Python<'_>) -> Py<PyString> {
        self.name.clone_ref(py)
    }

    /// The sliding values and the last whole cycle of this point.
    #[pyo3(signature = (now_ms = None))]
    fn stats<'py>(&self, py: Python<'py>, now_ms: Option<Time>) -> PyResult<Bound<'py, PyDict>> {
        let now = args::time_or_now(now_ms);
        let stats = self
            .inner
            .points(py, |t| Ok(t.point(self.id)?.stats(now)))?;
        stats_dict(py, stats)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("Point({:?})", self.name.bind(py).to_string())
    }

    /// The console's return value for this point when an agent manages the
    /// client and has one (what a fallback-less `guard` returns).
    fn _return_value(&self, py: Python<'_>) -> Option<String> {
        self.inner.console_return_value(self.name.bind(py))
    }
}
