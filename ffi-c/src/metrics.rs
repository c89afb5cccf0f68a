//! `sds_metrics_*`: a client's metrics as Prometheus or OpenMetrics text
//! (`sds-metrics`: the families, their samples and the text are that
//! crate's; this module only reads the C handles and copies the text).
//!
//! Each table handle has its own `Exporter` (its counters never go back),
//! kept in a map by the handle's address: made at the handle's first
//! `sds_metrics_text`, dropped by `sds_table_free`, so the hot path's
//! `sds_table *` stays a bare `AnyTable` and a table never asked for its
//! metrics costs nothing. A call without a table (the keyed limits alone)
//! uses an exporter of its own: what it shows are the key tables' counters,
//! which only grow as read (and nothing is left allocated at exit).

use std::collections::HashMap;
use std::ffi::CString;
use std::os::raw::c_char;
use std::sync::{Arc, Mutex, OnceLock};

use sds_metrics::{exposition, Exporter, Format, ServiceState, Sources};
use sds_settings::Service;
use sds_shm::AnyTable;

use crate::agent::sds_agent;
use crate::args::out;
use crate::boundary::{boundary, boundary_or, Failure};
use crate::cluster::sds_cluster;
use crate::result::sds_result;
use crate::table::sds_table;

/// `format` of `sds_metrics_text`: the Prometheus text format 0.0.4.
pub const SDS_METRICS_PROMETHEUS: u32 = 0;
/// `format` of `sds_metrics_text`: OpenMetrics 1.0 text (ends in `# EOF`).
pub const SDS_METRICS_OPENMETRICS: u32 = 1;

/// The exporter of each table handle that asked for its metrics, by the
/// handle's address; `None` while there is none.
static EXPORTERS: Mutex<Option<HashMap<usize, Arc<Exporter>>>> = Mutex::new(None);

/// The exporter of `table`, made at its first call; a new one without.
fn exporter(table: Option<&AnyTable>) -> Arc<Exporter> {
    let Some(table) = table else {
        return Arc::default();
    };
    let mut map = EXPORTERS.lock().unwrap_or_else(|e| e.into_inner());
    map.get_or_insert_with(HashMap::new)
        .entry(table as *const AnyTable as usize)
        .or_default()
        .clone()
}

/// Forgets the exporter of a table handle being freed (`sds_table_free`):
/// a later table at the same address starts afresh. The map goes with
/// its last exporter.
pub(crate) fn forget_table(table: *const sds_table) {
    let mut map = EXPORTERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(exporters) = map.as_mut() {
        exporters.remove(&(table as usize));
        if exporters.is_empty() {
            *map = None;
        }
    }
}

fn format(format: u32) -> Option<Format> {
    match format {
        SDS_METRICS_PROMETHEUS => Some(Format::Prometheus),
        SDS_METRICS_OPENMETRICS => Some(Format::OpenMetrics),
        _ => None,
    }
}

/// What the exposition shows of `service`, started on the table at
/// `started_on` (`what` names it when `table` is not that one).
fn state<S: Service>(
    what: &'static str,
    service: &S,
    started_on: usize,
    table: Option<&AnyTable>,
) -> Result<ServiceState<S::Status>, Failure> {
    same_table(what, started_on, table)?;
    Ok(ServiceState {
        status: service.status(),
        running: service.is_running(),
    })
}

/// Checks that a service handle was started on `table` (its label is the
/// table's).
fn same_table(
    service: &'static str,
    started_on: usize,
    table: Option<&AnyTable>,
) -> Result<(), Failure> {
    match table {
        Some(t) if t as *const AnyTable as usize == started_on => Ok(()),
        Some(_) => Err(Failure::invalid(&format_args!(
            "`{service}` was started on another table"
        ))),
        None => Err(Failure::invalid(&format_args!(
            "`{service}` is given without its `table`"
        ))),
    }
}

/// Writes the metrics of `table` at `now_ms` (wall-clock ms: `sds_now_ms()`)
/// in `format` (`SDS_METRICS_PROMETHEUS` or `SDS_METRICS_OPENMETRICS`)
/// into `buf` as a NUL-terminated string, and its length without the NUL
/// to `*needed`: every point's requests, downgrades by reason, exceptions,
/// timeouts and requests in flight, the table's size, the state of
/// `agent` and `cluster` when given (NULL: not shown), and every keyed
/// limit of the process (`sds_keys_*`, until freed). The families, their
/// help and labels are every binding's (the sds-metrics crate's); each
/// table handle keeps its own exporter, so a counter never goes back from
/// one call to the next on the same handle.
///
/// When `*needed` is `len` or more the text did not fit: `buf` holds an
/// empty string (never a cut exposition), and a buffer of `*needed + 1`
/// bytes held this call's text. Call again with a larger one (the next
/// text can be a little longer: a new point, a count with one more digit).
///
/// `table` NULL: the keyed limits alone. `agent` and `cluster` must have
/// been started on `table` (`sds_agent_start`, `sds_cluster_start`).
///
/// Returns `SDS_RESULT_INVALID_ARGUMENT` for another `format`, a `len` of
/// 0, or an `agent` or `cluster` of another table (or given without one);
/// `SDS_RESULT_NULL_ARGUMENT` if `buf` or `needed` is NULL. Thread-safe.
///
/// # Safety
/// `table`, `agent` and `cluster` must each be NULL or live, `buf` point
/// to `len` writable bytes and `needed` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn sds_metrics_text(
    table: *const sds_table,
    agent: *const sds_agent,
    cluster: *const sds_cluster,
    format: u32,
    now_ms: u64,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> sds_result {
    boundary(|| {
        if buf.is_null() {
            return Err(Failure::null("buf"));
        }
        let needed = out(needed, "needed")?;
        if len == 0 {
            return Err(Failure::invalid(&"`len` is 0: no room for the NUL"));
        }
        let format = self::format(format).ok_or_else(|| {
            Failure::invalid(&format_args!(
                "{format} is not a metrics format (SDS_METRICS_PROMETHEUS or \
                 SDS_METRICS_OPENMETRICS)"
            ))
        })?;
        let table = (table as *const AnyTable).as_ref();
        let agent = agent.as_ref();
        let agent = agent
            .map(|a| state("agent", &a.agent, a.table, table))
            .transpose()?;
        let cluster = cluster.as_ref();
        let cluster = cluster
            .map(|c| state("cluster", &c.cluster, c.table, table))
            .transpose()?;
        let exporter = exporter(table);
        let sources = Sources {
            table,
            agent,
            cluster,
        };
        let text = exposition(&exporter, &sources, now_ms, format);
        let buf = buf.cast::<u8>();
        if text.len() < len {
            core::ptr::copy_nonoverlapping(text.as_ptr(), buf, text.len());
            buf.add(text.len()).write(0);
        } else {
            buf.write(0);
        }
        needed.write(text.len());
        Ok(())
    })
}

/// The HTTP `Content-Type` of `format`'s text (e.g. `"text/plain;
/// version=0.0.4; charset=utf-8"`): a static NUL-terminated string, never
/// to be freed; NULL for another `format`. Infallible.
#[no_mangle]
pub extern "C" fn sds_metrics_content_type(format: u32) -> *const c_char {
    boundary_or(core::ptr::null(), || {
        // The metrics crate's text, made a C string once per format.
        static TYPES: [OnceLock<CString>; 2] = [OnceLock::new(), OnceLock::new()];
        match self::format(format) {
            Some(f) => TYPES[format as usize]
                .get_or_init(|| CString::new(f.content_type()).unwrap_or_default())
                .as_ptr(),
            None => core::ptr::null(),
        }
    })
}
