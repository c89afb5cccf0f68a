//! Windows over caller-chosen parameters, for the SDS drop-in classes
//! (`SlidingWindowData` and friends). Every call is one crossing with
//! primitives only. `owner` is the Java object holding the handle: passing
//! it keeps that object (and so the handle) reachable until the call returns,
//! which `Reference.reachabilityFence` would do on Java 9+.

use jni::objects::JClass;
use jni::sys::{jclass, jint, jlong, jobject, JNIEnv};
use jni::EnvUnowned;
use sds_core::{Bucket, ErrorCode};

use crate::boundary::{hot, negative, setup, Fail};
use crate::handle::{borrow, free, into_handle, Window};

/// A window of `buckets` buckets of `bucket_ms` over a ring of `ring`.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowNew<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    bucket_ms: jlong,
    buckets: jint,
    ring: jint,
) -> jlong {
    setup(&mut env, |_| {
        if bucket_ms <= 0 || buckets <= 0 || ring <= 0 {
            return Err(Fail::Sds(
                ErrorCode::InvalidWindow,
                format!("window parameters must be positive: bucket {bucket_ms} ms, {buckets} buckets, ring {ring}"),
            ));
        }
        let storage: Box<[Bucket]> = (0..ring).map(|_| Bucket::new()).collect();
        Ok(into_handle(Window::with_storage(
            bucket_ms as u64,
            buckets as usize,
            storage,
        )?))
    })
}

/// Frees a window (0: nothing to do).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowFree(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: the reclaimer frees each handle once, after its owner is gone.
    let _ = std::panic::catch_unwind(|| unsafe { free::<Window>(handle) });
}

/// Runs `f` on a live window; a negative code for a freed one.
#[inline]
fn with_window(handle: jlong, f: impl FnOnce(&Window) -> i64 + std::panic::UnwindSafe) -> i64 {
    hot(|| {
        // SAFETY: the owner passes its own live handle and stays reachable.
        match unsafe { borrow::<Window>(handle) } {
            Ok(w) => f(w),
            Err(code) => negative(code),
        }
    })
}

fn time(t: jlong) -> u64 {
    t.max(0) as u64
}

fn clamp(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

/// Adds one at `time`: the sliding sum in the high bits (saturating at
/// 2^31 - 1, so the result stays >= 0) and the bucket's value in the low 32
/// bits (saturating at 2^32 - 1), or a negative code.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowIncrement(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    t: jlong,
) -> jlong {
    with_window(handle, |w| {
        let tally = w.increment(time(t));
        let low = tally.bucket.min(u32::MAX as u64);
        let high = tally.total.min(u32::MAX as u64 >> 1);
        (high << 32 | low) as i64
    })
}

/// The value of `time`'s bucket.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowBucket(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    t: jlong,
) -> jlong {
    with_window(handle, |w| clamp(w.bucket(time(t))))
}

/// The sliding sum ending at `time`'s bucket.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowSum(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    t: jlong,
) -> jlong {
    with_window(handle, |w| clamp(w.sum(time(t))))
}

/// The sum of the whole cycle before the one holding `time`.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowLastCycle(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    t: jlong,
) -> jlong {
    with_window(handle, |w| clamp(w.last_whole_cycle(time(t))))
}

/// Sets `time`'s bucket to `value` (saturating; negative reads as 0).
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowSet(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    t: jlong,
    value: jlong,
) -> jlong {
    with_window(handle, |w| {
        w.set(time(t), value.max(0) as u64);
        0
    })
}

/// Zeroes the whole cycle after the one holding `time`.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowClearNextCycle(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    t: jlong,
) -> jlong {
    with_window(handle, |w| {
        w.clear_next_cycle(time(t));
        0
    })
}

/// Raises `time`'s bucket to at least `value`; the bucket's value.
#[no_mangle]
pub extern "system" fn Java_io_sdsnative_Native_windowFetchMax(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    _owner: jobject,
    t: jlong,
    value: jlong,
) -> jlong {
    with_window(handle, |w| clamp(w.fetch_max(time(t), value.max(0) as u64)))
}
