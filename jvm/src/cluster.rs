//! `io.sdsnative.ClusterSync`'s natives: cluster points of a client's table,
//! synced with Redis by `sds_cluster::Cluster` (one background thread per
//! table). The translation only: what is checked, synced and decided is the
//! cluster crate's (`cluster/README.md`).

use jni::objects::{JLongArray, JObject, JObjectArray, JString};
use jni::refs::Reference;
use jni::sys::{jboolean, jclass, jlong, JNIEnv};
use jni::Env;
use sds_cluster::{Cluster, Config, Decision, Error, Status};
use sds_core::{time, ErrorCode};

use crate::args::optional_path;
use crate::boundary::{clamp, setup_native, Fail};
use crate::service::{free_service, service_handle, service_status, stop_service, with_service};
use crate::table::table_arc;

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Sds(e.code(), e.to_string())
    }
}

/// `ClusterDecision`'s bits in the `long` `clusterEnterExact` returns.
const ADMITTED: i64 = 1;
const EXACT: i64 = 2;
const REASON_SHIFT: u32 = 8;

fn decision_bits(d: &Decision) -> i64 {
    let reason = d.reason.map_or(0, |r| i64::from(r.code()));
    (i64::from(d.admitted) * ADMITTED) | (i64::from(d.exact) * EXACT) | (reason << REASON_SHIFT)
}

/// The status values `clusterStatus` writes, in the order `ClusterStatus`
/// reads them (flags as 0 or 1).
fn status_values(s: &Status) -> [i64; 11] {
    [
        i64::from(s.connected),
        i64::from(s.syncing),
        clamp(s.last_sync_ms),
        clamp(s.lag_ms),
        clamp(s.rtt_us),
        clamp(s.syncs),
        clamp(s.failures),
        clamp(s.round_trips),
        clamp(s.commands),
        clamp(s.points as u64),
        clamp(s.points_failing as u64),
    ]
}

/// The strings of a Java `String[]`; `null` (array or element) is refused.
fn strings(env: &mut Env, array: &JObjectArray, what: &str) -> Result<Vec<String>, Fail> {
    let null = || Fail::Sds(ErrorCode::NullArgument, format!("{what} is null"));
    if array.is_null() {
        return Err(null());
    }
    let mut out = Vec::new();
    for i in 0..array.len(env)? {
        let element = array.get_element(env, i)?;
        if element.is_null() {
            return Err(null());
        }
        let text = env.cast_local::<JString>(element)?;
        out.push(text.try_to_string(env)?);
    }
    Ok(out)
}

/// Runs `f` on the cluster of a live handle; `CLOSED` once stopped. `stop`
/// waits for the calls running (an exact decision: one round trip at most).
///
/// # Safety
/// The Java `ClusterSync` passes its own handle and itself as owner, which
/// keeps it reachable, so the cluster is not freed during the call.
unsafe fn with_cluster<T>(
    handle: jlong,
    f: impl FnOnce(&Cluster) -> Result<T, Fail>,
) -> Result<T, Fail> {
    // SAFETY: see the function's contract.
    unsafe { with_service(handle, f) }
}

setup_native! {
    /// `"100\t1000\t5000\tsds"`: the default sync period, timeout and longest
    /// backoff in ms, and the key prefix.
    fn Java_io_sdsnative_Native_clusterDefaults(env) -> JString<'l> {
        let c = Config::new("");
        let row = format!("{}\t{}\t{}\t{}", c.sync_ms, c.timeout_ms, c.max_backoff_ms, c.key_prefix);
        Ok(env.new_string(row)?)
    }

    /// Makes `points` cluster points of the client's table `table` and starts
    /// their sync with Redis. A negative time reads as 0, which the cluster
    /// crate refuses with its reason (`INVALID_ARGUMENT`); so are no URL, a
    /// URL that does not parse, a point name out of range and TLS files that
    /// cannot be read or do not go with the URLs. A `null` TLS file is none.
    fn Java_io_sdsnative_Native_clusterStart(
        env,
        table: jlong,
        _owner: JObject<'l>,
        urls: JObjectArray<'l>,
        redis_cluster: jboolean,
        points: JObjectArray<'l>,
        sync_ms: jlong,
        timeout_ms: jlong,
        max_backoff_ms: jlong,
        key_prefix: JString<'l>,
        tls_ca_file: JString<'l>,
        tls_cert_file: JString<'l>,
        tls_key_file: JString<'l>,
    ) -> jlong {
        let ms = |v: jlong| u64::try_from(v).unwrap_or(0);
        let mut config = Config::new("");
        config.urls = strings(env, &urls, "urls")?;
        config.redis_cluster = redis_cluster;
        config.points = strings(env, &points, "points")?;
        config.sync_ms = ms(sync_ms);
        config.timeout_ms = ms(timeout_ms);
        config.max_backoff_ms = ms(max_backoff_ms);
        if key_prefix.is_null() {
            return Err(Fail::Sds(ErrorCode::NullArgument, "key prefix is null".into()));
        }
        config.key_prefix = key_prefix.try_to_string(env)?;
        config.tls_ca_file = optional_path(env, &tls_ca_file)?;
        config.tls_cert_file = optional_path(env, &tls_cert_file)?;
        config.tls_key_file = optional_path(env, &tls_key_file)?;
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = unsafe { table_arc(table) }.map_err(Fail::code)?;
        let cluster = Cluster::start(table, config)?;
        Ok(service_handle(cluster))
    }

    /// Writes the syncer's numbers to `out` (see [`status_values`]) and
    /// returns the last error (`null`: none); once stopped, its last state.
    fn Java_io_sdsnative_Native_clusterStatus(
        env,
        handle: jlong,
        _owner: JObject<'l>,
        out: JLongArray<'l>,
    ) -> JString<'l> {
        // SAFETY: see `with_cluster`.
        let status = unsafe { service_status::<Cluster>(handle) }?;
        out.set_region(env, 0, &status_values(&status))?;
        Ok(match &status.last_error {
            Some(text) => env.new_string(text)?,
            None => JString::null(),
        })
    }

    /// One sync now on the calling thread.
    fn Java_io_sdsnative_Native_clusterSyncNow(_env, handle: jlong, _owner: JObject<'l>) {
        // SAFETY: see `with_cluster`.
        unsafe { with_cluster(handle, |c| Ok(c.sync_now()?)) }
    }

    /// Exact mode: the decision's bits ([`decision_bits`]).
    fn Java_io_sdsnative_Native_clusterEnterExact(
        env,
        handle: jlong,
        _owner: JObject<'l>,
        point: JString<'l>,
        now_ms: jlong,
    ) -> jlong {
        if point.is_null() {
            return Err(Fail::Sds(ErrorCode::NullArgument, "point name is null".into()));
        }
        let point = point.try_to_string(env)?;
        let now_ms = time::from_i64(now_ms)?;
        // SAFETY: see `with_cluster`.
        let decision = unsafe { with_cluster(handle, |c| Ok(c.enter_exact(&point, now_ms)?)) }?;
        Ok(decision_bits(&decision))
    }

    /// Stops the sync and joins its thread, keeping its last state;
    /// idempotent.
    fn Java_io_sdsnative_Native_clusterStop(_env, handle: jlong, _owner: JObject<'l>) {
        // SAFETY: see `with_cluster`.
        unsafe { stop_service::<Cluster>(handle) }
    }
}

/// Frees a stopped cluster (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_clusterFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: called once per cluster, by its `NativeHandle` once no call is
    // using it.
    unsafe { free_service::<Cluster>(handle) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_core::Reason;

    #[test]
    fn a_decision_packs_its_flags_and_reason() {
        let refused = Decision {
            admitted: false,
            reason: Some(Reason::TokenBucket),
            exact: true,
        };
        assert_eq!(decision_bits(&refused), EXACT | 2 << REASON_SHIFT);
        let local = Decision {
            admitted: true,
            reason: None,
            exact: false,
        };
        assert_eq!(decision_bits(&local), ADMITTED);
    }
}
