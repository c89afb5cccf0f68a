//! `Strategy`: a point's thresholds. Keywords are the core's snake_case
//! names, dict keys its SDS JSON names, JSON text goes to the core's parser:
//! no field list lives in the binding.

use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyString};
use sds_core::{Error, ErrorCode, Field, Rule, POINT_KEY};

use crate::{args, errors};

/// A point's thresholds; every field not given keeps the SDS default.
#[pyclass(frozen, eq, hash, module = "sds._native")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Strategy {
    pub inner: sds_core::Strategy,
}

fn not_integer(py: Python<'_>, field: Field, v: &Bound<'_, PyAny>) -> PyErr {
    let rule = if v.cast::<PyInt>().is_ok() && !v.is_instance_of::<PyBool>() {
        Rule::OutOfRange
    } else {
        Rule::NotAnInteger
    };
    errors::core(py, Error::InvalidStrategy { field, rule })
}

/// A field's value: a Python int within i64 (bools, floats, NaN and strings
/// are rejected, naming the field).
fn value(field: Field, v: &Bound<'_, PyAny>) -> PyResult<i64> {
    let py = v.py();
    let int = args::int(v, field.json_name()).map_err(|_| not_integer(py, field, v))?;
    int.extract::<i64>().map_err(|_| not_integer(py, field, v))
}

fn unknown(py: Python<'_>, key: &str) -> PyErr {
    errors::raise(
        py,
        ErrorCode::UnknownField,
        format!("unknown strategy field \"{key}\""),
        Some(key),
    )
}

fn key_str<'py>(k: &Bound<'py, PyAny>) -> PyResult<String> {
    match k.cast::<PyString>() {
        Ok(s) => Ok(args::utf8(s, "a strategy key", ErrorCode::InvalidArgument)?.into_owned()),
        Err(_) => Err(errors::argument(
            k.py(),
            "strategy keys must be str".to_string(),
        )),
    }
}

fn checked(py: Python<'_>, s: sds_core::Strategy) -> PyResult<Strategy> {
    s.validate().map_err(|e| errors::core(py, e))?;
    Ok(Strategy { inner: s })
}

impl Strategy {
    /// From keywords in snake_case (`visit_threshold=10`).
    pub fn from_keywords(py: Python<'_>, fields: Option<&Bound<'_, PyDict>>) -> PyResult<Strategy> {
        let mut s = sds_core::Strategy::DEFAULT;
        for (k, v) in fields.into_iter().flat_map(|d| d.iter()) {
            let key = key_str(&k)?;
            let field = Field::from_snake_name(&key).ok_or_else(|| unknown(py, &key))?;
            s.set(field, value(field, &v)?);
        }
        checked(py, s)
    }

    /// From a dict of SDS JSON names (`{"visitThreshold": 10}`); a `"point"`
    /// key, as SDS's strategy objects carry, is skipped.
    pub fn from_mapping(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<Strategy> {
        let mut s = sds_core::Strategy::DEFAULT;
        for (k, v) in d.iter() {
            let key = key_str(&k)?;
            if key == POINT_KEY {
                continue;
            }
            // The field is needed first to name it when the value is bad.
            let field = Field::from_json_name(&key).ok_or_else(|| unknown(py, &key))?;
            let n = value(field, &v)?;
            s.set_key(&key, n).map_err(|e| errors::json(py, e))?;
        }
        checked(py, s)
    }

    /// From SDS strategy JSON text, through the core's parser.
    pub fn from_text(py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<Strategy> {
        let text = args::utf8(text, "strategy JSON text", ErrorCode::InvalidJson)?;
        let s = sds_core::Strategy::from_json(&text).map_err(|e| errors::json(py, e))?;
        Ok(Strategy { inner: s })
    }

    /// A `Strategy`, a dict of SDS JSON names, or a JSON string.
    pub fn from_any(v: &Bound<'_, PyAny>) -> PyResult<Strategy> {
        let py = v.py();
        if let Ok(s) = v.cast::<Strategy>() {
            return Ok(s.get().clone());
        }
        if let Ok(d) = v.cast::<PyDict>() {
            return Strategy::from_mapping(py, d);
        }
        if let Ok(t) = v.cast::<PyString>() {
            return Strategy::from_text(py, t);
        }
        Err(errors::argument(
            py,
            "strategy must be an sds.Strategy, a dict of SDS names or a JSON str".to_string(),
        ))
    }
}

#[pymethods]
impl Strategy {
    #[new]
    #[pyo3(signature = (**fields))]
    fn new(py: Python<'_>, fields: Option<&Bound<'_, PyDict>>) -> PyResult<Strategy> {
        Strategy::from_keywords(py, fields)
    }

    /// Parses SDS strategy JSON (`'{"visitThreshold": 10}'`).
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<Strategy> {
        match text.cast::<PyString>() {
            Ok(t) => Strategy::from_text(text.py(), t),
            Err(_) => Err(errors::argument(
                text.py(),
                "JSON text must be a str".to_string(),
            )),
        }
    }

    /// From a dict keyed by SDS JSON names.
    #[staticmethod]
    fn from_dict(d: &Bound<'_, PyAny>) -> PyResult<Strategy> {
        match d.cast::<PyDict>() {
            Ok(d) => Strategy::from_mapping(d.py(), d),
            Err(_) => Err(errors::argument(d.py(), "expected a dict".to_string())),
        }
    }

    /// Every field under its SDS JSON name.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for &f in Field::ALL {
            d.set_item(f.json_name(), self.inner.get(f))?;
        }
        Ok(d)
    }

    /// The snake_case field names, in SDS's order.
    #[staticmethod]
    fn fields() -> Vec<&'static str> {
        Field::ALL.iter().map(|f| f.snake_name()).collect()
    }

    /// Pickles (and copies) as `Strategy.from_dict(self.to_dict())`.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyDict>,))> {
        let from_dict = py.get_type::<Strategy>().getattr("from_dict")?;
        Ok((from_dict, (self.to_dict(py)?,)))
    }

    fn __getattr__(&self, name: &str) -> PyResult<i64> {
        Field::from_snake_name(name)
            .map(|f| self.inner.get(f))
            .ok_or_else(|| PyAttributeError::new_err(format!("Strategy has no field {name:?}")))
    }

    fn __repr__(&self) -> String {
        let set: Vec<String> = Field::ALL
            .iter()
            .filter(|f| self.inner.get(**f) != f.default_value())
            .map(|f| format!("{}={}", f.snake_name(), self.inner.get(*f)))
            .collect();
        format!("Strategy({})", set.join(", "))
    }
}
