//! Window rules on a shared file when the callers' clocks race a window
//! boundary: every process (and thread) reads its clock before its
//! decision's compare-and-swap, so a call may reach the table with a
//! `now_ms` in the window before the one the key's state is already in.
//!
//! The core counts such a call in the window the key is already in (a
//! late clock once reset the window: with 8 processes on 4 keys, windows
//! of 200 ms and a limit of 50, 100 to 200 were admitted in a window).

mod common;

use common::TempDir;
use sds_core::keyed::{KeyRuleBuilder, KeyRuleKind};
use sds_core::Value;
use sds_shm::{Options, SharedKeyTable};

#[test]
fn a_call_with_a_late_clock_does_not_reset_the_current_window() {
    let dir = TempDir::new("keys-late");
    let rules = [
        (KeyRuleKind::FixedWindow, None),
        (KeyRuleKind::SlidingWindow, None),
        (KeyRuleKind::FixedWindow, Some("windowFromFirstHit")),
    ];
    for (i, (kind, flag)) in rules.into_iter().enumerate() {
        let mut builder = KeyRuleBuilder::new(kind);
        builder.set("limit", Value::from(1i64)).unwrap();
        builder.set("periodMs", Value::from(1000i64)).unwrap();
        if let Some(flag) = flag {
            builder.set(flag, Value::from(1i64)).unwrap();
        }
        let rule = builder.build().unwrap();
        let path = dir.join(&format!("keys-{i}"));
        let shared = SharedKeyTable::open(path, 16, rule, &Options::new()).unwrap();
        let t = shared.table();
        let admitted = |now| t.decide(b"k", now, 1).unwrap().admitted;
        // Window 1 000 (from 1 000 000 ms) takes its one call; a call whose
        // clock read 999 999 lands after it; then window 1 000 again.
        assert!(admitted(1_000_000));
        let _late = admitted(999_999);
        assert!(
            !admitted(1_000_001),
            "{kind:?} {flag:?}: a second call in one window of 1"
        );
    }
}
