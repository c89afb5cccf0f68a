//! Enter+exit latency of a run in phases (before, during and after a
//! fault): the p99 printed, the fault's phase held to the one before.

/// The 99th percentile of `times` (ns).
pub fn p99(times: &[u64]) -> u64 {
    let mut v = times.to_vec();
    v.sort_unstable();
    v[v.len() * 99 / 100]
}

/// Prints each phase's p99 and call count (`label`: what the phase was),
/// then asserts that the p99 of the fault's phase (`during`) stays under
/// 5 × the one of `before` + 250 µs; `message` says what must not slow.
/// The slack absorbs a 2-core machine busy with the fault itself (six
/// redis-servers electing a new master, reconnects): one `enter` waiting on
/// Redis would wait for a round trip's timeout (200 ms or more in these
/// tests), far above it.
pub fn assert_p99_kept(phases: [(&str, &[u64]); 3], message: &str) {
    let [(l0, before), (l1, during), (l2, after)] = phases;
    println!(
        "p99 enter+exit: {} ns {l0} ({} calls), {} ns {l1} ({} calls), {} ns {l2} ({} calls)",
        p99(before),
        before.len(),
        p99(during),
        during.len(),
        p99(after),
        after.len()
    );
    assert!(p99(during) < 5 * p99(before) + 250_000, "{message}");
}
