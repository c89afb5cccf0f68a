//! Metrics of sds-native, defined once for every binding: the families
//! ([`FAMILIES`]: names, types, help, labels), their samples read from a
//! point table, the process's keyed limits and the console agent and
//! cluster sync ([`Exporter::collect`]), and their Prometheus or
//! OpenMetrics text ([`exposition`], written as the tables are read, or
//! [`render`] of a collection). Bindings turn [`Collected`] into their
//! registries' metrics (prometheus_client, prom-client, Micrometer,
//! OpenTelemetry) or return the text.
//!
//! On a shared table every count is the host's: any process's collection
//! shows every process's counts once.

mod collect;
mod family;
mod registry;
mod text;

pub use collect::{table_label, Collected, Exporter, Sample, ServiceState, Sources};
pub use family::{Family, Id, Kind, FAMILIES};
pub use registry::{keyed_label, register_keyed};
pub use text::{exposition, render, Format};
