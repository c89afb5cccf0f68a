//! Metrics of sds-native, defined once for every binding: the families
//! ([`FAMILIES`]: names, types, help, labels), their samples read from a
//! point table, the process's keyed limits and the console agent and
//! cluster sync ([`Exporter::collect`]), and their Prometheus or
//! OpenMetrics text ([`render`]). Bindings turn [`Collected`] into their
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
pub use text::{render, Format};

/// [`Exporter::collect`] then [`render`]: a client's exposition.
pub fn exposition(
    exporter: &Exporter,
    sources: &Sources<'_>,
    now_ms: u64,
    format: Format,
) -> String {
    render(&exporter.collect(sources, now_ms), format)
}
