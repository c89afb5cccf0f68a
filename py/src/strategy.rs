//! `Strategy`: a point's thresholds. Keywords (snake_case), dict entries
//! (SDS JSON names) and JSON text all go through the core's one strategy
//! input path (`StrategyBuilder`, `Strategy::from_json`): the binding only
//! sorts each Python value into a `Value` and keeps no field list or rule.

use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyString, PyTuple};
use sds_core::{ErrorCode, Field, StrategyBuilder, StrategyError, Value};

use crate::{args, errors};

/// A point's thresholds; every field not given keeps the SDS default.
#[pyclass(frozen, eq, hash, module = "sds._native")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Strategy {
    pub inner: sds_core::Strategy,
}

/// How a mapping's keys name fields: `StrategyBuilder::set` takes SDS
/// JSON names (`visitThreshold`), as dicts give them, `set_snake` snake_case
/// names (`visit_threshold`), as keywords give them.
type SetField = fn(&mut StrategyBuilder, &str, Value) -> Result<(), StrategyError>;

/// A key's text. Keys that are no `str`, or hold a lone surrogate, cannot
/// reach the core (only Python can hold them).
fn key_text<'a>(k: &'a Bound<'_, PyAny>) -> PyResult<std::borrow::Cow<'a, str>> {
    match k.cast::<PyString>() {
        Ok(s) => args::utf8(s, "a strategy key", ErrorCode::InvalidArgument),
        Err(_) => Err(args::wrong(k, "strategy keys must be str")),
    }
}

impl Strategy {
    /// Every (key, value) of `d` through the core's builder, then validated
    /// as a whole; the first rejection is raised.
    fn from_entries(d: &Bound<'_, PyDict>, set: SetField) -> PyResult<Strategy> {
        let py = d.py();
        let rejected = |e: StrategyError| errors::strategy(py, e);
        let mut builder = StrategyBuilder::new();
        for (k, v) in d.iter() {
            set(&mut builder, &key_text(&k)?, args::value(&v)).map_err(rejected)?;
        }
        let inner = builder.build().map_err(rejected)?;
        Ok(Strategy { inner })
    }

    /// From SDS strategy JSON text, through the core's reader.
    fn from_text(text: &Bound<'_, PyString>) -> PyResult<Strategy> {
        let py = text.py();
        let text = args::utf8(text, "strategy JSON text", ErrorCode::InvalidJson)?;
        let inner = sds_core::Strategy::from_json(&text).map_err(|e| errors::strategy(py, e))?;
        Ok(Strategy { inner })
    }

    /// A `Strategy`, a dict of SDS JSON names, or a JSON string.
    pub fn from_any(v: &Bound<'_, PyAny>) -> PyResult<Strategy> {
        if let Ok(s) = v.cast::<Strategy>() {
            return Ok(s.get().clone());
        }
        if let Ok(d) = v.cast::<PyDict>() {
            return Strategy::from_entries(d, StrategyBuilder::set);
        }
        if let Ok(t) = v.cast::<PyString>() {
            return Strategy::from_text(t);
        }
        Err(args::wrong(
            v,
            "strategy must be an sds.Strategy, a dict of SDS names or a JSON str",
        ))
    }
}

/// Adds one read-only property per field of the core's table
/// (`s.visit_threshold`), so each field is a real attribute that the stubs
/// type and stubtest checks.
pub fn add_field_properties(py: Python<'_>) -> PyResult<()> {
    let class = py.get_type::<Strategy>();
    let property = py.import("builtins")?.getattr("property")?;
    for &field in Field::ALL {
        let get = PyCFunction::new_closure(
            py,
            None,
            None,
            move |args: &Bound<'_, PyTuple>, _: Option<&Bound<'_, PyDict>>| -> PyResult<i64> {
                Ok(args.get_item(0)?.cast::<Strategy>()?.get().inner.get(field))
            },
        )?;
        let doc = format!("`{}` in SDS JSON.", field.json_name());
        let prop = property.call1((get, py.None(), py.None(), doc))?;
        class.setattr(field.snake_name(), prop)?;
    }
    Ok(())
}

#[pymethods]
impl Strategy {
    #[new]
    #[pyo3(signature = (**fields))]
    fn new(fields: Option<&Bound<'_, PyDict>>) -> PyResult<Strategy> {
        let default = Strategy {
            inner: sds_core::Strategy::DEFAULT,
        };
        fields.map_or(Ok(default), |f| {
            Strategy::from_entries(f, StrategyBuilder::set_snake)
        })
    }

    /// Parses SDS strategy JSON (`'{"visitThreshold": 10}'`).
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<Strategy> {
        let t = text.cast::<PyString>();
        Strategy::from_text(t.map_err(|_| args::wrong(text, "JSON text must be a str"))?)
    }

    /// From a dict keyed by SDS JSON names.
    #[staticmethod]
    fn from_dict(d: &Bound<'_, PyAny>) -> PyResult<Strategy> {
        let dict = d
            .cast::<PyDict>()
            .map_err(|_| args::wrong(d, "expected a dict"))?;
        Strategy::from_entries(dict, StrategyBuilder::set)
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

    fn __repr__(&self) -> String {
        let set: Vec<String> = Field::ALL
            .iter()
            .filter(|f| self.inner.get(**f) != f.default_value())
            .map(|f| format!("{}={}", f.snake_name(), self.inner.get(*f)))
            .collect();
        format!("Strategy({})", set.join(", "))
    }
}
