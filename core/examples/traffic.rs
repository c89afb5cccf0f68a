//! `make demo`: feeds a simulated traffic curve into an SDS window (1 s
//! buckets, a 10 s sliding window, a ring of 30) and into a point with
//! `visitThreshold = 400`, and prints one row per second.

use sds_core::window::SdsCounterWindow;
use sds_core::{Flags, Outcome, Point, SlidingWindow, Strategy};

/// Requests per second: a ramp, a spike, a quiet spell, an idle gap, a return.
fn requests_in_second(s: u64) -> u64 {
    match s {
        0..=9 => 10 + 8 * s,
        10..=14 => 220,
        15..=19 => 30,
        20..=34 => 0,
        _ => 25,
    }
}

fn main() {
    // A wall-clock instant aligned to a 10 s cycle, as SDS's windows are.
    let start: u64 = 1_700_000_000_000;
    let window: SdsCounterWindow = SlidingWindow::sds_counter();
    let point = Point::new();
    let mut strategy = Strategy::DEFAULT;
    strategy.visit_threshold = 400;
    point
        .set_strategy(Some(&strategy))
        .expect("a valid strategy");

    println!(
        "SDS window: 1000 ms buckets, 10 per window, ring of 30; point with visitThreshold 400\n"
    );
    println!(
        "{:>5} {:>9} {:>7} {:>8} {:>11} {:>7} {:>10}",
        "t(s)", "requests", "bucket", "sliding", "last cycle", "passed", "downgraded"
    );
    for s in 0..40u64 {
        let n = requests_in_second(s);
        let (mut passed, mut downgraded) = (0, 0);
        for i in 0..n {
            // Spread the second's requests over its 1000 ms.
            let now = start + s * 1000 + i * 1000 / n.max(1);
            window.increment(now);
            let entry = point.enter(now, Flags::NONE);
            if entry.downgraded() {
                downgraded += 1;
            } else {
                passed += 1;
            }
            point.exit(&entry, now, Outcome::Ok);
        }
        let end = start + s * 1000 + 999;
        println!(
            "{:>5} {:>9} {:>7} {:>8} {:>11} {:>7} {:>10}",
            s,
            n,
            window.bucket(end),
            window.sum(end),
            window.last_whole_cycle(end),
            passed,
            downgraded
        );
    }
    let stats = point.stats(start + 40_000);
    println!(
        "\nlast whole cycle of the point at t=40 s: visitNum {} downgradeNum {}",
        stats.last_cycle.visit_num, stats.last_cycle.downgrade_num
    );
    println!("after the 15 s idle gap the window reads exactly, with no cleanup thread.");
}
