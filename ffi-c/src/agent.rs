//! `sds_agent`: the SDS console protocol (`sds-agent`) for a table, from C.
//! The translation only: what the agent does is the agent crate's.

use std::ffi::{c_void, CString};
use std::fmt::Write;
use std::os::raw::c_char;
use std::sync::Arc;

use ::sds_agent::{Agent, AgentConfig, Level};

use crate::args::{input, name as point_name, out, unbox, write_text};
use crate::boundary::{boundary, boundary_or, Failure};
use crate::result::sds_result;
use crate::service;
use crate::status::c_status;
use crate::table::sds_table;

/// Log level of an agent's log line: a change applied.
pub const SDS_AGENT_LOG_INFO: u32 = 0;
/// Log level of an agent's log line: a failure the agent recovers from.
pub const SDS_AGENT_LOG_WARN: u32 = 1;
/// The size of the text fields of `sds_agent_status`, NUL included.
pub const SDS_AGENT_TEXT_LEN: usize = 256;

/// Receives an agent's log lines: `level` (`SDS_AGENT_LOG_*`) and the line
/// as `message_len` bytes of UTF-8 followed by a NUL. Called on the agent's
/// own thread; `message` is valid during the call only.
pub type sds_agent_log_fn = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        level: u32,
        message: *const c_char,
        message_len: usize,
    ),
>;

/// An agent's state, written by `sds_agent_status_get`. Times are UTC
/// milliseconds, 0 for never.
#[repr(C)]
pub struct sds_agent_status {
    /// When the last pull finished (or failed).
    pub last_pull_ms: u64,
    /// When the last upload finished (or failed).
    pub last_upload_ms: u64,
    /// The strategy version held (0 until the first set is applied; -1
    /// while the console's version is null, as on the shipped console with
    /// H2: every pull brings the whole set, applied when it changed).
    pub version: i64,
    /// Pulls that failed since start.
    pub pull_failures: u64,
    /// Uploads that failed since start.
    pub upload_failures: u64,
    /// Uploads delivered since start.
    pub uploads: u64,
    /// Console strategies waiting for room: their points are not in the
    /// table and the console may create points only while the table is at
    /// most half full (tried again at each pull).
    pub strategies_waiting: u64,
    /// Points left out of uploads: names the console cannot store (over
    /// 164 characters); the log names each once.
    pub points_left_out: u64,
    /// Whether the last pull succeeded.
    pub last_pull_ok: bool,
    /// Whether the last upload succeeded.
    pub last_upload_ok: bool,
    /// Whether this process is the host's reporter (the one that uploads).
    pub is_reporter: bool,
    /// The server the next request goes to (NUL-terminated, truncated).
    pub server: [c_char; SDS_AGENT_TEXT_LEN],
    /// The last failure's text (NUL-terminated, truncated); empty if none.
    pub last_error: [c_char; SDS_AGENT_TEXT_LEN],
}

// Filled from the status by name (`crate::status`); the order is the ABI's.
c_status! {
    sds_agent_status {
        last_pull_ms, last_upload_ms, version, pull_failures, upload_failures, uploads,
        strategies_waiting, points_left_out, last_pull_ok, last_upload_ok, is_reporter, server,
        last_error,
    }
}

/// A running agent. Opaque: `sds_agent_start` makes it, `sds_agent_stop`
/// stops and frees it. Its functions may be called from any thread.
pub struct sds_agent {
    pub(crate) agent: Agent,
    /// The address of the table it was started on (for `sds_metrics_text`).
    pub(crate) table: usize,
}

/// The caller's callback and context, moved to the agent's thread.
struct CLog(
    unsafe extern "C" fn(*mut c_void, u32, *const c_char, usize),
    *mut c_void,
);

// SAFETY: `sds_agent_start` documents that the callback is called from the
// agent's thread with this context; the caller vouches for that.
unsafe impl Send for CLog {}
unsafe impl Sync for CLog {}

impl CLog {
    fn call(&self, level: Level, line: &str) {
        let level = match level {
            Level::Info => SDS_AGENT_LOG_INFO,
            Level::Warn => SDS_AGENT_LOG_WARN,
        };
        // The agent's lines hold no NUL; one that did would be cut there.
        let text = CString::new(line.replace('\0', " ")).unwrap_or_default();
        // SAFETY: the caller's callback, with the context it gave.
        unsafe { (self.0)(self.1, level, text.as_ptr(), text.as_bytes().len()) };
    }
}

/// Starts the SDS console agent for `table` on a thread of its own: it
/// pulls the app's strategies at once and every `pull_interval_ms`, applies
/// each set whole (points missing from it lose their strategy; a strategy
/// the table refuses is logged and the point keeps its old one), and, when
/// this process holds the host's reporter role (always on a private table;
/// one process per shared table file), uploads the last whole cycle's
/// statistics at second 5 of every 10 s cycle. `sds_enter`/`sds_exit` never
/// wait on it. The agent holds the table: `sds_table_free` may come before
/// `sds_agent_stop`. In a process that forks, start the agent after the fork.
///
/// `settings` is `settings_len` bytes of UTF-8 JSON: an object of the
/// agent's settings (`agent/README.md`, API: names in snake_case or
/// camelCase, units, defaults), at least `servers` (one or several base
/// URLs of the console, comma-separated, `http://` or `https://`),
/// `app_group` and `app_name`: `{"servers": "http://admin1:8887",
/// "app_group": "g", "app_name": "a", "pull_interval_ms": 5000}`. The
/// agent's log lines go to `log` (NULL: nowhere; `sds_agent_status_get`
/// still tells) with `log_context` as its first argument.
///
/// Returns `SDS_RESULT_INVALID_JSON` for text that is not a JSON object,
/// `SDS_RESULT_INVALID_ARGUMENT` for settings the agent refuses, with the
/// agent's reason as the last error message (`SDS_INVALID_ARGUMENT: cannot
/// start the SDS agent: the app name is blank`): an unknown setting, a
/// value of the wrong type, a required one missing or blank, a server that
/// is not an `http://` or `https://` URL, TLS files that cannot be read or
/// do not fit; `SDS_RESULT_NULL_ARGUMENT` if `table`, `settings` or `out`
/// is NULL.
///
/// # Safety
/// `table` must be a live table, `settings` point to `settings_len` bytes,
/// `out` to a writable `sds_agent *`. `log`, if set, must be safe to call
/// from another thread with `log_context` until `sds_agent_stop` returns.
#[no_mangle]
pub unsafe extern "C" fn sds_agent_start(
    table: *const sds_table,
    settings: *const c_char,
    settings_len: usize,
    log: sds_agent_log_fn,
    log_context: *mut c_void,
    out: *mut *mut sds_agent,
) -> sds_result {
    boundary(|| {
        service::start(table, settings, settings_len, out, |table, pairs| {
            let mut config = AgentConfig::from_settings(pairs).map_err(|e| Failure::invalid(&e))?;
            if let Some(log) = log {
                let log = CLog(log, log_context);
                config.log = Some(Arc::new(move |level, line: &str| log.call(level, line)));
            }
            let on = Arc::as_ptr(&table) as usize;
            let agent = Agent::start(table, config).map_err(|e| Failure::invalid(&e))?;
            Ok(sds_agent { agent, table: on })
        })
    })
}

/// Stops the agent, joins its thread (at once while it sleeps, within one
/// timeout while a request is in flight) and frees it; NULL is a no-op.
/// Infallible. The table keeps the strategies in force. Safe from the
/// agent's own log callback: there it does not join (the agent's thread
/// ends when the callback returns).
///
/// # Safety
/// `agent` must be NULL or come from `sds_agent_start` and not be stopped
/// yet, with no other thread using it.
#[no_mangle]
pub unsafe extern "C" fn sds_agent_stop(agent: *mut sds_agent) {
    boundary_or((), || unbox(agent))
}

/// Writes the agent's state to `*out`.
///
/// Returns `SDS_RESULT_NULL_ARGUMENT` if `agent` or `out` is NULL.
///
/// # Safety
/// `agent` must be a live agent and `out` point to a writable struct.
#[no_mangle]
pub unsafe extern "C" fn sds_agent_status_get(
    agent: *const sds_agent,
    out: *mut sds_agent_status,
) -> sds_result {
    boundary(|| service::status(agent, "agent", out, |a| &a.agent))
}

/// The console's `returnValueStr` for point `name`, from the strategy in
/// force: writes `*found` (false when the point has none), and the text
/// into `buf` as a NUL-terminated string of at most `len - 1` bytes (whole
/// characters), and its full length in bytes to `*value_len`: when that is
/// `len` or more the text was cut, and a buffer of `*value_len + 1` bytes
/// holds it. An unknown point has none; it is not created.
///
/// Returns the name errors, `SDS_RESULT_INVALID_ARGUMENT` for a `len` of
/// 0, `SDS_RESULT_NULL_ARGUMENT` if a pointer is NULL.
///
/// # Safety
/// `agent` must be a live agent, `name` point to `name_len` bytes, `buf` to
/// `len` writable bytes, `value_len` and `found` to writable values.
#[no_mangle]
pub unsafe extern "C" fn sds_agent_return_value(
    agent: *const sds_agent,
    name: *const c_char,
    name_len: usize,
    buf: *mut c_char,
    len: usize,
    value_len: *mut usize,
    found: *mut bool,
) -> sds_result {
    boundary(|| {
        let agent = input(agent, "agent")?;
        let point = point_name(name, name_len)?;
        let (value_len, found) = (out(value_len, "value_len")?, out(found, "found")?);
        let value = core::str::from_utf8(point)
            .ok()
            .and_then(|point| agent.agent.return_value(point));
        let text = value.as_deref().unwrap_or("");
        // Cut to fit; `*value_len` gets the whole text's length.
        write_text(buf, len, &mut 0, |w| {
            let _ = w.write_str(text);
            Ok(())
        })?;
        value_len.write(text.len());
        found.write(value.is_some());
        Ok(())
    })
}
