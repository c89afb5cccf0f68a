//! Why a request was downgraded: one table of stable codes and names for
//! every binding.

/// The rule that downgraded a request. Codes are stable (C's `sds_reason`,
/// Node's packed entry, Java's enum); 0 is reserved for "not downgraded"
/// (C's `SDS_REASON_NONE`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Reason {
    /// Too many visits in the sliding window (`visit_threshold`).
    Visit = 1,
    /// The current second took more tokens than the bucket gives.
    TokenBucket = 2,
    /// No concurrency permit was left (`concurrent_threshold`).
    Concurrent = 3,
    /// Too many timeouts in the sliding window.
    Timeout = 4,
    /// Too many exceptions in the sliding window.
    Exception = 5,
    /// Too high a share of exceptions in the sliding window.
    ExceptionRate = 6,
    /// Load-test traffic on a point with `pressure_test_downgrade` 1.
    PressureTest = 7,
    /// A delay started by an earlier downgrade is still running.
    Delay = 8,
    /// Too high a share of slow calls (slower than `timeout_threshold`) in the sliding window.
    SlowCallRate = 9,
}

crate::error::names!(Reason {
    Visit => "VISIT",
    TokenBucket => "TOKEN_BUCKET",
    Concurrent => "CONCURRENT",
    Timeout => "TIMEOUT",
    Exception => "EXCEPTION",
    ExceptionRate => "EXCEPTION_RATE",
    PressureTest => "PRESSURE_TEST",
    Delay => "DELAY",
    SlowCallRate => "SLOW_CALL_RATE",
});

impl Reason {
    /// The stable code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The reason with this code.
    pub const fn from_code(code: u8) -> Option<Reason> {
        if code >= 1 && code as usize <= Reason::ALL.len() {
            Some(Reason::ALL[code as usize - 1])
        } else {
            None
        }
    }

    /// The reason with this name.
    pub fn from_name(name: &str) -> Option<Reason> {
        Reason::ALL.iter().copied().find(|r| r.as_str() == name)
    }
}

impl core::fmt::Display for Reason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}
