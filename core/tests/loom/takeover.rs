//! The take-overs (owner.rs): a view dies at each checkpoint of each
//! transition, leaving its word held and the transition half done, while
//! another view needs that word. The dying view unwinds out of the
//! checkpoint (`resume_unwind`: no panic message), which leaves memory
//! exactly as a process killed there would; its liveness turns dead at that
//! instant. Every interleaving must let the survivor finish, leave the word
//! free, and leave values the table keeps working with.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use loom::sync::atomic::AtomicBool;
use loom::sync::atomic::Ordering::SeqCst;
use loom::sync::Arc;
use loom::thread;
use sds_core::{
    Checkpoint, Flags, Liveness, Outcome, Owner, PointId, PointTable, Shared, Slot, Strategy,
    TableState, Transition,
};

use super::model;

const DYING: u32 = 7;
const SURVIVOR: u32 = 5;
const T: u64 = 1_000_000;

struct Memory {
    state: TableState,
    slots: Vec<Slot>,
    died: AtomicBool,
}

/// The view of `owner`, which dies at `crash_at` (if given).
struct Fate<'a> {
    died: &'a AtomicBool,
    crash_at: Option<Checkpoint>,
}

struct Died;

impl Liveness for Fate<'_> {
    fn is_alive(&self, owner: u32) -> bool {
        owner != DYING || !self.died.load(SeqCst)
    }

    fn checkpoint(&self, at: Checkpoint) {
        if Some(at) == self.crash_at {
            self.died.store(true, SeqCst);
            resume_unwind(Box::new(Died));
        }
    }
}

fn view(m: &Memory, owner: u32, crash_at: Option<Checkpoint>) -> PointTable<Shared<'_>, Fate<'_>> {
    let storage = Shared::new(&m.state, &m.slots);
    let fate = Fate {
        died: &m.died,
        crash_at,
    };
    PointTable::with_owner(storage, Owner::new(owner).unwrap(), fate).unwrap()
}

fn memory() -> Arc<Memory> {
    Arc::new(Memory {
        state: TableState::new(),
        slots: vec![Slot::new()],
        died: AtomicBool::new(false),
    })
}

/// Runs `dying` in a thread as the dying view, crashing at `at`; returns
/// whether it crashed.
fn spawn_dying(
    m: &Arc<Memory>,
    at: Checkpoint,
    dying: impl FnOnce(&PointTable<Shared<'_>, Fate<'_>>) + Send + 'static,
) -> thread::JoinHandle<bool> {
    let m = m.clone();
    thread::spawn(move || {
        let t = view(&m, DYING, Some(at));
        catch_unwind(AssertUnwindSafe(|| dying(&t))).is_err()
    })
}

fn at(transition: Transition, step: u8) -> Checkpoint {
    Checkpoint { transition, step }
}

/// Runs `test(step, memory, survivor's view)` in a model of its own on
/// fresh memory, for each step in `0..steps`.
fn at_each_step(steps: u8, test: fn(u8, &Arc<Memory>, &PointTable<Shared<'_>, Fate<'_>>)) {
    for step in 0..steps {
        model(move || {
            let m = memory();
            test(step, &m, &view(&m, SURVIVOR, None));
        });
    }
}

#[test]
fn a_claimer_dead_at_any_step_never_blocks_an_insert_nor_leaves_its_name() {
    for step in 0..3 {
        model(move || {
            let m = memory();
            let dying = spawn_dying(&m, at(Transition::Claim, step), |t| {
                let _ = t.insert(b"dead");
            });
            let t = view(&m, SURVIVOR, None);
            assert_eq!(t.insert(b"live"), Ok(PointId::from_index(0)), "step {step}");
            dying.join().unwrap();
            assert_eq!(t.lookup(b"dead"), Ok(None), "step {step}");
            assert_eq!(t.lookup(b"live"), Ok(Some(PointId::from_index(0))));
            assert_eq!(t.len(), 1);
        });
    }
}

fn strategy(visit: i64) -> Strategy {
    let mut s = Strategy::DEFAULT;
    s.visit_threshold = visit;
    s
}

#[test]
fn a_strategy_change_dead_at_any_step_never_blocks_the_next_nor_tears_one() {
    let steps = (0..3)
        .map(|s| at(Transition::DelayReplace, s))
        .chain((0..5).map(|s| at(Transition::StrategyStore, s)));
    for checkpoint in steps {
        model(move || {
            let m = memory();
            let t = view(&m, SURVIVOR, None);
            let id = t.insert(b"p").unwrap();
            let dying = spawn_dying(&m, checkpoint, |t| {
                let _ = t.set_strategy(b"p", &strategy(1));
            });
            t.set_strategy(b"p", &strategy(2)).unwrap();
            let seen = t.point(id).unwrap().strategy();
            assert!(
                seen == Some(strategy(1)) || seen == Some(strategy(2)),
                "{checkpoint:?}: {seen:?}"
            );
            dying.join().unwrap();
            t.set_strategy(b"p", &strategy(3)).unwrap();
            assert_eq!(t.point(id).unwrap().strategy(), Some(strategy(3)));
        });
    }
}

fn closed_with_delay() -> Strategy {
    Strategy {
        concurrent_threshold: 0,
        delay_time: 10_000,
        ..Strategy::DEFAULT
    }
}

#[test]
fn a_delay_start_dead_at_any_step_leaves_the_next_start_to_run() {
    at_each_step(4, |step, m, t| {
        let id = t.set_strategy(b"p", &closed_with_delay()).unwrap();
        let dying = spawn_dying(m, at(Transition::DelayStart, step), move |t| {
            let _ = t.enter_point(id, T, Flags::NONE);
        });
        let e = t.enter_point(id, T, Flags::NONE).unwrap();
        assert!(e.downgraded());
        dying.join().unwrap();
        // A start refused by the dead turn asks (once per refusal under
        // loom) and takes it over.
        t.enter_point(id, T, Flags::NONE).unwrap();
        assert!(t.point(id).unwrap().delayed(T), "step {step}");
    });
}

#[test]
fn a_probe_settle_dead_at_any_step_never_blocks_a_strategy_change() {
    at_each_step(3, |step, m, t| {
        let mut s = closed_with_delay();
        s.retry_interval = 1_000;
        let id = t.set_strategy(b"p", &s).unwrap();
        t.enter_point(id, T, Flags::NONE).unwrap();
        let probe = t.enter_point(id, T + 1_000, Flags::NONE).unwrap();
        assert!(probe.is_probe());
        let dying = spawn_dying(m, at(Transition::DelaySettle, step), move |t| {
            let _ = t.exit(&probe, T + 1_001, Outcome::Ok);
        });
        t.remove_strategy(b"p").unwrap();
        dying.join().unwrap();
        let point = t.point(id).unwrap();
        assert_eq!(point.strategy(), None);
        t.set_strategy(b"p", &s).unwrap();
        assert_eq!(point.strategy(), Some(s), "step {step}");
    });
}
