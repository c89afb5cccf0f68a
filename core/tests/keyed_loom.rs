//! Model-checked key table (run with `RUSTFLAGS="--cfg loom"
//! CARGO_TARGET_DIR=target/loom cargo test -p sds-core --release --test
//! keyed_loom`): every interleaving of a decision with the eviction of its
//! own key, of two first calls of one new key, and of two first
//! increments of one; in flight on a ledgered table, two processes' takes,
//! a release against a take, and the sweep of a dead process's row
//! against a take: the rows always count what the cell holds.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use sds_core::keyed::{KeyBucket, KeyLedger, KeyLedgerEntry, KeyRule, KeyRuleKind, KeyTable};
use sds_core::Value;

const T: u64 = 1_000_000;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// `buckets` of four cells, one unit per window of 1 s.
fn table(buckets: usize) -> Arc<KeyTable<Vec<KeyBucket>>> {
    let rule = KeyRule::from_entries(
        KeyRuleKind::FixedWindow,
        [
            ("limit", Value::from(1i64)),
            ("periodMs", Value::from(1000i64)),
        ],
    )
    .unwrap();
    Arc::new(KeyTable::new((0..buckets).map(|_| KeyBucket::new()).collect(), rule).unwrap())
}

#[test]
fn a_call_racing_the_eviction_of_its_key_is_kept_or_counted_lossy() {
    model(|| {
        let t = table(1);
        // "a" used a window ago (free now); three others owe their whole limit.
        t.decide(b"a", T - 1000, 1).unwrap();
        for key in [b"k1", b"k2", b"k3"] {
            t.decide(key, T, 1).unwrap();
        }
        let t1 = t.clone();
        let a = thread::spawn(move || t1.decide(b"a", T, 1).unwrap().admitted);
        let b = t.decide(b"b", T, 1).unwrap().admitted;
        let a = a.join().unwrap();
        assert!(a && b, "fresh keys are admitted");
        // Every admitted call is in its key's state, or that state's loss
        // was counted (the four cells are full: one of them had to go).
        let lost = ["a", "b", "k1", "k2", "k3"]
            .iter()
            .filter(|key| t.peek(key.as_bytes(), T).remaining > 0)
            .count();
        let stats = t.stats();
        assert!(
            lost >= 1 && stats.lossy_evictions >= lost as u64,
            "{lost}: {stats:?} {:?}",
            ["a", "b", "k1", "k2", "k3"].map(|key| t.peek(key.as_bytes(), T).remaining)
        );
    });
}

#[test]
fn two_first_calls_of_a_new_key_share_one_state() {
    model(|| {
        let t = table(2);
        let t1 = t.clone();
        let other = thread::spawn(move || t1.decide(b"new", T, 1).unwrap().admitted);
        let mine = t.decide(b"new", T, 1).unwrap().admitted;
        let other = other.join().unwrap();
        assert!(mine ^ other, "exactly the limit (1) admitted");
        assert_eq!(t.stats().resident, 1);
    });
}

#[test]
fn an_in_flight_unit_taken_during_an_eviction_is_never_evicted() {
    model(|| {
        let rule = KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(1i64))]);
        let t = Arc::new(KeyTable::new(vec![KeyBucket::new()], rule.unwrap()).unwrap());
        // "a" held a unit and gave it back (its cell is free); three keys hold theirs.
        t.decide(b"a", T, 1).unwrap();
        t.release(b"a", 1).unwrap();
        for key in [b"k1", b"k2", b"k3"] {
            t.decide(key, T, 1).unwrap();
        }
        let t1 = t.clone();
        let a = thread::spawn(move || t1.decide(b"a", T, 1).is_ok_and(|d| d.admitted));
        let b = t.decide(b"b", T, 1).is_ok_and(|d| d.admitted);
        let a = a.join().unwrap();
        assert!(a ^ b, "one free cell: exactly one of them holds a unit");
        for (key, admitted) in [("a", a), ("b", b)] {
            assert_eq!(
                t.release(key.as_bytes(), 1),
                Ok(admitted),
                "{key}'s unit is kept"
            );
        }
        assert_eq!(t.stats().lossy_evictions, 0);
    });
}

#[test]
fn two_first_in_flight_calls_of_a_new_key_share_one_limit() {
    model(|| {
        let rule = KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(1i64))]);
        let buckets: Vec<KeyBucket> = (0..2).map(|_| KeyBucket::new()).collect();
        let t = Arc::new(KeyTable::new(buckets, rule.unwrap()).unwrap());
        let t1 = t.clone();
        let other = thread::spawn(move || t1.decide(b"new", T, 1).unwrap().admitted);
        let mine = t.decide(b"new", T, 1).unwrap().admitted;
        let other = other.join().unwrap();
        assert!(mine ^ other, "one unit");
        assert_eq!(t.release(b"new", 1), Ok(true));
        assert_eq!(t.release(b"new", 1), Ok(false));
    });
}

#[test]
fn two_first_increments_of_a_new_key_both_count_in_one_window() {
    model(|| {
        let rule = KeyRule::from_entries(
            KeyRuleKind::FixedWindow,
            [
                ("limit", Value::from(1i64)),
                ("periodMs", Value::from(1000i64)),
                ("windowFromFirstHit", Value::from(1i64)),
            ],
        );
        let buckets: Vec<KeyBucket> = (0..2).map(|_| KeyBucket::new()).collect();
        let t = Arc::new(KeyTable::new(buckets, rule.unwrap()).unwrap());
        let t1 = t.clone();
        let other = thread::spawn(move || t1.increment(b"new", T, 1).unwrap().count);
        let mine = t.increment(b"new", T + 1, 1).unwrap().count;
        let other = other.join().unwrap();
        // Each saw its own hit and, in one order, the other's: 1 and 2.
        assert_eq!(mine + other, 3, "{mine} {other}");
        assert_eq!(t.count(b"new", T + 1).unwrap().count, 2);
        assert_eq!(t.stats().resident, 1);
    });
}

/// Ledger rows of 2 entries for 2 process slots, beside a one-bucket
/// in-flight table of `limit` units per key.
struct Ledgered {
    table: KeyTable<Vec<KeyBucket>>,
    entries: Vec<KeyLedgerEntry>,
}

impl Ledgered {
    fn new(limit: i64) -> Arc<Ledgered> {
        let rule = KeyRule::from_entries(KeyRuleKind::InFlight, [("limit", Value::from(limit))]);
        let table = KeyTable::new(vec![KeyBucket::new()], rule.unwrap()).unwrap();
        let entries = (0..4).map(|_| KeyLedgerEntry::new()).collect();
        Arc::new(Ledgered { table, entries })
    }

    fn ledger(&self) -> KeyLedger<'_> {
        KeyLedger::new(&self.entries, 2).unwrap()
    }

    fn take(&self, slot: usize, units: u32) -> bool {
        let ledger = self.ledger();
        let d = self.table.decide_ledgered(&ledger, slot, b"a", units);
        d.unwrap().admitted
    }

    fn release(&self, slot: usize, units: u32) -> bool {
        self.table
            .release_ledgered(&self.ledger(), slot, b"a", units)
            .unwrap()
    }

    /// Gives back what `slot`'s row holds (its process died): the units.
    fn sweep(&self, slot: usize) -> u64 {
        self.table.sweep_ledger(&self.ledger(), slot)
    }

    /// Units the cell holds: what the rows count, exactly.
    fn check(&self) -> u64 {
        let d = self.table.peek(b"a", 0);
        let held = u64::from(d.limit - d.remaining);
        let ledger = self.ledger();
        assert_eq!(held, ledger.held_by(0) + ledger.held_by(1));
        held
    }
}

#[test]
fn two_processes_taking_one_key_count_in_their_rows_exactly() {
    model(|| {
        let l = Ledgered::new(2);
        let l1 = l.clone();
        let one = thread::spawn(move || l1.take(0, 1));
        let two = l.take(1, 2);
        let one = one.join().unwrap();
        assert!(one ^ two, "3 units do not fit in 2");
        assert_eq!(l.check(), if one { 1 } else { 2 });
        // Both processes die: a sweep of each row gives back what it held.
        let back = l.sweep(0) + l.sweep(1);
        assert_eq!(back, if one { 1 } else { 2 });
        assert_eq!(l.check(), 0);
    });
}

#[test]
fn a_release_racing_another_process_take_keeps_rows_and_cell_equal() {
    model(|| {
        let l = Ledgered::new(1);
        assert!(l.take(1, 1));
        let l1 = l.clone();
        let release = thread::spawn(move || l1.release(1, 1));
        let took = l.take(0, 1);
        assert!(release.join().unwrap());
        assert_eq!(l.check(), u64::from(took));
    });
}

#[test]
fn a_sweep_of_a_dead_row_racing_a_live_take_gives_back_exactly_once() {
    model(|| {
        let l = Ledgered::new(2);
        // Slot 0 took 2 and died.
        assert!(l.take(0, 2));
        let l1 = l.clone();
        let sweep = thread::spawn(move || l1.sweep(0));
        let took = l.take(1, 1);
        assert_eq!(sweep.join().unwrap(), 2);
        assert_eq!(l.check(), u64::from(took));
        assert_eq!(l.ledger().held_by(0), 0);
    });
}
