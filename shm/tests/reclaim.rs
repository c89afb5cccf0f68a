//! The permits of a process killed while it holds them come back: when a
//! refused request makes a process scan for dead holders (at most once per
//! `SCAN_INTERVAL_MS`, clock injected), or at once when a process attaches;
//! each exactly once however many processes notice, so `in_flight` never
//! drops below what the live processes hold. A clean detach gives back the
//! permits of entries never exited.

mod common;

use std::time::Duration;

use common::{report, var, Kid, TempDir, ROLE};
use sds_core::{Entry, Flags, Outcome, PointId, Reason, Strategy};
use sds_shm::{Options, SharedFile, Table, SCAN_INTERVAL_MS};

const NOW: u64 = 1_000_000;
const CAPACITY: usize = 64;
const POINT: &[u8] = b"p";
/// Plenty for a child to start, attach and take its permits.
const BOUND: Duration = Duration::from_secs(20);

fn open(path: &str) -> SharedFile {
    SharedFile::open(path, CAPACITY, &Options::new()).unwrap()
}

fn enter(t: &Table<'_>, now: u64) -> Entry {
    t.enter(POINT, now, Flags::NONE).unwrap()
}

/// Takes `n` permits of `POINT` (each must be admitted) and keeps them.
fn take(t: &Table<'_>, n: usize) -> Vec<Entry> {
    (0..n)
        .map(|_| {
            let entry = enter(t, NOW);
            assert_eq!(entry.reason(), None, "admitted");
            entry
        })
        .collect()
}

fn point(t: &Table<'_>) -> PointId {
    t.lookup(POINT).unwrap().unwrap()
}

fn in_flight(t: &Table<'_>) -> u32 {
    let id = t.lookup(POINT).unwrap().unwrap();
    t.point(id).unwrap().in_flight()
}

/// Whether a request at `now` is refused for the threshold (its entry is
/// exited either way).
fn refused(t: &Table<'_>, now: u64) -> bool {
    let entry = enter(t, now);
    t.exit(&entry, now, Outcome::Ok).unwrap();
    match entry.reason() {
        None => false,
        Some(Reason::Concurrent) => true,
        Some(other) => panic!("refused for {other:?}"),
    }
}

/// The children's side: does what `ROLE` says; nothing in the parent run.
#[test]
fn child_main() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let shared = open(&var("TABLE"));
    let t = shared.table().unwrap();
    match role.as_str() {
        // Takes HOLD permits and keeps them until killed.
        "hold" => {
            let n: usize = var("HOLD").parse().unwrap();
            let held = take(&t, n);
            let slot = shared.registration().unwrap().slot;
            let id = t.lookup(POINT).unwrap().unwrap();
            report("held", shared.ledger_row(slot)[id.index() as usize].get());
            std::thread::sleep(Duration::from_secs(60));
            drop(held);
        }
        // Attaches (which gives back what the dead held), then says so.
        "attach" => report("attached", shared.registration().unwrap().slot),
        // Takes HOLD permits and detaches without exiting them.
        "leave" => {
            let n: usize = var("HOLD").parse().unwrap();
            let _never_exited = take(&t, n);
            report("left", n);
        }
        role => panic!("unknown role {role}"),
    }
}

/// A table file whose point admits `limit` requests at once.
fn limited(dir: &TempDir, limit: i64) -> (String, SharedFile) {
    let path = dir.join("table").display().to_string();
    let shared = open(&path);
    let strategy = Strategy {
        concurrent_threshold: limit,
        ..Strategy::DEFAULT
    };
    shared
        .table()
        .unwrap()
        .set_strategy(POINT, &strategy)
        .unwrap();
    (path, shared)
}

/// A child holding `n` permits, once it reported them in its ledger row.
fn holder(path: &str, n: usize) -> Kid {
    let kid = Kid::spawn("hold", &[("TABLE", path.into()), ("HOLD", n.to_string())]);
    assert_eq!(kid.value("held"), n.to_string());
    kid
}

#[test]
fn a_dead_holders_permits_come_back_within_a_scan_interval_of_refusals() {
    let dir = TempDir::new("refused");
    let (path, shared) = limited(&dir, 5);
    let t = shared.table().unwrap();
    let mine = take(&t, 2);
    let mut kid = holder(&path, 3);
    assert_eq!(in_flight(&t), 5);

    // Refused while the holder lives: the scan this starts finds no one dead.
    assert!(refused(&t, NOW));
    assert_eq!(shared.on_refused(point(&t), NOW), 0);
    assert_eq!(in_flight(&t), 5);

    kid.kill();
    // Still refused: nothing noticed the death yet, and no scan is due.
    let later = NOW + SCAN_INTERVAL_MS - 1;
    assert!(refused(&t, later));
    assert_eq!(shared.on_refused(point(&t), later), 0);
    assert_eq!(in_flight(&t), 5);

    // A second after the last scan, a refused request scans: the 3 come back.
    let due = NOW + SCAN_INTERVAL_MS;
    assert!(refused(&t, due));
    assert_eq!(shared.on_refused(point(&t), due), 3);
    assert_eq!(in_flight(&t), 2, "only this process's permits are left");
    assert!(!refused(&t, due));

    // Nothing comes back twice: not by the next scan, not by an attach.
    assert_eq!(shared.on_refused(point(&t), due + SCAN_INTERVAL_MS), 0);
    let attach = Kid::spawn("attach", &[("TABLE", path.clone())]);
    attach.value("attached");
    assert_eq!(shared.reclaim_dead().unwrap(), 0);
    assert_eq!(in_flight(&t), 2);
    for entry in &mine {
        t.exit(entry, due, Outcome::Ok).unwrap();
    }
    assert_eq!(in_flight(&t), 0);
}

#[test]
fn a_process_that_attaches_gives_back_the_dead_holders_permits_at_once() {
    let dir = TempDir::new("attach");
    let (path, shared) = limited(&dir, 5);
    let t = shared.table().unwrap();
    let _mine = take(&t, 1);
    // Two holders die: the next process takes the first one's slot (given
    // back as it takes it) and scans for the other.
    let mut first = holder(&path, 2);
    let mut second = holder(&path, 2);
    assert_eq!(in_flight(&t), 5);
    first.kill();
    second.kill();
    assert!(refused(&t, NOW));

    let attach = Kid::spawn("attach", &[("TABLE", path.clone())]);
    assert_eq!(
        attach.value("attached"),
        "1",
        "the first dead holder's slot"
    );
    assert_eq!(in_flight(&t), 1);
    assert!(!refused(&t, NOW));
    // Rows left all zero, slots given back once.
    assert!(shared.ledger_row(1).iter().all(|held| held.get() == 0));
    assert!(shared.ledger_row(2).iter().all(|held| held.get() == 0));
    assert_eq!(shared.reclaim_dead().unwrap(), 0);
    assert_eq!(in_flight(&t), 1);
}

#[test]
fn many_processes_noticing_one_death_give_its_permits_back_once() {
    let dir = TempDir::new("once");
    let (path, shared) = limited(&dir, 10);
    let t = shared.table().unwrap();
    let _mine = take(&t, 2);
    let mut kid = holder(&path, 3);
    kid.kill();
    // Four processes attach (each scans for the dead, one takes its slot)
    // and take a permit each, while this one scans too. A row given back
    // twice, or a slot's new holder's row taken for the dead one's, would
    // leave in_flight below what the live processes hold.
    let attaching: Vec<Kid> = (0..4)
        .map(|_| Kid::spawn("hold", &[("TABLE", path.clone()), ("HOLD", "1".into())]))
        .collect();
    let mut here = 0;
    for _ in 0..200 {
        here += shared.reclaim_dead().unwrap();
    }
    for kid in &attaching {
        assert_eq!(kid.value("held"), "1");
    }
    here += shared.reclaim_dead().unwrap();
    assert!(here <= 3, "{here}");
    assert_eq!(in_flight(&t), 2 + 4);
    let rows: u32 = (1..=4)
        .map(|slot| shared.ledger_row(slot).iter().map(|h| h.get()).sum::<u32>())
        .sum();
    assert_eq!(rows, 4, "each live process's permit in its row");
}

#[test]
fn a_clean_detach_gives_back_the_permits_of_entries_never_exited() {
    let dir = TempDir::new("detach");
    let (path, shared) = limited(&dir, 5);
    let t = shared.table().unwrap();
    let _mine = take(&t, 1);
    let mut kid = Kid::spawn("leave", &[("TABLE", path.clone()), ("HOLD", "4".into())]);
    assert_eq!(kid.value("left"), "4");
    assert!(kid.wait_success(BOUND));
    assert_eq!(in_flight(&t), 1);
    assert!(shared.ledger_row(1).iter().all(|held| held.get() == 0));
    assert_eq!(shared.reclaim_dead().unwrap(), 0);
}
