//! The panic and error boundary between Rust and the JVM.

use std::panic::{catch_unwind, AssertUnwindSafe, UnwindSafe};

use jni::errors::ThrowRuntimeExAndDefault;
use jni::objects::{JThrowable, JValue};
use jni::{jni_sig, jni_str, Env, EnvUnowned};
use sds_core::{Error, ErrorCode};

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

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Sds(e.code(), e.to_string())
    }
}

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

/// Runs a hot-path call that touches no JNI: a panic becomes the negative
/// code of `SDS_PANIC`, which the Java side throws.
#[inline]
pub(crate) fn hot(f: impl FnOnce() -> i64 + UnwindSafe) -> i64 {
    catch_unwind(f).unwrap_or(-(ErrorCode::Panic.as_u32() as i64))
}

/// The negative code the hot path returns for `e`.
#[inline]
pub(crate) fn negative(code: ErrorCode) -> i64 {
    -(code.as_u32() as i64)
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
