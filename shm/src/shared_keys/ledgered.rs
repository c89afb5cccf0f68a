//! What an in-flight key file adds for each process: a process slot (its
//! lock is the process's liveness, as a point table's) and the ledger row
//! of that slot, where the core counts the units the process holds
//! (`sds_core::keyed::KeyLedger`). Whoever takes the lock of a slot whose
//! holder died without freeing it gives back the units of its row, then
//! frees it: the lock keeps two processes from doing it at once, and the
//! row is all free after, so units are given back once.
//!
//! POSIX record locks belong to the (process, file) pair and closing any
//! descriptor of the file drops them all, so a process keeps one
//! descriptor per in-flight file ([`KeyProcess`], shared by its handles of
//! that file) and opens no other while it is attached. A fork child does
//! not inherit the locks: it takes a slot of its own on its first call.

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use sds_core::keyed::{KeyError, KeyLedger, KeyTable, SharedKeys};

use crate::fork_lock::{ForkGuard, ForkLock};
use crate::open::FileKey;
use crate::processes::{self, ProcessRecord};
use crate::sys;

/// The least time between two sweeps for dead processes that a refused
/// call of this process starts.
const SWEEP_EVERY_MS: u64 = 100;

/// This process's attachment to an in-flight key file.
pub(crate) struct KeyProcess {
    pub(crate) file: File,
    key: FileKey,
    /// `fork epoch << 8 | (slot + 1)` of this process's slot; 0: none.
    slot: AtomicU64,
    /// Held while this process takes a slot or frees dead ones: its own
    /// locks would look free to `try_lock` from another of its threads.
    /// Free in a fork child whatever the parent's threads were doing.
    taking: ForkLock<()>,
    born: Instant,
    /// When this process last swept (ms after `born`, + 1; 0: never).
    last_sweep: AtomicU64,
}

/// This process's attachments to in-flight key files, by file.
pub(crate) type KeyFiles = Vec<(FileKey, Weak<KeyProcess>)>;

static PROCESSES: Mutex<KeyFiles> = Mutex::new(Vec::new());

/// The list, locked; after the registry's lock where both are held.
pub(crate) fn processes() -> MutexGuard<'static, KeyFiles> {
    PROCESSES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The live attachment to the file `key`, if any.
pub(crate) fn find(list: &[(FileKey, Weak<KeyProcess>)], key: FileKey) -> Option<Arc<KeyProcess>> {
    list.iter()
        .filter(|(k, _)| *k == key)
        .find_map(|(_, weak)| weak.upgrade())
}

impl KeyProcess {
    /// A new attachment through `file` (the file `key`), listed in `list`.
    pub(crate) fn attach(
        list: &mut Vec<(FileKey, Weak<KeyProcess>)>,
        file: File,
        key: FileKey,
    ) -> Arc<KeyProcess> {
        let process = Arc::new(KeyProcess {
            file,
            key,
            slot: AtomicU64::new(0),
            taking: ForkLock::new(()),
            born: Instant::now(),
            last_sweep: AtomicU64::new(0),
        });
        list.retain(|(_, weak)| weak.strong_count() > 0);
        list.push((key, Arc::downgrade(&process)));
        process
    }

    fn taking(&self) -> ForkGuard<'_, ()> {
        self.taking.lock()
    }

    /// This process's slot if it took one since its last fork.
    fn own_slot(&self) -> Option<usize> {
        let s = self.slot.load(Ordering::Acquire);
        (s != 0 && s >> 8 == sys::fork_epoch()).then(|| (s & 0xff) as usize - 1)
    }
}

/// A table's ledger and process slots, and this process's attachment.
pub(crate) struct Ledgered {
    pub(crate) rows: KeyLedger<'static>,
    pub(crate) records: &'static [ProcessRecord],
    pub(crate) process: Arc<KeyProcess>,
}

type Table = KeyTable<SharedKeys<'static>>;

impl Ledgered {
    /// This process's slot, taken on its first call (after a fork too);
    /// taking one gives back the units of every dead holder.
    #[inline]
    pub(crate) fn slot(&self, table: &Table) -> Result<usize, KeyError> {
        match self.process.own_slot() {
            Some(slot) => Ok(slot),
            None => self.take_slot(table),
        }
    }

    /// This process's slot if it took one since its last fork.
    pub(crate) fn own_slot(&self) -> Option<usize> {
        self.process.own_slot()
    }

    #[cold]
    fn take_slot(&self, table: &Table) -> Result<usize, KeyError> {
        let process = &self.process;
        let _taking = process.taking();
        if let Some(slot) = process.own_slot() {
            return Ok(slot);
        }
        let taken = processes::take_slot(&process.file, self.records);
        let Ok(Some((slot, died))) = taken else {
            return Err(KeyError::NoProcessSlot);
        };
        if died {
            // Its holder died without freeing it: its row first.
            table.sweep_ledger(&self.rows, slot);
        }
        let word = sys::fork_epoch() << 8 | (slot as u64 + 1);
        process.slot.store(word, Ordering::Release);
        let give_back = |dead| {
            table.sweep_ledger(&self.rows, dead);
        };
        let _ = processes::free_dead_slots(&process.file, self.records, Some(slot), give_back);
        Ok(slot)
    }

    /// Gives back the units of every process that died holding a slot:
    /// how many.
    pub(crate) fn reclaim_dead(&self, table: &Table) -> std::io::Result<u64> {
        let process = &self.process;
        let _taking = process.taking();
        let mut returned = 0;
        let give_back = |dead| returned += table.sweep_ledger(&self.rows, dead);
        processes::free_dead_slots(&process.file, self.records, process.own_slot(), give_back)?;
        process
            .last_sweep
            .store(now_ms(process) + 1, Ordering::Relaxed);
        Ok(returned)
    }

    /// Whether a refused call may sweep for dead processes now (at most
    /// once per [`SWEEP_EVERY_MS`] per process: one `fcntl` per slot).
    pub(crate) fn sweep_due(&self) -> bool {
        let process = &self.process;
        let last = process.last_sweep.load(Ordering::Relaxed);
        let now = now_ms(process) + 1;
        (last == 0 || now >= last + SWEEP_EVERY_MS)
            && process
                .last_sweep
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// A clean close of this process's last handle of the file: its units
    /// given back, its slot freed. Called under the attachments' lock.
    pub(crate) fn detach(&self, table: &Table, list: &mut Vec<(FileKey, Weak<KeyProcess>)>) {
        let process = &self.process;
        if Arc::strong_count(process) > 1 {
            return;
        }
        if let Some(slot) = process.own_slot() {
            table.sweep_ledger(&self.rows, slot);
            processes::free_slot(&process.file, self.records, slot);
        }
        let key = process.key;
        list.retain(|(k, weak)| *k != key || weak.strong_count() > 1);
    }
}

fn now_ms(process: &KeyProcess) -> u64 {
    process.born.elapsed().as_millis() as u64
}
