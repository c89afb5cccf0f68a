//! `NativeCluster`: cluster points of one client's table, synced with Redis
//! by `sds-cluster` on a thread of its own. The translation only: the
//! settings and which configs are refused (the options object goes to
//! `Config::from_settings` whole, see `settings.rs`), the sync, the error
//! bound and what happens while Redis is down are the cluster crate's
//! (`cluster/README.md`); the life cycle is `service.rs`'s;
//! `lib/cluster.js` builds `ClusterSync` on it.
//!
//! The syncer thread never calls into JavaScript, so it holds no event
//! loop open. Exact decisions run as N-API async work (libuv's thread pool):
//! the round trip blocks a pool thread, not the event loop.

use std::sync::{Arc, RwLock, RwLockReadGuard};

use napi::bindgen_prelude::{
    AsyncTask, FromNapiValue, Object, ObjectFinalize, ToNapiValue, Unknown,
};
use napi::{Env, Task};
use napi_derive::napi;
use sds_cluster::{Cluster, Config, Decision, Status};
use sds_core::ErrorCode;
use sds_settings::Fields;

use crate::arguments;
use crate::errors::{js_error, SdsError};
use crate::service::{Handle, Service};
use crate::settings;
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

/// The lock read, also after a panic while it was held (nothing it guards
/// is left half-written: `close` only takes the cluster out).
fn read(cluster: &Shared) -> RwLockReadGuard<'_, Option<Cluster>> {
    cluster
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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
        Ok(match read(&self.cluster).as_ref() {
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

/// The running cluster (shared with the exact calls in flight) and the
/// status it left when stopped.
pub struct Syncer {
    cluster: Shared,
    last_status: Status,
}

impl Service for Syncer {
    type Status = Status;

    fn stop(&mut self) {
        let mut guard = self.cluster.write().unwrap_or_else(|p| p.into_inner());
        if let Some(cluster) = guard.take() {
            self.last_status = cluster.stop();
        }
    }

    fn status(&self) -> Status {
        match read(&self.cluster).as_ref() {
            Some(cluster) => cluster.status(),
            None => self.last_status.clone(),
        }
    }
}

/// The cluster points of one table and their syncer.
#[napi(namespace = "native", custom_finalize)]
pub struct NativeCluster {
    handle: Handle<Syncer>,
}

impl ObjectFinalize for NativeCluster {
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        self.handle.close(&env);
        Ok(())
    }
}

#[napi(namespace = "native")]
impl NativeCluster {
    /// Makes the `points` setting's names cluster points of `table` and
    /// starts their syncer, with `options` an object of the cluster's
    /// settings (`sds_cluster::SETTINGS`, camelCase or snake_case keys) or
    /// `undefined`; a setting left out or `null` takes the crate's default.
    /// Never waits for Redis; reads the TLS files (the crate checks them).
    #[napi(
        constructor,
        ts_args_type = "table: native.NativeTable, options: unknown"
    )]
    pub fn new(table: &NativeTable, options: Unknown) -> Result<NativeCluster, SdsError> {
        let pairs = settings::pairs(options, "connectCluster options")?;
        let config = Config::from_settings(pairs).map_err(cluster_error)?;
        let handle = Handle::start(table, |table| {
            Ok(Syncer {
                cluster: Arc::new(RwLock::new(Some(
                    Cluster::start(table, config).map_err(cluster_error)?,
                ))),
                last_status: Status::default(),
            })
        })?;
        Ok(NativeCluster { handle })
    }

    /// The names of `status()`'s fields, snake_case (`sds_cluster::Status`).
    #[napi]
    pub fn status_names() -> Vec<&'static str> {
        Status::NAMES.to_vec()
    }

    /// A snapshot of the syncer's state (the last one after `close`), its
    /// fields camelCased.
    #[napi(ts_return_type = "Record<string, number | boolean | string | null>")]
    pub fn status<'env>(&self, env: &'env Env) -> Result<Object<'env>, SdsError> {
        self.handle.status(env)
    }

    /// One sync on this thread now: blocks for one round trip (at most
    /// `timeoutMs`, a connection if there is none included).
    #[napi]
    pub fn sync_now(&self) -> Result<(), SdsError> {
        let guard = self.handle.service().cluster.read().map_err(|_| closed())?;
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
            cluster: Arc::clone(&self.handle.service().cluster),
            point,
            now_ms,
        }))
    }

    /// Stops the syncer and joins its thread (within one round trip's
    /// timeout, after the exact calls in flight). Idempotent.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.handle.close(&env);
    }

    /// Whether `close` has not been called yet.
    #[napi(getter)]
    pub fn running(&self) -> bool {
        self.handle.running()
    }
}
