//! The outside sweep's shape: 8 processes enter and exit one point with
//! `concurrentThreshold` 3 while a random one is killed with `kill -9` every
//! 10 to 100 ms and started again; twice a process is also killed caught
//! between its ledger row's step and the point's (parked at `Acquire:0` and
//! at `Release:0`). Then a calm period with no kill: no admission in it may
//! put more than 3 inside at once host-wide (shm/README.md: once every dead
//! process is reclaimed the count is exact), the full 3 are inside at once
//! again after the heal bound, and when every worker pauses the count is
//! exactly 0 with every ledger row empty.
//!
//! Who is inside is a bit mask in a second shared mapping, kept by the
//! workers (set after admission, cleared before exit) and by this process
//! (a killed worker's bit, cleared before it is started again): one atomic
//! word, so the count of holders it gives is exact at each admission.
//!
//! `SDS_SHM_TEST_STORM_MS` (default 3 000; the sweep's 15 000) and
//! `SDS_SHM_TEST_CALM_MS` (default 4 000; the sweep's 15 000).
#![cfg(feature = "test-hooks")]

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{
    child_role, concurrent_limit, knob, ledger_sum, open, var, Dice, Kid, SharedWords, TempDir,
    CAPACITY,
};
use sds_core::{Flags, Outcome};
use sds_shm::{hooks, Options, SharedTable, SCAN_INTERVAL_MS};

const WORKERS: usize = 8;
const LIMIT: u64 = 3;
const POINT: &[u8] = b"p";
const BOUND: Duration = Duration::from_secs(30);
/// The documented time to exact after the last death: the next attach (a
/// restarted worker) at once, else the first scan, at most
/// `SCAN_INTERVAL_MS` into refusals. Twice that, for a loaded machine.
const HEAL_MS: u64 = 2 * SCAN_INTERVAL_MS;

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

// The words of the board (a `SharedWords`).
const INSIDE: usize = 0; // bit i: worker i holds a permit
const PHASE: usize = 1;
const CALM_ADMITTED: usize = 2;
const CALM_OVER: usize = 3; // admissions that made more than LIMIT inside
const CALM_MOST: usize = 4;
const LATE_MOST: usize = 5; // the most inside after the heal bound
const PAUSED: usize = 6; // bit i: worker i paused

const STORM: u64 = 0;
const CALM: u64 = 1;
const LATE: u64 = 2;
const PAUSE: u64 = 3;
const STOP: u64 = 4;

/// A worker: enters and exits the point until told to stop; reports nothing.
#[test]
fn child_main() {
    let Some(role) = child_role() else { return };
    let shared = SharedTable::open(var("TABLE"), CAPACITY, &Options::new()).unwrap();
    let board = SharedWords::open(&var("BOARD"));
    let me: u64 = var("WORKER").parse().unwrap();
    let bit = 1u64 << me;
    let id = shared.view().unwrap().insert(POINT).unwrap();
    if role == "park" {
        // Parks at the checkpoint in its environment (hooks::PARK_AT).
        loop {
            let view = shared.view().unwrap();
            let entry = view.enter_point(id, wall_ms(), Flags::NONE).unwrap();
            view.exit(&entry, wall_ms(), Outcome::Ok).unwrap();
        }
    }
    loop {
        let phase = board.get(PHASE);
        if phase == STOP {
            return;
        }
        if phase == PAUSE {
            board.word(PAUSED).fetch_or(bit, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let view = shared.view().unwrap();
        let entry = view.enter_point(id, wall_ms(), Flags::NONE).unwrap();
        if entry.holds_permit() {
            let inside = (board.word(INSIDE).fetch_or(bit, Ordering::SeqCst) | bit).count_ones();
            let inside = u64::from(inside);
            if phase == CALM || phase == LATE {
                board.word(CALM_ADMITTED).fetch_add(1, Ordering::SeqCst);
                board.word(CALM_MOST).fetch_max(inside, Ordering::SeqCst);
                if inside > LIMIT {
                    board.word(CALM_OVER).fetch_add(1, Ordering::SeqCst);
                }
            }
            if phase == LATE {
                board.word(LATE_MOST).fetch_max(inside, Ordering::SeqCst);
            }
            for _ in 0..200 {
                std::hint::spin_loop();
            }
            board.word(INSIDE).fetch_and(!bit, Ordering::SeqCst);
        }
        view.exit(&entry, wall_ms(), Outcome::Ok).unwrap();
    }
}

struct Storm {
    table: String,
    board_path: String,
    board: SharedWords,
    workers: Vec<Kid>,
}

impl Storm {
    fn env(&self, worker: usize) -> Vec<(&'static str, String)> {
        vec![
            ("TABLE", self.table.clone()),
            ("BOARD", self.board_path.clone()),
            ("WORKER", worker.to_string()),
        ]
    }

    fn kill(&mut self, worker: usize) {
        self.workers[worker].kill();
        // Reaped: its bit no longer stands for a live holder.
        let bit = 1u64 << worker;
        self.board.word(INSIDE).fetch_and(!bit, Ordering::SeqCst);
        self.workers[worker] = Kid::spawn("work", &self.env(worker));
    }

    /// A process killed where it waits at `at` (a `Transition:step`).
    fn kill_parked(&mut self, at: &str) {
        // Worker 63's bit is never read: a parked process reports nothing.
        let env = [self.env(63), vec![(hooks::PARK_AT, at.to_string())]].concat();
        let mut parked = Kid::spawn("park", &env);
        assert_eq!(parked.report(BOUND), "parked", "{at}");
        parked.kill();
    }
}

#[test]
fn in_flight_is_exact_after_a_kill_storm_and_never_over_the_limit_in_the_calm() {
    let storm_ms = knob("SDS_SHM_TEST_STORM_MS", 3_000);
    let calm_ms = knob("SDS_SHM_TEST_CALM_MS", 4_000).max(HEAL_MS + 1_000);
    let dir = TempDir::new("storm");
    let table = dir.join("table").display().to_string();
    let board_path = dir.join("board").display().to_string();
    let shared = open(&table);
    let t = shared.table().unwrap();
    let id = t
        .set_strategy(POINT, &concurrent_limit(LIMIT as i64))
        .unwrap();
    let board = SharedWords::open(&board_path);
    let mut storm = Storm {
        table,
        board_path,
        board,
        workers: Vec::new(),
    };
    storm.workers = (0..WORKERS)
        .map(|w| Kid::spawn("work", &storm.env(w)))
        .collect();

    storm.board.word(PHASE).store(STORM, Ordering::SeqCst);
    let seed = wall_ms() | 1;
    let mut dice = Dice(seed);
    let mut kills = 0;
    let mut parked_kills = 0;
    let mut started = Instant::now();
    let mut stormed = Duration::ZERO;
    while stormed < Duration::from_millis(storm_ms) {
        std::thread::sleep(Duration::from_millis(10 + dice.below(91)));
        let worker = dice.below(WORKERS as u64) as usize;
        storm.kill(worker);
        kills += 1;
        stormed += started.elapsed();
        // Once at the start and once half-way, not counted in the storm's
        // time (a parked process may wait long for the count to drop).
        if parked_kills == 0 || (parked_kills == 1 && stormed.as_millis() as u64 >= storm_ms / 2) {
            let at = ["Acquire:0", "Release:0"][parked_kills];
            storm.kill_parked(at);
            parked_kills += 1;
        }
        started = Instant::now();
    }

    let calm = Instant::now();
    storm.board.word(PHASE).store(CALM, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(HEAL_MS));
    storm.board.word(PHASE).store(LATE, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(calm_ms - HEAL_MS));
    let calm_elapsed = calm.elapsed();

    storm.board.word(PHASE).store(PAUSE, Ordering::SeqCst);
    let all = (1u64 << WORKERS) - 1;
    let paused = Instant::now();
    while storm.board.get(PAUSED) != all {
        assert!(paused.elapsed() < BOUND, "workers did not pause");
        std::thread::sleep(Duration::from_millis(2));
    }
    let in_flight = t.point(id).unwrap().in_flight();
    let rows = ledger_sum(&shared, 0..sds_shm::MAX_PROCESSES);
    let (admitted, over) = (storm.board.get(CALM_ADMITTED), storm.board.get(CALM_OVER));
    let (most, late_most) = (storm.board.get(CALM_MOST), storm.board.get(LATE_MOST));
    eprintln!(
        "storm {storm_ms} ms (seed {seed}): {kills} kills + {parked_kills} mid-step; \
         calm {calm_elapsed:?}: {admitted} admitted, {over} with more than {LIMIT} inside, \
         most inside {most}, {late_most} after {HEAL_MS} ms; paused: in flight {in_flight}, \
         ledger rows {rows}"
    );
    storm.board.word(PHASE).store(STOP, Ordering::SeqCst);
    for kid in &mut storm.workers {
        assert!(kid.wait_success(BOUND));
    }

    assert_eq!(parked_kills, 2);
    assert!(admitted > 0);
    assert_eq!(over, 0, "admissions over the limit in the calm");
    assert_eq!(most, LIMIT, "the limit is reached, never passed");
    assert_eq!(late_most, LIMIT, "the full limit again after {HEAL_MS} ms");
    assert_eq!((in_flight, rows), (0, 0), "exact once every worker paused");
    assert_eq!(t.point(id).unwrap().in_flight(), 0);
}
