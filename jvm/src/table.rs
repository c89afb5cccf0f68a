//! `io.sdsnative.Client`'s natives: an [`AnyTable`] behind a handle, private
//! or this process's view of a shared table file (`shared.rs`). The handle is
//! `Arc::into_raw` of the table, so the console agent (`agent.rs`) can hold
//! the table too while the hot path reaches it with no extra indirection.
//!
//! Point names cross once, as UTF-8 bytes, to get a point id; Java caches the
//! id per name, so `enter` and `exit` take only integers.

use jni::objects::{JByteArray, JLongArray, JObject};
use jni::sys::{jclass, jint, jlong, JNIEnv};
use sds_core::{
    capacity_from_i128, time, CycleStats, Entry, ErrorCode, Flags, Outcome, PointId, PointTable,
    Slot, Stats,
};
use sds_shm::AnyTable;

use crate::boundary::{clamp, hot_native, setup_native, thrown, Fail, Refusal};
use crate::handle::{arc_into_handle, borrow, free_arc};
use crate::strategy::strategy_from_values;

/// Runs `$body` with `$t` bound to the core's table of `$table` (an
/// `&AnyTable`): the private one, or this process's view of the shared one
/// (whose `enter_point` gives back dead holders' permits after a refusal
/// for concurrency). Making the view fails only in a fork child that
/// cannot register; `$fail` maps that `sds_shm::Error`. The body is
/// compiled once per kind, so the private hot path pays one
/// well-predicted branch.
macro_rules! with_view {
    ($table:expr, $t:ident => $body:expr, $fail:expr) => {
        match $table {
            AnyTable::Private($t) => $body,
            AnyTable::Shared(shared) => {
                let view = shared.view().map_err($fail)?;
                let $t = &view;
                $body
            }
        }
    };
}

/// The table of `handle` and the bytes of the point name `name` (a null
/// name is refused first, as before any use of the table).
fn table_and_name<'a>(
    env: &jni::Env,
    handle: jlong,
    name: &JByteArray,
) -> Result<(&'a AnyTable, Vec<u8>), Fail> {
    use jni::refs::Reference;
    if name.is_null() {
        return Err(Fail::code(ErrorCode::NullArgument));
    }
    let name = env.convert_byte_array(name)?;
    // SAFETY: the Java `Client` passes its own handle and itself as owner,
    // which keeps it reachable, so its table is not freed during the call.
    let table = unsafe { borrow::<AnyTable>(handle) }.map_err(Fail::code)?;
    Ok((table, name))
}

setup_native! {
    /// A new table of `capacity` points.
    fn Java_io_sdsnative_Native_tableNew(_, capacity: jint) -> jlong {
        // Checked before the slots are allocated.
        let capacity = capacity_from_i128(capacity.into())?;
        let slots: Box<[Slot]> = (0..capacity).map(|_| Slot::new()).collect();
        Ok(arc_into_handle(AnyTable::Private(PointTable::new(slots)?)))
    }

    /// The id of the point `name`, created if needed.
    fn Java_io_sdsnative_Native_pointId(
        env, handle: jlong, _owner: JObject<'l>, name: JByteArray<'l>,
    ) -> jint {
        let (table, name) = table_and_name(env, handle, &name)?;
        let id = with_view!(table, t => t.insert(&name)?, Fail::from);
        Ok(id.index() as jint)
    }

    /// Sets the strategy of `name` from its field values (`null`: removes it).
    fn Java_io_sdsnative_Native_setStrategy(
        env, handle: jlong, _owner: JObject<'l>, name: JByteArray<'l>, values: JLongArray<'l>,
    ) {
        use jni::refs::Reference;
        let (table, name) = table_and_name(env, handle, &name)?;
        let strategy = if values.is_null() {
            None
        } else {
            Some(strategy_from_values(env, &values)?)
        };
        with_view!(table, t => match &strategy {
            None => t.remove_strategy(&name)?,
            Some(strategy) => {
                t.set_strategy(&name, strategy)?;
            }
        }, Fail::from);
        Ok(())
    }

    /// Writes the stats of `name` at `now_ms` into `out`: the values of
    /// [`Stats::fields`] then those of the last cycle's [`CycleStats::fields`],
    /// in the order of [`stats_names`].
    fn Java_io_sdsnative_Native_stats(
        env,
        handle: jlong,
        _owner: JObject<'l>,
        name: JByteArray<'l>,
        now_ms: jlong,
        out: JLongArray<'l>,
    ) {
        let (table, name) = table_and_name(env, handle, &name)?;
        let now_ms = time::from_i64(now_ms)?;
        let s: Stats = with_view!(table, t => t.stats(&name, now_ms)?, Fail::from);
        let values: Vec<i64> = s
            .fields()
            .iter()
            .chain(s.last_cycle.fields().iter())
            .map(|&(_, v)| clamp(v))
            .collect();
        out.set_region(env, 0, &values)?;
        Ok(())
    }
}

/// Frees a table (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_tableFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: called once per table, by its `NativeHandle` once no call is
    // using it.
    unsafe { free_arc::<AnyTable>(handle) }
}

hot_native! {
    /// Enters point `point` at `now_ms`: the packed entry (>= 0), or throws.
    fn Java_io_sdsnative_Native_enter(point: jint, now_ms: jlong, flags: jint) with |env, table: AnyTable| {
        let id = PointId::from_index(point as u32);
        let now_ms = time::from_i64(now_ms)?;
        let flags = Flags::from_known_bits(flags as u32)?;
        let entry = with_view!(table, t => t.enter_point(id, now_ms, flags)?, |e| thrown(env, e));
        // The core's packed entry: 43 bits, always a non-negative long.
        Ok(entry.pack() as jlong)
    }

    /// Exits an entry at `now_ms` (`outcome` 0: ok, 1: it failed); 0, or throws.
    fn Java_io_sdsnative_Native_exit(
        start_ms: jlong, packed: jlong, now_ms: jlong, outcome: jint,
    ) with |env, table: AnyTable| {
        let outcome = Outcome::from_code(i64::from(outcome))?;
        let entry = Entry::unpack(packed as u64, time::from_i64(start_ms)?)
            .ok_or(Refusal::Code(ErrorCode::InvalidEntry))?;
        let now_ms = time::from_i64(now_ms)?;
        with_view!(table, t => t.exit(&entry, now_ms, outcome)?, |e| thrown(env, e));
        Ok(0)
    }
}

/// The names of the values [`Java_io_sdsnative_Native_stats`] writes: the
/// sliding ones, then the last cycle's under `lastCycle.`.
pub(crate) fn stats_names() -> Vec<String> {
    let nested = CycleStats::NAMES
        .iter()
        .map(|n| format!("{}.{n}", Stats::LAST_CYCLE));
    Stats::NAMES
        .iter()
        .map(|n| n.to_string())
        .chain(nested)
        .collect()
}
