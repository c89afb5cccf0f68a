//! `io.sdsnative.ClusterSync`'s natives: cluster points of a client's table,
//! synced with Redis by `sds_cluster::Cluster` (one background thread per
//! table). The translation only: what is taken, checked, synced and decided
//! is the cluster crate's (`cluster/README.md`). The status, stop and free
//! are the services' (`service.rs`).

use jni::objects::{JObject, JObjectArray, JString};
use jni::refs::Reference;
use jni::sys::jlong;
use sds_cluster::{Cluster, Config, Decision, Error, Status};
use sds_core::{time, ErrorCode};

use crate::boundary::{setup_native, Fail};
use crate::service::{service_handle, status_names, with_service};
use crate::settings::pairs;
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

setup_native! {
    /// The field names of `ClusterStatus`, in the order of the status values.
    fn Java_io_sdsnative_Native_clusterStatusNames(env) -> JObjectArray<'l> {
        status_names::<Status>(env)
    }

    /// Makes the configured points cluster points of the client's table
    /// `table` and starts their sync with Redis, from the settings `keys[i]`
    /// = `values[i]` (`Config::from_settings`). A setting the crate refuses,
    /// or a config `Cluster::start` refuses, is `INVALID_ARGUMENT` with its
    /// message; no room for a point is `TABLE_FULL`.
    fn Java_io_sdsnative_Native_clusterStart(
        env,
        table: jlong,
        _owner: JObject<'l>,
        keys: JObjectArray<'l>,
        values: JObjectArray<'l>,
    ) -> jlong {
        let config = Config::from_settings(pairs(env, &keys, &values)?)?;
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = unsafe { table_arc(table) }.map_err(Fail::code)?;
        Ok(service_handle(Cluster::start(table, config)?))
    }

    /// One sync now on the calling thread. A close waits for it, as for an
    /// exact decision: one round trip at most.
    fn Java_io_sdsnative_Native_clusterSyncNow(_env, handle: jlong, _owner: JObject<'l>) {
        // SAFETY: the Java `ClusterSync` passes its own handle and itself as
        // owner (see `with_service`).
        unsafe { with_service(handle, |c: &Cluster| Ok(c.sync_now()?)) }
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
        // SAFETY: as in `clusterSyncNow`.
        let decision =
            unsafe { with_service(handle, |c: &Cluster| Ok(c.enter_exact(&point, now_ms)?)) }?;
        Ok(decision_bits(&decision))
    }
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
