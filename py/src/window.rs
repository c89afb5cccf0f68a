//! `SlidingWindow`: the core's epoch-tagged window with user-chosen bucket
//! width, window length and ring, for counters of the caller's own.

use pyo3::prelude::*;
use sds_core::window::check_parameters;
use sds_core::Bucket;

use crate::args::{self, Time};
use crate::errors;

/// A lock-free sliding window of `buckets` buckets of `bucket_ms` each.
#[pyclass(frozen, module = "sds._native")]
pub struct SlidingWindow {
    inner: sds_core::SlidingWindow<Box<[Bucket]>>,
}

#[pymethods]
impl SlidingWindow {
    /// `ring` (default three windows, as SDS keeps) must hold at least two
    /// windows of buckets and at most 65536.
    #[new]
    #[pyo3(
        signature = (bucket_ms = None, buckets = None, ring = None),
        text_signature = "(bucket_ms=1000, buckets=10, ring=None)"
    )]
    fn new(
        py: Python<'_>,
        bucket_ms: Option<&Bound<'_, PyAny>>,
        buckets: Option<&Bound<'_, PyAny>>,
        ring: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<SlidingWindow> {
        let bucket_ms = bucket_ms.map_or(Ok(1000), |v| args::u64_arg(v, "bucket_ms"))?;
        let buckets = buckets.map_or(Ok(10), |v| args::u64_arg(v, "buckets"))?;
        let ring = match ring {
            Some(v) => args::u64_arg(v, "ring")?,
            None => buckets.saturating_mul(3),
        };
        let buckets = usize::try_from(buckets).unwrap_or(usize::MAX);
        let ring = usize::try_from(ring).unwrap_or(usize::MAX);
        // Checked before allocating, so a huge ring is an error, not an OOM.
        check_parameters(bucket_ms, buckets, ring).map_err(|e| errors::core(py, e))?;
        let storage: Box<[Bucket]> = (0..ring).map(|_| Bucket::new()).collect();
        let inner = sds_core::SlidingWindow::with_storage(bucket_ms, buckets, storage)
            .map_err(|e| errors::core(py, e))?;
        Ok(SlidingWindow { inner })
    }

    /// Adds one; returns `(bucket, total)`: the bucket's value and the sum of
    /// the window ending there.
    #[pyo3(signature = (now_ms = None))]
    fn increment(&self, now_ms: Option<Time>) -> PyResult<(u64, u64)> {
        let t = self.inner.increment(args::time_or_now(now_ms));
        Ok((t.bucket, t.total))
    }

    /// Adds `n`; returns `(bucket, total)` like `increment`.
    #[pyo3(signature = (n, now_ms = None))]
    fn add(&self, n: &Bound<'_, PyAny>, now_ms: Option<Time>) -> PyResult<(u64, u64)> {
        let n = args::u64_arg(n, "n")?;
        let t = self.inner.add(args::time_or_now(now_ms), n);
        Ok((t.bucket, t.total))
    }

    /// Adds `n` for an event of time `at_ms` recorded at the present
    /// `now_ms` (an exception counted at its request's start): into
    /// `at_ms`'s bucket while the ring still holds it, else into `now_ms`'s,
    /// never restarting a newer bucket. Returns the value of the bucket
    /// written.
    #[pyo3(signature = (at_ms, n, now_ms = None))]
    fn add_at(&self, at_ms: Time, n: &Bound<'_, PyAny>, now_ms: Option<Time>) -> PyResult<u64> {
        let n = args::u64_arg(n, "n")?;
        Ok(self.inner.add_at(at_ms.0, args::time_or_now(now_ms), n))
    }

    /// Sets `now_ms`'s bucket to `value` (saturating at 2**32 - 1).
    #[pyo3(signature = (value, now_ms = None))]
    fn set(&self, value: &Bound<'_, PyAny>, now_ms: Option<Time>) -> PyResult<()> {
        let value = args::u64_arg(value, "value")?;
        self.inner.set(args::time_or_now(now_ms), value);
        Ok(())
    }

    /// Raises `now_ms`'s bucket to at least `value` (saturating at
    /// 2**32 - 1); returns the bucket's value.
    #[pyo3(signature = (value, now_ms = None))]
    fn fetch_max(&self, value: &Bound<'_, PyAny>, now_ms: Option<Time>) -> PyResult<u64> {
        let value = args::u64_arg(value, "value")?;
        Ok(self.inner.fetch_max(args::time_or_now(now_ms), value))
    }

    /// Zeroes the aligned cycle after the one holding `now_ms`, as SDS's
    /// cleanup thread does (sums never need it: stale buckets read as 0).
    #[pyo3(signature = (now_ms = None))]
    fn clear_next_cycle(&self, now_ms: Option<Time>) -> PyResult<()> {
        self.inner.clear_next_cycle(args::time_or_now(now_ms));
        Ok(())
    }

    /// The sliding sum: the window ending at `now_ms`'s bucket.
    #[pyo3(signature = (now_ms = None))]
    fn sum(&self, now_ms: Option<Time>) -> PyResult<u64> {
        Ok(self.inner.sum(args::time_or_now(now_ms)))
    }

    /// The value of `now_ms`'s bucket.
    #[pyo3(signature = (now_ms = None))]
    fn bucket(&self, now_ms: Option<Time>) -> PyResult<u64> {
        Ok(self.inner.bucket(args::time_or_now(now_ms)))
    }

    /// The sum of the aligned window before the one holding `now_ms`.
    #[pyo3(signature = (now_ms = None))]
    fn last_whole_cycle(&self, now_ms: Option<Time>) -> PyResult<u64> {
        Ok(self.inner.last_whole_cycle(args::time_or_now(now_ms)))
    }

    /// Width of a bucket in ms.
    #[getter]
    fn bucket_ms(&self) -> u64 {
        self.inner.bucket_ms()
    }

    /// Buckets per window.
    #[getter]
    fn buckets(&self) -> usize {
        self.inner.buckets()
    }

    /// Buckets in the ring.
    #[getter]
    fn ring(&self) -> usize {
        self.inner.ring()
    }

    fn __repr__(&self) -> String {
        format!(
            "SlidingWindow(bucket_ms={}, buckets={}, ring={})",
            self.inner.bucket_ms(),
            self.inner.buckets(),
            self.inner.ring()
        )
    }
}
