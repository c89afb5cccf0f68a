//! The native side of the background services a Java `BackgroundService`
//! owns through a handle (`AdminAgent`'s agent, `ClusterSync`'s cluster).
//! One handle type for both, so the start, the status, the stop and the free
//! are one set of natives (`service*`) over `sds_settings::Service`; a
//! service's own calls borrow it ([`with_running`]). Statuses cross as their
//! fields (`sds_settings::Fields`): the names once (`codes.rs`), camelCased,
//! then the values in that order, as text.

use jni::objects::{JObject, JObjectArray};
use jni::sys::{jclass, jint, jlong, JNIEnv};
use sds_agent::{Agent, AgentConfig};
use sds_cluster::{Cluster, Config};
use sds_core::ErrorCode;
use sds_settings::{FieldValue, Fields, Service};

use crate::agent::log_fn;
use crate::boundary::{clamp, setup_native, Fail};
use crate::codes::strings;
use crate::handle::arc_of;
use crate::handle::{borrow, into_handle};
use crate::settings::pairs;

/// `Native.AGENT` and `Native.CLUSTER`: which service `serviceStart` starts.
const AGENT: jint = 0;
const CLUSTER: jint = 1;

/// A service behind a handle (the cluster boxed: it is ten times the
/// agent's size). Stopped, it stays until the free: its status gives the
/// last state, its other calls fail with `CLOSED`.
pub(crate) enum Running {
    Agent(Agent),
    Cluster(Box<Cluster>),
}

/// `$body` with `$service` the `&Agent` or `&Cluster` in `$running`, a
/// `&Running`.
macro_rules! each {
    ($running:expr, $service:ident => $body:expr) => {
        match $running {
            Running::Agent($service) => $body,
            Running::Cluster(cluster) => {
                let $service: &Cluster = cluster;
                $body
            }
        }
    };
}

/// # Safety
/// The Java class passes its own handle and itself as owner, which keeps it
/// reachable, so the service is not freed during the call.
pub(crate) unsafe fn service<'a>(handle: jlong) -> Result<&'a Running, Fail> {
    // SAFETY: see the function's contract.
    unsafe { borrow::<Running>(handle) }.map_err(Fail::code)
}

/// Runs `f` on the service of a live handle; `CLOSED` once stopped.
///
/// # Safety
/// As for [`service`].
pub(crate) unsafe fn with_running<T>(
    handle: jlong,
    f: impl FnOnce(&Running) -> Result<T, Fail>,
) -> Result<T, Fail> {
    // SAFETY: see the function's contract.
    let running = unsafe { service(handle) }?;
    if !each!(running, s => s.is_running()) {
        return Err(Fail::code(ErrorCode::Closed));
    }
    f(running)
}

/// One field as Java reads it back by its accessor's type: `true` or
/// `false`, a number (a count saturated at `Long.MAX_VALUE`), text, or null
/// for no text.
fn field_text(value: FieldValue) -> Option<String> {
    match value {
        FieldValue::Bool(b) => Some(b.to_string()),
        FieldValue::U64(n) => Some(clamp(n).to_string()),
        FieldValue::I64(n) => Some(n.to_string()),
        FieldValue::Text(text) | FieldValue::OptionalText(Some(text)) => Some(text),
        FieldValue::OptionalText(None) => None,
    }
}

setup_native! {
    /// Starts the service `kind` ([`AGENT`], [`CLUSTER`]) for the client's
    /// table `table` from its config's `settings` (see `settings.rs`): its
    /// handle. A setting or config the service refuses is
    /// `INVALID_ARGUMENT` with its message; no room in the table for a
    /// cluster point is `TABLE_FULL`.
    fn Java_io_sdsnative_Native_serviceStart(
        env, table: jlong, _owner: JObject<'l>, kind: jint, settings: JObjectArray<'l>,
    ) -> jlong {
        let settings = pairs(env, &settings)?;
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = unsafe { arc_of::<sds_shm::AnyTable>(table) }.map_err(Fail::code)?;
        let running = match kind {
            AGENT => {
                let mut config = AgentConfig::from_settings(settings)?;
                config.log = Some(log_fn(env, &config)?);
                Running::Agent(Agent::start(table, config)?)
            }
            CLUSTER => Running::Cluster(Box::new(Cluster::start(
                table,
                Config::from_settings(settings)?,
            )?)),
            _ => return Err(Fail::code(ErrorCode::InvalidArgument)),
        };
        Ok(into_handle(running))
    }

    /// The service's status values, in the order of its names (see
    /// [`field_text`]); once stopped, its last ones.
    fn Java_io_sdsnative_Native_serviceStatus(env, handle: jlong, _owner: JObject<'l>) -> JObjectArray<'l> {
        // SAFETY: the Java `BackgroundService` passes its own handle and
        // itself as owner (see `service`).
        let values = each!(unsafe { service(handle) }?, s => s.status().values());
        strings(env, values.into_iter().map(field_text))
    }

    /// Stops the service and joins its thread, keeping its last state;
    /// idempotent.
    fn Java_io_sdsnative_Native_serviceStop(_env, handle: jlong, _owner: JObject<'l>) {
        // SAFETY: as in `serviceStatus`.
        each!(unsafe { service(handle) }?, s => Service::stop(s));
        Ok(())
    }
}

/// Frees a service (0: nothing to do); a panic is caught, as no exception
/// can be thrown from the free. A service still running (its Java object
/// was collected without a close) is stopped on a thread of its own: the
/// caller, whoever found it collected, must not wait for the join.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_serviceFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    let _ = std::panic::catch_unwind(|| {
        if handle == 0 {
            return;
        }
        // SAFETY: called once per service, by its `NativeHandle` once no
        // call is using it: the box `serviceStart` made.
        let service = unsafe { Box::from_raw(handle as *mut Running) };
        if each!(&*service, s => s.is_running()) {
            // If no thread can start, the service is dropped (joined) here.
            let reaper = std::thread::Builder::new().name("sds-reaper".into());
            let _ = reaper.spawn(move || drop(service));
        }
    });
}
