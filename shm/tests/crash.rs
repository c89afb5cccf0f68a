//! `kill -9` inside each transition another process can wait on (a name
//! claim, a strategy store, a delay's start, settle and replace), with a
//! new process in the dead one's process slot: a third process's operation
//! still completes within a bounded time, and the table keeps working.
//!
//! The new holder of the slot is what makes this a test of the owner ids'
//! generations: with the slot alone in an id, the third process would ask
//! about the dead holder's id, see the slot's lock held by the new process,
//! and wait forever.
#![cfg(feature = "test-hooks")]

mod common;

use std::time::{Duration, Instant};

use common::{child_role, open, report, var, Kid, TempDir, NOW};
use sds_core::{Flags, Outcome, Strategy};
use sds_shm::{hooks, Table};

const POINT: &[u8] = b"p";
/// Far more than a take-over needs (a few thousand spins and one F_GETLK).
const BOUND: Duration = Duration::from_secs(10);

/// Closed (`visitThreshold` 0), so every entry fails its check and starts a
/// 10 s delay with a probe each second.
fn delaying() -> Strategy {
    Strategy {
        visit_threshold: 0,
        delay_time: 10_000,
        retry_interval: 1_000,
        ..Strategy::DEFAULT
    }
}

fn visits(n: i64) -> Strategy {
    Strategy {
        visit_threshold: n,
        ..Strategy::DEFAULT
    }
}

fn delayed(t: &Table<'_>, at: u64) -> bool {
    let id = t.lookup(POINT).unwrap().unwrap();
    t.point(id).unwrap().delayed(at)
}

/// The children's side: does what `ROLE` says; nothing in the parent run.
#[test]
fn child_main() {
    let Some(role) = child_role() else { return };
    let shared = open(var("TABLE"));
    let t = shared.table().unwrap();
    match (role.as_str(), var("OP").as_str()) {
        // Each parks at the checkpoint in its environment (hooks::PARK_AT).
        ("park", "insert") => drop(t.insert(b"crash")),
        ("park", "set") => drop(t.set_strategy(POINT, &visits(5))),
        ("park", "set-default") => drop(t.set_strategy(POINT, &Strategy::DEFAULT)),
        ("park", "enter") => drop(t.enter(POINT, NOW, Flags::NONE)),
        ("park", "probe") => {
            let entry = t.enter(POINT, NOW + 1_000, Flags::NONE).unwrap();
            assert!(entry.is_probe(), "the delay's probe");
            t.exit(&entry, NOW + 1_000, Outcome::Error).unwrap();
        }
        ("hold", _) => {
            let registration = shared.registration().unwrap();
            report("slot", registration.slot);
            report("died", registration.previous_owner_died);
            std::thread::sleep(Duration::from_secs(60));
        }
        ("finish", "insert") => {
            let id = t.insert(b"crash").unwrap();
            let found = t.lookup(b"crash").unwrap() == Some(id);
            report("done", format!("found={found} len={}", t.len()));
        }
        ("finish", "set") => {
            t.set_strategy(POINT, &visits(7)).unwrap();
            report("done", 7);
        }
        ("finish", "replace-delay") => {
            t.set_strategy(POINT, &delaying()).unwrap();
            // The turn is free again: a later failing check starts a delay.
            let later = NOW + 20_000;
            let entry = t.enter(POINT, later, Flags::NONE).unwrap();
            t.exit(&entry, later, Outcome::Ok).unwrap();
            report("done", delayed(&t, later));
        }
        ("finish", "end-delay") => {
            t.set_strategy(POINT, &Strategy::DEFAULT).unwrap();
            report("done", delayed(&t, NOW + 2_000));
        }
        (role, op) => panic!("unknown role {role} {op}"),
    }
    if role == "park" {
        report("error", "did not park");
    }
}

/// Parks a process at `at` doing `op`, kills it, lets a new process take
/// its slot, and returns what a third process's `finish` reported, checking
/// it came within [`BOUND`]. `setup` runs first, in this process.
fn crash_at(at: &str, op: &str, finish: &str, setup: impl FnOnce(&Table<'_>)) -> String {
    let dir = TempDir::new("crash");
    let path = dir.join("table").display().to_string();
    let shared = open(&path);
    let t = shared.table().unwrap();
    setup(&t);
    let env = |op: &str| vec![("TABLE", path.clone()), ("OP", op.to_string())];

    let mut parked = Kid::spawn(
        "park",
        &[env(op), vec![(hooks::PARK_AT, at.into())]].concat(),
    );
    assert_eq!(parked.report(BOUND), "parked", "{at}");
    parked.kill();

    let heir = Kid::spawn("hold", &env(op));
    assert_eq!(
        heir.value("slot"),
        "1",
        "the dead process's slot is taken again"
    );
    assert_eq!(heir.value("died"), "true");

    let started = Instant::now();
    let third = Kid::spawn("finish", &env(finish));
    let done = third.value("done");
    assert!(started.elapsed() < BOUND, "{at}: {:?}", started.elapsed());

    // The table keeps working here, and a new process attaches.
    let entry = t.enter(b"after", NOW, Flags::NONE).unwrap();
    t.exit(&entry, NOW, Outcome::Ok).unwrap();
    assert_eq!(t.stats(b"after", NOW).unwrap().visit, 1);
    let late = Kid::spawn("hold", &env(op));
    // Slot 2 once the third process has detached, else slot 3.
    let slot = late.value("slot");
    assert!(slot == "2" || slot == "3", "{slot}");
    done
}

/// [`crash_at`] each of the `steps` steps of `transition` (`Claim:0`, ...):
/// the third process's `finish` must report `done` each time.
fn crash(
    transition: &str,
    steps: u32,
    op: &str,
    finish: &str,
    setup: impl Fn(&Table<'_>),
    done: &str,
) {
    for step in 0..steps {
        let at = format!("{transition}:{step}");
        assert_eq!(crash_at(&at, op, finish, &setup), done, "{at}");
    }
}

#[test]
fn a_claim_left_by_a_dead_process_is_taken_over() {
    // The dead claim never counted: the name is there once.
    crash("Claim", 3, "insert", "insert", |_| {}, "found=true len=1");
}

#[test]
fn a_strategy_store_left_by_a_dead_process_is_taken_over() {
    let setup = |t: &Table<'_>| {
        t.set_strategy(POINT, &visits(3)).unwrap();
    };
    crash("StrategyStore", 5, "set", "set", setup, "7");
}

#[test]
fn a_delay_start_left_by_a_dead_process_is_taken_over() {
    let setup = |t: &Table<'_>| {
        t.set_strategy(POINT, &delaying()).unwrap();
    };
    // A delay starts again.
    crash("DelayStart", 4, "enter", "replace-delay", setup, "true");
}

/// A delay in force (started by a visit that failed the closed check).
fn delay_started(t: &Table<'_>) {
    t.set_strategy(POINT, &delaying()).unwrap();
    let entry = t.enter(POINT, NOW, Flags::NONE).unwrap();
    t.exit(&entry, NOW, Outcome::Ok).unwrap();
    assert!(delayed(t, NOW));
}

#[test]
fn a_probe_settle_left_by_a_dead_process_is_taken_over() {
    // The delay ended.
    crash(
        "DelaySettle",
        3,
        "probe",
        "end-delay",
        delay_started,
        "false",
    );
}

#[test]
fn a_strategy_replace_left_by_a_dead_process_is_taken_over() {
    // The delay ended.
    crash(
        "DelayReplace",
        3,
        "set-default",
        "end-delay",
        delay_started,
        "false",
    );
}
