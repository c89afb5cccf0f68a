//! `sds._native`: the Python binding of sds-core. It converts types, reads
//! the clock and maps errors; the sugar (decorator, error classes) lives in
//! the `sds` package beside it (`python/sds`).

mod args;
mod background;
mod entry;
mod errors;
mod fast;
mod guard;
mod http;
mod keys;
mod metrics;
mod request;
mod route;
mod services;
mod settings;
mod strategy;
mod table;
mod window;
mod wsgi;

use pyo3::prelude::*;

/// The extension module `sds._native`.
#[pymodule(gil_used = false)]
mod _native {
    use pyo3::prelude::*;
    use pyo3::types::PyTuple;
    use sds_core::{Reason, MAX_CAPACITY, MAX_NAME_LEN};
    use sds_settings::Fields;

    #[pymodule_export]
    use crate::{
        background::_stop_services,
        entry::Entry,
        errors::_register_errors,
        guard::Guarded,
        http::{check_policy_name, ClientAddress, HeaderKey},
        keys::{_register_key_results, table_path, Keys},
        request::{request_header_values, request_peer},
        route::{Admission, RoutePlan},
        services::{Agent, Cluster},
        strategy::Strategy,
        table::{PointHandle, Table},
        window::SlidingWindow,
        wsgi::{WsgiGate, WsgiResponse},
    };

    /// The wall-clock time in ms that calls without `now_ms` use.
    #[pyfunction]
    fn now_ms() -> u64 {
        sds_clock::now_ms()
    }

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        let py = m.py();
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add("ERROR_CODES", crate::errors::code_table(py)?)?;
        let reasons: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        m.add("REASONS", PyTuple::new(py, reasons)?)?;
        m.add("MAX_CAPACITY", MAX_CAPACITY)?;
        m.add("MAX_NAME_LEN", MAX_NAME_LEN)?;
        // Which wall clock `now_ms` reads (sds-clock chooses it per machine).
        m.add("CLOCK", sds_clock::source())?;
        // The statuses' fields, which sds.AgentStatus and sds.ClusterStatus
        // name (a test checks they agree).
        let statuses = [
            ("AGENT_STATUS_FIELDS", sds_agent::Status::NAMES),
            ("CLUSTER_STATUS_FIELDS", sds_cluster::Status::NAMES),
        ];
        for (name, fields) in statuses {
            m.add(name, PyTuple::new(py, fields)?)?;
        }
        crate::fast::install_all(py)?;
        crate::strategy::add_field_properties(py)?;
        Ok(())
    }
}
