//! Windows over caller-chosen parameters, for the SDS drop-in classes
//! (`SlidingWindowData` and friends). Every call is one crossing with
//! primitives only. `owner` is the Java object holding the handle: passing
//! it keeps that object (and so the handle) reachable until the call returns,
//! which `Reference.reachabilityFence` would do on Java 9+.
//!
//! Counts and values (`n`, `value`) are Java longs read as unsigned 64-bit
//! integers (`Long.parseUnsignedLong`, `-1L` is 2^64 - 1), so every count of
//! the core's range can be given; results are never negative (a bucket
//! saturates at 2^32 - 1, a sum of at most 32768 buckets stays below 2^47),
//! so a negative result is an error code, as on every hot-path call.

use jni::objects::{JLongArray, JObject};
use jni::sys::{jclass, jint, jlong, JNIEnv};
use sds_core::{time, window::check_parameters, Bucket, Tally};

use crate::boundary::{clamp, hot_native, setup_native, Fail};
use crate::handle::{borrow, free, into_handle, Window};

setup_native! {
    /// A window of `buckets` buckets of `bucket_ms` over a ring of `ring`.
    fn Java_io_sdsnative_Native_windowNew(_, bucket_ms: jlong, buckets: jint, ring: jint) -> jlong {
        // Negative parameters read as 0, which the core refuses too; checked
        // before the ring is allocated.
        let bucket_ms = u64::try_from(bucket_ms).unwrap_or(0);
        let buckets = usize::try_from(buckets).unwrap_or(0);
        let ring = usize::try_from(ring).unwrap_or(0);
        check_parameters(bucket_ms, buckets, ring)?;
        let storage: Box<[Bucket]> = (0..ring).map(|_| Bucket::new()).collect();
        Ok(into_handle(Window::with_storage(
            bucket_ms, buckets, storage,
        )?))
    }

    /// Adds `n` (unsigned) at `time` and returns the bucket's value; when
    /// `tally` is not null, also writes the bucket's value and the sliding sum
    /// ending there to `tally[0]` and `tally[1]`, read after the one write.
    fn Java_io_sdsnative_Native_windowAdd(
        env, handle: jlong, _owner: JObject<'l>, t: jlong, n: jlong, tally: JLongArray<'l>,
    ) -> jlong {
        use jni::refs::Reference;
        // SAFETY: the owner passes its own live handle and stays reachable.
        let w = unsafe { borrow::<Window>(handle) }.map_err(Fail::code)?;
        let written = w.add(time::from_i64(t)?, n as u64);
        if !tally.is_null() {
            tally.set_region(env, 0, &[clamp(written.bucket), clamp(written.total)])?;
        }
        Ok(clamp(written.bucket))
    }
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

/// A tally in one long: the sliding sum in the high bits (saturating at
/// 2^31 - 1, so the result stays >= 0), the bucket's value in the low 32
/// (saturating at 2^32 - 1).
#[inline]
fn packed(tally: Tally) -> i64 {
    let low = tally.bucket.min(u32::MAX as u64);
    let high = tally.total.min(u32::MAX as u64 >> 1);
    (high << 32 | low) as i64
}

hot_native! {
    /// Adds one at `time`: the tally after it, [`packed`].
    fn Java_io_sdsnative_Native_windowIncrement(t: jlong) with |_env, w: Window| {
        Ok(packed(w.increment(time::from_i64(t)?)))
    }

    /// Adds one for an event of time `at` recorded at the present `now` (an
    /// exception counted at its request's start; `SlidingWindow::add_at_tally`),
    /// packed as `windowIncrement`: the sliding sum of the window ending at
    /// the bucket written (`at`'s while the ring holds it, else `now`'s) and
    /// that bucket's value.
    fn Java_io_sdsnative_Native_windowIncrementAt(at: jlong, now: jlong) with |_env, w: Window| {
        let (at, now) = (time::from_i64(at)?, time::from_i64(now)?);
        Ok(packed(w.add_at_tally(at, now, 1)))
    }

    /// The value of `time`'s bucket.
    fn Java_io_sdsnative_Native_windowBucket(t: jlong) with |_env, w: Window| {
        Ok(clamp(w.bucket(time::from_i64(t)?)))
    }

    /// The sliding sum ending at `time`'s bucket.
    fn Java_io_sdsnative_Native_windowSum(t: jlong) with |_env, w: Window| {
        Ok(clamp(w.sum(time::from_i64(t)?)))
    }

    /// The sum of the whole cycle before the one holding `time`.
    fn Java_io_sdsnative_Native_windowLastCycle(t: jlong) with |_env, w: Window| {
        Ok(clamp(w.last_whole_cycle(time::from_i64(t)?)))
    }

    /// Sets `time`'s bucket to `value` (unsigned; saturating at 2^32 - 1).
    fn Java_io_sdsnative_Native_windowSet(t: jlong, value: jlong) with |_env, w: Window| {
        w.set(time::from_i64(t)?, value as u64);
        Ok(0)
    }

    /// Zeroes the whole cycle after the one holding `time`.
    fn Java_io_sdsnative_Native_windowClearNextCycle(t: jlong) with |_env, w: Window| {
        w.clear_next_cycle(time::from_i64(t)?);
        Ok(0)
    }

    /// Raises `time`'s bucket to at least `value` (unsigned); the bucket's value.
    fn Java_io_sdsnative_Native_windowFetchMax(t: jlong, value: jlong) with |_env, w: Window| {
        Ok(clamp(w.fetch_max(time::from_i64(t)?, value as u64)))
    }

    /// Adds `n` (unsigned) for an event of time `at` recorded at the present
    /// `now` (an exception counted at its request's start; see
    /// `SlidingWindow::add_at`): into `at`'s bucket while the ring holds it,
    /// else into `now`'s. The value of the bucket written.
    fn Java_io_sdsnative_Native_windowAddAt(at: jlong, now: jlong, n: jlong) with |_env, w: Window| {
        let (at, now) = (time::from_i64(at)?, time::from_i64(now)?);
        Ok(clamp(w.add_at(at, now, n as u64)))
    }
}
