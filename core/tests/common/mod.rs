//! What several test files share.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads that hold a concurrency permit, counted around the time they
/// hold it: the most at once (a high-water mark the point's threshold must
/// bound) and how many were admitted.
#[derive(Default)]
pub struct Holders {
    holding: AtomicUsize,
    most: AtomicUsize,
    admitted: AtomicUsize,
}

impl Holders {
    /// Runs `check` counted as one more holder.
    pub fn hold(&self, check: impl FnOnce()) {
        let now = self.holding.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        check();
        self.admitted.fetch_add(1, Ordering::Relaxed);
        self.holding.fetch_sub(1, Ordering::SeqCst);
    }

    /// The most holders at once.
    pub fn most(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }

    /// Holders in all.
    pub fn admitted(&self) -> usize {
        self.admitted.load(Ordering::Relaxed)
    }
}
