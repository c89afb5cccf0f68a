//! What `sds.web` (the ASGI and WSGI middleware) takes from the crate
//! sds-http, so that Python answers a request as Node and Java do: the
//! `RateLimit*` / `Retry-After` header values of a request's key decisions
//! (`RateLimitHeaders`) and the client key of a request (`ClientAddress`).
//! Nothing here formats a header or parses an address itself.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PySequence, PyString, PyTuple};
use sds_core::keyed::{KeyDecision, NEVER};
use sds_http::{HeaderStyle, Limited};

use crate::args;
use crate::errors;

/// The names `HeaderStyle::from_name` takes, for the error message.
const STYLES: &str = r#""draft-10", "draft-6" or "x-ratelimit""#;

/// Checks that `name` can name a policy in a header: 1 to 64 printable
/// ASCII characters (else `sds.InvalidArgument`).
#[pyfunction]
pub fn check_policy_name(py: Python<'_>, name: &str) -> PyResult<()> {
    sds_http::check_policy_name(name).map_err(|e| errors::argument(py, e.to_string()))
}

/// The header fields of one route's policies in one style: built once per
/// route, asked once per request with the policies' decisions.
#[pyclass(frozen, module = "sds._native")]
pub struct RateLimitHeaders {
    style: HeaderStyle,
    style_name: &'static str,
    policies: Vec<String>,
    /// The style's field names as `str` and lower-case `bytes`, made once.
    names: Vec<(&'static str, Py<PyString>, Py<PyBytes>)>,
}

#[pymethods]
impl RateLimitHeaders {
    #[new]
    fn new(py: Python<'_>, style: &str, policies: Vec<String>) -> PyResult<RateLimitHeaders> {
        let Some(parsed) = HeaderStyle::from_name(style) else {
            let message = format!("header style {style:?} must be {STYLES}");
            return Err(errors::argument(py, message));
        };
        for name in &policies {
            check_policy_name(py, name)?;
        }
        let style_name = match parsed {
            HeaderStyle::Draft10 => "draft-10",
            HeaderStyle::Draft6 => "draft-6",
            HeaderStyle::XRateLimit => "x-ratelimit",
        };
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
        Ok(RateLimitHeaders {
            style: parsed,
            style_name,
            policies,
            names,
        })
    }

    #[getter]
    fn style(&self) -> &'static str {
        self.style_name
    }

    #[getter]
    fn policies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.policies)
    }

    /// The fields for `decisions` (`KeyDecision`s, one per policy, in the
    /// policies' order; `None` for a policy that did not decide; fewer is
    /// allowed: the first ones): `(name, value)`
    /// pairs of `str`, or with `raw` of lower-case `bytes` as ASGI sends
    /// them.
    #[pyo3(signature = (decisions, raw = false))]
    fn fields<'py>(
        &self,
        py: Python<'py>,
        decisions: &Bound<'py, PyAny>,
        raw: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let decisions = decisions
            .cast::<PySequence>()
            .map_err(|_| args::wrong(decisions, "decisions must be a sequence"))?;
        let count = decisions.len()?;
        if count > self.policies.len() {
            let message = format!("{count} decisions for {} policies", self.policies.len());
            return Err(errors::argument(py, message));
        }
        let mut limits = Vec::with_capacity(count);
        for (i, policy) in self.policies.iter().take(count).enumerate() {
            let item = decisions.get_item(i)?;
            // A policy that did not decide (no key for this request).
            if item.is_none() {
                continue;
            }
            let decision = decision_of(&item)?;
            limits.push(Limited { policy, decision });
        }
        let out = PyList::empty(py);
        for (name, value) in sds_http::headers(&limits, self.style) {
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
            out.append(pair)?;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "RateLimitHeaders({:?}, {:?})",
            self.style_name, self.policies
        )
    }
}

/// A `KeyDecision` (or any 6-item tuple in its order) as the core's; a
/// `retry_after_ms` of `None` is "never".
fn decision_of(item: &Bound<'_, PyAny>) -> PyResult<KeyDecision> {
    let tuple = item
        .cast::<PyTuple>()
        .map_err(|_| args::wrong(item, "a decision must be a KeyDecision"))?;
    if tuple.len() != 6 {
        return Err(args::wrong(item, "a decision must be a KeyDecision"));
    }
    let retry: Option<u64> = tuple.get_item(4)?.extract()?;
    Ok(KeyDecision {
        admitted: tuple.get_item(0)?.extract()?,
        limit: tuple.get_item(1)?.extract()?,
        remaining: tuple.get_item(2)?.extract()?,
        reset_ms: tuple.get_item(3)?.extract()?,
        retry_after_ms: retry.unwrap_or(NEVER),
        window_ms: tuple.get_item(5)?.extract()?,
    })
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
