//! `kill -9` on processes that take and give back in-flight units on the
//! same keys of a shared key table file: the units of a process that dies
//! are given back exactly once, at any instruction it dies at (between its
//! ledger and the cell, while it sweeps another dead process's row, while
//! it takes its slot).
//!
//! 8 workers take (cost 1 to 3) and give back units on 4 keys of limit 12
//! (so calls are refused, and refused calls sweep), each counting in its
//! own memory what it holds per key, while a random one is killed every 5
//! to 30 ms and started again. Then the workers are told to stop: each
//! writes what it holds per key, and what its ledger row says it holds,
//! to a shared board and waits. After a sweep, every key's units held are
//! exactly the sum of what the live workers hold. Then every worker is
//! killed, and a sweep gives back exactly those units: every key holds 0,
//! and takes its whole limit again.
//!
//! `SDS_SHM_TEST_STORM_MS` (default 3 000): the storm's length.

mod common;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{child_role, kill_storm, knob, var, Dice, SharedWords, TempDir, NOW};
use sds_core::keyed::{KeyRule, KeyRuleBuilder, KeyRuleKind};
use sds_core::Value;
use sds_shm::{Options, SharedKeyTable};

const WORKERS: usize = 8;
const KEYS: [&[u8]; 4] = [b"k0", b"k1", b"k2", b"k3"];
const LIMIT: u64 = 12;
const BOUND: Duration = Duration::from_secs(30);

// Board words: per worker, units held per key, then its ledger's count,
// then "stopped"; after them, the phase.
const PER_WORKER: usize = KEYS.len() + 2;
const PHASE: usize = WORKERS * PER_WORKER;
const STOP: u64 = 1;

fn rule() -> KeyRule {
    let mut builder = KeyRuleBuilder::new(KeyRuleKind::InFlight);
    builder.set("limit", Value::from(LIMIT as i64)).unwrap();
    builder.build().unwrap()
}

fn open(dir: &Path) -> SharedKeyTable {
    SharedKeyTable::open(dir.join("keys"), 64, rule(), &Options::new()).unwrap()
}

/// Units held on `key` by every process, as the table answers.
fn held(table: &SharedKeyTable, key: &[u8]) -> u64 {
    LIMIT - u64::from(table.table().peek(key, NOW).remaining)
}

/// A worker takes and gives back units until told to stop, then writes
/// what it holds and waits to be killed.
#[test]
fn child_main() {
    let Some(_role) = child_role() else { return };
    let table = open(Path::new(&var("DIR")));
    let board = SharedWords::open(&var("BOARD"));
    let worker: usize = var("WORKER").parse().unwrap();
    let mut mine = [0u64; KEYS.len()];
    let mut dice = Dice(Dice::from_clock().0 ^ (worker as u64 + 1) << 32);
    while board.get(PHASE) != STOP {
        let key = dice.below(KEYS.len() as u64) as usize;
        let units = 1 + dice.below(3) as u32;
        if dice.below(2) == 0 {
            if table.decide(KEYS[key], NOW, units).unwrap().admitted {
                mine[key] += u64::from(units);
            }
        } else if mine[key] > 0 {
            let back = u64::from(units).min(mine[key]);
            assert!(table.release(KEYS[key], back as u32).unwrap());
            mine[key] -= back;
        }
    }
    let at = worker * PER_WORKER;
    for (key, &units) in mine.iter().enumerate() {
        board.word(at + key).store(units, Ordering::SeqCst);
    }
    board
        .word(at + KEYS.len())
        .store(table.held_here(), Ordering::SeqCst);
    board.word(at + KEYS.len() + 1).store(1, Ordering::SeqCst);
    std::thread::sleep(BOUND * 2);
}

#[test]
fn a_dead_process_units_are_given_back_exactly_once() {
    let storm_ms = knob("SDS_SHM_TEST_STORM_MS", 3_000);
    let dir = TempDir::new("keys-in-flight-kill");
    let table = open(dir.path());
    let mut storm = kill_storm(WORKERS, dir.path(), storm_ms, (5, 25), (PHASE, STOP));
    let (board, kills) = (&storm.board, storm.kills);
    let stopped = |w: usize| board.get(w * PER_WORKER + KEYS.len() + 1) == 1;
    common::wait_until(BOUND, "every worker stopped", || (0..WORKERS).all(stopped));

    let swept = table.reclaim_dead().unwrap();
    let mut live_total = 0;
    for (key, &name) in KEYS.iter().enumerate() {
        let live: u64 = (0..WORKERS).map(|w| board.get(w * PER_WORKER + key)).sum();
        eprintln!(
            "key {key}: {} held, {live} by live workers",
            held(&table, name)
        );
        assert_eq!(held(&table, name), live, "key {key} after {kills} kills");
        live_total += live;
    }
    for w in 0..WORKERS {
        let own: u64 = (0..KEYS.len()).map(|k| board.get(w * PER_WORKER + k)).sum();
        let ledger = board.get(w * PER_WORKER + KEYS.len());
        assert_eq!(
            ledger, own,
            "worker {w}: its ledger row counts what it holds"
        );
    }
    eprintln!("storm {storm_ms} ms: {kills} kills, {swept} units swept at the end");
    assert!(kills >= 20, "{kills} kills");
    assert!(live_total > 0, "the live workers hold units");

    for kid in &mut storm.workers {
        kid.kill();
    }
    assert_eq!(table.reclaim_dead().unwrap(), live_total);
    assert_eq!(table.reclaim_dead().unwrap(), 0, "given back once");
    for (key, &name) in KEYS.iter().enumerate() {
        assert_eq!(held(&table, name), 0, "key {key}");
        let d = table.decide(name, NOW, LIMIT as u32).unwrap();
        assert!(d.admitted, "key {key}: its whole limit again");
        assert!(table.release(name, LIMIT as u32).unwrap());
    }
    assert_eq!(table.held_here(), 0);
}
