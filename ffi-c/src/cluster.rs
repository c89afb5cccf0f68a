//! `sds_cluster_*`: cluster points of an `sds_table`, synced with Redis by
//! `sds_cluster::Cluster` (a background thread per table; one per host on a
//! shared table). The translation only: `cluster/README.md` describes the
//! sync, the error bound and what happens while Redis is unreachable.

use std::os::raw::c_char;

use ::sds_cluster::{Cluster, Config, Error};

use crate::args::{input, name, unbox};
use crate::boundary::{boundary, boundary_or, Failure};
use crate::entry::sds_reason;
use crate::result::sds_result;
use crate::service;
use crate::status::c_status;
use crate::table::sds_table;

/// What a cluster's syncer has done (`sds_cluster_status` writes it); the
/// counters count since start. `cluster/README.md` (Status) tells more.
#[repr(C)]
pub struct sds_cluster_state {
    /// The last sync reached Redis for at least one point.
    pub connected: bool,
    /// This process holds the host's syncer role (always on a private table).
    pub syncing: bool,
    /// Wall-clock ms of the last sync that reached Redis; 0: none yet.
    pub last_sync_ms: u64,
    /// The age of the remote counts in ms (0 before the first sync).
    pub lag_ms: u64,
    /// The time in Redis of the last successful sync, µs.
    pub rtt_us: u64,
    /// Syncs that succeeded since start.
    pub syncs: u64,
    /// Connection attempts and round trips that failed since start.
    pub failures: u64,
    /// Round trips sent to Redis since start (one per sync to one server).
    pub round_trips: u64,
    /// Redis commands sent since start, in all round trips.
    pub commands: u64,
    /// The cluster points synced.
    pub points: u64,
    /// Cluster points whose last sync failed while others did not (on a
    /// Redis Cluster, a lost master fails only its own points).
    pub points_failing: u64,
    /// The last failure's message, NUL-terminated; empty once a sync
    /// succeeds again.
    pub last_error: [c_char; 256],
}

// Filled from the status by name (`crate::status`); the order is the ABI's.
c_status! {
    sds_cluster_state {
        connected, syncing, last_sync_ms, lag_ms, rtt_us, syncs, failures, round_trips, commands,
        points, points_failing, last_error,
    }
}

/// A running cluster sync. Opaque: `sds_cluster_start`, `sds_cluster_stop`.
pub struct sds_cluster {
    pub(crate) cluster: Cluster,
    /// The address of the table it was started on (for `sds_metrics_text`).
    pub(crate) table: usize,
}

/// Makes the `points` of `settings` cluster points of `table` and starts
/// their sync with Redis on a background thread; writes the cluster to
/// `*out`. Never waits for Redis: an unreachable server shows in
/// `sds_cluster_status`, and decisions go on with local counts plus the
/// remote counts still inside the window.
///
/// `settings` is `settings_len` bytes of UTF-8 JSON: an object of the
/// cluster's settings (`cluster/README.md`, Rust API: names in snake_case
/// or camelCase, units, defaults), at least `urls` (a
/// `redis://[user[:password]@]host[:port][/db]` URL, `rediss://` for TLS,
/// or a list of seed nodes of a Redis Cluster with `"redis_cluster":
/// true`): `{"urls": "redis://127.0.0.1:6379", "points": ["pay"],
/// "sync_ms": 100}`.
///
/// Returns `SDS_RESULT_INVALID_JSON` for text that is not a JSON object,
/// `SDS_RESULT_INVALID_ARGUMENT` for settings the cluster refuses, with its
/// reason as the last error message (`SDS_INVALID_ARGUMENT: invalid cluster
/// configuration: ...`): an unknown setting, a value of the wrong type, no
/// URL, a name empty, too long or listed twice, a key prefix with a brace,
/// TLS files that cannot be read or do not fit. `SDS_RESULT_TABLE_FULL` when
/// the table has no room for a point, `SDS_RESULT_NULL_ARGUMENT` if `table`,
/// `settings` or `out` is NULL.
///
/// # Safety
/// `table` must be a live table (the cluster keeps its own reference: the
/// table may be freed before `sds_cluster_stop`), `settings` point to
/// `settings_len` bytes, `out` to a writable `sds_cluster *`.
#[no_mangle]
pub unsafe extern "C" fn sds_cluster_start(
    table: *const sds_table,
    settings: *const c_char,
    settings_len: usize,
    out: *mut *mut sds_cluster,
) -> sds_result {
    boundary(|| {
        service::start(table, settings, settings_len, out, |table, pairs| {
            let config = Config::from_settings(pairs).map_err(failure)?;
            let on = std::sync::Arc::as_ptr(&table) as usize;
            let cluster = Cluster::start(table, config).map_err(failure)?;
            Ok(sds_cluster { cluster, table: on })
        })
    })
}

/// Stops the sync and frees the cluster; NULL is a no-op. Infallible.
/// Waits for the thread, at most about one round trip's timeout. The points
/// stay cluster points; their remote counts leave the window within 10 s.
///
/// # Safety
/// `cluster` must be NULL or come from `sds_cluster_start`, not stopped yet.
#[no_mangle]
pub unsafe extern "C" fn sds_cluster_stop(cluster: *mut sds_cluster) {
    boundary_or((), || unbox(cluster))
}

/// Writes the syncer's state to `*out`.
///
/// Returns `SDS_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `cluster` must be a live cluster, `out` point to a writable
/// `sds_cluster_state`.
#[no_mangle]
pub unsafe extern "C" fn sds_cluster_status(
    cluster: *const sds_cluster,
    out: *mut sds_cluster_state,
) -> sds_result {
    boundary(|| service::status(cluster, "cluster", out, |c| &c.cluster))
}

/// An exact decision (`sds_cluster_enter_exact` writes it).
#[repr(C)]
pub struct sds_cluster_decision {
    /// The request may go on. No `sds_exit` follows an exact decision.
    pub admitted: bool,
    /// Redis decided (true); false: Redis was unreachable and the decision
    /// is the table's local one.
    pub exact: bool,
    /// Why it was refused; `SDS_REASON_NONE` when admitted.
    pub reason: sds_reason,
}

/// Exact mode: decides one request on the cluster point `name` at `now_ms`
/// in Redis (one Lua script checks `visit_threshold` and the token bucket on
/// the cluster's totals and counts the request, atomically), blocking for
/// one round trip; while Redis is unreachable, the table's local decision
/// (`out->exact` false). `cluster/README.md` explains the cost and what is
/// not applied.
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` when `name` is not one of the
/// cluster's points (or not UTF-8), `SDS_RESULT_NULL_ARGUMENT`.
///
/// # Safety
/// `cluster` must be a live cluster, `name` point to `name_len` bytes,
/// `out` to a writable `sds_cluster_decision`.
#[no_mangle]
pub unsafe extern "C" fn sds_cluster_enter_exact(
    cluster: *const sds_cluster,
    name_ptr: *const c_char,
    name_len: usize,
    now_ms: u64,
    out: *mut sds_cluster_decision,
) -> sds_result {
    boundary(|| {
        let cluster = input(cluster, "cluster")?;
        let point = std::str::from_utf8(name(name_ptr, name_len)?)
            .map_err(|_| Failure::invalid(&format_args!("`name` is not UTF-8")))?;
        let out = crate::args::out(out, "out")?;
        let d = cluster
            .cluster
            .enter_exact(point, now_ms)
            .map_err(failure)?;
        out.write(sds_cluster_decision {
            admitted: d.admitted,
            exact: d.exact,
            reason: sds_reason::of(d.reason),
        });
        Ok(())
    })
}

fn failure(e: Error) -> Failure {
    Failure::new(e.code(), &e)
}
