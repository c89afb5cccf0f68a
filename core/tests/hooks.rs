//! The `test-hooks` feature (`cargo test -p sds-core --features test-hooks`):
//! a view parked inside a transition, the way a multi-process test parks a
//! process before killing it. Others wait while it lives, and take over once
//! its liveness says it died.
#![cfg(feature = "test-hooks")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use sds_core::{
    Checkpoint, Liveness, Owner, PointId, PointTable, Shared, Slot, TableState, Transition,
};

const PARKED: u32 = 9;

struct Host {
    parked_died: AtomicBool,
    reached: Mutex<Option<mpsc::Sender<Checkpoint>>>,
}

impl Liveness for Host {
    fn is_alive(&self, owner: u32) -> bool {
        owner != PARKED || !self.parked_died.load(Ordering::SeqCst)
    }

    fn checkpoint(&self, at: Checkpoint) {
        if at.transition == Transition::Claim && at.step == 1 {
            let first = self.reached.lock().unwrap().take();
            if let Some(tx) = first {
                tx.send(at).unwrap();
                // Parked for good, as a process about to be killed.
                loop {
                    std::thread::park();
                }
            }
        }
    }
}

#[test]
fn a_view_parked_in_a_claim_is_waited_for_then_taken_over_when_dead() {
    let state: &'static TableState = Box::leak(Box::new(TableState::new()));
    let slots: &'static [Slot] = Box::leak(vec![Slot::new()].into_boxed_slice());
    let (tx, rx) = mpsc::channel();
    let host: &'static Host = Box::leak(Box::new(Host {
        parked_died: AtomicBool::new(false),
        reached: Mutex::new(Some(tx)),
    }));
    let view = move |owner| {
        PointTable::with_owner(Shared::new(state, slots), Owner::new(owner).unwrap(), host).unwrap()
    };
    std::thread::spawn(move || view(PARKED).insert(b"parked"));
    let at = rx.recv().unwrap();
    assert_eq!((at.transition, at.step), (Transition::Claim, 1));

    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || done_tx.send(view(5).insert(b"waiter")).unwrap());
    assert!(
        done.recv_timeout(Duration::from_millis(200)).is_err(),
        "waits while the claimer lives"
    );
    host.parked_died.store(true, Ordering::SeqCst);
    let id = done.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(
        id,
        Ok(PointId::from_index(0)),
        "took the dead claimer's slot"
    );
}
