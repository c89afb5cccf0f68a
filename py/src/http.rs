//! What `sds.web` (the ASGI and WSGI middleware) takes from the crate
//! sds-http, so that Python answers a request as Node and Java do: a
//! route's per-key policies deciding a request with its `RateLimit*` /
//! `Retry-After` header values (`RoutePolicies`) and the client key of a
//! request (`ClientAddress`). Nothing here decides in another order,
//! formats a header or parses an address itself.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use sds_core::keyed::KeyDecision;
use sds_http::{HeaderStyle, Limited, Verdict};

use crate::args::{self, Time};
use crate::errors;
use crate::keys::{key_bytes, key_error, units, Keys};

/// The names `HeaderStyle::from_name` takes, for the error message.
const STYLES: &str = r#""draft-10", "draft-6" or "x-ratelimit""#;

/// Checks that `name` can name a policy in a header: 1 to 64 printable
/// ASCII characters (else `sds.InvalidArgument`).
#[pyfunction]
pub fn check_policy_name(py: Python<'_>, name: &str) -> PyResult<()> {
    sds_http::check_policy_name(name).map_err(|e| errors::argument(py, e.to_string()))
}

/// A route's per-key policies (sds-http's `RoutePolicies`): built once per
/// route, asked once per request with the request's keys and costs.
#[pyclass(frozen, module = "sds._native")]
pub struct RoutePolicies {
    inner: sds_http::RoutePolicies,
    style_name: &'static str,
    /// The style's field names as `str` and lower-case `bytes`, made once.
    names: Vec<(&'static str, Py<PyString>, Py<PyBytes>)>,
}

#[pymethods]
impl RoutePolicies {
    /// `policies`: `(name, KeyedLimit)` pairs in the order they decide.
    #[new]
    fn new(
        py: Python<'_>,
        style: &str,
        policies: Vec<(String, PyRef<'_, Keys>)>,
    ) -> PyResult<RoutePolicies> {
        let Some(parsed) = HeaderStyle::from_name(style) else {
            let message = format!("header style {style:?} must be {STYLES}");
            return Err(errors::argument(py, message));
        };
        let style_name = match parsed {
            HeaderStyle::Draft10 => "draft-10",
            HeaderStyle::Draft6 => "draft-6",
            HeaderStyle::XRateLimit => "x-ratelimit",
        };
        let policies = policies
            .into_iter()
            .map(|(name, keys)| (name, Arc::clone(keys.table())))
            .collect();
        let inner = sds_http::RoutePolicies::new(parsed, policies)
            .map_err(|e| errors::argument(py, e.to_string()))?;
        // Every name the style writes: those of a refusal with a wait.
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
        let names = sds_http::headers(&every, parsed)
            .into_iter()
            .map(|(name, _)| {
                let text = PyString::intern(py, name).unbind();
                let lower = PyBytes::new(py, name.to_ascii_lowercase().as_bytes()).unbind();
                (name, text, lower)
            })
            .collect();
        Ok(RoutePolicies {
            inner,
            style_name,
            names,
        })
    }

    #[getter]
    fn style(&self) -> &'static str {
        self.style_name
    }

    #[getter]
    fn policies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.names())
    }

    /// Decides a request: `keys` (a `str` or `bytes` per policy, `None`
    /// where the policy does not apply) at `costs` (an `int` per policy),
    /// at `now_ms` (the wall clock if `None`). Returns `(verdict, held,
    /// fields)`: 0 admitted, 1 limited (429), 2 a full in-flight table
    /// (503); the policies holding units (bits, for `release`); the header
    /// fields as `(name, value)` `str` pairs, or with `raw` lower-case
    /// `bytes` pairs as ASGI sends them.
    #[pyo3(signature = (keys, costs, raw = false, now_ms = None))]
    fn decide<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyList>,
        costs: &Bound<'py, PyList>,
        raw: bool,
        now_ms: Option<Time>,
    ) -> PyResult<(u8, u64, Bound<'py, PyList>)> {
        let items = self.items(py, keys)?;
        let keys = key_slices(&items)?;
        let costs = self.costs(py, costs)?;
        let decided = self
            .inner
            .decide(&keys, &costs, args::time_or_now(now_ms))
            .map_err(|e| key_error(py, e))?;
        let verdict = match decided.verdict {
            Verdict::Admitted => 0,
            Verdict::Limited => 1,
            Verdict::TableFull => 2,
        };
        let fields = PyList::empty(py);
        for (name, value) in self.inner.headers(&decided) {
            let (_, text, lower) = self
                .names
                .iter()
                .find(|(known, _, _)| *known == name)
                .expect("the style's names are all known");
            let pair = if raw {
                let value = PyBytes::new(py, value.as_bytes());
                PyTuple::new(py, [lower.bind(py).as_any(), value.as_any()])?
            } else {
                let value = PyString::new(py, &value);
                PyTuple::new(py, [text.bind(py).as_any(), value.as_any()])?
            };
            fields.append(pair)?;
        }
        Ok((verdict, decided.held, fields))
    }

    /// Gives back the units of the policies `held` names, with the keys and
    /// costs `decide` was given: when the response is over, or when the
    /// route's point downgraded the request.
    fn release(
        &self,
        py: Python<'_>,
        held: u64,
        keys: &Bound<'_, PyList>,
        costs: &Bound<'_, PyList>,
    ) -> PyResult<()> {
        let items = self.items(py, keys)?;
        let keys = key_slices(&items)?;
        let costs = self.costs(py, costs)?;
        self.inner.release(held, &keys, &costs);
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "RoutePolicies({:?}, {:?})",
            self.style_name,
            self.inner.names()
        )
    }
}

impl RoutePolicies {
    /// The items of `list`, one per policy.
    fn items<'py>(
        &self,
        py: Python<'py>,
        list: &Bound<'py, PyList>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        if list.len() != self.inner.len() {
            let message = format!("{} keys for {} policies", list.len(), self.inner.len());
            return Err(errors::argument(py, message));
        }
        Ok(list.iter().collect())
    }

    /// One cost per policy (an `int` from 1 to 2^32 - 1).
    fn costs(&self, py: Python<'_>, list: &Bound<'_, PyList>) -> PyResult<Vec<u32>> {
        if list.len() != self.inner.len() {
            let message = format!("{} costs for {} policies", list.len(), self.inner.len());
            return Err(errors::argument(py, message));
        }
        list.iter().map(|c| units(Some(&c), "cost")).collect()
    }
}

/// A key per item: `None`, a `str` or `bytes`.
fn key_slices<'a>(items: &'a [Bound<'_, PyAny>]) -> PyResult<Vec<Option<&'a [u8]>>> {
    items
        .iter()
        .map(|k| {
            if k.is_none() {
                Ok(None)
            } else {
                key_bytes(k).map(Some)
            }
        })
        .collect()
}

/// How a request's client key is found: its peer's address, or behind
/// trusted proxies the first untrusted address of `X-Forwarded-For` from
/// the right, masked to a prefix (`203.0.113.7`, `2001:db8:1:2::/64`).
#[pyclass(frozen, module = "sds._native")]
pub struct ClientAddress {
    inner: sds_http::ClientAddress,
    trusts_any: bool,
}

#[pymethods]
impl ClientAddress {
    #[new]
    #[pyo3(signature = (ipv4_prefix = 32, ipv6_prefix = 64, trusted = Vec::new()))]
    fn new(
        py: Python<'_>,
        ipv4_prefix: u64,
        ipv6_prefix: u64,
        trusted: Vec<String>,
    ) -> PyResult<ClientAddress> {
        // Beyond u8 is as invalid as beyond 32 or 128: the crate names both.
        let prefix = |bits: u64| u8::try_from(bits).unwrap_or(u8::MAX);
        let inner =
            sds_http::ClientAddress::new(prefix(ipv4_prefix), prefix(ipv6_prefix), &trusted)
                .map_err(|e| errors::argument(py, e.to_string()))?;
        Ok(ClientAddress {
            inner,
            trusts_any: !trusted.is_empty(),
        })
    }

    /// Whether any proxy is trusted: without one, `X-Forwarded-For` is
    /// never read (a middleware need not even look it up).
    #[getter]
    fn trusts_proxies(&self) -> bool {
        self.trusts_any
    }

    /// The key of a request from `peer` (the socket's address) with the
    /// values of its `X-Forwarded-For` headers; `sds.InvalidArgument` if
    /// `peer` is not an IP address.
    #[pyo3(signature = (peer, forwarded_for = Vec::new()))]
    fn key(&self, py: Python<'_>, peer: &str, forwarded_for: Vec<String>) -> PyResult<String> {
        let hops: Vec<&str> = forwarded_for.iter().map(String::as_str).collect();
        self.inner
            .key(peer, &hops)
            .map_err(|e| errors::argument(py, e.to_string()))
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }
}
