//! `WsgiResponse`: what `sds.wsgi` hands a WSGI server for an admitted
//! request: the `start_response` the app calls (adding the rate-limit
//! fields) and the iterable the server reads and closes (finishing the
//! request). Native, so that a server's iteration and the app's
//! `start_response` cost no Python frame of ours (a Python wrapper added a
//! generator and a closure to every request).

use pyo3::exceptions::{PyAttributeError, PyException, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use crate::route::{Admission, RoutePlan, ADMITTED};

/// The request path of `sds.wsgi.SdsMiddleware`, which derives from it: a
/// server's call goes straight to native code (a Python `__call__` was a
/// frame and a dozen lookups per request). `app` is set as an attribute;
/// `_route` gives it the compiled routes, from the middleware's `__init__`.
#[pyclass(subclass, module = "sds._native")]
pub struct WsgiGate {
    app: Option<Py<PyAny>>,
    routes: Option<Routes>,
}

struct Routes {
    /// Exact paths to their `sds.web._Plan`.
    exact: Py<PyDict>,
    default: Option<Py<PyAny>>,
    /// `Gate.plan` when some route is a prefix or a matcher; else the
    /// exact paths and the default are the whole lookup.
    plan: Option<Py<PyAny>>,
}

#[pymethods]
impl WsgiGate {
    /// Takes the middleware's arguments, which `__init__` reads.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> WsgiGate {
        WsgiGate {
            app: None,
            routes: None,
        }
    }

    /// The WSGI app it guards.
    #[getter]
    fn app(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.app
            .as_ref()
            .map(|app| app.clone_ref(py))
            .ok_or_else(|| PyAttributeError::new_err("app"))
    }

    #[setter]
    fn set_app(&mut self, app: Py<PyAny>) {
        self.app = Some(app);
    }

    /// Serves requests on these routes: `exact` maps paths to plans,
    /// `default` (or `None`) takes the others, unless `plan` (a function of
    /// the path and the environ) is given to find the plan.
    #[pyo3(signature = (exact, default, plan))]
    fn _route(&mut self, exact: Py<PyDict>, default: Option<Py<PyAny>>, plan: Option<Py<PyAny>>) {
        self.routes = Some(Routes {
            exact,
            default,
            plan,
        });
    }

    /// A WSGI request: a request admitted with no wait runs the app at once
    /// in a `WsgiResponse`, which is returned; a refused or paced one goes
    /// to `self._answer(plan, admission, environ, start_response)`; one no
    /// route takes goes to the app untouched.
    fn __call__<'py>(
        slf: &Bound<'py, Self>,
        environ: &Bound<'py, PyAny>,
        start_response: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        // Taken out of the borrow: a route's function may run Python code
        // that sets `app` (on this thread or another).
        let (app, routes) = {
            let this = slf.borrow();
            let (Some(app), Some(routes)) = (&this.app, &this.routes) else {
                return Err(PyValueError::new_err(
                    "this middleware has no app or routes: its __init__ did not run",
                ));
            };
            (app.clone_ref(py).into_bound(py), routes.clone_ref(py))
        };
        let Some(plan) = routes.plan_of(py, environ)? else {
            return app.call1((environ, start_response));
        };
        let native = plan.getattr(intern!(py, "native"))?;
        let admission = RoutePlan::admit(native.cast()?, environ, None)?;
        if admission.verdict != ADMITTED || admission.wait_ms != 0 {
            let args = (plan, admission, environ, start_response);
            return slf.call_method1(intern!(py, "_answer"), args);
        }
        // The admission lives in the response: one Python object, not two.
        let response =
            WsgiResponse::holding(Admitted::Here(admission), start_response.clone().unbind());
        WsgiResponse::run(&Bound::new(py, response)?, &app, environ).map(Bound::into_any)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.app)?;
        if let Some(routes) = &self.routes {
            visit.call(&routes.exact)?;
            visit.call(&routes.default)?;
            visit.call(&routes.plan)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.app = None;
        self.routes = None;
    }
}

impl Routes {
    fn clone_ref(&self, py: Python<'_>) -> Routes {
        Routes {
            exact: self.exact.clone_ref(py),
            default: self.default.as_ref().map(|d| d.clone_ref(py)),
            plan: self.plan.as_ref().map(|p| p.clone_ref(py)),
        }
    }

    /// The plan of the request `environ` (`None`: no route takes it).
    fn plan_of<'py>(
        &self,
        py: Python<'py>,
        environ: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (name, empty) = (intern!(py, "PATH_INFO"), intern!(py, ""));
        let path = match environ.cast::<PyDict>() {
            Ok(dict) => dict
                .get_item(name)?
                .unwrap_or_else(|| empty.clone().into_any()),
            Err(_) => environ.call_method1(intern!(py, "get"), (name, empty))?,
        };
        if let Some(plan) = &self.plan {
            let found = plan.bind(py).call1((path, environ))?;
            return Ok((!found.is_none()).then_some(found));
        }
        match self.exact.bind(py).get_item(path)? {
            Some(found) => Ok(Some(found)),
            None => Ok(self.default.as_ref().map(|d| d.bind(py).clone())),
        }
    }
}

/// The app's response for one admitted request: the app calls it as its
/// `start_response`; the server iterates and closes it as the app's
/// iterable. Its admission finishes when the server closes it, when the app
/// raises before returning a body, or when the body raises an `Exception`
/// while iterated. A server that never closes it leaves the admission to
/// its collection (units back, the entry exits as abandoned).
#[pyclass(module = "sds._native")]
pub struct WsgiResponse {
    admission: Option<Admitted>,
    start_response: Option<Py<PyAny>>,
    /// The status the app started with (0: none yet).
    status: u16,
    body: Option<Py<PyAny>>,
    iterator: Option<Py<PyIterator>>,
}

#[pymethods]
impl WsgiResponse {
    #[new]
    fn new(admission: Py<Admission>, start_response: Py<PyAny>) -> WsgiResponse {
        WsgiResponse::holding(Admitted::Shared(admission), start_response)
    }

    /// Runs `app(environ, self)` and keeps the iterable it returns; returns
    /// `self`. An app that raises finishes the admission with its error.
    fn run<'py>(
        slf: &Bound<'py, Self>,
        app: &Bound<'py, PyAny>,
        environ: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        // Nothing borrowed while the app runs: it calls `slf` back.
        match app.call1((environ, slf)) {
            Ok(body) => {
                slf.borrow_mut().body = Some(body.unbind());
                Ok(slf.clone())
            }
            Err(e) => {
                finish(slf, Some(e.value(slf.py()).as_any()))?;
                Err(e)
            }
        }
    }

    /// The app's `start_response(status, headers, exc_info=None)`: the
    /// server's, with the rate-limit fields added.
    #[pyo3(signature = (status, headers, exc_info = None))]
    fn __call__<'py>(
        slf: &Bound<'py, Self>,
        status: &Bound<'py, PyString>,
        headers: &Bound<'py, PyAny>,
        exc_info: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let code = status
            .to_str()
            .ok()
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| PyValueError::new_err(format!("WSGI status {status} has no code")))?;
        let (start, extra) = {
            let mut this = slf.borrow_mut();
            this.status = code;
            let start = this.start_response.as_ref().map(|s| s.clone_ref(py));
            let extra = this.admission.as_ref().map(|a| a.get().fields(py).clone());
            (start, extra)
        };
        let (Some(start), Some(extra)) = (start, extra) else {
            return Err(PyValueError::new_err("the response was closed"));
        };
        let fields = headers.add(extra)?;
        match exc_info {
            None => start.bind(py).call1((status, fields)),
            Some(info) => start.bind(py).call1((status, fields, info)),
        }
    }

    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        let body = slf.borrow().body.as_ref().map(|b| b.clone_ref(slf.py()));
        let Some(body) = body else {
            return Err(PyValueError::new_err("the response was closed"));
        };
        let iterator = body.bind(slf.py()).try_iter()?;
        slf.borrow_mut().iterator = Some(iterator.unbind());
        Ok(slf.clone())
    }

    /// The body's next chunk. Only an `Exception` is the body's failure
    /// (a `GeneratorExit` or `KeyboardInterrupt` is not; `close` follows).
    fn __next__<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = slf.py();
        let iterator = slf.borrow().iterator.as_ref().map(|i| i.clone_ref(py));
        let Some(iterator) = iterator else {
            return Ok(None);
        };
        match iterator.into_bound(py).next() {
            None => Ok(None),
            Some(Ok(chunk)) => Ok(Some(chunk)),
            Some(Err(e)) => {
                if e.is_instance_of::<PyException>(py) {
                    finish(slf, Some(e.value(py).as_any()))?;
                }
                Err(e)
            }
        }
    }

    /// The server is done with the response: closes the app's iterable (if
    /// it has `close`) and finishes the admission with the started status.
    fn close(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let body = {
            let mut this = slf.borrow_mut();
            this.iterator = None;
            this.body.take()
        };
        let closed = match body.map(|b| b.into_bound(py)) {
            // A list or tuple has no `close`: not looked up, since a missing
            // attribute costs an exception made and dropped in the stable ABI.
            Some(b)
                if b.is_exact_instance_of::<PyList>() || b.is_exact_instance_of::<PyTuple>() =>
            {
                Ok(())
            }
            Some(b) => match b.getattr_opt(intern!(py, "close")) {
                Ok(Some(close)) => close.call0().map(drop),
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            },
            None => Ok(()),
        };
        let finished = finish(slf, None);
        closed.and(finished)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // An admission held here refers to nothing that can refer back.
        if let Some(Admitted::Shared(admission)) = &self.admission {
            visit.call(admission)?;
        }
        visit.call(&self.start_response)?;
        visit.call(&self.body)?;
        visit.call(&self.iterator)
    }

    fn __clear__(&mut self) {
        self.admission = None;
        self.start_response = None;
        self.body = None;
        self.iterator = None;
    }
}

impl WsgiResponse {
    fn holding(admission: Admitted, start_response: Py<PyAny>) -> WsgiResponse {
        WsgiResponse {
            admission: Some(admission),
            start_response: Some(start_response),
            status: 0,
            body: None,
            iterator: None,
        }
    }
}

/// A response's admission: its own (made by `WsgiGate.__call__`), or one
/// Python made first (a paced request's, which waited before its response
/// was made).
enum Admitted {
    Here(Admission),
    Shared(Py<Admission>),
}

impl Admitted {
    fn get(&self) -> &Admission {
        match self {
            Admitted::Here(admission) => admission,
            Admitted::Shared(admission) => admission.get(),
        }
    }
}

/// Finishes `response`'s admission with `error` and the started status.
fn finish(response: &Bound<'_, WsgiResponse>, error: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    // Taken under the borrow, finished after it: an entry's exit may run
    // Python code.
    let (running, status) = {
        let this = response.borrow();
        let running = this.admission.as_ref().and_then(|a| a.get().take_running());
        (running, this.status)
    };
    match running {
        Some(running) => running.finish(response.py(), error, status),
        None => Ok(()),
    }
}
