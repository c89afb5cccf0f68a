//! `kill -9` on processes deciding on the same keys of key table files (a
//! fixed window, a sliding window and a rate): a decision is one
//! compare-and-swap of a cell, so a kill at any instruction loses at most
//! the decision in progress.
//!
//! 8 workers decide on 4 keys of each file while a random one is killed
//! every 10 to 60 ms and started again. The clock stands still (`NOW`), so
//! each key has one budget (the window's limit, the rate's burst) and every
//! admission takes from it; each admission a worker saw is counted per file
//! and key in a second shared mapping. A key never gets more than its
//! budget, and once its budget is spent the workers saw all of it but at
//! most one admission per kill (taken, then killed before it was counted).
//! Then a process that attaches afterwards sees the same state and decides
//! normally on a new key and in a later window.
//!
//! `SDS_SHM_TEST_STORM_MS` (default 3 000): the storm's length.

mod common;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{
    child_role, kill_storm, knob, report, var, worker_env, Kid, SharedWords, Storm, TempDir, NOW,
};
use sds_core::keyed::{KeyRule, KeyRuleBuilder, KeyRuleKind};
use sds_core::Value;
use sds_shm::{Options, SharedKeyTable};

const WORKERS: usize = 8;
const KEYS: [&[u8]; 4] = [b"k0", b"k1", b"k2", b"k3"];
const PERIOD_MS: i64 = 1000;
/// Each file's kind and budget per key: the sliding window's is its largest
/// limit (spent early in the storm), the others' outlast it on a fast
/// machine.
const FILES: [(KeyRuleKind, u64); 3] = [
    (KeyRuleKind::SlidingWindow, 65_535),
    (KeyRuleKind::FixedWindow, 1_000_000),
    (KeyRuleKind::Rate, 1_000_000),
];
const BOUND: Duration = Duration::from_secs(30);

// Board words: admissions seen per file and key, then the phase.
const PHASE: usize = FILES.len() * KEYS.len();
const STOP: u64 = 1;

/// The rule of file `file`: its budget per window of 1 s; a rate of 1 per
/// s whose burst is the budget.
fn rule(file: usize) -> KeyRule {
    let (kind, budget) = FILES[file];
    let mut builder = KeyRuleBuilder::new(kind);
    let limit = if kind == KeyRuleKind::Rate { 1 } else { budget };
    builder.set("limit", Value::from(limit as i64)).unwrap();
    builder.set("periodMs", Value::from(PERIOD_MS)).unwrap();
    if kind == KeyRuleKind::Rate {
        builder.set("burst", Value::from(budget as i64)).unwrap();
    }
    builder.build().unwrap()
}

/// The key table files in `dir`, one per entry of `FILES`.
fn open_all(dir: &Path) -> Vec<SharedKeyTable> {
    let open = |file| {
        let path = dir.join(format!("keys-{file}"));
        SharedKeyTable::open(path, 64, rule(file), &Options::new()).unwrap()
    };
    (0..FILES.len()).map(open).collect()
}

/// What a process that attaches after the storm sees of file `file`: the
/// remaining of a stormed key, of a new key after one call, and of the
/// stormed key one call into a window 10 s on (a rate refills 10).
fn after(table: &SharedKeyTable) -> String {
    let t = table.table();
    let remaining = |key: &[u8], now| t.decide(key, now, 1).unwrap().remaining;
    let stormed = t.peek(KEYS[0], NOW).remaining;
    let later = NOW + 10 * PERIOD_MS as u64;
    format!(
        "{stormed} {} {}",
        remaining(b"new", NOW),
        remaining(KEYS[0], later)
    )
}

/// A worker decides round the files and keys until told to stop; the
/// "fresh" child reports [`after`] for each file.
#[test]
fn child_main() {
    let Some(role) = child_role() else { return };
    let tables = open_all(Path::new(&var("DIR")));
    if role == "fresh" {
        for (file, table) in tables.iter().enumerate() {
            report(&format!("file{file}"), after(table));
        }
        return;
    }
    let board = SharedWords::open(&var("BOARD"));
    let mut turn: usize = var("WORKER").parse().unwrap();
    while board.get(PHASE) != STOP {
        let (file, key) = (turn % FILES.len(), turn / FILES.len() % KEYS.len());
        turn += 1;
        if tables[file]
            .table()
            .decide(KEYS[key], NOW, 1)
            .unwrap()
            .admitted
        {
            board
                .word(file * KEYS.len() + key)
                .fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[test]
fn a_kill_loses_at_most_the_decision_in_progress_and_a_fresh_process_decides_normally() {
    let storm_ms = knob("SDS_SHM_TEST_STORM_MS", 3_000);
    let dir = TempDir::new("keys-kill");
    let tables = open_all(dir.path());
    let Storm {
        board_path,
        board,
        mut workers,
        kills,
    } = kill_storm(WORKERS, dir.path(), storm_ms, (10, 50), (PHASE, STOP));
    for kid in &mut workers {
        assert!(kid.wait_success(BOUND));
    }
    let seen = |file: usize, key: usize| board.get(file * KEYS.len() + key);
    let mut spent = [0usize; FILES.len()];
    for (file, &(kind, budget)) in FILES.iter().enumerate() {
        for (key, &name) in KEYS.iter().enumerate() {
            let left = u64::from(tables[file].table().peek(name, NOW).remaining);
            let taken = budget - left;
            let seen = seen(file, key);
            eprintln!("{kind:?} key {key}: {seen} seen, {taken} taken of {budget}");
            assert!(
                seen <= taken,
                "{kind:?} key {key}: {seen} seen, {taken} taken"
            );
            assert!(
                taken - seen <= kills,
                "{kind:?} key {key}: {seen} seen of {taken} taken, {kills} kills"
            );
            spent[file] += usize::from(left == 0);
        }
        let stats = tables[file].table().stats();
        assert_eq!(stats.lossy_evictions, 0, "{kind:?}: 4 keys in 64 cells");
        assert!(stats.resident <= KEYS.len() as u64 + kills, "{stats:?}");
    }
    eprintln!("storm {storm_ms} ms: {kills} kills; budgets spent {spent:?}");
    assert!(kills >= 10, "{kills} kills");
    assert_eq!(
        spent[0],
        KEYS.len(),
        "the sliding window's budgets are spent"
    );

    // Read before the fresh process moves the stormed key to a later window.
    let stormed: Vec<u32> = tables
        .iter()
        .map(|t| t.table().peek(KEYS[0], NOW).remaining)
        .collect();
    let fresh = Kid::spawn("fresh", &worker_env(dir.path(), &board_path, 0));
    for (file, &(kind, budget)) in FILES.iter().enumerate() {
        let stormed = stormed[file];
        let later = if kind == KeyRuleKind::Rate {
            // 10 s refill 10 units of what the storm took.
            (u64::from(stormed) + 10).min(budget) - 1
        } else {
            budget - 1
        };
        assert_eq!(
            fresh.value(&format!("file{file}")),
            format!("{stormed} {} {later}", budget - 1),
            "{kind:?}: a fresh process"
        );
    }
}
