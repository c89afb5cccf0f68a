//! The metric families, once for every binding: name, type, help and
//! label names. README.md says why each name is what it is.

/// A family's type, as Prometheus and OpenMetrics name it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Only grows over the life of what it counts (the process's for a
    /// private table, the file's for a shared one).
    Counter,
    /// A value now.
    Gauge,
}

impl Kind {
    /// `counter` or `gauge`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// One metric family.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Family {
    /// The family's name, without the `_total` a counter's samples get
    /// (OpenMetrics' family name; prometheus_client and Micrometer add the
    /// suffix themselves).
    pub name: &'static str,
    /// Counter or gauge.
    pub kind: Kind,
    /// The help text.
    pub help: &'static str,
    /// Its labels' names, in the order of every sample's values.
    pub labels: &'static [&'static str],
}

impl Family {
    /// The samples' name in the Prometheus text format: the name, plus
    /// `_total` for a counter.
    pub fn sample_name(&self) -> String {
        match self.kind {
            Kind::Counter => format!("{}_total", self.name),
            Kind::Gauge => self.name.to_string(),
        }
    }
}

const POINT: &[&str] = &["table", "point"];
const TABLE: &[&str] = &["table"];
const LIMIT: &[&str] = &["limit"];

macro_rules! families {
    ($($id:ident: $name:literal, $kind:ident, $labels:expr, $help:literal;)+) => {
        /// Every family, by its place in [`FAMILIES`].
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Id {
            $(#[doc = $help] $id,)+
        }

        /// Every family, in the order expositions list them.
        pub const FAMILIES: &[Family] = &[
            $(Family { name: $name, kind: Kind::$kind, help: $help, labels: $labels },)+
        ];
    };
}

families! {
    PointRequests: "sds_point_requests", Counter, POINT,
        "Requests a point decided (SDS's visits), admitted or downgraded.";
    PointDowngrades: "sds_point_downgrades", Counter, &["table", "point", "reason"],
        "Requests a point downgraded, by the rule that downgraded them.";
    PointExceptions: "sds_point_exceptions", Counter, POINT,
        "Requests that ended in an exception, counted at their start.";
    PointTimeouts: "sds_point_timeouts", Counter, POINT,
        "Requests slower than the point's timeoutThreshold, counted at their start.";
    PointInFlight: "sds_point_in_flight", Gauge, POINT,
        "Requests holding a point's concurrency permit now.";
    PointInFlightMax: "sds_point_in_flight_max", Gauge, POINT,
        "The most requests in flight at once at a point during the last whole 10 s cycle.";
    PointAdaptiveLimit: "sds_point_adaptive_limit", Gauge, POINT,
        "The in-flight limit a point's adaptive concurrency found (points with adaptiveConcurrency only).";
    TablePoints: "sds_table_points", Gauge, TABLE,
        "Points in the table.";
    TablePointsCapacity: "sds_table_points_capacity", Gauge, TABLE,
        "Points the table can hold.";
    KeyedDecisions: "sds_keyed_decisions", Counter, &["limit", "outcome"],
        "Decisions of a keyed limit, admitted or refused.";
    KeyedKeys: "sds_keyed_keys", Gauge, LIMIT,
        "Keys a keyed limit's table holds now.";
    KeyedKeysCapacity: "sds_keyed_keys_capacity", Gauge, LIMIT,
        "Keys a keyed limit's table can hold.";
    KeyedEvictions: "sds_keyed_evictions", Counter, LIMIT,
        "Keys whose cell was given to another key.";
    KeyedLossyEvictions: "sds_keyed_lossy_evictions", Counter, LIMIT,
        "Evicted keys whose state was not a fresh key's: their next call started afresh.";
    AgentUp: "sds_agent_up", Gauge, TABLE,
        "1 while this process runs the console agent, 0 once stopped.";
    AgentLastPullSuccess: "sds_agent_last_pull_success", Gauge, TABLE,
        "1 if the agent's last pull of strategies from the console succeeded.";
    AgentLastPullTimestamp: "sds_agent_last_pull_timestamp_seconds", Gauge, TABLE,
        "When the agent's last pull ended, Unix seconds (0: none yet).";
    AgentLastUploadSuccess: "sds_agent_last_upload_success", Gauge, TABLE,
        "1 if the agent's last upload of statistics succeeded.";
    AgentLastUploadTimestamp: "sds_agent_last_upload_timestamp_seconds", Gauge, TABLE,
        "When the agent's last upload ended, Unix seconds (0: none yet).";
    AgentPullFailures: "sds_agent_pull_failures", Counter, TABLE,
        "Pulls of strategies that failed since the agent started.";
    AgentUploads: "sds_agent_uploads", Counter, TABLE,
        "Uploads of statistics delivered since the agent started.";
    AgentUploadFailures: "sds_agent_upload_failures", Counter, TABLE,
        "Uploads of statistics that failed since the agent started.";
    AgentReporter: "sds_agent_reporter", Gauge, TABLE,
        "1 if this process is the host's reporter (the one that uploads).";
    AgentStrategyVersion: "sds_agent_strategy_version", Gauge, TABLE,
        "The console's strategy version in force (0: none yet, -1: the console sends none).";
    AgentStrategiesWaiting: "sds_agent_strategies_waiting", Gauge, TABLE,
        "Strategies of the set in force waiting for room in the table.";
    ClusterUp: "sds_cluster_up", Gauge, TABLE,
        "1 while this process runs the cluster sync, 0 once stopped.";
    ClusterConnected: "sds_cluster_connected", Gauge, TABLE,
        "1 if the last sync reached Redis for at least one point.";
    ClusterSyncing: "sds_cluster_syncing", Gauge, TABLE,
        "1 if this process holds the host's syncer role.";
    ClusterLastSyncTimestamp: "sds_cluster_last_sync_timestamp_seconds", Gauge, TABLE,
        "When the last sync that reached Redis ended, Unix seconds (0: none yet).";
    ClusterLag: "sds_cluster_lag_seconds", Gauge, TABLE,
        "How old the other instances' counts are: now minus the last sync.";
    ClusterRoundTripTime: "sds_cluster_round_trip_seconds", Gauge, TABLE,
        "The last successful sync's time in Redis.";
    ClusterSyncs: "sds_cluster_syncs", Counter, TABLE,
        "Syncs that succeeded since the sync started.";
    ClusterFailures: "sds_cluster_failures", Counter, TABLE,
        "Failed connection attempts and round trips since the sync started.";
    ClusterRoundTrips: "sds_cluster_round_trips", Counter, TABLE,
        "Round trips sent to Redis since the sync started.";
    ClusterCommands: "sds_cluster_commands", Counter, TABLE,
        "Redis commands sent since the sync started.";
    ClusterPoints: "sds_cluster_points", Gauge, TABLE,
        "Cluster points being synced.";
    ClusterPointsFailing: "sds_cluster_points_failing", Gauge, TABLE,
        "Cluster points whose last sync failed while others succeeded.";
}

impl Id {
    /// The family.
    pub fn family(self) -> &'static Family {
        &FAMILIES[self as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_prometheus_conventions() {
        let mut seen = std::collections::HashSet::new();
        for f in FAMILIES {
            assert!(f.name.starts_with("sds_"), "{}", f.name);
            assert!(f
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
            assert!(
                !f.name.ends_with("_total"),
                "{}: the suffix is the renderer's",
                f.name
            );
            assert!(
                f.kind == Kind::Gauge || !f.name.ends_with("_seconds"),
                "{}: a counter of seconds would be _seconds_total",
                f.name
            );
            assert!(f.help.ends_with('.') && !f.help.contains('\n'));
            assert!(seen.insert(f.sample_name()), "{} twice", f.name);
        }
        assert_eq!(
            Id::ClusterPointsFailing.family().name,
            "sds_cluster_points_failing"
        );
        assert_eq!(
            Id::PointRequests.family().sample_name(),
            "sds_point_requests_total"
        );
    }
}
