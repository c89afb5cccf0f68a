//! Clocks for tests (feature `test-hooks`): the 10 s cycle in a fraction of
//! the time, or time that moves only when the test says.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::config::Clock;

/// The wall clock sped up `factor` times from `origin_ms` (a wall-clock
/// time): every process given the same origin and factor reads the same
/// time, so cycles line up across a test's processes.
#[derive(Debug)]
pub struct ScaledClock {
    origin_ms: u64,
    factor: u64,
}

impl ScaledClock {
    /// `factor` >= 1.
    pub fn new(origin_ms: u64, factor: u64) -> ScaledClock {
        ScaledClock {
            origin_ms,
            factor: factor.max(1),
        }
    }
}

impl Clock for ScaledClock {
    fn now_ms(&self) -> u64 {
        let real = sds_clock::now_ms();
        self.origin_ms + real.saturating_sub(self.origin_ms) * self.factor
    }

    fn real_wait(&self, clock_ms: u64) -> Duration {
        Duration::from_millis(clock_ms.div_ceil(self.factor))
    }
}

/// A clock that stands still until [`ManualClock::set`]. The agent polls it
/// every few milliseconds.
#[derive(Debug)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock reading `now_ms`.
    pub fn new(now_ms: u64) -> ManualClock {
        ManualClock(AtomicU64::new(now_ms))
    }

    /// Moves the clock to `now_ms`.
    pub fn set(&self, now_ms: u64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    fn real_wait(&self, _clock_ms: u64) -> Duration {
        Duration::from_millis(5)
    }
}
