//! The per-request methods (`Client.enter`, `Point.enter`, `Entry.exit`,
//! `Entry.__exit__`, `Keys.decide` and `Keys.peek`) as `METH_FASTCALL | METH_KEYWORDS` functions, installed
//! on the classes when the module loads.
//!
//! Why not pyo3's own methods: they are FASTCALL too under `abi3-py310`, but
//! pyo3 runs its argument extraction on every call, also on the hot calls
//! that pass no arguments at all. Callgrind, instructions per enter + exit
//! pair: point handle 1 971 here against 2 232 with pyo3's methods, by name
//! 2 331 against 2 520, a `with` block 3 084 against 3 220, an injected time
//! 2 525 against 2 818. The methods' behaviour is the Rust code in
//! `table.rs` and `entry.rs`: these functions parse the arguments and call
//! it.

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use pyo3::exceptions::{PySystemError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString, PyTuple, PyType};
use sds_core::Flags;

use crate::args::{self, Time};
use crate::entry::Entry;
use crate::keys::Keys;
use crate::table::{PointHandle, Table};

/// A method's parameters: their names, and how many of the first may come
/// by position (the rest are keyword-only) or must come.
struct Params<const N: usize> {
    method: &'static str,
    names: [&'static str; N],
    positional: usize,
    required: usize,
    /// Words the argument errors as pyo3 does (`Keys.decide() missing 1
    /// required positional argument: 'key'`): the methods that were pyo3's
    /// keep their messages. `method` is then the qualified name.
    pyo3_words: bool,
}

impl<const N: usize> Params<N> {
    /// `method(names...)`: the first `positional` may come by position, the
    /// first `required` must come.
    const fn new(
        method: &'static str,
        names: [&'static str; N],
        positional: usize,
        required: usize,
    ) -> Params<N> {
        Params {
            method,
            names,
            positional,
            required,
            pyo3_words: false,
        }
    }

    /// These parameters with pyo3's wording of the errors; `method` is
    /// then `Class.method`.
    const fn pyo3_words(self) -> Params<N> {
        Params {
            pyo3_words: true,
            ..self
        }
    }

    /// The message of more positional arguments than the method takes.
    fn too_many(&self, nargs: usize) -> String {
        let (n, s) = (self.positional, if self.positional == 1 { "" } else { "s" });
        if !self.pyo3_words {
            return format!("takes {n} positional argument{s} but {nargs} were given");
        }
        let was = if nargs == 1 { "was" } else { "were" };
        match self.required == n {
            true => format!("takes {n} positional argument{s} but {nargs} {was} given"),
            false => format!(
                "takes from {} to {n} positional arguments but {nargs} {was} given",
                self.required
            ),
        }
    }

    /// The message of a required argument not given (pyo3 names only the
    /// positional ones, which are all that the fast methods require).
    fn missing(&self, given: &[Option<Bound<'_, PyAny>>]) -> String {
        let missing: Vec<String> = (0..self.required)
            .filter(|&i| given[i].is_none())
            .map(|i| format!("'{}'", self.names[i]))
            .collect();
        if !self.pyo3_words {
            return format!("missing required argument {}", missing[0]);
        }
        let s = if missing.len() == 1 { "" } else { "s" };
        let listed = match missing.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, [first])) => format!("{first} and {last}"),
            Some((last, rest)) => format!("{}, and {last}", rest.join(", ")),
            None => String::new(),
        };
        format!(
            "missing {} required positional argument{s}: {listed}",
            missing.len()
        )
    }

    /// The arguments of one call, by parameter; `None` where not given.
    ///
    /// # Safety
    /// `args` holds `nargs` positional values followed by one value per
    /// name in `kwnames` (a tuple of `str`, or null), as CPython passes them.
    unsafe fn parse<'py>(
        &self,
        py: Python<'py>,
        args: *const *mut ffi::PyObject,
        nargs: ffi::Py_ssize_t,
        kwnames: *mut ffi::PyObject,
    ) -> PyResult<[Option<Bound<'py, PyAny>>; N]> {
        let mut given: [Option<Bound<'py, PyAny>>; N] = std::array::from_fn(|_| None);
        let fail = |what: String| Err(PyTypeError::new_err(format!("{}() {what}", self.method)));
        let nargs = nargs.max(0) as usize;
        if nargs > self.positional {
            return fail(self.too_many(nargs));
        }
        let value = |i: usize| unsafe { Bound::from_borrowed_ptr(py, *args.add(i)) };
        for (i, slot) in given.iter_mut().enumerate().take(nargs) {
            *slot = Some(value(i));
        }
        if !kwnames.is_null() {
            let names = unsafe { Bound::from_borrowed_ptr(py, kwnames) }.cast_into::<PyTuple>()?;
            for (k, key) in names.iter().enumerate() {
                let key = key.cast_into::<PyString>()?;
                let key = key.to_str()?;
                match self.names.iter().position(|n| *n == key) {
                    None => return fail(format!("got an unexpected keyword argument '{key}'")),
                    Some(at) if given[at].is_some() => {
                        return fail(format!("got multiple values for argument '{key}'"))
                    }
                    Some(at) => given[at] = Some(value(nargs + k)),
                }
            }
        }
        if (0..self.required).any(|i| given[i].is_none()) {
            return fail(self.missing(&given));
        }
        // A `None` is passed on as given: `now_ms=None` means the wall clock
        // (`args::optional_time`), while `pressure_test=None` is no bool.
        Ok(given)
    }
}

/// Runs a method body with CPython's conventions: a new reference, or null
/// with the exception set; a panic becomes `SystemError`, never unwinds into C.
fn call(body: impl FnOnce(Python<'_>) -> PyResult<Py<PyAny>>) -> *mut ffi::PyObject {
    // SAFETY: CPython calls methods with the thread attached to the
    // interpreter (the GIL held, on GIL builds).
    let py = unsafe { Python::assume_attached() };
    let result = catch_unwind(AssertUnwindSafe(|| body(py))).unwrap_or_else(|_| {
        Err(PySystemError::new_err(
            "sds: a native method panicked (a bug: please report it)",
        ))
    });
    match result {
        Ok(object) => object.into_ptr(),
        Err(error) => {
            error.restore(py);
            ptr::null_mut()
        }
    }
}

/// Defines a `METH_FASTCALL | METH_KEYWORDS` function: `$params` parses
/// the call into the bound names (`None` where not given), and `$body`
/// gets them with `$py` and `$slf`. A call with no arguments skips parsing
/// when nothing is required: the hot path of `Point.enter` and `Entry.exit`.
macro_rules! fast_method {
    ($name:ident, $params:expr, |$py:ident, $slf:ident, [$($arg:pat),*]| $body:expr) => {
        unsafe extern "C" fn $name(
            slf: *mut ffi::PyObject,
            args: *const *mut ffi::PyObject,
            nargs: ffi::Py_ssize_t,
            kwnames: *mut ffi::PyObject,
        ) -> *mut ffi::PyObject {
            call(|$py| {
                // SAFETY: CPython passes a live `self` and the arguments as
                // `Params::parse` expects them.
                let $slf = unsafe { Bound::<PyAny>::from_borrowed_ptr($py, slf) };
                let params = &$params;
                let [$($arg),*] = if nargs == 0 && kwnames.is_null() && params.required == 0 {
                    Default::default()
                } else {
                    unsafe { params.parse($py, args, nargs, kwnames) }?
                };
                $body
            })
        }
    };
}

/// `enter`'s keyword arguments, checked.
fn enter_args(
    now_ms: Option<Bound<'_, PyAny>>,
    pressure_test: Option<Bound<'_, PyAny>>,
) -> PyResult<(Option<Time>, Flags)> {
    Ok((
        args::optional_time(now_ms.as_ref())?,
        args::flags(pressure_test.as_ref())?,
    ))
}

fast_method!(
    client_enter,
    Params::new("enter", ["point", "now_ms", "pressure_test"], 1, 1),
    |py, slf, [point, now_ms, pressure_test]| {
        let point = point
            .ok_or_else(|| PyTypeError::new_err("enter() missing required argument 'point'"))?;
        let inner = &slf.cast::<Table>()?.get().inner;
        let (now_ms, flags) = enter_args(now_ms, pressure_test)?;
        let name = args::name(&point)?;
        let entry = inner.enter(py, inner.id_of(py, name)?, name, now_ms, flags)?;
        Ok(Py::new(py, entry)?.into_any())
    }
);

fast_method!(
    point_enter,
    Params::new("enter", ["now_ms", "pressure_test"], 0, 0),
    |py, slf, [now_ms, pressure_test]| {
        let handle = slf.cast::<PointHandle>()?.get();
        let (now_ms, flags) = enter_args(now_ms, pressure_test)?;
        let name = handle.name.bind(py);
        let entry = handle.inner.enter(py, handle.id, name, now_ms, flags)?;
        Ok(Py::new(py, entry)?.into_any())
    }
);

fast_method!(
    entry_exit,
    Params::new("exit", ["now_ms"], 1, 0),
    |py, slf, [now_ms]| {
        let now_ms = args::optional_time(now_ms.as_ref())?;
        slf.cast::<Entry>()?.get().exit(py, now_ms)?;
        Ok(py.None())
    }
);

fast_method!(
    entry_context_exit,
    Params::new("__exit__", ["_exc_type", "exc", "_traceback"], 3, 0),
    |py, slf, [_, exc, _]| {
        let suppress = slf.cast::<Entry>()?.get().context_exit(py, exc.as_ref())?;
        Ok(PyBool::new(py, suppress).to_owned().into_any().unbind())
    }
);

/// `Keys.decide`: the usual call, a key alone, goes to the table with
/// nothing parsed and no reference taken (`self` and the key are borrowed
/// for the call); any other is parsed by `keys_decide_parsed`.
unsafe extern "C" fn keys_decide(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    if nargs != 1 || !kwnames.is_null() {
        // SAFETY: as CPython passed them.
        return unsafe { keys_decide_parsed(slf, args, nargs, kwnames) };
    }
    call(|py| {
        // SAFETY: CPython passes a live `self` and one live argument, both
        // held for the call; `self` is a `Keys`, as in `keys_decide_parsed`.
        let (slf, key) = unsafe { (Borrowed::from_ptr(py, slf), Borrowed::from_ptr(py, *args)) };
        let keys = unsafe { slf.cast_unchecked::<Keys>() }.get();
        Ok(keys.decide(py, &key, None, None)?.unbind())
    })
}

fast_method!(
    keys_decide_parsed,
    Params::new("Keys.decide", ["key", "cost", "now_ms"], 3, 1).pyo3_words(),
    |py, slf, [key, cost, now_ms]| {
        let key = key.ok_or_else(|| PyTypeError::new_err("Keys.decide() missing 'key'"))?;
        let now_ms = args::optional_time(now_ms.as_ref())?;
        // SAFETY: CPython's method descriptor checks that `self` is a
        // `Keys` before it calls (`descr_check`), which spares a subclass
        // check (a `KeyedLimit` is one) here.
        let keys = unsafe { slf.cast_unchecked::<Keys>() }.get();
        Ok(keys.decide(py, &key, cost.as_ref(), now_ms)?.unbind())
    }
);

fast_method!(
    keys_peek,
    Params::new("Keys.peek", ["key", "now_ms"], 2, 1).pyo3_words(),
    |py, slf, [key, now_ms]| {
        let key = key.ok_or_else(|| PyTypeError::new_err("Keys.peek() missing 'key'"))?;
        let now_ms = args::optional_time(now_ms.as_ref())?;
        // SAFETY: as in `keys_decide`.
        let keys = unsafe { slf.cast_unchecked::<Keys>() }.get();
        Ok(keys.peek(py, &key, now_ms)?.unbind())
    }
);

/// Sets `name` on `class` to a method calling `function`. `doc` starts
/// with the text signature (`name($self, ...)\n--\n\n`), which
/// `inspect.signature` reads.
fn install(
    class: &Bound<'_, PyType>,
    name: &'static CStr,
    doc: &'static CStr,
    function: ffi::PyCFunctionFastWithKeywords,
) -> PyResult<()> {
    // The method table must outlive the class: it is leaked, once per module load.
    let def = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: function,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: doc.as_ptr() as *const c_char,
    }));
    let py = class.py();
    // SAFETY: a valid type and method table; the result is a new reference.
    let descr = unsafe { ffi::PyDescr_NewMethod(class.as_ptr().cast(), def) };
    let descr = unsafe { Bound::from_owned_ptr_or_err(py, descr) }?;
    class.setattr(PyString::new(py, name.to_str().unwrap_or_default()), descr)
}

/// Installs the fast methods on the module's classes.
pub fn install_all(py: Python<'_>) -> PyResult<()> {
    install(
        &py.get_type::<Table>(),
        c"enter",
        c"enter($self, point, *, now_ms=None, pressure_test=False)\n--\n\nCounts a request on `point` and decides whether it is downgraded.",
        client_enter,
    )?;
    install(
        &py.get_type::<PointHandle>(),
        c"enter",
        c"enter($self, *, now_ms=None, pressure_test=False)\n--\n\nCounts a request and decides whether it is downgraded.",
        point_enter,
    )?;
    install(
        &py.get_type::<Entry>(),
        c"exit",
        c"exit($self, now_ms=None)\n--\n\nSettles the request: returns its permit, counts its exception and its timeout. Only the first call counts. Without now_ms, at the wall clock, or at the start when enter was given now_ms.",
        entry_exit,
    )?;
    install(
        &py.get_type::<Entry>(),
        c"__exit__",
        c"__exit__($self, _exc_type=None, exc=None, _traceback=None)\n--\n\nMarks an exception raised in the body and exits.",
        entry_context_exit,
    )?;
    install(
        &py.get_type::<Keys>(),
        c"decide",
        c"decide($self, key, cost=1, now_ms=None)\n--\n\nDecides a call of `cost` units for `key` at `now_ms` (the wall\nclock if `None`), taking them if admitted.",
        keys_decide,
    )?;
    install(
        &py.get_type::<Keys>(),
        c"peek",
        c"peek($self, key, now_ms=None)\n--\n\nThe decision a cost of 0 would get: nothing taken.",
        keys_peek,
    )
}
