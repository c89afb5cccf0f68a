//! `RoutePlan`: a route of `sds.web` (the ASGI and WSGI middleware)
//! deciding a request in one native call: its key and cost functions, its
//! per-key policies in sds-http's order (`RoutePolicies`) with their
//! `RateLimit*` / `Retry-After` header values, then its point; and the
//! `Admission` that gives back what an admitted request holds. Python
//! answers a request as Node and Java do: nothing here decides in another
//! order or formats a header itself.
//!
//! The whole request is decided here rather than in Python: a Python
//! middleware's own frames are most of what it adds to a request, so every
//! key, cost and list it need not build in Python is time saved.

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use sds_core::keyed::KeyDecision;
use sds_core::Flags;
use sds_http::{Decided, HeaderStyle, Limited, Verdict};

use crate::args::{self, Time};
use crate::entry::Entry;
use crate::errors;
use crate::http::{ClientAddress, HeaderKey};
use crate::keys::{key_bytes, key_error, units, Keys};
use crate::request::peer_of;
use crate::table::PointHandle;

/// The names `HeaderStyle::from_name` takes, for the error message.
const STYLES: &str = r#""draft-10", "draft-6" or "x-ratelimit""#;

// `Admission.verdict`: what the request met.
pub(crate) const ADMITTED: u8 = 0;
const LIMITED: u8 = 1;
const TABLE_FULL: u8 = 2;
const DOWNGRADED: u8 = 3;

/// A policy as `RoutePlan` takes it: `(name, KeyedLimit, key, cost)`.
type PolicyArgs<'py> = (
    String,
    PyRef<'py, Keys>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// How a policy finds a request's key.
enum KeyOf {
    /// The client's address: read from the request's peer (and, behind a
    /// trusted proxy, its `X-Forwarded-For`) without a Python call.
    Address(Py<ClientAddress>),
    /// A header's first value: read from the scope or environ without a
    /// Python call.
    Header(Py<HeaderKey>),
    /// A function of the request (`sds.web.Request`).
    Call(Py<PyAny>),
}

/// One policy's key and cost (a fixed `int`, or a function of the request
/// called for requests with a key).
struct Step {
    key: KeyOf,
    cost: u32,
    cost_of: Option<Py<PyAny>>,
}

/// A route bound to its middleware: its policies (sds-http's
/// `RoutePolicies`, their key and cost functions) and its point. One call
/// per request decides it in sds-http's order: every key and cost first,
/// then the policies (only peeking after a refusal), then the point.
#[pyclass(frozen, module = "sds._native")]
pub struct RoutePlan {
    policies: sds_http::RoutePolicies,
    steps: Vec<Step>,
    point: Option<Py<PointHandle>>,
    /// ASGI (a scope, lower-case `bytes` header pairs) or WSGI (an environ,
    /// `str` pairs).
    asgi: bool,
    /// What key and cost functions see: `request_type(scope or environ)`,
    /// made only for a request that calls one.
    request_type: Py<PyAny>,
    style_name: &'static str,
    /// The style's field names as `str` and lower-case `bytes`, made once.
    names: Vec<(&'static str, Py<PyString>, Py<PyBytes>)>,
}

#[pymethods]
impl RoutePlan {
    /// `policies`: `(name, KeyedLimit, key, cost)` in the order they
    /// decide; `key` a function of the request or a `ClientAddress`, `cost`
    /// an `int` or a function of the request. `point`: the route's point
    /// (`None`: none). `asgi`: requests are ASGI scopes (else WSGI
    /// environs), which `request_type` wraps for the functions.
    #[new]
    fn new(
        py: Python<'_>,
        style: &str,
        policies: Vec<PolicyArgs<'_>>,
        point: Option<Py<PointHandle>>,
        asgi: bool,
        request_type: Py<PyAny>,
    ) -> PyResult<RoutePlan> {
        let Some(parsed) = HeaderStyle::from_name(style) else {
            let message = format!("header style {style:?} must be {STYLES}");
            return Err(errors::argument(py, message));
        };
        let style_name = match parsed {
            HeaderStyle::Draft10 => "draft-10",
            HeaderStyle::Draft6 => "draft-6",
            HeaderStyle::XRateLimit => "x-ratelimit",
        };
        let mut steps = Vec::with_capacity(policies.len());
        let mut tables = Vec::with_capacity(policies.len());
        for (name, keys, key, cost) in policies {
            let key = if let Ok(address) = key.cast::<ClientAddress>() {
                KeyOf::Address(address.clone().unbind())
            } else if let Ok(header) = key.cast::<HeaderKey>() {
                KeyOf::Header(header.clone().unbind())
            } else {
                KeyOf::Call(key.unbind())
            };
            let (cost, cost_of) = if cost.is_callable() {
                (1, Some(cost.unbind()))
            } else {
                (units(Some(&cost), "cost")?, None)
            };
            steps.push(Step { key, cost, cost_of });
            tables.push((name, Arc::clone(keys.table())));
        }
        let policies = sds_http::RoutePolicies::new(parsed, tables)
            .map_err(|e| errors::argument(py, e.to_string()))?;
        Ok(RoutePlan {
            policies,
            steps,
            point,
            asgi,
            request_type,
            style_name,
            names: field_names(py, parsed),
        })
    }

    #[getter]
    fn style(&self) -> &'static str {
        self.style_name
    }

    #[getter]
    fn policies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.policies.names())
    }

    /// Decides the request `raw` (an ASGI scope or a WSGI environ) at
    /// `now_ms` (the wall clock if `None`): every key and cost function
    /// first, then the policies, then the point. Returns an `Admission`:
    /// its `verdict` says what the request met.
    #[pyo3(signature = (raw, now_ms = None))]
    pub(crate) fn admit(
        slf: &Bound<'_, Self>,
        raw: &Bound<'_, PyAny>,
        now_ms: Option<Time>,
    ) -> PyResult<Admission> {
        let py = slf.py();
        let plan = slf.get();
        let mut request = None;
        let mut keys: Vec<Option<Bound<'_, PyAny>>> = Vec::with_capacity(plan.steps.len());
        let mut costs = Vec::with_capacity(plan.steps.len());
        for step in &plan.steps {
            let key = match &step.key {
                KeyOf::Address(address) => {
                    Some(plan.address_key(address.get(), raw, &mut request)?)
                }
                KeyOf::Header(header) => header.get().key_of(raw, plan.asgi)?,
                KeyOf::Call(f) => {
                    let key = f.bind(py).call1((plan.request(raw, &mut request)?,))?;
                    (!key.is_none()).then_some(key)
                }
            };
            let cost = match (&step.cost_of, &key) {
                (Some(f), Some(_)) => {
                    let cost = f.bind(py).call1((plan.request(raw, &mut request)?,))?;
                    units(Some(&cost), "cost")?
                }
                _ => step.cost,
            };
            keys.push(key);
            costs.push(cost);
        }
        let now = args::time_or_now(now_ms);
        let decided = if plan.steps.is_empty() {
            None
        } else {
            let slices = key_slices(&keys)?;
            let decided = plan
                .policies
                .decide(&slices, &costs, now)
                .map_err(|e| key_error(py, e))?;
            Some(decided)
        };
        let headers = match &decided {
            Some(decided) => plan.fields(py, decided)?,
            None => PyList::empty(py),
        };
        let refused = |verdict| Admission::refused(verdict, headers.clone().unbind());
        let held = match &decided {
            Some(d) if d.verdict == Verdict::Limited => return Ok(refused(LIMITED)),
            // The service is full, not the client over a limit nor the point
            // downgraded: 503, no fallback, no headers.
            Some(d) if d.verdict == Verdict::TableFull => return Ok(refused(TABLE_FULL)),
            Some(d) if d.held != 0 => Some(Held {
                plan: slf.clone().unbind(),
                mask: d.held,
                keys: keys.into_iter().map(|k| k.map(Bound::unbind)).collect(),
                costs,
            }),
            _ => None,
        };
        let entry = match &plan.point {
            None => None,
            Some(point) => {
                let point = point.get();
                let name = point.name.bind(py);
                // The policies' time: one clock read per request. The entry
                // is on the caller's timeline only when `now_ms` was given.
                let entry = point.inner.enter_at(py, point.id, name, now, Flags::NONE);
                let entry = match entry {
                    Ok(entry) => Entry::new(Arc::clone(&point.inner), entry, now_ms.is_some()),
                    Err(e) => {
                        // A point table full of names: give back what was held.
                        if let Some(held) = held {
                            held.release(py);
                        }
                        return Err(e);
                    }
                };
                if entry.downgraded() {
                    if let Some(held) = held {
                        held.release(py);
                    }
                    entry.exit(py, None)?;
                    return Ok(refused(DOWNGRADED));
                }
                Some(entry)
            }
        };
        let wait_ms = entry.as_ref().map_or(0, Entry::wait_ms);
        Ok(Admission {
            verdict: ADMITTED,
            headers: headers.unbind(),
            wait_ms,
            running: Mutex::new(Some(Running { entry, held })),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "RoutePlan({:?}, {:?})",
            self.style_name,
            self.policies.names()
        )
    }
}

impl RoutePlan {
    /// The request view the functions see, made once per request.
    fn request<'a, 'py>(
        &self,
        raw: &Bound<'py, PyAny>,
        made: &'a mut Option<Bound<'py, PyAny>>,
    ) -> PyResult<&'a Bound<'py, PyAny>> {
        if made.is_none() {
            *made = Some(self.request_type.bind(raw.py()).call1((raw,))?);
        }
        Ok(made.as_ref().expect("just made"))
    }

    /// The client's key of `raw`, from its peer (the scope's `client`, the
    /// environ's `REMOTE_ADDR`) and, when `address` trusts a proxy, the
    /// request's `X-Forwarded-For` values.
    fn address_key<'py>(
        &self,
        address: &ClientAddress,
        raw: &Bound<'py, PyAny>,
        made: &mut Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = address.key_of(raw.py(), peer_of(raw, self.asgi)?, || {
            self.request(raw, made).cloned()
        })?;
        Ok(key.into_any())
    }

    /// The header fields of `decided`: `(name, value)` `str` pairs, or for
    /// ASGI lower-case `bytes` pairs.
    fn fields<'py>(&self, py: Python<'py>, decided: &Decided) -> PyResult<Bound<'py, PyList>> {
        let fields = PyList::empty(py);
        for (name, value) in self.policies.headers(decided) {
            let (_, text, lower) = self
                .names
                .iter()
                .find(|(known, _, _)| *known == name)
                .expect("the style's names are all known");
            let pair = if self.asgi {
                let value = PyBytes::new(py, value.as_bytes());
                PyTuple::new(py, [lower.bind(py).as_any(), value.as_any()])?
            } else {
                let value = PyString::new(py, &value);
                PyTuple::new(py, [text.bind(py).as_any(), value.as_any()])?
            };
            fields.append(pair)?;
        }
        Ok(fields)
    }
}

/// Every field name `style` writes (those of a refusal with a wait), as
/// `str` and as lower-case `bytes`.
fn field_names(
    py: Python<'_>,
    style: HeaderStyle,
) -> Vec<(&'static str, Py<PyString>, Py<PyBytes>)> {
    let refused = KeyDecision {
        admitted: false,
        limit: 1,
        remaining: 0,
        reset_ms: 1,
        retry_after_ms: 1,
        window_ms: 1,
    };
    let every = [Limited {
        policy: "p",
        decision: refused,
    }];
    sds_http::headers(&every, style)
        .into_iter()
        .map(|(name, _)| {
            let text = PyString::intern(py, name).unbind();
            let lower = PyBytes::new(py, name.to_ascii_lowercase().as_bytes()).unbind();
            (name, text, lower)
        })
        .collect()
}

/// A key per item: `None`, a `str` or `bytes`.
fn key_slices<'a>(items: &'a [Option<Bound<'_, PyAny>>]) -> PyResult<Vec<Option<&'a [u8]>>> {
    items
        .iter()
        .map(|k| k.as_ref().map(key_bytes).transpose())
        .collect()
}

/// The in-flight units an admitted request holds: what
/// `RoutePolicies::release` needs to give them back.
struct Held {
    plan: Py<RoutePlan>,
    mask: u64,
    keys: Vec<Option<Py<PyAny>>>,
    costs: Vec<u32>,
}

impl Held {
    fn release(self, py: Python<'_>) {
        let keys: Vec<Option<Bound<'_, PyAny>>> = self
            .keys
            .iter()
            .map(|k| k.as_ref().map(|k| k.bind(py).clone()))
            .collect();
        // The keys were read once already: they are still `str` or `bytes`.
        if let Ok(slices) = key_slices(&keys) {
            self.plan
                .get()
                .policies
                .release(self.mask, &slices, &self.costs);
        }
    }
}

/// What an admitted request gives back when its response ends.
pub(crate) struct Running {
    entry: Option<Entry>,
    held: Option<Held>,
}

impl Running {
    /// Gives back the units held and exits the entry: failed by an
    /// `Exception` `error` or a 5xx `status` (0: no response was sent).
    pub(crate) fn finish(
        self,
        py: Python<'_>,
        error: Option<&Bound<'_, PyAny>>,
        status: u16,
    ) -> PyResult<()> {
        if let Some(held) = self.held {
            held.release(py);
        }
        let Some(entry) = self.entry else {
            return Ok(());
        };
        let error = error.filter(|e| !e.is_none());
        match error {
            Some(e) if e.is_instance_of::<PyException>() => {
                entry.context_exit(py, Some(e)).map(drop)
            }
            _ if status >= 500 || (error.is_none() && status == 0) => entry.exit_failed(py),
            _ => entry.exit(py, None),
        }
    }
}

/// What `RoutePlan.admit` decided for a request: `verdict` 0 admitted, 1
/// limited (429), 2 a full in-flight table (503, no headers, no fallback),
/// 3 the point downgraded it (the fallback or 503); `headers`, the
/// rate-limit fields its response carries; `wait_ms`, what an admitted
/// request waits before the app runs (its point's pacing). An admitted
/// request's `finish` gives back what it holds; collected unfinished, it
/// gives back its units and its entry exits as abandoned.
#[pyclass(frozen, module = "sds._native")]
pub struct Admission {
    #[pyo3(get)]
    pub(crate) verdict: u8,
    #[pyo3(get)]
    headers: Py<PyList>,
    #[pyo3(get)]
    pub(crate) wait_ms: u64,
    running: Mutex<Option<Running>>,
}

impl Admission {
    /// What it holds, taken: only the first caller gets it.
    pub(crate) fn take_running(&self) -> Option<Running> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// The rate-limit fields its response carries.
    pub(crate) fn fields<'py>(&self, py: Python<'py>) -> &Bound<'py, PyList> {
        self.headers.bind(py)
    }

    fn refused(verdict: u8, headers: Py<PyList>) -> Admission {
        Admission {
            verdict,
            headers,
            wait_ms: 0,
            running: Mutex::new(None),
        }
    }
}

#[pymethods]
impl Admission {
    /// The response ended with `status` (0: none was sent), or the app
    /// raised `error`: in-flight units go back and the point's entry exits,
    /// failed by an `Exception` or a 5xx (a cancellation or exit is no
    /// failure). Later calls do nothing.
    #[pyo3(signature = (error = None, status = 0))]
    pub(crate) fn finish(
        &self,
        py: Python<'_>,
        error: Option<&Bound<'_, PyAny>>,
        status: u16,
    ) -> PyResult<()> {
        match self.take_running() {
            Some(running) => running.finish(py, error, status),
            None => Ok(()),
        }
    }

    fn __repr__(&self) -> String {
        let what = ["admitted", "limited", "table full", "downgraded"];
        format!("Admission({})", what[usize::from(self.verdict)])
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        let running = self
            .running
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(Running {
            held: Some(held), ..
        }) = running
        {
            // The entry (if any) exits as abandoned in its own `drop`.
            Python::attach(|py| held.release(py));
        }
    }
}
