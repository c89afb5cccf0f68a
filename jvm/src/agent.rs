//! `io.sdsnative.AdminAgent`'s natives: the SDS console agent (`sds-agent`)
//! for a client's table. The translation only: what the agent takes, does
//! and refuses is the agent crate's. The status, stop and free are the
//! services' (`service.rs`).

use jni::jni_str;
use jni::objects::{JObject, JObjectArray, JString};
use jni::refs::Reference;
use jni::sys::jlong;
use sds_agent::{Agent, AgentConfig, StartError, Status};
use sds_core::ErrorCode;

use crate::agent_log::JvmLog;
use crate::boundary::{setup_native, Fail};
use crate::service::{service_handle, status_names, with_service};
use crate::settings::pairs;
use crate::table::table_arc;

impl From<StartError> for Fail {
    fn from(e: StartError) -> Fail {
        Fail::Sds(ErrorCode::InvalidArgument, e.to_string())
    }
}

setup_native! {
    /// The field names of `AdminStatus`, in the order of the status values.
    fn Java_io_sdsnative_Native_agentStatusNames(env) -> JObjectArray<'l> {
        status_names::<Status>(env)
    }

    /// Starts the agent for the client's table `table` from the settings
    /// `keys[i]` = `values[i]` (`AgentConfig::from_settings`); a setting it
    /// refuses, or a config `Agent::start` refuses, is `INVALID_ARGUMENT`
    /// with the agent's message.
    fn Java_io_sdsnative_Native_agentStart(
        env,
        table: jlong,
        _owner: JObject<'l>,
        keys: JObjectArray<'l>,
        values: JObjectArray<'l>,
    ) -> jlong {
        let mut config = AgentConfig::from_settings(pairs(env, &keys, &values)?)?;
        let log = JvmLog::new(env, jni_str!("io/sdsnative/AdminAgent"), &config)?;
        config.log = Some(log.into_log_fn());
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = unsafe { table_arc(table) }.map_err(Fail::code)?;
        Ok(service_handle(Agent::start(table, config)?))
    }

    /// The console's `returnValueStr` for `point`; `null` when it has none.
    fn Java_io_sdsnative_Native_agentReturnValue(
        env,
        handle: jlong,
        _owner: JObject<'l>,
        point: JString<'l>,
    ) -> JString<'l> {
        if point.is_null() {
            return Err(Fail::code(ErrorCode::NullArgument));
        }
        let point = point.try_to_string(env)?;
        // SAFETY: the Java `AdminAgent` passes its own handle and itself as
        // owner (see `with_service`).
        let value = unsafe { with_service(handle, |a: &Agent| Ok(a.return_value(&point))) }?;
        Ok(match value {
            Some(value) => env.new_string(value)?,
            None => JString::null(),
        })
    }
}
