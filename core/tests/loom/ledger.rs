//! The permit ledger (ledger.rs): a view dies at each step of a permit's
//! acquire and release (its liveness unwinds out of the checkpoint, as in
//! `takeover.rs`), or while it holds the permit; then its row is reclaimed
//! while a live view takes and returns a permit on the same point. In every
//! interleaving the point's `in_flight` is never above the permits really
//! held, and ends at 0: nothing leaks.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use loom::sync::Arc;
use loom::thread;
use sds_core::{
    Checkpoint, Flags, Held, Liveness, Outcome, Owner, PointId, PointTable, Shared, Slot, Strategy,
    TableState, Transition,
};

use super::model;

const T: u64 = 1_000_000;
const P: PointId = PointId::from_index(0);

struct Memory {
    state: TableState,
    slots: Vec<Slot>,
    rows: [Vec<Held>; 2],
}

/// Dies (unwinds) at `crash_at`, if given. Everyone is alive to the others:
/// the ledger never asks.
struct Fate(Option<Checkpoint>);

struct Died;

impl Liveness for Fate {
    fn is_alive(&self, _owner: u32) -> bool {
        true
    }

    fn checkpoint(&self, at: Checkpoint) {
        if Some(at) == self.0 {
            resume_unwind(Box::new(Died));
        }
    }
}

fn rows(m: &Memory) -> [&[Held]; 2] {
    [&m.rows[0], &m.rows[1]]
}

fn view(m: &Memory, p: usize, crash_at: Option<Checkpoint>) -> PointTable<Shared<'_>, Fate> {
    let storage = Shared::with_ledger(&m.state, &m.slots, &m.rows[p]);
    PointTable::with_owner(storage, Owner::new(p as u32 + 2).unwrap(), Fate(crash_at)).unwrap()
}

/// One point limited to `limit` permits.
fn memory(limit: i64) -> Arc<Memory> {
    let m = Memory {
        state: TableState::new(),
        slots: vec![Slot::new()],
        rows: [vec![Held::new()], vec![Held::new()]],
    };
    let mut s = Strategy::DEFAULT;
    s.concurrent_threshold = limit;
    view(&m, 1, None).set_strategy(b"p", &s).unwrap();
    Arc::new(m)
}

/// How the dying view ends.
#[derive(Copy, Clone, Debug)]
enum Death {
    /// At a checkpoint of its acquire or release.
    At(Transition, u8),
    /// While it holds its permit.
    Holding,
}

/// The dying view (row 0) enters and exits once and dies as `death` says,
/// alone (a permit it is refused needs the limit already reached: `taken`
/// permits are held by the live view first). Then the live view (row 1)
/// takes and returns a permit while another thread reclaims row 0.
fn run(death: Death, limit: i64, taken: usize) {
    model(move || {
        let m = memory(limit);
        let live = view(&m, 1, None);
        let held: Vec<_> = (0..taken)
            .map(|_| live.enter_point(P, T, Flags::NONE).unwrap())
            .collect();
        let crash_at = match death {
            Death::At(transition, step) => Some(Checkpoint { transition, step }),
            Death::Holding => None,
        };
        let died = catch_unwind(AssertUnwindSafe(|| {
            let dying = view(&m, 0, crash_at);
            let e = dying.enter_point(P, T, Flags::NONE).unwrap();
            if matches!(death, Death::Holding) {
                return;
            }
            dying.exit(&e, T, Outcome::Ok).unwrap();
        }));
        assert_eq!(died.is_err(), crash_at.is_some(), "{death:?}");
        for e in &held {
            live.exit(e, T, Outcome::Ok).unwrap();
        }

        let reclaimer = {
            let m = m.clone();
            thread::spawn(move || view(&m, 1, None).reclaim(&m.rows[0], &rows(&m)).unwrap())
        };
        let e = live.enter_point(P, T, Flags::NONE).unwrap();
        let in_flight = live.point(P).unwrap().in_flight();
        let dead_holds = matches!(death, Death::Holding) as u32;
        assert!(
            in_flight <= 1 + dead_holds,
            "{death:?}: {in_flight} in flight, more than are held"
        );
        live.exit(&e, T, Outcome::Ok).unwrap();
        let returned = reclaimer.join().unwrap();
        assert!(returned <= 1, "{death:?}: {returned} returned");
        assert_eq!(live.point(P).unwrap().in_flight(), 0, "{death:?}: leaked");
        assert_eq!((m.rows[0][0].get(), m.rows[1][0].get()), (0, 0));
    });
}

#[test]
fn a_view_dead_inside_an_acquire_leaks_no_permit() {
    run(Death::At(Transition::Acquire, 0), -1, 0);
}

/// A refusal with the limit already reached reads the count before it
/// counts in its row: it never reaches the undo (a death set there never
/// comes) and leaves the row as it was.
#[test]
fn a_refusal_at_the_limit_never_counts_in_the_row() {
    model(|| {
        let m = memory(1);
        let live = view(&m, 1, None);
        let held = live.enter_point(P, T, Flags::NONE).unwrap();
        let undo = Checkpoint {
            transition: Transition::Acquire,
            step: 1,
        };
        let refusing = view(&m, 0, Some(undo));
        let refused = refusing.enter_point(P, T, Flags::NONE).unwrap();
        assert!(!refused.holds_permit());
        assert_eq!(m.rows[0][0].get(), 0);
        refusing.exit(&refused, T, Outcome::Ok).unwrap();
        live.exit(&held, T, Outcome::Ok).unwrap();
        assert_eq!(live.point(P).unwrap().in_flight(), 0);
    });
}

/// The undo is reached when the last permit goes to another view between
/// the row's add and the raise; a view dying there leaves its add in its
/// row, and the reclaim of that row leaks nothing.
#[test]
fn a_view_dead_before_undoing_a_refusal_leaks_no_permit() {
    static DIED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    model(|| {
        let m = memory(1);
        let racer = {
            let m = m.clone();
            thread::spawn(move || {
                let live = view(&m, 1, None);
                let e = live.enter_point(P, T, Flags::NONE).unwrap();
                live.exit(&e, T, Outcome::Ok).unwrap();
            })
        };
        let undo = Checkpoint {
            transition: Transition::Acquire,
            step: 1,
        };
        let died = catch_unwind(AssertUnwindSafe(|| {
            let dying = view(&m, 0, Some(undo));
            let e = dying.enter_point(P, T, Flags::NONE).unwrap();
            dying.exit(&e, T, Outcome::Ok).unwrap();
        }))
        .is_err();
        racer.join().unwrap();
        if died {
            DIED.store(true, std::sync::atomic::Ordering::Relaxed);
            assert_eq!(m.rows[0][0].get(), 1, "the add is in the dead row");
        }
        let live = view(&m, 1, None);
        let returned = live.reclaim(&m.rows[0], &rows(&m)).unwrap();
        assert_eq!(returned, died as u64);
        assert_eq!(live.point(P).unwrap().in_flight(), 0, "leaked");
        assert_eq!((m.rows[0][0].get(), m.rows[1][0].get()), (0, 0));
    });
    assert!(
        DIED.load(std::sync::atomic::Ordering::Relaxed),
        "no interleaving reached the undo"
    );
}

#[test]
fn a_view_dead_inside_a_release_leaks_no_permit() {
    run(Death::At(Transition::Release, 0), -1, 0);
}

#[test]
fn a_view_dead_holding_a_permit_gets_it_back_by_reclaim() {
    run(Death::Holding, -1, 0);
}

/// Two reclaimers of one dead row, racing a live view: the dead permit comes
/// back exactly once.
#[test]
fn two_reclaimers_return_a_dead_permit_once() {
    model(|| {
        let m = memory(-1);
        let _lost = view(&m, 0, None).enter_point(P, T, Flags::NONE).unwrap();
        let reclaimers: Vec<_> = (0..2)
            .map(|_| {
                let m = m.clone();
                thread::spawn(move || view(&m, 1, None).reclaim(&m.rows[0], &rows(&m)).unwrap())
            })
            .collect();
        let live = view(&m, 1, None);
        let e = live.enter_point(P, T, Flags::NONE).unwrap();
        live.exit(&e, T, Outcome::Ok).unwrap();
        let returned: u64 = reclaimers.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(returned, 1);
        assert_eq!(live.point(P).unwrap().in_flight(), 0);
    });
}
