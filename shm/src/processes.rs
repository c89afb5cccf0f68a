//! The process registry: one record per attached process, each guarded by a
//! POSIX write lock on its own byte past the end of the file.
//!
//! The lock is the liveness signal: the kernel holds it for the process's
//! life and drops it when the process dies, however it dies. It names no
//! pid, so it survives pid reuse and works across pid namespaces (containers
//! sharing the file). The record's pid is for people reading the file.

use std::fs::File;
use std::io;
use std::mem::size_of;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::layout::{MAX_PROCESSES, PROCESS_LOCK_BASE, PROCESS_RECORD_SIZE};
use crate::mapping::Shared;
use crate::sys;

const FREE: u64 = 0;
const IN_USE: u64 = 1;

/// One process slot in the file.
#[repr(C)]
pub struct ProcessRecord {
    /// `IN_USE` while a process holds the slot; `FREE` after a clean detach.
    state: AtomicU64,
    /// Bumped by each process that takes the slot.
    generation: AtomicU64,
    /// The holder's pid, in its own pid namespace (information only).
    pid: AtomicU64,
    reserved: AtomicU64,
}

const _: () = assert!(size_of::<ProcessRecord>() == PROCESS_RECORD_SIZE);

// SAFETY: four AtomicU64: any bits are a value, changed only atomically.
unsafe impl Shared for ProcessRecord {}

/// A process's place in the registry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Registration {
    /// The owner id: the slot's index + 1 (0 is nobody).
    pub owner: u32,
    /// The slot's generation, counting every process that took it.
    pub generation: u64,
    /// Whether the previous holder died without detaching (its state is
    /// what [`reclaim_dead_owner`] is for).
    pub previous_owner_died: bool,
}

/// The lock byte of owner `owner` (1-based), or `None` if out of range.
pub fn lock_byte(owner: u32) -> Option<u64> {
    let index = (owner as usize).checked_sub(1)?;
    (index < MAX_PROCESSES).then_some(PROCESS_LOCK_BASE + index as u64)
}

/// Takes the first slot whose lock no live process holds.
pub fn claim(file: &File, records: &[ProcessRecord]) -> io::Result<Option<Registration>> {
    for (index, record) in records.iter().enumerate().take(MAX_PROCESSES) {
        if !sys::try_lock(file, PROCESS_LOCK_BASE + index as u64)? {
            continue;
        }
        let owner = index as u32 + 1;
        let previous_owner_died = record.state.load(Ordering::Acquire) != FREE;
        if previous_owner_died {
            reclaim_dead_owner(owner, record);
        }
        let generation = record
            .generation
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1);
        record
            .pid
            .store(u64::from(std::process::id()), Ordering::Relaxed);
        record.state.store(IN_USE, Ordering::Release);
        return Ok(Some(Registration {
            owner,
            generation,
            previous_owner_died,
        }));
    }
    Ok(None)
}

/// Where the state a dead process left behind will be taken over: the
/// permits it held, the flags it had set. The slot's lock is ours, so no
/// other process is doing it. Nothing to take over yet: today's core keeps
/// no per-owner state.
pub fn reclaim_dead_owner(_owner: u32, _record: &ProcessRecord) {}

/// Marks the slot free and drops its lock (a clean detach).
pub fn release(file: &File, records: &[ProcessRecord], owner: u32) {
    let Some(byte) = lock_byte(owner) else {
        return;
    };
    if let Some(record) = records.get(owner as usize - 1) {
        record.state.store(FREE, Ordering::Release);
    }
    // Closing the file drops the lock anyway if this fails.
    let _ = sys::unlock(file, byte);
}

/// Whether another process holds `owner`'s slot. Errors answer "alive":
/// a live owner taken for dead would lose its state, a dead one taken for
/// alive only waits.
pub fn held_by_other(file: &File, owner: u32) -> bool {
    match lock_byte(owner) {
        Some(byte) => sys::locked_by_other(file, byte).unwrap_or(true),
        None => false,
    }
}
