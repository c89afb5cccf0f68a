//! The one shape of a point's statistics that bindings return: names (as
//! the README and SDS's admin upload spell them) and values in one table,
//! in a fixed order, so no binding keeps its own list or positions.
//!
//! A key table's counters have their table too: `capacity`, `resident`,
//! `evictions`, `lossyEvictions`, `admitted`, `refused`.
//!
//! ```text
//! { visit, exception, timeout, downgrade, concurrent,
//!   adaptiveLimit, adaptiveMinRttUs, adaptiveRttUs, adaptiveLongRttUs,
//!   lastCycle: { visitNum, exceptionNum, timeoutNum, downgradeNum, concurrentNum } }
//! ```

use crate::keyed::KeyTableStats;
use crate::point::{CycleStats, Stats};

/// `NAMES` and `fields()` of a statistics struct, from one list of (name,
/// field) pairs, so that a name and its value cannot drift apart.
macro_rules! named_fields {
    ($ty:ident, $n:literal, $(#[$doc:meta])* { $($name:literal => $field:ident),+ $(,)? }) => {
        impl $ty {
            #[doc = concat!("The names of [`", stringify!($ty), "::fields`], in its order.")]
            pub const NAMES: [&'static str; $n] = [$($name),+];

            $(#[$doc])*
            pub const fn fields(&self) -> [(&'static str, u64); $n] {
                [$(($name, self.$field)),+]
            }
        }
    };
}

named_fields!(Stats, 9,
    /// The current sliding values, the permits held and the adaptive limit, named
    /// ([`Stats::NAMES`]); the last cycle is [`CycleStats::fields`] of
    /// [`Stats::last_cycle`], under [`Stats::LAST_CYCLE`].
    {
        "visit" => visit,
        "exception" => exception,
        "timeout" => timeout,
        "downgrade" => downgrade,
        "concurrent" => concurrent,
        "adaptiveLimit" => adaptive_limit,
        "adaptiveMinRttUs" => adaptive_min_rtt_us,
        "adaptiveRttUs" => adaptive_rtt_us,
        "adaptiveLongRttUs" => adaptive_long_rtt_us,
    }
);

named_fields!(CycleStats, 5,
    /// The last whole cycle's values, named ([`CycleStats::NAMES`]).
    {
        "visitNum" => visit_num,
        "exceptionNum" => exception_num,
        "timeoutNum" => timeout_num,
        "downgradeNum" => downgrade_num,
        "concurrentNum" => concurrent_num,
    }
);

named_fields!(KeyTableStats, 6,
    /// A key table's counters, named ([`KeyTableStats::NAMES`]) as every
    /// binding shows them.
    {
        "capacity" => capacity,
        "resident" => resident,
        "evictions" => evictions,
        "lossyEvictions" => lossy_evictions,
        "admitted" => admitted,
        "refused" => refused,
    }
);

impl Stats {
    /// The key under which [`Stats::last_cycle`] nests.
    pub const LAST_CYCLE: &'static str = "lastCycle";
}
