//! The permits of a process killed while it holds them come back: when a
//! refused request makes a process scan for dead holders (at most once per
//! `SCAN_INTERVAL_MS`, clock injected), or at once when a process attaches;
//! each exactly once however many processes notice, so `in_flight` never
//! drops below what the live processes hold. A clean detach gives back the
//! permits of entries never exited.

mod common;

use std::time::Duration;

use common::{child_role, concurrent_limit, ledger_sum, open, report, var, Kid, TempDir, NOW};
use sds_core::{Entry, Flags, Outcome, PointId, Reason};
use sds_shm::{SharedFile, Table, SCAN_INTERVAL_MS};

const POINT: &[u8] = b"p";
/// Plenty for a child to start, attach and take its permits.
const BOUND: Duration = Duration::from_secs(20);

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
    let Some(role) = child_role() else { return };
    let shared = open(var("TABLE"));
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

/// A table file (in a directory named after `name`, removed with the
/// `TempDir`) whose point admits `limit` requests at once, and `mine` of
/// them taken by this process.
fn limited(name: &str, limit: i64, mine: usize) -> (TempDir, String, SharedFile, Vec<Entry>) {
    let dir = TempDir::new(name);
    let path = dir.join("table").display().to_string();
    let shared = open(&path);
    let t = shared.table().unwrap();
    t.set_strategy(POINT, &concurrent_limit(limit)).unwrap();
    let mine = take(&t, mine);
    (dir, path, shared, mine)
}

/// A child holding `n` permits, once it reported them in its ledger row.
fn holder(path: &str, n: usize) -> Kid {
    let kid = Kid::spawn("hold", &[("TABLE", path.into()), ("HOLD", n.to_string())]);
    assert_eq!(kid.value("held"), n.to_string());
    kid
}

#[test]
fn a_dead_holders_permits_come_back_within_a_scan_interval_of_refusals() {
    let (_dir, path, shared, mine) = limited("refused", 5, 2);
    let t = shared.table().unwrap();
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
    let (_dir, path, shared, _mine) = limited("attach", 5, 1);
    let t = shared.table().unwrap();
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
    assert_eq!(ledger_sum(&shared, [1, 2]), 0);
    assert_eq!(shared.reclaim_dead().unwrap(), 0);
    assert_eq!(in_flight(&t), 1);
}

#[test]
fn many_processes_noticing_one_death_give_its_permits_back_once() {
    let (_dir, path, shared, _mine) = limited("once", 10, 2);
    let t = shared.table().unwrap();
    holder(&path, 3).kill();
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
    assert_eq!(
        ledger_sum(&shared, 1..=4),
        4,
        "each live process's permit in its row"
    );
}

#[test]
fn a_clean_detach_gives_back_the_permits_of_entries_never_exited() {
    let (_dir, path, shared, _mine) = limited("detach", 5, 1);
    let t = shared.table().unwrap();
    let mut kid = Kid::spawn("leave", &[("TABLE", path.clone()), ("HOLD", "4".into())]);
    assert_eq!(kid.value("left"), "4");
    assert!(kid.wait_success(BOUND));
    assert_eq!(in_flight(&t), 1);
    assert_eq!(ledger_sum(&shared, [1]), 0);
    assert_eq!(shared.reclaim_dead().unwrap(), 0);
}
