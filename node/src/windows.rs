//! `NativeWindow`: a `SlidingWindow` over a ring the caller sizes.

use napi::bindgen_prelude::{ObjectFinalize, Unknown};
use napi::Env;
use napi_derive::napi;
use sds_core::window::check_parameters;
use sds_core::{Bucket, SlidingWindow};

use crate::arguments::{big_count, count, time, time_or_now};
use crate::errors::{from_core, SdsError};
use crate::external_memory::adjust;

/// A bucket's value and the window's sum after a write.
#[napi(object, namespace = "native")]
pub struct NativeTally {
    pub bucket: f64,
    pub total: f64,
}

#[napi(namespace = "native", custom_finalize)]
pub struct NativeWindow {
    window: SlidingWindow<Box<[Bucket]>>,
}

/// The bytes of a ring of `ring` buckets, reported to V8 (see
/// [`crate::external_memory`]).
fn ring_bytes(ring: usize) -> i64 {
    (ring * std::mem::size_of::<Bucket>()) as i64
}

impl ObjectFinalize for NativeWindow {
    fn finalize(self, env: Env) -> napi::Result<()> {
        let bytes = ring_bytes(self.window.ring());
        drop(self);
        adjust(env.raw(), -bytes);
        Ok(())
    }
}

#[napi(namespace = "native")]
impl NativeWindow {
    /// `buckets` buckets of `bucket_ms` over a ring of `ring` buckets.
    #[napi(
        constructor,
        ts_args_type = "bucketMs: number, buckets: number, ring: number"
    )]
    pub fn new(
        env: &Env,
        bucket_ms: Unknown,
        buckets: Unknown,
        ring: Unknown,
    ) -> Result<NativeWindow, SdsError> {
        let bucket_ms = count(bucket_ms, "bucketMs")?;
        let buckets = usize::try_from(count(buckets, "buckets")?).unwrap_or(usize::MAX);
        let ring = usize::try_from(count(ring, "ring")?).unwrap_or(usize::MAX);
        // Refused before allocating the storage.
        check_parameters(bucket_ms, buckets, ring).map_err(from_core)?;
        let storage: Box<[Bucket]> = (0..ring).map(|_| Bucket::new()).collect();
        let window = SlidingWindow::with_storage(bucket_ms, buckets, storage).map_err(from_core)?;
        adjust(env.raw(), ring_bytes(ring));
        Ok(NativeWindow { window })
    }

    /// Adds `n` at `nowMs` (here and below, by default the addon's clock);
    /// the bucket's value and the sliding sum.
    #[napi(ts_args_type = "n: number | bigint, nowMs?: number")]
    pub fn add(&self, n: Unknown, now_ms: Unknown) -> Result<NativeTally, SdsError> {
        let n = big_count(n, "n")?;
        let tally = self.window.add(time_or_now(now_ms, "nowMs")?, n);
        Ok(NativeTally {
            bucket: tally.bucket as f64,
            total: tally.total as f64,
        })
    }

    /// Adds `n` for an event of time `atMs` recorded at the present
    /// `nowMs`: into `atMs`'s bucket while the ring holds it, else into
    /// `nowMs`'s; the value of the bucket written.
    #[napi(ts_args_type = "atMs: number, n: number | bigint, nowMs?: number")]
    pub fn add_at(&self, at_ms: Unknown, n: Unknown, now_ms: Unknown) -> Result<f64, SdsError> {
        let at_ms = time(at_ms, "atMs")?;
        let n = big_count(n, "n")?;
        let now_ms = time_or_now(now_ms, "nowMs")?;
        Ok(self.window.add_at(at_ms, now_ms, n) as f64)
    }

    /// Sets `nowMs`'s bucket to `value` (saturating at 2^32 - 1).
    #[napi(ts_args_type = "value: number | bigint, nowMs?: number")]
    pub fn set(&self, value: Unknown, now_ms: Unknown) -> Result<(), SdsError> {
        let value = big_count(value, "value")?;
        self.window.set(time_or_now(now_ms, "nowMs")?, value);
        Ok(())
    }

    /// Raises `nowMs`'s bucket to at least `value`; the bucket's value.
    #[napi(ts_args_type = "value: number | bigint, nowMs?: number")]
    pub fn fetch_max(&self, value: Unknown, now_ms: Unknown) -> Result<f64, SdsError> {
        let value = big_count(value, "value")?;
        Ok(self.window.fetch_max(time_or_now(now_ms, "nowMs")?, value) as f64)
    }

    /// Zeroes the aligned cycle after the one holding `nowMs`.
    #[napi(ts_args_type = "nowMs?: number")]
    pub fn clear_next_cycle(&self, now_ms: Unknown) -> Result<(), SdsError> {
        self.window.clear_next_cycle(time_or_now(now_ms, "nowMs")?);
        Ok(())
    }

    /// The sliding sum at `nowMs`.
    #[napi(ts_args_type = "nowMs?: number")]
    pub fn sum(&self, now_ms: Unknown) -> Result<f64, SdsError> {
        Ok(self.window.sum(time_or_now(now_ms, "nowMs")?) as f64)
    }

    /// The value of `nowMs`'s bucket.
    #[napi(ts_args_type = "nowMs?: number")]
    pub fn bucket(&self, now_ms: Unknown) -> Result<f64, SdsError> {
        Ok(self.window.bucket(time_or_now(now_ms, "nowMs")?) as f64)
    }

    /// The sum of the aligned cycle before the one holding `nowMs`.
    #[napi(ts_args_type = "nowMs?: number")]
    pub fn last_whole_cycle(&self, now_ms: Unknown) -> Result<f64, SdsError> {
        Ok(self.window.last_whole_cycle(time_or_now(now_ms, "nowMs")?) as f64)
    }
}
