//! `io.sdsnative.Client`'s natives: a `PointTable` behind a handle.
//!
//! Point names cross once, as UTF-8 bytes, to get a point id; Java caches the
//! id per name, so `enter` and `exit` take only integers.

use jni::objects::{JByteArray, JClass, JLongArray, JObject};
use jni::sys::{jclass, jint, jlong, jobject, JNIEnv};
use jni::EnvUnowned;
use sds_core::{check_capacity, Entry, ErrorCode, Flags, Outcome, PointId, Slot, Stats};

use crate::boundary::{hot, negative, setup, Fail};
use crate::handle::{borrow, free, into_handle, Table};
use crate::strategy::strategy_from_values;

fn name_bytes(env: &jni::Env, name: &JByteArray) -> Result<Vec<u8>, Fail> {
    use jni::refs::Reference;
    if name.is_null() {
        return Err(Fail::code(ErrorCode::NullArgument));
    }
    Ok(env.convert_byte_array(name)?)
}

fn table<'a>(handle: jlong) -> Result<&'a Table, Fail> {
    // SAFETY: the Java `Client` passes its own handle and itself as owner,
    // which keeps it reachable, so its table is not freed during the call.
    unsafe { borrow::<Table>(handle) }.map_err(Fail::code)
}

/// A new table of `capacity` points.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_tableNew<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    capacity: jint,
) -> jlong {
    setup(&mut env, |_| {
        // Negative reads as 0: the core's message names the range.
        check_capacity(usize::try_from(capacity).unwrap_or(0))?;
        let slots: Box<[Slot]> = (0..capacity).map(|_| Slot::new()).collect();
        Ok(into_handle(Table::new(slots)?))
    })
}

/// Frees a table (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_tableFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: called once per table, by the reclaimer, after its `Client`
    // was collected: no call can be using it (each passes its client).
    let _ = std::panic::catch_unwind(|| unsafe { free::<Table>(handle) });
}

/// The id of the point `name`, created if needed.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_pointId<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    _owner: JObject<'l>,
    name: JByteArray<'l>,
) -> jint {
    setup(&mut env, |env| {
        let name = name_bytes(env, &name)?;
        Ok(table(handle)?.insert(&name)?.index() as jint)
    })
}

/// Enters point `point` at `now_ms`; the packed entry (>= 0) or a negative
/// error code.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_enter(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    point: jint,
    now_ms: jlong,
    flags: jint,
) -> jlong {
    hot(|| {
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = match unsafe { borrow::<Table>(handle) } {
            Ok(t) => t,
            Err(code) => return negative(code),
        };
        let id = PointId::from_index(point as u32);
        match table.enter_point(id, now_ms.max(0) as u64, Flags::from_bits(flags as u32)) {
            // The core's packed entry: 43 bits, always a non-negative long.
            Ok(entry) => entry.pack() as jlong,
            Err(e) => negative(e.code()),
        }
    })
}

/// Exits an entry at `now_ms` (`outcome` 1: it failed); 0 or a negative
/// error code.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_exit(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    start_ms: jlong,
    packed: jlong,
    now_ms: jlong,
    outcome: jint,
) -> jlong {
    hot(|| {
        // SAFETY: the Java `Client` passes its own handle and itself as owner,
        // which keeps it reachable, so its table is not freed during the call.
        let table = match unsafe { borrow::<Table>(handle) } {
            Ok(t) => t,
            Err(code) => return negative(code),
        };
        let outcome = if outcome == 1 {
            Outcome::Error
        } else {
            Outcome::Ok
        };
        let Some(entry) = Entry::unpack(packed as u64, start_ms.max(0) as u64) else {
            return negative(ErrorCode::InvalidEntry);
        };
        match table.exit(&entry, now_ms.max(0) as u64, outcome) {
            Ok(()) => 0,
            Err(e) => negative(e.code()),
        }
    })
}

/// Sets the strategy of `name` from its field values (`null`: removes it).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_setStrategy<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    _owner: JObject<'l>,
    name: JByteArray<'l>,
    values: JLongArray<'l>,
) {
    setup(&mut env, |env| {
        use jni::refs::Reference;
        let name = name_bytes(env, &name)?;
        let table = table(handle)?;
        if values.is_null() {
            table.remove_strategy(&name)?;
        } else {
            table.set_strategy(&name, &strategy_from_values(env, &values)?)?;
        }
        Ok(())
    })
}

/// Writes the stats of `name` at `now_ms` into `out` (10 longs: the sliding
/// visit, exception, timeout, downgrade, concurrent, then the last cycle's
/// visitNum, exceptionNum, timeoutNum, downgradeNum, concurrentNum).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_stats<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    _owner: JObject<'l>,
    name: JByteArray<'l>,
    now_ms: jlong,
    out: JLongArray<'l>,
) {
    setup(&mut env, |env| {
        let name = name_bytes(env, &name)?;
        let s: Stats = table(handle)?.stats(&name, now_ms.max(0) as u64)?;
        let c = s.last_cycle;
        let values = [
            s.visit,
            s.exception,
            s.timeout,
            s.downgrade,
            s.concurrent,
            c.visit_num,
            c.exception_num,
            c.timeout_num,
            c.downgrade_num,
            c.concurrent_num,
        ]
        .map(|v| v.min(i64::MAX as u64) as i64);
        out.set_region(env, 0, &values)?;
        Ok(())
    })
}
