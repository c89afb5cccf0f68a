//! `NativeWindow`: a `SlidingWindow` over a ring the caller sizes.

use napi::bindgen_prelude::{ObjectFinalize, Unknown};
use napi::Env;
use napi_derive::napi;
use sds_core::window::check_parameters;
use sds_core::{Bucket, SlidingWindow};

use crate::arguments;
use crate::errors::{from_core, invalid_argument, SdsError};
use crate::external_memory::adjust;
use crate::time::{ms, whole_up_to, MAX_SAFE_INTEGER};

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

fn whole(value: Unknown, what: &str) -> Result<u64, SdsError> {
    let value = arguments::number(value, what)?;
    if let Some(n) = whole_up_to(value, MAX_SAFE_INTEGER) {
        Ok(n)
    } else {
        Err(invalid_argument(format!(
            "{what} must be a non-negative integer, got {value}"
        )))
    }
}

fn now(value: Unknown) -> Result<u64, SdsError> {
    ms(arguments::number(value, "nowMs")?, "nowMs")
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
        let bucket_ms = whole(bucket_ms, "bucketMs")?;
        let buckets = whole(buckets, "buckets")? as usize;
        let ring = whole(ring, "ring")? as usize;
        // Refused before allocating the storage.
        check_parameters(bucket_ms, buckets, ring).map_err(from_core)?;
        let storage: Box<[Bucket]> = (0..ring).map(|_| Bucket::new()).collect();
        let window = SlidingWindow::with_storage(bucket_ms, buckets, storage).map_err(from_core)?;
        adjust(env.raw(), ring_bytes(ring));
        Ok(NativeWindow { window })
    }

    /// Adds `n` at `now_ms`; the bucket's value and the sliding sum.
    #[napi(ts_args_type = "nowMs: number, n: number")]
    pub fn add(&self, now_ms: Unknown, n: Unknown) -> Result<NativeTally, SdsError> {
        let tally = self.window.add(now(now_ms)?, whole(n, "n")?);
        Ok(NativeTally {
            bucket: tally.bucket as f64,
            total: tally.total as f64,
        })
    }

    /// The sliding sum at `now_ms`.
    #[napi(ts_args_type = "nowMs: number")]
    pub fn sum(&self, now_ms: Unknown) -> Result<f64, SdsError> {
        Ok(self.window.sum(now(now_ms)?) as f64)
    }

    /// The value of `now_ms`'s bucket.
    #[napi(ts_args_type = "nowMs: number")]
    pub fn bucket(&self, now_ms: Unknown) -> Result<f64, SdsError> {
        Ok(self.window.bucket(now(now_ms)?) as f64)
    }

    /// The sum of the aligned cycle before the one holding `now_ms`.
    #[napi(ts_args_type = "nowMs: number")]
    pub fn last_whole_cycle(&self, now_ms: Unknown) -> Result<f64, SdsError> {
        Ok(self.window.last_whole_cycle(now(now_ms)?) as f64)
    }
}
