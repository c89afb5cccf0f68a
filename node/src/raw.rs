//! The raw N-API plumbing of the hot functions (`hot_path.rs` for point
//! tables, `keys.rs` for key tables; `hot_path.rs` says why they are raw):
//! functions whose `data` is one `Rc` share of what they work on, a
//! `Float64Array` over its `io` cells holding another share, and errors
//! (or panics) thrown as `Error`s with `.code`.

use std::cell::Cell;
use std::ffi::{c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;

use napi::sys;
use sds_core::ErrorCode;

use crate::errors::{js_error, SdsError};

/// What hot functions share: each function and the `io` array hold one
/// `Rc` share, given back by their N-API finalizers, so it lives as long
/// as anything that can reach it. All on one JS thread.
pub trait Shared: 'static {
    /// The numbers JavaScript and the functions pass each other.
    fn io(&self) -> &[Cell<f64>];

    /// What the last share does as it goes (told `env`, so V8 learns what
    /// was freed).
    fn last_release(self, env: sys::napi_env);
}

/// A native function as N-API calls it.
pub type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// An N-API status as a result: anything but `napi_ok` is a failure of
/// N-API itself, named by the call.
pub fn check(status: sys::napi_status, what: &str) -> Result<(), SdsError> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(js_error(ErrorCode::Panic, format!("{what} failed")))
    }
}

/// Throws `error` as an `Error` with `.code`; returns the null that tells
/// N-API the callback threw.
///
/// # Safety
/// `env` is the calling callback's.
#[cold]
pub unsafe fn throw(env: sys::napi_env, error: SdsError) -> sys::napi_value {
    let code = CString::new(error.status).unwrap_or_default();
    let message = CString::new(error.reason.replace('\0', " ")).unwrap_or_default();
    unsafe { sys::napi_throw_error(env, code.as_ptr(), message.as_ptr()) };
    ptr::null_mut()
}

/// Runs a callback's `step`: its error, or a panic, is thrown. Returns the
/// null that N-API gives JavaScript as `undefined`.
///
/// # Safety
/// `env` is the calling callback's.
#[inline(always)]
pub unsafe fn run_or_throw(
    env: sys::napi_env,
    step: impl FnOnce() -> Result<(), SdsError>,
) -> sys::napi_value {
    let result = catch_unwind(AssertUnwindSafe(step))
        .unwrap_or_else(|_| Err(js_error(ErrorCode::Panic, ErrorCode::Panic.description())));
    match result {
        Ok(()) => ptr::null_mut(),
        Err(error) => unsafe { throw(env, error) },
    }
}

/// The callback's arguments (up to `N`; N-API fills the ones not given
/// with `undefined`) and the `T` its function was made with by
/// [`add_function`]; `InvalidArgument` naming `what` when the function
/// carries no data.
///
/// # Safety
/// `env` and `info` are the calling callback's; its data, when not null,
/// is a live `T` share.
#[inline(always)]
pub unsafe fn callback<'a, T: Shared, const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    what: &str,
) -> Result<([sys::napi_value; N], &'a T), SdsError> {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
    let mut data = ptr::null_mut();
    check(
        unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                &mut data,
            )
        },
        "napi_get_cb_info",
    )?;
    if data.is_null() {
        return Err(js_error(ErrorCode::InvalidArgument, format!("not {what}")));
    }
    // SAFETY: the caller's promise.
    Ok((argv, unsafe { &*data.cast::<T>() }))
}

/// One `Rc` share of `shared` as an N-API data pointer.
fn share<T: Shared>(shared: &Rc<T>) -> *mut c_void {
    Rc::into_raw(Rc::clone(shared)) as *mut c_void
}

/// Gives back one share; the last one runs [`Shared::last_release`].
pub fn release_share<T: Shared>(env: sys::napi_env, shared: Rc<T>) {
    if let Some(shared) = Rc::into_inner(shared) {
        shared.last_release(env);
    }
}

/// N-API finalizer: gives back the share that [`share`] made (as `data` of
/// a function, or as the `hint` of the `io` buffer).
unsafe extern "C" fn release<T: Shared>(env: sys::napi_env, data: *mut c_void, hint: *mut c_void) {
    let shared = if hint.is_null() { data } else { hint };
    release_share(env, unsafe { Rc::from_raw(shared as *const T) });
}

/// A new empty object.
///
/// # Safety
/// `env` is live, on its thread.
pub unsafe fn new_object(env: sys::napi_env) -> Result<sys::napi_value, SdsError> {
    let mut object = ptr::null_mut();
    check(
        unsafe { sys::napi_create_object(env, &mut object) },
        "napi_create_object",
    )?;
    Ok(object)
}

/// Sets `object[name] = value`.
///
/// # Safety
/// `env` is live, on its thread; `object` and `value` are its values.
pub unsafe fn set(
    env: sys::napi_env,
    object: sys::napi_value,
    name: &CStr,
    value: sys::napi_value,
) -> Result<(), SdsError> {
    check(
        unsafe { sys::napi_set_named_property(env, object, name.as_ptr(), value) },
        "napi_set_named_property",
    )
}

/// Sets `object[name]` to a function calling `callback` with a share of
/// `shared` as its `data`.
///
/// # Safety
/// `env` is live, on its thread; `object` is its object; `callback` reads
/// its `data` as a `T`.
pub unsafe fn add_function<T: Shared>(
    env: sys::napi_env,
    object: sys::napi_value,
    name: &CStr,
    callback: Callback,
    shared: &Rc<T>,
) -> Result<(), SdsError> {
    let data = share(shared);
    let mut function = ptr::null_mut();
    let len = name.to_bytes().len() as isize;
    let created = unsafe {
        sys::napi_create_function(env, name.as_ptr(), len, Some(callback), data, &mut function)
    };
    if let Err(e) = check(created, "napi_create_function") {
        unsafe { release::<T>(env, data, ptr::null_mut()) };
        return Err(e);
    }
    let finalizer = unsafe {
        sys::napi_add_finalizer(
            env,
            function,
            data,
            Some(release::<T>),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    check(finalizer, "napi_add_finalizer")?;
    unsafe { set(env, object, name, function) }
}

/// A `Float64Array` over `shared.io()`; its buffer holds a share.
///
/// # Safety
/// `env` is live, on its thread.
pub unsafe fn io_array<T: Shared>(
    env: sys::napi_env,
    shared: &Rc<T>,
) -> Result<sys::napi_value, SdsError> {
    let hint = share(shared);
    let io = shared.io();
    let mut buffer = ptr::null_mut();
    // `[Cell<f64>]` has the layout of `[f64]`; the memory lives as long as
    // the share the buffer holds.
    let memory = io.as_ptr().cast_mut().cast::<c_void>();
    let bytes = std::mem::size_of_val(io);
    let created = unsafe {
        sys::napi_create_external_arraybuffer(
            env,
            memory,
            bytes,
            Some(release::<T>),
            hint,
            &mut buffer,
        )
    };
    if let Err(e) = check(created, "napi_create_external_arraybuffer") {
        unsafe { release::<T>(env, ptr::null_mut(), hint) };
        return Err(e);
    }
    let mut array = ptr::null_mut();
    let float64 = sys::TypedarrayType::float64_array;
    check(
        unsafe { sys::napi_create_typedarray(env, float64, io.len(), buffer, 0, &mut array) },
        "napi_create_typedarray",
    )?;
    Ok(array)
}
