//! The native side of the background services a Java `BackgroundService`
//! owns through a handle (`AdminAgent`'s agent, `ClusterSync`'s cluster).
//! One handle type for both, so the status, the stop and the free are one
//! set of natives (`service*`); a service's own calls borrow it by its type
//! ([`with_service`]). Statuses cross as their fields (`sds_settings::Fields`):
//! the names once, camelCased, then the values in that order.

use std::any::Any;
use std::panic::catch_unwind;
use std::sync::{PoisonError, RwLock};

use jni::objects::{JObject, JObjectArray, JValue};
use jni::sys::{jclass, jlong, JNIEnv};
use jni::{jni_sig, jni_str, Env};
use sds_agent::Agent;
use sds_cluster::Cluster;
use sds_core::ErrorCode;
use sds_settings::{camel_case, FieldValue, Fields};

use crate::boundary::{clamp, setup_native, Fail};
use crate::handle::{borrow, into_handle};

/// What the handles need of a service: its state, and a stop that joins
/// its thread and gives the last state.
pub(crate) trait Service: Send + Sync + 'static {
    type Status: Fields + Clone + Send + Sync;
    fn status(&self) -> Self::Status;
    fn stop(self) -> Self::Status;
}

impl Service for Agent {
    type Status = sds_agent::Status;
    fn status(&self) -> Self::Status {
        Agent::status(self)
    }
    fn stop(self) -> Self::Status {
        Agent::stop(&self);
        Agent::status(&self)
    }
}

impl Service for Cluster {
    type Status = sds_cluster::Status;
    fn status(&self) -> Self::Status {
        Cluster::status(self)
    }
    fn stop(self) -> Self::Status {
        Cluster::stop(self)
    }
}

/// A service behind a handle: `Ok` while it runs, its last state once
/// stopped. `stop` takes it out under the write lock, so it waits for the
/// calls running on it; the calls after it fail with `CLOSED`, except the
/// status, which gives the last state.
struct JvmService<S: Service>(RwLock<Result<S, S::Status>>);

/// A service behind a handle, whatever its type: what the shared natives
/// call. `Any` lets [`with_service`] find the type back.
trait AnyService: Any + Send + Sync {
    /// Its status fields now; once stopped, its last ones.
    fn values(&self) -> Result<Vec<FieldValue>, Fail>;
    /// Stops it and joins its thread, keeping its last state; idempotent.
    fn stop(&self);
    fn is_running(&self) -> bool;
}

/// What a handle points to.
type Handle = Box<dyn AnyService>;

impl<S: Service> AnyService for JvmService<S> {
    fn values(&self) -> Result<Vec<FieldValue>, Fail> {
        let guard = self.0.read().map_err(|_| Fail::code(ErrorCode::Panic))?;
        Ok(match &*guard {
            Ok(service) => service.status().values(),
            Err(last) => last.values(),
        })
    }

    /// The join runs without the lock: the service's own thread may read
    /// the status meanwhile (a log handler), and gets the state as of the
    /// stop's start until the join ends.
    fn stop(&self) {
        let lock = || self.0.write().unwrap_or_else(PoisonError::into_inner);
        let service = {
            let mut guard = lock();
            let now = match &*guard {
                Ok(service) => service.status(),
                Err(_) => return,
            };
            std::mem::replace(&mut *guard, Err(now))
        };
        if let Ok(service) = service {
            let last = service.stop();
            *lock() = Err(last);
        }
    }

    fn is_running(&self) -> bool {
        self.0.read().map(|guard| guard.is_ok()).unwrap_or(true)
    }
}

/// Moves a started service behind a new handle.
pub(crate) fn service_handle<S: Service>(service: S) -> jlong {
    let boxed: Handle = Box::new(JvmService(RwLock::new(Ok(service))));
    into_handle(boxed)
}

/// # Safety
/// The Java class passes its own handle and itself as owner, which keeps it
/// reachable, so the service is not freed during the call.
unsafe fn any_service<'a>(handle: jlong) -> Result<&'a dyn AnyService, Fail> {
    // SAFETY: see the function's contract.
    let boxed = unsafe { borrow::<Handle>(handle) }.map_err(Fail::code)?;
    Ok(&**boxed)
}

/// Runs `f` on the service of a live handle; `CLOSED` once stopped.
///
/// # Safety
/// As for [`any_service`].
pub(crate) unsafe fn with_service<S: Service, T>(
    handle: jlong,
    f: impl FnOnce(&S) -> Result<T, Fail>,
) -> Result<T, Fail> {
    // SAFETY: see the function's contract.
    let any: &dyn Any = unsafe { any_service(handle) }?;
    let jvm = any
        .downcast_ref::<JvmService<S>>()
        .ok_or(Fail::code(ErrorCode::InvalidArgument))?;
    let guard = jvm.0.read().map_err(|_| Fail::code(ErrorCode::Panic))?;
    f(guard.as_ref().map_err(|_| Fail::code(ErrorCode::Closed))?)
}

/// A status type's field names, camelCased: what its Java class names its
/// fields.
pub(crate) fn status_names<'l, F: Fields>(env: &mut Env<'l>) -> Result<JObjectArray<'l>, Fail> {
    let names = env.new_object_array(
        F::NAMES.len() as i32,
        jni_str!("java/lang/String"),
        JObject::null(),
    )?;
    for (i, name) in F::NAMES.iter().enumerate() {
        let name = env.new_string(camel_case(name))?;
        names.set_element(env, i, &name)?;
    }
    Ok(names)
}

/// One field as a Java object: `Boolean`, `Long` (a count saturated at
/// `Long.MAX_VALUE`), `String`, or null for no text.
fn field_object<'l>(env: &mut Env<'l>, value: &FieldValue) -> Result<JObject<'l>, Fail> {
    let long = |env: &mut Env<'l>, n: i64| {
        let sig = jni_sig!("(J)Ljava/lang/Long;");
        env.call_static_method(
            jni_str!("java/lang/Long"),
            jni_str!("valueOf"),
            sig,
            &[JValue::Long(n)],
        )
    };
    Ok(match value {
        FieldValue::Bool(b) => {
            let sig = jni_sig!("(Z)Ljava/lang/Boolean;");
            let class = jni_str!("java/lang/Boolean");
            env.call_static_method(class, jni_str!("valueOf"), sig, &[JValue::Bool(*b)])?
                .l()?
        }
        FieldValue::U64(n) => long(env, clamp(*n))?.l()?,
        FieldValue::I64(n) => long(env, *n)?.l()?,
        FieldValue::Text(text) | FieldValue::OptionalText(Some(text)) => {
            env.new_string(text)?.into()
        }
        FieldValue::OptionalText(None) => JObject::null(),
    })
}

setup_native! {
    /// The service's status values, in the order of its names (see
    /// [`field_object`]); once stopped, its last ones.
    fn Java_io_sdsnative_Native_serviceStatus(env, handle: jlong, _owner: JObject<'l>) -> JObjectArray<'l> {
        // SAFETY: the Java `BackgroundService` passes its own handle and
        // itself as owner (see `any_service`).
        let values = unsafe { any_service(handle) }?.values()?;
        let out = env.new_object_array(values.len() as i32, jni_str!("java/lang/Object"), JObject::null())?;
        for (i, value) in values.iter().enumerate() {
            let object = field_object(env, value)?;
            out.set_element(env, i, &object)?;
        }
        Ok(out)
    }

    /// Stops the service and joins its thread, keeping its last state;
    /// idempotent.
    fn Java_io_sdsnative_Native_serviceStop(_env, handle: jlong, _owner: JObject<'l>) {
        // SAFETY: as in `serviceStatus`.
        unsafe { any_service(handle) }?.stop();
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
    let _ = catch_unwind(|| {
        if handle == 0 {
            return;
        }
        // SAFETY: called once per service, by its `NativeHandle` once no
        // call is using it: the box `service_handle` made.
        let service = unsafe { Box::from_raw(handle as *mut Handle) };
        if service.is_running() {
            // If no thread can start, the service is dropped (joined) here.
            let reaper = std::thread::Builder::new().name("sds-reaper".into());
            let _ = reaper.spawn(move || drop(service));
        }
    });
}
