//! `NativeTable`: owns one client's `PointTable` (through its handle) and
//! serves the calls that are not on the hot path.

use std::rc::Rc;

use napi::bindgen_prelude::{Object, ObjectFinalize, Unknown};
use napi::Env;
use napi_derive::napi;
use sds_core::{check_capacity, PointId, PointTable, Slot, Stats, Strategy};

use crate::arguments;
use crate::errors::{from_core, from_json, invalid_argument, SdsError};
use crate::external_memory::{adjust, release_table, table_bytes};
use crate::hot_path::{hot_functions, Table};
use crate::strategy_object::strategy_from_object;
use crate::time::{is_count, ms};

/// A point's statistics as plain numbers (`lastCycle` is assembled in JS).
#[napi(object, namespace = "native")]
pub struct NativeStats {
    pub visit: f64,
    pub exception: f64,
    pub timeout: f64,
    pub downgrade: f64,
    pub concurrent: f64,
    pub visit_num: f64,
    pub exception_num: f64,
    pub timeout_num: f64,
    pub downgrade_num: f64,
    pub concurrent_num: f64,
}

impl From<Stats> for NativeStats {
    fn from(s: Stats) -> NativeStats {
        let c = s.last_cycle;
        NativeStats {
            visit: s.visit as f64,
            exception: s.exception as f64,
            timeout: s.timeout as f64,
            downgrade: s.downgrade as f64,
            concurrent: s.concurrent as f64,
            visit_num: c.visit_num as f64,
            exception_num: c.exception_num as f64,
            timeout_num: c.timeout_num as f64,
            downgrade_num: c.downgrade_num as f64,
            concurrent_num: c.concurrent_num as f64,
        }
    }
}

/// The points of one client. Names are the UTF-8 form of the JS string.
#[napi(namespace = "native", custom_finalize)]
pub struct NativeTable {
    // Shared with this table's hot-path functions, which may outlive it.
    table: Rc<Table>,
}

impl ObjectFinalize for NativeTable {
    fn finalize(self, env: Env) -> napi::Result<()> {
        release_table(env.raw(), self.table);
        Ok(())
    }
}

#[napi(namespace = "native")]
impl NativeTable {
    /// A table of `capacity` points (1 to 2^20).
    #[napi(constructor, ts_args_type = "capacity: number")]
    pub fn new(env: &Env, capacity: Unknown) -> Result<NativeTable, SdsError> {
        let capacity = arguments::number(capacity, "capacity")?;
        if !is_count(capacity) {
            return Err(invalid_argument(format!(
                "capacity must be a positive integer, got {capacity}"
            )));
        }
        // Checked before allocating the slots.
        check_capacity(capacity.min(usize::MAX as f64) as usize).map_err(from_core)?;
        let slots: Box<[Slot]> = (0..capacity as usize).map(|_| Slot::new()).collect();
        let table = PointTable::new(slots).map_err(from_core)?;
        adjust(env.raw(), table_bytes(table.capacity()));
        Ok(NativeTable {
            table: Rc::new(table),
        })
    }

    /// This table's hot-path functions, which take and give their numbers
    /// through `io` (see node/src/hot_path.rs): `enter()` reads the point key
    /// `2 * pointId + pressureTest` and the time from `io[0..2]` and leaves
    /// the packed entry and the time used there; `exitOk()` / `exitError()`
    /// read the packed entry, its start time and the time from `io[0..3]`.
    /// `-1` for a time means now.
    #[napi(
        ts_return_type = "{ enter(): void; exitOk(): void; exitError(): void; io: Float64Array }"
    )]
    pub fn hot_path<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        hot_functions(env, &self.table)
    }

    /// The id of the point `name`, created if needed.
    #[napi(ts_args_type = "name: string")]
    pub fn insert(&self, name: Unknown) -> Result<u32, SdsError> {
        let name = arguments::name(name)?;
        let id = self.table.insert(name.as_bytes()).map_err(from_core)?;
        Ok(id.index())
    }

    /// Sets the strategy of `name` from a JSON text; returns the point's id.
    #[napi(ts_args_type = "name: string, json: string")]
    pub fn set_strategy_json(&self, name: Unknown, json: Unknown) -> Result<u32, SdsError> {
        let name = arguments::name(name)?;
        let json = arguments::text(json, "strategy JSON")?;
        let strategy = Strategy::from_json(&json).map_err(from_json)?;
        self.set(&name, &strategy)
    }

    /// Sets the strategy of `name` from an object of SDS JSON names.
    #[napi(ts_args_type = "name: string, fields: object")]
    pub fn set_strategy_object(&self, name: Unknown, fields: Unknown) -> Result<u32, SdsError> {
        let name = arguments::name(name)?;
        let fields = arguments::object(fields, "strategy")?;
        let strategy = strategy_from_object(&fields)?;
        self.set(&name, &strategy)
    }

    fn set(&self, name: &str, strategy: &Strategy) -> Result<u32, SdsError> {
        let id = self
            .table
            .set_strategy(name.as_bytes(), strategy)
            .map_err(from_core)?;
        Ok(id.index())
    }

    /// Removes the strategy of `name`; its counters stay.
    #[napi(ts_args_type = "name: string")]
    pub fn remove_strategy(&self, name: Unknown) -> Result<(), SdsError> {
        let name = arguments::name(name)?;
        self.table
            .remove_strategy(name.as_bytes())
            .map_err(from_core)
    }

    /// The stats of point `id`.
    #[napi(ts_args_type = "id: number, nowMs: number")]
    pub fn stats(&self, id: Unknown, now_ms: Unknown) -> Result<NativeStats, SdsError> {
        let id = arguments::point_id(id)?;
        let now = ms(arguments::number(now_ms, "nowMs")?, "nowMs")?;
        let point = self
            .table
            .point(PointId::from_index(id))
            .map_err(from_core)?;
        Ok(point.stats(now).into())
    }

    /// The stats of `name`, all zero for a point never created (which this
    /// does not create).
    #[napi(ts_args_type = "name: string, nowMs: number")]
    pub fn stats_by_name(&self, name: Unknown, now_ms: Unknown) -> Result<NativeStats, SdsError> {
        let name = arguments::name(name)?;
        let now = ms(arguments::number(now_ms, "nowMs")?, "nowMs")?;
        let stats = self.table.stats(name.as_bytes(), now).map_err(from_core)?;
        Ok(stats.into())
    }

    /// How many points exist.
    #[napi(getter)]
    pub fn point_count(&self) -> u32 {
        self.table.len() as u32
    }

    /// How many points fit.
    #[napi(getter)]
    pub fn capacity(&self) -> u32 {
        self.table.capacity() as u32
    }
}
