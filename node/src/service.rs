//! `NativeService`: a client's background service on a thread of its own,
//! the SDS console agent (`sds-agent`) or the cluster sync of its cluster
//! points with Redis (`sds-cluster`). The translation only: the options
//! object goes to the crate's `from_settings` whole (see `settings.rs`), so
//! the settings, which configs are refused, and what the service does are
//! the crate's (`agent/README.md`, `cluster/README.md`); `lib/services.js`
//! builds `AdminAgent` and `ClusterSync` on it.
//!
//! One life cycle for both: the service holds a share of the client's
//! table, given back on the JavaScript thread once its thread has stopped
//! (the last share frees the table and reports it to V8 there, see
//! `external_memory.rs`), by `close()` or by the finalizer when the
//! environment (the process, a worker) ends first.
//!
//! The agent's log lines reach JavaScript through a threadsafe function
//! that is
//! - weak (unref'd): it never keeps the event loop alive, so a process or a
//!   worker thread with a running agent ends when its work does;
//! - called non-blocking into a bounded queue: the agent's thread never
//!   waits for JavaScript; a line that finds the queue full (an event loop
//!   blocked for that many lines) is dropped, and one sent while the
//!   thread's environment shuts down goes nowhere.
//!
//! The syncer thread never calls into JavaScript, so it holds no event loop
//! open. Exact decisions run as N-API async work (libuv's thread pool): the
//! round trip blocks a pool thread, not the event loop.

use std::sync::Arc;

use napi::bindgen_prelude::{
    AsyncTask, FnArgs, FromNapiValue, Object, ObjectFinalize, ToNapiValue, Unknown,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status as NapiStatus, Task};
use napi_derive::napi;
use sds_agent::{Agent, AgentConfig, Level};
use sds_cluster::{Cluster, Config, Decision, Error as ClusterError};
use sds_metrics::ServiceState;
use sds_settings::{Fields, Service};
use sds_shm::AnyTable;

use crate::arguments;
use crate::errors::{invalid_argument, js_error, SdsError};
use crate::external_memory::release_table;
use crate::settings::{pairs, status_object};
use crate::tables::NativeTable;

/// Log lines waiting for the JavaScript thread before new ones are dropped.
const LOG_QUEUE: usize = 256;

/// `(level, message)` to JavaScript: weak, not callee-handled, bounded.
type LogArgs = FnArgs<(String, String)>;
type LogFunction = ThreadsafeFunction<LogArgs, (), LogArgs, NapiStatus, false, true, LOG_QUEUE>;

/// The service; the cluster shared with the exact calls on the pool (its
/// stop cuts them short and waits for them; later ones are refused).
enum Running {
    Agent(Agent),
    Cluster(Arc<Cluster>),
}

fn cluster_error(error: ClusterError) -> SdsError {
    js_error(error.code(), error)
}

/// A running service and its share of the table (`None` once closed).
#[napi(namespace = "native", custom_finalize)]
pub struct NativeService {
    running: Running,
    table: Option<Arc<AnyTable>>,
}

impl ObjectFinalize for NativeService {
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        self.close(env);
        Ok(())
    }
}

impl NativeService {
    fn of(table: &NativeTable, running: Running) -> NativeService {
        let table = Some(Arc::clone(&table.table));
        NativeService { running, table }
    }

    /// The agent's state for metrics; `None` for a cluster sync.
    pub(crate) fn agent_state(&self) -> Option<ServiceState<sds_agent::Status>> {
        match &self.running {
            Running::Agent(agent) => Some(ServiceState {
                status: agent.status(),
                running: self.table.is_some(),
            }),
            Running::Cluster(_) => None,
        }
    }

    /// The cluster sync's state for metrics; `None` for an agent.
    pub(crate) fn cluster_state(&self) -> Option<ServiceState<sds_cluster::Status>> {
        match &self.running {
            Running::Cluster(cluster) => Some(ServiceState {
                status: cluster.status(),
                running: self.table.is_some(),
            }),
            Running::Agent(_) => None,
        }
    }

    /// The cluster sync's cluster (a cluster call on an agent is refused).
    fn cluster(&self) -> Result<&Arc<Cluster>, SdsError> {
        match &self.running {
            Running::Cluster(cluster) => Ok(cluster),
            Running::Agent(_) => Err(invalid_argument("not a cluster sync")),
        }
    }
}

#[napi(namespace = "native")]
impl NativeService {
    /// Starts the console agent of `table`'s points with `options`, an
    /// object of the agent's settings (`sds_agent::SETTINGS`, camelCase or
    /// snake_case keys) or `undefined`; a setting left out or `null` takes
    /// the agent's default. `log(level, message)` gets its lines ("info" /
    /// "warn").
    #[napi(
        factory,
        ts_args_type = "table: native.NativeTable, options: unknown, log: (level: string, message: string) => void"
    )]
    pub fn agent(
        table: &NativeTable,
        options: Unknown,
        log: LogFunction,
    ) -> Result<NativeService, SdsError> {
        let options = pairs(options, "connectAdmin options")?;
        let mut config = AgentConfig::from_settings(options).map_err(invalid_argument)?;
        config.log = Some(Arc::new(move |level: Level, line: &str| {
            // Never waits: a full queue or a closing environment drops the line.
            let line = FnArgs::from((level.as_str().to_string(), line.to_string()));
            let _ = log.call(line, ThreadsafeFunctionCallMode::NonBlocking);
        }));
        let agent = Agent::start(Arc::clone(&table.table), config).map_err(invalid_argument)?;
        Ok(NativeService::of(table, Running::Agent(agent)))
    }

    /// Makes the `points` setting's names cluster points of `table` and
    /// starts their syncer, with `options` an object of the cluster's
    /// settings (`sds_cluster::SETTINGS`, camelCase or snake_case keys) or
    /// `undefined`; a setting left out or `null` takes the crate's default.
    /// Never waits for Redis; reads the TLS files (the crate checks them).
    #[napi(factory, ts_args_type = "table: native.NativeTable, options: unknown")]
    pub fn cluster_sync(table: &NativeTable, options: Unknown) -> Result<NativeService, SdsError> {
        let config = Config::from_settings(pairs(options, "connectCluster options")?);
        let cluster = Cluster::start(Arc::clone(&table.table), config.map_err(cluster_error)?);
        let running = Running::Cluster(Arc::new(cluster.map_err(cluster_error)?));
        Ok(NativeService::of(table, running))
    }

    /// The names of `status()`'s fields, snake_case (`sds_agent::Status`,
    /// `sds_cluster::Status`).
    #[napi]
    pub fn status_names(&self) -> Vec<&'static str> {
        match self.running {
            Running::Agent(_) => sds_agent::Status::NAMES.to_vec(),
            Running::Cluster(_) => sds_cluster::Status::NAMES.to_vec(),
        }
    }

    /// A snapshot of the service's state (the last one after `close`), its
    /// fields camelCased.
    #[napi(ts_return_type = "Record<string, number | boolean | string | null>")]
    pub fn status<'env>(&self, env: &'env Env) -> Result<Object<'env>, SdsError> {
        match &self.running {
            Running::Agent(agent) => status_object(env, &agent.status()),
            Running::Cluster(cluster) => status_object(env, &cluster.status()),
        }
    }

    /// The console's `returnValueStr` for `point`; `null` when it has none
    /// (always, for a cluster sync).
    #[napi(ts_args_type = "point: string", ts_return_type = "string | null")]
    pub fn return_value(&self, point: Unknown) -> Result<Option<String>, SdsError> {
        let point = arguments::name(point)?;
        Ok(match &self.running {
            Running::Agent(agent) => agent.return_value(&point),
            Running::Cluster(_) => None,
        })
    }

    /// One sync on this thread now: blocks for one round trip (at most
    /// `timeoutMs`, a connection if there is none included).
    #[napi]
    pub fn sync_now(&self) -> Result<(), SdsError> {
        self.cluster()?.sync_now().map_err(cluster_error)
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
        Ok(AsyncTask::new(ExactTask {
            cluster: Arc::clone(self.cluster()?),
            point: arguments::name(point)?,
            now_ms: arguments::time_or_now(now_ms, "nowMs")?,
        }))
    }

    /// Stops the service and joins its thread (within one request timeout
    /// of the agent; within one round trip's timeout of the syncer, after
    /// the exact calls in flight), then gives the table back. Idempotent.
    #[napi]
    pub fn close(&mut self, env: Env) {
        match &self.running {
            Running::Agent(agent) => Service::stop(agent),
            Running::Cluster(cluster) => Service::stop(&**cluster),
        }
        if let Some(table) = self.table.take() {
            release_table(env.raw(), table);
        }
    }

    /// Whether `close` has not been called yet.
    #[napi(getter)]
    pub fn running(&self) -> bool {
        self.table.is_some()
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

/// One exact decision on a pool thread.
pub struct ExactTask {
    cluster: Arc<Cluster>,
    point: String,
    now_ms: u64,
}

impl Task for ExactTask {
    type Output = Result<Decision, ClusterError>;
    type JsValue = ExactDecision;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(self.cluster.enter_exact(&self.point, self.now_ms))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<ExactDecision> {
        match output {
            Ok(d) => Ok(ExactDecision {
                admitted: d.admitted,
                reason: d.reason.map(|r| r.as_str()),
                exact: d.exact,
            }),
            // The rejection carries the core's code as `err.code`, like every
            // error the addon throws.
            Err(error) => {
                let error = cluster_error(error);
                let raw = unsafe { ToNapiValue::to_napi_value(env.raw(), error) }?;
                Err(napi::Error::from(unsafe {
                    Unknown::from_napi_value(env.raw(), raw)
                }?))
            }
        }
    }
}
