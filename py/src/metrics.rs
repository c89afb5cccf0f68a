//! A client's metrics (`Client.metrics`, `Client.prometheus_text`): the
//! families of `sds_metrics`, read from the client's table, its console
//! agent and cluster sync if it started them, and the process's keyed
//! limits. Nothing is named here: families, help and labels are the crate's.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use sds_metrics::{Collected, Format, Sources};

use crate::background;
use crate::table::Inner;

/// What a collection of this client reads: its table and services.
fn sources(inner: &Inner) -> Sources<'_> {
    Sources {
        table: Some(&inner.table),
        agent: background::state(&inner.admin),
        cluster: background::state(&inner.cluster),
    }
}

/// Collects at `now_ms` with the interpreter released (a shared table's
/// view, a service's status lock).
fn collect(py: Python<'_>, inner: &Inner, now_ms: u64) -> Vec<Collected> {
    py.detach(|| inner.exporter.collect(&sources(inner), now_ms))
}

/// Every family as `(name, kind, help, label_names, samples)`, each sample
/// `(label_values, value)`; families in the crate's order, a family with
/// nothing to show with no samples.
pub fn families<'py>(py: Python<'py>, inner: &Inner, now_ms: u64) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for collected in collect(py, inner, now_ms) {
        let family = collected.family;
        let samples = PyList::empty(py);
        for sample in &collected.samples {
            let labels = PyTuple::new(py, &sample.labels)?;
            samples.append((labels, sample.value))?;
        }
        let labels = PyTuple::new(py, family.labels)?;
        let kind = PyString::intern(py, family.kind.as_str());
        out.append((family.name, kind, family.help, labels, samples))?;
    }
    Ok(out)
}

/// The Prometheus text (0.0.4) or OpenMetrics 1.0 text of every family.
pub fn text(py: Python<'_>, inner: &Inner, now_ms: u64, openmetrics: bool) -> String {
    let format = match openmetrics {
        true => Format::OpenMetrics,
        false => Format::Prometheus,
    };
    // Written as the tables are read: no sample is kept on the way.
    py.detach(|| sds_metrics::exposition(&inner.exporter, &sources(inner), now_ms, format))
}

/// The `Content-Type` of that text.
pub fn content_type(openmetrics: bool) -> &'static str {
    match openmetrics {
        true => Format::OpenMetrics.content_type(),
        false => Format::Prometheus.content_type(),
    }
}
