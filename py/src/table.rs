//! `Table` (the base of `sds.Client`) and `PointHandle` (the base of
//! `sds.Point`): names to points, enter, strategies, stats, listeners.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3::{PyTraverseError, PyVisit};
use sds_core::{capacity_from_i128, Flags, Outcome, PointId, PointTable, Slot, Stats};
use sds_shm::AnyTable;

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
                let view = shared.view().map_err(|e| $crate::shared::shm($py, &e))?;
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
}

impl Inner {
    fn id_of(&self, py: Python<'_>, name: &Bound<'_, PyString>) -> PyResult<PointId> {
        // Only exact `str` keys: a subclass may redefine `__eq__`/`__hash__`.
        let cacheable = name.is_exact_instance_of::<PyString>();
        let ids = self.ids.bind(py);
        if cacheable {
            if let Some(index) = ids.get_item(name)? {
                return Ok(PointId::from_index(index.extract::<u32>()?));
            }
        }
        let bytes = args::name_bytes(name)?;
        let id = with_table!(&*self.table, py, t => t.insert(&bytes))
            .map_err(|e| errors::core(py, e))?;
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
        let listeners: Vec<Py<PyAny>> = match self.listeners.lock() {
            Ok(list) => list.iter().map(|l| l.clone_ref(py)).collect(),
            Err(_) => return,
        };
        let reason = reason_name(py, entry.reason());
        for listener in listeners {
            let listener = listener.bind(py);
            if let Err(err) = listener.call1((name, &reason, now)) {
                err.write_unraisable(py, Some(listener));
            }
        }
    }

    fn stats_of(&self, py: Python<'_>, id: PointId, now: u64) -> PyResult<Stats> {
        with_table!(&*self.table, py, t => t.point(id).map(|point| point.stats(now)))
            .map_err(|e| errors::core(py, e))
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
fn stats_dict<'py>(py: Python<'py>, s: &Stats) -> PyResult<Bound<'py, PyDict>> {
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

/// A shared table's name or path: a `str` or an `os.PathLike` of one.
fn shared_name(v: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(args::path_text(v, "shared")?.to_str()?.to_string())
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
        let capacity = match capacity {
            Some(c) => capacity_arg(c)?,
            None => 1024,
        };
        let table = match shared.filter(|s| !s.is_none()) {
            Some(name_or_path) => {
                let name_or_path = shared_name(name_or_path)?;
                let mode = match mode.filter(|m| !m.is_none()) {
                    Some(m) => args::int(m, "mode")?.extract::<u32>().unwrap_or(0),
                    None => 0o600,
                };
                AnyTable::Shared(crate::shared::open(py, &name_or_path, capacity, mode)?)
            }
            None => {
                if mode.is_some_and(|m| !m.is_none()) {
                    return Err(errors::argument(
                        py,
                        "mode is only for a shared table (Client.shared)".to_string(),
                    ));
                }
                let slots: Box<[Slot]> = (0..capacity).map(|_| Slot::new()).collect();
                AnyTable::Private(PointTable::new(slots).map_err(|e| errors::core(py, e))?)
            }
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
        with_table!(&*self.inner.table, py, t => t.set_strategy(&name, &strategy.inner))
            .map_err(|e| errors::core(py, e))?;
        Ok(())
    }

    /// Removes the strategy of `point`; its counters stay.
    fn remove_strategy(&self, py: Python<'_>, point: &Bound<'_, PyAny>) -> PyResult<()> {
        let name = args::name_bytes(args::name(point)?)?;
        with_table!(&*self.inner.table, py, t => t.remove_strategy(&name))
            .map_err(|e| errors::core(py, e))
    }

    /// The strategy of `point`, or `None`.
    fn strategy(&self, py: Python<'_>, point: &Bound<'_, PyAny>) -> PyResult<Option<Strategy>> {
        let name = args::name_bytes(args::name(point)?)?;
        let strategy = with_table!(&*self.inner.table, py, t => {
            let id = t.lookup(&name).map_err(|e| errors::core(py, e))?;
            id.and_then(|id| t.point(id).ok()).and_then(|p| p.strategy())
        });
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
        let stats = with_table!(&*self.inner.table, py, t => t.stats(&name, now))
            .map_err(|e| errors::core(py, e))?;
        stats_dict(py, &stats)
    }

    /// Calls `callback(point, reason, time_ms)` on every downgrade; returns
    /// it, so it can decorate.
    fn on_downgrade<'py>(&self, callback: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if !callback.is_callable() {
            return Err(errors::argument(
                callback.py(),
                "on_downgrade needs a callable".to_string(),
            ));
        }
        let mut list =
            self.inner.listeners.lock().map_err(|_| {
                errors::argument(callback.py(), "listener list poisoned".to_string())
            })?;
        list.push(callback.clone().unbind());
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
        let table = table
            .cast::<Table>()
            .map_err(|_| errors::argument(py, "table must be an sds.Client".to_string()))?;
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
        stats_dict(py, &self.inner.stats_of(py, self.id, now)?)
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

/// Called by the fast methods (fast.rs), which parse the arguments.
impl Table {
    /// Counts a request on `point` and decides whether it is downgraded.
    pub(crate) fn enter(
        &self,
        py: Python<'_>,
        point: &Bound<'_, PyAny>,
        now_ms: Option<Time>,
        flags: Flags,
    ) -> PyResult<Entry> {
        let name = args::name(point)?;
        let id = self.inner.id_of(py, name)?;
        self.inner.enter(py, id, name, now_ms, flags)
    }
}

/// Called by the fast methods (fast.rs), which parse the arguments.
impl PointHandle {
    /// Counts a request and decides whether it is downgraded.
    pub(crate) fn enter(
        &self,
        py: Python<'_>,
        now_ms: Option<Time>,
        flags: Flags,
    ) -> PyResult<Entry> {
        self.inner
            .enter(py, self.id, self.name.bind(py), now_ms, flags)
    }
}
