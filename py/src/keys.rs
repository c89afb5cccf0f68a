//! `Keys` (the base of `sds.KeyedLimit`): per-key limits, the core's key
//! table private to the process or in a file shared by the host
//! (`sds_shm::AnyKeys`), its rule read by `sds_settings::key_rule`.
//!
//! The answers are the `sds` package's named tuples (`KeyDecision`,
//! `KeyCount`, `KeyStats`, registered at import), built here directly so a
//! decision runs no Python code of ours.

use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyInt, PyMapping, PyString, PyTuple, PyType};
use sds_core::keyed::{
    units_from_i128, units_from_value, KeyCount, KeyDecision, KeyError, KeyRule, KeyRuleError,
    KeyTableStats, UnitsError, NEVER,
};
use sds_core::ErrorCode;
use sds_settings::KeyRuleTextError;
use sds_shm::AnyKeys;

use crate::args::{self, Time};
use crate::errors;
use crate::settings;

/// The answers' classes, registered by `sds.keyed` at import.
struct Results {
    decision: Py<PyType>,
    count: Py<PyType>,
    stats: Py<PyType>,
}

static RESULTS: PyOnceLock<Results> = PyOnceLock::new();

/// Registers the classes of the answers: named tuples of the fields in
/// the core's order (checked here: the answers are built in place;
/// `KeyStats`' fields by name too, the core's `KeyTableStats::NAMES` in
/// snake_case).
#[pyfunction]
pub fn _register_key_results(
    py: Python<'_>,
    decision: Bound<'_, PyType>,
    count: Bound<'_, PyType>,
    stats: Bound<'_, PyType>,
) -> PyResult<()> {
    for (class, fields) in [
        (&decision, 6),
        (&count, 3),
        (&stats, KeyTableStats::NAMES.len()),
    ] {
        plain_tuple_of(class, fields)?;
    }
    let names: Vec<String> = KeyTableStats::NAMES.iter().map(|n| snake_case(n)).collect();
    if stats.getattr("_fields")?.extract::<Vec<String>>()? != names {
        return Err(PyTypeError::new_err(format!(
            "{stats} must name its fields {names:?}"
        )));
    }
    // A second import (a reload) keeps the first registration.
    let _ = RESULTS.set(
        py,
        Results {
            decision: decision.unbind(),
            count: count.unbind(),
            stats: stats.unbind(),
        },
    );
    Ok(())
}

/// A core name (camelCase) as this binding spells attributes:
/// `lossyEvictions` is `lossy_evictions`.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Checks that `class` is a tuple subclass of `fields` fields whose
/// instances are a tuple's memory and nothing more (a named tuple's
/// `__slots__ = ()`): [`build`] fills one as `tuple.__new__` would.
fn plain_tuple_of(class: &Bound<'_, PyType>, fields: usize) -> PyResult<()> {
    let py = class.py();
    let tuple = py.get_type::<PyTuple>();
    let size =
        |t: &Bound<'_, PyType>, name: &str| -> PyResult<isize> { t.getattr(name)?.extract() };
    let plain = class.is_subclass(&tuple)?
        && size(class, "__basicsize__")? == size(&tuple, "__basicsize__")?
        && size(class, "__itemsize__")? == size(&tuple, "__itemsize__")?
        && size(class, "__dictoffset__")? == 0
        && size(class, "__weakrefoffset__")? == 0
        && class.getattr("_fields")?.len()? == fields;
    match plain {
        true => Ok(()),
        false => Err(PyTypeError::new_err(format!(
            "{class} must be a named tuple of {fields} fields"
        ))),
    }
}

/// An instance of `class` (checked by [`plain_tuple_of`]) holding `items`:
/// what `tuple.__new__(class, items)` makes, without the intermediate
/// tuple and the call (about 100 ns of a decision's 250).
fn build<'py, const N: usize>(
    class: &Bound<'py, PyType>,
    items: [Bound<'py, PyAny>; N],
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    // SAFETY: `class` is a tuple subclass laid out as a tuple (checked at
    // registration), so its `tp_alloc` gives a tuple of N empty items, as
    // `tuple.__new__` allocates it; each `PyTuple_SetItem` on the new
    // object (one reference, ours) steals its item's reference.
    unsafe {
        let alloc = ffi::PyType_GenericAlloc(class.as_type_ptr(), N as ffi::Py_ssize_t);
        let obj = Bound::from_owned_ptr_or_err(py, alloc)?;
        for (i, item) in items.into_iter().enumerate() {
            if ffi::PyTuple_SetItem(obj.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(obj)
    }
}

/// An instance of the registered class `pick` chooses, holding `items`;
/// a plain tuple before registration (only `_native` used alone).
#[inline]
fn result<'py, const N: usize>(
    py: Python<'py>,
    pick: impl FnOnce(&Results) -> &Py<PyType>,
    items: [Bound<'py, PyAny>; N],
) -> PyResult<Bound<'py, PyAny>> {
    match RESULTS.get(py) {
        Some(r) => build(pick(r).bind(py), items),
        None => Ok(PyTuple::new(py, items)?.into_any()),
    }
}

/// A number's `int`, made once: a rule's `limit` and `window_ms` are
/// the same in most answers, and an `int` above 256 is an allocation.
struct CachedInt {
    value: u64,
    int: Py<PyAny>,
}

impl CachedInt {
    fn new(py: Python<'_>, value: u64) -> PyResult<CachedInt> {
        let int = value.into_pyobject(py)?.into_any().unbind();
        Ok(CachedInt { value, int })
    }

    /// `value` as an `int`: the cached one when it is the same number.
    #[inline]
    fn get<'py>(&self, py: Python<'py>, value: u64) -> PyResult<Bound<'py, PyAny>> {
        match value == self.value {
            true => Ok(self.int.bind(py).clone()),
            false => Ok(value.into_pyobject(py)?.into_any()),
        }
    }

    /// Puts `value` as an `int` in the item at `slot` (see [`put_owned`]).
    ///
    /// # Safety
    /// As [`put_owned`].
    #[inline]
    unsafe fn put(
        &self,
        py: Python<'_>,
        slot: *mut *mut ffi::PyObject,
        value: u64,
    ) -> PyResult<()> {
        match value == self.value {
            true => put_borrowed(slot, self.int.as_ptr()),
            false => put_owned(slot, new_int(py, value)?),
        }
        Ok(())
    }
}

/// The `int`s of the answers of a key with no exception: what a fresh
/// key's `peek` says (any key would do: the cache is checked by value).
struct UsualInts {
    limit: CachedInt,
    window_ms: CachedInt,
}

impl UsualInts {
    fn of(py: Python<'_>, keys: &AnyKeys) -> PyResult<UsualInts> {
        let fresh = keys.peek(b"", 0);
        Ok(UsualInts {
            limit: CachedInt::new(py, fresh.limit.into())?,
            window_ms: CachedInt::new(py, fresh.window_ms)?,
        })
    }
}

/// The last decision this table answered, kept to be answered again: when
/// the caller has dropped it (the usual `if keys.decide(k).admitted:`),
/// its tuple is refilled in place instead of a new one allocated and the
/// old one freed (about 350 of a decision's 2 200 instructions), as
/// CPython's own `zip` and `enumerate` reuse their result tuple.
///
/// Only before Python 3.14: from 3.14 a tuple caches its hash, which a
/// refill through the stable ABI cannot clear.
struct Spare {
    mode: SpareMode,
    /// Where a tuple's items start: its type's `__basicsize__` (CPython
    /// lays a tuple's items out right after it).
    items_at: usize,
    /// A strong reference, or null.
    tuple: AtomicPtr<ffi::PyObject>,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum SpareMode {
    /// Python 3.14 and later: every decision is a new tuple.
    Off,
    /// Under the GIL (every build but a free-threaded one): only the thread
    /// holding it runs a decision, and nothing between reading the slot and
    /// refilling its tuple can let another thread in (ints and the decision
    /// tuple's own items run no Python code when freed), so the slot is read
    /// and left as it is: no atomic swap (two locked instructions a call).
    Gil,
    /// Free-threaded: the slot is taken by a swap, so no two calls ever
    /// fill the same tuple.
    Swap,
}

impl Spare {
    fn new(py: Python<'_>) -> PyResult<Spare> {
        let mode = if py.version_info() >= (3, 14) {
            SpareMode::Off
        } else if free_threaded(py)? {
            SpareMode::Swap
        } else {
            SpareMode::Gil
        };
        let items_at = py
            .get_type::<PyTuple>()
            .getattr("__basicsize__")?
            .extract::<usize>()?;
        Ok(Spare {
            mode,
            items_at,
            tuple: AtomicPtr::new(ptr::null_mut()),
        })
    }

    /// The kept decision, borrowed, if no one else holds it (only then may
    /// it change): under the GIL it stays kept (the caller returns a new
    /// reference to it).
    #[inline]
    fn unshared_gil(&self) -> Option<*mut ffi::PyObject> {
        let kept = self.tuple.load(Ordering::Relaxed);
        // SAFETY: a live object, which the slot holds a reference to.
        (!kept.is_null() && unsafe { ffi::Py_REFCNT(kept) } == 1).then_some(kept)
    }

    /// Swap mode: the kept decision, taken out of the slot, if no one else
    /// holds it.
    #[inline]
    fn take_unshared<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        let kept = self.tuple.swap(ptr::null_mut(), Ordering::Acquire);
        if kept.is_null() {
            return None;
        }
        // SAFETY: the slot held a strong reference, now ours.
        let kept = unsafe { Bound::from_owned_ptr(py, kept) };
        // SAFETY: a live object.
        (unsafe { ffi::Py_REFCNT(kept.as_ptr()) } == 1).then_some(kept)
    }

    /// Keeps `decision` for a later call (a reference of its own).
    #[inline]
    fn keep(&self, decision: &Bound<'_, PyAny>) {
        let old = match self.mode {
            SpareMode::Off => return,
            SpareMode::Gil => {
                let old = self.tuple.load(Ordering::Relaxed);
                self.tuple
                    .store(decision.clone().into_ptr(), Ordering::Relaxed);
                old
            }
            SpareMode::Swap => self
                .tuple
                .swap(decision.clone().into_ptr(), Ordering::Release),
        };
        if !old.is_null() {
            // SAFETY: the slot's strong reference, now ours to drop.
            drop(unsafe { Bound::from_owned_ptr(decision.py(), old) });
        }
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        let kept = *self.tuple.get_mut();
        if !kept.is_null() {
            // SAFETY: the slot's strong reference, released attached (a
            // table is dropped by its Python object's deallocation).
            Python::attach(|py| drop(unsafe { Bound::from_owned_ptr(py, kept) }));
        }
    }
}

/// Whether this interpreter is a free-threaded build (the GIL may be off).
fn free_threaded(py: Python<'_>) -> PyResult<bool> {
    if py.version_info() < (3, 13) {
        return Ok(false);
    }
    let var = py
        .import("sysconfig")?
        .call_method1("get_config_var", ("Py_GIL_DISABLED",))?;
    Ok(!var.is_none() && var.is_truthy()?)
}

fn decision<'py>(
    py: Python<'py>,
    usual: &UsualInts,
    spare: &Spare,
    d: KeyDecision,
) -> PyResult<Bound<'py, PyAny>> {
    if spare.mode == SpareMode::Gil {
        if let Some(kept) = spare.unshared_gil() {
            // SAFETY: a decision tuple of 6 items that only the slot holds,
            // its items at `items_at`; under the GIL, which nothing here
            // releases.
            return unsafe { refill_gil(py, usual, spare.items_at, kept, &d) };
        }
    }
    // A cost that no wait admits is `None`: there is no time to retry at.
    let retry = (d.retry_after_ms != NEVER).then_some(d.retry_after_ms);
    let items = [
        PyBool::new(py, d.admitted).to_owned().into_any(),
        usual.limit.get(py, d.limit.into())?,
        d.remaining.into_pyobject(py)?.into_any(),
        d.reset_ms.into_pyobject(py)?.into_any(),
        retry.into_pyobject(py)?.into_any(),
        usual.window_ms.get(py, d.window_ms)?,
    ];
    if spare.mode == SpareMode::Swap {
        if let Some(kept) = spare.take_unshared(py) {
            refill(&kept, items)?;
            spare.keep(&kept);
            return Ok(kept);
        }
    }
    let fresh = result(py, |r| &r.decision, items)?;
    spare.keep(&fresh);
    Ok(fresh)
}

/// Refills the kept decision `tuple` with `d` and returns a new reference
/// to it. An item already holding the right object (the same bool, the
/// rule's cached `limit` and `window_ms`, `None`) is left as it is; a new
/// `int` goes in place of the old one, which is then released. When the
/// retry is the reset (a refused window), the one `int` serves both.
///
/// # Safety
/// Attached under the GIL; `tuple` is a live tuple of 6 items whose only
/// reference is the spare slot's, its items starting `items_at` bytes in.
#[inline]
unsafe fn refill_gil<'py>(
    py: Python<'py>,
    usual: &UsualInts,
    items_at: usize,
    tuple: *mut ffi::PyObject,
    d: &KeyDecision,
) -> PyResult<Bound<'py, PyAny>> {
    let items = tuple
        .cast::<u8>()
        .add(items_at)
        .cast::<*mut ffi::PyObject>();
    let admitted = match d.admitted {
        true => ffi::Py_True(),
        false => ffi::Py_False(),
    };
    put_borrowed(items, admitted);
    usual.limit.put(py, items.add(1), d.limit.into())?;
    put_owned(items.add(2), new_int(py, d.remaining.into())?);
    let reset = new_int(py, d.reset_ms)?;
    match d.retry_after_ms {
        NEVER => put_borrowed(items.add(4), ffi::Py_None()),
        ms if ms == d.reset_ms => put_borrowed(items.add(4), reset),
        ms => match new_int(py, ms) {
            Ok(retry) => put_owned(items.add(4), retry),
            Err(e) => {
                ffi::Py_DECREF(reset);
                return Err(e);
            }
        },
    }
    put_owned(items.add(3), reset);
    usual.window_ms.put(py, items.add(5), d.window_ms)?;
    Ok(Bound::from_borrowed_ptr(py, tuple))
}

/// A new `int` of `n` (a new reference).
#[inline]
fn new_int(py: Python<'_>, n: u64) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: attached; the result is a new reference or null with the
    // exception set.
    let int = unsafe { ffi::PyLong_FromUnsignedLongLong(n) };
    match int.is_null() {
        true => Err(PyErr::fetch(py)),
        false => Ok(int),
    }
}

/// Puts `new` (a reference the caller owns, now the tuple's) in the item
/// at `slot` in place of the one there, released after.
///
/// # Safety
/// `slot` is an item of a tuple no one else holds, holding a live object.
#[inline]
unsafe fn put_owned(slot: *mut *mut ffi::PyObject, new: *mut ffi::PyObject) {
    let old = *slot;
    if old == new {
        ffi::Py_DECREF(new);
    } else {
        *slot = new;
        ffi::Py_DECREF(old);
    }
}

/// Puts `new` (borrowed) in the item at `slot`, unless it is there already.
///
/// # Safety
/// As [`put_owned`]; `new` is live.
#[inline]
unsafe fn put_borrowed(slot: *mut *mut ffi::PyObject, new: *mut ffi::PyObject) {
    let old = *slot;
    if old != new {
        ffi::Py_INCREF(new);
        *slot = new;
        ffi::Py_DECREF(old);
    }
}

/// Puts `items` in place of the items of `tuple`, which no one else holds.
fn refill<const N: usize>(tuple: &Bound<'_, PyAny>, items: [Bound<'_, PyAny>; N]) -> PyResult<()> {
    for (i, item) in items.into_iter().enumerate() {
        // SAFETY: a tuple of N items with one reference (checked by
        // `Spare::take_unshared`): `PyTuple_SetItem` steals `item` and
        // releases the item it replaces.
        if unsafe { ffi::PyTuple_SetItem(tuple.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) }
            != 0
        {
            return Err(PyErr::fetch(tuple.py()));
        }
    }
    Ok(())
}

fn count<'py>(py: Python<'py>, c: KeyCount) -> PyResult<Bound<'py, PyAny>> {
    let items = [c.count, c.previous, c.reset_ms].map(|n| n.into_pyobject(py).map(Bound::into_any));
    let [a, b, c] = items;
    result(py, |r| &r.count, [a?, b?, c?])
}

pub(crate) fn key_error(py: Python<'_>, e: KeyError) -> PyErr {
    errors::raise(py, e.code(), e.to_string(), None)
}

fn rule_error(py: Python<'_>, e: KeyRuleError) -> PyErr {
    errors::raise(py, e.code(), e.to_string(), Some(e.key()))
}

/// A key's bytes: a `str`'s UTF-8 (CPython keeps it with the string, so
/// reading it again allocates nothing) or a `bytes` object's own.
#[inline]
pub(crate) fn key_bytes<'a>(key: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    // A `str` itself first: its type compared, where `cast` asks CPython
    // for the type's flags (a call through the stable ABI).
    if key.is_exact_instance_of::<PyString>() {
        // SAFETY: just checked.
        let s = unsafe { key.cast_unchecked::<PyString>() };
        return match s.to_str() {
            Ok(text) => Ok(text.as_bytes()),
            Err(_) => Err(lone_surrogate(s)),
        };
    }
    if let Ok(s) = key.cast::<PyString>() {
        return match s.to_str() {
            Ok(text) => Ok(text.as_bytes()),
            Err(_) => Err(lone_surrogate(s)),
        };
    }
    match key.cast::<PyBytes>() {
        Ok(b) => Ok(b.as_bytes()),
        Err(_) => Err(args::wrong(key, "key must be a str or bytes")),
    }
}

/// The error of a `str` key that has no UTF-8 (a lone surrogate).
#[cold]
#[inline(never)]
fn lone_surrogate(s: &Bound<'_, PyString>) -> PyErr {
    match args::utf8(s, "key", ErrorCode::InvalidArgument) {
        Err(e) => e,
        Ok(_) => errors::argument(s.py(), "key must be valid Unicode text".to_string()),
    }
}

/// A cost or a number of units, judged by the core as every binding's is
/// (`keyed::units_from_i128`: 0 is `cost must be >= 1`, the rest outside
/// `1..2**32` one message in every binding): any value sorted as a
/// strategy's ([`args::value`]), so a whole `float` is its integer and a
/// fraction, a `bool` or a `str` gets the core's message, as in Node.
#[inline]
pub(crate) fn units(v: Option<&Bound<'_, PyAny>>, what: &'static str) -> PyResult<u32> {
    let Some(v) = v else { return Ok(1) };
    if v.is_exact_instance_of::<PyInt>() {
        if let Ok(n) = v.extract::<u32>() {
            return units_from_i128(n.into(), what).map_err(|e| units_error(v.py(), e));
        }
    }
    units_slow(v, what)
}

#[cold]
#[inline(never)]
fn units_slow(v: &Bound<'_, PyAny>, what: &'static str) -> PyResult<u32> {
    units_from_value(args::value(v), what).map_err(|e| units_error(v.py(), e))
}

#[cold]
fn units_error(py: Python<'_>, e: UnitsError) -> PyErr {
    errors::raise(py, e.code(), e.to_string(), None)
}

/// The rule of `rule`: a mapping of field names (camelCase or snake_case)
/// to values, or a JSON object's text.
fn rule_of(rule: &Bound<'_, PyAny>) -> PyResult<KeyRule> {
    let py = rule.py();
    if let Ok(text) = rule.cast::<PyString>() {
        let text = args::utf8(text, "rule", ErrorCode::InvalidJson)?;
        return sds_settings::key_rule_json(text.as_bytes()).map_err(|e| match e {
            KeyRuleTextError::Rule(e) => rule_error(py, e),
            KeyRuleTextError::Json(_) => errors::raise(py, e.code(), e.to_string(), None),
        });
    }
    let Ok(mapping) = rule.cast::<PyMapping>() else {
        return Err(args::wrong(rule, "rule must be a mapping or JSON text"));
    };
    let mut pairs = Vec::new();
    for item in mapping.items()?.try_iter()? {
        let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let name = name
            .cast::<PyString>()
            .map_err(|_| args::wrong(&name, "a rule's field names must be str"))?;
        let name = args::utf8(name, "a rule's field name", ErrorCode::InvalidArgument)?;
        let value = settings::value(&value, &name)?;
        pairs.push((name.into_owned(), value));
    }
    sds_settings::key_rule(&pairs).map_err(|e| rule_error(py, e))
}

/// `capacity`: an `int` within what a key table takes.
fn capacity_arg(v: &Bound<'_, PyAny>) -> PyResult<usize> {
    let n = args::int(v, "capacity")?;
    // Out of usize's range is as invalid as beyond the core's maximum.
    Ok(n.extract::<usize>().unwrap_or(usize::MAX))
}

/// Opens (creating if needed) the key table file of `path` (a bare name is
/// a file under /dev/shm), as `Client.shared` opens point tables.
fn open_shared(
    path: &Bound<'_, PyString>,
    rule: KeyRule,
    capacity: usize,
    mode: u32,
) -> PyResult<AnyKeys> {
    let py = path.py();
    let name = path.to_str()?;
    // Opening may wait for another process initialising the file.
    py.detach(|| AnyKeys::open_named(name, capacity, rule, mode))
        .map_err(|e| errors::shm(py, &e))
}

/// The file a shared table of `name_or_path` lives in: a bare name is a
/// file under /dev/shm, a path is itself (`sds_shm::table_path`, the rule
/// of shared point and key tables).
#[pyfunction]
pub fn table_path(name_or_path: &Bound<'_, PyAny>) -> PyResult<String> {
    let given = args::path_text(name_or_path, "name_or_path")?;
    let path = sds_shm::table_path(given.to_str()?);
    // From UTF-8 text, a UTF-8 path.
    Ok(path
        .map_err(|e| errors::shm(name_or_path.py(), &e))?
        .to_string_lossy()
        .into_owned())
}

/// Per-key limits under one rule in a fixed number of cells.
/// `sds.KeyedLimit` extends it.
#[pyclass(frozen, subclass, module = "sds._native")]
pub struct Keys {
    /// Shared with the metrics' registry of keyed limits, which holds it
    /// weakly: a collected limit leaves the metrics.
    keys: Arc<AnyKeys>,
    /// Its `limit` label in the metrics.
    label: String,
    usual: UsualInts,
    spare: Spare,
}

impl Keys {
    /// The table, for a route's policies (`http::RoutePolicies`).
    pub(crate) fn table(&self) -> &Arc<AnyKeys> {
        &self.keys
    }
}

#[pymethods]
impl Keys {
    #[new]
    #[pyo3(
        signature = (rule, capacity = None, *, shared = None, mode = None, name = None),
        text_signature = "(rule, capacity=65536, *, shared=None, mode=0o600, name=None)"
    )]
    fn new(
        py: Python<'_>,
        rule: &Bound<'_, PyAny>,
        capacity: Option<&Bound<'_, PyAny>>,
        shared: Option<&Bound<'_, PyAny>>,
        mode: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Keys> {
        let name = match name.filter(|n| !n.is_none()) {
            None => None,
            Some(n) => {
                let text = n
                    .cast::<PyString>()
                    .map_err(|_| args::wrong(n, "name must be a str"))?;
                Some(args::utf8(text, "name", ErrorCode::InvalidArgument)?.into_owned())
            }
        };
        let rule = rule_of(rule)?;
        let capacity = capacity.map_or(Ok(65536), capacity_arg)?;
        let keys = match args::shared_file(shared, mode, "KeyedLimit.shared")? {
            Some((path, mode)) => open_shared(&path, rule, capacity, mode)?,
            None => AnyKeys::private(rule, capacity).map_err(|e| key_error(py, e))?,
        };
        let usual = UsualInts::of(py, &keys)?;
        let keys = Arc::new(keys);
        let label = sds_metrics::keyed_label(&keys, name.as_deref());
        sds_metrics::register_keyed(&keys, label.clone());
        Ok(Keys {
            keys,
            label,
            usual,
            spare: Spare::new(py)?,
        })
    }

    /// In flight: gives back `units` a call took; whether the key held any.
    #[pyo3(
        signature = (key, units = None),
        text_signature = "($self, key, units=1)"
    )]
    fn release(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        units: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        // The units before the key, as every binding checks them.
        let units = self::units(units, "units")?;
        let key = key_bytes(key)?;
        self.keys.release(key, units).map_err(|e| key_error(py, e))
    }

    /// Forgets `key`; whether it was held.
    fn reset(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.keys.reset(key_bytes(key)?))
    }

    /// Forgets every key; how many were held.
    fn reset_all(&self) -> u64 {
        self.keys.reset_all()
    }

    /// Window rules: counts `units` whatever the limit.
    #[pyo3(
        signature = (key, units = None, now_ms = None),
        text_signature = "($self, key, units=1, now_ms=None)"
    )]
    fn increment<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        units: Option<&Bound<'py, PyAny>>,
        now_ms: Option<Time>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let units = i64::from(self::units(units, "units")?);
        self.count_add(py, key, units, now_ms)
    }

    /// Window rules: takes up to `units` off a live window's count.
    #[pyo3(
        signature = (key, units = None, now_ms = None),
        text_signature = "($self, key, units=1, now_ms=None)"
    )]
    fn decrement<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        units: Option<&Bound<'py, PyAny>>,
        now_ms: Option<Time>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let units = i64::from(self::units(units, "units")?);
        self.count_add(py, key, -units, now_ms)
    }

    /// Window rules: the key's counts, nothing taken.
    #[pyo3(signature = (key, now_ms = None))]
    fn count<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        now_ms: Option<Time>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.count_add(py, key, 0, now_ms)
    }

    /// The table's counters (a shared table's: every process's keys), in
    /// the order of the core's table (`KeyTableStats::fields`).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let values = self
            .keys
            .stats()
            .fields()
            .map(|(_, n)| PyInt::new(py, n).into_any());
        result(py, |r| &r.stats, values)
    }

    /// How many keys fit (the capacity asked for, rounded up to buckets
    /// of 4).
    #[getter]
    fn capacity(&self) -> usize {
        self.keys.capacity()
    }

    /// The file of a shared table, `None` for a private one.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.keys.path().map(|p| p.to_path_buf())
    }

    /// Its `limit` label in the metrics: the `name` given, else a shared
    /// table's file name, else `private-N`.
    #[getter]
    fn name(&self) -> &str {
        &self.label
    }

    /// The rule's kind: `"rate"`, `"fixedWindow"`, `"slidingWindow"` or
    /// `"inFlight"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.keys.rule().kind().as_str()
    }

    /// Where `increment` stops a key's count (until its window ends);
    /// `None` for a rate or in flight.
    #[getter]
    fn count_cap(&self) -> Option<u64> {
        self.keys.rule().count_cap()
    }

    /// The `limit` of a `fixedWindow` with `windowFromFirstHit` of
    /// `period_ms` that only counts for a store (`sds.limits`): as wide as
    /// the window allows (counts then stop at `2 * limit + 1`); `None` for
    /// a window too long to count in.
    #[staticmethod]
    fn counting_limit(period_ms: u64) -> Option<u32> {
        sds_core::keyed::KeyRule::counting_limit(period_ms)
    }
}

impl Keys {
    /// `decide(key, cost=1, now_ms=None)` (the method is `fast::keys_decide`,
    /// which parses the call): decides a call of `cost` units for `key` at
    /// `now_ms` (the wall clock if `None`), taking them if admitted. The
    /// checks in every binding's order: `now_ms` (as pyo3 reads the
    /// arguments), then the cost, then the key.
    #[inline]
    pub(crate) fn decide<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        cost: Option<&Bound<'py, PyAny>>,
        now_ms: Option<Time>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // `cost=None` is the default, as pyo3's optional argument took it.
        let cost = units(cost.filter(|c| !c.is_none()), "cost")?;
        let key = key_bytes(key)?;
        let d = self.keys.decide(key, args::time_or_now(now_ms), cost);
        decision(
            py,
            &self.usual,
            &self.spare,
            d.map_err(|e| key_error(py, e))?,
        )
    }

    /// `peek(key, now_ms=None)` (the method is `fast::keys_peek`): the
    /// decision a cost of 0 would get, nothing taken.
    #[inline]
    pub(crate) fn peek<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        now_ms: Option<Time>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = key_bytes(key)?;
        let d = self.keys.peek(key, args::time_or_now(now_ms));
        decision(py, &self.usual, &self.spare, d)
    }

    fn count_add<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        delta: i64,
        now_ms: Option<Time>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = key_bytes(key)?;
        let c = self.keys.count_add(key, args::time_or_now(now_ms), delta);
        count(py, c.map_err(|e| key_error(py, e))?)
    }
}
