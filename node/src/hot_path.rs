//! `enter` and `exit`, the two calls of every guarded request, as raw N-API
//! callbacks.
//!
//! Why raw: a `#[napi]` function of napi-rs 3 opens and closes a borrow
//! scope around every call (heap allocations included), which measured
//! about ten times the cost of the decision itself. These two callbacks read
//! plain numbers, call the core, and return one number, nothing more. The
//! `unsafe` is limited to the N-API calls; everything they compute is in the
//! safe functions [`enter_numbers`] and [`exit_numbers`], and a panic never
//! crosses into JavaScript.
//!
//! When JavaScript passes `-1` for the time, the addon reads the clock and
//! writes the time it used into a one-number `Float64Array` shared with
//! JavaScript (`hotPath().clock`), so the entry learns its start time
//! without a second call.

use std::cell::Cell;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::bindgen_prelude::Object;
use napi::{sys, Env};
use napi_derive::napi;
use sds_core::{ErrorCode, Flags, Outcome, PointId};

use crate::entry_bits::{pack, unpack};
use crate::errors::{from_core, invalid_argument, js_error, SdsError};
use crate::registry::with_table;
use crate::time::{ms, ms_or_now};

thread_local! {
    /// The `clock` array of this thread's `hotPath()`; null until then.
    static CLOCK_OUT: Cell<*mut f64> = const { Cell::new(ptr::null_mut()) };
}

fn index(value: f64, what: &str) -> Result<u32, SdsError> {
    if (0.0..=u32::MAX as f64).contains(&value) && value as u32 as f64 == value {
        Ok(value as u32)
    } else {
        Err(invalid_argument(format!(
            "{what} must be a 32-bit unsigned integer, got {value}"
        )))
    }
}

/// `enter(handle, id, nowMs, flags)`: the packed entry and the time used.
pub fn enter_numbers(args: [f64; 4]) -> Result<(f64, u64), SdsError> {
    let [handle, id, now_ms, flags] = args;
    let (handle, id) = (index(handle, "handle")?, index(id, "point id")?);
    let now = ms_or_now(now_ms, "nowMs")?;
    let flags = Flags::from_bits(index(flags, "flags")?);
    let entry = with_table(handle, |t| {
        t.enter_point(PointId::from_index(id), now, flags)
            .map_err(from_core)
    })?;
    Ok((pack(entry), now))
}

/// `exit(handle, packed, startMs, nowMs, failed)`.
pub fn exit_numbers(args: [f64; 4], failed: bool) -> Result<(), SdsError> {
    let [handle, packed, start_ms, now_ms] = args;
    let handle = index(handle, "handle")?;
    let entry = unpack(packed, ms(start_ms, "startMs")?)?;
    let now = ms_or_now(now_ms, "nowMs")?;
    let outcome = if failed { Outcome::Error } else { Outcome::Ok };
    with_table(handle, |t| t.exit(&entry, now, outcome).map_err(from_core))
}

/// Throws `error` as an `Error` with `.code`; returns the null that tells
/// N-API the callback threw.
unsafe fn throw(env: sys::napi_env, error: SdsError) -> sys::napi_value {
    let code = CString::new(error.status).unwrap_or_default();
    let message = CString::new(error.reason.replace('\0', " ")).unwrap_or_default();
    unsafe { sys::napi_throw_error(env, code.as_ptr(), message.as_ptr()) };
    ptr::null_mut()
}

/// Reads the callback's first `N` arguments as numbers and the next
/// `BOOLS` as booleans; missing or mistyped ones are an error.
unsafe fn read_args<const N: usize, const BOOLS: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Result<([f64; N], [bool; BOOLS]), SdsError> {
    const MAX: usize = 8;
    let mut argv = [ptr::null_mut(); MAX];
    let mut argc = MAX;
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || argc < N + BOOLS {
        return Err(invalid_argument(format!(
            "expected {} arguments, got {argc}",
            N + BOOLS
        )));
    }
    let mut numbers = [0.0; N];
    for (i, slot) in numbers.iter_mut().enumerate() {
        if unsafe { sys::napi_get_value_double(env, argv[i], slot) } != sys::Status::napi_ok {
            return Err(invalid_argument(format!("argument {i} must be a number")));
        }
    }
    let mut bools = [false; BOOLS];
    for (i, slot) in bools.iter_mut().enumerate() {
        if unsafe { sys::napi_get_value_bool(env, argv[N + i], slot) } != sys::Status::napi_ok {
            return Err(invalid_argument(format!(
                "argument {} must be a boolean",
                N + i
            )));
        }
    }
    Ok((numbers, bools))
}

fn panicked() -> SdsError {
    js_error(ErrorCode::Panic, ErrorCode::Panic.description())
}

unsafe extern "C" fn enter_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let (numbers, []) = unsafe { read_args::<4, 0>(env, info) }?;
        enter_numbers(numbers)
    }))
    .unwrap_or_else(|_| Err(panicked()));
    match result {
        Ok((packed, now)) => {
            let clock = CLOCK_OUT.with(Cell::get);
            if !clock.is_null() {
                // Points into the ArrayBuffer that `hot_path` keeps alive.
                unsafe { clock.write(now as f64) };
            }
            let mut value = ptr::null_mut();
            // A small integer comes back as a V8 Smi: no allocation.
            if unsafe { sys::napi_create_double(env, packed, &mut value) } != sys::Status::napi_ok {
                return ptr::null_mut();
            }
            value
        }
        Err(error) => unsafe { throw(env, error) },
    }
}

unsafe extern "C" fn exit_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let (numbers, [failed]) = unsafe { read_args::<4, 1>(env, info) }?;
        exit_numbers(numbers, failed)
    }))
    .unwrap_or_else(|_| Err(panicked()));
    match result {
        // Returning null from a callback gives JavaScript `undefined`.
        Ok(()) => ptr::null_mut(),
        Err(error) => unsafe { throw(env, error) },
    }
}

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

unsafe fn add_function(
    env: sys::napi_env,
    object: sys::napi_value,
    name: &std::ffi::CStr,
    callback: Callback,
) -> napi::Result<()> {
    let mut function = ptr::null_mut();
    let status = unsafe {
        sys::napi_create_function(
            env,
            name.as_ptr(),
            name.to_bytes().len() as isize,
            Some(callback),
            ptr::null_mut(),
            &mut function,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(napi::Error::from_reason("napi_create_function failed"));
    }
    if unsafe { sys::napi_set_named_property(env, object, name.as_ptr(), function) }
        != sys::Status::napi_ok
    {
        return Err(napi::Error::from_reason("napi_set_named_property failed"));
    }
    Ok(())
}

/// A `Float64Array` of one element over memory the addon may write, kept
/// alive for the life of the environment.
unsafe fn clock_array(env: sys::napi_env) -> napi::Result<sys::napi_value> {
    let fail = |what: &str| Err(napi::Error::from_reason(format!("{what} failed")));
    let mut data = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    if unsafe { sys::napi_create_arraybuffer(env, 8, &mut data, &mut buffer) }
        != sys::Status::napi_ok
    {
        return fail("napi_create_arraybuffer");
    }
    let mut reference = ptr::null_mut();
    if unsafe { sys::napi_create_reference(env, buffer, 1, &mut reference) } != sys::Status::napi_ok
    {
        return fail("napi_create_reference");
    }
    let mut array = ptr::null_mut();
    let float64 = sys::TypedarrayType::float64_array;
    if unsafe { sys::napi_create_typedarray(env, float64, 1, buffer, 0, &mut array) }
        != sys::Status::napi_ok
    {
        return fail("napi_create_typedarray");
    }
    CLOCK_OUT.with(|c| c.set(data.cast()));
    Ok(array)
}

/// The hot-path functions: `enter(handle, id, nowMs, flags)` returns the
/// packed entry; `exit(handle, packed, startMs, nowMs, failed)` settles it.
/// `-1` for a time means now; `clock[0]` is the time the last `enter` used.
#[napi(
    namespace = "native",
    ts_return_type = "{ enter(handle: number, id: number, nowMs: number, flags: number): number; exit(handle: number, packed: number, startMs: number, nowMs: number, failed: boolean): void; clock: Float64Array }"
)]
pub fn hot_path(env: Env) -> napi::Result<Object<'static>> {
    let raw_env = env.raw();
    let mut object = ptr::null_mut();
    if unsafe { sys::napi_create_object(raw_env, &mut object) } != sys::Status::napi_ok {
        return Err(napi::Error::from_reason("napi_create_object failed"));
    }
    unsafe {
        add_function(raw_env, object, c"enter", enter_callback)?;
        add_function(raw_env, object, c"exit", exit_callback)?;
        let clock = clock_array(raw_env)?;
        if sys::napi_set_named_property(raw_env, object, c"clock".as_ptr(), clock)
            != sys::Status::napi_ok
        {
            return Err(napi::Error::from_reason("napi_set_named_property failed"));
        }
    }
    Ok(Object::from_raw(raw_env, object))
}
