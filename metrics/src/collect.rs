//! [`Exporter::collect`]: every family's samples read at once from a point
//! table, the process's keyed limits and the services, in the one shape
//! bindings turn into their registries' metrics.

use std::sync::Mutex;

use sds_core::{Points, Reason};
use sds_shm::AnyTable;

use crate::family::{Family, Id, FAMILIES};
use crate::registry;

/// One sample: its labels' values (in its family's label order) and value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The values of the family's labels, in order.
    pub labels: Vec<String>,
    /// The value.
    pub value: f64,
}

/// A family and its samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Collected {
    /// The family.
    pub family: &'static Family,
    /// Its samples (none: the family has nothing to show now).
    pub samples: Vec<Sample>,
}

/// A background service's state, as a binding reads it.
#[derive(Clone, Debug)]
pub struct ServiceState<S> {
    /// Its status.
    pub status: S,
    /// Whether it has not been stopped.
    pub running: bool,
}

/// What one collection reads besides the process's keyed limits (which
/// [`crate::register_keyed`] lists).
#[derive(Default)]
pub struct Sources<'a> {
    /// The client's point table.
    pub table: Option<&'a AnyTable>,
    /// The console agent of that table, if one was started.
    pub agent: Option<ServiceState<sds_agent::Status>>,
    /// The cluster sync of that table, if one was started.
    pub cluster: Option<ServiceState<sds_cluster::Status>>,
}

/// Collects metrics. One per client; any thread.
///
/// Every counter only grows as read, in any process, but for one case: a
/// process killed while it takes a second's count out of a point's ring
/// loses that count from the point's visits, exceptions or timeouts
/// (core/src/counters.rs, "Totals"). The exporter keeps the highest value
/// it gave for each of those three per point, by the point's place in its
/// table (points are never removed), so what it gives never goes back.
/// (Downgrades by reason, keyed decisions and evictions are plain adds,
/// and the services' counters their own.)
#[derive(Default)]
pub struct Exporter {
    highest: Mutex<Vec<[u64; 3]>>,
}

/// Receives the samples of a collection, in any order of families.
pub(crate) trait Sink {
    /// A sample of family `id`: its labels' values, in the family's order.
    fn add(&mut self, id: Id, labels: &[&str], value: f64);
}

/// The label of a point table: a shared table's file name, else `private`.
pub fn table_label(table: &AnyTable) -> String {
    match table.path().and_then(|p| p.file_name()) {
        Some(name) => name.to_string_lossy().into_owned(),
        None => "private".to_string(),
    }
}

/// A sink that keeps every sample, family by family.
struct Gather {
    families: Vec<Collected>,
}

impl Gather {
    fn new() -> Gather {
        Gather {
            families: FAMILIES
                .iter()
                .map(|family| Collected {
                    family,
                    samples: Vec::new(),
                })
                .collect(),
        }
    }
}

impl Sink for Gather {
    fn add(&mut self, id: Id, labels: &[&str], value: f64) {
        let out = &mut self.families[id as usize];
        debug_assert_eq!(labels.len(), out.family.labels.len());
        out.samples.push(Sample {
            labels: labels.iter().map(|l| l.to_string()).collect(),
            value,
        });
    }
}

fn flag(on: bool) -> f64 {
    if on {
        1.0
    } else {
        0.0
    }
}

fn seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

impl Exporter {
    /// A new exporter.
    pub fn new() -> Exporter {
        Exporter::default()
    }

    /// Every family's samples at `now_ms` (wall clock), families in
    /// [`FAMILIES`]' order; a family with nothing to show has no samples.
    pub fn collect(&self, sources: &Sources<'_>, now_ms: u64) -> Vec<Collected> {
        let mut out = Gather::new();
        self.visit(sources, now_ms, &mut out);
        out.families
    }

    /// Gives every sample of a collection to `out`.
    pub(crate) fn visit(&self, sources: &Sources<'_>, now_ms: u64, out: &mut dyn Sink) {
        if let Some(table) = sources.table {
            let label = table_label(table);
            let mut highest = self.highest.lock().unwrap_or_else(|e| e.into_inner());
            points(out, table, &label, now_ms, &mut highest);
            drop(highest);
            if let Some(agent) = &sources.agent {
                agent_state(out, &label, agent);
            }
            if let Some(cluster) = &sources.cluster {
                cluster_state(out, &label, cluster);
            }
        }
        for (label, stats) in registry::keyed_stats() {
            let limit = [label.as_str()];
            for (outcome, n) in [("admitted", stats.admitted), ("refused", stats.refused)] {
                out.add(Id::KeyedDecisions, &[&label, outcome], n as f64);
            }
            out.add(Id::KeyedKeys, &limit, stats.resident as f64);
            out.add(Id::KeyedKeysCapacity, &limit, stats.capacity as f64);
            out.add(Id::KeyedEvictions, &limit, stats.evictions as f64);
            out.add(
                Id::KeyedLossyEvictions,
                &limit,
                stats.lossy_evictions as f64,
            );
        }
    }
}

/// `value` raised to the highest given before in `seen`, which keeps it.
fn never_back(seen: &mut u64, value: u64) -> u64 {
    *seen = (*seen).max(value);
    *seen
}

fn points(
    out: &mut dyn Sink,
    table: &AnyTable,
    label: &str,
    now_ms: u64,
    highest: &mut Vec<[u64; 3]>,
) {
    let mut count = 0u64;
    let read = table.with_points(|points: &dyn Points| {
        points.for_each_point(&mut |id, name, point| {
            count += 1;
            let name = String::from_utf8_lossy(name);
            let labels = [label, &name];
            let totals = point.totals();
            let at = id.index() as usize;
            if highest.len() <= at {
                highest.resize(at + 1, [0; 3]);
            }
            let seen = &mut highest[at];
            let visits = never_back(&mut seen[0], totals.visits);
            let exceptions = never_back(&mut seen[1], totals.exceptions);
            let timeouts = never_back(&mut seen[2], totals.timeouts);
            out.add(Id::PointRequests, &labels, visits as f64);
            for reason in Reason::ALL {
                let n = totals.by_reason[reason.code() as usize - 1];
                out.add(
                    Id::PointDowngrades,
                    &[label, &name, reason.as_str()],
                    n as f64,
                );
            }
            out.add(Id::PointExceptions, &labels, exceptions as f64);
            out.add(Id::PointTimeouts, &labels, timeouts as f64);
            out.add(Id::PointInFlight, &labels, point.in_flight() as f64);
            let max = point.max_in_flight_last_cycle(now_ms);
            out.add(Id::PointInFlightMax, &labels, max as f64);
            if let Some(adaptive) = point.adaptive_stats() {
                out.add(Id::PointAdaptiveLimit, &labels, adaptive.limit as f64);
            }
        });
    });
    // A fork child's first view of a shared table can fail: its points are
    // then left out of this collection, the table's size is not.
    let _ = read;
    out.add(Id::TablePoints, &[label], count as f64);
    out.add(Id::TablePointsCapacity, &[label], table.capacity() as f64);
}

fn agent_state(out: &mut dyn Sink, label: &str, agent: &ServiceState<sds_agent::Status>) {
    let s = &agent.status;
    let l = [label];
    out.add(Id::AgentUp, &l, flag(agent.running));
    out.add(Id::AgentLastPullSuccess, &l, flag(s.last_pull_ok));
    out.add(Id::AgentLastPullTimestamp, &l, seconds(s.last_pull_ms));
    out.add(Id::AgentLastUploadSuccess, &l, flag(s.last_upload_ok));
    out.add(Id::AgentLastUploadTimestamp, &l, seconds(s.last_upload_ms));
    out.add(Id::AgentPullFailures, &l, s.pull_failures as f64);
    out.add(Id::AgentUploads, &l, s.uploads as f64);
    out.add(Id::AgentUploadFailures, &l, s.upload_failures as f64);
    out.add(Id::AgentReporter, &l, flag(s.is_reporter));
    out.add(Id::AgentStrategyVersion, &l, s.version as f64);
    out.add(Id::AgentStrategiesWaiting, &l, s.strategies_waiting as f64);
}

fn cluster_state(out: &mut dyn Sink, label: &str, cluster: &ServiceState<sds_cluster::Status>) {
    let s = &cluster.status;
    let l = [label];
    out.add(Id::ClusterUp, &l, flag(cluster.running));
    out.add(Id::ClusterConnected, &l, flag(s.connected));
    out.add(Id::ClusterSyncing, &l, flag(s.syncing));
    out.add(Id::ClusterLastSyncTimestamp, &l, seconds(s.last_sync_ms));
    out.add(Id::ClusterLag, &l, seconds(s.lag_ms));
    out.add(Id::ClusterRoundTripTime, &l, s.rtt_us as f64 / 1e6);
    out.add(Id::ClusterSyncs, &l, s.syncs as f64);
    out.add(Id::ClusterFailures, &l, s.failures as f64);
    out.add(Id::ClusterRoundTrips, &l, s.round_trips as f64);
    out.add(Id::ClusterCommands, &l, s.commands as f64);
    out.add(Id::ClusterPoints, &l, s.points as f64);
    out.add(Id::ClusterPointsFailing, &l, s.points_failing as f64);
}
