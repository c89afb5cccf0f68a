//! `NativeCluster`: cluster points of one client's table, synced with Redis
//! by `sds-cluster` on a thread of its own. The translation only: which
//! configs are refused, the sync, the error bound and what happens while
//! Redis is down are the cluster crate's (`cluster/README.md`);
//! `lib/cluster.js` builds `ClusterSync` on it.
//!
//! The syncer thread never calls into JavaScript, so it holds no event
//! loop open. Exact decisions run as N-API async work (libuv's thread pool):
//! the round trip blocks a pool thread, not the event loop.

use std::sync::{Arc, RwLock};

use napi::bindgen_prelude::{AsyncTask, FromNapiValue, ObjectFinalize, ToNapiValue, Unknown};
use napi::{Env, Task};
use napi_derive::napi;
use sds_cluster::{Cluster, Config, Decision, Status, DEFAULT_SYNC_MS, DEFAULT_TIMEOUT_MS};
use sds_core::ErrorCode;
use sds_shm::AnyTable;

use crate::arguments;
use crate::errors::{js_error, SdsError};
use crate::external_memory::release_table;
use crate::tables::NativeTable;

/// The running cluster, `None` once closed. Exact calls in flight hold a
/// read lock; `close` takes the write lock, so it waits for them (each at
/// most one round trip's timeout) and none starts on a stopped cluster.
type Shared = Arc<RwLock<Option<Cluster>>>;

fn cluster_error(error: sds_cluster::Error) -> SdsError {
    js_error(error.code(), error)
}

fn closed() -> SdsError {
    cluster_error(sds_cluster::Error::Closed)
}

/// A cluster syncer's state (`sds_cluster::Status`). Times are UTC ms, 0
/// for never.
#[napi(
    object,
    object_from_js = false,
    use_nullable = true,
    namespace = "native"
)]
pub struct ClusterStatus {
    /// The last sync reached Redis (for at least one point).
    pub connected: bool,
    /// This process holds the host's syncer role (always on a private table).
    pub syncing: bool,
    /// When the last successful sync was.
    pub last_sync_ms: f64,
    /// The age of the remote counts: now minus `lastSyncMs`.
    pub lag_ms: f64,
    /// The last successful round trip, µs.
    pub rtt_us: f64,
    /// Successful syncs.
    pub syncs: f64,
    /// Failed connection attempts and round trips.
    pub failures: f64,
    /// Round trips sent to Redis.
    pub round_trips: f64,
    /// Redis commands sent.
    pub commands: f64,
    /// The last failure's message; `null` once a sync succeeds again.
    pub last_error: Option<String>,
    /// The cluster points synced.
    pub points: f64,
    /// Cluster points whose last sync failed (a Redis Cluster master down).
    pub points_failing: f64,
}

impl From<Status> for ClusterStatus {
    fn from(s: Status) -> ClusterStatus {
        ClusterStatus {
            connected: s.connected,
            syncing: s.syncing,
            last_sync_ms: s.last_sync_ms as f64,
            lag_ms: s.lag_ms as f64,
            rtt_us: s.rtt_us as f64,
            syncs: s.syncs as f64,
            failures: s.failures as f64,
            round_trips: s.round_trips as f64,
            commands: s.commands as f64,
            last_error: s.last_error,
            points: s.points as f64,
            points_failing: s.points_failing as f64,
        }
    }
}

/// An exact decision (`sds_cluster::Decision`).
#[napi(
    object,
    object_from_js = false,
    use_nullable = true,
    namespace = "native"
)]
pub struct ExactDecision {
    /// The request may go on (no `exit` follows).
    pub admitted: bool,
    /// Why it was refused: the core's reason name; `null` when admitted.
    pub reason: Option<&'static str>,
    /// Redis decided (true), or Redis was unreachable and the table decided
    /// locally (false).
    pub exact: bool,
}

impl From<Decision> for ExactDecision {
    fn from(d: Decision) -> ExactDecision {
        ExactDecision {
            admitted: d.admitted,
            reason: d.reason.map(|r| r.as_str()),
            exact: d.exact,
        }
    }
}

/// One exact decision on a pool thread.
pub struct ExactTask {
    cluster: Shared,
    point: String,
    now_ms: u64,
}

impl Task for ExactTask {
    type Output = Result<Decision, (ErrorCode, String)>;
    type JsValue = ExactDecision;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let guard = match self.cluster.read() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        Ok(match guard.as_ref() {
            Some(cluster) => cluster
                .enter_exact(&self.point, self.now_ms)
                .map_err(|e| (e.code(), e.to_string())),
            None => Err((
                sds_cluster::Error::Closed.code(),
                sds_cluster::Error::Closed.to_string(),
            )),
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<ExactDecision> {
        match output {
            Ok(decision) => Ok(decision.into()),
            // The rejection carries the core's code as `err.code`, like every
            // error the addon throws.
            Err((code, message)) => {
                let raw =
                    unsafe { ToNapiValue::to_napi_value(env.raw(), js_error(code, message)) }?;
                let error = unsafe { Unknown::from_napi_value(env.raw(), raw) }?;
                Err(napi::Error::from(error))
            }
        }
    }
}

/// The cluster points of one table and their syncer.
#[napi(namespace = "native", custom_finalize)]
pub struct NativeCluster {
    cluster: Shared,
    // What `status` reads after `close`.
    last_status: Option<Status>,
    // This object's share of the table, given back on this JS thread once
    // the syncer has stopped (see NativeAgent).
    table: Option<Arc<AnyTable>>,
}

impl NativeCluster {
    fn stop(&mut self, env: &Env) {
        let mut guard = match self.cluster.write() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(cluster) = guard.take() {
            self.last_status = Some(cluster.stop());
        }
        drop(guard);
        if let Some(table) = self.table.take() {
            release_table(env.raw(), table);
        }
    }
}

impl ObjectFinalize for NativeCluster {
    // Runs when the environment ends (the process, a worker thread) with the
    // syncer still running: the thread is stopped and joined there.
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        self.stop(&env);
        Ok(())
    }
}

#[napi(namespace = "native")]
impl NativeCluster {
    /// Makes `points` cluster points of `table` and starts their syncer;
    /// `undefined` options take the crate's defaults (100 ms, 1000 ms,
    /// 5000 ms, "sds", no TLS files). Never waits for Redis; reads the TLS
    /// files (the crate checks them).
    #[allow(clippy::too_many_arguments)]
    #[napi(
        constructor,
        ts_args_type = "table: native.NativeTable, urls: string[], points: string[], redisCluster: boolean | undefined, syncMs: number | undefined, timeoutMs: number | undefined, maxBackoffMs: number | undefined, keyPrefix: string | undefined, tlsCaFile: string | undefined, tlsCertFile: string | undefined, tlsKeyFile: string | undefined"
    )]
    pub fn new(
        table: &NativeTable,
        urls: Unknown,
        points: Unknown,
        redis_cluster: Unknown,
        sync_ms: Unknown,
        timeout_ms: Unknown,
        max_backoff_ms: Unknown,
        key_prefix: Unknown,
        tls_ca_file: Unknown,
        tls_cert_file: Unknown,
        tls_key_file: Unknown,
    ) -> Result<NativeCluster, SdsError> {
        let mut config = Config::new(String::new());
        config.urls = arguments::text_list(urls, "urls")?;
        config.points = arguments::text_list(points, "points")?;
        config.redis_cluster =
            arguments::optional_bool(redis_cluster, "redisCluster")?.unwrap_or(false);
        config.sync_ms = arguments::optional_count(sync_ms, "syncMs")?.unwrap_or(DEFAULT_SYNC_MS);
        config.timeout_ms =
            arguments::optional_count(timeout_ms, "timeoutMs")?.unwrap_or(DEFAULT_TIMEOUT_MS);
        if let Some(ms) = arguments::optional_count(max_backoff_ms, "maxBackoffMs")? {
            config.max_backoff_ms = ms;
        }
        if let Some(prefix) = arguments::optional_text(key_prefix, "keyPrefix")? {
            config.key_prefix = prefix;
        }
        config.tls_ca_file = arguments::optional_path(tls_ca_file, "tlsCaFile")?;
        config.tls_cert_file = arguments::optional_path(tls_cert_file, "tlsCertFile")?;
        config.tls_key_file = arguments::optional_path(tls_key_file, "tlsKeyFile")?;
        let cluster = Cluster::start(Arc::clone(&table.table), config).map_err(cluster_error)?;
        Ok(NativeCluster {
            cluster: Arc::new(RwLock::new(Some(cluster))),
            last_status: None,
            table: Some(Arc::clone(&table.table)),
        })
    }

    /// A snapshot of the syncer's state (the last one after `close`).
    #[napi]
    pub fn status(&self) -> ClusterStatus {
        let guard = match self.cluster.read() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        match guard.as_ref() {
            Some(cluster) => cluster.status(),
            None => self.last_status.clone().unwrap_or_default(),
        }
        .into()
    }

    /// One sync on this thread now: blocks for one round trip (at most
    /// `timeoutMs`, a connection if there is none included).
    #[napi]
    pub fn sync_now(&self) -> Result<(), SdsError> {
        let guard = self.cluster.read().map_err(|_| closed())?;
        guard
            .as_ref()
            .ok_or_else(closed)?
            .sync_now()
            .map_err(cluster_error)
    }

    /// Exact mode: one request of the cluster point `point` decided in Redis
    /// at `nowMs` (default: the addon's clock), on libuv's thread pool.
    #[napi(
        ts_args_type = "point: string, nowMs?: number",
        ts_return_type = "Promise<native.ExactDecision>"
    )]
    pub fn enter_exact(
        &self,
        point: Unknown,
        now_ms: Unknown,
    ) -> Result<AsyncTask<ExactTask>, SdsError> {
        let point = arguments::name(point)?;
        let now_ms = arguments::time_or_now(now_ms, "nowMs")?;
        Ok(AsyncTask::new(ExactTask {
            cluster: Arc::clone(&self.cluster),
            point,
            now_ms,
        }))
    }

    /// Stops the syncer and joins its thread (within one round trip's
    /// timeout, after the exact calls in flight). Idempotent.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.stop(&env);
    }

    /// Whether `close` has not been called yet.
    #[napi(getter)]
    pub fn running(&self) -> bool {
        self.table.is_some()
    }
}
