//! The ordered rules of SEMANTICS.md §4, step 3: one small function each.
//! Arithmetic is done in `i128`, so no threshold (up to `i64::MAX`) and no
//! count can overflow.

use crate::reason::Reason;
use crate::shaping::Shape;
use crate::strategy::Strategy;

/// What a decision reads, after this request's counters were updated. A rule
/// asks for a sliding sum only when its answer depends on it, and the point
/// reads the sums on first use.
pub(crate) trait Reading {
    /// Whether the strategy has any row beyond SDS's own: a decision
    /// without them is compiled without their checks.
    const NEW_ROWS: bool;
    /// Sliding visits, this request included.
    fn visit(&self) -> u64;
    /// Visits in the current second, this request included.
    fn token(&self) -> u64;
    /// Whether this request got a concurrency permit.
    fn acquired(&self) -> bool;
    /// Sliding downgrades, before this request's own.
    fn downgrade(&self) -> u64;
    /// Sliding exceptions.
    fn exception(&self) -> u64;
    /// Sliding timeouts.
    fn timeout(&self) -> u64;
    /// The token-bucket rule of a strategy that warms up or paces, decided
    /// by the point's shaping state (shaping.rs).
    fn shaping_fails(&self, shape: Shape) -> bool;
}

/// The first rule that fails, in the reference's order. Written as a chain
/// of direct calls (not a table of function pointers) so that every rule
/// inlines into the decision.
#[inline]
pub(crate) fn first_failure<R: Reading>(s: &Strategy, r: &R) -> Option<Reason> {
    if visit_fails(s, r) {
        Some(Reason::Visit)
    } else if token_bucket_fails(s, r) {
        Some(Reason::TokenBucket)
    } else if !r.acquired() {
        Some(Reason::Concurrent)
    } else if timeout_fails(s, r) {
        Some(Reason::Timeout)
    } else if exception_fails(s, r) {
        Some(Reason::Exception)
    } else if exception_rate_fails(s, r) {
        Some(Reason::ExceptionRate)
    } else if R::NEW_ROWS && slow_call_rate_fails(s, r) {
        Some(Reason::SlowCallRate)
    } else {
        None
    }
}

fn wide(v: u64) -> i128 {
    v as i128
}

fn visit_fails<R: Reading>(s: &Strategy, r: &R) -> bool {
    if s.visit_threshold < 0 {
        return false;
    }
    let visit = wide(r.visit());
    // visit - downgrade <= visit: the downgrades matter only above the threshold.
    visit > s.visit_threshold as i128 && visit - wide(r.downgrade()) > s.visit_threshold as i128
}

fn token_bucket_fails<R: Reading>(s: &Strategy, r: &R) -> bool {
    let (rate, size) = (
        s.token_bucket_generated_tokens_in_second as i128,
        s.token_bucket_size as i128,
    );
    if rate < 0 {
        return false;
    }
    if R::NEW_ROWS && (s.warms_up() | s.paces()) {
        // The fields by value: a reference would make the whole strategy
        // leave registers for the stack on every decision.
        return r.shaping_fails(Shape::of(s));
    }
    // Read only when the rule is on: a cluster point's token count is a load.
    let n = wide(r.token());
    if n <= rate {
        return false;
    }
    if size <= rate || n > size {
        return true;
    }
    10 * rate - n + wide(r.downgrade()) <= 0
}

fn timeout_fails<R: Reading>(s: &Strategy, r: &R) -> bool {
    s.timeout_count_threshold >= 0 && wide(r.timeout()) >= s.timeout_count_threshold as i128
}

fn exception_fails<R: Reading>(s: &Strategy, r: &R) -> bool {
    s.exception_threshold >= 0 && wide(r.exception()) >= s.exception_threshold as i128
}

fn exception_rate_fails<R: Reading>(s: &Strategy, r: &R) -> bool {
    let (threshold, start) = (s.exception_rate_threshold, s.exception_rate_start);
    rate_fails(threshold, start, r, false)
}

/// Slow calls are the requests the timeout counter counts (slower than
/// `timeoutThreshold`), judged as exceptions are by the exception rate.
fn slow_call_rate_fails<R: Reading>(s: &Strategy, r: &R) -> bool {
    let (threshold, start) = (s.slow_call_rate_threshold, s.slow_call_rate_start);
    rate_fails(threshold, start, r, true)
}

/// Whether the events (timeouts if `slow`, else exceptions) reach
/// `threshold` percent of the admitted requests, once the window's visits
/// pass `start` (a negative start or a threshold outside 0..=100: off). A
/// flag, not a closure: a closure is not always inlined, and then the
/// reading leaves registers for the stack on every decision.
#[inline(always)]
fn rate_fails<R: Reading>(threshold: i64, start: i64, r: &R, slow: bool) -> bool {
    if start < 0 || !(0..=100).contains(&threshold) || wide(r.visit()) <= start as i128 {
        return false;
    }
    let inputs = wide(r.visit()) - wide(r.downgrade());
    // events / inputs * 100 < threshold, without the division.
    let events = if slow { r.timeout() } else { r.exception() };
    inputs != 0 && wide(events) * 100 >= threshold as i128 * inputs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strategy(f: impl FnOnce(&mut Strategy)) -> Strategy {
        let mut s = Strategy::DEFAULT;
        f(&mut s);
        s
    }

    #[derive(Default)]
    struct Fixed {
        visit: u64,
        token: u64,
        downgrade: u64,
        exception: u64,
        timeout: u64,
    }

    impl Reading for Fixed {
        const NEW_ROWS: bool = true;
        fn visit(&self) -> u64 {
            self.visit
        }
        fn token(&self) -> u64 {
            self.token
        }
        fn acquired(&self) -> bool {
            true
        }
        fn downgrade(&self) -> u64 {
            self.downgrade
        }
        fn exception(&self) -> u64 {
            self.exception
        }
        fn timeout(&self) -> u64 {
            self.timeout
        }
        fn shaping_fails(&self, _: Shape) -> bool {
            false
        }
    }

    fn reading(visit: u64, token: u64, downgrade: u64) -> Fixed {
        Fixed {
            visit,
            token,
            downgrade,
            ..Fixed::default()
        }
    }

    #[test]
    fn token_bucket_follows_the_reference_formula() {
        let no_burst = strategy(|s| s.token_bucket_generated_tokens_in_second = 5);
        assert!(!token_bucket_fails(&no_burst, &reading(5, 5, 0)));
        assert!(token_bucket_fails(&no_burst, &reading(6, 6, 0)));
        let burst = strategy(|s| {
            s.token_bucket_generated_tokens_in_second = 5;
            s.token_bucket_size = 8;
        });
        assert!(!token_bucket_fails(&burst, &reading(8, 8, 0)));
        assert!(token_bucket_fails(&burst, &reading(9, 9, 0)));
        let tiny = strategy(|s| {
            s.token_bucket_generated_tokens_in_second = 0;
            s.token_bucket_size = 3;
        });
        // 10*0 - 1 + 0 <= 0: fails; a downgrade in the window lifts it.
        assert!(token_bucket_fails(&tiny, &reading(1, 1, 0)));
        assert!(!token_bucket_fails(&tiny, &reading(1, 1, 2)));
    }

    #[test]
    fn exception_rate_uses_exact_division() {
        let s = strategy(|s| {
            s.exception_rate_threshold = 50;
            s.exception_rate_start = 3;
        });
        let mut r = reading(4, 1, 0);
        r.exception = 1;
        assert!(!exception_rate_fails(&s, &r)); // 25% < 50%
        r.exception = 2;
        assert!(exception_rate_fails(&s, &r)); // 50% is not < 50%
        r.visit = 3;
        assert!(!exception_rate_fails(&s, &r)); // not above the start
    }

    #[test]
    fn slow_call_rate_is_the_exception_rate_of_timeouts() {
        let s = strategy(|s| {
            s.timeout_threshold = 100;
            s.slow_call_rate_threshold = 50;
            s.slow_call_rate_start = 3;
        });
        let mut r = reading(4, 1, 0);
        r.timeout = 1;
        assert_eq!(first_failure(&s, &r), None); // 25% < 50%
        r.timeout = 2;
        assert_eq!(first_failure(&s, &r), Some(Reason::SlowCallRate));
        r.downgrade = 2; // 2 of the 2 admitted were slow
        r.timeout = 1;
        assert_eq!(first_failure(&s, &r), Some(Reason::SlowCallRate));
        r.visit = 3;
        assert_eq!(first_failure(&s, &r), None); // not above the start
    }

    #[test]
    fn huge_thresholds_do_not_overflow() {
        let s = strategy(|s| {
            s.visit_threshold = i64::MAX;
            s.token_bucket_generated_tokens_in_second = i64::MAX;
            s.exception_rate_threshold = 100;
        });
        let r = reading(u64::MAX, u64::MAX, 0);
        assert_eq!(first_failure(&s, &r), Some(Reason::Visit));
    }
}
