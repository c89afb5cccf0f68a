//! The one shape of a point's statistics that bindings return: names (as
//! the README and SDS's admin upload spell them) and values in one table,
//! in a fixed order, so no binding keeps its own list or positions.
//!
//! ```text
//! { visit, exception, timeout, downgrade, concurrent,
//!   lastCycle: { visitNum, exceptionNum, timeoutNum, downgradeNum, concurrentNum } }
//! ```

use crate::point::{CycleStats, Stats};

/// `NAMES` and `fields()` of a statistics struct, from one list of (name,
/// field) pairs, so that a name and its value cannot drift apart.
macro_rules! named_fields {
    ($ty:ident, $(#[$doc:meta])* { $($name:literal => $field:ident),+ $(,)? }) => {
        impl $ty {
            #[doc = concat!("The names of [`", stringify!($ty), "::fields`], in its order.")]
            pub const NAMES: [&'static str; 5] = [$($name),+];

            $(#[$doc])*
            pub const fn fields(&self) -> [(&'static str, u64); 5] {
                [$(($name, self.$field)),+]
            }
        }
    };
}

named_fields!(Stats,
    /// The current sliding values and the permits held, named
    /// ([`Stats::NAMES`]); the last cycle is [`CycleStats::fields`] of
    /// [`Stats::last_cycle`], under [`Stats::LAST_CYCLE`].
    {
        "visit" => visit,
        "exception" => exception,
        "timeout" => timeout,
        "downgrade" => downgrade,
        "concurrent" => concurrent,
    }
);

named_fields!(CycleStats,
    /// The last whole cycle's values, named ([`CycleStats::NAMES`]).
    {
        "visitNum" => visit_num,
        "exceptionNum" => exception_num,
        "timeoutNum" => timeout_num,
        "downgradeNum" => downgrade_num,
        "concurrentNum" => concurrent_num,
    }
);

impl Stats {
    /// The key under which [`Stats::last_cycle`] nests.
    pub const LAST_CYCLE: &'static str = "lastCycle";
}
