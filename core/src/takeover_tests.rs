//! The take-overs of owner.rs, one per transition: a word left held by an
//! owner the view's liveness reports dead (as a process killed inside the
//! transition leaves it) is taken over, and the operation completes. And the
//! hot path never asks about liveness.

use super::*;
use crate::owner::Liveness;
use std::cell::Cell;
use std::vec::Vec;

const DEAD: u32 = 7;
const T: u64 = 1_700_000_000_000;

/// Everyone lives except `DEAD`; counts the questions.
#[derive(Default)]
struct OneDead {
    asked: Cell<u32>,
}

impl Liveness for OneDead {
    fn is_alive(&self, owner: u32) -> bool {
        self.asked.set(self.asked.get() + 1);
        owner != DEAD
    }
}

fn view(slots: &[Slot]) -> PointTable<&[Slot], OneDead> {
    PointTable::with_owner(slots, Owner::new(5).unwrap(), OneDead::default()).unwrap()
}

fn slots(n: usize) -> Vec<Slot> {
    (0..n).map(|_| Slot::new()).collect()
}

#[test]
fn a_slot_claimed_by_a_dead_owner_goes_back_to_empty_and_its_half_name_never_matches() {
    let slots = slots(32);
    let t = view(&slots);
    // The dead claimer wrote the whole name, hash and length, and raised the
    // probe, but never made the slot ready.
    let name = b"orderService.process";
    let slot = &slots[0];
    slot.fill(hash(name), name, &Holder::PRIVATE);
    slot.state.store(DEAD, Ordering::Relaxed);
    t.state().longest_probe.store(1, Ordering::Relaxed);

    assert_eq!(t.lookup(name), Ok(None), "a claimed name is not a name");
    assert_eq!(slot.state.load(Ordering::Relaxed), EMPTY, "taken back");
    assert_eq!(t.liveness.asked.get(), 1);
    assert_eq!(
        t.insert(b"other"),
        Ok(PointId(0)),
        "the next claimer reuses it"
    );
    assert_eq!(t.lookup(name), Ok(None));
    assert_eq!(t.lookup(b"other"), Ok(Some(PointId(0))));
    assert_eq!(t.insert(name), Ok(PointId(1)));
    assert_eq!(t.len(), 2);
}

#[test]
fn a_slot_claimed_by_a_live_owner_is_waited_for() {
    let slots = slots(32);
    let t = view(&slots);
    slots[0].state.store(8, Ordering::Relaxed);
    t.state().longest_probe.store(1, Ordering::Relaxed);
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let t = view(&slots);
            (t.insert(b"mine"), t.liveness.asked.get())
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        // The live claimer finishes its name.
        slots[0].fill(hash(b"mine"), b"mine", &Holder::PRIVATE);
        let (id, asked) = waiter.join().unwrap();
        assert_eq!(id, Ok(PointId(0)), "found the name it waited for");
        assert!(asked >= 1, "asked while it waited");
    });
}

fn delaying() -> Strategy {
    Strategy {
        visit_threshold: 0,
        delay_time: 10_000,
        ..Strategy::DEFAULT
    }
}

#[test]
fn a_delay_turn_held_by_a_dead_owner_is_taken_by_the_256th_refused_start() {
    let slots = slots(32);
    let t = view(&slots);
    let id = t.set_strategy(b"p", &delaying()).unwrap();
    let point = t.point(id).unwrap();
    point.delay.turn.store(DEAD, Ordering::Relaxed);
    for n in 1..256 {
        let e = t.enter_point(id, T, Flags::NONE).unwrap();
        assert!(e.downgraded());
        assert!(
            !point.delayed(T),
            "refusal {n} leaves the start to the holder"
        );
    }
    assert_eq!(t.liveness.asked.get(), 0, "refused starts do not ask");
    t.enter_point(id, T, Flags::NONE).unwrap();
    assert!(
        point.delayed(T),
        "the 256th took the turn and started the delay"
    );
    assert_eq!(t.liveness.asked.get(), 1);
    assert_eq!(point.delay.turn.load(Ordering::Relaxed), FREE);
}

#[test]
fn a_delay_turn_held_by_a_dead_owner_is_taken_by_a_strategy_change() {
    let slots = slots(32);
    let t = view(&slots);
    let id = t.set_strategy(b"p", &delaying()).unwrap();
    t.enter_point(id, T, Flags::NONE).unwrap();
    let point = t.point(id).unwrap();
    assert!(point.delayed(T));
    point.delay.turn.store(DEAD, Ordering::Relaxed);
    t.remove_strategy(b"p").unwrap();
    assert!(!point.delayed(T), "the replace ran: no strategy, no delay");
    assert_eq!(point.strategy(), None);
    assert_eq!(point.delay.turn.load(Ordering::Relaxed), FREE);
}

#[test]
fn a_strategy_writer_dead_mid_copy_neither_blocks_readers_nor_writers() {
    let slots = slots(32);
    let t = view(&slots);
    let mut old = Strategy::DEFAULT;
    old.visit_threshold = 3;
    let id = t.set_strategy(b"p", &old).unwrap();
    let point = t.point(id).unwrap();
    let cell = &point.strategy;
    // Dead while writing the other copy: flag held, that copy odd.
    let other = &cell.copies[(cell.readable.load(Ordering::Relaxed) as usize & 1) ^ 1];
    other.version.store(5, Ordering::Relaxed);
    cell.writing.store(DEAD, Ordering::Relaxed);
    assert_eq!(point.strategy(), Some(old), "readers read the stable copy");
    assert_eq!(t.liveness.asked.get(), 0);

    let mut new = old;
    new.visit_threshold = 4;
    t.set_strategy(b"p", &new).unwrap();
    assert_eq!(point.strategy(), Some(new));
    assert_eq!(other.version.load(Ordering::Relaxed) % 2, 0, "stable again");
    assert_eq!(cell.writing.load(Ordering::Relaxed), FREE);
    assert!(t.liveness.asked.get() >= 1);
}

#[test]
fn the_hot_path_never_asks_about_liveness() {
    let slots = slots(64);
    let t = view(&slots);
    let mut s = Strategy::DEFAULT;
    s.concurrent_threshold = 1;
    s.delay_time = 10_000;
    s.retry_interval = 1_000;
    t.set_strategy(b"p", &s).unwrap();
    for i in 0..100 {
        let a = t.enter(b"p", T + i, Flags::NONE).unwrap();
        let b = t.enter(b"p", T + i, Flags::NONE).unwrap();
        t.exit(&b, T + i, Outcome::Error).unwrap();
        t.exit(&a, T + i, Outcome::Ok).unwrap();
        t.lookup(b"q").unwrap();
        t.stats(b"p", T + i).unwrap();
    }
    assert_eq!(t.liveness.asked.get(), 0);
}
