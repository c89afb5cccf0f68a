//! `enter` and `exit`, the two calls of every guarded request, as raw N-API
//! callbacks bound to one table.
//!
//! Why raw: a `#[napi]` function of napi-rs 3 opens and closes a borrow
//! scope around every call (heap allocations included), and a class method
//! adds a type-tag check and an unwrap: together about ten times the cost of
//! the decision itself. Each callback here gets its table from its own
//! N-API `data` pointer (no lookup, no thread-local) and calls the core.
//!
//! Even the arguments skip N-API: converting a JavaScript number costs a
//! type check and a call each way, so the numbers travel through `io`, a
//! `Float64Array` of four over memory of [`Hot`] that JavaScript writes
//! before the call and reads after it (one thread, no callbacks into
//! JavaScript in between, so nothing else can touch it):
//!
//! - `enter()`: in `io[0]` the point key (`2 * pointId + pressureTest`),
//!   `io[1]` the time or [`NOW`]; out `io[0]` the packed entry, and `io[1]`
//!   the clock's time when it was [`NOW`] (a given time stays as it was).
//! - `exitOk()` / `exitError()` / `exitAbandoned()`: in `io[0]` the packed
//!   entry, `io[1]` its start time, `io[2]` the time or [`NOW`].
//!
//! Times are checked by the core's rule (`sds_core::time`), like every other
//! time the addon takes (see [`crate::arguments`]).
//!
//! With the cargo feature `bench-hooks` (benchmark builds only, never the
//! package's), `emptyCall()` and `readClock()` (`io[1]` the clock) do
//! nothing else: the benchmark times them to show what a pair costs before
//! any counting, the floor of this boundary.
//!
//! The `unsafe` is the N-API calls and the `data` pointer's lifetime; what
//! the callbacks compute is in the safe [`enter_numbers`] and
//! [`exit_numbers`], and a panic never crosses into JavaScript.

use std::cell::Cell;
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;

use napi::bindgen_prelude::Object;
use napi::{sys, Env};
use sds_core::{Flags, Outcome, PointId};
use sds_shm::AnyTable;

use crate::arguments::time_number;
use crate::entry_bits::{number, pack, unpack, whole_up_to};
use crate::errors::{from_core, invalid_argument, SdsError};
use crate::external_memory::release_table;
use crate::raw::{self, Shared};
use crate::table::with_view;

/// What JavaScript passes for "now": the addon then reads the clock itself,
/// cheaper than `Date.now()` (a V8 runtime call and a heap number). Never a
/// time: the core's rule refuses negative ones, and JavaScript passes NaN
/// (refused too) for anything that is not a number or is this marker.
pub const NOW: f64 = -1.0;

// A point key is `2 * pointId + flags`: the core's only flag must fit bit 0.
const _: () = assert!(Flags::PRESSURE_TEST.bits() == 1);

/// What the hot functions of one table share. Each function and the `io`
/// array hold one `Rc` share of this, released by their N-API finalizers, so
/// the table lives as long as anything that can reach it. All on one JS
/// thread; only the table's `Arc` is shared with another (the agent's).
pub struct Hot {
    table: Arc<AnyTable>,
    io: [Cell<f64>; IO_LEN],
}

const IO_LEN: usize = 4;

impl Hot {
    fn read<const N: usize>(&self) -> [f64; N] {
        core::array::from_fn(|i| self.io[i].get())
    }
}

impl Shared for Hot {
    fn io(&self) -> &[Cell<f64>] {
        &self.io
    }

    fn last_release(self, env: sys::napi_env) {
        release_table(env, self.table);
    }
}

/// `enter(key, nowMs)`: the packed entry, and the clock's time if `nowMs`
/// was [`NOW`]. `key` is `2 * pointId + pressureTest`.
pub fn enter_numbers(
    table: &AnyTable,
    [key, now_ms]: [f64; 2],
) -> Result<(f64, Option<u64>), SdsError> {
    let Some(key) = whole_up_to(key, u32::MAX as f64 * 2.0) else {
        return Err(invalid_argument(format!(
            "point key must be an integer >= 0, got {key}"
        )));
    };
    let (now, read) = if now_ms == NOW {
        let now = sds_clock::now_ms();
        (now, Some(now))
    } else {
        (time_number(now_ms, "nowMs")?, None)
    };
    let id = PointId::from_index((key >> 1) as u32);
    let flags = Flags::from_bits((key & 1) as u32);
    let entry = with_view!(table, t => t.enter_point(id, now, flags)).map_err(from_core)?;
    Ok((pack(entry), read))
}

/// `exitOk` / `exitError(packed, startMs, nowMs)`.
pub fn exit_numbers(
    table: &AnyTable,
    [packed, start_ms, now_ms]: [f64; 3],
    outcome: Outcome,
) -> Result<(), SdsError> {
    let entry = unpack(packed, time_number(start_ms, "startMs")?)?;
    if now_ms == NOW {
        // The core asks for the time only if this exit uses it (an ok exit
        // with no timeoutThreshold and no probe only returns its permit).
        return with_view!(table, t => t.exit_with(&entry, outcome, sds_clock::now_ms))
            .map_err(from_core);
    }
    let now = time_number(now_ms, "nowMs")?;
    with_view!(table, t => t.exit(&entry, now, outcome)).map_err(from_core)
}

/// The callback's `Hot`.
///
/// # Safety
/// `info` is the callback info of a function made by [`hot_functions`],
/// whose `data` is a live `Hot` share.
unsafe fn hot_of<'a>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Result<&'a Hot, SdsError> {
    let mut argc = 0;
    let mut data = ptr::null_mut();
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            ptr::null_mut(),
            ptr::null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok || data.is_null() {
        return Err(invalid_argument("not a hot-path function of a table"));
    }
    Ok(unsafe { &*data.cast::<Hot>() })
}

/// Runs `step` on the callback's `Hot`; its error, or a panic, is thrown to
/// JavaScript. Returns null, which N-API gives JavaScript as `undefined`.
#[inline(always)]
unsafe fn call(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    step: impl FnOnce(&Hot) -> Result<(), SdsError>,
) -> sys::napi_value {
    unsafe { raw::run_or_throw(env, || step(hot_of(env, info)?)) }
}

unsafe extern "C" fn enter_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let step = |hot: &Hot| {
        let (packed, read) = enter_numbers(&hot.table, hot.read())?;
        hot.io[0].set(packed);
        if let Some(now) = read {
            hot.io[1].set(number(now));
        }
        Ok(())
    };
    unsafe { call(env, info, step) }
}

/// `exitOk`, `exitError` and `exitAbandoned`: the exit with the core's
/// outcome code `CODE`.
unsafe extern "C" fn exit_callback<const CODE: u32>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // The core's table of codes; `CODE` is one of its own (see below).
    let outcome = match Outcome::from_code(CODE as i64) {
        Ok(outcome) => outcome,
        Err(_) => Outcome::Ok,
    };
    unsafe {
        call(env, info, |hot| {
            exit_numbers(&hot.table, hot.read(), outcome)
        })
    }
}

#[cfg(feature = "bench-hooks")]
unsafe extern "C" fn empty_callback(
    _env: sys::napi_env,
    _info: sys::napi_callback_info,
) -> sys::napi_value {
    ptr::null_mut()
}

#[cfg(feature = "bench-hooks")]
unsafe extern "C" fn clock_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let step = |hot: &Hot| {
        hot.io[1].set(number(sds_clock::now_ms()));
        Ok(())
    };
    unsafe { call(env, info, step) }
}

/// `{ enter, exitOk, exitError, exitAbandoned, io }` bound to `table` (and the benchmark's
/// `emptyCall`, `readClock` with the feature `bench-hooks`).
pub fn hot_functions<'env>(env: &'env Env, table: &Arc<AnyTable>) -> napi::Result<Object<'env>> {
    let env = env.raw();
    let hot = Rc::new(Hot {
        table: Arc::clone(table),
        io: Default::default(),
    });
    // SAFETY: `env` is this call's, on its thread.
    let object =
        unsafe { functions_of(env, &hot) }.map_err(|e| napi::Error::from_reason(e.reason))?;
    Ok(Object::from_raw(env, object))
}

/// The object of [`hot_functions`].
///
/// # Safety
/// `env` is live, on its thread.
unsafe fn functions_of(env: sys::napi_env, hot: &Rc<Hot>) -> Result<sys::napi_value, SdsError> {
    unsafe {
        let object = raw::new_object(env)?;
        raw::add_function(env, object, c"enter", enter_callback, hot)?;
        const OK: u32 = Outcome::Ok as u32;
        const ERROR: u32 = Outcome::Error as u32;
        const ABANDONED: u32 = Outcome::Abandoned as u32;
        raw::add_function(env, object, c"exitOk", exit_callback::<OK>, hot)?;
        raw::add_function(env, object, c"exitError", exit_callback::<ERROR>, hot)?;
        raw::add_function(
            env,
            object,
            c"exitAbandoned",
            exit_callback::<ABANDONED>,
            hot,
        )?;
        #[cfg(feature = "bench-hooks")]
        {
            raw::add_function(env, object, c"emptyCall", empty_callback, hot)?;
            raw::add_function(env, object, c"readClock", clock_callback, hot)?;
        }
        raw::set(env, object, c"io", raw::io_array(env, hot)?)?;
        Ok(object)
    }
}
