//! Pacing and warm-up under every interleaving: two requests deciding at
//! the same instant never share a slot, and a second's warm-up sync takes
//! the previous second's passes off once.

use super::model;
use loom::sync::Arc;
use loom::thread;
use sds_core::{Entry, Flags, Outcome, Point, Strategy};

const T: u64 = 1_000_000;

fn point(f: impl FnOnce(&mut Strategy)) -> Arc<Point> {
    Arc::new(super::common::point(f))
}

/// Two threads enter `p` at the same instant `at`: this one's entry, then
/// the other's.
fn enter_together(p: &Arc<Point>, at: u64) -> [Entry; 2] {
    let other = Arc::clone(p);
    let t = thread::spawn(move || other.enter(at, Flags::NONE));
    let mine = p.enter(at, Flags::NONE);
    [mine, t.join().unwrap()]
}

#[test]
fn two_requests_at_one_instant_get_two_slots() {
    model(|| {
        let p = point(|s| {
            s.token_bucket_generated_tokens_in_second = 10;
            s.max_queueing_time_ms = 500;
        });
        let mut both = enter_together(&p, T).map(|e| e.wait_ms());
        both.sort_unstable();
        assert_eq!(both, [0, 100]);
    });
}

#[test]
fn a_seconds_sync_happens_once() {
    model(|| {
        // Warm-up 10/s over 1 s, cold factor 3: warning 5 tokens, max 10,
        // slope 0.04. Cold (10 stored): 1 / (5 * 0.04 + 0.1) = 3.3 a second.
        let p = point(|s| {
            s.token_bucket_generated_tokens_in_second = 10;
            s.warm_up_period_sec = 1;
        });
        for _ in 0..3 {
            let e = p.enter(T, Flags::NONE);
            p.exit(&e, T, Outcome::Ok);
        }
        // The next second two threads race to sync: the 3 passes come off
        // once (7 stored: 1 / (2 * 0.04 + 0.1) = 5.6 a second); twice would
        // leave 4, under the warning line: 10 a second.
        let [mine, theirs] = enter_together(&p, T + 1_000);
        assert!(!mine.downgraded() && !theirs.downgraded());
        for _ in 0..3 {
            assert!(!p.enter(T + 1_000, Flags::NONE).downgraded());
        }
        assert!(
            p.enter(T + 1_000, Flags::NONE).downgraded(),
            "6 > 5.6 a second"
        );
    });
}
