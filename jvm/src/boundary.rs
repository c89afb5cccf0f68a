//! The panic and error boundary between Rust and the JVM.

use std::panic::{catch_unwind, AssertUnwindSafe};

use jni::errors::ThrowRuntimeExAndDefault;
use jni::objects::{JThrowable, JValue};
use jni::sys::JNIEnv;
use jni::{jni_sig, jni_str, Env, EnvUnowned};
use sds_core::{Error, ErrorCode, StrategyError};

/// Why a setup call failed: an SDS error to throw as `SdsException`, or a
/// JNI failure (an exception is then usually pending already).
pub(crate) enum Fail {
    Sds(ErrorCode, String),
    Jni(jni::errors::Error),
}

impl From<jni::errors::Error> for Fail {
    fn from(e: jni::errors::Error) -> Fail {
        Fail::Jni(e)
    }
}

/// Errors that carry their code: thrown with it and their message.
macro_rules! fail_from {
    ($($error:ty),*) => {$(
        impl From<$error> for Fail {
            fn from(e: $error) -> Fail {
                Fail::Sds(e.code(), e.to_string())
            }
        }
    )*};
}
fail_from!(Error, sds_shm::Error, StrategyError, sds_cluster::Error);

impl Fail {
    pub(crate) fn code(code: ErrorCode) -> Fail {
        Fail::Sds(code, code.description().to_string())
    }
}

/// Runs a setup call: `f`'s SDS errors and panics are thrown as
/// `io.sdsnative.SdsException`, JNI errors as whatever is pending (or a
/// `RuntimeException`), and the native method then returns `T::default()`.
pub(crate) fn setup<'local, T: Default>(
    unowned: &mut EnvUnowned<'local>,
    f: impl FnOnce(&mut Env<'local>) -> Result<T, Fail>,
) -> T {
    unowned
        .with_env(|env| -> jni::errors::Result<T> {
            let result = catch_unwind(AssertUnwindSafe(|| f(env)))
                .unwrap_or_else(|payload| Err(Fail::Sds(ErrorCode::Panic, panic_text(payload))));
            match result {
                Ok(value) => Ok(value),
                Err(Fail::Sds(code, message)) => {
                    throw_sds(env, code, &message)?;
                    Ok(T::default())
                }
                Err(Fail::Jni(e)) => Err(e),
            }
        })
        .resolve::<ThrowRuntimeExAndDefault>()
}

/// Declares setup natives of `io.sdsnative.Native`: each gets the JNI
/// environment and class, then its listed arguments, and its body runs
/// inside [`setup`] (so within the panic boundary) with the environment
/// bound to the name in front of the arguments; the body gives
/// `Result<T, Fail>`. Types may name the call's lifetime `'l`.
macro_rules! setup_native {
    ($(
        $(#[$attr:meta])*
        fn $name:ident($env:pat_param $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)? $body:block
    )*) => {$(
        $(#[$attr])*
        #[no_mangle]
        pub extern "system" fn $name<'l>(
            mut unowned: jni::EnvUnowned<'l>,
            _class: jni::objects::JClass<'l>,
            $($arg: $ty),*
        ) $(-> $ret)? {
            $crate::boundary::setup(&mut unowned, |$env| $body)
        }
    )*};
}
pub(crate) use setup_native;

/// Declares hot-path natives of `io.sdsnative.Native` over a handle: the
/// JNI environment (bound to the name before the handle type), class,
/// `handle` and owner, then the listed arguments. The body runs in [`hot`]
/// (so within the panic boundary) with the object of the live handle bound
/// to the name after the type, and gives `Result<i64, Refusal>`.
macro_rules! hot_native {
    ($(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) with |$env:ident, $object:ident: $t:ty| $body:block
    )*) => {$(
        $(#[$attr])*
        #[no_mangle]
        pub extern "system" fn $name(
            $env: *mut jni::sys::JNIEnv,
            _class: jni::sys::jclass,
            handle: jni::sys::jlong,
            _owner: jni::sys::jobject,
            $($arg: $ty),*
        ) -> jni::sys::jlong {
            $crate::boundary::hot($env, || {
                // SAFETY: the Java object holding the handle passes it and
                // itself as owner, which keeps it reachable, so the handle
                // is not freed during the call.
                let $object = unsafe { $crate::handle::borrow::<$t>(handle) }
                    .map_err($crate::boundary::Refusal::Code)?;
                $body
            })
        }
    )*};
}
pub(crate) use hot_native;

/// Why a hot-path call was refused: a core error, a code alone (a closed
/// handle), or an exception already thrown with this code (see [`thrown`]).
/// Two bytes, so the hot path's `Result` stays in registers.
pub(crate) enum Refusal {
    Core(Error),
    Code(ErrorCode),
    Thrown(ErrorCode),
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Refusal {
        Refusal::Core(e)
    }
}

/// Runs a hot-path call: `f` touches no JNI. Only when it fails or panics
/// is the environment used, to throw `SdsException` with the core's message;
/// the call then returns the negative code (which Java never sees, as the
/// exception is pending).
#[inline]
pub(crate) fn hot(env: *mut JNIEnv, f: impl FnOnce() -> Result<i64, Refusal>) -> i64 {
    let refusal = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => return value,
        Ok(Err(Refusal::Core(e))) => thrown(env, e),
        Ok(Err(Refusal::Code(code))) => thrown(env, Fail::code(code)),
        Ok(Err(refusal)) => refusal,
        Err(payload) => thrown(env, Fail::Sds(ErrorCode::Panic, panic_text(payload))),
    };
    match refusal {
        Refusal::Thrown(code) => negative(code),
        _ => negative(ErrorCode::Panic), // never: every refusal is thrown by now
    }
}

/// Throws `fail` from inside a hot-path call, also for a failure whose
/// message does not fit in a [`Refusal`] (a shared table's error names its
/// file): the refusal to return, which [`hot`] turns into the negative code.
#[cold]
#[inline(never)]
pub(crate) fn thrown(env: *mut JNIEnv, fail: impl Into<Fail>) -> Refusal {
    let fail = fail.into();
    let code = match &fail {
        Fail::Sds(code, _) => *code,
        Fail::Jni(_) => ErrorCode::Panic,
    };
    if !env.is_null() {
        // SAFETY: `env` is the JNIEnv the JVM passed to this native call, on
        // this thread, for the call's duration.
        let mut unowned = unsafe { EnvUnowned::from_raw(env) };
        setup(&mut unowned, |_| Err::<(), Fail>(fail));
    }
    Refusal::Thrown(code)
}

/// The negative code a hot-path call returns for `code`.
#[inline]
pub(crate) fn negative(code: ErrorCode) -> i64 {
    -(code.as_u32() as i64)
}

/// A count as a Java `long`, saturating at `Long.MAX_VALUE`.
#[inline]
pub(crate) fn clamp(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    // Dropping a payload can itself panic; leaking one tiny box is safer.
    std::mem::forget(payload);
    format!("{}: {detail}", ErrorCode::Panic.description())
}

/// Throws `new io.sdsnative.SdsException(code, message)`. Returns `Err`
/// (`JavaException`) once thrown, like `Env::throw`.
fn throw_sds(env: &mut Env, code: ErrorCode, message: &str) -> jni::errors::Result<()> {
    let text = env.new_string(message)?;
    let exception = env.new_object(
        jni_str!("io/sdsnative/SdsException"),
        jni_sig!("(ILjava/lang/String;)V"),
        &[JValue::Int(code.as_u32() as i32), JValue::Object(&text)],
    )?;
    let throwable = env.cast_local::<JThrowable>(exception)?;
    env.throw(&throwable)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way a hot-path call fails returns its negative code (no JVM
    /// here, so nothing is thrown): a panic, a core error, a code alone, and
    /// an exception thrown already.
    #[test]
    fn a_failed_hot_call_returns_its_negative_code() {
        let null = std::ptr::null_mut;
        let capacity = sds_shm::Error::InvalidCapacity { capacity: 0 };
        let returned = [
            hot(null(), || panic!("a test asked for this panic")),
            hot(null(), || {
                Err(sds_core::time::from_i64(-1).unwrap_err().into())
            }),
            hot(null(), || Err(Refusal::Code(ErrorCode::Closed))),
            hot(null(), || Err(thrown(null(), capacity))),
        ];
        let codes = [
            ErrorCode::Panic,
            ErrorCode::InvalidArgument,
            ErrorCode::Closed,
            ErrorCode::InvalidCapacity,
        ];
        assert_eq!(returned, codes.map(negative));
    }

    #[test]
    fn a_panic_names_its_payload() {
        let payload = catch_unwind(|| panic!("boom")).unwrap_err();
        assert_eq!(
            panic_text(payload),
            format!("{}: boom", ErrorCode::Panic.description())
        );
    }
}
