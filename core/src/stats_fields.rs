//! The one shape of a point's statistics that bindings return: names (as
//! the README and SDS's admin upload spell them) and values in one table,
//! in a fixed order, so no binding keeps its own list or positions.
//!
//! ```text
//! { visit, exception, timeout, downgrade, concurrent,
//!   lastCycle: { visitNum, exceptionNum, timeoutNum, downgradeNum, concurrentNum } }
//! ```

use crate::point::{CycleStats, Stats};

impl Stats {
    /// The names of [`Stats::fields`], in its order.
    pub const NAMES: [&'static str; 5] =
        ["visit", "exception", "timeout", "downgrade", "concurrent"];

    /// The key under which [`Stats::last_cycle`] nests.
    pub const LAST_CYCLE: &'static str = "lastCycle";

    /// The current sliding values and the permits held, named
    /// ([`Stats::NAMES`]); the last cycle is [`CycleStats::fields`] of
    /// [`Stats::last_cycle`], under [`Stats::LAST_CYCLE`].
    pub const fn fields(&self) -> [(&'static str, u64); 5] {
        let [visit, exception, timeout, downgrade, concurrent] = Stats::NAMES;
        [
            (visit, self.visit),
            (exception, self.exception),
            (timeout, self.timeout),
            (downgrade, self.downgrade),
            (concurrent, self.concurrent),
        ]
    }
}

impl CycleStats {
    /// The names of [`CycleStats::fields`], in its order.
    pub const NAMES: [&'static str; 5] = [
        "visitNum",
        "exceptionNum",
        "timeoutNum",
        "downgradeNum",
        "concurrentNum",
    ];

    /// The last whole cycle's values, named ([`CycleStats::NAMES`]).
    pub const fn fields(&self) -> [(&'static str, u64); 5] {
        let [visit, exception, timeout, downgrade, concurrent] = CycleStats::NAMES;
        [
            (visit, self.visit_num),
            (exception, self.exception_num),
            (timeout, self.timeout_num),
            (downgrade, self.downgrade_num),
            (concurrent, self.concurrent_num),
        ]
    }
}
