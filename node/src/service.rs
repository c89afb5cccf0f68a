//! The one life cycle of the addon's background services (`NativeAgent`,
//! `NativeCluster`): a crate's thread started on a client's table, and this
//! object's share of the table, given back on the JavaScript thread once
//! the thread has stopped (the last share frees the table and reports it
//! to V8 there, see `external_memory.rs`). Stopped by `close()`, or by the
//! finalizer when the environment (the process, a worker) ends first.

use std::sync::Arc;

use napi::bindgen_prelude::Object;
use napi::Env;
use sds_settings::Fields;
use sds_shm::AnyTable;

use crate::errors::SdsError;
use crate::external_memory::release_table;
use crate::settings::status_object;
use crate::tables::NativeTable;

/// A crate's service as the handle drives it.
pub trait Service {
    /// Its status, as fields.
    type Status: Fields;
    /// Stops its thread and joins it; idempotent.
    fn stop(&mut self);
    /// The status now; once stopped, the last one.
    fn status(&self) -> Self::Status;
}

/// A started service and this object's share of its table.
pub struct Handle<S> {
    service: S,
    table: Option<Arc<AnyTable>>,
}

impl<S: Service> Handle<S> {
    /// `start` run with a share of `table`; this handle keeps another.
    pub fn start(
        table: &NativeTable,
        start: impl FnOnce(Arc<AnyTable>) -> Result<S, SdsError>,
    ) -> Result<Handle<S>, SdsError> {
        Ok(Handle {
            service: start(Arc::clone(&table.table))?,
            table: Some(Arc::clone(&table.table)),
        })
    }

    /// The service itself, for the calls only it has.
    pub fn service(&self) -> &S {
        &self.service
    }

    /// Stops the service, then gives the table back. Idempotent.
    pub fn close(&mut self, env: &Env) {
        self.service.stop();
        if let Some(table) = self.table.take() {
            release_table(env.raw(), table);
        }
    }

    /// Whether `close` has not been called yet.
    pub fn running(&self) -> bool {
        self.table.is_some()
    }

    /// The status as a plain object (see [`status_object`]).
    pub fn status<'env>(&self, env: &'env Env) -> Result<Object<'env>, SdsError> {
        status_object(env, &self.service.status())
    }
}
