//! `NativeWindow`: a `SlidingWindow` over a ring the caller sizes.

use napi_derive::napi;
use sds_core::window::check_parameters;
use sds_core::{Bucket, SlidingWindow};

use crate::errors::{from_core, invalid_argument, SdsError};
use crate::time::{ms, whole_up_to, MAX_SAFE_INTEGER};

/// A bucket's value and the window's sum after a write.
#[napi(object, namespace = "native")]
pub struct NativeTally {
    pub bucket: f64,
    pub total: f64,
}

#[napi(namespace = "native")]
pub struct NativeWindow {
    window: SlidingWindow<Box<[Bucket]>>,
}

fn whole(value: f64, what: &str) -> Result<u64, SdsError> {
    if let Some(n) = whole_up_to(value, MAX_SAFE_INTEGER) {
        Ok(n)
    } else {
        Err(invalid_argument(format!(
            "{what} must be a non-negative integer, got {value}"
        )))
    }
}

#[napi(namespace = "native")]
impl NativeWindow {
    /// `buckets` buckets of `bucket_ms` over a ring of `ring` buckets.
    #[napi(constructor)]
    pub fn new(bucket_ms: f64, buckets: f64, ring: f64) -> Result<NativeWindow, SdsError> {
        let bucket_ms = whole(bucket_ms, "bucketMs")?;
        let buckets = whole(buckets, "buckets")? as usize;
        let ring = whole(ring, "ring")? as usize;
        // Refused before allocating the storage.
        check_parameters(bucket_ms, buckets, ring).map_err(from_core)?;
        let storage: Box<[Bucket]> = (0..ring).map(|_| Bucket::new()).collect();
        let window = SlidingWindow::with_storage(bucket_ms, buckets, storage).map_err(from_core)?;
        Ok(NativeWindow { window })
    }

    /// Adds `n` at `now_ms`; the bucket's value and the sliding sum.
    #[napi]
    pub fn add(&self, now_ms: f64, n: f64) -> Result<NativeTally, SdsError> {
        let tally = self.window.add(ms(now_ms, "nowMs")?, whole(n, "n")?);
        Ok(NativeTally {
            bucket: tally.bucket as f64,
            total: tally.total as f64,
        })
    }

    /// The sliding sum at `now_ms`.
    #[napi]
    pub fn sum(&self, now_ms: f64) -> Result<f64, SdsError> {
        Ok(self.window.sum(ms(now_ms, "nowMs")?) as f64)
    }

    /// The value of `now_ms`'s bucket.
    #[napi]
    pub fn bucket(&self, now_ms: f64) -> Result<f64, SdsError> {
        Ok(self.window.bucket(ms(now_ms, "nowMs")?) as f64)
    }

    /// The sum of the aligned cycle before the one holding `now_ms`.
    #[napi]
    pub fn last_whole_cycle(&self, now_ms: f64) -> Result<f64, SdsError> {
        Ok(self.window.last_whole_cycle(ms(now_ms, "nowMs")?) as f64)
    }
}
