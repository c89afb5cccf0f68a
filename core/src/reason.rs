//! Why a request was downgraded: one table of stable codes and names for
//! every binding.

crate::code_table::code_table! {
    /// The rule that downgraded a request. Codes are stable (C's `sds_reason`,
    /// Node's packed entry, Java's enum); 0 is reserved for "not downgraded"
    /// (C's `SDS_REASON_NONE`).
    pub enum Reason: u8 {
        /// Too many visits in the sliding window (`visit_threshold`).
        Visit = 1 => "VISIT",
        /// The current second took more tokens than the bucket gives.
        TokenBucket = 2 => "TOKEN_BUCKET",
        /// No concurrency permit was left (`concurrent_threshold`).
        Concurrent = 3 => "CONCURRENT",
        /// Too many timeouts in the sliding window.
        Timeout = 4 => "TIMEOUT",
        /// Too many exceptions in the sliding window.
        Exception = 5 => "EXCEPTION",
        /// Too high a share of exceptions in the sliding window.
        ExceptionRate = 6 => "EXCEPTION_RATE",
        /// Load-test traffic on a point with `pressure_test_downgrade` 1.
        PressureTest = 7 => "PRESSURE_TEST",
        /// A delay started by an earlier downgrade is still running.
        Delay = 8 => "DELAY",
        /// Too high a share of slow calls (slower than `timeout_threshold`) in the sliding window.
        SlowCallRate = 9 => "SLOW_CALL_RATE",
    }
    /// The reason with this code.
    pub const fn from_code(code: u8);
}

impl Reason {
    /// The stable code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The reason with this name.
    pub fn from_name(name: &str) -> Option<Reason> {
        Reason::ALL.iter().copied().find(|r| r.as_str() == name)
    }
}
