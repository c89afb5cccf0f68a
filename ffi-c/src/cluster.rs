//! `sds_cluster_*`: cluster points of an `sds_table`, synced with Redis by
//! `sds_cluster::Cluster` (a background thread per table; one per host on a
//! shared table). The translation only: `cluster/README.md` describes the
//! sync, the error bound and what happens while Redis is unreachable.

use std::os::raw::c_char;
use std::sync::Arc;

use ::sds_cluster::{Cluster, Config, Error, Status};
use sds_settings::Value;
use sds_shm::AnyTable;

use crate::args::{bytes, input, name};
use crate::boundary::{boundary, boundary_or, Failure};
use crate::entry::sds_reason;
use crate::result::{sds_result, SDS_MESSAGE_MAX};
use crate::service::{self, Service};
use crate::settings::{c_settings, text};
use crate::status::c_status;
use crate::table::sds_table;

/// `sds_cluster_config.flags`: the URLs are seed nodes of a Redis Cluster.
pub const SDS_CLUSTER_REDIS_CLUSTER: u32 = 1;

const _: () = assert!(SDS_MESSAGE_MAX + 1 == 256);

/// How a cluster syncs (`sds_cluster_start`). Zero-initialise it (`= {0}`):
/// NULL and 0 are the cluster's defaults. Text is UTF-8 (text that is not
/// is `SDS_RESULT_INVALID_ARGUMENT`). The fields are the cluster's settings
/// under their names (`cluster/README.md`), judged by the cluster itself.
#[repr(C)]
pub struct sds_cluster_config {
    /// `redis://[user[:password]@]host[:port][/db]` (`rediss://` for TLS); several seed nodes of
    /// a Redis Cluster separated by commas. `urls_len` bytes, no NUL needed.
    /// Required: NULL or no URL is refused.
    pub urls: *const c_char,
    /// Bytes of `urls`.
    pub urls_len: usize,
    /// The names of the cluster points: `points_len` pointers, the i-th
    /// `point_lens[i]` bytes long.
    pub points: *const *const c_char,
    /// The length of each name.
    pub point_lens: *const usize,
    /// How many points.
    pub points_len: usize,
    /// Sync period in ms; 0: the default (100).
    pub sync_ms: u64,
    /// Connect and round-trip timeout in ms; 0: the default (1000).
    pub timeout_ms: u64,
    /// Prefix of the keys and hash tags; NULL: the default ("sds").
    pub key_prefix: *const c_char,
    /// Bytes of `key_prefix`.
    pub key_prefix_len: usize,
    /// `SDS_CLUSTER_REDIS_CLUSTER` or 0.
    pub flags: u32,
    /// For `rediss://` URLs: a PEM file of the CA(s) that signed the
    /// servers' certificates, replacing the system's roots. A NUL-terminated
    /// path; NULL: the system's roots.
    pub tls_ca_file: *const c_char,
    /// A PEM client certificate (chain) for mutual TLS, with
    /// `tls_key_file`. A NUL-terminated path; NULL: none.
    pub tls_cert_file: *const c_char,
    /// The PEM private key of `tls_cert_file`. A NUL-terminated path.
    pub tls_key_file: *const c_char,
    /// The longest wait between reconnection attempts while Redis is
    /// unreachable, in ms (the wait doubles from `sync_ms` up to it); 0:
    /// the default (5000).
    pub max_backoff_ms: u64,
}

/// What a cluster's syncer has done (`sds_cluster_status` writes it).
#[repr(C)]
pub struct sds_cluster_state {
    /// The last round trip to Redis succeeded.
    pub connected: bool,
    /// This process holds the host's syncer role.
    pub syncing: bool,
    /// Wall-clock ms of the last successful sync; 0: none yet.
    pub last_sync_ms: u64,
    /// Age of the remote counts, ms.
    pub lag_ms: u64,
    /// The last successful round trip, µs.
    pub rtt_us: u64,
    /// Successful syncs.
    pub syncs: u64,
    /// Failed connection attempts and round trips.
    pub failures: u64,
    /// Round trips sent to Redis.
    pub round_trips: u64,
    /// Redis commands sent.
    pub commands: u64,
    /// Cluster points synced.
    pub points: u64,
    /// Cluster points whose last round trip failed (on a Redis Cluster, a
    /// lost master fails only its own points).
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
    cluster: Cluster,
}

impl Service for sds_cluster {
    const HANDLE: &'static str = "cluster";
    type Config = sds_cluster_config;
    type Status = Status;
    type CStatus = sds_cluster_state;

    unsafe fn start(table: Arc<AnyTable>, c: &sds_cluster_config) -> Result<Self, Failure> {
        let config = Config::from_settings(settings(c)?).map_err(failure)?;
        let cluster = Cluster::start(table, config).map_err(failure)?;
        Ok(sds_cluster { cluster })
    }

    fn status(&self) -> Status {
        self.cluster.status()
    }
}

/// Makes the points of `config` cluster points of `table` and starts their
/// sync with Redis on a background thread; writes the cluster to `*out`.
/// Never waits for Redis: an unreachable server shows in
/// `sds_cluster_status`, and decisions go on with local counts plus the
/// remote counts still inside the window.
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for a configuration the cluster
/// refuses, with its reason as the last error message
/// (`SDS_INVALID_ARGUMENT: invalid cluster configuration: ...`): no URL
/// (`urls` NULL included), a name empty, too long or listed twice, a key
/// prefix with a brace, text that is not UTF-8, unknown flags; TLS files
/// that cannot be read or parsed, a certificate without its key, TLS files
/// with a URL that is not `rediss://`. `SDS_RESULT_TABLE_FULL` when the
/// table has no room for a point, `SDS_RESULT_NULL_ARGUMENT` if `table`,
/// `config`, `out`, or `points` or `point_lens` with points, is NULL.
///
/// # Safety
/// `table` must be a live table (the cluster keeps its own reference: the
/// table may be freed before `sds_cluster_stop`); `config`'s pointers must point to their lengths in bytes
/// (the TLS paths: NULL or NUL-terminated); `out`
/// to a writable `sds_cluster *`.
#[no_mangle]
pub unsafe extern "C" fn sds_cluster_start(
    table: *const sds_table,
    config: *const sds_cluster_config,
    out: *mut *mut sds_cluster,
) -> sds_result {
    boundary(|| service::start(table, config, out))
}

/// Stops the sync and frees the cluster; NULL is a no-op. Infallible.
/// Waits for the thread, at most about one round trip's timeout. The points
/// stay cluster points; their remote counts leave the window within 10 s.
///
/// # Safety
/// `cluster` must be NULL or come from `sds_cluster_start`, not stopped yet.
#[no_mangle]
pub unsafe extern "C" fn sds_cluster_stop(cluster: *mut sds_cluster) {
    boundary_or((), || service::stop(cluster))
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
    boundary(|| service::status(cluster, out))
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

/// The settings of a C configuration: the struct's fields under their
/// names, `urls` split at its commas, the points as a list and `flags` as
/// `redis_cluster`.
///
/// # Safety
/// As `sds_cluster_start`'s `config`.
unsafe fn settings(c: &sds_cluster_config) -> Result<Vec<(String, Value)>, Failure> {
    let unknown = c.flags & !SDS_CLUSTER_REDIS_CLUSTER;
    if unknown != 0 {
        return Err(Failure::invalid(&format_args!(
            "unknown flag bits {unknown:#x} (only SDS_CLUSTER_REDIS_CLUSTER is known)"
        )));
    }
    let urls = match text(c.urls, c.urls_len, "urls")? {
        Value::Text(urls) => Value::List(
            urls.split(',')
                .map(str::trim)
                .filter(|url| !url.is_empty())
                .map(|url| Value::Text(url.to_string()))
                .collect(),
        ),
        absent => absent,
    };
    let flag = Value::Bool(c.flags & SDS_CLUSTER_REDIS_CLUSTER != 0);
    let prefix = text(c.key_prefix, c.key_prefix_len, "key_prefix")?;
    let mut pairs: Vec<(String, Value)> = [
        ("urls", urls),
        ("points", points(c)?),
        ("redis_cluster", flag),
        ("key_prefix", prefix),
    ]
    .map(|(key, value)| (key.to_string(), value))
    .into();
    pairs.extend(c_settings!(c; sync_ms, timeout_ms, max_backoff_ms,
        tls_ca_file, tls_cert_file, tls_key_file));
    Ok(pairs)
}

/// The point names as a list of text (a NULL name is null, which the
/// cluster refuses with its index).
///
/// # Safety
/// As `sds_cluster_start`'s `config`.
unsafe fn points(c: &sds_cluster_config) -> Result<Value, Failure> {
    if c.points_len == 0 {
        return Ok(Value::Null);
    }
    let names = bytes(
        c.points.cast(),
        c.points_len * size_of::<*const c_char>(),
        "points",
    )?;
    let lens = bytes(
        c.point_lens.cast(),
        c.points_len * size_of::<usize>(),
        "point_lens",
    )?;
    let names = std::slice::from_raw_parts(names.as_ptr().cast::<*const c_char>(), c.points_len);
    let lens = std::slice::from_raw_parts(lens.as_ptr().cast::<usize>(), c.points_len);
    let list = names
        .iter()
        .zip(lens)
        .enumerate()
        .map(|(i, (&name, &len))| text(name, len, &format!("points[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(Value::List(list))
}

fn failure(e: Error) -> Failure {
    Failure::new(e.code(), &e)
}
