//! This process's attachments, one per file.
//!
//! POSIX record locks belong to the (process, file) pair, and closing ANY
//! descriptor of the file drops all of the process's locks on it, the
//! process slot's included. So a process keeps exactly one descriptor per
//! table file: opening a file already attached returns that attachment, and
//! a descriptor opened by a race with it is kept open beside it until it
//! closes. Code elsewhere in the process that opens and closes the table's
//! file (a backup, a `cat`) still drops the locks: don't.
//!
//! A fork copies one thread, and a list another thread was changing at
//! that instant would stay locked (and maybe half-written) in the child.
//! So the thread that forks holds both lists of attachments (this one and
//! the in-flight key files') across the fork (`sys::watch_forks`): the
//! fork waits until no other thread is inside an `open` or a close, and
//! the child gets whole lists, unlocked.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::open::FileKey;
use crate::shared_file::Attachment;
use crate::shared_keys::{self, KeyFiles};

/// Attachments by file; an entry whose attachment is gone is being closed.
pub struct Registry(Vec<(FileKey, Weak<Attachment>)>);

static REGISTRY: Mutex<Registry> = Mutex::new(Registry(Vec::new()));

/// What the registry holds for a file.
pub enum Found {
    /// An attachment to share.
    Live(Arc<Attachment>),
    /// One being closed: its descriptor is not closed yet, wait.
    Closing,
    /// None.
    Absent,
}

/// The registry, locked. Held while a file is opened, attached and closed,
/// so no descriptor of an attached file is closed behind another's back.
pub fn lock() -> MutexGuard<'static, Registry> {
    // A panic while holding it left no half-made entry: entries are pushed
    // whole and removed whole.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

type Held = (MutexGuard<'static, Registry>, MutexGuard<'static, KeyFiles>);

thread_local! {
    /// The lists the forking thread holds from before its fork to after it.
    static HELD_ACROSS_FORK: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// Before a fork: waits for both lists of attachments and holds them
/// (this lock first, as everywhere).
pub fn hold_across_fork() {
    let held = (lock(), shared_keys::files());
    // No thread-local storage (a thread being torn down): nothing is held,
    // and the fork goes on as it would without this.
    let _ = HELD_ACROSS_FORK.try_with(|cell| {
        if let Ok(mut cell) = cell.try_borrow_mut() {
            *cell = Some(held);
        }
    });
}

/// After a fork, in the parent and in the child: lets the lists go.
pub fn release_after_fork() {
    let _ = HELD_ACROSS_FORK.try_with(|cell| {
        if let Ok(mut cell) = cell.try_borrow_mut() {
            cell.take();
        }
    });
}

impl Registry {
    pub fn find(&self, key: FileKey) -> Found {
        match self.0.iter().find(|(k, _)| *k == key) {
            Some((_, weak)) => weak.upgrade().map_or(Found::Closing, Found::Live),
            None => Found::Absent,
        }
    }

    pub fn insert(&mut self, key: FileKey, attachment: &Arc<Attachment>) {
        self.0.push((key, Arc::downgrade(attachment)));
    }

    /// Removes the entry of `key` whose attachment is gone.
    pub fn remove_closed(&mut self, key: FileKey) {
        self.0
            .retain(|(k, weak)| *k != key || weak.strong_count() > 0);
    }
}
