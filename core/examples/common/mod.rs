//! What the pair benchmarks share (`benches/point.rs`,
//! `examples/pair_count.rs`, and sds-metrics' `examples/scrape.rs`, included
//! by `#[path]`): the strategy they time.

use sds_core::Strategy;

/// Five rules on, none of which downgrades: visits, the token bucket,
/// concurrency, timeouts (with a `timeoutThreshold`, so an exit checks its
/// duration) and exceptions.
pub fn five_rules() -> Strategy {
    let mut s = Strategy::DEFAULT;
    s.visit_threshold = i64::MAX;
    s.token_bucket_generated_tokens_in_second = i64::MAX / 20;
    s.concurrent_threshold = 1_000;
    s.timeout_threshold = 1_000;
    s.timeout_count_threshold = i64::MAX;
    s.exception_threshold = i64::MAX;
    s
}
