//! How `sds.web` reads a request, an ASGI scope or a WSGI environ: its
//! peer and its headers. One place for the rules that the request views
//! (`sds.asgi.AsgiRequest`, `sds.wsgi.WsgiRequest`) and a route's native
//! keys (`ClientAddress`, `HeaderKey`) both follow.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

/// `raw[name]`, `None` when absent or `None`: a dict (what servers give)
/// read directly, any other mapping by its `get`.
fn item<'py>(
    raw: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let found = match raw.cast::<PyDict>() {
        Ok(dict) => dict.get_item(name)?,
        Err(_) => Some(raw.call_method1("get", (name,))?),
    };
    Ok(found.filter(|v| !v.is_none()))
}

/// The socket peer's address: the scope's `client[0]`, the environ's
/// `REMOTE_ADDR`; `None` when the server gives none.
pub(crate) fn peer_of<'py>(
    raw: &Bound<'py, PyAny>,
    asgi: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = raw.py();
    // Interned once per process: a lookup by a new string hashes it each time.
    let name = if asgi {
        intern!(py, "client")
    } else {
        intern!(py, "REMOTE_ADDR")
    };
    match item(raw, name)? {
        Some(found) if found.is_truthy()? && asgi => Ok(Some(found.get_item(0)?)),
        Some(found) if found.is_truthy()? => Ok(Some(found)),
        _ => Ok(None),
    }
}

/// A header's name as each kind of request holds it.
pub(crate) struct HeaderName {
    /// ASGI's: lower-case bytes.
    lower: Vec<u8>,
    /// A WSGI environ's: `HTTP_X_API_KEY`, `CONTENT_TYPE`.
    environ: Py<PyString>,
}

impl HeaderName {
    pub(crate) fn new(py: Python<'_>, name: &str) -> HeaderName {
        let upper = name.to_ascii_uppercase().replace('-', "_");
        let environ = match upper.as_str() {
            "CONTENT_TYPE" | "CONTENT_LENGTH" => upper,
            _ => format!("HTTP_{upper}"),
        };
        HeaderName {
            lower: name.to_ascii_lowercase().into_bytes(),
            environ: PyString::intern(py, &environ).unbind(),
        }
    }

    /// The header's values in `raw`, in order (only the first when
    /// `first`): ASGI's bytes as Latin-1 text; a WSGI environ's one value
    /// (its server joins repeated headers with ", ").
    pub(crate) fn values<'py>(
        &self,
        raw: &Bound<'py, PyAny>,
        asgi: bool,
        first: bool,
    ) -> PyResult<Vec<Bound<'py, PyString>>> {
        let py = raw.py();
        if !asgi {
            return Ok(match item(raw, self.environ.bind(py))? {
                Some(value) => vec![value.str()?],
                None => Vec::new(),
            });
        }
        let mut values = Vec::new();
        for pair in raw.get_item("headers")?.try_iter()? {
            let pair = pair?;
            if pair.get_item(0)?.cast::<PyBytes>()?.as_bytes() != self.lower.as_slice() {
                continue;
            }
            let value = pair.get_item(1)?;
            let text: String = value
                .cast::<PyBytes>()?
                .as_bytes()
                .iter()
                .map(|&b| char::from(b))
                .collect();
            values.push(PyString::new(py, &text));
            if first {
                break;
            }
        }
        Ok(values)
    }
}

/// The peer's address of an ASGI scope (`asgi`) or a WSGI environ; `None`
/// when the server gives none.
#[pyfunction]
pub fn request_peer<'py>(
    raw: &Bound<'py, PyAny>,
    asgi: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    peer_of(raw, asgi)
}

/// The values of header `name` (any case) in an ASGI scope (`asgi`) or a
/// WSGI environ, in order; only the first when `first`.
#[pyfunction]
#[pyo3(signature = (raw, asgi, name, first = false))]
pub fn request_header_values<'py>(
    raw: &Bound<'py, PyAny>,
    asgi: bool,
    name: &str,
    first: bool,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    HeaderName::new(raw.py(), name).values(raw, asgi, first)
}
