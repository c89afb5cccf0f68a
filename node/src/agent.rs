//! `NativeAgent`: the SDS console agent (`sds-agent`) for one client's
//! table. The translation only: what the agent does, its settings and
//! which configs it refuses are the agent crate's (the options object goes
//! to `AgentConfig::from_settings` whole, see `settings.rs`); the life
//! cycle is `service.rs`'s; `lib/agent.js` builds `AdminAgent` on it.
//!
//! Log lines reach JavaScript through a threadsafe function that is
//! - weak (unref'd): it never keeps the event loop alive, so a process or a
//!   worker thread with a running agent ends when its work does;
//! - called non-blocking into a bounded queue: the agent's thread never
//!   waits for JavaScript; a line that finds the queue full (an event loop
//!   blocked for that many lines) is dropped, and one sent while the
//!   thread's environment shuts down goes nowhere.

use std::sync::Arc;

use napi::bindgen_prelude::{FnArgs, Object, ObjectFinalize, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status as NapiStatus};
use napi_derive::napi;
use sds_agent::{Agent, AgentConfig, Level, Status};
use sds_settings::Fields;

use crate::arguments;
use crate::errors::{invalid_argument, SdsError};
use crate::service::{Handle, Service};
use crate::settings;
use crate::tables::NativeTable;

/// Log lines waiting for the JavaScript thread before new ones are dropped.
const LOG_QUEUE: usize = 256;

/// `(level, message)` to JavaScript: weak, not callee-handled, bounded.
type LogArgs = FnArgs<(String, String)>;
type LogFunction = ThreadsafeFunction<LogArgs, (), LogArgs, NapiStatus, false, true, LOG_QUEUE>;

impl Service for Agent {
    type Status = Status;

    fn stop(&mut self) {
        Agent::stop(self);
    }

    fn status(&self) -> Status {
        Agent::status(self)
    }
}

/// The console agent of one table.
#[napi(namespace = "native", custom_finalize)]
pub struct NativeAgent {
    handle: Handle<Agent>,
}

impl ObjectFinalize for NativeAgent {
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        self.handle.close(&env);
        Ok(())
    }
}

#[napi(namespace = "native")]
impl NativeAgent {
    /// Starts the agent of `table`'s points with `options`, an object of
    /// the agent's settings (`sds_agent::SETTINGS`, camelCase or
    /// snake_case keys) or `undefined`; a setting left out or `null` takes
    /// the agent's default. `log(level, message)` gets its lines ("info" /
    /// "warn").
    #[napi(
        constructor,
        ts_args_type = "table: native.NativeTable, options: unknown, log: (level: string, message: string) => void"
    )]
    pub fn new(
        table: &NativeTable,
        options: Unknown,
        log: LogFunction,
    ) -> Result<NativeAgent, SdsError> {
        let pairs = settings::pairs(options, "connectAdmin options")?;
        let mut config = AgentConfig::from_settings(pairs).map_err(invalid_argument)?;
        config.log = Some(Arc::new(move |level: Level, line: &str| {
            // Never waits: a full queue or a closing environment drops the line.
            let _ = log.call(
                FnArgs::from((level.as_str().to_string(), line.to_string())),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        }));
        let handle = Handle::start(table, |table| {
            Agent::start(table, config).map_err(invalid_argument)
        })?;
        Ok(NativeAgent { handle })
    }

    /// The names of `status()`'s fields, snake_case (`sds_agent::Status`).
    #[napi]
    pub fn status_names() -> Vec<&'static str> {
        Status::NAMES.to_vec()
    }

    /// A snapshot of the agent's state (the last one after `close`), its
    /// fields camelCased.
    #[napi(ts_return_type = "Record<string, number | boolean | string>")]
    pub fn status<'env>(&self, env: &'env Env) -> Result<Object<'env>, SdsError> {
        self.handle.status(env)
    }

    /// The console's `returnValueStr` for `point`; `null` when it has none.
    #[napi(ts_args_type = "point: string", ts_return_type = "string | null")]
    pub fn return_value(&self, point: Unknown) -> Result<Option<String>, SdsError> {
        Ok(self.handle.service().return_value(&arguments::name(point)?))
    }

    /// Stops the agent and joins its thread (within one request timeout).
    /// Idempotent.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.handle.close(&env);
    }

    /// Whether `close` has not been called yet.
    #[napi(getter)]
    pub fn running(&self) -> bool {
        self.handle.running()
    }
}
