//! `NativeMetrics`: one client's `sds_metrics::Exporter`. A collection
//! reads the client's table, its console agent and cluster sync (the
//! services `lib/services.js` keeps for it) and every keyed limit of the
//! process (`keys.rs` lists each one as it opens), at the wall clock unless
//! told a time. Families, names, help and labels are the crate's: this
//! only hands them to JavaScript (`lib/metrics.js` builds the samples'
//! objects and the prom-client and OpenTelemetry adapters), or renders the
//! crate's text.

use napi::bindgen_prelude::{ClassInstance, Unknown};
use napi_derive::napi;
use sds_metrics::{exposition, Collected, Exporter, Format, Sources};

use crate::arguments;
use crate::errors::SdsError;
use crate::service::NativeService;
use crate::tables::NativeTable;

/// One family and its samples, flat: sample `i` has the label values
/// `labelValues[i * labelNames.length ..][.. labelNames.length]` and the
/// value `values[i]`.
#[napi(object, object_from_js = false, namespace = "native")]
pub struct CollectedFamily {
    /// The family's name (a counter's without `_total`).
    pub name: &'static str,
    /// Its samples' name in the Prometheus text: a counter's with `_total`.
    pub sample_name: String,
    /// `counter` or `gauge`.
    #[napi(js_name = "type", ts_type = "'counter' | 'gauge'")]
    pub kind: &'static str,
    /// The help text.
    pub help: &'static str,
    /// The labels' names, in the order of each sample's values.
    pub label_names: Vec<&'static str>,
    /// Every sample's label values, one sample after another.
    pub label_values: Vec<String>,
    /// Every sample's value.
    pub values: Vec<f64>,
}

fn family(collected: Collected) -> CollectedFamily {
    let family = collected.family;
    let mut label_values = Vec::with_capacity(collected.samples.len() * family.labels.len());
    let mut values = Vec::with_capacity(collected.samples.len());
    for sample in collected.samples {
        label_values.extend(sample.labels);
        values.push(sample.value);
    }
    CollectedFamily {
        name: family.name,
        sample_name: family.sample_name(),
        kind: family.kind.as_str(),
        help: family.help,
        label_names: family.labels.to_vec(),
        label_values,
        values,
    }
}

/// The exporter of one client: counters it gives never go back.
#[napi(namespace = "native")]
pub struct NativeMetrics {
    exporter: Exporter,
}

/// What a collection reads: a client's table and services.
fn sources<'a>(
    table: &'a NativeTable,
    agent: Option<ClassInstance<NativeService>>,
    cluster: Option<ClassInstance<NativeService>>,
) -> Sources<'a> {
    Sources {
        table: Some(&table.table),
        agent: agent.and_then(|a| a.agent_state()),
        cluster: cluster.and_then(|c| c.cluster_state()),
    }
}

#[napi(namespace = "native")]
impl NativeMetrics {
    /// A new exporter.
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> NativeMetrics {
        NativeMetrics {
            exporter: Exporter::new(),
        }
    }

    /// Every family's samples (a family with nothing to show has none) of
    /// `table`, its `agent` and `cluster` services (an agent and a cluster
    /// sync, or `null`) and the process's keyed limits, at `nowMs`
    /// (default: the addon's clock).
    #[napi(
        ts_args_type = "table: native.NativeTable, agent: native.NativeService | null, cluster: native.NativeService | null, nowMs?: number"
    )]
    pub fn collect(
        &self,
        table: &NativeTable,
        agent: Option<ClassInstance<NativeService>>,
        cluster: Option<ClassInstance<NativeService>>,
        now_ms: Unknown,
    ) -> Result<Vec<CollectedFamily>, SdsError> {
        let now = arguments::time_or_now(now_ms, "nowMs")?;
        let collected = self.exporter.collect(&sources(table, agent, cluster), now);
        Ok(collected.into_iter().map(family).collect())
    }

    /// `collect` as the Prometheus text format (0.0.4), or OpenMetrics 1.0
    /// text with `openMetrics`.
    #[napi(
        ts_args_type = "table: native.NativeTable, agent: native.NativeService | null, cluster: native.NativeService | null, openMetrics: boolean, nowMs?: number"
    )]
    pub fn text(
        &self,
        table: &NativeTable,
        agent: Option<ClassInstance<NativeService>>,
        cluster: Option<ClassInstance<NativeService>>,
        open_metrics: bool,
        now_ms: Unknown,
    ) -> Result<String, SdsError> {
        let now = arguments::time_or_now(now_ms, "nowMs")?;
        let sources = sources(table, agent, cluster);
        // Written as the tables are read: no sample is kept on the way.
        Ok(exposition(
            &self.exporter,
            &sources,
            now,
            format(open_metrics),
        ))
    }

    /// The HTTP `Content-Type` of `text`'s format.
    #[napi]
    pub fn content_type(open_metrics: bool) -> &'static str {
        format(open_metrics).content_type()
    }
}

fn format(open_metrics: bool) -> Format {
    if open_metrics {
        Format::OpenMetrics
    } else {
        Format::Prometheus
    }
}
