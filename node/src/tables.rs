//! `NativeTable`: owns one client's `PointTable` (through its handle) and
//! serves the calls that are not on the hot path.

use std::sync::Arc;

use napi::bindgen_prelude::{Object, ObjectFinalize, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;
use sds_core::{PointTable, Slot, Stats, Strategy};
use sds_shm::AnyTable;

use crate::arguments;
use crate::errors::{from_core, from_strategy, internal, SdsError};
use crate::external_memory::{adjust, release_table, table_bytes};
use crate::hot_path::hot_functions;
use crate::strategy_object::{strategy_from_object, strategy_to_object};
use crate::table::{point_count, with_view};

/// `stats` as an object of the core's names, the last cycle nested under
/// `Stats::LAST_CYCLE`.
fn stats_object<'env>(env: &'env Env, stats: &Stats) -> napi::Result<Object<'env>> {
    let mut cycle = Object::new(env)?;
    for (name, value) in stats.last_cycle.fields() {
        cycle.set(name, value as f64)?;
    }
    let mut object = Object::new(env)?;
    for (name, value) in stats.fields() {
        object.set(name, value as f64)?;
    }
    object.set(Stats::LAST_CYCLE, cycle)?;
    Ok(object)
}

/// The points of one client. Names are the UTF-8 form of the JS string.
#[napi(namespace = "native", custom_finalize)]
pub struct NativeTable {
    // Shared with this table's hot-path functions, which may outlive it, and
    // with its console agent.
    pub(crate) table: Arc<AnyTable>,
}

impl ObjectFinalize for NativeTable {
    fn finalize(self, env: Env) -> napi::Result<()> {
        release_table(env.raw(), self.table);
        Ok(())
    }
}

#[napi(namespace = "native")]
impl NativeTable {
    /// A table of `capacity` points (1 to 2^20): the client's own, or with
    /// `shared` (a file name under /dev/shm, or a path) this process's
    /// attachment to a table file every process of the host may open,
    /// created with `mode` (0o600, the default, or 0o660).
    #[napi(
        constructor,
        ts_args_type = "capacity: number, shared?: string, mode?: number"
    )]
    pub fn new(
        env: &Env,
        capacity: Unknown,
        shared: Unknown,
        mode: Unknown,
    ) -> Result<NativeTable, SdsError> {
        // Checked before the slots are allocated, the same for a shared table.
        let capacity = arguments::capacity(capacity)?;
        let table = match arguments::shared_file(shared, mode)? {
            None => {
                let slots: Box<[Slot]> = (0..capacity).map(|_| Slot::new()).collect();
                AnyTable::Private(PointTable::new(slots).map_err(from_core)?)
            }
            Some((name, mode)) => AnyTable::Shared(crate::table::open(&name, capacity, mode)?),
        };
        adjust(env.raw(), table_bytes(table.capacity()));
        Ok(NativeTable {
            table: Arc::new(table),
        })
    }

    /// The file of a shared table, `null` for a private one.
    #[napi(getter, ts_return_type = "string | null")]
    pub fn shared_path(&self) -> Option<String> {
        match &*self.table {
            AnyTable::Shared(shared) => Some(shared.path().display().to_string()),
            AnyTable::Private(_) => None,
        }
    }

    /// This table's hot-path functions, which take and give their numbers
    /// through `io` (see node/src/hot_path.rs): `enter()` reads the point key
    /// `2 * pointId + pressureTest` and the time from `io[0..2]` and leaves
    /// the packed entry and the time used there; `exitOk()` / `exitError()` /
    /// `exitAbandoned()` read the packed entry, its start time and the time
    /// from `io[0..3]`.
    /// `-1` for a time means now.
    #[napi(
        ts_return_type = "{ enter(): void; exitOk(): void; exitError(): void; exitAbandoned(): void; io: Float64Array; emptyCall?(): void; readClock?(): void }"
    )]
    pub fn hot_path<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        hot_functions(env, &self.table)
    }

    /// The id of the point `name`, created if needed.
    #[napi(ts_args_type = "name: string")]
    pub fn insert(&self, name: Unknown) -> Result<u32, SdsError> {
        let name = arguments::name(name)?;
        let id = with_view!(&*self.table, t => t.insert(name.as_bytes())).map_err(from_core)?;
        Ok(id.index())
    }

    /// Sets the strategy of `name` from a JSON text, or from an object of
    /// SDS JSON names; returns the point's id.
    #[napi(ts_args_type = "name: string, strategy: string | object")]
    pub fn set_strategy(&self, name: Unknown, strategy: Unknown) -> Result<u32, SdsError> {
        let name = arguments::name(name)?;
        let strategy = if matches!(strategy.get_type(), Ok(ValueType::String)) {
            let json = arguments::text(strategy, "strategy JSON")?;
            Strategy::from_json(&json).map_err(from_strategy)?
        } else {
            strategy_from_object(&arguments::object(strategy, "strategy")?)?
        };
        let id = with_view!(&*self.table, t => t.set_strategy(name.as_bytes(), &strategy))
            .map_err(from_core)?;
        Ok(id.index())
    }

    /// Removes the strategy of `name`; its counters stay.
    #[napi(ts_args_type = "name: string")]
    pub fn remove_strategy(&self, name: Unknown) -> Result<(), SdsError> {
        let name = arguments::name(name)?;
        with_view!(&*self.table, t => t.remove_strategy(name.as_bytes())).map_err(from_core)
    }

    /// The strategy of `name` in SDS JSON names, or `null` when it has none
    /// (a point never created is not created).
    #[napi(
        ts_args_type = "name: string",
        ts_return_type = "Record<string, number> | null"
    )]
    pub fn strategy<'env>(
        &self,
        env: &'env Env,
        name: Unknown,
    ) -> Result<Option<Object<'env>>, SdsError> {
        let name = arguments::name(name)?;
        let strategy = with_view!(&*self.table, t => {
            let id = t.lookup(name.as_bytes()).map_err(from_core)?;
            let point = id.map(|id| t.point(id)).transpose().map_err(from_core)?;
            point.and_then(|point| point.strategy())
        });
        let object = strategy.map(|strategy| strategy_to_object(env, &strategy));
        object.transpose().map_err(internal)
    }

    /// The stats of `name` at `nowMs` (default: the addon's clock), all
    /// zero for a point never created (which this does not create).
    #[napi(
        ts_args_type = "name: string, nowMs?: number",
        ts_return_type = "Record<string, unknown>"
    )]
    pub fn stats<'env>(
        &self,
        env: &'env Env,
        name: Unknown,
        now_ms: Unknown,
    ) -> Result<Object<'env>, SdsError> {
        let name = arguments::name(name)?;
        let now = arguments::time_or_now(now_ms, "nowMs")?;
        let stats =
            with_view!(&*self.table, t => t.stats(name.as_bytes(), now)).map_err(from_core)?;
        stats_object(env, &stats).map_err(internal)
    }

    /// How many points exist.
    #[napi(getter)]
    pub fn point_count(&self) -> u32 {
        point_count(&self.table) as u32
    }

    /// How many points fit.
    #[napi(getter)]
    pub fn capacity(&self) -> u32 {
        self.table.capacity() as u32
    }
}
