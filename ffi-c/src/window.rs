//! `sds_window`: the core's raw sliding window over caller-chosen bucket
//! width, window length and ring length (SDS, Sentinel, Hystrix, or yours).

use sds_core::window::check_parameters;
use sds_core::{Bucket, SlidingWindow, Tally};

use crate::args::{input, into_box, unbox, write_if_given};
use crate::boundary::{boundary, boundary_or, Failure};
use crate::result::sds_result;

/// A sliding window of epoch-tagged buckets. Opaque: create it with
/// `sds_window_new`, free it with `sds_window_free`. Every function taking a
/// `const sds_window *` may be called from any number of threads at once.
pub struct sds_window {
    inner: SlidingWindow<Box<[Bucket]>>,
}

/// Creates a window of `buckets` buckets of `bucket_ms` each over a ring of
/// `ring` buckets (`ring >= 2 * buckets`, at most 65536) and writes it to
/// `*out`. SDS's counters are (1000, 10, 30); Sentinel's second (500, 2, 4).
///
/// Returns `SDS_RESULT_INVALID_WINDOW` for parameters that cannot form a
/// window, `SDS_RESULT_NULL_ARGUMENT` if `out` is NULL.
///
/// # Safety
/// `out` must be NULL or point to a writable `sds_window *`.
#[no_mangle]
pub unsafe extern "C" fn sds_window_new(
    bucket_ms: u64,
    buckets: usize,
    ring: usize,
    out: *mut *mut sds_window,
) -> sds_result {
    boundary(|| {
        into_box(out, || {
            // Before allocating, so an absurd ring is an error, not an abort.
            check_parameters(bucket_ms, buckets, ring)?;
            let storage: Box<[Bucket]> = (0..ring).map(|_| Bucket::new()).collect();
            let inner = SlidingWindow::with_storage(bucket_ms, buckets, storage)?;
            Ok(sds_window { inner })
        })
    })
}

/// Frees a window; NULL is a no-op. Infallible.
///
/// # Safety
/// `window` must be NULL or come from `sds_window_new` and not be freed yet,
/// with no other thread using it.
#[no_mangle]
pub unsafe extern "C" fn sds_window_free(window: *mut sds_window) {
    boundary_or((), || unbox(window))
}

/// Adds `n` to the bucket of `now_ms` (saturating at 2^32 - 1) and writes
/// that bucket's value and the sliding sum to `*out` (pass NULL to skip).
/// `now_ms` is the present: a slot that holds a newer lap (the clock stepped
/// back, or one write came from far ahead) restarts at `now_ms`'s bucket.
///
/// # Safety
/// `window` must be a live window; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sds_window_add(
    window: *const sds_window,
    now_ms: u64,
    n: u64,
    out: *mut Tally,
) -> sds_result {
    boundary(|| {
        write_if_given(out, input(window, "window")?.inner.add(now_ms, n));
        Ok(())
    })
}

/// Adds `n` for an event of time `at_ms` recorded at the present `now_ms`
/// (an exception counted at its request's start) and writes the value of the
/// bucket written to `*out` (pass NULL to skip): into `at_ms`'s bucket while
/// the ring ending at `now_ms` still holds it and no newer lap took its slot,
/// else into `now_ms`'s bucket, so the event is never dropped and never
/// restarts a newer bucket. An `at_ms` after `now_ms` (the clock went back in
/// between) counts at `now_ms`. Saturates at 2^32 - 1 like `sds_window_add`.
///
/// # Safety
/// `window` must be a live window; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sds_window_add_at(
    window: *const sds_window,
    at_ms: u64,
    now_ms: u64,
    n: u64,
    out: *mut u64,
) -> sds_result {
    boundary(|| {
        write_if_given(out, input(window, "window")?.inner.add_at(at_ms, now_ms, n));
        Ok(())
    })
}

/// Writes the sliding sum at `now_ms` (the current, partly elapsed
/// bucket included) to `*out`.
///
/// # Safety
/// `window` must be a live window and `out` writable.
#[no_mangle]
pub unsafe extern "C" fn sds_window_sum(
    window: *const sds_window,
    now_ms: u64,
    out: *mut u64,
) -> sds_result {
    boundary(|| unsafe { read_into(window, out, |w| w.sum(now_ms)) })
}

/// Writes the value of `now_ms`'s bucket to `*out`.
///
/// # Safety
/// `window` must be a live window and `out` writable.
#[no_mangle]
pub unsafe extern "C" fn sds_window_bucket(
    window: *const sds_window,
    now_ms: u64,
    out: *mut u64,
) -> sds_result {
    boundary(|| unsafe { read_into(window, out, |w| w.bucket(now_ms)) })
}

/// Writes the sum of the aligned cycle of `buckets` buckets before the
/// one holding `now_ms` to `*out` (0 in the first cycle).
///
/// # Safety
/// `window` must be a live window and `out` writable.
#[no_mangle]
pub unsafe extern "C" fn sds_window_last_whole_cycle(
    window: *const sds_window,
    now_ms: u64,
    out: *mut u64,
) -> sds_result {
    boundary(|| unsafe { read_into(window, out, |w| w.last_whole_cycle(now_ms)) })
}

/// Sets the bucket of `now_ms` to `value` (saturating at 2^32 - 1).
///
/// # Safety
/// `window` must be a live window.
#[no_mangle]
pub unsafe extern "C" fn sds_window_set(
    window: *const sds_window,
    now_ms: u64,
    value: u64,
) -> sds_result {
    boundary(|| {
        input(window, "window")?.inner.set(now_ms, value);
        Ok(())
    })
}

/// Raises the bucket of `now_ms` to at least `value` and writes the
/// bucket's value to `*out` (pass NULL to skip).
///
/// # Safety
/// `window` must be a live window; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn sds_window_fetch_max(
    window: *const sds_window,
    now_ms: u64,
    value: u64,
    out: *mut u64,
) -> sds_result {
    boundary(|| {
        write_if_given(out, input(window, "window")?.inner.fetch_max(now_ms, value));
        Ok(())
    })
}

/// Zeroes the aligned cycle after the one holding `now_ms`, as SDS's cleanup
/// thread does (never needed for correct sums: stale buckets read as 0).
///
/// # Safety
/// `window` must be a live window.
#[no_mangle]
pub unsafe extern "C" fn sds_window_clear_next_cycle(
    window: *const sds_window,
    now_ms: u64,
) -> sds_result {
    boundary(|| {
        input(window, "window")?.inner.clear_next_cycle(now_ms);
        Ok(())
    })
}

/// The body of the window's readers, inside their boundary: checks both
/// pointers, then writes what `read` gives to `*out`.
///
/// # Safety
/// `window` must be NULL or a live window, `out` NULL or writable.
unsafe fn read_into(
    window: *const sds_window,
    out: *mut u64,
    read: impl FnOnce(&SlidingWindow<Box<[Bucket]>>) -> u64,
) -> Result<(), Failure> {
    let window = &input(window, "window")?.inner;
    let out = crate::args::out(out, "out")?;
    out.write(read(window));
    Ok(())
}
