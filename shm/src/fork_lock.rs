//! A lock that a fork child finds free, whoever held it in the parent.
//!
//! `fork` copies one thread. A thread of the parent that held a `Mutex` at
//! that instant does not exist in the child, so the child's copy stays
//! locked forever, and the child's first call that needs it waits forever
//! (a scan for dead holders, which a refused request starts, held the
//! registration lock while another thread forked: the child hung making
//! its first view). This lock is held by a fork epoch
//! (`sys::fork_epoch`): in a child, whose epoch is one more, a hold from an
//! earlier epoch counts as free.
//!
//! Only for what a child may use whatever the parent was doing with it:
//! nothing (a lock that only orders work), or a value that a child writes
//! anew before it reads it (its registration).

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sys;

pub(crate) struct ForkLock<T> {
    /// `epoch << 1`, plus 1 while a thread of that epoch holds it.
    state: AtomicU64,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is reached only through a guard, and one guard of the
// current epoch exists at a time (the state's compare-and-swap); a hold of
// an earlier epoch belongs to a thread that a fork left behind.
unsafe impl<T: Send> Sync for ForkLock<T> {}

impl<T> ForkLock<T> {
    pub(crate) const fn new(value: T) -> ForkLock<T> {
        ForkLock {
            state: AtomicU64::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// Waits until no thread of this process holds it, then holds it.
    /// Holds are short (a few system calls), so a waiter yields and tries
    /// again.
    pub(crate) fn lock(&self) -> ForkGuard<'_, T> {
        let epoch = sys::fork_epoch();
        let held = epoch << 1 | 1;
        loop {
            let state = self.state.load(Ordering::Relaxed);
            if state != held
                && self
                    .state
                    .compare_exchange_weak(state, held, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return ForkGuard { lock: self, epoch };
            }
            std::thread::yield_now();
        }
    }
}

pub(crate) struct ForkGuard<'a, T> {
    lock: &'a ForkLock<T>,
    epoch: u64,
}

impl<T> Deref for ForkGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for ForkGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard holds the lock.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for ForkGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.state.store(self.epoch << 1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::ForkLock;

    #[test]
    fn a_hold_excludes_other_threads_of_the_process() {
        let lock = ForkLock::new(0u32);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        let mut value = lock.lock();
                        let seen = *value;
                        std::hint::spin_loop();
                        *value = seen + 1;
                    }
                });
            }
        });
        assert_eq!(*lock.lock(), 40_000);
    }
}
