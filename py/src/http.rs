//! What `sds.web` (the ASGI and WSGI middleware) takes from the crate
//! sds-http besides a route's decision (`route.rs`): the check of a
//! policy's name and the client key of a request (`ClientAddress`);
//! nothing here parses an address itself. And a header's key
//! (`HeaderKey`), which a route reads from the scope or environ itself.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::errors;
use crate::request::HeaderName;

/// Checks that `name` can name a policy in a header: 1 to 64 printable
/// ASCII characters (else `sds.InvalidArgument`).
#[pyfunction]
pub fn check_policy_name(py: Python<'_>, name: &str) -> PyResult<()> {
    sds_http::check_policy_name(name).map_err(|e| errors::argument(py, e.to_string()))
}

/// How a request's client key is found: its peer's address, or behind
/// trusted proxies the first untrusted address of `X-Forwarded-For` from
/// the right, masked to a prefix (`203.0.113.7`, `2001:db8:1:2::/64`). A
/// peer that is no IP address is its own key. Called with an
/// `sds.web.Request`, it is that request's key function.
#[pyclass(frozen, subclass, module = "sds._native")]
pub struct ClientAddress {
    inner: sds_http::ClientAddress,
    trusts_any: bool,
    /// Keys by peer (when no proxy is trusted the peer alone makes the
    /// key): a map hit instead of parsing an address per request.
    known: Mutex<HashMap<String, Py<PyString>>>,
}

/// How many peers `ClientAddress` remembers before it starts afresh.
const KNOWN_PEERS: usize = 4096;

#[pymethods]
impl ClientAddress {
    #[new]
    #[pyo3(signature = (ipv4_prefix = 32, ipv6_prefix = 64, trusted_proxies = Vec::new()))]
    fn new(
        py: Python<'_>,
        ipv4_prefix: u64,
        ipv6_prefix: u64,
        trusted_proxies: Vec<String>,
    ) -> PyResult<ClientAddress> {
        // Beyond u8 is as invalid as beyond 32 or 128: the crate names both.
        let prefix = |bits: u64| u8::try_from(bits).unwrap_or(u8::MAX);
        let inner = sds_http::ClientAddress::new(
            prefix(ipv4_prefix),
            prefix(ipv6_prefix),
            &trusted_proxies,
        )
        .map_err(|e| errors::argument(py, e.to_string()))?;
        Ok(ClientAddress {
            inner,
            trusts_any: !trusted_proxies.is_empty(),
            known: Mutex::new(HashMap::new()),
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

    /// The key of `request` (an `sds.web.Request`): its peer's, a peer that
    /// is no IP address as given, no peer at all `""`.
    fn __call__<'py>(&self, request: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
        let peer = request.getattr("peer")?;
        self.key_of(request.py(), (!peer.is_none()).then_some(peer), || {
            Ok(request.clone())
        })
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }
}

impl ClientAddress {
    /// The key of a request from `peer` (`None`: the server gives none),
    /// asking `request` (an `sds.web.Request`) for its `X-Forwarded-For`
    /// values only when a proxy is trusted.
    pub(crate) fn key_of<'py>(
        &self,
        py: Python<'py>,
        peer: Option<Bound<'py, PyAny>>,
        request: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyString>> {
        let Some(peer) = peer else {
            return Ok(intern!(py, "").clone());
        };
        let peer = peer.cast_into::<PyString>()?;
        if self.trusts_any {
            let forwarded: Vec<String> = request()?
                .call_method1("header_values", ("x-forwarded-for",))?
                .extract()?;
            if !forwarded.is_empty() {
                return self.key_or_peer(py, &peer, &forwarded);
            }
        }
        self.cached(py, &peer)
    }

    /// The key of a request from `peer` through `forwarded`, or `peer`
    /// itself when it is no IP address.
    fn key_or_peer<'py>(
        &self,
        py: Python<'py>,
        peer: &Bound<'py, PyString>,
        forwarded: &[String],
    ) -> PyResult<Bound<'py, PyString>> {
        let hops: Vec<&str> = forwarded.iter().map(String::as_str).collect();
        match self.inner.key(&peer.to_cow()?, &hops) {
            Ok(key) => Ok(PyString::new(py, &key)),
            Err(_) => Ok(peer.clone()),
        }
    }

    /// The key of a request from `peer` with no forwarded hops, remembered.
    fn cached<'py>(
        &self,
        py: Python<'py>,
        peer: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyString>> {
        let text = peer.to_cow()?;
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = known.get(text.as_ref()) {
            return Ok(key.bind(py).clone());
        }
        let key = self.key_or_peer(py, peer, &[])?;
        if known.len() >= KNOWN_PEERS {
            known.clear();
        }
        known.insert(text.into_owned(), key.clone().unbind());
        Ok(key)
    }
}

/// The key function of one request header's first value (an API key, a
/// tenant); a request without the header gets `default` (`None`: the
/// policy does not apply to it). Called with an `sds.web.Request`, it asks
/// the request; a route reads the ASGI scope's or WSGI environ's header
/// itself, without a Python call.
#[pyclass(frozen, module = "sds._native")]
pub struct HeaderKey {
    name: Py<PyString>,
    header: HeaderName,
    default: Option<Py<PyAny>>,
}

#[pymethods]
impl HeaderKey {
    #[new]
    #[pyo3(signature = (name, default = None))]
    fn new(name: &Bound<'_, PyAny>, default: Option<Bound<'_, PyAny>>) -> PyResult<HeaderKey> {
        let py = name.py();
        let token = name
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok().map(str::to_owned))
            .filter(|t| !t.is_empty() && t.bytes().all(is_token_byte));
        let Some(token) = token else {
            let message = format!(
                "header name must be a non-empty str of token characters, not {}",
                name.repr()?
            );
            return Err(errors::argument(py, message));
        };
        let default = default.filter(|d| !d.is_none());
        if let Some(d) = &default {
            if !d.is_instance_of::<PyString>() && !d.is_instance_of::<PyBytes>() {
                let message = format!(
                    "header default must be a str, bytes or None, not {}",
                    d.repr()?
                );
                return Err(errors::argument(py, message));
            }
        }
        Ok(HeaderKey {
            name: PyString::new(py, &token).unbind(),
            header: HeaderName::new(py, &token),
            default: default.map(Bound::unbind),
        })
    }

    /// The key of `request` (an `sds.web.Request`): the header's first
    /// value, else the default.
    fn __call__<'py>(&self, request: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = request.py();
        let value = request.call_method1("header", (self.name.bind(py),))?;
        Ok(self.or_default(py, (!value.is_none()).then_some(value)))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("sds.web.header({})", self.name.bind(py).repr()?))
    }
}

impl HeaderKey {
    /// The key of the ASGI scope or WSGI environ `raw` (`None`: no key).
    pub(crate) fn key_of<'py>(
        &self,
        raw: &Bound<'py, PyAny>,
        asgi: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let value = self
            .header
            .values(raw, asgi, true)?
            .pop()
            .map(Bound::into_any);
        Ok(Some(self.or_default(raw.py(), value)).filter(|k| !k.is_none()))
    }

    fn or_default<'py>(
        &self,
        py: Python<'py>,
        value: Option<Bound<'py, PyAny>>,
    ) -> Bound<'py, PyAny> {
        match (value, &self.default) {
            (Some(value), _) => value,
            (None, Some(default)) => default.bind(py).clone(),
            (None, None) => py.None().into_bound(py),
        }
    }
}

/// Whether `b` may stand in a header name (RFC 9110's `tchar`).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
