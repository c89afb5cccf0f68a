//! `io.sdsnative.AdminAgent`'s natives: the SDS console agent (`sds-agent`)
//! for a client's table. The translation only: what the agent does, and what
//! it refuses, is the agent crate's.

use jni::jni_str;
use jni::objects::{JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jclass, jlong, JNIEnv};
use sds_agent::{Agent, AgentConfig, Status, DEFAULT_PULL_INTERVAL_MS, DEFAULT_TIMEOUT_MS};
use sds_core::ErrorCode;

use crate::agent_log::JvmLog;
use crate::args::{optional_path, optional_text};
use crate::boundary::{clamp, setup_native, Fail};
use crate::service::{free_service, service_handle, service_status, stop_service, with_service};
use crate::table::table_arc;

/// The status values `agentStatus` writes, in the order `AdminStatus` reads
/// them (flags as 0 or 1).
fn status_values(s: &Status) -> [i64; 11] {
    [
        clamp(s.last_pull_ms),
        clamp(s.last_upload_ms),
        s.version,
        clamp(s.pull_failures),
        clamp(s.upload_failures),
        clamp(s.uploads),
        i64::from(s.last_pull_ok),
        i64::from(s.last_upload_ok),
        i64::from(s.is_reporter),
        clamp(s.strategies_waiting),
        clamp(s.points_left_out),
    ]
}

setup_native! {
    /// `"5000\t1000"`: the default pull interval and request timeout in ms.
    fn Java_io_sdsnative_Native_agentDefaults(env) -> JString<'l> {
        Ok(env.new_string(format!("{DEFAULT_PULL_INTERVAL_MS}\t{DEFAULT_TIMEOUT_MS}"))?)
    }

    /// Starts the agent for the client's table `table`. A `null` required
    /// string reads as empty and a negative time as 0, which the agent
    /// refuses with its reason (`INVALID_ARGUMENT`), as it refuses TLS files
    /// it cannot use; a `null` ip or host name is detected, a `null` CA file
    /// is none (the system's roots), a `null` certificate or key file none.
    fn Java_io_sdsnative_Native_agentStart(
        env,
        table: jlong,
        _owner: JObject<'l>,
        servers: JString<'l>,
        tls_ca_file: JString<'l>,
        tls_cert_file: JString<'l>,
        tls_key_file: JString<'l>,
        app_group: JString<'l>,
        app_name: JString<'l>,
        ip: JString<'l>,
        hostname: JString<'l>,
        pull_interval_ms: jlong,
        timeout_ms: jlong,
    ) -> jlong {
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = unsafe { table_arc(table) }.map_err(Fail::code)?;
        let text = |s: &JString| optional_text(env, s).map(Option::unwrap_or_default);
        let mut config = AgentConfig::new(text(&servers)?, text(&app_group)?, text(&app_name)?);
        config.tls_ca_file = optional_path(env, &tls_ca_file)?;
        config.tls_cert_file = optional_path(env, &tls_cert_file)?;
        config.tls_key_file = optional_path(env, &tls_key_file)?;
        config.ip = optional_text(env, &ip)?;
        config.hostname = optional_text(env, &hostname)?;
        config.pull_interval_ms = u64::try_from(pull_interval_ms).unwrap_or(0);
        config.timeout_ms = u64::try_from(timeout_ms).unwrap_or(0);
        let log = JvmLog::new(env, jni_str!("io/sdsnative/AdminAgent"), &config)?;
        config.log = Some(log.into_log_fn());
        let agent = Agent::start(table, config)
            .map_err(|e| Fail::Sds(ErrorCode::InvalidArgument, e.to_string()))?;
        Ok(service_handle(agent))
    }

    /// Writes the agent's numbers to `out` (see [`status_values`]) and
    /// returns `{server, lastError}`; once stopped, its last state.
    fn Java_io_sdsnative_Native_agentStatus(
        env,
        handle: jlong,
        _owner: JObject<'l>,
        out: JLongArray<'l>,
    ) -> JObjectArray<'l> {
        // SAFETY: the Java `AdminAgent` passes its own handle and itself as
        // owner (see `with_service`).
        let status = unsafe { service_status::<Agent>(handle) }?;
        out.set_region(env, 0, &status_values(&status))?;
        let texts = env.new_object_array(2, jni_str!("java/lang/String"), JObject::null())?;
        let server = env.new_string(&status.server)?;
        let last_error = env.new_string(&status.last_error)?;
        texts.set_element(env, 0, &server)?;
        texts.set_element(env, 1, &last_error)?;
        Ok(texts)
    }

    /// The console's `returnValueStr` for `point`; `null` when it has none.
    fn Java_io_sdsnative_Native_agentReturnValue(
        env,
        handle: jlong,
        _owner: JObject<'l>,
        point: JString<'l>,
    ) -> JString<'l> {
        let point = optional_text(env, &point)?.ok_or(Fail::code(ErrorCode::NullArgument))?;
        // SAFETY: as in `agentStatus`.
        let value = unsafe { with_service(handle, |a: &Agent| Ok(a.return_value(&point))) }?;
        Ok(match value {
            Some(value) => env.new_string(value)?,
            None => JString::null(),
        })
    }

    /// Stops the agent and joins its thread, keeping its last state;
    /// idempotent.
    fn Java_io_sdsnative_Native_agentStop(_env, handle: jlong, _owner: JObject<'l>) {
        // SAFETY: as in `agentStatus`.
        unsafe { stop_service::<Agent>(handle) }
    }
}

/// Frees a stopped agent (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_agentFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: called once per agent, by its `NativeHandle` once no call is
    // using it.
    unsafe { free_service::<Agent>(handle) }
}
