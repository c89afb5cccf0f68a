//! `io.sdsnative.ClusterSync`'s natives: cluster points of a client's table,
//! synced with Redis by `sds_cluster::Cluster` (one background thread per
//! table). The translation only: what is taken, checked, synced and decided
//! is the cluster crate's (`cluster/README.md`). The start, status, stop and
//! free are the services' (`service.rs`).

use jni::objects::{JObject, JString};
use jni::sys::jlong;
use sds_cluster::Decision;
use sds_core::{time, ErrorCode};

use crate::boundary::{setup_native, Fail};
use crate::service::{with_running, Running};
use crate::strategy::text_of;

/// The cluster sync of a live handle.
fn cluster(running: &Running) -> Result<&sds_cluster::Cluster, Fail> {
    match running {
        Running::Cluster(cluster) => Ok(cluster),
        Running::Agent(_) => Err(Fail::code(ErrorCode::InvalidArgument)),
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
    /// One sync now on the calling thread. A close waits for it, as for an
    /// exact decision: one round trip at most.
    fn Java_io_sdsnative_Native_clusterSyncNow(_env, handle: jlong, _owner: JObject<'l>) {
        // SAFETY: the Java `ClusterSync` passes its own handle and itself as
        // owner (see `with_running`).
        unsafe { with_running(handle, |r| Ok(cluster(r)?.sync_now()?)) }
    }

    /// Exact mode: the decision's bits ([`decision_bits`]).
    fn Java_io_sdsnative_Native_clusterEnterExact(
        env, handle: jlong, _owner: JObject<'l>, point: JString<'l>, now_ms: jlong,
    ) -> jlong {
        let point = text_of(env, &point)?;
        let now_ms = time::from_i64(now_ms)?;
        // SAFETY: as in `clusterSyncNow`.
        let decision =
            unsafe { with_running(handle, |r| Ok(cluster(r)?.enter_exact(&point, now_ms)?)) }?;
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
