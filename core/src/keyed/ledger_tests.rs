//! The ledger of shared in-flight tables: a process stopped at each step
//! of a take or a give-back (as `kill -9` would stop it) has exactly what
//! it held given back by a sweep, once; a marker it left is helped by the
//! next call; a row full is refused before the cell.

use std::vec::Vec;

use super::cell::KeyBucket;
use super::ledger::{Crash, CRASH};
use super::{KeyError, KeyLedger, KeyLedgerEntry, KeyRule, KeyRuleKind, KeyTable};
use crate::Value;

const ROW: usize = 16;
const SLOTS: usize = 4;

fn rule(limit: i64) -> KeyRule {
    KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(limit))]).unwrap()
}

struct Shared {
    buckets: Vec<KeyBucket>,
    entries: Vec<KeyLedgerEntry>,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            buckets: (0..16).map(|_| KeyBucket::new()).collect(),
            entries: (0..ROW * SLOTS).map(|_| KeyLedgerEntry::new()).collect(),
        }
    }

    fn table(&self, limit: i64) -> KeyTable<&[KeyBucket]> {
        KeyTable::new(&self.buckets[..], rule(limit)).unwrap()
    }

    fn ledger(&self) -> KeyLedger<'_> {
        KeyLedger::new(&self.entries, ROW).unwrap()
    }
}

fn held(table: &KeyTable<&[KeyBucket]>, key: &[u8]) -> u64 {
    let d = table.peek(key, 0);
    u64::from(d.limit - d.remaining)
}

/// Runs `f` as a process that is killed at `at`.
fn killed_at<R>(at: Crash, f: impl FnOnce() -> R) -> R {
    CRASH.with(|c| c.set(at));
    let r = f();
    CRASH.with(|c| c.set(Crash::None));
    r
}

/// A take or a give-back killed at any step: slot 0 takes `units.0` of key
/// `a` and slot 1 `units.1`, then slot 0's `step` is killed at `at`. A sweep
/// of slot 0's row gives back `swept` (what slot 0 still held, or had
/// half given back), once, and leaves slot 1's units alone.
#[test]
fn a_step_killed_anywhere_is_finished_by_the_sweep_once() {
    type Step = fn(&KeyTable<&[KeyBucket]>, &KeyLedger<'_>);
    let take: Step = |t, l| assert!(t.decide_ledgered(l, 0, b"a", 4).is_ok());
    let give: Step = |t, l| assert!(t.release_ledgered(l, 0, b"a", 3).is_ok());
    for (at, units, step, swept) in [
        (Crash::TakeLedgered, (2, 3), take, 2),
        (Crash::TakeInCell, (2, 3), take, 6),
        (Crash::TakeCommitted, (2, 3), take, 6),
        (Crash::GiveLedgered, (5, 2), give, 5),
        (Crash::GiveInCell, (5, 2), give, 2),
        (Crash::GiveCommitted, (5, 2), give, 2),
    ] {
        let shared = Shared::new();
        let (table, ledger) = (shared.table(10), shared.ledger());
        for (slot, n) in [units.0, units.1].into_iter().enumerate() {
            let decision = table.decide_ledgered(&ledger, slot, b"a", n).unwrap();
            assert!(decision.admitted);
        }
        killed_at(at, || step(&table, &ledger));
        assert_eq!(table.sweep_ledger(&ledger, 0), swept, "{at:?}");
        let left = u64::from(units.1);
        assert_eq!(held(&table, b"a"), left, "{at:?}: slot 1's units only");
        assert_eq!(ledger.held_by(0), 0, "{at:?}");
        assert_eq!(table.sweep_ledger(&ledger, 0), 0, "{at:?}: once");
        assert_eq!(ledger.held_by(1), left, "{at:?}");
    }
}

#[test]
fn a_dead_step_marker_is_helped_by_the_next_call_and_counted_once() {
    let shared = Shared::new();
    let (table, ledger) = (shared.table(3), shared.ledger());
    killed_at(Crash::TakeInCell, || {
        table.decide_ledgered(&ledger, 0, b"a", 2)
    })
    .unwrap();
    // Slot 1 finds slot 0's marker: it commits slot 0's entry, then decides.
    assert!(table.decide_ledgered(&ledger, 1, b"a", 1).unwrap().admitted);
    assert_eq!(ledger.held_by(0), 2);
    assert!(!table.decide_ledgered(&ledger, 1, b"a", 1).unwrap().admitted);
    assert_eq!(table.sweep_ledger(&ledger, 0), 2);
    assert_eq!(held(&table, b"a"), 1);
    assert!(table.release_ledgered(&ledger, 1, b"a", 1).unwrap());
    assert_eq!(held(&table, b"a"), 0);
}

#[test]
fn a_process_gives_back_only_the_units_it_took() {
    let shared = Shared::new();
    let (table, ledger) = (shared.table(5), shared.ledger());
    assert!(table.decide_ledgered(&ledger, 0, b"a", 4).unwrap().admitted);
    assert!(!table.release_ledgered(&ledger, 1, b"a", 1).unwrap());
    assert_eq!(held(&table, b"a"), 4);
    // More than held gives back what it held.
    assert!(table.release_ledgered(&ledger, 0, b"a", 9).unwrap());
    assert_eq!(held(&table, b"a"), 0);
    assert_eq!(ledger.held_by(0), 0);
    assert!(!table.release_ledgered(&ledger, 0, b"a", 1).unwrap());
    assert_eq!(
        table.release_ledgered(&ledger, 0, b"a", 0),
        Err(KeyError::ZeroCost)
    );
}

#[test]
fn a_full_row_is_refused_before_the_cell_and_a_reset_key_frees_its_entry() {
    let shared = Shared::new();
    let (table, ledger) = (shared.table(5), shared.ledger());
    let key = |i: usize| [b'k', i as u8];
    for i in 0..ROW {
        assert!(
            table
                .decide_ledgered(&ledger, 0, &key(i), 1)
                .unwrap()
                .admitted
        );
    }
    let resident = table.stats().resident;
    assert_eq!(
        table.decide_ledgered(&ledger, 0, b"one more", 1),
        Err(KeyError::LedgerFull)
    );
    assert_eq!(held(&table, b"one more"), 0);
    assert_eq!(table.stats().resident, resident + 1, "the key's cell only");
    // Another process has a row of its own.
    assert!(
        table
            .decide_ledgered(&ledger, 1, b"one more", 1)
            .unwrap()
            .admitted
    );
    // A key reset forgets its units: its entry is free for another key.
    assert!(table.reset(&key(0)));
    assert!(
        table
            .decide_ledgered(&ledger, 0, b"one more", 1)
            .unwrap()
            .admitted
    );
    assert_eq!(ledger.held_by(0), ROW as u64);
    assert_eq!(table.sweep_ledger(&ledger, 0), ROW as u64);
}

#[test]
fn a_cost_above_the_limit_takes_no_entry_and_no_cell() {
    let shared = Shared::new();
    let (table, ledger) = (shared.table(3), shared.ledger());
    assert!(table.decide_ledgered(&ledger, 0, b"a", 1).unwrap().admitted);
    let d = table.decide_ledgered(&ledger, 0, b"a", 4).unwrap();
    assert!(!d.admitted);
    assert_eq!((d.remaining, d.retry_after_ms), (2, super::NEVER));
    let d = table.decide_ledgered(&ledger, 0, b"b", 4).unwrap();
    assert_eq!((d.admitted, table.stats().resident), (false, 1));
    assert_eq!(ledger.held_by(0), 1);
}
